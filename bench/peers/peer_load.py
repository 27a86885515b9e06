#!/usr/bin/env python3
"""One load of a safetensors checkpoint by a peer loader, timed (docs/peers.md).

    python3 bench/peers/peer_load.py LOADER CKPT_DIR [--prep --manifest M.json] [--json] [--device cpu]

LOADER: instanttensor (safe_open(files, device=0), its default backend), instanttensor-buffered
(backend=BackendPolicy.BUFFERED), fastsafetensors (SafeTensorsFileLoader, nogds=True: O_DIRECT
reads on a disk file), fastsafetensors-buffered (the same with FASTSAFETENSORS_ODIRECT=0),
safetensors (load_file(f, device="cuda:0") per shard), or pinned-h2d (no checkpoint: torch's
pinned host -> device copy of 1 GiB, 1 and 4 streams, the ceiling beside loadplan's --ceilings).

Every tensor of every CKPT_DIR/*.safetensors ends on the device. The clock starts after the
imports and the CUDA context (torch.empty(1, device="cuda") first) and stops when the last tensor
is on the device (torch.cuda.synchronize()). --prep then runs the MXFP4 expert prep of the
manifest's derive programs with torch on the same device, one layer at a time, dropping each
layer's raw tensors (bench/peers/mxfp4_prep.py), timed on its own; whole = load + prep.
Prints one line; with --json a JSON object: loader, backend, bytes, load_s, prep_s, whole_s,
raw_gbps, whole_gbps, peak_allocated (torch's allocator), outside_torch_bytes (device memory the
loader took outside it: InstantTensor's staging ring, alive during the load), peak_device
(the larger of load peak + outside and the job's torch peak), kept_bytes (what the job keeps).
--device cpu (safetensors only): the same path on the host, for testing without a GPU.
"""
import argparse
import glob
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

LOADERS = ["instanttensor", "instanttensor-buffered", "fastsafetensors", "fastsafetensors-buffered",
           "safetensors", "pinned-h2d"]


def nbytes(t):
    return t.numel() * t.element_size()


def version(loader):
    """The installed version of the loader's package (from its dist-info)."""
    import importlib.metadata

    try:
        return importlib.metadata.version(loader.split("-")[0])
    except importlib.metadata.PackageNotFoundError:
        return None


def load_instanttensor(files, device, buffered):
    """InstantTensor 0.2.2: one safe_open over every shard (it plans reads across files); the
    yielded tensors are clones (copy=True, the default) that outlive the context."""
    from instanttensor import BackendPolicy, safe_open

    kw = {"backend": BackendPolicy.BUFFERED} if buffered else {}
    with safe_open(list(files), framework="pt", device=device.index or 0, **kw) as f:
        backend = f.backend.name  # the Backend it selected (URING, AIO, MMAP, URING_BUFFERED ...)
        ring = int(f.buffer_size)
        tensors = dict(f.tensors())
    extra = f"policy {'BUFFERED' if buffered else 'default'}, buffer {ring / 2**20:.0f} MiB"
    return tensors, f"{backend} ({extra})", ring


def load_fastsafetensors(files, device, buffered):
    """fastsafetensors 0.5.0 without GPUDirect Storage: pread into a bounce buffer, then copies
    into one device buffer per file; get_tensor is a zero-copy view that keeps it alive."""
    if buffered:
        os.environ["FASTSAFETENSORS_ODIRECT"] = "0"
    from fastsafetensors import SafeTensorsFileLoader
    from fastsafetensors.common import is_odirect_enabled

    loader = SafeTensorsFileLoader(None, str(device), nogds=True)
    loader.add_filenames({0: list(files)})
    fb = loader.copy_files_to_device()
    tensors = {k: fb.get_tensor(k) for k in loader.get_keys()}
    copier = getattr(loader, "copier_class", type(None)).__name__
    direct = is_odirect_enabled(files[0], buffered_ram_fs=True)
    fb.close()  # drops the buffer's references; the tensors keep their storage
    loader.close()
    return tensors, f"nogds=True, {'O_DIRECT' if direct else 'buffered'} reads ({copier})", 0


def load_safetensors(files, device):
    from safetensors.torch import load_file

    tensors = {}
    for f in files:
        tensors.update(load_file(f, device=str(device)))
    return tensors, f"load_file(device='{device}') per shard", 0


def pinned_h2d(torch, device, size=1 << 30, reps=5):
    """torch's pinned host -> device copy of SIZE bytes: .to(device, non_blocking=True), one
    stream and 4 streams (a quarter each), best of REPS after a warm-up; GB/s."""
    src = torch.ones(size, dtype=torch.uint8).pin_memory()
    out = {}
    for n in (1, 4):
        streams = [torch.cuda.Stream(device) for _ in range(n)]
        q = size // n
        best = float("inf")
        for rep in range(reps + 1):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            keep = []
            for k, s in enumerate(streams):
                with torch.cuda.stream(s):
                    keep.append(src[k * q:(k + 1) * q].to(device, non_blocking=True))
            torch.cuda.synchronize()
            if rep:  # the first is the warm-up (the caching allocator's first blocks)
                best = min(best, time.perf_counter() - t0)
            del keep
        out[n] = size / best / 1e9
    return {"loader": "pinned-h2d", "backend": "torch pinned .to(cuda, non_blocking=True), 1 GiB, best of 5",
            "bytes": size, "gbps_1_stream": out[1], "gbps_4_streams": out[4], "raw_gbps": max(out.values())}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("loader", choices=LOADERS)
    ap.add_argument("ckpt", nargs="?", help="a folder of *.safetensors shards (not for pinned-h2d)")
    ap.add_argument("--prep", action="store_true", help="then the MXFP4 prep of --manifest's derive programs")
    ap.add_argument("--manifest", help="the manifest whose derive programs --prep runs (loadplan example ...)")
    ap.add_argument("--json", action="store_true", help="print the result as one JSON line")
    ap.add_argument("--device", default="cuda:0", help="cuda:N (default cuda:0), or cpu for safetensors")
    a = ap.parse_args()
    if a.prep and not a.manifest:
        ap.error("--prep needs --manifest")
    if a.loader != "pinned-h2d" and not a.ckpt:
        ap.error(f"{a.loader} needs CKPT_DIR")

    import torch

    device = torch.device(a.device)
    if device.type == "cuda":
        torch.empty(1, device=device)  # the CUDA context, before the clock
        torch.cuda.synchronize(device)
    elif a.loader != "safetensors":
        ap.error(f"--device {a.device}: only safetensors loads to the host")

    def sync():
        if device.type == "cuda":
            torch.cuda.synchronize(device)

    if a.loader == "pinned-h2d":
        r = pinned_h2d(torch, device)
        print(json.dumps(r) if a.json else f"{r['backend']}: {r['gbps_1_stream']:.2f} GB/s (1 stream), "
              f"{r['gbps_4_streams']:.2f} GB/s (4 streams)")
        return 0

    files = sorted(glob.glob(os.path.join(a.ckpt, "*.safetensors")))
    if not files:
        ap.error(f"{a.ckpt}: no *.safetensors")
    manifest = json.load(open(a.manifest)) if a.manifest else None
    # The loaders' modules before the clock too (their import is not the load).
    if a.loader.startswith("instanttensor"):
        import instanttensor  # noqa: F401
    elif a.loader.startswith("fastsafetensors"):
        import fastsafetensors  # noqa: F401
    else:
        import safetensors.torch  # noqa: F401
    import mxfp4_prep

    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)
    t0 = time.perf_counter()
    if a.loader.startswith("instanttensor"):
        tensors, backend, outside = load_instanttensor(files, device, a.loader.endswith("buffered"))
    elif a.loader.startswith("fastsafetensors"):
        tensors, backend, outside = load_fastsafetensors(files, device, a.loader.endswith("buffered"))
    else:
        tensors, backend, outside = load_safetensors(files, device)
    sync()
    load_s = time.perf_counter() - t0
    total = sum(nbytes(t) for t in tensors.values())
    on = {str(t.device) for t in tensors.values()}
    if on != {str(device)}:
        raise RuntimeError(f"tensors on {sorted(on)}, not all on {device}")
    cuda = device.type == "cuda"
    peak_load = torch.cuda.max_memory_allocated(device) if cuda else 0
    r = {"loader": a.loader, "version": version(a.loader), "backend": backend, "files": len(files),
         "tensors": len(tensors), "bytes": total,
         "load_s": load_s, "raw_gbps": total / load_s / 1e9, "device": str(device),
         "device_name": torch.cuda.get_device_name(device) if cuda else "cpu", "torch": torch.__version__,
         "outside_torch_bytes": outside, "peak_load_allocated": peak_load}
    r["kept_bytes"] = total
    if a.prep:  # a failed prep still reports the load
        try:
            t1 = time.perf_counter()
            derived = mxfp4_prep.prep(manifest, tensors)
            sync()
            r["prep_s"] = time.perf_counter() - t1
            r["whole_s"] = load_s + r["prep_s"]
            r["whole_gbps"] = total / r["whole_s"] / 1e9
            r["derived"] = len(derived)
            r["kept_bytes"] = sum(nbytes(t) for t in tensors.values()) + sum(nbytes(t) for t in derived.values())
        except Exception as error:  # noqa: BLE001 (reported in the row, the load's figures kept)
            r["prep_error"] = f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"
    r["peak_allocated"] = torch.cuda.max_memory_allocated(device) if cuda else 0
    r["peak_device"] = max(peak_load + outside, r["peak_allocated"])
    if a.json:
        print(json.dumps(r))
    else:
        job = f"; prep {r['prep_s']:.3f} s, whole {r['whole_gbps']:.2f} GB/s" if "prep_s" in r else ""
        job += f"; prep FAILED: {r['prep_error']}" if "prep_error" in r else ""
        print(f"{a.loader} [{backend}]: {total / 1e9:.3f} GB in {load_s:.3f} s = {r['raw_gbps']:.2f} GB/s{job}; "
              f"peak {r['peak_device'] / 2**30:.3f} GiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
