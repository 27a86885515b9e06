"""The MXFP4 expert prep (gpt-oss) with torch ops, as a peer loader's user would run it.

The recipe is docs/kernels.md "The MXFP4 recipe specification"; scripts/dev/recipe_check.py
has it as numpy (fc1_rows, fc2_rows, block_shuffle, swizzle, widen_bf16) and
bench/peers/test_mxfp4_prep.py checks these functions against those, byte for byte.

Everything runs on the device of the tensors it is given (the loaded CUDA tensors): a row
map per (kernel, rows, pad) is built once with torch.arange, then each derived tensor is
one torch.zeros, one index_copy_ of the source rows into their padded, shuffled places
(no gathered temporary) and, for scales, the 128x4 swizzle as a reshape/permute.

    import mxfp4_prep
    derived = mxfp4_prep.prep(json.load(open("m8.json")), tensors)   # tensors: name -> tensor
"""
import functools

import torch


def block_shuffle_gather(n, device="cpu"):
    """For output row R of an n-row matrix, the row it reads: 32q + 4(d % 8) + d / 8, R = 32q + d."""
    r = torch.arange(n, device=device)
    q, d = r // 32, r % 32
    return 32 * q + 4 * (d % 8) + d // 8


@functools.lru_cache(maxsize=None)
def fc1_row_map(rows, i_pad, device="cpu"):
    """Output row R of fc1 (2 i_pad rows) -> checkpoint row, or -1 for padding.

    Interleaved row s (after the shuffle's gather): i = s / 2; s even is up i (checkpoint
    row 2i + 1), s odd is gate i (checkpoint row 2i); i >= rows / 2 is padding."""
    s = block_shuffle_gather(2 * i_pad, device)
    i = s // 2
    src = torch.where(s % 2 == 0, 2 * i + 1, 2 * i)
    return torch.where(i < rows // 2, src, torch.full_like(src, -1))


@functools.lru_cache(maxsize=None)
def fc2_row_map(rows, h_pad, device="cpu"):
    """Output row R of fc2 (h_pad rows) -> checkpoint row s (the shuffle's gather), or -1 past rows."""
    s = block_shuffle_gather(h_pad, device)
    return torch.where(s < rows, s, torch.full_like(s, -1))


@functools.lru_cache(maxsize=None)
def inverse(row_map, rows):
    """Checkpoint row -> its output row (the map is one to one onto the rows that are not padding)."""
    valid = (row_map >= 0).nonzero().squeeze(1)
    inv = torch.empty(rows, dtype=torch.long, device=row_map.device)
    inv[row_map[valid]] = valid
    return inv


def place_rows(src, row_map, out_cols):
    """[E, rows, cols] -> zeros [E, len(row_map), out_cols] with src row row_map[R] in row R, cols
    bytes in front (the rest of the row and every padding row stay 0)."""
    e, rows, cols = src.shape
    dst = torch.zeros(e, row_map.numel(), out_cols, dtype=src.dtype, device=src.device)
    dst[:, :, :cols].index_copy_(1, inverse(row_map, rows), src)
    return dst


def swizzle(m):
    """128x4 swizzle of [E, M, K] (M % 128 == 0, K % 4 == 0): byte (r = 128a + 32b + c, k = 4d + e)
    goes to ((a (K/4) + d) 32 + c) 16 + 4b + e, per expert. Returns [E, M, K] (the same bytes flat)."""
    e, rows, k = m.shape
    t = m.reshape(e, rows // 128, 4, 32, k // 4, 4)  # E, a, b, c, d, e
    return t.permute(0, 1, 4, 3, 2, 5).contiguous().reshape(e, rows, k)  # E, a, d, c, b, e


def derive(kernel, s, src):
    """One derive call (the manifest's kernel name and scalar args) on its source tensor."""
    e, rows = s["experts"], s["rows"]
    dev = str(src.device)
    fc1 = kernel.startswith("mxfp4_fc1_")
    if fc1:
        row_map = fc1_row_map(rows, s["i_pad"], dev)
        row_cols = s.get("k_pad")  # the padded row length, in elements (not for biases)
    elif kernel.startswith("mxfp4_fc2_"):
        row_map = fc2_row_map(rows, s["h_pad"], dev)
        row_cols = s.get("i_pad")
    else:
        raise ValueError(f"{kernel}: not an MXFP4 prep kernel")
    if kernel.endswith("_bias"):  # BF16 -> F32 (exact: the bits << 16), rows placed
        x = src.reshape(e, rows, 1).view(torch.bfloat16).float()
        return place_rows(x, row_map, 1).reshape(e, row_map.numel())
    x = src.reshape(e, rows, s["cols"]).view(torch.uint8)
    if kernel.endswith("_weight"):  # two FP4 values a byte
        return place_rows(x, row_map, row_cols // 2)
    if kernel.endswith("_scales"):  # one E8M0 scale per 32 values
        return swizzle(place_rows(x, row_map, row_cols // 32))
    raise ValueError(f"{kernel}: not an MXFP4 prep kernel")


def derive_calls(manifest):
    """The derive programs' calls, grouped by layer (the dst buffer's name up to its first dot),
    in program order: {layer: [call, ...]}."""
    layers = {}
    for program in manifest["programs"].values():
        if not program.get("derive"):
            continue
        for call in program["calls"]:
            layers.setdefault(call["args"]["dst"].split(".")[0], []).append(call)
    return layers


DTYPES = {"U8": torch.uint8, "BF16": torch.bfloat16, "F32": torch.float32}


def prep(manifest, tensors, free_sources=True):
    """Every derive call of MANIFEST on TENSORS (checkpoint tensor name -> tensor), one layer at a
    time; returns {dst buffer name: derived tensor}. With free_sources, a layer's source tensors
    are dropped from TENSORS once its derived tensors exist (what a loader's user does to keep
    the peak down). Each result is checked against its dst buffer's dtype and shape."""
    buffers = manifest["buffers"]
    out = {}
    for calls in derive_calls(manifest).values():
        used = []
        for call in calls:
            a = call["args"]
            s = {k: v for k, v in a.items() if isinstance(v, int)}
            name = buffers[a["src"]]["tensor"]
            d = derive(call["kernel"], s, tensors[name])
            want = buffers[a["dst"]]
            if list(d.shape) != want["shape"] or d.dtype != DTYPES[want["dtype"]]:
                raise ValueError(f"{a['dst']}: made {d.dtype} {list(d.shape)}, the manifest says "
                                 f"{want['dtype']} {want['shape']}")
            out[a["dst"]] = d
            used.append(name)
        if free_sources:
            for name in used:
                tensors.pop(name, None)
    return out
