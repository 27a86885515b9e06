"""The Python blocks of docs/python.md that need no GPU run as written (the GPU ones run on
the H200 through scripts/gpu/gpu-python), so the docs cannot show code that does not work."""

import os
import re

from conftest import ROOT


def cpu_blocks():
    text = (ROOT / "docs" / "python.md").read_text()
    before_gpu = text.split("## Load into torch")[0]
    return re.findall(r"^```python\n(.*?)^```$", before_gpu, flags=re.S | re.M)


def test_cpu_blocks_of_the_python_docs_run(capsys):
    blocks = cpu_blocks()
    assert blocks, "docs/python.md has no Python block before the GPU section"
    cwd = os.getcwd()
    os.chdir(ROOT)  # the blocks name examples/ relative to the repository
    try:
        for code in blocks:
            exec(compile(code, "docs/python.md", "exec"), {})
    finally:
        os.chdir(cwd)
    assert "serve" in capsys.readouterr().out  # the plan block printed its phases
