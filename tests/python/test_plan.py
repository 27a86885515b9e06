"""loadplan.plan against `loadplan plan --format json`, and its errors."""

import json

import pytest

import loadplan
from conftest import EXAMPLES


def _without_file(d):
    return {k: v for k, v in d.items() if k != "file"}


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_examples_match_cli(cli, path):
    assert loadplan.plan(path).to_dict() == cli("plan", "--format", "json", path)


def test_options_match_cli(cli):
    path = next(p for p in EXAMPLES if p.name == "gpt-oss-120b.json")
    p = loadplan.plan(path, device_memory="h200", at={"batch": 64}, lanes=2, prefetch=1,
                      placement="best-fit")
    expected = cli("plan", "--format", "json", path, "--device-memory", "h200", "--at",
                   "batch=64", "--lanes", "2", "--prefetch", "1", "--placement", "best-fit",
                   ok_codes=(0, 1))
    assert p.to_dict() == expected
    assert loadplan.plan(path, at=["batch=64"]).to_dict() == loadplan.plan(
        path, at={"batch": 64}).to_dict()


def test_naive_plan_keeps_every_source_resident():
    path = next(p for p in EXAMPLES if p.name == "tiny.json")
    staged, naive = loadplan.plan(path), loadplan.plan(path, naive=True)
    assert naive.arena_bytes == 0 < staged.arena_bytes
    assert naive.resident_bytes > staged.resident_bytes


def test_plan_values():
    p = loadplan.plan(next(p for p in EXAMPLES if p.name == "gpt-oss-120b.json"),
                      device_memory="h200")
    assert p.phases and all(ph.max is None or ph.max >= (ph.min or 0) for ph in p.phases)
    assert p.peak is not None and p.peak_phase in [ph.name for ph in p.phases]
    assert p.naive_peak >= p.load_peak > 0
    assert p.fits in (True, False)
    assert p.to_dict() is not p.to_dict()  # a copy: callers may edit it


def test_dict_input_has_its_display_name():
    m = json.loads(EXAMPLES[0].read_text())
    assert _without_file(loadplan.plan(m).to_dict()) == _without_file(
        loadplan.plan(EXAMPLES[0]).to_dict())
    assert loadplan.plan(m).to_dict()["file"] == "<dict>"


def test_manifest_errors_raise_with_diagnostics():
    m = json.loads(EXAMPLES[0].read_text())
    m["buffers"] = {"x": {"kind": "nonsense"}}
    with pytest.raises(loadplan.ManifestError) as e:
        loadplan.plan(m)
    assert isinstance(e.value, ValueError)
    assert e.value.diagnostics and all(isinstance(d, loadplan.Diagnostic)
                                       for d in e.value.diagnostics)


@pytest.mark.parametrize("options", [{"placement": "no-such-policy"},
                                     {"device_memory": "lots"},
                                     {"at": {"no_such_variable": 3}}])
def test_bad_options_raise(options):
    with pytest.raises(loadplan.OptionError):
        loadplan.plan(EXAMPLES[0], **options)
