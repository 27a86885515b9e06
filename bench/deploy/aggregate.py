#!/usr/bin/env python3
"""A deployment's load across its ranks, from each rank's `loadplan run DEPLOY --format json`.

    python3 bench/deploy/aggregate.py RANK_REPORT... [--ceilings CEILINGS.json] [--json OUT]

Each RANK_REPORT is one rank's report of the same launch (torchrun or mpirun, one process per
GPU; `scripts/gpu/gpu-check` PARTS=multi writes them as rank-K.json). The aggregate rate is the
bytes every rank filled ÷ the window from the first rank's load start (`runs[].started_unix_s`)
to the last rank's end (start + `wall_s`): the ranks' loads are not assumed to line up. Each
rank's peak is checked against its stage's prediction. Each report must hold one run (--repeat
1), so every rank's load is the same launch's. CEILINGS.json is bench/deploy/ceilings.py's:
every GPU's pinned host -> device rate measured with all of them copying at once, summed, and
the host's memcpy rate; the target is aggregate ≥ 0.8 of the smaller. Prints a markdown table
and the ratios.
"""
import argparse
import json
import os
import sys


def report(path):
    """The JSON object of a loadplan report (the last {...} of the file)."""
    if not os.path.isfile(path):
        raise SystemExit(f"{path}: no such report (did the launch write one per rank?)")
    t = open(path).read()
    if "{" not in t:
        raise SystemExit(f"{path}: no JSON report")
    return json.loads(t[t.index("{"):t.rindex("}") + 1])


def rank_row(path, r):
    if len(r["runs"]) != 1:
        raise SystemExit(f"{path}: {len(r['runs'])} runs: launch with --repeat 1, so all ranks' loads line up")
    m = r["runs"][0]
    s = r.get("stage")
    if not s:
        raise SystemExit(f"{path}: not a deployment rank's report (no 'stage')")
    if not m.get("started_unix_s"):
        raise SystemExit(f"{path}: the run has no started_unix_s (a loadplan from before it)")
    return {"rank": s["rank"], "stage": s["stage"], "stages": s["stages"], "device": s["device"],
            "world_size": s["world_size"], "bytes": r["fill_bytes"], "start": m["started_unix_s"],
            "end": m["started_unix_s"] + m["wall_s"], "gbps": r["gbps"],
            "peak": r["measured"]["peak_allocated"], "predicted": r["predicted"]["peak"]}




def aggregate(rows):
    ranks = sorted(r["rank"] for r in rows)
    world = rows[0]["world_size"]
    if ranks != list(range(world)):
        raise SystemExit(f"reports of ranks {ranks}, but the world size is {world}: one report per rank")
    window = max(r["end"] for r in rows) - min(r["start"] for r in rows)
    total = sum(r["bytes"] for r in rows)
    return {"ranks": world, "bytes": total, "window_s": window, "gbps": total / window / 1e9,
            "skew_s": max(r["start"] for r in rows) - min(r["start"] for r in rows),
            "peaks_match": all(r["peak"] == r["predicted"] for r in rows)}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("reports", nargs="+")
    ap.add_argument("--ceilings")
    ap.add_argument("--json")
    a = ap.parse_args()
    rows = sorted((rank_row(p, report(p)) for p in a.reports), key=lambda r: r["rank"])
    agg = aggregate(rows)
    print("| rank | stage | GPU | GB filled | GB/s | start +s | peak GiB | predicted GiB |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    t0 = min(r["start"] for r in rows)
    for r in rows:
        print(f"| {r['rank']} | {r['stage']} of {r['stages']} | {r['device']} | {r['bytes'] / 1e9:.2f} | "
              f"{r['gbps']:.2f} | {r['start'] - t0:.3f} | {r['peak'] / 2**30:.3f} | {r['predicted'] / 2**30:.3f}"
              f"{'' if r['peak'] == r['predicted'] else ' (differs)'} |")
    print(f"\naggregate: {agg['bytes'] / 1e9:.2f} GB on {agg['ranks']} GPUs in {agg['window_s']:.3f} s = "
          f"{agg['gbps']:.2f} GB/s (load starts spread over {agg['skew_s']:.3f} s); every peak = its "
          f"prediction: {'yes' if agg['peaks_match'] else 'NO'}")
    if a.ceilings:
        c = json.load(open(a.ceilings))
        h2d, copy = c["sum_pinned_h2d_gbps"], c["host_copy_gbps"]
        bound = min(h2d, copy)
        agg.update(sum_pinned_h2d_gbps=h2d, host_copy_gbps=copy, bound_gbps=bound, of_bound=agg["gbps"] / bound)
        print(f"ceilings: pinned H2D of {len(c['gpus'])} GPUs at once {h2d:.2f} GB/s; host memcpy {copy:.2f} GB/s; "
              f"aggregate = {agg['of_bound']:.3f} of the smaller ({bound:.2f}; target 0.8)")
    agg["ranks_rows"] = rows
    if a.json:
        with open(a.json, "w") as f:
            json.dump(agg, f, indent=1)
    return 0 if agg["peaks_match"] else 1


if __name__ == "__main__":
    sys.exit(main())
