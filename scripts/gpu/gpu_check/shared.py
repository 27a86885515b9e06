"""What several parts share: the benchmark's checkpoint, page-cache warming, the package build,
the peers' wheels, /dev/shm's room, sizes, and `loadplan run` report lines."""

import glob
import os
import shutil

from . import reports
from .core import glob_args, nproc, text_lines

PKG = "/tmp/gpu-python/pkg"  # the Python package as scripts/gpu/gpu-python builds it
SITE = "/tmp/site"  # the peers' wheels (.whl/), installed here
CAT = 'cat "$@" >/dev/null'


def example(c, layers, path):
    """`loadplan example gpt-oss-120b --layers N -o PATH` (layers None: all 36)."""
    return [c.loadplan, "example", "gpt-oss-120b", *(["--layers", str(layers)] if layers else []),
            "-o", path]


def cat_step(c, name, limit, folder):
    """A step reading FOLDER's shards once, into the page cache."""
    return c.step(name, limit, ["sh", "-c", CAT, "_", *glob_args(f"{folder}/*.safetensors")])


def bench_checkpoint(c):
    """The benchmark's 8-layer gpt-oss example ($W/bench/m8.json) and its checkpoint
    ($W/bench/ckpt, 16.3 GB in 5 shards), made once per machine and shared by the parts."""
    b = f"{c.work}/bench"
    c.mkdir(b)
    if not os.path.isfile(f"{b}/m8.json") and c.step("example", 30, example(c, 8, f"{b}/m8.json")):
        return False
    return gen_checkpoint(c, b)


def gen_checkpoint(c, b):
    """$B/ckpt from $B/m8.json unless a complete one is there."""
    if os.path.isfile(f"{b}/ckpt/model.safetensors.index.json"):
        return True
    c.remove(f"{b}/ckpt")
    return c.step("gen", 200, [c.loadplan, "gen", f"{b}/m8.json", "-o", f"{b}/ckpt"]) == 0


def warm_bench_checkpoint(c):
    """The same, read once so that it is in the page cache."""
    if not bench_checkpoint(c):
        return False
    cat_step(c, "warm-page-cache", 60, f"{c.work}/bench/ckpt")
    return True


def small_example(c, folder, prefix):
    """FOLDER made, the 2-layer example written to FOLDER/m2.json (step PREFIX-example) and a
    checkpoint holding its tensors (small_checkpoint, step PREFIX-gen): the checkpoint's path,
    None when a step failed."""
    c.mkdir(folder)
    if c.step(f"{prefix}-example", 30, example(c, 2, f"{folder}/m2.json")):
        return None
    return small_checkpoint(c, folder, f"{prefix}-gen")


def small_checkpoint(c, folder, gen_name):
    """A checkpoint holding the 2-layer example's tensors (FOLDER/m2.json): the benchmark's
    8-layer one when it is there, else FOLDER/ckpt, made once. None when `gen` failed."""
    ck = f"{c.work}/bench/ckpt"
    if os.path.isfile(f"{ck}/model.safetensors.index.json"):
        return ck
    ck = f"{folder}/ckpt"
    if os.path.isfile(f"{folder}/ckpt.complete"):
        return ck
    c.remove(ck)
    if c.step(gen_name, 200, [c.loadplan, "gen", f"{folder}/m2.json", "-o", ck]):
        return None
    c.touch(f"{folder}/ckpt.complete")
    return ck


def pip_build(target):
    """The package built from the repository into TARGET, as scripts/gpu/gpu-python does."""
    return ["env", f"CMAKE_BUILD_PARALLEL_LEVEL={nproc()}", "python3", "-m", "pip", "install", "-q",
            "--no-build-isolation", "--no-deps", "--target", target, "."]


def build_package(c, name):
    """/tmp/gpu-python/pkg unless built already (a step NAME); False when the build failed."""
    return os.path.isdir(f"{PKG}/loadplan") or c.step(name, 300, pip_build(PKG)) == 0


def wheels():
    """The peers' wheels (carried in .whl/) installed into /tmp/site."""
    return ["python3", "-m", "pip", "install", "-q", "--no-index", "--no-deps", "--no-compile",
            "--no-cache-dir", "--upgrade", "--target", SITE, *glob_args(".whl/*.whl")]


def install_wheels(c, log_name):
    c.run(wheels(), stdout=f"{c.logs}/{log_name}.log", stderr="out")


def site_path():
    """/tmp/site${PYTHONPATH:+:$PYTHONPATH}."""
    old = os.environ.get("PYTHONPATH")
    return SITE + (f":{old}" if old else "")


def shm_free(c):
    """Bytes free in /dev/shm (df --output=avail); 0 when unknown; plenty under the dry run."""
    if c.dry:
        return 10**12
    try:
        st = os.statvfs("/dev/shm")
    except OSError:
        return 0
    return st.f_bavail * st.f_frsize


def gpu_count(c):
    """Lines of `nvidia-smi --query-gpu=index`: the GPUs (one under the dry run)."""
    text = c.capture(["nvidia-smi", "--query-gpu=index", "--format=csv,noheader"], stderr="null",
                     dry="0\n")
    return text.count("\n")


def apparent_size(paths, follow=False):
    """du -cb (-L: follow links) PATHS | tail -1: bytes, hard links once, folders walked."""
    seen, total = set(), 0
    for path in paths:
        for p in walk(path):
            try:
                st = os.stat(p) if follow else os.lstat(p)
            except OSError:
                continue
            if (st.st_dev, st.st_ino) not in seen:
                seen.add((st.st_dev, st.st_ino))
                total += st.st_size
    return total


def walk(path):
    yield path
    if os.path.isdir(path) and not os.path.islink(path):
        for folder, dirs, files in os.walk(path):
            yield from (os.path.join(folder, name) for name in dirs + files)


def gb(size):
    return f"{size / 1e9:.2f} GB"


def entries(folder):
    """ls FOLDER | wc -l."""
    try:
        return len([name for name in os.listdir(folder) if not name.startswith(".")])
    except OSError:
        return 0


def shards(folder):
    return sorted(glob.glob(f"{folder}/*.safetensors"))


def fincore(c, folder, **redirect):
    """fincore FOLDER's shards, when the machine has it: to the summary, or redirected."""
    if not shutil.which("fincore"):
        return
    cmd = ["fincore", *glob_args(f"{folder}/*.safetensors")]
    if redirect:
        c.run(cmd, **redirect)
    else:
        c.tee(text_lines(c.capture(cmd)))


def run_line(c, log, label):
    """One line of a `loadplan run --format json` report in LOG (reports.run_line)."""
    c.report(reports.run_line, log, label, errors_to_summary=True)
