"""Entry: python3 -m gpu_check [--dry-run] (scripts/gpu/gpu-check runs it). Reads the
environment as the bash script did, runs the machine's lines then each part of PARTS in order,
the summary printed last; exit 2 for an unknown part or a missing .gpu/bin/loadplan."""

import argparse
import os
import signal
import sys
import traceback
from pathlib import Path

from . import __doc__ as USAGE
from .core import DEFAULT_PARTS, Check, emit, env_or, glob_args, is_exec, now
from .machine import machine
from .parts import PARTS

ROOT = Path(__file__).resolve().parents[3]
HELPERS = Path(__file__).resolve().parent / "helpers"


def parse(argv):
    parser = argparse.ArgumentParser(prog="scripts/gpu/gpu-check", description=USAGE,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dry-run", action="store_true",
                        help="print each command the selected parts would run; run none")
    return parser.parse_args(argv)


def refuse(c, unknown):
    """An unknown part: nothing runs; the line names the parts there are."""
    line = (f"gpu-check: unknown part{'s' if len(unknown) > 1 else ''} {' '.join(unknown)}; "
            f"the parts: {' '.join(PARTS)} (PARTS=help describes them)")
    if not c.dry:
        os.makedirs(c.out, exist_ok=True)
        open(c.summary, "w").close()
    c.say(line)
    return 2


def prepare(c):
    """$OUT and $W/logs, an empty summary, the packed libraries and tools in the environment."""
    if not c.dry:
        os.makedirs(c.out, exist_ok=True)
        os.makedirs(c.logs, exist_ok=True)
        open(c.summary, "w").close()
    lib = os.environ.get("LD_LIBRARY_PATH")
    os.environ["LD_LIBRARY_PATH"] = f"{c.gpu}/lib" + (f":{lib}" if lib else "")
    if os.path.isdir(f"{c.gpu}/graphviz"):
        os.environ["GVBINDIR"] = f"{c.gpu}/graphviz"
    asan = os.environ.get("ASAN_OPTIONS")
    os.environ["ASAN_OPTIONS"] = (f"{asan}:" if asan else "") + "protect_shadow_gap=0"
    os.environ["CUDA_MODULE_LOADING"] = "EAGER"


def write_helpers(c):
    """The Python helpers the steps run under `timeout` (torch's baseline, the saved-derived
    check, evict.py), written into $W."""
    for path in sorted(HELPERS.glob("*.py")):
        c.write(f"{c.work}/{path.name}", path.read_text().replace("@BENCH@", f"{c.root}/bench"))


def run_part(c, name):
    """One part; an error in the check itself ends that part only (as a failing bash line did)."""
    if c.dry:
        emit(f"[dry-run] part {name}")
    try:
        PARTS[name](c)
    except Exception as exc:
        traceback.print_exc()
        why = traceback.format_exception_only(type(exc), exc)[-1].strip()
        c.say(f"{name}: the check failed: {why}")


def finish(c):
    c.say(f"== done in {now() - c.start} s")
    c.run(["tar", "-C", c.work, "-czf", f"{c.out}/logs.tar.gz", "logs", "bench.jsonl"],
          stderr="null")
    emit("")
    if not c.dry:
        with open(c.summary) as f:
            emit(f.read().rstrip("\n"))


def stop(signum, frame):
    raise SystemExit(128 + signum)


def main(argv=None):
    args = parse(argv)
    os.chdir(ROOT)
    dry = args.dry_run or env_or("DRY_RUN", "0") != "0"
    if "help" in env_or("PARTS", DEFAULT_PARTS).split():
        print(USAGE)
        return 0
    c = Check(ROOT, dry)
    unknown = [name for name in c.parts if name not in PARTS]
    if unknown:
        return refuse(c, unknown)
    prepare(c)
    if not is_exec(c.loadplan):
        c.say(f"gpu-check: {c.loadplan} is missing: run scripts/gpu/gpu-pack on the build machine "
              "and carry .gpu")
        if not dry:
            return 2
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGHUP, stop)
    try:
        write_helpers(c)
        machine(c)
        for name in c.parts:
            run_part(c, name)
        finish(c)
    finally:  # every part's tmpfs copy goes at the end, however the check ends
        c.remove(*glob_args("/dev/shm/loadplan-*"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
