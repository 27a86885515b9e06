#!/usr/bin/env python3
"""The disk's direct sequential read rate under a checkpoint: the ceiling of a cold load.

    python3 bench/peers/disk.py CKPT_DIR [--streams N] [--mib M]

Two JSON lines: one `dd if=SHARD of=/dev/null bs=8M iflag=direct` (--bs-mib) on the biggest shard, then N
of them at once on the N biggest shards (a deeper queue), GB/s = the bytes of all ÷ the wall
time from the first start to the last end (the sum of the single rates beside it). Each reads
at most M MiB (default 2048) of its shard. O_DIRECT reads go to the disk whatever the page
cache holds, so this needs no eviction.
"""
import argparse
import concurrent.futures
import glob
import json
import os
import re
import subprocess
import sys
import time


def dd(path, mib, bs=8):
    """One dd of `bs` MiB blocks, timed: (bytes read, start, end)."""
    cmd = ["dd", f"if={path}", "of=/dev/null", f"bs={bs}M", "iflag=direct", f"count={max(1, mib // bs)}"]
    t0 = time.perf_counter()
    p = subprocess.run(cmd, stderr=subprocess.PIPE, text=True, env=dict(os.environ, LC_ALL="C"))
    t1 = time.perf_counter()
    if p.returncode != 0:
        raise RuntimeError(f"dd: {p.stderr.strip().splitlines()[-1] if p.stderr.strip() else p.returncode}")
    return int(re.search(r"^(\d+) bytes", p.stderr, re.M).group(1)), t0, t1


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("ckpt")
    ap.add_argument("--streams", type=int, default=4)
    ap.add_argument("--mib", type=int, default=2048)
    ap.add_argument("--bs-mib", type=int, default=8, help="dd block size in MiB (default 8)")
    a = ap.parse_args()
    shards = sorted(glob.glob(os.path.join(a.ckpt, "*.safetensors")), key=os.path.getsize, reverse=True)
    if not shards:
        sys.exit(f"{a.ckpt}: no *.safetensors")
    b, t0, t1 = dd(shards[0], a.mib, a.bs_mib)
    how = f"dd bs={a.bs_mib}M iflag=direct, 1 stream, {b / 2**20:.0f} MiB of the biggest shard"
    print(json.dumps({"loader": "disk", "backend": how,
                      "bytes": b, "load_s": t1 - t0, "raw_gbps": b / (t1 - t0) / 1e9, "streams": 1}))
    n = min(a.streams, len(shards))
    with concurrent.futures.ThreadPoolExecutor(n) as pool:
        runs = list(pool.map(lambda s: dd(s, a.mib, a.bs_mib), shards[:n]))
    total = sum(r[0] for r in runs)
    wall = max(r[2] for r in runs) - min(r[1] for r in runs)
    print(json.dumps({"loader": "disk", "backend": f"dd bs={a.bs_mib}M iflag=direct, {n} streams at once on {n} shards, "
                      f"{total / 2**20:.0f} MiB", "bytes": total, "load_s": wall, "raw_gbps": total / wall / 1e9,
                      "streams": n, "sum_of_stream_gbps": sum(r[0] / (r[2] - r[1]) / 1e9 for r in runs)}))


if __name__ == "__main__":
    main()
