"""The GPU tests (.gpu/tests/*, gtest): as they are (PARTS=tests), shuffled then each test alone
(shuffled), under compute-sanitizer (sanitizer); and the fuzz properties over every core
(properties)."""

import glob
import os
import random
import shutil

from .core import env_or, glob_args, nproc, text_lines, words_joined

RESULTS = r"^\[ *(PASSED|SKIPPED) *\] [0-9]+ tests?|^\[  FAILED  \]"
FAILED = r"^\[  FAILED  \]"
# The heavy cases (a backend per plan step, 18 plan variants, full-size kernels) run in
# memcheck only; initcheck and racecheck take the rest.
LIGHT = "-*EveryStep*:*LanesPrefetch*:*FullLayer*:*SpreadMoments*:*EveryProgressReport*"
SANITIZER_SUMMARY = ("ERROR SUMMARY|LEAK SUMMARY|RACECHECK SUMMARY|Device not supported|"
                     "not supported")
SANITIZER_PLACES = ("/usr/local/cuda*/bin/compute-sanitizer",
                    "/usr/local/cuda*/compute-sanitizer/compute-sanitizer",
                    "/opt/nvidia/*/compute-sanitizer")


def binaries(c):
    """for t in "$G"/tests/*."""
    return glob_args(f"{c.gpu}/tests/*")


def gpu_tests(c):
    """Each test binary whole, gtest XML beside its log; its result lines in the summary, its
    failures and its last 40 lines in tests.txt."""
    c.say("== GPU tests")
    for t in binaries(c):
        n = os.path.basename(t)
        c.step(f"test-{n}", 150, [t, f"--gtest_output=xml:{c.logs}/{n}.xml"])
        log = c.log(f"test-{n}")
        c.tee(c.grep(log, RESULTS + r"|tests? from .* ran"), prefix=f"  {n}: ")
        c.append(f"{c.out}/tests.txt", c.grep(log, FAILED))
        c.append(f"{c.out}/tests.txt", [f"== {n}", *c.tail(log, 40)])


def shuffled_tests(c):
    """The GPU tests in every order (issue 29): each binary whole with --gtest_shuffle and a
    recorded seed (SHUFFLE_SEED, else random), then every test alone in its own process. A test
    that passes only beside others, or only after them, fails here."""
    seed = env_or("SHUFFLE_SEED", str(random.randint(1, 9999)))
    c.say(f"== GPU tests shuffled (seed {seed}) and one by one")
    for t in binaries(c):
        n = os.path.basename(t)
        c.step(f"shuffle-{n}", 150, [t, "--gtest_shuffle", f"--gtest_random_seed={seed}",
                                     f"--gtest_output=xml:{c.logs}/shuffle-{n}.xml"])
        c.tee(c.grep(c.log(f"shuffle-{n}"), RESULTS), prefix=f"  {n} (shuffled, seed {seed}): ")
        alone(c, t, n)


def listed_tests(c, t):
    """SUITE.TEST of every test `T --gtest_list_tests` lists."""
    suite, names = "", []
    listed = c.capture([t, "--gtest_list_tests"], dry="Suite.\n  EachTest\n")
    for line in text_lines(listed):
        fields = line.split()
        if line[:1] not in ("", " "):
            suite = fields[0] if fields else ""
        if line.startswith("  "):
            names.append(suite + (fields[0] if fields else ""))
    return names


def alone(c, t, n):
    """Every test of T in its own process (60 s each) while more than 30 s are left."""
    passed = failed = 0
    for name in listed_tests(c, t):
        if c.left() <= 30:
            c.say(f"  {n}: out of time before {name}")
            break
        log = f"{c.logs}/alone-{n}-{name.replace('/', '_')}.log"
        if c.run([t, f"--gtest_filter={name}"], stdout=log, stderr="out", limit=60) == 0:
            passed += 1
        else:
            failed += 1
            c.say(f"  {n}: {name} FAILED alone")
    c.say(f"  {n} alone: {passed} passed, {failed} failed")


def find_sanitizer():
    found = shutil.which("compute-sanitizer")
    if found:
        return found
    places = sorted(p for pattern in SANITIZER_PLACES for p in glob.glob(pattern))
    return places[0] if places else ""


def sanitizer(c):
    """compute-sanitizer memcheck (leak check), initcheck and racecheck over the GPU tests."""
    c.say("== compute-sanitizer")
    cs = find_sanitizer() or ("compute-sanitizer" if c.dry else "")
    if not cs:
        c.say("compute-sanitizer: not available on this machine (not on PATH nor under "
              "/usr/local/cuda*)")
        return
    version = text_lines(c.capture([cs, "--version"], stderr="out"))
    c.say(f"compute-sanitizer: {cs} ({version[-1] if version else ''})")
    for tool in ("memcheck", "initcheck", "racecheck"):
        for t in binaries(c):
            sanitize(c, cs, tool, t)


def sanitize(c, cs, tool, t):
    n = os.path.basename(t)
    extra = ["--leak-check", "full"] if tool == "memcheck" else []
    only = [] if tool == "memcheck" else [f"--gtest_filter={LIGHT}"]
    c.step(f"{tool}-{n}", 100, [cs, "--tool", tool, *extra, "--error-exitcode", "99",
                                "--print-limit", "50", t, *only])
    log = c.log(f"{tool}-{n}")
    summary = words_joined(c.grep(log, SANITIZER_SUMMARY)[:3])
    c.say(f"  {tool} {n}: {summary or 'no summary line (see logs)'}")
    c.append(f"{c.out}/sanitizer.txt", [f"== {tool} {n}", *c.tail(log, 60)])


def properties(c):
    """The fuzz properties at CASES (default 10^6) cases each over every core; the
    per-property table to the summary, shard logs to the tarball."""
    cases, jobs = env_or("CASES", "1000000"), str(nproc())
    c.say(f"== fuzz properties, {cases} cases each, {jobs} shards")
    limit = c.left() - 30
    log = f"{c.logs}/properties.log"
    env = {"BIN": f"{c.gpu}/props", "LOGS": f"{c.logs}/properties", "LIMIT": str(limit)}
    rc = c.run(["scripts/dev/properties-long", cases, jobs], stdout=log, stderr="out", env=env,
               limit=limit)
    c.say(f"properties-long: rc {rc}")
    c.tee(c.lines(log))
    c.run(["cp", log, f"{c.out}/properties.txt"])
