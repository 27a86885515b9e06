"""The installed package: its typed surface (stubs, py.typed) and import without a GPU."""

from collections.abc import Mapping
from pathlib import Path

import pytest

import loadplan
from loadplan import _loadplan


def test_typed_package_files():
    root = Path(loadplan.__file__).parent
    assert (root / "py.typed").exists()
    stub = (root / "_loadplan.pyi").read_text()
    for name in ("def check_diagnostics", "def plan_json", "def load", "class Model"):
        assert name in stub


def test_public_names():
    for name in loadplan.__all__:
        assert getattr(loadplan, name).__doc__, name
    assert issubclass(loadplan.Model, Mapping)
    assert issubclass(loadplan.OutOfMemoryError, MemoryError)
    assert issubclass(loadplan.ManifestError, ValueError)


def test_compiled_model_cannot_be_made_empty():
    with pytest.raises(TypeError):
        _loadplan.Model()
