#!/usr/bin/env python3
"""Independent check of the MXFP4 expert prep (DESIGN.md "MXFP4 expert prep") and of the
dequantizations to BF16 (transformers' code with torch when it is installed).

Bit-exactness between the CUDA kernels and the CPU references cannot catch a
wrong recipe (both share it). This script recomputes every kernel's output from
the recipe's text with numpy array operations (slicing, concatenation,
reshape/transpose; torch for BF16 -> F32 when it is installed) on the inputs
that tests/kernels/recipe_dump_test.cc wrote, and compares with the outputs of
our CPU reference, byte for byte.

    # dump (gpt-oss-120b sized cases included) and check in one go:
    python3 scripts/dev/recipe_check.py --run build/tests/recipe_dump_test
    # or check a directory dumped earlier (LOADPLAN_RECIPE_DIR=DIR recipe_dump_test):
    python3 scripts/dev/recipe_check.py DIR

Exit status 0 when every case matches, 1 otherwise.
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np


def block_shuffle(m):
    """dst[32q + d] = src[32q + 4(d % 8) + d / 8] on axis 1 (rows)."""
    rows = m.shape[1]
    idx = [32 * q + 4 * (d % 8) + d // 8 for q in range(rows // 32) for d in range(32)]
    return m[:, idx]


def pad_to(x, rows, cols):
    """Zero-pads [E, r, c] to [E, rows, cols]."""
    out = np.zeros((x.shape[0], rows, cols), dtype=x.dtype)
    out[:, : x.shape[1], : x.shape[2]] = x
    return out


def fc1_rows(x, i_pad, cols_pad):
    """Take up (odd rows) then gate (even rows), pad each, stack [up; gate], interleave, shuffle."""
    gate, up = x[:, 0::2], x[:, 1::2]
    stacked = np.concatenate([pad_to(up, i_pad, cols_pad), pad_to(gate, i_pad, cols_pad)], axis=1)
    inter = np.empty_like(stacked)
    inter[:, 0::2] = stacked[:, :i_pad]  # row 2i = up i
    inter[:, 1::2] = stacked[:, i_pad:]  # row 2i + 1 = gate i
    return block_shuffle(inter)


def fc2_rows(x, h_pad, cols_pad):
    return block_shuffle(pad_to(x, h_pad, cols_pad))


def swizzle(m):
    """128x4 swizzle of [E, M, K]: (r = 128a + 32b + c, k = 4d + e) -> ((a*(K/4) + d)*32 + c)*16 + 4b + e."""
    e, rows, k = m.shape
    t = m.reshape(e, rows // 128, 4, 32, k // 4, 4)  # E, a, b, c, d, e
    return t.transpose(0, 1, 4, 3, 2, 5).reshape(e, rows * k)  # E, a, d, c, b, e


def widen_bf16(u16):
    try:
        import torch  # an implementation of BF16 that is not ours

        t = torch.from_numpy(u16.astype(np.int16).copy()).view(torch.bfloat16).float()
        return t.numpy().view(np.uint32)
    except ImportError:
        return u16.astype(np.uint32) << 16


def dequant(blocks, scales, rows, cols):
    """FP4 E2M1 (low nibble first) times E8M0 scale, as BF16 bits; overflow -> inf, scale 0xFF -> NaN."""
    e2m1 = np.array([0, 0.5, 1, 1.5, 2, 3, 4, 6], dtype=np.float64)
    nib = np.stack([blocks & 15, blocks >> 4], axis=-1).reshape(rows, cols)
    scale = np.repeat(scales.reshape(rows, cols // 32), 32, axis=1).astype(np.int64)
    value = np.ldexp(e2m1[nib & 7], scale - 127) * np.where(nib & 8, -1.0, 1.0)
    with np.errstate(over="ignore"):
        f32 = value.astype(np.float32)  # exact (<= 2 significant bits) or +-inf
    bits = (f32.view(np.uint32) >> 16).astype(np.uint16)
    bits[scale == 255] = 0x7FC0
    return bits.reshape(-1)


# transformers/integrations/mxfp4.py's FP4_VALUES.
FP4_VALUES = [+0.0, +0.5, +1.0, +1.5, +2.0, +3.0, +4.0, +6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0]


def bf16_rne(f32):
    """float32 -> BF16 bits, round to nearest even, every NaN 0x7FFF (torch's cast on CUDA)."""
    bits = f32.astype(np.float32).view(np.uint32).astype(np.uint64)
    out = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
    out[np.isnan(f32)] = 0x7FFF
    return out


def TORCH_DEVICE():
    """Where torch computes: the GPU when there is one (as transformers dequantizes), else CPU."""
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def nan_bf16(u):
    return ((u & 0x7F80) == 0x7F80) & ((u & 0x7F) != 0)


def experts_bf16(blocks, scales, e, rows, cols):
    """transformers' convert_moe_packed_tensors, then .transpose(1, 2): BF16 bits of [E, cols, rows].

    With torch: its code, step by step, on the GPU when there is one (transformers moves the
    blocks there to convert them). Without: numpy float32, where ldexp is exact as torch's is
    (0.5 * 2^128 = 2^127: no intermediate overflow), then round to nearest even."""
    g = cols // 32
    try:
        import torch

        dev = TORCH_DEVICE()
        blk = torch.from_numpy(blocks.reshape(e * rows * g, 16)).to(dev)
        exp = torch.from_numpy(scales.reshape(e * rows * g, 1)).to(dev).to(torch.int32) - 127
        lut = torch.tensor(FP4_VALUES, dtype=torch.bfloat16, device=dev)
        out = torch.empty(e * rows * g, 32, dtype=torch.bfloat16, device=dev)
        out[:, 0::2] = lut[(blk & 0x0F).to(torch.long)]
        out[:, 1::2] = lut[(blk >> 4).to(torch.long)]
        torch.ldexp(out, exp, out=out)
        out = out.reshape(e, rows, cols).transpose(1, 2).contiguous()
        return out.view(torch.int16).cpu().numpy().view(np.uint16).reshape(-1)
    except ImportError:
        lut = np.array(FP4_VALUES, dtype=np.float32)
        nib = np.stack([blocks & 15, blocks >> 4], axis=-1).reshape(e, rows, cols)
        s = np.repeat(scales.reshape(e, rows, g), 32, axis=2).astype(np.int32) - 127
        with np.errstate(over="ignore", invalid="ignore"):
            value = np.ldexp(lut[nib], s).astype(np.float32)
        return bf16_rne(value).reshape(e, rows, cols).transpose(0, 2, 1).reshape(-1)


def e4m3fn_table():
    """The 256 E4M3FN values as float32: bias 7, exponent 0 subnormal, S.1111.111 NaN."""
    v = np.empty(256, dtype=np.float32)
    for b in range(256):
        e, m = (b >> 3) & 15, b & 7
        mag = np.nan if (e == 15 and m == 7) else (m * 2.0**-9 if e == 0 else (1 + m / 8) * 2.0 ** (e - 7))
        v[b] = -mag if b & 0x80 else mag
    return v


def fp8_block_bf16(src, scales, rows, cols, br, bc):
    """float32(weight) * weight_scale_inv expanded over its blocks (partial ones cut), then BF16."""
    sr, sc = -(-rows // br), -(-cols // bc)
    try:
        import torch

        dev = TORCH_DEVICE()
        w = torch.from_numpy(src.reshape(rows, cols)).to(dev).view(torch.float8_e4m3fn)
        w = w.to(torch.float32)
        s = torch.from_numpy(scales.reshape(sr, sc)).to(dev)
        s = s.repeat_interleave(br, dim=0)[:rows].repeat_interleave(bc, dim=1)[:, :cols]
        return (w * s).to(torch.bfloat16).view(torch.int16).cpu().numpy().view(np.uint16).reshape(-1)
    except ImportError:
        w = e4m3fn_table()[src.reshape(rows, cols)]
        s = np.repeat(np.repeat(scales.reshape(sr, sc), br, axis=0)[:rows], bc, axis=1)[:, :cols]
        with np.errstate(over="ignore", invalid="ignore"):
            return bf16_rne(w * s).reshape(-1)


def expected(kernel, s, d):
    e = s["experts"] if "experts" in s else 0
    if kernel == "mxfp4_dequant":
        return dequant(d["blocks"], d["scales"], s["rows"], s["cols"])
    if kernel == "mxfp4_experts_bf16":
        return experts_bf16(d["blocks"], d["scales"], e, s["rows"], s["cols"])
    if kernel == "fp8_block_bf16":
        return fp8_block_bf16(d["src"], d["scales"], s["rows"], s["cols"], s["block_rows"], s["block_cols"])
    src = d["src"]
    fc1 = "fc1" in kernel
    pad_rows = s["i_pad"] if fc1 else s["h_pad"]
    if kernel.endswith("bias"):
        x = src.reshape(e, s["rows"], 1)
        rows = fc1_rows(x, pad_rows, 1) if fc1 else fc2_rows(x, pad_rows, 1)
        return widen_bf16(rows.reshape(-1))
    col_pad = (s["k_pad"] if fc1 else s["i_pad"]) // (32 if kernel.endswith("scales") else 2)
    x = src.reshape(e, s["rows"], s["cols"])
    rows = fc1_rows(x, pad_rows, col_pad) if fc1 else fc2_rows(x, pad_rows, col_pad)
    return swizzle(rows).reshape(-1) if kernel.endswith("scales") else rows.reshape(-1)


def torch_on_cuda():
    try:
        import torch

        return torch.cuda.is_available()
    except ImportError:
        return True  # numpy's reference writes 0x7FFF: NaN bits compare exactly


def check(directory):
    failures = 0
    with open(os.path.join(directory, "cases.txt")) as f:
        lines = [ln.split() for ln in f if ln.strip()]
    for name, kernel, *kv in lines:
        s = {k: int(v) for k, v in (p.split("=") for p in kv)}
        parts = {"mxfp4_dequant": ["blocks", "scales"], "mxfp4_experts_bf16": ["blocks", "scales"],
                 "fp8_block_bf16": ["src", "scales"]}.get(kernel, ["src"])
        d = {p: np.load(os.path.join(directory, f"{name}.{p}.npy")) for p in parts + ["dst"]}
        want, got = expected(kernel, s, d), d["dst"]
        if want.shape == got.shape and np.array_equal(want, got):
            print(f"ok       {name} ({got.nbytes} bytes)")
            continue
        # torch's CPU kernels write NaN as 0xFFFF, its CUDA ones (and ours) 0x7FFF: a NaN's
        # bits depend on the device, its being NaN does not.
        if want.shape == got.shape and want.dtype == np.uint16 and not torch_on_cuda():
            same = (want == got) | (nan_bf16(want) & nan_bf16(got))
            if same.all():
                nans = int((want != got).sum())
                print(f"ok       {name} ({got.nbytes} bytes; {nans} NaN with other bits: torch on CPU)")
                continue
        failures += 1
        bad = np.flatnonzero(want != got) if want.shape == got.shape else [0]
        print(f"MISMATCH {name}: {len(bad)} elements differ, first at {bad[0]}; shapes {want.shape} {got.shape}")
    print(f"{len(lines) - failures} of {len(lines)} cases match the recipe")
    return failures == 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dir", nargs="?", help="a directory written by recipe_dump_test")
    ap.add_argument("--run", metavar="RECIPE_DUMP_TEST", help="run this binary to dump into a temporary directory")
    a = ap.parse_args()
    if a.run:
        with tempfile.TemporaryDirectory() as tmp:
            env = dict(os.environ, LOADPLAN_RECIPE_DIR=tmp)
            subprocess.run([a.run], env=env, check=True, stdout=subprocess.DEVNULL)
            return 0 if check(tmp) else 1
    if not a.dir:
        ap.error("give a directory or --run")
    return 0 if check(a.dir) else 1


if __name__ == "__main__":
    sys.exit(main())
