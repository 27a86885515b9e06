#!/usr/bin/env python3
"""A tensor-parallel rank's load by kind of slice and read path, side by side (issue 30).

    python3 bench/slice_paths.py LOADPLAN RANK_MANIFEST CKPT_DIR [--rounds R] [--json OUT]

From RANK_MANIFEST (one rank of `loadplan import --tensor-parallel`) it writes two manifests
beside it: `rows` (the weights read whole or sliced along dim 0: one run each) and `cols` (the
weights sliced along a dim > 0: one run per row). Each round then runs, every row a fresh
`loadplan run --no-derive` process, page cache warm: pinned H2D (`run --ceilings` once, first),
rows, cols with `--slice-read runs`, `span`, `map` and `auto`, and the whole rank with `auto` and
`map`. Prints one
line per run and a table: best and worst GB/s, the best / pinned H2D, the bytes read from the
files / the bytes filled (a span reads the gaps between runs), which path auto took.
"""
import argparse
import json
import os
import subprocess
import sys


def subset(manifest_path, keep, suffix):
    m = json.load(open(manifest_path))
    m["buffers"] = {k: b for k, b in m["buffers"].items()
                    if "tensor" not in b and "tensors" not in b or keep(b)}
    m["name"] = f"{m.get('name', 'rank')}-{suffix}"
    out = manifest_path.replace(".json", f".{suffix}.json")
    json.dump(m, open(out, "w"))
    return out


def run(a, manifest, mode, ceilings=False):
    cmd = [a.loadplan, "run", manifest, "--checkpoint", a.ckpt, "--no-derive", "--repeat", "1",
           "--slice-read", mode, "--format", "json"]
    if ceilings:
        cmd.append("--ceilings")
    if a.machine:
        cmd += ["--machine", a.machine]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        return {"error": (p.stderr or p.stdout).strip()[-300:]}
    r = json.loads(p.stdout[p.stdout.index("{"):])
    m = r["runs"][r["median_run"]]
    return {"gbps": m["gbps"], "wall_s": m["wall_s"], "fill_bytes": r["fill_bytes"],
            "file_bytes": m["file_bytes"], "reads": m["reads"],
            "as_runs": m["slices_as_runs"], "as_span": m["slices_as_span"],
            "as_map": m.get("slices_as_map", 0),
            "peak_matches": r["measured"]["peak_matches"],
            "pinned_h2d_gbps": r.get("ceilings", {}).get("pinned_h2d_gbps")}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("loadplan")
    ap.add_argument("manifest")
    ap.add_argument("ckpt")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--json")
    ap.add_argument("--machine", help="a profile for every run (its I/O pair, auto's costs)")
    a = ap.parse_args()
    rows = subset(a.manifest, lambda b: b.get("slice", {}).get("dim", 0) == 0, "rows")
    cols = subset(a.manifest, lambda b: b.get("slice", {}).get("dim", 0) > 0, "cols")
    pinned = run(a, rows, "auto", ceilings=True).get("pinned_h2d_gbps")
    print(f"pinned H2D {pinned} GB/s", flush=True)
    plan = [("rows", rows, "auto"), ("cols runs", cols, "runs"), ("cols span", cols, "span"),
            ("cols map", cols, "map"), ("cols auto", cols, "auto"), ("rank auto", a.manifest, "auto"),
            ("rank map", a.manifest, "map")]
    results = {name: [] for name, _, _ in plan}
    for k in range(a.rounds):
        for name, manifest, mode in plan:
            r = run(a, manifest, mode)
            results[name].append(r)
            print(f"round {k + 1} {name}: {json.dumps(r)}", flush=True)
    print(f"| {'row':10} | best GB/s | worst GB/s | best / pinned | file / filled | GB filled "
          f"| auto took |")
    print("|" + "---|" * 7)
    for name, runs in results.items():
        ok = [r for r in runs if "gbps" in r]
        if not ok:
            print(f"| {name:10} | FAILED: {runs[0].get('error', '')[:80]} |")
            continue
        best, worst = max(r["gbps"] for r in ok), min(r["gbps"] for r in ok)
        r = ok[0]
        took = f"{r['as_runs']} runs, {r['as_span']} span, {r['as_map']} map"
        ratio = f"{best / pinned:.3f}" if pinned else "-"
        print(f"| {name:10} | {best:.2f} | {worst:.2f} | {ratio} | "
              f"{r['file_bytes'] / r['fill_bytes']:.3f} | {r['fill_bytes'] / 1e9:.3f} | {took} |")
    if a.json:
        json.dump({"pinned_h2d_gbps": pinned, "rows": results}, open(a.json, "w"), indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
