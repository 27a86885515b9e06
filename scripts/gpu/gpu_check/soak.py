"""The load path under faults (soak, docs/reliability.md)."""

from .core import env_or, words_joined
from .shared import PKG, build_package, cat_step, small_example

# SIGINT 1.5 s into 30 repeats: the load in flight is cancelled (exit 130, everything freed),
# and --save-derived leaves no temporary behind.
CTRL_C = '''"$1" run "$2" --checkpoint "$3" --repeat 30 --save-derived "$4" & p=$!
    sleep 1.5; kill -INT $p; wait $p; rc=$?; echo "exit $rc"; ls -A "$4" 2>/dev/null | sed "s/^/left: /"
    [[ $rc == 130 ]]'''


def soak(c):
    """`loadplan run`'s Ctrl-C (SIGINT mid-load and mid-repeat: exit 130, "cancelled", no
    temporary of --save-derived left), then the soak in one Python process (scripts/gpu/gpu-soak:
    SOAK_CYCLES load/free cycles of the 2-layer example and SOAK_FAULTS random faults). The
    package is built as scripts/gpu/gpu-python builds it (reused when that part ran first); the
    soak gets what is left of the budget."""
    s = f"{c.work}/soak"
    cycles, faults = env_or("SOAK_CYCLES", "1000"), env_or("SOAK_FAULTS", "100")
    c.say(f"== soak: {cycles} load/free cycles + {faults} faults, 2-layer example")
    ck = small_example(c, s, "soak")
    if ck is None:
        return
    cat_step(c, "soak-page-cache", 60, ck)
    c.step("soak-ctrl-c", 60, ["bash", "-c", CTRL_C, "_", c.loadplan, f"{s}/m2.json", ck,
                               f"{s}/derived"])
    ctrl_c = c.grep(c.log("soak-ctrl-c"), "^exit|cancel|^left")
    c.say(f"soak: run's Ctrl-C: {words_joined(ctrl_c)}")
    if not build_package(c, "soak-package"):
        return
    budget = c.left() - 40
    c.step("soak", 9999, ["env", f"PYTHONPATH={PKG}", f"OUT={c.out}", "python3",
                          "scripts/gpu/gpu-soak", f"{s}/m2.json", ck, "--cycles", cycles,
                          "--faults", faults, "--budget", str(budget), "--log", f"{c.out}/soak.txt",
                          "--csv", f"{c.logs}/soak.csv"])
    c.tee(c.grep(f"{c.out}/soak.txt", "^soak|^cycles|^faults|^problem"))
