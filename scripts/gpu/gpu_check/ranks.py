"""Issue 30: every rank of a tensor-parallel split of a real BF16 checkpoint, loaded one after
another on the one GPU, each byte-equal to torch's slicing of safetensors' tensors, peak =
prediction (scripts/gpu/gpu_ranks.py); and gpt-oss split with its recipe: each rank's MXFP4
carries equal to the recipe's numpy reference on its slice (scripts/dev/recipe_check.py), each
rank under `loadplan run --check` as a launcher starts it."""

import json
import os

from . import reports
from .core import env_or, text_lines
from .pyparts import python_package
from .shared import cat_step

CASES = "llama qwen3moe gptoss"
# The speed-only cases: rank 0 of a 16-layer shape, by read path (rank_speed).
SPEED = {"llama70": "llama70b-16", "llama8": "llama8b-16"}
NO_PACKAGE = {*SPEED, "gptoss-speed"}


def ranks(c):
    """The hfspeed part's Llama-8B shape (16 layers) at RANKS_TP ranks (default 8), its
    Qwen3-MoE shape at TP=4 x EP=2, and gpt-oss-120b's shape (GPT_OSS_LAYERS layers, default 4)
    with its recipe at RANKS_GPTOSS_TP ranks (default 8); RANKS_CASES picks among them, and
    "grid" (not in the default) loads the Llama shape as 2 pipeline stages x 4 ranks, and
    "llama70" (not in the default either: 31.6 GB to write) rank 0 of a Llama-70B shape's
    16 layers at RANKS_TP ranks, for speed (rank_speed), "llama8" the same for the 8B
    shape, and "gptoss-speed" for gpt-oss-120b's (gptoss_speed; none needs the package)."""
    tp, gtp = env_or("RANKS_TP", "8"), env_or("RANKS_GPTOSS_TP", "8")
    cases = env_or("RANKS_CASES", CASES).split()
    # The package (loadplan.load, gpu_ranks.py) for every case but the speed rows.
    pkg = python_package(c) if set(cases) - NO_PACKAGE else None
    c.say(f"== tensor-parallel ranks (scripts/gpu/gpu_ranks.py): Llama-8B shape TP={tp}, "
          f"Qwen3-MoE shape TP=4 x EP=2, gpt-oss-120b shape TP={gtp} with its recipe "
          f"({' '.join(cases)})")
    if "llama" in cases:
        rank_set(c, "llama", pkg, "llama8b-16", ["--tensor-parallel", tp])
    if "qwen3moe" in cases:
        rank_set(c, "qwen3moe", pkg, "qwen3moe-4",
                 ["--tensor-parallel", "4", "--expert-parallel", "2"])
    if "gptoss" in cases:
        gptoss(c, pkg, gtp)
    if "grid" in cases:  # pipeline x tensor parallel: stage p's rank t is rank p*T + t
        rank_set(c, "grid", pkg, "llama8b-16", ["--pipeline", "2", "--tensor-parallel", "4"])
    for name in [n for n in cases if n in SPEED]:
        rank_speed(c, name, SPEED[name], ["--tensor-parallel", tp])
    if "gptoss-speed" in cases:
        gptoss_speed(c, gtp)


def rank_set(c, name, pkg, shape, split):
    """A random BF16 checkpoint of SHAPE, imported into rank manifests (SPLIT), planned with a
    machine profile, every rank loaded and compared byte for byte."""
    hf = f"{c.work}/hf-{name}"
    make = ["python3", "bench/transformers_load.py", "make", hf, shape]
    if c.step(f"ranks-make-{name}", 240, make):
        return
    out = import_and_check(c, name, pkg, hf, ["--recipe", "none", *split])
    if out is None:
        return
    if name == "llama":  # rank 0 by kind of slice and read path (bench/slice_paths.py)
        cat_step(c, "warm-ranks", 60, hf)
        slice_paths(c, name, out, hf, ["--presharded", f"{c.work}/presharded-{name}"])
        c.remove(f"{c.work}/presharded-{name}")
    c.remove(hf)


def slice_paths(c, name, out, hf, more=(), json_name="slice-paths.json"):
    """Rank 0 of OUT by kind of slice and read path (bench/slice_paths.py), each row beside
    BEFORE when it is packed; its table into the summary."""
    beside = ["--beside", c.before] if c.before else []  # each row beside it
    # Rows and rank also on other lanes than the manifest's (16 for a rank): 1, as before.
    lanes = env_or("RANKS_LANES", "1 4").split()
    c.step(f"ranks-paths-{name}", 480, ["python3", "bench/slice_paths.py", c.loadplan,
                                        f"{out}/rank-0.json", hf, "--json",
                                        f"{c.out}/{json_name}", "--machine", machine_profile(c),
                                        *beside, *(["--lanes", *lanes] if lanes else []),
                                        *more])
    c.tee(c.grep(c.log(f"ranks-paths-{name}"), r"^pinned|^\|"))


def rank_speed(c, name, shape, split, hf=None):
    """A rank the size tensor parallelism serves (a Llama-70B shape's rank at TP=8 is 3.9 GB
    for 16 layers, where the 8B shape's is 1.1): a random BF16 checkpoint of SHAPE, imported
    (SPLIT), the deployment planned with the machine profile, rank 0 checked against the host
    backend (`run --check`: the bytes, the peak against the prediction), then by kind of slice
    and read path. The other ranks are not loaded: the "llama" case proves every rank's bytes.
    HF: a checkpoint made already (SHAPE unused), removed at the end all the same."""
    made, hf, out = hf is None, hf or f"{c.work}/hf-{name}", f"{c.work}/ranks-{name}"
    try:
        if made and c.step(f"ranks-make-{name}", 420, ["python3", "bench/transformers_load.py",
                                                       "make", hf, shape]):
            return
        if c.step(f"ranks-import-{name}", 60, [c.loadplan, "import", hf, "--recipe", "none",
                                               *split, "--max-batch", "16", "--max-ctx", "8192",
                                               "-o", out]):
            return
        plan = c.capture([c.loadplan, "plan", f"{out}/deploy.json", "--machine",
                          machine_profile(c)])
        c.tee(text_lines(plan)[-3:])
        cat_step(c, f"warm-{name}", 180, hf)
        run = f"ranks-run-{name}-0"
        c.step(run, 180, [c.loadplan, "run", f"{out}/rank-0.json", "--checkpoint", hf,
                          "--no-derive", "--check", "--machine", machine_profile(c), "--format",
                          "json"])
        c.report(run_check_line, c.log(run), run, f"{out}/rank-0.json", errors_to_summary=True)
        slice_paths(c, name, out, hf, json_name=f"slice-paths-{name}.json")
    finally:
        c.remove(hf, out)


def gptoss_speed(c, tp):
    """Rank 0 of gpt-oss-120b's shape cut to GPT_OSS_SPEED_LAYERS layers (default 16) at TP
    ranks, for speed: imported with its recipe (each rank prepares its own slice), rank 0's
    whole load, derive on, as imported and on the whole model's lanes and calls ahead; then
    without it, by kind of slice and read path (rank_speed; the experts' down blocks and
    scales are column slices of 192- and 12-byte runs)."""
    ckpt = gptoss_checkpoint(c, env_or("GPT_OSS_SPEED_LAYERS", "16"))
    if not ckpt:
        return
    out = f"{c.work}/ranks-gptoss-recipe"
    try:
        if not c.step("ranks-import-gptoss-recipe", 60, [c.loadplan, "import", ckpt,
                                                          "--tensor-parallel", tp, "-o", out]):
            cat_step(c, "warm-gptoss-recipe", 180, ckpt)
            # As imported (16 lanes, TP calls ahead), then the whole model's 4 lanes and 1 call
            # ahead, and fewer calls ahead (a narrower arena).
            for more in ["", "--lanes 4 --prefetch 1", "--prefetch 1", "--prefetch 4"]:
                name = "ranks-run-gptoss-recipe-0" + more.replace("--", "-").replace(" ", "")
                c.step(name, 180, [c.loadplan, "run", f"{out}/rank-0.json", "--checkpoint",
                                   ckpt, "--machine", machine_profile(c), "--repeat", "3",
                                   *more.split()])
                c.tee(c.grep(c.log(name), r"^  (rate|peak)"))  # the peak line says predicted
        rank_speed(c, "gptoss-speed", None, ["--tensor-parallel", tp], hf=ckpt)
    finally:
        c.remove(ckpt, out)


def machine_profile(c):
    """The profile the ranks are planned and run with: this call's own ($OUT/profile.json, from
    the predict part: its per-run and per-page costs), else examples/profiles/h100.json."""
    own = f"{c.out}/profile.json"
    return own if os.path.isfile(own) else "examples/profiles/h100.json"


def import_and_check(c, name, pkg, ckpt, args, stages=None):
    """CKPT imported into rank manifests ($W/ranks-NAME, import's ARGS), planned with a machine
    profile (the ranks' lines into the summary), every rank loaded by gpu_ranks.py
    ($OUT/ranks-NAME.json); the folder, or None when the import failed."""
    out = f"{c.work}/ranks-{name}"
    if c.step(f"ranks-import-{name}", 60, [c.loadplan, "import", ckpt, *args, "--max-batch", "16",
                                           "--max-ctx", "8192", "-o", out]):
        return None
    n = c.value(reports.stage_count, f"{out}/deploy.json", default=stages or 0)
    plan = c.capture([c.loadplan, "plan", f"{out}/deploy.json", "--machine",
                      machine_profile(c)])
    c.tee(text_lines(plan)[-(2 * n + 1):])
    c.step(f"ranks-check-{name}", 420, ["env", f"PYTHONPATH={pkg}", "python3",
                                        "scripts/gpu/gpu_ranks.py", f"{out}/deploy.json", ckpt,
                                        "--json", f"{c.out}/ranks-{name}.json"])
    c.tee(c.grep(c.log(f"ranks-check-{name}"), "^rank|ranks byte-equal|Error"))
    return out


def gptoss(c, pkg, tp):
    """gpt-oss-120b's shape cut to GPT_OSS_LAYERS layers, with data, imported with its recipe
    at TP ranks: each rank's weights against torch's slicing and its carries against the recipe
    (gpu_ranks.py), then each rank under `loadplan run --check` (RANK, WORLD_SIZE, LOCAL_RANK
    as torchrun sets them: the stage is the launcher's rank, on GPU 0)."""
    ckpt = gptoss_checkpoint(c, env_or("GPT_OSS_LAYERS", "4"))
    out = None
    if ckpt:
        out = import_and_check(c, "gptoss", pkg, ckpt, ["--tensor-parallel", tp], int(tp))
    for rank in range(int(tp) if out else 0):
        name = f"ranks-run-gptoss-{rank}"
        c.step(name, 120, [c.loadplan, "run", f"{out}/deploy.json", "--checkpoint", ckpt,
                           "--check", "--machine", machine_profile(c), "--format", "json"],
               env={"RANK": str(rank), "WORLD_SIZE": tp, "LOCAL_RANK": "0"})
        c.report(run_check_line, c.log(name), name, f"{out}/rank-{rank}.json",
                 errors_to_summary=True)
    c.remove(f"{c.work}/hf-gptoss")


def gptoss_checkpoint(c, layers):
    """$W/hf-gptoss: the gpt-oss-120b skeleton cut to LAYERS layers (`hf_skeleton.py --layers`),
    imported without the recipe, `gen` (random data), config.json beside it; None on a
    failure."""
    sk, full = f"{c.work}/gptoss-skeleton", f"{c.work}/gptoss-full.json"
    ckpt = f"{c.work}/hf-gptoss"
    c.remove(sk, full, ckpt)
    try:
        if c.step("ranks-skeleton-gptoss", 60, ["python3", "scripts/hf_skeleton.py",
                                                "gpt-oss-120b", sk, "--layers", layers]):
            return None
        if c.step("ranks-full-gptoss", 60, [c.loadplan, "import", sk, "--recipe", "none",
                                            "-o", full]):
            return None
        if c.step("ranks-make-gptoss", 240, [c.loadplan, "gen", full, "-o", ckpt]):
            return None
        if c.run(["cp", f"{sk}/config.json", f"{ckpt}/config.json"]):
            return None
        return ckpt
    finally:
        c.remove(sk, full)


def carries_in(manifest):
    """The exported carries of a manifest (what --check compares beside the weights); "?" when
    it cannot be read."""
    try:
        with open(manifest) as f:
            buffers = json.load(f)["buffers"]
    except (OSError, ValueError, KeyError):
        return "?"
    return sum(b.get("kind") == "carry" and bool(b.get("export")) for b in buffers.values())


def check_words(r, manifest):
    """A run report's check against the host backend, in words (`manifest`: the rank's file;
    the report names the manifest, not its path)."""
    k = r.get("check")
    if not k:
        return "none in the report"
    if k.get("host_error"):
        return f"FAILED: the host backend stopped: {k['host_error']}"
    if not k.get("ok"):
        return f"MISMATCH: {'; '.join(k.get('mismatches', [])[:3])}"
    carries = carries_in(manifest)
    if carries == 0:  # weights only (a Llama rank): the buffers themselves
        return f"{k['compared']} buffers equal ({k['bytes'] / 1e9:.2f} GB, as the host backend's)"
    return (f"{carries} carries equal ({k['compared']} buffers, "
            f"{k['bytes'] / 1e9:.2f} GB, as the host backend's)")


def run_check_line(path, label, manifest):
    """The stage `loadplan run --check --format json` (its report in PATH) loaded, its check
    against the host backend, its peak against the prediction."""
    text = reports.read(path)
    try:
        r = reports.report_in(text)
    except ValueError:
        yield f"{label}: no report: " + text[-300:].strip()
        return
    s, m = r.get("stage"), r["measured"]
    where = f"stage {s.get('stage')} of {s.get('stages')} ({s.get('launcher')})" if s else "rank"
    yield (f"{label}: {where}; "
           f"check: {check_words(r, manifest)}; peak {m['peak_allocated'] / 2**30:.3f} GiB "
           f"{'=' if m.get('peak_matches') else '!='} predicted "
           f"{r['predicted']['peak'] / 2**30:.3f} GiB; {r['gbps']:.2f} GB/s")
