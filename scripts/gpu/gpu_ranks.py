#!/usr/bin/env python3
"""Every rank of a tensor-parallel deployment loaded on the one GPU, one after another, each
compared byte for byte with torch's slicing of what safetensors reads whole (issue 30).

    python3 scripts/gpu/gpu_ranks.py DEPLOY.json CKPT_DIR [--json OUT]

Per rank: loadplan.load(DEPLOY, CKPT, rank=r) (its own peak against the prediction, GB/s,
bytes read), then for every buffer of the rank's manifest bound to a tensor: the loaded bytes
against safetensors' tensor, narrowed by the buffer's slice when it has one. Prints one line
per rank and a summary; exits 1 when a byte differs or a measured peak is not the prediction.
"""
import argparse
import json
import os
import sys
import time

import torch
from safetensors import safe_open

import loadplan


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


def expected(where, buffer):
    f = where[buffer["tensor"]]
    if f not in _open:
        _open[f] = safe_open(f, "pt")
    t = _open[f].get_tensor(buffer["tensor"])
    if "slice" in buffer:
        s = buffer["slice"]
        t = t.narrow(s["dim"], s["start"], s["length"])
    return t.contiguous().view(torch.uint8).reshape(-1)


def check_rank(deploy, ckpt, rank, where):
    stage = loadplan._loadplan.resolve_source(deploy, rank, 0)["stage"]
    manifest = json.load(open(stage["manifest"]))
    t0 = time.perf_counter()
    model = loadplan.load(deploy, ckpt, rank=rank)
    torch.cuda.synchronize()
    seconds = time.perf_counter() - t0
    report = model.report
    bad, compared, sliced = [], 0, 0
    for name, b in manifest["buffers"].items():
        if "tensor" not in b:
            continue
        got = torch.from_dlpack(model[name]).contiguous().view(torch.uint8).reshape(-1).cpu()
        if not torch.equal(got, expected(where, b)):
            bad.append(name)
        compared += 1
        sliced += "slice" in b
    row = {"rank": rank, "manifest": stage["manifest"], "compared": compared, "sliced": sliced,
           "differ": bad[:5], "seconds": seconds, "gbps": report.get("gbps"),
           "fill_bytes": report.get("fill_bytes"), "predicted_peak": report.get("predicted_peak"),
           "measured_peak": report.get("measured_peak")}
    del model
    torch.cuda.synchronize()
    return row


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("deploy")
    ap.add_argument("ckpt")
    ap.add_argument("--json")
    a = ap.parse_args()
    ranks = len(json.load(open(a.deploy))["stages"])
    where = tensors_of(a.ckpt)
    rows, ok = [], True
    for r in range(ranks):
        row = check_rank(a.deploy, a.ckpt, r, where)
        rows.append(row)
        same = row["measured_peak"] == row["predicted_peak"]
        ok = ok and not row["differ"] and same
        print(f"rank {r}: {row['compared']} buffers ({row['sliced']} sliced) "
              f"{'equal' if not row['differ'] else 'DIFFER: ' + ', '.join(row['differ'])}; "
              f"{row['fill_bytes'] / 1e9:.2f} GB at {row['gbps']:.2f} GB/s; peak "
              f"{row['measured_peak']} {'=' if same else '!='} predicted {row['predicted_peak']}",
              flush=True)
    if a.json:
        json.dump({"deploy": a.deploy, "rows": rows}, open(a.json, "w"), indent=1)
    print(f"{sum(not r['differ'] for r in rows)} of {ranks} ranks byte-equal to torch's slicing")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
