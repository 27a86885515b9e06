"""scripts/gpu/gpu_ranks.py without a GPU: which buffers it compares with torch's slicing, which
derive calls it checks against the MXFP4 recipe (scripts/dev/recipe_check.py) and how it builds
each call's kernel, scalars and source slice from a rank's manifest; and that the recipe on a
rank's slice of a tiny synthetic source has the carry's size (shape x dtype bytes)."""

import importlib.util
import json
import sys

import pytest

from conftest import ROOT

np = pytest.importorskip("numpy")

SCRIPT = ROOT / "scripts" / "gpu" / "gpu_ranks.py"
SPEC = importlib.util.spec_from_file_location("gpu_ranks", SCRIPT)
gpu_ranks = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(gpu_ranks)  # torch, safetensors, loadplan: not needed here

# A tiny gpt-oss layer, rank 1 of TP=2: E experts, hidden H, intermediate I (gate_up rows 2I);
# the rank takes gate_up rows [I, 2I) (its I/2 intermediate, padded to I_PAD) and the down
# projection's intermediate groups [I/64, I/32). The paddings are to 128, as import's are.
E, H, I = 2, 64, 128
I_PAD, H_PAD = 128, 128
FC1 = {"dim": 1, "start": I, "length": I}
FC2 = {"dim": 2, "start": I // 64, "length": I // 64}
TENSORS = {  # tensor -> (shape, numpy dtype) of the whole checkpoint tensor
    "experts.gate_up_proj_blocks": ((E, 2 * I, H // 32, 16), np.uint8),
    "experts.gate_up_proj_scales": ((E, 2 * I, H // 32), np.uint8),
    "experts.gate_up_proj_bias": ((E, 2 * I), np.uint16),
    "experts.down_proj_blocks": ((E, H, I // 32, 16), np.uint8),
    "experts.down_proj_scales": ((E, H, I // 32), np.uint8),
    "experts.down_proj_bias": ((E, H), np.uint16),
}
FC1_ARGS = {"experts": E, "rows": I, "i_pad": I_PAD}
FC2_ARGS = {"experts": E, "rows": H, "h_pad": H_PAD}
FC1_W = {**FC1_ARGS, "cols": H // 2, "k_pad": H_PAD}
FC1_S = {**FC1_ARGS, "cols": H // 32, "k_pad": H_PAD}
FC2_W = {**FC2_ARGS, "cols": I // 4, "i_pad": I_PAD}
FC2_S = {**FC2_ARGS, "cols": I // 64, "i_pad": I_PAD}
KERNELS = {  # kernel -> (carry, source tensor, slice, scalars, carry dtype, carry shape)
    "mxfp4_fc1_weight": ("fc1_w", "experts.gate_up_proj_blocks", FC1, FC1_W, "U8",
                         [E, 2 * I_PAD, H_PAD // 2]),
    "mxfp4_fc1_scales": ("fc1_s", "experts.gate_up_proj_scales", FC1, FC1_S, "U8",
                         [E, 2 * I_PAD, H_PAD // 32]),
    "mxfp4_fc1_bias": ("fc1_b", "experts.gate_up_proj_bias", FC1, FC1_ARGS, "F32",
                       [E, 2 * I_PAD]),
    "mxfp4_fc2_weight": ("fc2_w", "experts.down_proj_blocks", FC2, FC2_W, "U8",
                         [E, H_PAD, I_PAD // 2]),
    "mxfp4_fc2_scales": ("fc2_s", "experts.down_proj_scales", FC2, FC2_S, "U8",
                         [E, H_PAD, I_PAD // 32]),
    "mxfp4_fc2_bias": ("fc2_b", "experts.down_proj_bias", None, FC2_ARGS, "F32", [E, H_PAD]),
}
DTYPE_BYTES = {"U8": 1, "BF16": 2, "F32": 4}
SLICED = [k for k, v in KERNELS.items() if v[2]]


def manifest():
    """A rank manifest as `loadplan import --tensor-parallel` writes gpt-oss's: per kernel a
    source, an exported carry and a derive program of one call; beside them a plain weight, a
    buffer of no tensor, and a program that is no derive."""
    buffers = {"model.norm.weight": {"kind": "weight", "dtype": "BF16", "shape": [H],
                                     "tensor": "model.norm.weight"},
               "scratch": {"kind": "carry", "dtype": "U8", "shape": [16]}}
    programs = {"serve": {"calls": [{"kernel": "mxfp4_fc1_weight",
                                     "args": {"src": "x", "dst": "y"}}]}}
    for kernel, (carry, tensor, cut, scalars, dtype, shape) in KERNELS.items():
        whole, np_dtype = TENSORS[tensor]
        source = {"kind": "source", "dtype": "BF16" if np_dtype == np.uint16 else "U8",
                  "tensor": tensor, "shape": list(whole)}
        if cut:
            source["shape"][cut["dim"]] = cut["length"]
            source["slice"] = dict(cut)
        buffers[carry + ".raw"] = source
        buffers[carry] = {"kind": "carry", "export": True, "dtype": dtype, "shape": shape}
        args = {**scalars, "src": carry + ".raw", "dst": carry}
        programs[f"derive.{carry}"] = {"derive": True, "calls": [
            {"kernel": kernel, "grid": [E], "args": args}]}
    programs["derive.other"] = {"derive": True, "calls": [
        {"kernel": "mxfp4_dequant", "args": {"rows": 1, "cols": 32, "blocks": "a", "scales": "b",
                                             "dst": "c"}}]}
    return {"schema": 2, "buffers": buffers, "programs": programs}


def source(tensor, seed=7):
    """The whole checkpoint tensor, random; BF16 biases finite (as recipe_dump_test's)."""
    shape, dtype = TENSORS[tensor]
    rng = np.random.default_rng(seed)
    if dtype == np.uint16:
        return rng.integers(0, 2**16, size=shape, dtype=np.uint16) & 0xBFFF
    return rng.integers(0, 256, size=shape, dtype=np.uint8)


def test_the_buffers_compared_with_torch_are_the_weights_not_the_sources():
    names = [name for name, _ in gpu_ranks.weight_buffers(manifest())]
    assert names == ["model.norm.weight"]


def test_the_recipe_calls_are_the_mxfp4_derive_calls():
    calls = gpu_ranks.recipe_calls(manifest())
    assert sorted(c.kernel for c in calls) == sorted(KERNELS)
    for c in calls:
        carry, tensor, cut, scalars, _, _ = KERNELS[c.kernel]
        assert (c.dst, c.source, c.tensor) == (carry, carry + ".raw", tensor)
        assert c.scalars == scalars  # the integer args, not the buffers
        assert c.index == gpu_ranks.index_of({"slice": cut} if cut else {})


def test_the_index_is_the_slice_on_its_dim():
    assert gpu_ranks.index_of({}) == ()
    index = gpu_ranks.index_of({"slice": {"dim": 2, "start": 3, "length": 4}})
    assert index == (slice(None), slice(None), slice(3, 7))
    whole = np.arange(2 * 3 * 8).reshape(2, 3, 8)
    assert np.array_equal(whole[index], whole[:, :, 3:7])


def test_the_source_array_has_the_recipes_dtype():
    bias = np.array([[0x3F80, 0xC000]], dtype=np.uint16)
    for given in (bias, bias.view(np.uint8)):  # elements, or their bytes as torch gives them
        got = gpu_ranks.source_array(given, "mxfp4_fc2_bias")
        assert got.dtype == np.uint16 and got.tolist() == [0x3F80, 0xC000]
    blocks = np.arange(12, dtype=np.uint8).reshape(2, 6)[:, 2:4]  # not contiguous
    got = gpu_ranks.source_array(blocks, "mxfp4_fc1_weight")
    assert got.dtype == np.uint8 and got.tolist() == [2, 3, 8, 9]


@pytest.mark.parametrize("kernel", SLICED)
def test_the_recipe_on_the_ranks_slice_has_the_carrys_size(kernel):
    m = manifest()
    call = next(c for c in gpu_ranks.recipe_calls(m) if c.kernel == kernel)
    assert call.index, "a sliced source"
    carry = m["buffers"][call.dst]
    want = DTYPE_BYTES[carry["dtype"]] * int(np.prod(carry["shape"]))
    got = gpu_ranks.recipe_bytes(call, source(call.tensor)[call.index])
    assert got.dtype == np.uint8 and got.size == want


def test_the_replicated_bias_has_the_carrys_size():
    m = manifest()
    call = next(c for c in gpu_ranks.recipe_calls(m) if c.kernel == "mxfp4_fc2_bias")
    got = gpu_ranks.recipe_bytes(call, source(call.tensor))
    assert call.index == () and got.size == 4 * E * H_PAD


def test_the_recipe_reads_the_ranks_rows():
    """fc1's first row is up 0 of the rank (odd row 1 of its slice: the tensor's row I + 1),
    widened to F32; expert 1's starts 2 I_PAD values later."""
    m = manifest()
    call = next(c for c in gpu_ranks.recipe_calls(m) if c.kernel == "mxfp4_fc1_bias")
    whole = source(call.tensor)
    got = gpu_ranks.recipe_bytes(call, whole[call.index]).view(np.uint32)
    assert got[0] == int(whole[0, I + 1]) << 16
    assert got[2 * I_PAD] == int(whole[1, I + 1]) << 16


# The ranks part of the GPU check (scripts/gpu/gpu_check/ranks.py): its gpt-oss case's helpers.
sys.path.insert(0, str(ROOT / "scripts" / "gpu"))
from gpu_check import ranks  # noqa: E402


def run_log(tmp_path, check):
    (tmp_path / "rank-1.json").write_text(json.dumps(manifest()))
    report = {"manifest": "ckpt-tp2-rank1", "gbps": 3.5, "check": check,  # a name, as run's
              "stage": {"stage": 1, "stages": 2, "launcher": "torchrun"},
              "measured": {"peak_allocated": 2**30, "peak_matches": True},
              "predicted": {"peak": 2**30}}
    log = tmp_path / "run.log"
    log.write_text("progress\n" + json.dumps(report, indent=1) + "\n")
    return str(log)


def test_a_ranks_run_line_counts_the_carries_checked(tmp_path):
    ok = {"ok": True, "host_error": "", "compared": 7, "bytes": 2 * 10**9, "mismatches": []}
    rank = str(tmp_path / "rank-1.json")
    [line] = ranks.run_check_line(run_log(tmp_path, ok), "ranks-run-gptoss-1", rank)
    assert line == ("ranks-run-gptoss-1: stage 1 of 2 (torchrun); check: 6 carries equal "
                    "(7 buffers, 2.00 GB, as the host backend's); peak 1.000 GiB = predicted "
                    "1.000 GiB; 3.50 GB/s")
    bad = {**ok, "ok": False, "mismatches": ["fc1_w: first difference at byte 4096"]}
    [line] = ranks.run_check_line(run_log(tmp_path, bad), "r", rank)
    assert "check: MISMATCH: fc1_w: first difference at byte 4096;" in line
    # A rank run as a plain manifest (no launcher's stage), weights only (no carries).
    log = tmp_path / "plain.log"
    report = json.loads(open(run_log(tmp_path, ok)).read().split("\n", 1)[1])
    del report["stage"]
    log.write_text(json.dumps(report))
    (tmp_path / "weights.json").write_text(json.dumps({"buffers": {"w": {"kind": "weight"}}}))
    [line] = ranks.run_check_line(str(log), "ranks-run-llama70-0", str(tmp_path / "weights.json"))
    assert line == ("ranks-run-llama70-0: rank; check: 7 buffers equal (2.00 GB, as the host "
                    "backend's); peak 1.000 GiB = predicted 1.000 GiB; 3.50 GB/s")
    (tmp_path / "none.log").write_text("loadplan run: no CUDA device\n")
    assert list(ranks.run_check_line(str(tmp_path / "none.log"), "r", rank)) == [
        "r: no report: loadplan run: no CUDA device"]
