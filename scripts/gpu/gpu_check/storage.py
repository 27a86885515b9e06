"""loadplan beside the peer loaders (peers, docs/peers.md), the storage sweep behind run's
defaults (sweep, docs/performance.md) and the full 36-layer gpt-oss-120b from tmpfs (full)."""

import os

from . import reports
from .core import env_or, flags, glob_args, text_lines
from .shared import apparent_size, bench_checkpoint, cat_step, entries, example, fincore, gb
from .shared import install_wheels, run_line, shards, shm_free, site_path, wheels

LOADERS = ["loadplan-raw", "loadplan-job", "instanttensor", "instanttensor-buffered",
           "fastsafetensors", "safetensors"]
LOADPLAN_FLAGS = {"loadplan-raw": ["--no-derive"], "loadplan-job": [],
                  "loadplan-direct": ["--direct", "--no-derive"],
                  "loadplan-direct-job": ["--direct"]}
PEERS_SHM = "/dev/shm/loadplan-peers"


class Peers:
    """The peers part's rows: each loader a fresh process, its result (or FAILED) a row of
    $W/peers/rows.jsonl through bench/peers/table.py; scope: which shards the cold rows read."""

    def __init__(self, c):
        self.c, self.x, self.dir, self.scope = c, f"{c.work}/peers", f"{c.root}/bench/peers", ""

    def row(self, name, storage, k, cmd):
        c, log = self.c, f"peer-{storage.replace(' ', '-')}-{name}-{k}"
        c.remove(c.log(log))  # a warm machine keeps the logs of an earlier call
        c.step(log, 120, cmd)
        if not os.path.isfile(c.log(log)):
            c.write(c.log(log), "SKIPPED (out of time)\n")
        scope = ["--scope", self.scope] if self.scope else []
        c.run(["python3", f"{self.dir}/table.py", "row", "--name", name, "--storage", storage,
               "--run", str(k), *scope, c.log(log)], stdout=f"{self.x}/rows.jsonl", append=True)

    def round(self, storage, ck, m, k, loaders):
        """One run of each loader (cold: evicted first)."""
        for name in loaders:
            if storage == "cold":
                self.evict(ck)
            self.row(name, storage, k, self.loader(name, ck, m))

    def loader(self, name, ck, m):
        if name in LOADPLAN_FLAGS:
            return [self.c.loadplan, "run", m, "--checkpoint", ck, *LOADPLAN_FLAGS[name],
                    "--repeat", "1", "--format", "json"]
        return ["python3", f"{self.dir}/peer_load.py", name, ck, "--prep", "--manifest", m,
                "--json"]

    def evict(self, ck):
        c = self.c  # timeout 60 (no -k), appended to the evictions' log
        c.run(["python3", f"{c.work}/evict.py", ck], stdout=f"{c.logs}/peers-evict.log",
              append=True, stderr="out", limit=60, kill_after=None)


def peers(c):
    """loadplan beside InstantTensor, fastsafetensors, safetensors on the bench part's 8-layer
    checkpoint: from the page cache, from tmpfs (a copy in /dev/shm) and cold (evicted before
    each run), every loader a fresh process; the ceilings beside. The table goes to the
    summary, every run to peers.json."""
    c.say("== peers: loadplan beside InstantTensor, fastsafetensors, safetensors (bench/peers)")
    b, p = f"{c.work}/bench", Peers(c)
    with c.environ(PYTHONPATH=site_path()):
        c.mkdir(b, p.x)
        c.write(f"{p.x}/rows.jsonl", "")
        if not bench_checkpoint(c):
            return
        size = apparent_size(shards(f"{b}/ckpt"))
        c.say(f"checkpoint: {gb(size)} in {len(shards(f'{b}/ckpt'))} shards")
        # The peers' wheels (carried in .whl/); a loader that cannot be imported gets a FAILED row.
        c.step("peers-install", 120, wheels())
        # The torch port of the prep on this GPU against scripts/dev/recipe_check.py's numpy.
        c.step("peers-prep-check", 90, ["python3", f"{p.dir}/test_mxfp4_prep.py",
                                        "--device", "cuda"])
        prep = c.tail(c.log("peers-prep-check"), 1)
        c.say(f"peers: the prep in torch on cuda vs the numpy recipe: {''.join(prep)}")
        peers_page_cache(c, p, b)
        peers_tmpfs(c, p, b)
        peers_cold(c, p, b, size)
        c.remove(PEERS_SHM)
        c.run(["cp", f"{p.x}/rows.jsonl", f"{c.logs}/peers-rows.jsonl"])
        c.tee(text_lines(c.capture(["python3", f"{p.dir}/table.py", "show", f"{p.x}/rows.jsonl",
                                    f"{c.out}/peers.json"])))


def peers_page_cache(c, p, b):
    """Every shard read once first; the ceilings (loadplan's probe, then torch's) beside; two
    runs of each loader, but one of a loader under 3 GB/s in its first (it reads around the
    page cache: a second run measures the disk again)."""
    m8, ck = f"{b}/m8.json", f"{b}/ckpt"
    cat_step(c, "peers-page-cache", 90, ck)
    p.row("loadplan-ceilings", "page cache", 1, [c.loadplan, "run", m8, "--checkpoint", ck,
                                                 "--no-derive", "--ceilings", "--format", "json"])
    p.row("pinned-h2d", "page cache", 1, ["python3", f"{p.dir}/peer_load.py", "pinned-h2d",
                                          "--json"])
    first = [*LOADERS, "fastsafetensors-buffered"]
    p.round("page cache", ck, m8, 1, first)
    slow = c.value(reports.slow_peers, f"{p.x}/rows.jsonl", default=[])
    if slow:
        c.say(f"peers: page cache, one run only (under 3 GB/s: reads around the page cache): "
              f"{' '.join(slow)}")
    cat_step(c, "peers-page-cache-2", 90, ck)
    p.round("page cache", ck, m8, 2, [name for name in first if name not in slow])


def peers_tmpfs(c, p, b):
    """A copy of the checkpoint in /dev/shm (RAM), when PEERS_SHM_GB (40) GB are free there."""
    least, free = env_or("PEERS_SHM_GB", "40"), shm_free(c)
    if free < int(least) * 1000000000:
        c.say(f"peers: tmpfs SKIPPED: /dev/shm has {free / 1e9:.1f} GB free (< {least})")
        return
    c.remove(PEERS_SHM)
    c.mkdir(PEERS_SHM)
    ck = f"{PEERS_SHM}/ckpt"
    if c.step("peers-tmpfs-copy", 120, ["cp", "-r", f"{b}/ckpt", ck]) == 0:
        for k in (1, 2):
            p.round("tmpfs", ck, f"{b}/m8.json", k, LOADERS)
        # tmpfs was read-bound at 12 threads (docs/performance.md, 2026-12-03): more threads.
        for t in (16, 24, 32):
            name = f"peers-tmpfs-threads-{t}"
            if c.step(name, 60, [c.loadplan, "run", f"{b}/m8.json", "--checkpoint", ck,
                                 "--no-derive", "--io-threads", str(t), "--repeat", "1",
                                 "--format", "json"]) == 0:
                run_line(c, c.log(name), f"peers: tmpfs, {t} I/O threads")
    c.remove(PEERS_SHM)


def peers_cold(c, p, b, size):
    """Each loader after eviction, then the disk's direct read rate (dd); the whole checkpoint
    when the budget covers ~1.2 GB/s for every loader, else its 2 biggest shards."""
    ck, m = f"{b}/ckpt", f"{b}/m8.json"
    per = size // 1200000000 + 10
    need = (len(LOADERS) + 2) * per + 40
    if c.left() > need:
        p.scope = f"all {len(shards(ck))} shards, {gb(size)}"
    elif not c.step("peers-subset", 60, ["python3", f"{p.dir}/subset.py", m, ck, "2",
                                         f"{p.x}/cold2"]):
        ck, m = f"{p.x}/cold2", f"{p.x}/cold2/manifest.json"
        p.scope = f"2 biggest shards, {gb(apparent_size(shards(ck), follow=True))}"
    else:
        return
    c.say(f"peers: cold on {p.scope} ({c.left()} s left; the whole checkpoint needs ~{need} s)")
    # The disk's own rate first (the ceiling of every row below), then each loader evicted.
    p.evict(f"{b}/ckpt")
    p.row("disk", "cold", 1, ["python3", f"{p.dir}/disk.py", f"{b}/ckpt", "--streams", "4",
                              "--mib", "2048"])
    p.round("cold", ck, m, 1, ["loadplan-direct", "loadplan-direct-job", *LOADERS])
    fincore(c, ck, stdout=f"{c.logs}/peers-evict.log", append=True, stderr="out")


def sweep(c):
    """loadplan's I/O threads and chunk size (and O_DIRECT) per storage path (SWEEP_PATHS),
    interleaved with the fastest peers and dd, every row a fresh process, two rounds
    (bench/storage_sweep.py): the evidence behind run's defaults. Cold on the 2 biggest
    shards, evicted before every row."""
    c.say("== storage sweep (bench/storage_sweep.py)")
    b, x = f"{c.work}/bench", f"{c.work}/sweep"
    with c.environ(PYTHONPATH=site_path()):
        c.mkdir(b, x)
        if not bench_checkpoint(c):
            return
        install_wheels(c, "sweep-install")
        rows, page_peers, tmpfs_peers = sweep_rows(c)
        todo = env_or("SWEEP_PATHS", "page-cache tmpfs cold").split()
        if "page-cache" in todo:
            cat_step(c, "sweep-page-cache-warm", 90, f"{b}/ckpt")
            sweep_buffered(c, "page-cache", "page cache", f"{b}/ckpt", rows + page_peers)
        if "tmpfs" in todo:
            s = "/dev/shm/loadplan-sweep"
            c.remove(s)
            c.mkdir(s)
            c.run(["cp", "-r", f"{b}/ckpt", f"{s}/ckpt"])
            sweep_buffered(c, "tmpfs", "tmpfs", f"{s}/ckpt", rows + tmpfs_peers)
            c.remove(s)
        if "cold" in todo:
            sweep_cold(c, b, x)
        c.run(["cp", *glob_args(f"{x}/*.json"), f"{c.logs}/"], stderr="null")


def sweep_rows(c):
    """SWEEP_CONFIGS: the buffered rows (T:C, threads x MiB); with the predict part's
    profile.json, the pair `calibrate --choose-io` chose beside run's old constant (default),
    raw and whole job. SWEEP_PAGE_PEERS, SWEEP_TMPFS_PEERS: the peers beside them."""
    rows = flags("--config", env_or("SWEEP_CONFIGS", "default 16:4 16:8 20:4 24:4").split())
    profile = f"{c.out}/profile.json"
    if os.path.isfile(profile):
        x = c.value(reports.chosen_io, profile, default="")
        c.say(f"sweep: calibrate --choose-io chose {x} (threads:MiB); rows default, default:job, "
              f"{x}, {x}:job")
        rows += flags("--config", ["default", "default:job", x, f"{x}:job"])
    page = flags("--peer", env_or("SWEEP_PAGE_PEERS", "instanttensor-buffered").split())
    tmpfs = flags("--peer", env_or("SWEEP_TMPFS_PEERS", "instanttensor").split())
    return rows, page, tmpfs


def sweep_buffered(c, kind, label, ck, rows):
    """One buffered storage path's sweep, then a `run --ceilings` on it."""
    m8 = f"{c.work}/bench/m8.json"
    c.step(f"sweep-{kind}", 150, ["python3", "bench/storage_sweep.py", kind, c.loadplan, m8, ck,
                                  *rows, "--json", f"{c.work}/sweep/{kind}.json"])
    c.tee(c.from_first(c.log(f"sweep-{kind}"), f"| {kind}"))
    c.step(f"sweep-ceilings-{kind}", 90, [c.loadplan, "run", m8, "--checkpoint", ck, "--no-derive",
                                          "--ceilings", "--repeat", "1", "--format", "json"])
    run_line(c, c.log(f"sweep-ceilings-{kind}"), f"sweep: {label}, run --ceilings")


def sweep_cold(c, b, x):
    c.remove(f"{x}/cold2")
    if c.step("sweep-subset", 60, ["python3", "bench/peers/subset.py", f"{b}/m8.json", f"{b}/ckpt",
                                   "2", f"{x}/cold2"]):
        return
    c.step("sweep-cold", 280, ["python3", "bench/storage_sweep.py", "cold", c.loadplan,
                               f"{x}/cold2/manifest.json", f"{x}/cold2",
                               "--config", "default", "--config", "default:direct",
                               "--config", "16:16:direct", "--config", "32:16:direct",
                               "--config", "16:64:direct", "--peer", "fastsafetensors",
                               "--disk", "8:1", "--disk", "64:2", "--json", f"{x}/cold.json"])
    c.tee(c.from_first(c.log("sweep-cold"), "| cold"))


def full(c):
    """The full 36-layer gpt-oss-120b (about 65 GB: more than the machine's 64 GiB disk, so
    from tmpfs only): `loadplan gen` into /dev/shm, then `run` with and without derive beside
    the pinned ceiling, and InstantTensor (MMAP, its tmpfs default) and fastsafetensors raw,
    each a fresh process; FULL_CONFIGS rows interleaved (bench/storage_sweep.py)."""
    c.say("== the full 36-layer gpt-oss-120b from tmpfs")
    f, s = f"{c.work}/full", "/dev/shm/loadplan-full"
    c.mkdir(f)
    free = shm_free(c)
    if free < 75000000000:
        c.say(f"full: SKIPPED: /dev/shm has {free / 1e9:.1f} GB free (< 75)")
        return
    if c.step("full-example", 30, example(c, None, f"{f}/m36.json")):
        return
    c.remove(s)
    c.mkdir(s)
    if c.step("full-gen", 300, [c.loadplan, "gen", f"{f}/m36.json", "-o", f"{s}/ckpt"]):
        c.remove(s)
        return
    size, files = gb(apparent_size([f"{s}/ckpt"])), entries(f"{s}/ckpt")
    c.say(f"full: checkpoint {size} in {files} files (tmpfs)")
    for kind in ("raw", "job"):
        extra = ["--no-derive", "--ceilings"] if kind == "raw" else []
        # One load per process: a second load into re-allocated memory is slower (docs/runtime.md).
        c.step(f"full-run-{kind}", 120, [c.loadplan, "run", f"{f}/m36.json", "--checkpoint",
                                         f"{s}/ckpt", *extra, "--repeat", "1", "--format", "json"])
        run_line(c, c.log(f"full-run-{kind}"), f"full: loadplan {kind}")
    install_wheels(c, "full-peers-install")
    full_sweep(c, f"{f}/m36.json", f"{s}/ckpt")
    for name in ("instanttensor", "fastsafetensors"):
        c.step(f"full-{name}", 120, ["env", f"PYTHONPATH={site_path()}", "python3",
                                     "bench/peers/peer_load.py", name, f"{s}/ckpt", "--json"])
        c.tee(c.tail(c.log(f"full-{name}"), 1), prefix=f"full: {name}: ")
    c.remove(s)


def full_sweep(c, m36, ck):
    """FULL_CONFIGS="T:C[:rR] ...": raw loads with T I/O threads x C MiB chunks (read R MiB at
    a time) interleaved with the defaults and FULL_PEERS, FULL_ROUNDS rounds."""
    configs = env_or("FULL_CONFIGS", "")
    if not configs:
        return
    rows = flags("--config", ["default", *configs.split()])
    rows += flags("--peer", env_or("FULL_PEERS", "instanttensor").split())
    c.step("full-sweep", 300, ["env", f"PYTHONPATH={site_path()}", "python3",
                               "bench/storage_sweep.py", "tmpfs", c.loadplan, m36, ck, *rows,
                               "--rounds", env_or("FULL_ROUNDS", "2"),
                               "--json", f"{c.logs}/full-sweep.json"])
    c.tee(c.from_first(c.log("full-sweep"), "| tmpfs"), prefix="full: ")
