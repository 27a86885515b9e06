#!/usr/bin/env python3
"""bench/peers/mxfp4_prep.py (torch) against scripts/dev/recipe_check.py (numpy), byte for byte.

Random bytes (NaN and infinity BF16 patterns included) on small shapes, edge shapes (no row
padding, one expert of gpt-oss-120b's full size) and the whole prep() over a small
manifest-like dict. Runs on CPU torch, or on the GPU with --device cuda:

    python3 bench/peers/test_mxfp4_prep.py [--device cuda]   # or: pytest bench/peers

Exit status 0 when every case matches; 77 (skipped) when torch is not installed.
"""
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts", "dev"))
import recipe_check  # noqa: E402  (the recipe as numpy)

try:
    import torch
except ImportError:
    torch = None
    if "pytest" in sys.modules:
        import pytest

        pytest.skip("torch is not installed", allow_module_level=True)

# The numpy reference's widening without torch (bits << 16): independent of the torch cast
# that mxfp4_prep uses.
recipe_check.widen_bf16 = lambda u16: u16.astype(np.uint32) << 16
DEVICE = "cpu"
KERNELS = ["mxfp4_fc1_weight", "mxfp4_fc1_scales", "mxfp4_fc1_bias",
           "mxfp4_fc2_weight", "mxfp4_fc2_scales", "mxfp4_fc2_bias"]


def case(kernel, e, rows, i_pad, k_pad=None, h_pad=None, hidden=None, inter=None):
    """Scalar args of one call, as the manifest writes them (cols: the unpadded row in bytes)."""
    fc1 = "fc1" in kernel
    s = {"experts": e, "rows": rows}
    if kernel.endswith("bias"):
        s.update({"i_pad": i_pad} if fc1 else {"h_pad": h_pad})
        return s
    s.update({"i_pad": i_pad, "k_pad": k_pad} if fc1 else {"i_pad": i_pad, "h_pad": h_pad})
    n = hidden if fc1 else inter  # values per row: H for fc1, I for fc2
    s["cols"] = n // 2 if kernel.endswith("weight") else n // 32
    return s


def source(kernel, s, rng):
    """Random source bytes: uint8 [E, rows, cols] or BF16 bits uint16 [E, rows]."""
    if kernel.endswith("bias"):
        u16 = rng.integers(0, 1 << 16, size=(s["experts"], s["rows"]), dtype=np.uint16)
        u16[0, :4] = [0x7F80, 0xFF80, 0x7FC1, 0xFFFF]  # +inf, -inf, NaN with payloads
        return u16
    return rng.integers(0, 256, size=(s["experts"], s["rows"], s["cols"]), dtype=np.uint8)


def to_torch(arr):
    if arr.dtype == np.uint16:
        return torch.from_numpy(arr.astype(np.int16)).view(torch.bfloat16).to(DEVICE)
    return torch.from_numpy(arr).to(DEVICE)


def got_bytes(t):
    return t.cpu().contiguous().view(torch.uint8).numpy().reshape(-1)


def check(kernel, s, seed=1):
    import mxfp4_prep

    rng = np.random.default_rng(seed)
    src = source(kernel, s, rng)
    want = np.ascontiguousarray(recipe_check.expected(kernel, s, {"src": src.reshape(-1)})).view(np.uint8)
    got = got_bytes(mxfp4_prep.derive(kernel, s, to_torch(src)))
    ok = got.shape == want.shape and np.array_equal(got, want)
    where = "" if ok or got.shape != want.shape else f", first difference at byte {np.flatnonzero(got != want)[0]}"
    print(f"{'ok' if ok else 'MISMATCH':<9}{kernel} {s} ({want.nbytes} bytes{where})")
    return ok


SHAPES = [
    # (experts, I, H, i_pad, k_pad = h_pad): small, padded rows and columns
    (3, 40, 64, 128, 128),
    (2, 64, 96, 128, 128),
    (2, 128, 128, 128, 128),  # no padding at all: I = H = i_pad = k_pad = h_pad
    (1, 96, 160, 256, 256),
]


def test_small_shapes():
    ok = True
    for e, inter, hidden, i_pad, pad in SHAPES:
        for k in KERNELS:
            rows = 2 * inter if "fc1" in k else hidden
            s = case(k, e, rows, i_pad, k_pad=pad, h_pad=pad, hidden=hidden, inter=inter)
            ok &= check(k, s, seed=e * 1000 + inter)
    assert ok


def test_gpt_oss_one_expert():
    """One expert of gpt-oss-120b (I = H = 2880, pads 2944), every kernel."""
    ok = True
    for k in KERNELS:
        rows = 5760 if "fc1" in k else 2880
        s = case(k, 1, rows, 2944, k_pad=2944, h_pad=2944, hidden=2880, inter=2880)
        ok &= check(k, s, seed=7)
    assert ok


def test_prep_over_a_manifest():
    """prep(): every derive call of a two-layer manifest-shaped dict, sources dropped after."""
    import mxfp4_prep

    e, inter, hidden, pad = 2, 40, 64, 128
    buffers, programs, tensors, want = {}, {}, {}, {}
    rng = np.random.default_rng(3)
    for layer in ("l0", "l1"):
        for k in KERNELS:
            fc = "fc1" if "fc1" in k else "fc2"
            part = {"weight": "w", "scales": "s", "bias": "b"}[k.rsplit("_", 1)[1]]
            rows = 2 * inter if fc == "fc1" else hidden
            s = case(k, e, rows, pad, k_pad=pad, h_pad=pad, hidden=hidden, inter=inter)
            dst, src_buf, tensor = f"{layer}.{fc}_{part}", f"{layer}.{fc}_{part}.raw", f"model.{layer}.{k}"
            src = source(k, s, rng)
            tensors[tensor] = to_torch(src)
            out_rows = 2 * pad if fc == "fc1" else pad
            if part == "b":
                shape, dtype = [e, out_rows], "F32"
            else:
                shape, dtype = [e, out_rows, pad // (2 if part == "w" else 32)], "U8"
            buffers[src_buf] = {"kind": "source", "tensor": tensor}
            buffers[dst] = {"kind": "carry", "shape": shape, "dtype": dtype}
            programs[f"derive.{dst}"] = {"derive": True, "calls": [
                {"kernel": k, "args": dict(s, src=src_buf, dst=dst)}]}
            want[dst] = np.ascontiguousarray(recipe_check.expected(k, s, {"src": src.reshape(-1)})).view(np.uint8)
    programs["decode"] = {"calls": []}
    tensors["model.embed"] = to_torch(np.zeros(8, dtype=np.uint8))
    out = mxfp4_prep.prep({"buffers": buffers, "programs": programs}, tensors)
    assert sorted(out) == sorted(want), sorted(out)
    bad = [d for d in want if not np.array_equal(got_bytes(out[d]), want[d])]
    print(f"{'ok' if not bad else 'MISMATCH'}       prep(): {len(want)} derived tensors, left {sorted(tensors)}")
    assert not bad, bad
    assert list(tensors) == ["model.embed"], "sources are dropped, other tensors kept"


def main():
    global DEVICE
    if torch is None:
        print("skipped: torch is not installed (the numpy reference alone cannot check the port)")
        return 77
    if "--device" in sys.argv:
        DEVICE = sys.argv[sys.argv.index("--device") + 1]
    failed = 0
    for t in (test_small_shapes, test_gpt_oss_one_expert, test_prep_over_a_manifest):
        try:
            t()
        except AssertionError as error:
            failed += 1
            print(f"FAILED {t.__name__}: {error}")
    print(f"{3 - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
