#!/usr/bin/env python3
"""loadplan's I/O threads, chunk size and read mode on one storage path, beside peers, interleaved.

    python3 bench/storage_sweep.py STORAGE LOADPLAN MANIFEST CKPT_DIR [--rounds R] [--json OUT]
        [--config T:C[:FLAG]... | default[:FLAG]...]... [--peer NAME[:job]]... [--disk BS_MIB:STREAMS]...

STORAGE is cold, tmpfs or page-cache (a label; cold also evicts CKPT_DIR's shards from the page
cache before every row, as scripts/gpu/gpu-check's peers part). Each round runs every row once, in
the order given, each in a fresh process: a config T:C is `loadplan run --no-derive --io-threads
T --chunk-mib C` (`default` takes run's own); FLAGs: direct (`--direct`), rR (`--read-mib R`), job
(derive on: the whole job). A peer is bench/peers/peer_load.py NAME (raw load; NAME:job adds its
MXFP4 prep of MANIFEST's derive programs, the whole job), a
disk row is `dd iflag=direct` with BS_MIB MiB blocks on STREAMS shards at once (bench/peers/disk.py).
Rows of one round are side by side; rounds repeat them to show the noise. Prints one line per
row and a table of each row's best and worst GB/s; --json writes every run.
"""
import argparse
import glob
import re
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def evict(ckpt):
    """Drops the shards' pages from the page cache (no root needed): written back first (fsync),
    since DONTNEED leaves dirty pages, as a freshly generated checkpoint's are, in the cache."""
    for f in sorted(glob.glob(os.path.join(ckpt, "*.safetensors"))):
        fd = os.open(f, os.O_RDONLY)
        try:
            os.fsync(fd)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def last_json(text):
    """The last JSON object in a process's output (loadplan prints one, peers one per line)."""
    return json.loads(text[text.index("{"):text.rindex("}") + 1]) if "{" in text else None


def run_loadplan(a, threads, chunk, direct, read=None, job=False):
    cmd = [a.loadplan, "run", a.manifest, "--checkpoint", a.ckpt, "--repeat", "1", "--format", "json"]
    if not job:
        cmd.append("--no-derive")
    if threads is not None:
        cmd += ["--io-threads", str(threads), "--chunk-mib", str(chunk)]
    if direct:
        cmd.append("--direct")
    if read is not None:
        cmd += ["--read-mib", str(read)]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=a.row_timeout)
    r = last_json(p.stdout) if p.returncode == 0 else None
    if r is None:
        return {"error": (p.stderr or p.stdout).strip()[-300:]}
    m = r["runs"][r["median_run"]]
    return {"gbps": r["gbps"], "read_s": m["read_s"], "slot_wait_s": m["slot_wait_s"],
            "io_threads": r["io_threads"], "chunk_bytes": r["chunk_bytes"], "read_bytes": r.get("read_bytes", 0),
            "direct": r["direct"],
            "peak": r["measured"]["peak_allocated"], "predicted": r["predicted"]["peak"]}


def run_peer(a, name, job=False):
    extra = ["--prep", "--manifest", a.manifest] if job else []
    p = subprocess.run([sys.executable, os.path.join(HERE, "peers", "peer_load.py"), name, a.ckpt, "--json"] + extra,
                       capture_output=True, text=True, timeout=a.row_timeout)
    if p.returncode != 0:
        return {"error": (p.stderr or p.stdout).strip()[-300:]}
    r = json.loads(p.stdout.strip().splitlines()[-1])
    key = "whole_gbps" if job else "raw_gbps"
    if key not in r:  # peer_load.py exits 0 with prep_error when its prep fails
        return {"error": f"no {key}: {r.get('prep_error', 'not reported')}"}
    return {"gbps": r[key], "backend": r["backend"]}


def run_disk(a, bs, streams):
    p = subprocess.run([sys.executable, os.path.join(HERE, "peers", "disk.py"), a.ckpt, "--streams", str(streams),
                        "--mib", "2048", "--bs-mib", str(bs)], capture_output=True, text=True, timeout=a.row_timeout)
    if p.returncode != 0:
        return {"error": (p.stderr or p.stdout).strip()[-300:]}
    rows = [json.loads(x) for x in p.stdout.strip().splitlines()]
    r = rows[-1] if streams > 1 else rows[0]
    return {"gbps": r["raw_gbps"], "backend": r["backend"]}


def rows_of(a):
    rows = []
    for c in a.config:
        parts = c.split(":")
        default = parts[0] == "default"  # run's own defaults (backend/load_defaults.h)
        flags = parts[1:] if default else parts[2:]
        sizes = [re.fullmatch(r"r(\d+(?:\.\d*)?)", f) for f in flags if f not in ("direct", "job")]
        reads = [float(m.group(1)) for m in sizes if m]
        if not all(sizes) or len(reads) > 1 or len(set(flags)) != len(flags):
            raise SystemExit(f"--config {c}: flags are direct, job and one rR (R MiB), each once")
        if not default and len(parts) < 2:
            raise SystemExit(f"--config {c}: T:C[:FLAG]... or default[:FLAG]...")
        direct, job = "direct" in flags, "job" in flags
        read = reads[0] if reads else None
        name = "loadplan defaults" if default else f"loadplan {parts[0]} threads, {parts[1]} MiB"
        name += (", O_DIRECT" if direct else "") + (f", read {read:g} MiB at a time" if read is not None else "")
        name += ", whole job" if job else ""
        t, ch = (None, None) if default else (int(parts[0]), float(parts[1]))
        rows.append((name, lambda t=t, ch=ch, d=direct, rd=read, j=job: run_loadplan(a, t, ch, d, rd, j)))
    for p in a.peer:
        name, _, flag = p.partition(":")
        if flag not in ("", "job"):
            raise SystemExit(f"--peer {p}: NAME or NAME:job")
        rows.append((name + (", whole job" if flag == "job" else ""),
                     lambda n=name, j=flag == "job": run_peer(a, n, j)))
    for d in a.disk:
        bs, streams = (int(x) for x in d.split(":"))
        rows.append((f"dd bs={bs}M iflag=direct, {streams} stream(s)", lambda b=bs, s=streams: run_disk(a, b, s)))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("storage", choices=["cold", "tmpfs", "page-cache"])
    ap.add_argument("loadplan")
    ap.add_argument("manifest")
    ap.add_argument("ckpt")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--config", action="append", default=[])
    ap.add_argument("--peer", action="append", default=[])
    ap.add_argument("--disk", action="append", default=[])
    ap.add_argument("--json")
    ap.add_argument("--row-timeout", type=int, default=120, help="seconds one row may take (default 120)")
    a = ap.parse_args()
    rows, runs = rows_of(a), []
    for k in range(a.rounds):
        for name, fn in rows:
            if a.storage == "cold":
                evict(a.ckpt)
            t0 = time.perf_counter()
            try:
                r = fn()
            except subprocess.TimeoutExpired:
                r = {"error": f"timed out after {a.row_timeout} s"}
            except (KeyError, ValueError, IndexError) as e:  # a row's output not as expected: the row fails
                r = {"error": f"unreadable output: {e!r}"}
            r.update(row=name, round=k + 1, storage=a.storage, wall_s=time.perf_counter() - t0)
            runs.append(r)
            extra = "".join(f", {x} {r[x]:.3f} s" for x in ("read_s", "slot_wait_s") if x in r)
            if "io_threads" in r:  # what run used (its defaults for a `default` row)
                extra += f" ({r['io_threads']} threads x {r['chunk_bytes'] / 2**20:g} MiB)"
            print(f"{a.storage} round {k + 1}: {name}: " +
                  (f"{r['gbps']:.2f} GB/s{extra}" if "gbps" in r else f"FAILED {r['error']}"), flush=True)
            if a.json:  # after every row: a time box that cuts the sweep keeps what ran
                with open(a.json, "w") as f:
                    json.dump(runs, f, indent=1)
    print(f"\n| {a.storage}: row | best GB/s | worst GB/s | runs |\n| --- | ---: | ---: | ---: |")
    for name, _ in rows:
        g = [r["gbps"] for r in runs if r["row"] == name and "gbps" in r]
        print(f"| {name} | {max(g):.2f} | {min(g):.2f} | {len(g)} |" if g else f"| {name} | failed | | 0 |")


if __name__ == "__main__":
    main()
