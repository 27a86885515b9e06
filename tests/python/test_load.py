"""loadplan.load without a GPU: a clean DeviceError, never a crash; bad input first."""

import subprocess

import pytest

import loadplan
from conftest import TINY



def _has_gpu():
    try:
        return subprocess.run(["nvidia-smi", "-L"], capture_output=True).returncode == 0
    except OSError:
        return False


@pytest.mark.skipif(_has_gpu(), reason="this test is for machines without a GPU")
def test_no_gpu_is_a_device_error(checkpoint):
    calls = []
    with pytest.raises(loadplan.DeviceError) as e:
        loadplan.load(TINY, checkpoint, device=0, progress=lambda d, t: calls.append((d, t)))
    assert isinstance(e.value, RuntimeError) and str(e.value)
    assert calls == []  # no byte moved: no progress report


def test_missing_checkpoint_raises(tmp_path):
    with pytest.raises((loadplan.CheckpointError, loadplan.DeviceError)):
        loadplan.load(TINY, tmp_path / "absent")


def test_manifest_errors_come_before_the_device():
    with pytest.raises(loadplan.ManifestError):
        loadplan.load("{ not json", "/nonexistent")


def test_a_loads_manifest_error_carries_its_own_verifications_diagnostics():
    """The load verifies once: its ManifestError holds that pass's diagnostics, the same
    values check() gives (built from the verifier's structs, no JSON text between)."""
    bad = {"schema": "loadplan-manifest", "name": "x", "buffers": {"a": {"kind": "weight"}}}
    with pytest.raises(loadplan.ManifestError) as e:
        loadplan.load(bad, "/nonexistent")
    assert list(e.value.diagnostics) == loadplan.check(bad)
    assert e.value.diagnostics[0].file == "<dict>" and e.value.diagnostics[0].code.startswith("S")


def test_errors_map_every_kind():
    from loadplan._errors import from_status
    assert isinstance(from_status("invalid input", "m", "load"), loadplan.CheckpointError)
    assert isinstance(from_status("invalid input", "m", "plan"), loadplan.OptionError)
    assert isinstance(from_status("I/O error", "m", "load"), OSError)
    assert isinstance(from_status("device error", "m", "load"), loadplan.DeviceError)
    assert isinstance(from_status("cancelled", "m", "load"), loadplan.CancelledError)
    assert isinstance(from_status("internal error", "m", "load"), loadplan.InternalError)
    assert isinstance(from_status("option", "m", "load"), loadplan.OptionError)
    oom = from_status("out of memory", "resident pool of 1.50 GiB failed", "load",
                      1610612736, 450971566)  # the C++ error's typed bytes, not its words
    assert isinstance(oom, MemoryError)
    assert oom.requested == 1610612736 and oom.free == 450971566
    eio = from_status("I/O error", "a.safetensors: tensor w: byte offset 4096 (file offset 4200): "
                      "read failed: Input/output error", "load", path="a.safetensors",
                      error_number=5, tensor="w", offset=4096)  # base::ErrorFile, ErrorPlace
    assert isinstance(eio, loadplan.CheckpointError)
    assert eio.path == "a.safetensors" and eio.errno == 5
    assert eio.tensor == "w" and eio.offset == 4096
    header = from_status("I/O error", "m", "load", tensor="", offset=8)  # the file's header
    assert header.tensor is None and header.offset == 8
    ended = from_status("I/O error", "the file ended", "load", path="a.safetensors",
                        error_number=0)
    assert ended.errno is None and ended.tensor is None and ended.offset is None
    assert from_status("out of memory", "m", "load").requested is None


def test_bad_placement_is_an_option_error(checkpoint):
    with pytest.raises(loadplan.OptionError):
        loadplan.load(TINY, checkpoint, placement="no-such-policy")


def _deployment(tmp_path):
    import json
    import shutil
    shutil.copy(TINY, tmp_path / "a.json")
    (tmp_path / "b.json").write_text("{")  # stage 1 does not parse
    d = tmp_path / "d.json"
    d.write_text(json.dumps({"deployment": "t2",
                             "stages": [{"manifest": "a.json"}, {"manifest": "b.json"}]}))
    return d


def test_a_deployment_without_a_launcher_is_refused(tmp_path, monkeypatch):
    for v in ("RANK", "LOCAL_RANK", "WORLD_SIZE"):
        monkeypatch.delenv(v, raising=False)
    with pytest.raises(loadplan.LoadplanError) as e:
        loadplan.load(_deployment(tmp_path), tmp_path / "ckpt")
    assert "deployment t2 has 2 stages, but 1 process was started" in str(e.value)


def test_a_deployment_loads_the_ranks_stage(tmp_path, monkeypatch):
    d = _deployment(tmp_path)
    monkeypatch.setenv("RANK", "1")
    monkeypatch.setenv("LOCAL_RANK", "0")
    monkeypatch.setenv("WORLD_SIZE", "2")
    with pytest.raises(loadplan.ManifestError) as e:  # stage 1's manifest is the one read
        loadplan.load(d, tmp_path / "ckpt")
    assert "b.json" in str(e.value) or "parse" in str(e.value).lower(), str(e.value)
    monkeypatch.setenv("RANK", "0")
    with pytest.raises((loadplan.CheckpointError, loadplan.DeviceError)):  # stage 0 verified
        loadplan.load(d, tmp_path / "ckpt")
