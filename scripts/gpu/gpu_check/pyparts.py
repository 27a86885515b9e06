"""The Python package's parts: scripts/gpu/gpu-python (python), import against transformers
(hf, scripts/gpu/gpu-hf), every causal-LM family of transformers small (zoo), and
loadplan.transformers.from_pretrained beside transformers' own (hfspeed)."""

import os

from . import reports
from .core import env_or
from .shared import PKG

README_INPUT = 'import torch; input_ids = torch.tensor([[1, 5, 9]], device="cuda")\n'
README_PRINT = 'print("README transformers lines ran:", tuple(out.shape))\n'


def python_package(c):
    """The Python package for the machine's Python: .gpu/py (scripts/gpu/gpu-pack-python builds
    it on the build machine for Python 3.12), else built here once (/tmp/gpu-python/pkg, as
    gpu-python does)."""
    if os.path.isdir(f"{c.gpu}/py/loadplan"):
        return f"{c.gpu}/py"
    if not os.path.isdir(f"{PKG}/loadplan"):
        c.run(["python3", "-m", "pip", "install", "-q", "--no-build-isolation", "--no-deps",
               "--target", PKG, "."], stdout=f"{c.logs}/pip.log", stderr="out")
    return PKG


def python(c):
    """The Python package: built here, tests/python, gpt-oss into torch, GB/s."""
    c.say("== python")
    c.step("python", 400, ["env", f"OUT={c.out}", "scripts/gpu/gpu-python"])
    c.tee(c.grep(f"{c.out}/python.txt", "built in|passed|derived carries|ran:|median"))


def hf(c):
    """`loadplan import` cross-checked against transformers."""
    c.say("== hf cross-checks")
    c.step("hf", 450, ["env", f"OUT={c.out}", "scripts/gpu/gpu-hf"])
    c.tee(c.grep(f"{c.out}/hf.txt", "built in|PASS|FAIL|SKIP|exit"))


def zoo(c):
    """Every causal-LM model_type of the installed transformers built small, saved, and checked
    through loadplan: import, layout, bytes, logits, cache (scripts/dev/zoo; docs/models.md
    "The zoo"); ZOO_TYPES=a,b for a few. The rows come back as $OUT/zoo.json; then the README's
    transformers lines on the zoo's llama."""
    pkg = python_package(c)
    version = c.capture(["python3", "-c", "import transformers; print(transformers.__version__)"],
                        stderr="null").rstrip("\n")
    c.say(f"== zoo (transformers {version})")
    types = ["--types", os.environ["ZOO_TYPES"]] if os.environ.get("ZOO_TYPES") else []
    c.step("zoo-make", 240, ["env", "PYTHONUNBUFFERED=1", "python3", "scripts/dev/zoo/make_zoo.py",
                             f"{c.work}/zoo", "--deadline-s", "200", *types])
    c.tee(c.grep(c.log("zoo-make"), "built, saved"))
    c.step("zoo-check", 420, ["env", f"PYTHONPATH={pkg}", "PYTHONUNBUFFERED=1", "python3",
                              "scripts/dev/zoo/check_zoo.py", f"{c.work}/zoo", "--device", "cuda",
                              "--json", f"{c.out}/zoo.json", *types])
    c.tee(c.grep(c.log("zoo-check"), "built families pass"))
    script = f"{c.work}/readme_transformers.py"
    block = c.value(reports.readme_transformers, "README.md", f"{c.work}/zoo/llama", default="")
    c.write(script, (README_INPUT + block if block else "") + README_PRINT)
    if c.step("zoo-readme", 120, ["env", f"PYTHONPATH={pkg}", "python3", script]) == 0:
        c.tee(c.tail(c.log("zoo-readme"), 1))


def hfspeed(c):
    """loadplan.transformers.from_pretrained beside transformers' from_pretrained(device_map=
    "cuda"), fresh processes, page cache warm (bench/transformers_load.py), for each shape of
    HFSPEED (default "llama8b-16 qwen3moe-4")."""
    pkg = python_package(c)
    for shape in env_or("HFSPEED", "llama8b-16 qwen3moe-4").split():
        c.say(f"== transformers load: {shape}")
        folder = f"{c.work}/hf-{shape}"
        c.step(f"hfspeed-make-{shape}", 240, ["python3", "bench/transformers_load.py", "make",
                                              folder, shape])
        c.step(f"hfspeed-{shape}", 360, ["env", f"PYTHONPATH={pkg}", "python3",
                                         "bench/transformers_load.py", "compare", folder,
                                         "--rounds", env_or("HFSPEED_ROUNDS", "3"),
                                         "--cold-rounds", env_or("HFSPEED_COLD_ROUNDS", "1")])
        c.tee(c.grep(c.log(f"hfspeed-{shape}"), r"^\{|SUMMARY|failed"))
        c.remove(folder)
