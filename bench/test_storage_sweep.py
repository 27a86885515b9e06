"""The storage sweep's row syntax (bench/storage_sweep.py): configs, flags and peers to commands."""
import os
import subprocess
import sys
from types import SimpleNamespace

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import storage_sweep  # noqa: E402


def args(config=(), peer=(), disk=()):
    return SimpleNamespace(config=list(config), peer=list(peer), disk=list(disk), loadplan="LP", manifest="m.json",
                           ckpt="ck", row_timeout=5)


def test_rows_name_every_flag():
    rows = storage_sweep.rows_of(args(["default", "default:job", "16:4:r2:job", "12:4:direct"],
                                      ["instanttensor", "instanttensor:job"], ["8:1"]))
    assert [r[0] for r in rows] == [
        "loadplan defaults", "loadplan defaults, whole job",
        "loadplan 16 threads, 4 MiB, read 2 MiB at a time, whole job", "loadplan 12 threads, 4 MiB, O_DIRECT",
        "instanttensor", "instanttensor, whole job", "dd bs=8M iflag=direct, 1 stream(s)"]


def test_commands_carry_the_flags(monkeypatch):
    seen = []

    def fake_run(cmd, **_):
        seen.append(cmd)
        return subprocess.CompletedProcess(cmd, 1, "", "no")

    monkeypatch.setattr(storage_sweep.subprocess, "run", fake_run)
    for _, fn in storage_sweep.rows_of(args(["default", "16:4:r2:job", "12:4:direct"], ["instanttensor:job"])):
        assert "error" in fn()
    raw, job, direct, peer = seen
    assert "--no-derive" in raw and "--io-threads" not in raw
    assert "--no-derive" not in job and job[job.index("--read-mib") + 1] == "2.0"
    assert job[job.index("--io-threads") + 1] == "16" and job[job.index("--chunk-mib") + 1] == "4.0"
    assert "--direct" in direct and "--no-derive" in direct
    assert peer[-3:] == ["--prep", "--manifest", "m.json"]


def test_unknown_or_repeated_flags_are_refused():
    import pytest
    for bad in (["12:4:raw"], ["12:4:r"], ["12:4:drect"], ["12:4:r2:r4"], ["default:job:job"], ["12"]):
        with pytest.raises(SystemExit):
            storage_sweep.rows_of(args(bad))
    with pytest.raises(SystemExit):
        storage_sweep.rows_of(args(peer=["instanttensor:jbo"]))


def test_a_peer_without_its_prep_figure_is_a_failed_row(monkeypatch):
    out = '{"loader": "instanttensor", "backend": "MMAP", "raw_gbps": 40.0, "prep_error": "boom"}\n'
    monkeypatch.setattr(storage_sweep.subprocess, "run",
                        lambda cmd, **_: subprocess.CompletedProcess(cmd, 0, out, ""))
    (_, raw), (_, job) = storage_sweep.rows_of(args(peer=["instanttensor", "instanttensor:job"]))
    assert raw() == {"gbps": 40.0, "backend": "MMAP"}
    assert "boom" in job()["error"]
