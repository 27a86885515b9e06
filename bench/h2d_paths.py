#!/usr/bin/env python3
"""Host-to-device paths for one checkpoint shard, measured side by side in one process (CuPy).

    python3 bench/h2d_paths.py SHARD [--chunk-mib 64] [--json]

1. pinned: a cudaMallocHost buffer of the file's size, copied to the device (the ceiling
   every staged loader runs under; the bytes are whatever the buffer holds).
2. staged: the file read (pread, page cache or tmpfs) into pinned chunks, each copied to the
   device, one thread: the host cost of the copy from the page cache plus the DMA.
3. registered: the file mmap'd read-only and its pages pinned in place with
   cudaHostRegister(cudaHostRegisterReadOnly), then copied straight from the page cache's
   own pages: register time and DMA rate apart, then both chunk by chunk.

Each figure is GB/s of the file's bytes; the JSON line has them all. This is an experiment to
choose the load path by (docs/performance.md), not a loader.
"""
import argparse
import json
import mmap
import os
import sys
import time

import numpy as np

try:
    import cupy as cp
except ImportError as e:  # the GPU machine's image has CuPy; elsewhere nothing to measure
    print(json.dumps({"error": f"cupy: {e}"}))
    sys.exit(0)

rt = cp.cuda.runtime
READ_ONLY = 0x08  # cudaHostRegisterReadOnly
H2D = 1  # cudaMemcpyHostToDevice


def timed(fn):
    t0 = time.perf_counter()
    fn()
    cp.cuda.runtime.deviceSynchronize()
    return time.perf_counter() - t0


def pinned(size, dst):
    host = cp.cuda.alloc_pinned_memory(size)
    ptr = host.ptr
    return timed(lambda: rt.memcpy(dst.ptr, ptr, size, H2D))


def staged(path, size, dst, chunk):
    bufs = [cp.cuda.alloc_pinned_memory(chunk) for _ in range(2)]
    views = [np.frombuffer(b, dtype=np.uint8, count=chunk) for b in bufs]
    stream = cp.cuda.Stream(non_blocking=True)
    events = [None, None]
    fd = os.open(path, os.O_RDONLY)

    def run():
        off, k = 0, 0
        while off < size:
            n = min(chunk, size - off)
            if events[k] is not None:
                events[k].synchronize()
            got = os.preadv(fd, [memoryview(views[k])[:n]], off)
            assert got == n
            rt.memcpyAsync(dst.ptr + off, bufs[k].ptr, n, H2D, stream.ptr)
            events[k] = stream.record()
            off += n
            k ^= 1
        stream.synchronize()

    try:
        return timed(run)
    finally:
        os.close(fd)


def registered(path, size, dst, chunk):
    fd = os.open(path, os.O_RDONLY)
    m = mmap.mmap(fd, size, prot=mmap.PROT_READ)
    arr = np.frombuffer(m, dtype=np.uint8)
    ptr = arr.ctypes.data
    out = {}
    try:
        out["register_s"] = timed(lambda: rt.hostRegister(ptr, size, READ_ONLY))
        out["dma_s"] = timed(lambda: rt.memcpy(dst.ptr, ptr, size, H2D))
        out["unregister_s"] = timed(lambda: rt.hostUnregister(ptr))
        # Chunk by chunk: register a chunk, queue its copy, register the next meanwhile.
        stream = cp.cuda.Stream(non_blocking=True)

        def chunked():
            done = []
            off = 0
            while off < size:
                n = min(chunk, size - off)
                rt.hostRegister(ptr + off, n, READ_ONLY)
                rt.memcpyAsync(dst.ptr + off, ptr + off, n, H2D, stream.ptr)
                done.append((ptr + off, stream.record()))
                off += n
            stream.synchronize()
            for p, _ in done:
                rt.hostUnregister(p)

        out["chunked_s"] = timed(chunked)
    except cp.cuda.runtime.CUDARuntimeError as e:
        out["error"] = str(e)
    finally:
        del arr
        m.close()
        os.close(fd)
    return out


def libcuda():
    import ctypes
    lib = ctypes.CDLL("libcuda.so.1")  # ctypes releases the GIL around each call
    lib.cuMemHostRegister_v2.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_uint]
    lib.cuMemHostUnregister.argtypes = [ctypes.c_void_p]
    return lib


def threaded_registered(path, size, dst, chunk, threads):
    """Registration by `threads` threads (64 MiB pieces), alone and with each piece's copy."""
    from concurrent.futures import ThreadPoolExecutor

    lib = libcuda()
    fd = os.open(path, os.O_RDONLY)
    m = mmap.mmap(fd, size, prot=mmap.PROT_READ)
    arr = np.frombuffer(m, dtype=np.uint8)
    ptr = arr.ctypes.data
    pieces = [(off, min(chunk, size - off)) for off in range(0, size, chunk)]
    out = {"threads": threads}

    def on_thread():
        rt.setDevice(0)
        rt.free(0)  # the primary context current on this thread for the driver calls

    def register(piece):
        rc = lib.cuMemHostRegister_v2(ptr + piece[0], piece[1], READ_ONLY)
        if rc != 0:
            raise RuntimeError(f"cuMemHostRegister: CUresult {rc}")

    def unregister(piece):
        lib.cuMemHostUnregister(ptr + piece[0])

    try:
        with ThreadPoolExecutor(threads, initializer=on_thread) as ex:
            t0 = time.perf_counter()
            list(ex.map(register, pieces))
            out["register_s"] = time.perf_counter() - t0
            t0 = time.perf_counter()
            list(ex.map(unregister, pieces))
            out["unregister_s"] = time.perf_counter() - t0
            streams = [cp.cuda.Stream(non_blocking=True) for _ in range(threads)]

            def piece_copy(k):
                off, n = pieces[k]
                register(pieces[k])
                rt.memcpyAsync(dst.ptr + off, ptr + off, n, H2D, streams[k % threads].ptr)

            t0 = time.perf_counter()
            list(ex.map(piece_copy, range(len(pieces))))
            for st in streams:
                st.synchronize()
            out["pipeline_s"] = time.perf_counter() - t0
            list(ex.map(unregister, pieces))
    except RuntimeError as e:
        out["error"] = str(e)
    finally:
        del arr
        m.close()
        os.close(fd)
    for k in ("register_s", "unregister_s", "pipeline_s"):
        if k in out:
            out[k.replace("_s", "_gbps")] = size / out[k] / 1e9
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("shard")
    ap.add_argument("--chunk-mib", type=int, default=64)
    a = ap.parse_args()
    size = os.path.getsize(a.shard)
    chunk = a.chunk_mib << 20
    cp.cuda.Device(0).use()
    dst = cp.cuda.alloc(size)
    r = {"file": a.shard, "bytes": size, "chunk_bytes": chunk}
    r["pinned_gbps"] = size / pinned(size, dst) / 1e9
    r["staged_gbps"] = size / staged(a.shard, size, dst, chunk) / 1e9
    reg = registered(a.shard, size, dst, chunk)
    r.update(reg)
    for k in ("register_s", "dma_s", "chunked_s"):
        if k in reg:
            r[k.replace("_s", "_gbps")] = size / reg[k] / 1e9
    r["threaded"] = [threaded_registered(a.shard, size, dst, chunk, t) for t in (1, 4, 8, 16)]
    print(json.dumps(r))


if __name__ == "__main__":
    main()
