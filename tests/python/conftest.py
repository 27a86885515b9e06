"""Shared fixtures: the repository root, the CLI binary (build/cli/loadplan, or $LOADPLAN_CLI)
and a runner returning its JSON output, to compare the Python package with the command."""

import json
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").glob("*.json"))


@pytest.fixture(scope="session")
def cli():
    path = Path(os.environ.get("LOADPLAN_CLI", ROOT / "build" / "cli" / "loadplan"))
    if not path.exists():
        pytest.skip(f"no loadplan binary at {path} (scripts/setup builds it)")

    def run(*args, ok_codes=(0,)):
        out = subprocess.run([str(path), *map(str, args)], capture_output=True, text=True)
        assert out.returncode in ok_codes, out.stderr
        return json.loads(out.stdout)

    run.path = path
    return run


TINY = next(p for p in EXAMPLES if p.name == "tiny.json")


@pytest.fixture(scope="module")
def checkpoint(cli, tmp_path_factory):
    """A checkpoint of examples/tiny.json written by `loadplan gen`."""
    out = tmp_path_factory.mktemp("ckpt")
    subprocess.run([str(cli.path), "gen", str(TINY), "-o", str(out)], check=True,
                   capture_output=True)
    return out
