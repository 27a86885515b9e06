"""bench/slice_paths.py against a fake loadplan: every row runs the commands it names, --lanes
adds rows and the whole rank on N lanes, and the table reports each row."""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPORT = {"fill_bytes": 1000, "median_run": 0, "measured": {"peak_matches": True},
          "ceilings": {"pinned_h2d_gbps": 50.0},
          "runs": [{"gbps": 40.0, "wall_s": 2.5e-8, "read_s": 0, "copy_s": 0, "slot_wait_s": 0,
                    "chunks": 1, "file_bytes": 1000, "reads": 1, "slices_as_runs": 0,
                    "slices_as_span": 0, "slices_as_map": 1}]}


def test_lanes_add_rows_and_the_whole_rank_on_n_lanes(tmp_path):
    calls = tmp_path / "calls"
    fake = tmp_path / "loadplan"
    fake.write_text(f"#!/bin/sh\necho \"$*\" >> {calls}\necho '{json.dumps(REPORT)}'\n")
    fake.chmod(0o755)
    manifest = tmp_path / "rank-0.json"
    manifest.write_text(json.dumps({"name": "r", "buffers": {
        "q": {"tensor": "q", "slice": {"dim": 0, "start": 0, "length": 2}},
        "o": {"tensor": "o", "slice": {"dim": 1, "start": 0, "length": 2}}}}))
    done = subprocess.run([sys.executable, os.path.join(HERE, "slice_paths.py"), str(fake),
                           str(manifest), str(tmp_path), "--rounds", "1", "--lanes", "8"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    lines = calls.read_text().splitlines()
    on8 = [x for x in lines if "--lanes 8" in x]
    assert len(on8) == 2, lines
    assert any("rank-0.rows.json" in x for x in on8) and any("rank-0.json " in x for x in on8)
    assert not any("--lanes" in x for x in lines if x not in on8)
    assert "| rows lanes 8" in done.stdout and "| rank lanes 8" in done.stdout
