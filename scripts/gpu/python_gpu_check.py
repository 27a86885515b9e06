#!/usr/bin/env python3
"""On the GPU machine: loadplan.load (the Python package) against safetensors + the recipe.

    python3 scripts/gpu/python_gpu_check.py compare MANIFEST CKPT
        loads MANIFEST's checkpoint into torch through loadplan.load and checks every derived
        carry byte for byte against the same prep done independently: the source tensors read
        with safetensors (torch) and the recipe recomputed with numpy (scripts/dev/recipe_check.py);
        also zero copy (two from_dlpack views share one pointer) and memory after `del`.
    python3 scripts/gpu/python_gpu_check.py speed MANIFEST CKPT LOADPLAN_CLI ROUNDS
        GB/s of loadplan.load beside `loadplan run` on the same checkpoint, alternating.
Exit status 0 when everything matches.
"""
import glob
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np
import torch
from safetensors import safe_open

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "dev"))
import recipe_check  # noqa: E402  (the recipe as numpy, independent of our C++)

import loadplan  # noqa: E402


def tensor_index(ckpt):
    where = {}
    for f in sorted(glob.glob(os.path.join(ckpt, "*.safetensors"))):
        with safe_open(f, framework="pt") as h:
            for k in h.keys():
                where[k] = f
    return where


def raw(ckpt_index, name, dtype):
    with safe_open(ckpt_index[name], framework="pt") as h:
        t = h.get_tensor(name)
    if dtype == "BF16":
        return t.view(torch.int16).numpy().view(np.uint16).reshape(-1)
    return t.view(torch.uint8).numpy().reshape(-1)


def bound(ckpt_index, buffer):
    """A source's bytes: its `tensor`, or its `tensors` read whole one after another."""
    names = buffer["tensors"] if "tensors" in buffer else [buffer["tensor"]]
    return np.concatenate([raw(ckpt_index, n, buffer["dtype"]) for n in names])


def compare(manifest, ckpt):
    m = json.load(open(manifest))
    buffers, index = m["buffers"], tensor_index(ckpt)
    free0 = torch.cuda.mem_get_info()[0]
    model = loadplan.load(manifest, ckpt)
    calls = [c for p in m["programs"].values() if p.get("derive") for c in p["calls"]]
    writers = {}
    for c in calls:
        writers.setdefault(c["args"]["dst"], []).append(c)
    ok = bad = 0
    for dst, cs in sorted(writers.items()):
        c = cs[0]
        s = {k: v for k, v in c["args"].items() if isinstance(v, int)}
        inputs = {p: bound(index, buffers[b])
                  for p, b in c["args"].items() if isinstance(b, str) and p != "dst"}
        want = np.ascontiguousarray(recipe_check.expected(c["kernel"], s, inputs)).view(np.uint8)
        got = torch.from_dlpack(model[dst]).cpu().contiguous().view(torch.uint8).numpy().reshape(-1)
        if len(cs) == 1 and got.shape == want.shape and np.array_equal(got, want):
            ok += 1
        else:
            bad += 1
            print(f"MISMATCH {dst} ({c['kernel']}, {len(cs)} writers)")
    a, b = torch.from_dlpack(model[dst]), torch.from_dlpack(model[dst])
    zero_copy = a.is_cuda and a.data_ptr() == b.data_ptr()
    held = free0 - torch.cuda.mem_get_info()[0]
    del a, b, model
    torch.cuda.synchronize()
    after = free0 - torch.cuda.mem_get_info()[0]
    print(f"{manifest}: {ok} derived carries equal to safetensors + the recipe, {bad} differ; "
          f"zero copy {zero_copy}; held {held / 2**30:.3f} GiB while loaded, {after / 2**20:.1f} MiB after del")
    return bad == 0 and zero_copy


def speed(manifest, ckpt, cli, rounds):
    py, cl = [], []
    for r in range(rounds):
        out = subprocess.run([cli, "run", manifest, "--checkpoint", ckpt, "--repeat", "3", "--format", "json"],
                             capture_output=True, text=True, check=True).stdout
        cl.append(json.loads(out[out.index("{"):out.rindex("}") + 1])["gbps"])
        runs = []
        for _ in range(3):
            t0 = time.perf_counter()
            model = loadplan.load(manifest, ckpt)
            wall = time.perf_counter() - t0
            runs.append((model.report["gbps"], wall, model.report["fill_bytes"]))
            del model
        g = statistics.median(x[0] for x in runs)
        e2e = statistics.median(x[2] / x[1] / 1e9 for x in runs)
        py.append(g)
        print(f"round {r + 1}: loadplan run {cl[-1]:.2f} GB/s, loadplan.load {g:.2f} GB/s "
              f"(same clock: first fill to finish), end to end incl. verify + plan + setup {e2e:.2f} GB/s")
    ratio = statistics.median(py) / statistics.median(cl)
    print(f"median: Python {statistics.median(py):.2f} GB/s / CLI {statistics.median(cl):.2f} GB/s = {ratio:.3f}")
    return True


def main():
    torch.cuda.init()
    if sys.argv[1] == "compare":
        return 0 if compare(sys.argv[2], sys.argv[3]) else 1
    return 0 if speed(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])) else 1


if __name__ == "__main__":
    sys.exit(main())
