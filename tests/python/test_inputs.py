"""Inputs that are not regular files, through Python as through the CLI (cli_behaviour.sh):
refused at once with the CLI's message, never read (a FIFO used to hang check() and
import_model(); /dev/zero grew to gigabytes)."""

import os
import signal

import pytest

import loadplan
from conftest import EXAMPLES


@pytest.fixture(autouse=True)
def _no_hang():  # a regression hangs: fail in seconds instead
    signal.signal(signal.SIGALRM, lambda *_: pytest.fail("hung on an input"))
    signal.alarm(20)
    yield
    signal.alarm(0)


@pytest.fixture
def fifo(tmp_path):
    path = tmp_path / "fifo"
    os.mkfifo(path)
    return path


def test_check_refuses_a_fifo(fifo):
    with pytest.raises(loadplan.InputFileError, match="a FIFO, not a regular file"):
        loadplan.check(fifo)


def test_check_and_load_refuse_a_device():
    with pytest.raises(loadplan.InputFileError, match="/dev/zero: a character device"):
        loadplan.check("/dev/zero")
    with pytest.raises(OSError, match="/dev/zero: a character device"):
        loadplan.load("/dev/zero", "/nonexistent", 0)


def test_plan_refuses_a_directory(tmp_path):
    with pytest.raises(loadplan.InputFileError, match="a directory, not a regular file"):
        loadplan.plan(tmp_path)


def test_a_missing_manifest_is_an_os_error():
    with pytest.raises(OSError, match="cannot open /nonexistent/m.json: No such file"):
        loadplan.check("/nonexistent/m.json")


def test_import_refuses_a_fifo_shard_and_a_device_config(tmp_path):
    shard = tmp_path / "fifo-shard"
    shard.mkdir()
    (shard / "model.safetensors.index.json").write_text('{"weight_map": {"a": "s.safetensors"}}')
    os.mkfifo(shard / "s.safetensors")
    with pytest.raises(loadplan.CheckpointError, match="s.safetensors: a FIFO"):
        loadplan.import_model(shard)
    config = tmp_path / "zero-config"
    config.mkdir()
    (config / "config.json").symlink_to("/dev/zero")
    (config / "model.safetensors").write_bytes(b"\x02" + b"\x00" * 7 + b"{}")
    with pytest.raises(loadplan.CheckpointError, match="config.json: a character device"):
        loadplan.import_model(config)


def test_a_regular_manifest_still_reads():
    assert not any(d.is_error for d in loadplan.check(EXAMPLES[0]))
