#!/usr/bin/env python3
"""Every rank of a tensor-parallel deployment loaded on the one GPU, one after another, each
compared byte for byte with torch's slicing of what safetensors reads whole (issue 30).

    python3 scripts/gpu/gpu_ranks.py DEPLOY.json CKPT_DIR [--json OUT]

Per rank: loadplan.load(DEPLOY, CKPT, rank=r) (its own peak against the prediction, GB/s,
bytes read), then for every buffer of the rank's manifest bound to a tensor: the loaded bytes
against safetensors' tensor, narrowed by the buffer's slice when it has one. Sources (kind
"source": what a derive program reads, freed after it, not in the loaded model) are not
compared; instead the carry each mxfp4_fc* derive call writes (gpt-oss under tensor parallel)
is compared with the recipe's numpy reference (scripts/dev/recipe_check.py) computed from the
rank's slice of the source's tensor. Prints one line per rank and a summary; exits 1 when a
byte differs or a measured peak is not the prediction.
"""
import argparse
import collections
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "dev"))
import recipe_check  # noqa: E402  (scripts/dev: the MXFP4 recipe in numpy)

try:
    import torch
    from safetensors import safe_open

    import loadplan
except ImportError as missing:  # the manifest functions stay importable (tests/python)
    torch = safe_open = loadplan = None
    MISSING = missing

# The derive kernels of gpt-oss's MXFP4 expert prep, each one source in ("src"), one carry out.
MXFP4_KERNELS = ("mxfp4_fc1_weight", "mxfp4_fc1_scales", "mxfp4_fc1_bias",
                 "mxfp4_fc2_weight", "mxfp4_fc2_scales", "mxfp4_fc2_bias")

# One mxfp4_fc* call of a rank's derive programs: the carry DST it writes, from SOURCE (a
# buffer of kind "source") bound to TENSOR, of which the rank reads INDEX (a tuple of slices).
RecipeCall = collections.namedtuple("RecipeCall", "kernel scalars dst source tensor index")


def src_dtype(kernel):
    """The numpy dtype recipe_check takes a kernel's src as (recipe_dump_test's .npy files):
    BF16 bits as uint16 for the biases, bytes (uint8) for the blocks and scales."""
    return np.uint16 if kernel.endswith("_bias") else np.uint8


def index_of(buffer):
    """The buffer's slice {dim, start, length} as an index (slices, the dims before it whole);
    () when it has none: the whole tensor."""
    s = buffer.get("slice")
    if not s:
        return ()
    return (slice(None),) * s["dim"] + (slice(s["start"], s["start"] + s["length"]),)


def weight_buffers(manifest):
    """(name, buffer) of each buffer bound to a tensor that the loaded model holds as read: not
    the sources (freed after the derive that reads them; their carries are checked instead)."""
    return [(name, b) for name, b in manifest["buffers"].items()
            if "tensor" in b and b.get("kind") != "source"]


def recipe_calls(manifest):
    """Each mxfp4_fc* call of the manifest's derive programs, in program order."""
    calls = []
    buffers = manifest["buffers"]
    for _, program in sorted(manifest.get("programs", {}).items()):
        if not program.get("derive"):
            continue
        for call in program.get("calls", []):
            if call["kernel"] not in MXFP4_KERNELS:
                continue
            args = call["args"]
            scalars = {k: v for k, v in args.items() if type(v) is int}
            source = buffers[args["src"]]
            calls.append(RecipeCall(call["kernel"], scalars, args["dst"], args["src"],
                                    source["tensor"], index_of(source)))
    return calls


def source_array(sliced, kernel):
    """The rank's slice of a source's tensor (a numpy array of its elements, or of its bytes),
    flat, contiguous, as the dtype recipe_check expects for KERNEL."""
    flat = np.ascontiguousarray(sliced).reshape(-1)
    return flat.view(np.uint8).view(src_dtype(kernel))


def recipe_bytes(call, sliced):
    """What the recipe says CALL's carry holds, as bytes, from the rank's slice of its source."""
    src = source_array(sliced, call.kernel)
    want = recipe_check.expected(call.kernel, call.scalars, {"src": src})
    return np.ascontiguousarray(want).reshape(-1).view(np.uint8)


def tensors_of(ckpt):
    """name -> (file) over the checkpoint's shards."""
    where = {}
    for f in sorted(os.listdir(ckpt)):
        if f.endswith(".safetensors"):
            with safe_open(os.path.join(ckpt, f), "pt") as h:
                for k in h.keys():
                    where[k] = os.path.join(ckpt, f)
    return where


_open = {}


def handle(where, tensor):
    f = where[tensor]
    if f not in _open:
        _open[f] = safe_open(f, "pt")
    return _open[f]


def expected(where, buffer):
    t = handle(where, buffer["tensor"]).get_tensor(buffer["tensor"])
    if "slice" in buffer:
        s = buffer["slice"]
        t = t.narrow(s["dim"], s["start"], s["length"])
    return t.contiguous().view(torch.uint8).reshape(-1)


def read_slice(where, call):
    """The rank's slice of CALL's source tensor, read by safetensors (the slice alone), as a
    numpy array of its bytes."""
    h = handle(where, call.tensor)
    t = h.get_slice(call.tensor)[call.index] if call.index else h.get_tensor(call.tensor)
    return t.contiguous().view(torch.uint8).reshape(-1).numpy()


def device_bytes(model, name):
    return torch.from_dlpack(model[name]).contiguous().view(torch.uint8).reshape(-1).cpu().numpy()


def check_carries(model, manifest, where):
    """(carries compared, the carries whose loaded bytes are not the recipe's)."""
    calls, bad = recipe_calls(manifest), []
    for call in calls:
        want = recipe_bytes(call, read_slice(where, call))
        if not np.array_equal(device_bytes(model, call.dst), want):
            bad.append(call.dst)
    return len(calls), bad


def check_rank(deploy, ckpt, rank, where):
    stage = loadplan._loadplan.resolve_source(deploy, rank, 0)["stage"]
    manifest = json.load(open(stage["manifest"]))
    t0 = time.perf_counter()
    model = loadplan.load(deploy, ckpt, rank=rank)
    torch.cuda.synchronize()
    seconds = time.perf_counter() - t0
    report = model.report
    bad, compared, sliced = [], 0, 0
    for name, b in weight_buffers(manifest):
        got = torch.from_dlpack(model[name]).contiguous().view(torch.uint8).reshape(-1).cpu()
        if not torch.equal(got, expected(where, b)):
            bad.append(name)
        compared += 1
        sliced += "slice" in b
    carries, carries_bad = check_carries(model, manifest, where)
    row = {"rank": rank, "manifest": stage["manifest"], "compared": compared, "sliced": sliced,
           "differ": bad[:5], "carries": carries, "carries_differ": carries_bad[:5],
           "seconds": seconds, "gbps": report.get("gbps"),
           "fill_bytes": report.get("fill_bytes"), "predicted_peak": report.get("predicted_peak"),
           "measured_peak": report.get("measured_peak")}
    del model
    torch.cuda.synchronize()
    return row


def verdict(names):
    return "equal" if not names else "DIFFER: " + ", ".join(names)


def rank_line(row):
    same = row["measured_peak"] == row["predicted_peak"]
    return (f"rank {row['rank']}: {row['compared']} buffers ({row['sliced']} sliced) "
            f"{verdict(row['differ'])}, {row['carries']} carries {verdict(row['carries_differ'])}; "
            f"{row['fill_bytes'] / 1e9:.2f} GB at {row['gbps']:.2f} GB/s; peak "
            f"{row['measured_peak']} {'=' if same else '!='} predicted {row['predicted_peak']}")


def row_ok(row):
    return (not row["differ"] and not row["carries_differ"]
            and row["measured_peak"] == row["predicted_peak"])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("deploy")
    ap.add_argument("ckpt")
    ap.add_argument("--json")
    a = ap.parse_args()
    if torch is None:
        sys.exit(f"gpu_ranks.py: {MISSING} (it runs where torch, safetensors and loadplan are)")
    ranks = len(json.load(open(a.deploy))["stages"])
    where = tensors_of(a.ckpt)
    rows = []
    for r in range(ranks):
        rows.append(check_rank(a.deploy, a.ckpt, r, where))
        print(rank_line(rows[-1]), flush=True)
    if a.json:
        json.dump({"deploy": a.deploy, "rows": rows}, open(a.json, "w"), indent=1)
    equal = sum(not r["differ"] and not r["carries_differ"] for r in rows)
    carries = sum(r["carries"] for r in rows)
    recipe = f" (their {carries} carries to the recipe, recipe_check.py)" if carries else ""
    print(f"{equal} of {ranks} ranks byte-equal to torch's slicing{recipe}")
    return 0 if all(row_ok(r) for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
