#!/usr/bin/env python3
"""GPUDirect Storage through cuFile on one checkpoint shard: what the machine does, failure included.

    python3 bench/cufile_probe.py SHARD [--chunk-mib 64]

Loads libcufile (the `nvidia-cufile` wheel's, or the system's), opens the driver, registers
the shard (opened O_DIRECT) and reads it into device memory with cuFileRead in chunks; prints
one JSON line: every step's status (the cuFile error code and its name where one failed), the
GB/s where the reads ran, and cuFile's own view of the mode (its properties: whether nvidia-fs
is loaded, i.e. true GPUDirect, or POSIX compatibility mode with its bounce buffers). Device
memory comes from CuPy (on the GPU machine's image). The cold comparison: evict the file first.
"""
import argparse
import ctypes
import glob
import json
import os
import sys
import time

OP_ERRORS = {0: "CU_FILE_SUCCESS", 5001: "CU_FILE_DRIVER_NOT_INITIALIZED",
             5002: "CU_FILE_DRIVER_INVALID_PROPS", 5003: "CU_FILE_DRIVER_UNSUPPORTED_LIMIT",
             5004: "CU_FILE_DRIVER_VERSION_MISMATCH", 5005: "CU_FILE_DRIVER_VERSION_READ_ERROR",
             5006: "CU_FILE_DRIVER_CLOSING", 5007: "CU_FILE_PLATFORM_NOT_SUPPORTED",
             5008: "CU_FILE_IO_NOT_SUPPORTED", 5009: "CU_FILE_DEVICE_NOT_SUPPORTED",
             5010: "CU_FILE_NVFS_DRIVER_ERROR", 5011: "CU_FILE_CUDA_DRIVER_ERROR",
             5012: "CU_FILE_CUDA_POINTER_INVALID", 5013: "CU_FILE_CUDA_MEMORY_TYPE_INVALID",
             5014: "CU_FILE_CUDA_POINTER_RANGE_ERROR", 5015: "CU_FILE_CUDA_CONTEXT_MISMATCH",
             5016: "CU_FILE_INVALID_MAPPING_SIZE", 5017: "CU_FILE_INVALID_MAPPING_RANGE",
             5018: "CU_FILE_INVALID_FILE_TYPE", 5019: "CU_FILE_INVALID_FILE_OPEN_FLAG",
             5020: "CU_FILE_DIO_NOT_SET", 5022: "CU_FILE_INVALID_VALUE",
             5023: "CU_FILE_MEMORY_ALREADY_REGISTERED", 5024: "CU_FILE_MEMORY_NOT_REGISTERED",
             5025: "CU_FILE_PERMISSION_DENIED", 5026: "CU_FILE_DRIVER_ALREADY_OPEN",
             5027: "CU_FILE_HANDLE_NOT_REGISTERED", 5028: "CU_FILE_HANDLE_ALREADY_REGISTERED",
             5029: "CU_FILE_DEVICE_NOT_FOUND", 5030: "CU_FILE_INTERNAL_ERROR",
             5031: "CU_FILE_GETNEWFD_FAILED", 5033: "CU_FILE_NVFS_SETUP_ERROR",
             5034: "CU_FILE_IO_DISABLED", 5035: "CU_FILE_BATCH_SUBMIT_FAILED",
             5036: "CU_FILE_GPU_MEMORY_PINNING_FAILED", 5037: "CU_FILE_BATCH_FULL",
             5038: "CU_FILE_ASYNC_NOT_SUPPORTED", 5039: "CU_FILE_IO_MAX_ERROR"}


class CUfileError(ctypes.Structure):
    _fields_ = [("err", ctypes.c_int), ("cu_err", ctypes.c_int)]


class CUfileDescr(ctypes.Structure):  # type, union {int fd; void *handle}, const CUfileFSOps_t *
    _fields_ = [("type", ctypes.c_int), ("handle", ctypes.c_void_p), ("fs_ops", ctypes.c_void_p)]


CU_FILE_HANDLE_TYPE_OPAQUE_FD = 1


def find_library():
    here = []
    for p in sys.path:
        for sub in ("cufile", "cu13", "cu12"):  # the wheel's layouts: nvidia/cufile/lib, nvidia/cu13/lib
            here += glob.glob(os.path.join(p, "nvidia", sub, "lib", "libcufile.so.*"))
    for name in here + ["libcufile.so.0", "libcufile.so"]:
        try:
            return ctypes.CDLL(name), name
        except OSError:
            continue
    return None, None


def status(e):
    code = e.err if isinstance(e, CUfileError) else e
    return {"code": code, "name": OP_ERRORS.get(code, "?"),
            **({"cuda": e.cu_err} if isinstance(e, CUfileError) and e.cu_err else {})}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("shard")
    ap.add_argument("--chunk-mib", type=int, default=64)
    a = ap.parse_args()
    out = {"file": a.shard}
    lib, name = find_library()
    out["library"] = name
    if lib is None:
        out["result"] = "no libcufile on this machine"
        print(json.dumps(out))
        return
    lib.cuFileDriverOpen.restype = CUfileError
    lib.cuFileHandleRegister.restype = CUfileError
    lib.cuFileHandleRegister.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(CUfileDescr)]
    lib.cuFileHandleDeregister.argtypes = [ctypes.c_void_p]
    lib.cuFileRead.restype = ctypes.c_ssize_t
    lib.cuFileRead.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_long,
                               ctypes.c_long]
    try:
        import cupy as cp
        cp.cuda.Device(0).use()
        cp.cuda.runtime.free(0)  # the context, before the driver opens
    except Exception as e:  # noqa: BLE001 - reported
        out["result"] = f"no CUDA device through CuPy: {e}"
        print(json.dumps(out))
        return
    t0 = time.perf_counter()
    opened = lib.cuFileDriverOpen()
    out["driver_open"] = {**status(opened), "s": time.perf_counter() - t0}
    if opened.err != 0:
        out["result"] = "cuFileDriverOpen failed"
        print(json.dumps(out))
        return
    size = os.path.getsize(a.shard)
    fd = -1
    handle = ctypes.c_void_p()
    try:
        try:
            fd = os.open(a.shard, os.O_RDONLY | os.O_DIRECT)
        except OSError as e:
            out["result"] = f"open O_DIRECT: {e.strerror}"
            return
        descr = CUfileDescr(CU_FILE_HANDLE_TYPE_OPAQUE_FD, fd, None)
        reg = lib.cuFileHandleRegister(ctypes.byref(handle), ctypes.byref(descr))
        out["handle_register"] = status(reg)
        if reg.err != 0:
            out["result"] = "cuFileHandleRegister failed"
            return
        dst = cp.cuda.alloc(size)
        chunk = a.chunk_mib << 20
        t0 = time.perf_counter()
        off, failed = 0, None
        while off < size:
            n = min(chunk, size - off)
            got = lib.cuFileRead(handle, ctypes.c_void_p(dst.ptr), n, off, off)
            if got != n:
                failed = {"offset": off, "asked": n, "returned": got,
                          **({"error": status(-got)} if got < 0 else {})}
                break
            off += n
        cp.cuda.runtime.deviceSynchronize()
        dt = time.perf_counter() - t0
        out["read"] = {"bytes": off, "s": dt, "gbps": off / dt / 1e9 if dt > 0 else None,
                       "chunk_bytes": chunk, **({"failed": failed} if failed else {})}
        out["result"] = "read failed" if failed else "read ok"
        # What cuFile says it is doing: nvidia-fs (true GDS) or POSIX compatibility mode.
        props = os.environ.get("CUFILE_ENV_PATH_JSON", "/etc/cufile.json")
        out["config"] = props if os.path.exists(props) else f"{props} absent (defaults)"
        out["nvidia_fs_loaded"] = os.path.exists("/proc/driver/nvidia-fs/stats")
    finally:
        if handle.value:
            lib.cuFileHandleDeregister(handle)
        if fd >= 0:
            os.close(fd)
        if hasattr(lib, "cuFileDriverClose_v2"):
            lib.cuFileDriverClose_v2()
        print(json.dumps(out))


if __name__ == "__main__":
    main()
