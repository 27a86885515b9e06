"""The load benchmark (bench), host-to-device paths (paths), run's process overhead (overhead),
pinned copies by chunk size (copies) and the derive kernels (kernels)."""

import os

from . import reports
from .core import env_or, glob_args, is_exec
from .shared import apparent_size, cat_step, entries, example, gb, gen_checkpoint
from .shared import warm_bench_checkpoint


def bench_run(c, name, *args, binary=None):
    """One `loadplan run` (JSON report), collected into bench.json; text in bench.txt. binary:
    another loadplan (the before/after comparison runs the packed loadplan-before); else $BIN
    when set, as the bash script's ${BIN:-$LOADPLAN}."""
    binary = binary or env_or("BIN", c.loadplan)
    c.step(f"run-{name}", 120, [binary, "run", *args, "--format", "json"])
    log = c.log(f"run-{name}")
    c.report(reports.collect, name, log, to=f"{c.work}/bench.jsonl")
    c.append(f"{c.out}/bench.txt", [f"== {name}: loadplan run {' '.join(args)}", *c.tail(log, 30)])


def bench(c):
    """8 gpt-oss layers (13.7 GB): staged, naive, no-derive, I/O-thread/chunk and lane sweeps,
    a --check run, --save-derived, the PyTorch safetensors baseline; bench.json, bench.txt."""
    c.say("== load benchmark")
    if c.run([c.loadplan, "run", "--help"], stdout="null", stderr="out") != 0:
        c.say("loadplan run: not available in this binary (cli/main.cc does not wire it yet)")
        return
    b = f"{c.work}/bench"
    c.mkdir(b)
    c.write(f"{c.work}/bench.jsonl", "")
    if c.step("example", 30, example(c, 8, f"{b}/m8.json")):
        return
    c.step("example-l2", 30, example(c, 2, f"{b}/m2.json"))
    c.step("example-l1", 30, example(c, 1, f"{b}/m1.json"))
    if not gen_checkpoint(c, b):
        return
    c.say(f"checkpoint: {gb(apparent_size([f'{b}/ckpt']))} in {entries(f'{b}/ckpt')} files")
    cat_step(c, "warm-page-cache", 60, f"{b}/ckpt")
    bench_loads(c, f"{b}/m8.json", ["--checkpoint", f"{b}/ckpt"])
    bench_others(c, b)


def bench_loads(c, m8, ck):
    bench_run(c, "staged", m8, *ck, "--ceilings", "--repeat", "3")
    # Before/after in one run: the binary of an earlier commit, when scripts/gpu/gpu-pack packed
    # one (BEFORE=path/to/loadplan scripts/gpu/gpu-pack), alternating with this one.
    if c.before:
        for k in (1, 2):
            bench_run(c, f"before-{k}", m8, *ck, "--repeat", "3", binary=c.before)
            bench_run(c, f"after-{k}", m8, *ck, "--repeat", "3")
    bench_run(c, "naive", m8, *ck, "--naive", "--repeat", "3")
    bench_run(c, "no-derive", m8, *ck, "--no-derive", "--repeat", "3")
    for threads, chunk in (("8", "4"), ("16", "4"), ("12", "2"), ("12", "8")):
        bench_run(c, f"io-{threads}x{chunk}", m8, *ck, "--io-threads", threads,
                  "--chunk-mib", chunk, "--repeat", "2")
    for lanes in ("1", "2", "8"):
        bench_run(c, f"lanes-{lanes}", m8, *ck, "--lanes", lanes, "--repeat", "2")


def bench_others(c, b):
    """--check on 2 layers, --save-derived on 1 (read back), torch's baseline, the table."""
    ck = ["--checkpoint", f"{b}/ckpt"]
    bench_run(c, "check-2l", f"{b}/m2.json", *ck, "--check")
    bench_run(c, "save-1l", f"{b}/m1.json", *ck, "--save-derived", f"{b}/derived")
    saved = f"{b}/derived/derived.safetensors"
    if c.made(saved):
        c.step("saved-derived", 60, ["python3", f"{c.work}/check_saved.py", saved])
    c.remove(f"{b}/derived")
    if c.step("torch-baseline", 120, ["python3", f"{c.work}/torch_baseline.py", f"{b}/ckpt"]) == 0:
        c.tee(c.lines(c.log("torch-baseline")))
    c.report(reports.table, f"{c.work}/bench.jsonl", f"{c.out}/bench.json")


def paths(c):
    """Host-to-device paths for the largest shard of the benchmark's checkpoint (pinned, staged,
    the page cache's own pages registered, by 1-16 threads: bench/h2d_paths.py), cuFile, then
    the process overhead of `loadplan run`."""
    c.say("== host-to-device paths, process overhead")
    b = f"{c.work}/bench"
    if not warm_bench_checkpoint(c):
        return
    shard = largest(glob_args(f"{b}/ckpt/*.safetensors")) or (f"{b}/ckpt/*" if c.dry else "")
    if c.step("h2d-paths", 120, ["python3", "bench/h2d_paths.py", shard]) == 0:
        c.tee(c.lines(c.log("h2d-paths")))
    # GPUDirect Storage through cuFile (the image's nvidia-cufile): what it does here, failure too.
    c.step("cufile", 90, ["python3", "bench/cufile_probe.py", shard])
    c.tee(c.tail(c.log("cufile"), 3))
    process_overhead(c, f"{b}/m8.json", f"{b}/ckpt")


def largest(files):
    """ls -S FILES | head -1: the biggest file ("" when none is there)."""
    sizes = [(-os.path.getsize(f), f) for f in files if os.path.isfile(f)]
    return min(sizes)[1] if sizes else ""


def overhead(c):
    """The process overhead alone (the last step of PARTS=paths)."""
    c.say("== process overhead")
    if warm_bench_checkpoint(c):
        process_overhead(c, f"{c.work}/bench/m8.json", f"{c.work}/bench/ckpt")


def process_overhead(c, m, ck):
    """A `loadplan run` process's wall time (measured outside it) against its load's own wall
    time, with the report's breakdown; eager module loading (the default) and lazy, 3
    processes each. Then the same start and end without a load: loadplan --version (no CUDA),
    and a bare CUDA process (bench_context_exit: context, a 16 GiB cudaMalloc and free) ending
    by main's return, by cudaDeviceReset then _Exit, or by _Exit alone."""
    for mode in ("EAGER", "LAZY"):
        for k in (1, 2, 3):
            log = f"{c.logs}/process-{mode}-{k}.json"
            t0, t1 = c.timed([c.loadplan, "run", m, "--checkpoint", ck, "--format", "json"],
                             stdout=log, stderr="out", env={"CUDA_MODULE_LOADING": mode})
            c.report(reports.process, log, t0, t1, mode)
    for _ in (1, 2, 3):
        t0, t1 = c.timed([c.loadplan, "--version"], stdout="null")
        c.say(f"process: loadplan --version: outer wall {t1 - t0:.3f} s")
    bare = f"{c.gpu}/bin/bench_context_exit"
    if not is_exec(bare):
        return
    for k in (1, 2, 3):
        for mode in ("return", "reset-exit", "exit"):
            log = f"{c.logs}/context-exit-{mode}-{k}.json"
            t0, t1 = c.timed([bare, mode, "16"], stdout=log, stderr="out")
            c.report(reports.context_exit, log, t0, t1)


def kernels(c):
    """Derive-kernel bandwidth beside a device-to-device copy, and the recipe recomputed
    independently with numpy/torch from DESIGN.md's text (scripts/dev/recipe_check.py)."""
    c.say("== derive kernels")
    if c.step("bench-kernels", 90, [f"{c.gpu}/bin/bench_kernels_gpu"]) == 0:
        c.tee(c.lines(c.log("bench-kernels")))
    c.step("recipe-check", 90, ["python3", "scripts/dev/recipe_check.py", "--run",
                                f"{c.gpu}/bin/recipe_dump_test"])
    c.tee(c.tail(c.log("recipe-check"), 5))


def copies(c):
    """Pinned H2D in the staged load's pattern, no reads (bench/h2d_chunks.cc): one run of
    bench_h2d_chunks per ';'-separated COPIES_ARGS set (default "8 24": GIB SLOTS [quick])."""
    sets = env_or("COPIES_ARGS", "8 24").split(";")
    if len(sets) > 1 and sets[-1] == "":
        sets.pop()  # read -ra drops an empty last field
    for k, args in enumerate(sets):
        c.say(f"== pinned H2D copies by chunk size, streams and depth (bench_h2d_chunks {args})")
        if c.step(f"h2d-chunks-{k}", 120, [f"{c.gpu}/bin/bench_h2d_chunks", *args.split()]) == 0:
            c.tee(c.lines(c.log(f"h2d-chunks-{k}")))
