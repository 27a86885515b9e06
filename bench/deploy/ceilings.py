#!/usr/bin/env python3
"""The two ceilings of a multi-GPU load, in one process: every GPU's pinned host -> device copies
at once, and the host's memory copy bandwidth (bench/deploy/aggregate.py --ceilings).

    python3 bench/deploy/ceilings.py [--seconds 2] [--mib 256] [--json OUT]

1. One thread per visible GPU, each with a pinned buffer of --mib MiB and a device buffer of the
   same size: one warm-up copy, then all threads pass a barrier together and copy back to back
   (`copy_(non_blocking=True)`, synchronized each time) for --seconds. Each GPU's GB/s is its
   bytes over its own time; the sum is the aggregate ceiling, and `overlap_s` (the latest start
   to the earliest end) says how long they really ran together.
2. A 1 GiB host tensor copied into another by torch on every core (torch.set_num_threads to the
   CPU count), the best of 3 after a warm-up, each byte counted once: the host's memcpy rate,
   which every GPU's staged copies share (each byte is copied out of the page cache once).
"""
import argparse
import json
import os
import threading
import time

import torch


def gpu_copies(dev, nbytes, seconds, barrier, out):
    torch.cuda.set_device(dev)
    src = torch.empty(nbytes, dtype=torch.uint8, pin_memory=True)
    src.fill_(0x5A)
    dst = torch.empty(nbytes, dtype=torch.uint8, device=f"cuda:{dev}")
    dst.copy_(src, non_blocking=True)
    torch.cuda.synchronize(dev)
    barrier.wait()
    t0, n = time.perf_counter(), 0
    while time.perf_counter() - t0 < seconds:
        dst.copy_(src, non_blocking=True)
        torch.cuda.synchronize(dev)
        n += 1
    t1 = time.perf_counter()
    out[dev] = {"device": dev, "bytes": n * nbytes, "seconds": t1 - t0, "gbps": n * nbytes / (t1 - t0) / 1e9,
                "start": t0, "end": t1}


def host_copy(nbytes, repeats=3):
    threads = os.cpu_count() or 1
    torch.set_num_threads(threads)
    a = torch.full((nbytes,), 0x5A, dtype=torch.uint8)
    b = torch.zeros(nbytes, dtype=torch.uint8)
    best = None
    for i in range(repeats + 1):  # i == 0: warm-up
        t0 = time.perf_counter()
        b.copy_(a)
        dt = time.perf_counter() - t0
        if i > 0 and (best is None or dt < best):
            best = dt
    if not torch.equal(a, b):
        raise SystemExit("host copy: the copy differs from its source")
    return {"bytes": nbytes, "seconds": best, "gbps": nbytes / best / 1e9, "threads": threads}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--mib", type=int, default=256)
    ap.add_argument("--json")
    a = ap.parse_args()
    n = torch.cuda.device_count()
    if n == 0:
        raise SystemExit("ceilings: no CUDA device visible")
    barrier, out = threading.Barrier(n, timeout=120), {}  # a GPU that fails breaks it: no hang
    threads = [threading.Thread(target=gpu_copies, args=(d, a.mib << 20, a.seconds, barrier, out)) for d in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if len(out) != n:
        raise SystemExit(f"ceilings: {n - len(out)} of {n} GPUs did not finish their copies")
    gpus = [out[d] for d in range(n)]
    r = {"gpus": gpus, "sum_pinned_h2d_gbps": sum(g["gbps"] for g in gpus),
         "overlap_s": min(g["end"] for g in gpus) - max(g["start"] for g in gpus),
         "host_copy": host_copy(1 << 30)}
    r["host_copy_gbps"] = r["host_copy"]["gbps"]
    for g in gpus:
        print(f"GPU {g['device']}: pinned H2D {g['gbps']:.2f} GB/s with every GPU copying")
    print(f"sum {r['sum_pinned_h2d_gbps']:.2f} GB/s over {n} GPUs (together for {r['overlap_s']:.3f} s); "
          f"host memcpy {r['host_copy_gbps']:.2f} GB/s on {r['host_copy']['threads']} threads")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(r, f, indent=1)


if __name__ == "__main__":
    main()
