#!/usr/bin/env python3
"""Python's load of a deployment file under a launcher (docs/deploy.md): run by torchrun, one
process per stage; prints the stage this process loaded, its GPU and the load's rate.

    torchrun --nproc-per-node N scripts/gpu/deploy_check.py DEPLOY.json CHECKPOINT [--nccl]

--nccl then checks the stage boundaries through NCCL (torch.distributed, NVLink multicast off
as the GPU machines require): each stage k < N-1 sends a fresh tensor of each exported
output's dtype and shape (dims at each variable's max), filled with a pattern of k, to stage
k+1, which receives it into a tensor of its paired input's dtype and shape (the boundary rule's
pairing: in name order) and checks every byte. The loaded Model holds weights and carries
only, so these are the boundary's shapes and dtypes, not serve-time activations. Then one
all-reduce (sum) of 1 Mi F32 on every rank, checked against the sum of the ranks' fills. Exit 1
on any difference.
"""
import json
import os
import sys
import time

import loadplan

DTYPES = {"BF16": "bfloat16", "F16": "float16", "F32": "float32", "F64": "float64", "I8": "int8",
          "U8": "uint8", "I16": "int16", "U16": "uint16", "I32": "int32", "U32": "uint32", "I64": "int64",
          "U64": "uint64", "BOOL": "bool", "F8_E4M3": "float8_e4m3fn", "F8_E5M2": "float8_e5m2"}


def torch_dtype(torch, dtype, buffer):
    if dtype not in DTYPES or not hasattr(torch, DTYPES[dtype]):
        raise SystemExit(f"{buffer}: dtype {dtype} has no torch type this check knows")
    return getattr(torch, DTYPES[dtype])


def dims(shape, variables):
    """A buffer's shape at every variable's max (an int, a variable, or an expression of them)."""
    at = {k: v["max"] for k, v in variables.items()}
    out = []
    for d in shape:
        if isinstance(d, int):
            out.append(d)
        elif d in at:
            out.append(at[d])
        else:  # an expression: + - * / % ( ) , ceil_div min max over the variables
            if any(c not in "0123456789+-*/%(), _" and not c.isalnum() for c in d):
                raise SystemExit(f"dim {d!r}: not an expression this check evaluates")
            fns = {"ceil_div": lambda a, b: -(-a // b), "min": min, "max": max, "__builtins__": {}}
            out.append(int(eval(d.replace("/", "//"), fns, at)))  # noqa: S307
    return out


def boundary(manifest, kind):
    """The stage's exported outputs (kind 'output') or inputs, in name order: (name, buffer)."""
    b = manifest["buffers"]
    return sorted((n, x) for n, x in b.items() if x["kind"] == kind and (kind != "output" or x.get("export")))


def pattern(torch, shape, dtype, seed):
    n = 1
    for d in shape:
        n *= d
    return ((torch.arange(n, device="cuda", dtype=torch.int64) * 7 + seed) % 61).to(dtype).reshape(shape)


def nccl_check(model):
    import torch
    import torch.distributed as dist

    for k in ("NCCL_NVLS_ENABLE", "TORCH_SYMM_MEM_DISABLE_MULTICAST", "NVSHMEM_DISABLE_NVLS"):
        os.environ.setdefault(k, "0" if k == "NCCL_NVLS_ENABLE" else "1")
    s = model.stage
    rank, world, dev = s["rank"], s["world_size"], s["device"]
    torch.cuda.set_device(dev)
    dist.init_process_group("nccl", rank=rank, world_size=world, device_id=torch.device("cuda", dev))
    manifest = json.load(open(s["manifest"]))
    variables = manifest.get("vars", {})
    ok = True
    ops, checks = [], []
    if rank + 1 < world:
        for name, b in boundary(manifest, "output"):
            t = pattern(torch, dims(b["shape"], variables), torch_dtype(torch, b["dtype"], name), rank)
            ops.append(dist.P2POp(dist.isend, t, rank + 1))
    if rank > 0:
        for name, b in boundary(manifest, "input"):
            shape, dtype = dims(b["shape"], variables), torch_dtype(torch, b["dtype"], name)
            t = torch.empty(shape, dtype=dtype, device="cuda")
            ops.append(dist.P2POp(dist.irecv, t, rank - 1))
            checks.append((name, t, pattern(torch, shape, dtype, rank - 1)))
    if ops:
        for w in dist.batch_isend_irecv(ops):
            w.wait()
    torch.cuda.synchronize()
    for name, got, want in checks:
        same = torch.equal(got.view(torch.uint8), want.view(torch.uint8))  # bytes: any dtype
        ok &= same
        print(f"rank {rank}: boundary {rank - 1} -> {rank}: {name} {list(got.shape)} {got.dtype}: "
              f"{'equal' if same else 'DIFFERS'}")
    # One fixed buffer on every rank: stages' peer buffers may differ or be missing, and an
    # all-reduce of unequal sizes would hang.
    name, shape, dtype = "1 Mi F32", [1 << 20], torch.float32
    t = torch.full(shape, rank + 1, dtype=dtype, device="cuda")
    dist.all_reduce(t)
    same = bool((t == world * (world + 1) // 2).all())
    ok &= same
    print(f"rank {rank}: all-reduce over {world} ranks of {name} {shape} {dtype}: {'equal' if same else 'DIFFERS'}")
    dist.destroy_process_group()
    return ok


def main():
    deploy, checkpoint = sys.argv[1], sys.argv[2]
    t0 = time.perf_counter()
    model = loadplan.load(deploy, checkpoint)
    dt = time.perf_counter() - t0
    s = model.stage
    assert s is not None, "a deployment file gives the Model its stage"
    print(f"rank {s['rank']} of {s['world_size']} ({s['launcher']}): stage {s['stage']} of "
          f"{s['stages']} ({s['deployment']}) on GPU {s['device']}, {len(model)} buffers, "
          f"{dt:.3f} s for the whole call")
    if "--nccl" in sys.argv[3:] and not nccl_check(model):
        sys.exit(1)


if __name__ == "__main__":
    main()
