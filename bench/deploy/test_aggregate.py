#!/usr/bin/env python3
"""bench/deploy/aggregate.py on hand-written rank reports: the window runs from the first start
to the last end, a peak off its prediction fails, a missing rank is refused."""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
GB = 10**9


def rank_report(rank, world, start, wall, peak, predicted, ceilings=None):
    r = {"fill_bytes": 10 * GB, "gbps": 10 * GB / wall / 1e9, "median_run": 0,
         "runs": [{"wall_s": wall, "started_unix_s": start}],
         "measured": {"peak_allocated": peak}, "predicted": {"peak": predicted},
         "stage": {"deployment": "d", "stage": rank, "stages": world, "device": rank, "rank": rank,
                   "local_rank": rank, "world_size": world, "launcher": "torchrun"}}
    if ceilings:
        r["ceilings"] = ceilings
    return r


def run(d, reports, extra=()):
    paths = []
    for i, r in enumerate(reports):
        p = os.path.join(d, f"rank-{i}.json")
        with open(p, "w") as f:
            f.write("loadplan run: some text first\n" + json.dumps(r))
        paths.append(p)
    return subprocess.run([sys.executable, os.path.join(HERE, "aggregate.py"), *paths, *extra],
                          capture_output=True, text=True)


def test_aggregate():
    with tempfile.TemporaryDirectory() as d:
        # Rank 1 starts 0.5 s after rank 0 and ends at 1000.5 + 0.5: window 1.0 s, 20 GB.
        ok = [rank_report(0, 2, 1000.0, 0.5, 7, 7), rank_report(1, 2, 1000.5, 0.5, 9, 9)]
        c = os.path.join(d, "ceilings.json")  # bench/deploy/ceilings.py's output
        json.dump({"gpus": [{"device": 0, "gbps": 50.0}, {"device": 1, "gbps": 54.0}], "sum_pinned_h2d_gbps": 104.0,
                   "overlap_s": 1.9, "host_copy_gbps": 30.0}, open(c, "w"))
        p = run(d, ok, ["--ceilings", c, "--json", os.path.join(d, "o.json")])
        assert p.returncode == 0, p.stdout + p.stderr
        o = json.load(open(os.path.join(d, "o.json")))
        assert abs(o["window_s"] - 1.0) < 1e-9 and abs(o["gbps"] - 20.0) < 1e-9, o
        assert abs(o["skew_s"] - 0.5) < 1e-9 and o["peaks_match"], o
        assert o["bound_gbps"] == 30.0 and abs(o["of_bound"] - 20.0 / 30.0) < 1e-9, o  # memcpy 30 < H2D 104
        assert "aggregate = 0.667 of the smaller (30.00; target 0.8)" in p.stdout, p.stdout
        # A peak off its prediction: flagged and exit 1.
        bad = [rank_report(0, 2, 1000.0, 0.5, 7, 7), rank_report(1, 2, 1000.5, 0.5, 10, 9)]
        p = run(d, bad)
        assert p.returncode == 1 and "(differs)" in p.stdout and "prediction: NO" in p.stdout, p.stdout
        # One report of a 2-rank world: refused, naming the ranks.
        p = run(d, ok[:1])
        assert p.returncode != 0 and "reports of ranks [0], but the world size is 2" in p.stderr, p.stderr
        # Two runs in a rank's report (--repeat 2): refused, the ranks' loads would not line up.
        two = rank_report(0, 1, 1000.0, 0.5, 7, 7)
        two["runs"].append(dict(two["runs"][0]))
        p = run(d, [two])
        assert p.returncode != 0 and "2 runs: launch with --repeat 1" in p.stderr, p.stderr
        # A report that is not there: a clear message, no traceback.
        p = subprocess.run([sys.executable, os.path.join(HERE, "aggregate.py"), os.path.join(d, "rank-*.json")],
                           capture_output=True, text=True)
        assert p.returncode != 0 and "no such report" in p.stderr and "Traceback" not in p.stderr, p.stderr


if __name__ == "__main__":
    test_aggregate()
    print("1 passed, 0 failed")
