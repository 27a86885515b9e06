"""Deployments under torchrun: world size 1 (deploy, docs/deploy.md "Running a deployment") and
every GPU of the machine (multi, issue 14)."""

import re

from .core import glob_args, words_joined
from .shared import PKG, build_package, cat_step, gpu_count, shm_free, small_example

REFUSED = '"$1" run "$2" --checkpoint "$3"; rc=$?; echo "exit $rc"; [[ $rc == 2 ]]'
ONE_STAGE = '{"deployment": "one", "stages": [{"manifest": "m2.json"}]}\n'
TWO_STAGES = '{"deployment": "two", "stages": [{"manifest": "m2.json"}, {"manifest": "m2.json"}]}\n'
# NVLink multicast off (the lent machines' KINDS.md says why).
NO_MULTICAST = {"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1",
                "NVSHMEM_DISABLE_NVLS": "1"}
MULTI_SHM = "/dev/shm/loadplan-multi"


def deploy(c):
    """A 1-stage deployment of the 2-layer example through `loadplan run` and through Python's
    load, each started by torchrun; then a 2-stage deployment started as one process (refused:
    exit 2, the fix named)."""
    c.say("== deployment under torchrun (world size 1)")
    d = f"{c.work}/deploy"
    ck = small_example(c, d, "deploy")
    if ck is None:
        return
    c.write(f"{d}/d1.json", ONE_STAGE)
    c.write(f"{d}/d2.json", TWO_STAGES)
    c.step("deploy-torchrun", 120, ["torchrun", "--nproc-per-node", "1", "--no-python", c.loadplan,
                                    "run", f"{d}/d1.json", "--checkpoint", ck, "--format", "json"])
    found = c.grep(c.log("deploy-torchrun"), '"(stage|launcher|world_size|gbps)"')
    # grep | tr -s ' ' | tr '\n' ' ' | sed 's/^/deploy: run: /', then echo: one line
    c.say("deploy: run: " + words_joined(re.sub(" +", " ", x) for x in found) if found else "")
    if not build_package(c, "deploy-package"):
        return
    c.step("deploy-torchrun-python", 120, ["env", f"PYTHONPATH={PKG}", "torchrun",
                                           "--nproc-per-node", "1", "scripts/gpu/deploy_check.py",
                                           f"{d}/d1.json", ck])
    c.tee(c.tail(c.log("deploy-torchrun-python"), 2), prefix="deploy: python: ")
    c.step("deploy-refused", 60, ["bash", "-c", REFUSED, "_", c.loadplan, f"{d}/d2.json", ck])
    c.tee(c.tail(c.log("deploy-refused"), 2), prefix="deploy: 2 stages, 1 process: ")


def multi(c):
    """The whole gpt-oss-120b (hf_skeleton + import, `gen` into /dev/shm) split by `import
    --pipeline N` over every GPU; the ceilings of all GPUs at once (bench/deploy/ceilings.py);
    `torchrun --nproc-per-node N` loads, raw and whole job, aggregated over the ranks' reports
    (bench/deploy/aggregate.py); then Python's load of the same deployment with an NCCL check of
    the boundaries and an all-reduce (scripts/gpu/deploy_check.py --nccl). One GPU: PP1."""
    m = f"{c.work}/multi"
    c.remove(m, MULTI_SHM)  # a killed run's leftovers first, then the free space
    n = gpu_count(c)
    if n < 1:
        c.say("multi: SKIPPED: nvidia-smi lists no GPU")
        return
    c.say(f"== several GPUs: gpt-oss-120b in {n} pipeline stages under torchrun")
    free = shm_free(c)
    if free < 75000000000:
        c.say(f"multi: SKIPPED: /dev/shm has {free / 1e9:.1f} GB free (< 75)")
        return
    c.mkdir(m, MULTI_SHM)
    with c.environ(**NO_MULTICAST):
        if not multi_prepare(c, m, n):
            return
        for kind in ("raw", "job"):
            multi_load(c, m, n, kind)
        if not build_package(c, "multi-package"):
            return
        c.step("multi-nccl", 200, ["env", f"PYTHONPATH={PKG}", "torchrun", "--nproc-per-node",
                                   str(n), "scripts/gpu/deploy_check.py", f"{m}/pp/deploy.json",
                                   f"{MULTI_SHM}/ckpt", "--nccl"])
        c.tee(c.grep(c.log("multi-nccl"), "^rank "), prefix="multi: ")
        c.run(["cp", "-r", f"{m}/raw", f"{m}/job", *glob_args(f"{m}/*.json"), f"{c.logs}/"],
              stderr="null")
        c.remove(MULTI_SHM)


def multi_prepare(c, m, n):
    """The manifest, its N-stage split, the plan, the checkpoint in /dev/shm read once (the
    first reader of fresh tmpfs pages pays for them), the ceilings of all GPUs at once."""
    imports = [c.loadplan, "import", f"{m}/hf", "--max-batch", "64", "--max-ctx", "8192"]
    skeleton = ["python3", "scripts/hf_skeleton.py", "gpt-oss-120b", f"{m}/hf"]
    for name, cmd in (("multi-skeleton", skeleton),
                      ("multi-import", [*imports, "-o", f"{m}/m.json"]),
                      ("multi-split", [*imports, "--pipeline", str(n), "-o", f"{m}/pp"])):
        if c.step(name, 60, cmd):
            return False
    c.step("multi-plan", 60, [c.loadplan, "plan", f"{m}/pp/deploy.json", "--device-memory", "h200"])
    c.tee(c.from_first(c.log("multi-plan"), "deployment"))
    if c.step("multi-gen", 300, [c.loadplan, "gen", f"{m}/m.json", "-o", f"{MULTI_SHM}/ckpt"]):
        return False
    cat_step(c, "multi-warm", 120, f"{MULTI_SHM}/ckpt")
    c.step("multi-ceilings", 60, ["python3", "bench/deploy/ceilings.py", "--json",
                                  f"{m}/ceilings.json"])
    c.tee(c.lines(c.log("multi-ceilings")))
    return True


def multi_load(c, m, n, kind):
    """One load under torchrun, raw (--no-derive, against the copy ceilings) or the whole job,
    one report per rank, then the aggregate: the window from the first start to the last end,
    each GPU's peak against its stage's prediction."""
    extra = ["--no-derive"] if kind == "raw" else []
    c.step(f"multi-load-{kind}", 200, ["env", f"RANK_OUT={m}/{kind}", "torchrun",
                                       "--nproc-per-node", str(n), "--no-python",
                                       "scripts/gpu/rank_report", c.loadplan, "run",
                                       f"{m}/pp/deploy.json", "--checkpoint", f"{MULTI_SHM}/ckpt",
                                       *extra, "--format", "json"])
    if not c.made_any(f"{m}/{kind}/rank-*.json"):
        c.say(f"multi: {kind}: no rank wrote a report (logs/multi-load-{kind}.log)")
        return
    ceilings = ["--ceilings", f"{m}/ceilings.json"] if c.made(f"{m}/ceilings.json") else []
    c.step(f"multi-aggregate-{kind}", 30, ["python3", "bench/deploy/aggregate.py",
                                           *glob_args(f"{m}/{kind}/rank-*.json"), *ceilings,
                                           "--json", f"{m}/aggregate-{kind}.json"])
    c.tee(c.lines(c.log(f"multi-aggregate-{kind}")), prefix=f"multi: {kind}: ")
