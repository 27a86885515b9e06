"""loadplan.check against `loadplan check --format json` (same diagnostics, same JSON)."""

import errno
import json
import os

import pytest

import loadplan
from conftest import EXAMPLES, ROOT


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_examples_match_cli(cli, path):
    diags = loadplan.check(path)
    assert [d.to_dict() for d in diags] == cli("check", "--format", "json", path)
    assert not any(d.is_error for d in diags)


def test_text_and_dict_give_the_same_diagnostics(tmp_path):
    path = EXAMPLES[0]
    text = path.read_text()
    from_text = [(d.code, d.pointer) for d in loadplan.check(text)]
    from_dict = [(d.code, d.pointer) for d in loadplan.check(json.loads(text))]
    assert from_text == from_dict == [(d.code, d.pointer) for d in loadplan.check(str(path))]


def test_broken_manifest_matches_cli(cli, tmp_path):
    m = json.loads((EXAMPLES[-1]).read_text())
    m["buffers"] = {"x": {"kind": "nonsense"}}
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(m))
    diags = loadplan.check(bad)
    assert any(d.is_error for d in diags)
    assert all(d.code and d.pointer.startswith("/") or d.pointer == "" for d in diags)
    assert [d.to_dict() for d in diags] == cli("check", "--format", "json", bad, ok_codes=(1,))


def test_tensor_lists_check_as_the_cli_does(cli, tmp_path):
    """A buffer bound by a `tensors` list checks clean; an empty list is K10, a repeat K11."""
    m = json.loads((ROOT / "tests" / "data" / "rules" / "clean_tensors.json").read_text())
    assert loadplan.check(m) == []
    for tensors, code, pointer in (([], "K10", "/buffers/w.raw/tensors"),
                                   (["w.0", "w.1", "w.0"], "K11", "/buffers/w.raw/tensors/2")):
        m["buffers"]["w.raw"]["tensors"] = tensors
        path = tmp_path / f"{code}.json"
        path.write_text(json.dumps(m))
        diags = loadplan.check(path)
        assert [(d.code, d.pointer) for d in diags] == [(code, pointer)]
        assert [d.to_dict() for d in diags] == cli("check", "--format", "json", path, ok_codes=(1,))


def test_not_json_is_a_diagnostic():
    diags = loadplan.check("{ not json")
    assert diags and diags[0].is_error and diags[0].code.startswith("J")


def test_missing_file_raises_oserror(tmp_path):
    """FileNotFoundError from the C++ error's typed errno and path (base::ErrorFile)."""
    with pytest.raises(FileNotFoundError) as e:
        loadplan.check(tmp_path / "absent.json")
    assert e.value.errno == errno.ENOENT and e.value.path == str(tmp_path / "absent.json")
    assert str(e.value).startswith(f"cannot open {tmp_path / 'absent.json'}: No such file")


def test_an_unreadable_file_is_an_oserror_with_its_errno(tmp_path):
    locked = tmp_path / "locked.json"
    locked.write_text("{}")
    locked.chmod(0)
    if os.access(locked, os.R_OK):  # root reads anything
        pytest.skip("running as root: a mode of 0 does not refuse the read")
    with pytest.raises(loadplan.InputFileError) as e:
        loadplan.check(locked)
    assert e.value.errno == errno.EACCES and not isinstance(e.value, FileNotFoundError)
