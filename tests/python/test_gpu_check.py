"""The GPU check (scripts/gpu/gpu-check, the package scripts/gpu/gpu_check) on this CPU machine:
a fake .gpu/ in a tmp dir (GPU_DIR) whose gtest binaries are shell scripts (one passing, one
failing, one hanging past its time box), a fake nvidia-smi and compute-sanitizer on PATH. Every
fake records how it was called, so a test sees what ran and with which arguments."""

import ast
import json
import os
import re
import subprocess
import sys
import tarfile
import time

import pytest

from conftest import ROOT

GPU = ROOT / "scripts" / "gpu"
sys.path.insert(0, str(GPU))
from gpu_check import core, reports  # noqa: E402
from gpu_check.parts import PARTS  # noqa: E402

RECORD = 'echo "$(basename "$0") $*" >>"$RECORD"\n'
LIST = ("case \"$*\" in *--gtest_list_tests*) printf 'Running main() from gtest_main.cc\\nSuite.\\n"
        "  One\\n  Two  # GetParam() = 1\\nOther/P.\\n  Three/0\\n'; exit 0;; esac\n")
RAN = 'echo "[==========] 3 tests from 2 test suites ran. (5 ms total)"\n'
TESTS = {
    "a_pass": RAN + 'echo "[  PASSED  ] 3 tests."\n',
    "b_fail": RAN + ('case "$*" in *filter=Suite.One*|*filter=Other*) echo "[  PASSED  ] 1 test."; '
                     'exit 0;; esac\necho "[  PASSED  ] 2 tests."\necho "[  FAILED  ] 1 test, '
                     'listed below:"\necho "[  FAILED  ] Suite.Two"\nexit 1\n'),
    "c_hang": "sleep $HANG &\nwait\n",  # past any box; its child is in its process group
    "d_late": RAN + 'echo "[  PASSED  ] 3 tests."\n',
}
REPORT = {"gbps": 10.5, "median_run": 0, "runs": [{"wall_s": 1.0, "read_s": 0.5, "copy_s": 0.3,
          "derive_s": 0.1, "slot_wait_s": 0.01}], "measured": {"peak_used_delta": 0,
          "peak_allocated": 2**30}, "predicted": {"peak": 2**30}}
LOADPLAN = RECORD + f"""out=; prev=; for a in "$@"; do [ "$prev" = -o ] && out=$a; prev=$a; done
case "$1" in
  example) echo '{{}}' >"$out" ;;
  gen) mkdir -p "$out"; echo '{{}}' >"$out/model.safetensors.index.json"; echo x >"$out/model-1.safetensors" ;;
  run) case "$*" in *--help*) exit 0;; esac; echo '{json.dumps(REPORT)}' ;;
esac
"""
FAKES = {  # on PATH
    "nvidia-smi": RECORD + 'echo "NVIDIA H100 80GB HBM3, 81559 MiB, 0 MiB, 580.65, 1980 MHz, 5, 16"\n',
    "compute-sanitizer": RECORD + ('[ "$1" = --version ] && { echo "Version 2025.1"; exit 0; }\n'
                                   'echo "========= ERROR SUMMARY: 0 errors"\n'),
    "python3": RECORD + "exit 1\n",
}
# Every program the check may start from PATH: under the dry run none may start.
EVERY_COMMAND = ["python3", "nvidia-smi", "compute-sanitizer", "torchrun", "fincore", "df",
                 "getconf", "tar", "cp", "sh", "bash", "env", "timeout"]


def script(path, body):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)


def fake_gpu(tmp_path, tests, python3=False):
    """.gpu/ (bin/loadplan, tests/*, MANIFEST) and bin/ (nvidia-smi, compute-sanitizer and, with
    python3, a python3 that fails) under tmp_path."""
    gpu = tmp_path / "gpu"
    script(gpu / "bin" / "loadplan", LOADPLAN)
    for name in ("bench_kernels_gpu", "recipe_dump_test"):
        script(gpu / "bin" / name, RECORD + "echo kernels\n")
    for name in tests:
        script(gpu / "tests" / name, RECORD + LIST + TESTS[name])
    (gpu / "MANIFEST").write_text("loadplan abc1234\npacked here\nthird line\n")
    for name, body in FAKES.items():
        if name != "python3" or python3:
            script(tmp_path / "bin" / name, body)
    return gpu


def check(tmp_path, *args, path=None, cmd=None, **env):
    """The check as the machine runs it, with OUT, WORK, GPU_DIR and RECORD under tmp_path."""
    base = {"PATH": path or f"{tmp_path / 'bin'}:{os.environ['PATH']}", "HOME": str(tmp_path),
            "OUT": str(tmp_path / "out"), "WORK": str(tmp_path / "work"),
            "GPU_DIR": str(tmp_path / "gpu"), "RECORD": str(tmp_path / "record")}
    cmd = cmd or [sys.executable, "-m", "gpu_check"]
    return subprocess.run([*cmd, *args], cwd=GPU, env={**base, **env}, capture_output=True,
                          text=True, timeout=60)


def summary(tmp_path):
    return (tmp_path / "out" / "summary.txt").read_text()


def record(tmp_path):
    path = tmp_path / "record"
    return path.read_text().splitlines() if path.exists() else []


def running(token):
    """Processes whose command line holds token."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if token in f.read().split(b"\0"):
                    found.append(pid)
        except OSError:
            pass
    return found


def test_verdicts_ok_failed_timed_out_and_skipped(tmp_path):
    """BUDGET 22: each box is clipped to what is left less 15 s, so the hanging test gets 5-7 s,
    times out (its process group killed), and the next one is SKIPPED (out of time)."""
    fake_gpu(tmp_path, ["a_pass", "b_fail", "c_hang", "d_late"])
    hang = f"987.{os.getpid()}{time.time_ns() % 10**6}"  # a token for this run's hanging child
    t0 = time.monotonic()
    done = check(tmp_path, PARTS="tests", BUDGET="22", HANG=hang)
    assert done.returncode == 0, done.stderr
    assert time.monotonic() - t0 < 15
    text = summary(tmp_path)
    assert re.search(r"^test-a_pass: ok \(\d+ s\)$", text, re.M)
    assert "  a_pass: [  PASSED  ] 3 tests." in text
    assert re.search(r"^test-b_fail: FAILED rc=1 \(\d+ s\)$", text, re.M)
    assert "  b_fail: [  FAILED  ] Suite.Two" in text
    assert re.search(r"^test-c_hang: TIMED OUT after [5-7]s \([5-8] s\)$", text, re.M), text
    assert "test-d_late: SKIPPED (out of time)" in text
    assert not running(hang.encode()), "the hanging test's child outlived its time box"
    tests_txt = (tmp_path / "out" / "tests.txt").read_text()
    assert "[  FAILED  ] Suite.Two" in tests_txt and "== a_pass" in tests_txt
    assert text.startswith("== machine: ") and "NVIDIA H100 80GB HBM3" in text
    assert "loadplan abc1234\npacked here\n== GPU tests" in text  # MANIFEST's first 2 lines
    assert done.stdout.endswith(text)  # the summary is printed last
    assert (tmp_path / "work" / "logs" / "a_pass.xml").parent.is_dir()


def test_shuffled_records_the_seed_and_runs_each_test_alone(tmp_path):
    fake_gpu(tmp_path, ["a_pass", "b_fail"])
    done = check(tmp_path, PARTS="shuffled", SHUFFLE_SEED="7")
    assert done.returncode == 0, done.stderr
    text, ran = summary(tmp_path), record(tmp_path)
    assert "== GPU tests shuffled (seed 7) and one by one" in text
    assert "  b_fail (shuffled, seed 7): [  FAILED  ] Suite.Two" in text
    logs = tmp_path / "work" / "logs"
    assert f"a_pass --gtest_shuffle --gtest_random_seed=7 --gtest_output=xml:{logs}/shuffle-a_pass.xml" in ran
    assert "a_pass --gtest_list_tests" in ran
    for name in ("Suite.One", "Suite.Two", "Other/P.Three/0"):
        assert f"a_pass --gtest_filter={name}" in ran and f"b_fail --gtest_filter={name}" in ran
    assert "  a_pass alone: 3 passed, 0 failed" in text
    assert "  b_fail: Suite.Two FAILED alone" in text
    assert "  b_fail alone: 2 passed, 1 failed" in text
    assert (logs / "alone-a_pass-Other_P.Three_0.log").exists()


def test_a_random_seed_is_recorded(tmp_path):
    fake_gpu(tmp_path, ["a_pass"])
    check(tmp_path, PARTS="shuffled")
    seed = re.search(r"seed (\d+)\)", summary(tmp_path)).group(1)
    assert f"a_pass --gtest_shuffle --gtest_random_seed={seed} " in " ".join(record(tmp_path))


def test_an_unknown_part_is_refused(tmp_path):
    fake_gpu(tmp_path, ["a_pass"])
    done = check(tmp_path, cmd=[str(GPU / "gpu-check")], PARTS="tests bogus")
    assert done.returncode == 2
    line = next(x for x in done.stdout.splitlines() if "unknown part bogus" in x)
    assert all(f" {name} " in line for name in PARTS)
    assert record(tmp_path) == []  # nothing ran, not even the tests named before it


def test_a_missing_loadplan_is_refused(tmp_path):
    done = check(tmp_path, PARTS="tests", GPU_DIR=str(tmp_path / "nothing"))
    assert done.returncode == 2
    assert "nothing/bin/loadplan is missing" in summary(tmp_path)


def test_the_dry_run_of_every_part_prints_commands_and_runs_none(tmp_path):
    fake_gpu(tmp_path, ["a_pass", "b_fail"])
    shims = tmp_path / "shims"
    for name in EVERY_COMMAND:
        script(shims / name, RECORD)
    done = check(tmp_path, "--dry-run", path=str(shims), PARTS=" ".join(PARTS))
    assert done.returncode == 0, done.stderr
    assert record(tmp_path) == [], "the dry run ran commands"
    assert not (tmp_path / "out").exists() and not (tmp_path / "work").exists()
    sections = re.split(r"^\[dry-run\] part (\S+)$", done.stdout, flags=re.M)
    shown = dict(zip(sections[1::2], sections[2::2]))
    assert list(shown) == list(PARTS)
    for name, text in shown.items():
        commands = [x for x in text.splitlines() if x.startswith("[dry-run] ")
                    and not x.startswith(("[dry-run] report ", "[dry-run] rm -rf "))]
        assert commands, f"part {name} shows no command"
    assert f"{tmp_path}/gpu/tests/b_fail --gtest_output=xml:" in shown["tests"]
    assert "--gtest_filter=" in shown["shuffled"] and "--tool racecheck" in shown["sanitizer"]


def test_dry_run_by_the_environment(tmp_path):
    fake_gpu(tmp_path, ["a_pass"])
    done = check(tmp_path, PARTS="kernels", DRY_RUN="1")
    assert "[dry-run] step bench-kernels (90 s): " in done.stdout
    assert record(tmp_path) == []


def test_the_70b_rank_is_made_checked_and_timed_without_the_package(tmp_path):
    fake_gpu(tmp_path, ["a_pass"])
    done = check(tmp_path, PARTS="ranks", RANKS_CASES="llama70", RANKS_TP="8", DRY_RUN="1")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "transformers_load.py make " in out and " llama70b-16" in out
    assert "--tensor-parallel 8" in out
    assert re.search(r"loadplan run \S+/ranks-llama70/rank-0.json .*--check", out), out
    assert "bench/slice_paths.py" in out and "slice-paths-llama70.json" in out
    assert "--lanes 1 4" in out  # the rank on fewer lanes than its manifest's 16
    assert "pip install" not in out  # no case of it needs the Python package
    assert record(tmp_path) == []


def test_the_default_parts_bring_back_at_most_eight_files(tmp_path):
    fake_gpu(tmp_path, ["a_pass", "b_fail"], python3=True)
    done = check(tmp_path)
    assert done.returncode == 0, done.stderr
    out = tmp_path / "out"
    files = sorted(p.name for p in out.iterdir())
    assert files == ["bench.json", "bench.txt", "logs.tar.gz", "sanitizer.txt", "summary.txt",
                     "tests.txt"]
    text = summary(tmp_path)
    heads = [x for x in text.splitlines() if x.startswith("== ")]
    assert heads[1:5] == ["== GPU tests", "== derive kernels", "== load benchmark", "== compute-sanitizer"]
    assert heads[-1].startswith("== done in ")
    rows = json.loads((out / "bench.json").read_text())
    assert [r["name"] for r in rows][:3] == ["staged", "naive", "no-derive"]
    assert re.search(r"^staged\s+10\.50\s+1\.000", text, re.M)
    assert "torch-baseline: FAILED rc=1" in text and "memcheck b_fail: ========= ERROR SUMMARY" in text
    with tarfile.open(out / "logs.tar.gz") as tar:
        names = tar.getnames()
    assert "logs/test-a_pass.log" in names and "bench.jsonl" in names


def test_step_kills_what_ignores_sigterm(tmp_path):
    """timeout -k 5: SIGKILL after SIGTERM (here after 0.3 s: the same code)."""
    t0 = time.monotonic()
    rc = core.spawn(["sh", "-c", "trap '' TERM; sleep 7"], limit=0.3, kill_after=0.3)
    assert rc == 137 and time.monotonic() - t0 < 3
    assert core.spawn(["sleep", "7"], limit=0.3) == 124
    assert core.spawn([str(tmp_path / "none")], limit=5, stdout=subprocess.DEVNULL) == 127
    assert core.verdict(137, 9) == "TIMED OUT after 9s" and core.verdict(3, 9) == "FAILED rc=3"


def test_step_skips_below_five_seconds(tmp_path, monkeypatch):
    for name, value in {"BUDGET": "19", "OUT": str(tmp_path), "WORK": str(tmp_path)}.items():
        monkeypatch.setenv(name, value)
    c = core.Check(tmp_path)
    assert c.step("late", 100, ["false"]) == 124
    assert (tmp_path / "summary.txt").read_text() == "late: SKIPPED (out of time)\n"


def test_text_helpers():
    lines = ["a", "Fit in 20GiB", "1", "2", "b", "Fit in x", "3"]
    assert core.grep_after(lines, "^Fit in", 1) == ["Fit in 20GiB", "1", "--", "Fit in x", "3"]
    assert core.from_first(lines, "b") == ["b", "Fit in x", "3"]
    assert core.text_lines("x\ny\n") == ["x", "y"] and core.text_lines("") == []
    assert core.words_joined(["x", "y"]) == "x y "


def test_reports(tmp_path):
    log = tmp_path / "run.log"
    log.write_text("noise\n" + json.dumps({**REPORT, "ceilings": {"pinned_h2d_gbps": 25.0}}))
    line = list(reports.run_line(str(log), "sweep"))[0]
    assert line.startswith("sweep: 10.50 GB/s (1.000 s; read 0.500") and "0.420 of it" in line
    assert json.loads(next(reports.collect("staged", str(log))))["name"] == "staged"
    fit = tmp_path / "fit.json"
    fit.write_text(json.dumps({"fit": {"candidates": [
        {"fits": True, "naive": False, "lanes": k, "prefetch": 1, "placement": "p"} for k in range(7)]}}))
    reports.fit_args(str(fit), str(tmp_path / "fit-args.txt"))
    assert (tmp_path / "fit-args.txt.ranks").read_text().split() == ["0", "1", "2", "4", "5", "6"]
    rows = tmp_path / "rows.jsonl"
    rows.write_text('{"name": "a", "storage": "page cache", "raw_gbps": 2}\n'
                    '{"name": "b", "storage": "page cache", "raw_gbps": "FAILED"}\n')
    assert reports.slow_peers(str(rows)) == ["a"]


def package_files():
    return sorted((GPU / "gpu_check").glob("*.py"))


def test_functions_are_at_most_fifty_lines():
    long = [f"{path.name}:{node.lineno} {node.name}" for path in package_files()
            for node in ast.walk(ast.parse(path.read_text()))
            if isinstance(node, ast.FunctionDef) and node.end_lineno - node.lineno + 1 > 50]
    assert not long, long


def test_the_check_imports_the_standard_library_only():
    stdlib = set(sys.stdlib_module_names)
    outside = [f"{path.name}: {name}" for path in package_files()
               for node in ast.walk(ast.parse(path.read_text()))
               for name in ([a.name for a in node.names] if isinstance(node, ast.Import) else
                            [node.module] if isinstance(node, ast.ImportFrom) and not node.level
                            else [])
               if name.split(".")[0] not in stdlib]
    assert not outside, outside


def test_the_header_names_every_part():
    header = (GPU / "gpu-check").read_text()
    listed = re.search(r"^# The parts: (.*?); an\n", header, re.M | re.S).group(1)
    names = re.sub(r"\(.*?\)|#|,", " ", listed).split()
    assert sorted(names) == sorted(PARTS)
    usage = sys.modules["gpu_check"].__doc__
    assert all(f"\n  {name} " in usage for name in PARTS)


def test_the_8b_rank_is_timed_the_same_way(tmp_path):
    fake_gpu(tmp_path, ["a_pass"])
    done = check(tmp_path, PARTS="ranks", RANKS_CASES="llama8 llama70", DRY_RUN="1")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert " llama8b-16" in out and " llama70b-16" in out
    assert "slice-paths-llama8.json" in out and "slice-paths-llama70.json" in out
    for name in ["llama8", "llama70"]:  # each checked against the host backend, then removed
        assert re.search(rf"loadplan run \S+/ranks-{name}/rank-0.json .*--check", out), name
        assert re.search(rf"rm -rf \S+/hf-{name} \S+/ranks-{name}", out), name
    assert "pip install" not in out
    assert record(tmp_path) == []


def test_the_gpt_oss_rank_is_timed_without_and_with_its_recipe(tmp_path):
    fake_gpu(tmp_path, ["a_pass"])
    done = check(tmp_path, PARTS="ranks", RANKS_CASES="gptoss-speed", DRY_RUN="1")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert re.search(r"hf_skeleton.py gpt-oss-120b \S+ --layers 16 ", out), out
    assert re.search(r"loadplan gen \S+/gptoss-full.json -o ", out), out
    # Without the recipe by path (rank_speed), with it as a whole load, derive on.
    assert re.search(r"import \S+/hf-gptoss --recipe none --tensor-parallel 8 ", out), out
    assert re.search(r"import \S+/hf-gptoss --tensor-parallel 8 -o \S+/ranks-gptoss-recipe", out)
    assert "slice-paths-gptoss-speed.json" in out
    # The recipe's rank as imported, then on the whole model's settings and fewer calls ahead.
    runs = re.findall(r"loadplan run \S+/ranks-gptoss-recipe/rank-0.json .*--repeat 3(.*?) >", out)
    assert runs == ["", " --lanes 4 --prefetch 1", " --prefetch 1", " --prefetch 4"], runs
    assert "transformers_load.py make" not in out  # the checkpoint is gen's, made once
    assert re.search(r"rm -rf \S+/hf-gptoss \S+/ranks-gptoss-recipe", out), out
    assert "pip install" not in out
    assert record(tmp_path) == []
