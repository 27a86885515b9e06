#!/usr/bin/env python3
"""A checkpoint of the N biggest shards of another, with a manifest for exactly their tensors.

    python3 bench/peers/subset.py MANIFEST CKPT_DIR N OUT_DIR

OUT_DIR gets hard links to the N biggest CKPT_DIR/*.safetensors (symbolic links where a hard
link cannot be made: the same pages either way, so evicting them evicts the originals), a
model.safetensors.index.json over their tensors and manifest.json: MANIFEST's buffers bound to
those tensors, the derive programs whose sources are all among them with their carries (marked
export: nothing in the subset reads them), and no other program. Every loader then reads the
same bytes: the peers every tensor of OUT_DIR's shards, loadplan the subset manifest's. The cold
part of scripts/gpu/gpu-check uses it when the budget does not cover the whole checkpoint.
Prints one JSON line: shards, bytes, tensors, derive programs.
"""
import glob
import json
import os
import struct
import sys


def header(path):
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        h = json.loads(f.read(n))
    h.pop("__metadata__", None)
    return h


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    manifest_path, ckpt, n, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    shards = sorted(glob.glob(os.path.join(ckpt, "*.safetensors")), key=os.path.getsize, reverse=True)[:n]
    os.makedirs(out, exist_ok=True)
    for old in glob.glob(os.path.join(out, "*.safetensors")):
        os.remove(old)
    weight_map, size = {}, 0
    for s in sorted(shards):
        dst = os.path.join(out, os.path.basename(s))
        try:
            os.link(s, dst)
        except OSError:
            os.symlink(os.path.abspath(s), dst)
        for name, t in header(s).items():
            weight_map[name] = os.path.basename(s)
            size += t["data_offsets"][1] - t["data_offsets"][0]
    with open(os.path.join(out, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {"total_size": size}, "weight_map": weight_map}, f, indent=1)

    m = json.load(open(manifest_path))
    full = m["buffers"]
    buffers = {k: b for k, b in full.items() if b.get("tensor") in weight_map}
    programs = {}
    for name, p in m["programs"].items():
        if not p.get("derive"):
            continue
        args = [v for c in p["calls"] for k, v in c["args"].items() if isinstance(v, str)]
        reads = [v for c in p["calls"] for k, v in c["args"].items() if isinstance(v, str) and k != "dst"]
        if all(v in buffers for v in reads):
            programs[name] = p
            for v in args:
                buffers[v] = dict(full[v], export=True) if full[v]["kind"] == "carry" else full[v]
    # A source whose derive program is not in the subset would be loaded and never read.
    read = {v for p in programs.values() for c in p["calls"] for k, v in c["args"].items() if k != "dst"}
    buffers = {k: b for k, b in buffers.items() if b["kind"] != "source" or k in read}
    bound = {b["tensor"] for b in buffers.values() if "tensor" in b}
    if bound != set(weight_map):
        missing = sorted(set(weight_map) - bound)[:5]
        sys.exit(f"subset: {len(set(weight_map) - bound)} tensors of the shards are not loaded, e.g. {missing}")
    m["buffers"], m["programs"] = buffers, programs
    m["name"] = f"{m.get('name', 'manifest')} ({n} biggest shards)"
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(m, f, indent=1)
    print(json.dumps({"shards": [os.path.basename(s) for s in sorted(shards)], "bytes": size,
                      "tensors": len(weight_map), "derive_programs": len(programs)}))


if __name__ == "__main__":
    main()
