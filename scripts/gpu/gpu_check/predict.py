"""Load-time prediction against measurement (predict, docs/load-time.md) and the room on the
device (room, docs/capacity.md)."""

import os

from . import reports
from .core import grep_after, grep_lines, text_lines
from .shared import bench_checkpoint, cat_step, fincore


def predict(c):
    """Calibrate this machine, predict the 8-layer load hot and cold with plan --machine, run it
    from the page cache and from an evicted file, then run --fit's ranked configurations and
    compare: predict.json, predict.tar.gz, profile.json."""
    c.say("== load-time prediction")
    b, p = f"{c.work}/bench", f"{c.work}/predict"
    c.mkdir(b, p)
    if c.step("calibrate", 150, [c.loadplan, "calibrate", "--choose-io", "-o",
                                 f"{c.out}/profile.json", "--dir", c.work]):
        return
    c.tee(c.grep(c.log("calibrate"), "^calibrate:"))
    if not bench_checkpoint(c):
        return
    machine = ["--machine", f"{c.out}/profile.json"]
    predict_hot_cold(c, b, p, machine)
    predict_fit(c, b, p, machine)
    c.report(reports.predict_table, p)
    c.run(["cp", f"{p}/predict.json", f"{c.out}/predict.json"])
    c.run(["tar", "-C", c.work, "-czf", f"{c.out}/predict.tar.gz", "predict", "logs/calibrate.log"])


def predict_hot_cold(c, b, p, machine):
    m8, ck = f"{b}/m8.json", f"{b}/ckpt"
    for cache in ("hot", "cold"):
        plan = [c.loadplan, "plan", m8, *machine, "--cache", cache]
        c.run([*plan, "--format", "json"], stdout=f"{p}/plan-{cache}.json")
        c.tee(text_lines(c.capture(plan))[-6:])
    cat_step(c, "warm-page-cache", 60, ck)
    c.step("run-hot", 120, [c.loadplan, "run", m8, "--checkpoint", ck, *machine, "--repeat", "3",
                            "--format", "json"])
    c.run(["cp", c.log("run-hot"), f"{p}/run-hot.json"])
    c.step("evict", 60, ["python3", f"{c.work}/evict.py", ck])
    fincore(c, ck)
    c.step("run-cold", 120, [c.loadplan, "run", m8, "--checkpoint", ck, *machine,
                             "--format", "json"])
    c.run(["cp", c.log("run-cold"), f"{p}/run-cold.json"])
    cat_step(c, "warm-page-cache-2", 60, ck)


def predict_fit(c, b, p, machine):
    """--fit 20GiB: the naive plan (28.4 GiB) does not fit, the staged ones do; a few of the
    ranked configurations that fit are run."""
    m8 = f"{b}/m8.json"
    fit = [c.loadplan, "plan", m8, *machine, "--fit", "20GiB"]
    c.run([*fit, "--format", "json"], stdout=f"{p}/fit.json")
    c.tee(grep_after(text_lines(c.capture(fit)), "^Fit in", 8))
    c.value(reports.fit_args, f"{p}/fit.json", f"{p}/fit-args.txt")
    for k, args in enumerate(fit_lines(c, f"{p}/fit-args.txt")):
        c.run([c.loadplan, "plan", m8, *machine, *args, "--format", "json"],
              stdout=f"{p}/plan-fit{k}.json")
        c.step(f"run-fit{k}", 60, [c.loadplan, "run", m8, "--checkpoint", f"{b}/ckpt", *machine,
                                   *args, "--repeat", "3", "--format", "json"])
        c.run(["cp", c.log(f"run-fit{k}"), f"{p}/run-fit{k}.json"])


def fit_lines(c, path):
    """The argument words of each line of fit-args.txt (one placeholder under the dry run)."""
    if c.dry:
        return [["<FIT-ARGS>"]]
    if not os.path.isfile(path):
        return []
    return [line.split() for line in c.lines(path)]


def room(c):
    """`plan --device-memory free` reads the GPU; `run`'s default reserve is calibrate's context
    measurement; a reserve past the free memory stops the load before its first allocation
    (exit 3, nothing allocated: the device's used memory after equals before)."""
    c.say("== room: --device-memory free, run --reserve")
    r = f"{c.work}/room"
    c.mkdir(r)
    plan = c.capture([c.loadplan, "plan", "examples/gpt-oss-120b.json", "--device-memory", "free"],
                     stderr="out")
    c.tee(grep_lines(text_lines(plan), "^device memory|budget|fits|NOT FIT"))
    if c.step("room-gen", 60, [c.loadplan, "gen", "examples/tiny.json", "-o", f"{r}/ckpt"]):
        return
    tiny = [c.loadplan, "run", "examples/tiny.json", "--checkpoint", f"{r}/ckpt"]
    c.step("room-default", 60, [*tiny, "--format", "json"])
    c.report(reports.room_default, c.log("room-default"), errors_to_summary=True)
    used0 = memory_used(c)
    c.step("room-refused", 60, [*tiny, "--reserve", "1TiB"])
    used1 = memory_used(c)
    c.tee(line[line.index("short"):] for line in c.grep(c.log("room-refused"), "short"))
    c.say(f"room: device memory used before {used0} MiB, after the refused run {used1} MiB")


def memory_used(c):
    return c.capture(["nvidia-smi", "--query-gpu=memory.used", "--format=csv,noheader,nounits",
                      "-i", "0"], dry="?").rstrip("\n")
