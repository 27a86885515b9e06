#!/usr/bin/env python3
"""The peers table (docs/peers.md): loadplan beside the peer loaders, per storage path.

    python3 bench/peers/table.py row --name NAME --storage S [--scope TEXT] [--run K] LOG
        the result in LOG (the output of one peer_load.py --json, disk.py or `loadplan run
        --format json`), tagged, as JSON lines on stdout; a log without one gives a row with
        "failed": its last line.
    python3 bench/peers/table.py show ROWS.jsonl OUT.json
        prints the table and the ratios (Markdown) and writes OUT.json: every run, the table's
        rows, the ratios.

Names (--name): loadplan-raw (`run --no-derive`), loadplan-job (`run`, derive on),
loadplan-ceilings (`run --no-derive --ceilings`: only its ceilings are used), the peer_load.py
loaders (instanttensor, instanttensor-buffered, fastsafetensors, fastsafetensors-buffered,
safetensors, pinned-h2d) and disk (disk.py). A cell is the best of the runs (the highest
GB/s; the runs column says how many); every run's figures are in OUT.json.
"""
import argparse
import json
import sys

STORAGES = ["page cache", "tmpfs", "cold"]
PEERS = [  # (name, label: {v} is the version the runs report, else the one expected)
    ("instanttensor", "InstantTensor {v}, `safe_open(files, device=0)`", "0.2.2"),
    ("instanttensor-buffered", "InstantTensor {v}, `backend=BackendPolicy.BUFFERED`", "0.2.2"),
    ("fastsafetensors", "fastsafetensors {v}, `nogds=True`", "0.5.0"),
    ("fastsafetensors-buffered", "fastsafetensors {v}, `nogds=True`, `FASTSAFETENSORS_ODIRECT=0`", "0.5.0"),
    ("safetensors", "safetensors {v}, `load_file(device=\"cuda\")`", "0.8.0"),
]


def parse(text):
    """The JSON objects of a log: every line that is one, else the span from the first { to the
    last } (loadplan's pretty-printed report)."""
    found = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("{") and line.endswith("}"):
            try:
                found.append(json.loads(line))
            except ValueError:
                pass
    if found:
        return found
    try:
        return [json.loads(text[text.index("{"):text.rindex("}") + 1])]
    except ValueError:
        return []


def row(a):
    try:
        text = open(a.log, errors="replace").read()
    except OSError as error:
        text = f"cannot read the log: {error}"
    tags = {"name": a.name, "storage": a.storage, "run": a.run}
    if a.scope:
        tags["scope"] = a.scope
    objs = parse(text)
    if not objs:
        lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
        objs = [{"failed": lines[-1] if lines else "no output"}]
    for o in objs:
        o.update(tags)
        print(json.dumps(o))


def normalize(r):
    """One run as {name, storage, raw_gbps | whole_gbps, load_s, bytes, peak, kept, backend, ...}."""
    if "failed" in r:
        return r
    if "fill_bytes" in r:  # a loadplan run report
        m = r["runs"][r["median_run"]]
        out = {k: r[k] for k in ("name", "storage", "run") if k in r}
        how = (f"{r['lanes']} lanes, {r['io_threads']} I/O threads, {r['chunk_bytes'] / 2**20:g} MiB chunks, "
               f"placement {r['placement']}; derive {'on' if r['derive'] else 'off'}")
        out.update(scope=r.get("scope"), bytes=r["fill_bytes"], load_s=m["wall_s"], backend=how,
                   peak=r["measured"]["peak_allocated"], kept=r["predicted"]["pool"],
                   predicted_peak=r["predicted"]["peak"])
        out["whole_gbps" if r["name"].endswith("-job") else "raw_gbps"] = r["gbps"]
        if "ceilings" in r:
            out["ceilings"] = r["ceilings"]
        return out
    out = dict(r)
    out["peak"] = r.get("peak_device")
    out["kept"] = r.get("kept_bytes")
    return out


def best(rows, key):
    vals = [r[key] for r in rows if isinstance(r.get(key), (int, float))]
    return max(vals) if vals else None


def fmt(x, digits=2):
    return "—" if x is None else f"{x:.{digits}f}"


def table_rows(runs):
    out = []
    for storage in STORAGES:
        here = [r for r in runs if r["storage"] == storage]
        if not here:
            continue
        scope = next((r["scope"] for r in here if r.get("scope")), None)
        where = f"{storage} ({scope})" if scope else storage

        def add(label, raw_group, whole_group, backend=None):
            """One table row from the runs that give its raw figure and those that give its whole job
            (the same runs for a peer run with --prep; loadplan's two modes are separate runs)."""
            ok_raw = [r for r in raw_group if "failed" not in r]
            ok_whole = [r for r in whole_group if "failed" not in r]
            ok = {id(r): r for r in ok_raw + ok_whole}.values()
            job = max(ok_whole, key=lambda r: r.get("whole_gbps") or 0, default=None)
            peak, kept = (job.get("peak"), job.get("kept")) if job else (None, None)
            backends = sorted({r["backend"] for r in ok if r.get("backend")})
            out.append({
                "loader": label, "storage": where, "storage_key": storage,
                "raw_gbps": best(ok_raw, "raw_gbps"), "whole_gbps": best(ok_whole, "whole_gbps"),
                "backend": backend or "; ".join(backends), "runs": len(ok),
                "peak": peak, "peak_over_kept": peak / kept if peak and kept else None,
                "bytes": best(list(ok), "bytes"),
                "failed": [r["failed"] for r in {id(r): r for r in raw_group + whole_group}.values() if "failed" in r]
                + ["prep: " + r["prep_error"] for r in ok if r.get("prep_error")]})

        raw = [r for r in here if r["name"] == "loadplan-raw"]
        job = [r for r in here if r["name"] == "loadplan-job"]
        if raw or job:
            lp = next((r for r in raw + job if r.get("backend")), {})
            add("loadplan `run --no-derive` / `run`", raw, job, lp.get("backend", "").rsplit(";", 1)[0])
        raw = [r for r in here if r["name"] == "loadplan-direct"]
        job = [r for r in here if r["name"] == "loadplan-direct-job"]
        if raw or job:  # O_DIRECT reads (`run --direct`), the cold path's
            lp = next((r for r in raw + job if r.get("backend")), {})
            add("loadplan `run --direct --no-derive` / `run --direct`", raw, job,
                lp.get("backend", "").rsplit(";", 1)[0] + ", O_DIRECT")
        for name, label, expected in PEERS:
            group = [r for r in here if r["name"] == name]
            if group:
                v = next((r["version"] for r in group if r.get("version")), expected)
                add(label.format(v=v), group, group)
        for r in here:
            if r["name"] == "loadplan-ceilings" and "failed" in r:
                out.append({"loader": "pinned host → device (`loadplan run --ceilings`)", "storage": where,
                            "storage_key": storage, "raw_gbps": None, "whole_gbps": None, "backend": "", "runs": 0,
                            "peak": None, "peak_over_kept": None, "bytes": None, "failed": [r["failed"]]})
            if r["name"] == "loadplan-ceilings" and isinstance(r.get("ceilings"), dict):
                c = r["ceilings"]
                for key, label, how in (("pinned_h2d_gbps", "pinned host → device (`loadplan run --ceilings`)",
                                         "1 GiB, 4 streams"),
                                        ("host_read_gbps", "host read (`loadplan run --ceilings`)",
                                         "the checkpoint's reads alone, loadplan's I/O threads"),
                                        ("pinned_h2d_beside_read_gbps", "pinned host → device beside the host read "
                                         "(`loadplan run --ceilings`)", "256 MiB rounds, 4 streams, during the reads"),
                                        ("host_read_beside_h2d_gbps", "host read beside the copies "
                                         "(`loadplan run --ceilings`)", "the same reads, during the copies"),
                                        ("host_copy_gbps", "host memory copy (`loadplan run --ceilings`)",
                                         "memcpy of 1 GiB on loadplan's I/O threads")):
                    if key not in c and key not in ("pinned_h2d_gbps", "host_read_gbps"):
                        continue  # a report from before the probe existed
                    v = c.get(key)
                    out.append({"loader": label, "storage": where, "storage_key": storage,
                                "raw_gbps": v if isinstance(v, (int, float)) else None, "whole_gbps": None,
                                "backend": how, "runs": 1, "peak": None, "peak_over_kept": None, "bytes": None,
                                "failed": [] if isinstance(v, (int, float)) else [str(v)]})
        h2d = [r for r in here if r["name"] == "pinned-h2d"]
        if h2d:
            ok = [r for r in h2d if "failed" not in r]
            b = max(ok, key=lambda r: r["raw_gbps"], default=None)
            out.append({"loader": "pinned host → device (torch `.to(\"cuda\", non_blocking=True)`)", "storage": where,
                        "storage_key": storage, "raw_gbps": b["raw_gbps"] if b else None, "whole_gbps": None,
                        "backend": f"1 GiB: {b['gbps_1_stream']:.2f} (1 stream), {b['gbps_4_streams']:.2f} (4 streams)"
                        if b else "", "runs": len(ok), "peak": None, "peak_over_kept": None, "bytes": None,
                        "failed": [r["failed"] for r in h2d if "failed" in r]})
        for r in here:
            if r["name"] == "disk":
                out.append({"loader": "disk, direct sequential read", "storage": where, "storage_key": storage,
                            "raw_gbps": r.get("raw_gbps"), "whole_gbps": None, "backend": r.get("backend", ""),
                            "runs": 1, "peak": None, "peak_over_kept": None, "bytes": r.get("bytes"),
                            "failed": [r["failed"]] if "failed" in r else []})
    return out


def ratios(rows):
    lines, data = [], []

    def h2d_ceiling():
        for r in rows:
            if r["loader"].startswith("pinned host → device (`loadplan") and r["raw_gbps"]:
                return r["raw_gbps"], "`loadplan run --ceilings`"
        for r in rows:
            if r["loader"].startswith("pinned host → device") and r["raw_gbps"]:
                return r["raw_gbps"], "torch"
        return None, None

    h2d, h2d_from = h2d_ceiling()
    for storage in STORAGES:
        here = [r for r in rows if r["storage_key"] == storage]
        lp = next((r for r in here if r["loader"].startswith("loadplan")), None)
        if not lp:
            continue
        where = lp["storage"]
        for key, what in (("raw_gbps", "raw"), ("whole_gbps", "whole job")):
            v = lp[key]
            if v is None:
                continue
            if h2d:
                lines.append(f"- {where}, loadplan {what}: {v:.2f} GB/s = {v / h2d:.3f} of pinned H2D "
                             f"({h2d:.2f} GB/s, {h2d_from})")
                data.append({"storage": where, "what": what, "of": "pinned H2D", "ratio": v / h2d})
            peers = [r for r in here if r["loader"].startswith(("InstantTensor", "fastsafetensors", "safetensors"))
                     and r[key]]
            if peers:
                top = max(peers, key=lambda r: r[key])
                lines.append(f"- {where}, loadplan {what} ÷ fastest peer ({top['loader']}, {top[key]:.2f} GB/s): "
                             f"{v / top[key]:.2f}x")
                data.append({"storage": where, "what": what, "of": top["loader"], "ratio": v / top[key]})
            for d in (r for r in here if r["loader"].startswith("disk") and r["raw_gbps"]):
                lines.append(f"- {where}, loadplan {what} ÷ disk ({d['backend']}, {d['raw_gbps']:.2f} GB/s): "
                             f"{v / d['raw_gbps']:.3f}")
                data.append({"storage": where, "what": what, "of": "disk: " + d["backend"], "ratio": v / d["raw_gbps"]})
    return lines, data


def show(a):
    raw = [json.loads(ln) for ln in open(a.rows) if ln.strip()]
    runs = [normalize(r) for r in raw]
    rows = table_rows(runs)
    print("| loader | storage | raw load GB/s | whole job (load + MXFP4 prep) GB/s | backend | runs "
          "| peak GiB (÷ kept) |")
    print("| --- | --- | ---: | ---: | --- | ---: | ---: |")
    for r in rows:
        backend = r["backend"]
        if r["failed"]:
            backend = (backend + "; " if backend else "") + "FAILED: " + " / ".join(sorted(set(r["failed"])))[:300]
        peak = "" if r["peak"] is None else f"{r['peak'] / 2**30:.2f}" + (
            f" ({r['peak_over_kept']:.3f})" if r["peak_over_kept"] else "")
        cells = [r["loader"], r["storage"], fmt(r["raw_gbps"]), fmt(r["whole_gbps"]), backend.replace("|", "/"),
                 str(r["runs"]), peak]
        print("| " + " | ".join(cells) + " |")
    print()
    print("GB/s = the checkpoint bytes loaded ÷ wall time, CUDA synchronized; each loader a fresh process per run; "
          "a cell is the best of its runs (every run in peers.json). Whole job = load, then the MXFP4 expert prep "
          "(loadplan: derive inside the load; peers: torch ops on the GPU afterwards, one layer at a time). "
          "Peak: device memory at the job's peak (peers: torch's peak, plus memory the loader took outside torch "
          "during the load), ÷ the bytes the job keeps.")
    sizes = {r["storage"]: r["bytes"] for r in rows if r["bytes"] and r["loader"].startswith("loadplan")}
    for r in rows:
        s = sizes.get(r["storage"])
        if s and r["bytes"] and r["loader"] and not r["loader"].startswith(("disk", "pinned", "host")) \
                and abs(r["bytes"] - s) > 1e-3 * s:
            print(f"NOTE: {r['loader']} loaded {r['bytes'] / 1e9:.3f} GB on {r['storage']}, loadplan {s / 1e9:.3f} GB")
    lines, data = ratios(rows)
    if lines:
        print()
        print("Ratios:")
        print("\n".join(lines))
    with open(a.out, "w") as f:
        json.dump({"runs": runs, "table": rows, "ratios": data}, f, indent=1)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("row")
    r.add_argument("--name", required=True)
    r.add_argument("--storage", required=True, choices=STORAGES)
    r.add_argument("--scope")
    r.add_argument("--run", type=int, default=1)
    r.add_argument("log")
    s = sub.add_parser("show")
    s.add_argument("rows")
    s.add_argument("out")
    a = ap.parse_args()
    row(a) if a.cmd == "row" else show(a)
    return 0


if __name__ == "__main__":
    sys.exit(main())
