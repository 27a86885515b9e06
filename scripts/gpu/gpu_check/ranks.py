"""Issue 30: every rank of a tensor-parallel split of a real BF16 checkpoint, loaded one after
another on the one GPU, each byte-equal to torch's slicing of safetensors' tensors, peak =
prediction (scripts/gpu/gpu_ranks.py)."""

from . import reports
from .core import env_or, text_lines
from .pyparts import python_package
from .shared import cat_step


def ranks(c):
    """The hfspeed part's Llama-8B shape (16 layers) at RANKS_TP ranks (default 8), and its
    Qwen3-MoE shape at TP=4 x EP=2."""
    tp = env_or("RANKS_TP", "8")
    pkg = python_package(c)
    c.say(f"== tensor-parallel ranks (scripts/gpu/gpu_ranks.py): Llama-8B shape TP={tp}, "
          "Qwen3-MoE shape TP=4 x EP=2")
    rank_set(c, "llama", pkg, "llama8b-16", ["--tensor-parallel", tp])
    rank_set(c, "qwen3moe", pkg, "qwen3moe-4", ["--tensor-parallel", "4", "--expert-parallel", "2"])


def rank_set(c, name, pkg, shape, split):
    """A random BF16 checkpoint of SHAPE, imported into rank manifests (SPLIT), planned with a
    machine profile, every rank loaded and compared byte for byte."""
    hf, out = f"{c.work}/hf-{name}", f"{c.work}/ranks-{name}"
    make = ["python3", "bench/transformers_load.py", "make", hf, shape]
    if c.step(f"ranks-make-{name}", 240, make):
        return
    if c.step(f"ranks-import-{name}", 60, [c.loadplan, "import", hf, "--recipe", "none", *split,
                                           "--max-batch", "16", "--max-ctx", "8192", "-o", out]):
        return
    n = c.value(reports.stage_count, f"{out}/deploy.json", default=0)
    plan = c.capture([c.loadplan, "plan", f"{out}/deploy.json", "--machine",
                      "examples/profiles/h100.json"])
    c.tee(text_lines(plan)[-(2 * n + 1):])
    c.step(f"ranks-check-{name}", 420, ["env", f"PYTHONPATH={pkg}", "python3",
                                        "scripts/gpu/gpu_ranks.py", f"{out}/deploy.json", hf,
                                        "--json", f"{c.out}/ranks-{name}.json"])
    c.tee(c.grep(c.log(f"ranks-check-{name}"), "^rank|ranks byte-equal|Error"))
    if name == "llama":  # rank 0 by kind of slice and read path (bench/slice_paths.py)
        cat_step(c, "warm-ranks", 60, hf)
        c.step(f"ranks-paths-{name}", 300, ["python3", "bench/slice_paths.py", c.loadplan,
                                            f"{out}/rank-0.json", hf, "--json",
                                            f"{c.out}/slice-paths.json"])
        c.tee(c.grep(c.log(f"ranks-paths-{name}"), r"^pinned|^\|"))
    c.remove(hf)
