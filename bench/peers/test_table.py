#!/usr/bin/env python3
"""bench/peers/table.py on hand-written logs: loadplan reports (pretty-printed, as `loadplan run
--format json` writes them), peer_load.py and disk.py lines, a failed run.

    python3 bench/peers/test_table.py    # or: pytest bench/peers
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
GB = 16_301_489_792


def loadplan_report(wall, derive, ceilings=None):
    r = {"manifest": "m8.json", "checkpoint": "ckpt", "mode": "staged", "derive": derive, "lanes": 4, "prefetch": 1,
         "placement": "first-fit", "io_threads": 12, "chunk_bytes": 4 << 20, "checkpoint_bytes": GB,
         "fill_bytes": GB, "derived_bytes": 13_000_000_000,
         "predicted": {"peak": 17_400_000_000, "pool": 16_300_000_000, "arena": 1_100_000_000,
                       "lower_bound": 1_063_157_760, "granularity": 2 << 20, "naive_peak": 30_000_000_000},
         "device": {"free_before": 140e9, "total": 150e9, "reserve": 527 << 20},
         "measured": {"peak_allocated": 17_400_000_000, "peak_used_delta": 17_400_000_000,
                      "baseline_free": 140e9, "total": 150e9, "peak_matches": True},
         "median_run": 0,
         "runs": [{"wall_s": wall, "read_s": wall, "copy_s": wall, "slot_wait_s": 0, "derive_s": 0.01,
                   "gbps": GB / wall / 1e9, "peak_allocated": 1, "peak_used_delta": 1, "chunks": 3900, "launches": 48}],
         "gbps": GB / wall / 1e9}
    if ceilings:
        r["ceilings"] = ceilings
    return "loading [####] 100%\n" + json.dumps(r, indent=2) + "\n"


def peer(loader, backend, load_s, prep_s, peak=20 << 30):
    return json.dumps({"loader": loader, "backend": backend, "bytes": GB, "load_s": load_s, "prep_s": prep_s,
                       "whole_s": load_s + prep_s, "raw_gbps": GB / load_s / 1e9,
                       "whole_gbps": GB / (load_s + prep_s) / 1e9, "peak_allocated": peak, "outside_torch_bytes": 0,
                       "peak_device": peak, "kept_bytes": 16_300_000_000}) + "\n"


def test_table():
    with tempfile.TemporaryDirectory() as d:
        logs = {
            ("loadplan-ceilings", "page cache", 1): loadplan_report(0.5, False, {"pinned_h2d_gbps": 54.0,
                                                                               "host_read_gbps": 60.0,
                                                                               "pinned_h2d_beside_read_gbps": 47.5,
                                                                               "host_read_beside_h2d_gbps": 52.25,
                                                                               "host_copy_gbps": 80.0}),
            ("loadplan-raw", "page cache", 1): loadplan_report(0.34, False),
            ("loadplan-raw", "page cache", 2): loadplan_report(0.33, False),
            ("loadplan-job", "page cache", 1): loadplan_report(0.36, True),
            ("instanttensor", "page cache", 1): peer("instanttensor", "URING (policy default)", 12.0, 0.1),
            ("instanttensor-buffered", "page cache", 1): peer("instanttensor-buffered", "URING_BUFFERED", 0.42, 0.1),
            ("instanttensor-buffered", "page cache", 2): peer("instanttensor-buffered", "URING_BUFFERED", 0.40, 0.1),
            ("safetensors", "page cache", 1): peer("safetensors", "load_file", 4.0, 0.1),
            ("fastsafetensors", "page cache", 1): "Traceback ...\nModuleNotFoundError: No module named 'x'\n",
            ("pinned-h2d", "page cache", 1): json.dumps({"loader": "pinned-h2d", "backend": "torch", "bytes": 1 << 30,
                                                         "gbps_1_stream": 53.1, "gbps_4_streams": 55.2,
                                                         "raw_gbps": 55.2}) + "\n",
            ("loadplan-raw", "cold", 1): loadplan_report(11.0, False),
            ("loadplan-job", "cold", 1): loadplan_report(11.2, True),
            ("safetensors", "cold", 1): peer("safetensors", "load_file", 13.0, 0.1),
            ("disk", "cold", 1): json.dumps({"loader": "disk", "backend": "dd 1 stream", "raw_gbps": 1.0,
                                             "bytes": 2 << 30}) + "\n" + json.dumps(
                {"loader": "disk", "backend": "dd 4 streams", "raw_gbps": 1.6, "bytes": 8 << 30}) + "\n",
        }
        rows = os.path.join(d, "rows.jsonl")
        with open(rows, "w") as out:
            for k, ((name, storage, run), text) in enumerate(logs.items()):
                log = os.path.join(d, f"{k}.log")
                open(log, "w").write(text)
                scope = ["--scope", "2 biggest shards"] if storage == "cold" else []
                subprocess.run([sys.executable, os.path.join(HERE, "table.py"), "row", "--name", name, "--storage",
                                storage, "--run", str(run), *scope, log], stdout=out, check=True)
        p = subprocess.run([sys.executable, os.path.join(HERE, "table.py"), "show", rows, os.path.join(d, "o.json")],
                           capture_output=True, text=True, check=True)
        print(p.stdout)
        t = p.stdout
        o = json.load(open(os.path.join(d, "o.json")))
        lp = [r for r in o["table"] if r["loader"].startswith("loadplan") and r["storage_key"] == "page cache"][0]
        assert abs(lp["raw_gbps"] - GB / 0.33 / 1e9) < 1e-9 and lp["runs"] == 3, lp
        assert abs(lp["whole_gbps"] - GB / 0.36 / 1e9) < 1e-9, lp
        assert "FAILED: ModuleNotFoundError: No module named 'x'" in t
        assert "cold (2 biggest shards)" in t
        assert "of pinned H2D (54.00 GB/s, `loadplan run --ceilings`)" in t
        assert "| pinned host → device beside the host read (`loadplan run --ceilings`) | page cache | 47.50 |" in t, t
        assert "| host memory copy (`loadplan run --ceilings`) | page cache | 80.00 |" in t, t
        assert "÷ fastest peer (InstantTensor 0.2.2, `backend=BackendPolicy.BUFFERED`, 40.75 GB/s): 1.21x" in t, t
        assert "÷ disk (dd 4 streams, 1.60 GB/s)" in t
        assert len(o["runs"]) == 15  # 14 logs, disk.py gives two lines


if __name__ == "__main__":
    test_table()
    print("1 passed, 0 failed")
