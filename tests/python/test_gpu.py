"""loadplan.load on a GPU into torch (the H200; skipped without CUDA or torch). Run on the H200
on 2026-12-02 (the package built there with pip, 30 passed); skipped on the build machine."""

import gc
import os
import signal
import subprocess
import threading

import pytest

import loadplan
from conftest import TINY

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")]


def _free():
    """Free device memory, torch's cached blocks given back first (they are torch's, not ours)."""
    gc.collect()
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    return torch.cuda.mem_get_info()[0]


def _warm_torch_compare(model):
    """The test's own comparison once over `model`'s tensors: torch's kernels load lazily (device
    memory held for the process) and its results take cached blocks; both before a baseline."""
    for name in model:
        t = torch.from_dlpack(model[name]).reshape(-1).view(torch.uint8)
        torch.equal(t, t.clone())  # a warm-up of the kernels the checks use, not a check
    del t


def test_zero_copy_and_freed_with_the_last_reference(checkpoint):
    torch.cuda.init()
    # The first load in a process loads loadplan's kernels into the context (measured on the
    # H200: 6 MiB, once; torch initialised CUDA first, so loading is lazy): the baseline is
    # taken after one load came and went.
    warm = loadplan.load(TINY, checkpoint)
    del warm
    baseline = _free()
    model = loadplan.load(TINY, checkpoint)
    name = next(iter(model))
    a, b = torch.from_dlpack(model[name]), torch.from_dlpack(model[name])
    assert a.data_ptr() == b.data_ptr() and a.is_cuda
    assert a.numel() * a.element_size() == model.info(name)["bytes"]
    del model, b
    assert _free() < baseline  # a still holds the pool
    del a
    assert _free() == baseline


def test_reload_does_not_grow(checkpoint):
    baseline = _free()
    for _ in range(10):
        model = loadplan.load(TINY, checkpoint)
        sd = model.state_dict()
        assert set(sd) == set(model)
        del model, sd
    assert _free() == baseline


def test_progress_ends_at_total(checkpoint):
    calls = []
    loadplan.load(TINY, checkpoint, progress=lambda d, t: calls.append((d, t)))
    assert calls and calls[-1][0] == calls[-1][1] > 0


def test_ctrl_c_cancels_and_frees(checkpoint):
    baseline = _free()
    signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(0.0, os.kill, (os.getpid(), signal.SIGINT))

    def interrupt_once(done, total):  # SIGINT from another thread once bytes move
        if not timer.is_alive() and not timer.finished.is_set():
            timer.start()

    with pytest.raises(KeyboardInterrupt):
        loadplan.load(TINY, checkpoint, progress=interrupt_once)
        timer.join()
        signal.raise_signal(signal.SIGINT)  # the load ended first: tiny.json is fast
    assert _free() == baseline
    loadplan.load(TINY, checkpoint)  # the next load works


def test_memory_limit_is_a_memory_error(checkpoint):
    with pytest.raises(loadplan.OutOfMemoryError) as e:
        loadplan.load(TINY, checkpoint, memory_limit=1 << 20)
    assert isinstance(e.value, MemoryError) and e.value.requested


def _fds():
    return len(os.listdir("/proc/self/fd"))


def _threads(want=None):
    """Threads of this process; with `want`, waits up to 1 s for the count to settle there (a
    joined Python thread leaves /proc/self/task a moment after join returns)."""
    import time
    for _ in range(100):
        n = len(os.listdir("/proc/self/task"))
        if n == want or want is None:
            return n
        time.sleep(0.01)
    return n


def _expect_clean(checkpoint, baseline, fds, threads):
    """After a fault: device memory, file descriptors and threads as before, a next load works."""
    assert _free() == baseline
    assert _fds() == fds
    assert _threads(threads) == threads, "a thread outlived the load"
    model = loadplan.load(TINY, checkpoint)
    assert len(model) > 0
    del model


def test_ctrl_c_at_spread_moments_frees_everything(checkpoint):
    import time
    loadplan.load(TINY, checkpoint)
    baseline, fds, threads = _free(), _fds(), _threads()
    t0 = time.monotonic()
    loadplan.load(TINY, checkpoint)
    wall = time.monotonic() - t0
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    interrupted = 0
    try:
        for i in range(12):  # 0 .. 1.5 x the wall time: before the load, inside it, after it
            timer = threading.Timer(wall * i / 8, os.kill, (os.getpid(), signal.SIGINT))
            model = None
            try:
                timer.start()
                model = loadplan.load(TINY, checkpoint)
                timer.join()
                time.sleep(0.05)  # a SIGINT sent after the load lands here, inside the try
            except KeyboardInterrupt:
                interrupted += 1
                timer.join()
            del model
            _expect_clean(checkpoint, baseline, fds, threads)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert interrupted == 12  # every SIGINT surfaced as KeyboardInterrupt, in the load or after


def test_out_of_memory_at_each_allocation_names_the_bytes(checkpoint):
    loadplan.load(TINY, checkpoint)
    baseline, fds, threads = _free(), _fds(), _threads()
    peak = loadplan.plan(TINY).load_peak
    for limit in (0, peak - 1):  # the resident pool refused; the pool fits, the arena refused
        with pytest.raises(loadplan.OutOfMemoryError) as e:
            loadplan.load(TINY, checkpoint, memory_limit=limit)
        assert isinstance(e.value, MemoryError) and e.value.requested > 0
        assert "memory limit" in str(e.value)
        _expect_clean(checkpoint, baseline, fds, threads)


def _two_loads_at_once(checkpoint):
    """Two Python threads load at once; both succeed, in distinct memory, with equal bytes."""
    results, errors = [None, None], []

    def load(i):
        try:
            results[i] = loadplan.load(TINY, checkpoint)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    workers = [threading.Thread(target=load, args=(i,)) for i in range(2)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert not errors, errors
    a, b = results
    assert set(a) == set(b)
    for name in a:
        ta, tb = torch.from_dlpack(a[name]), torch.from_dlpack(b[name])
        assert ta.data_ptr() != tb.data_ptr()
        assert torch.equal(ta.reshape(-1).view(torch.uint8), tb.reshape(-1).view(torch.uint8)), name


def test_two_python_threads_load_at_once(checkpoint):
    # One round before the baseline. On the H200 (2026-12-03) the first rounds left free memory
    # 8 MiB below a baseline taken after one load alone (torch's cache emptied); whose those
    # 8 MiB are (the driver's, for two loads' streams at once?) is not yet measured. With the
    # baseline after a round, the test checks that rounds do not accumulate, as a leak would.
    _warm_torch_compare(loadplan.load(TINY, checkpoint))
    _two_loads_at_once(checkpoint)
    baseline, fds, threads = _free(), _fds(), _threads()
    for _ in range(3):
        _two_loads_at_once(checkpoint)
    _expect_clean(checkpoint, baseline, fds, threads)


def test_one_thread_refused_while_the_other_loads(checkpoint):
    loadplan.load(TINY, checkpoint)
    baseline, fds, threads = _free(), _fds(), _threads()
    out = {}

    def load(key, **kw):
        try:
            out[key] = loadplan.load(TINY, checkpoint, **kw)
        except loadplan.OutOfMemoryError as e:
            out[key] = e

    workers = [threading.Thread(target=load, args=("ok",)),
               threading.Thread(target=load, args=("oom",), kwargs={"memory_limit": 0})]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert isinstance(out["oom"], loadplan.OutOfMemoryError)
    assert len(out["ok"]) > 0
    del out
    _expect_clean(checkpoint, baseline, fds, threads)


def test_direct_io_gives_the_same_bytes(checkpoint):
    buffered = loadplan.load(TINY, checkpoint)
    direct = loadplan.load(TINY, checkpoint, direct_io=True)
    assert set(buffered) == set(direct)
    for name in buffered:
        a, b = torch.from_dlpack(buffered[name]), torch.from_dlpack(direct[name])
        assert torch.equal(a.reshape(-1).view(torch.uint8), b.reshape(-1).view(torch.uint8)), name


def test_a_scalar_keeps_its_dtype_and_shape(tmp_path):
    """A 0-d tensor (Apertus' xIELU `beta`) is a typed scalar, not raw bytes: its shape is
    known and empty (the zoo found apertus handed back as uint8[2] on 2026-12-06)."""
    from safetensors.torch import save_file
    save_file({"a.beta": torch.tensor(1.5, dtype=torch.bfloat16),
               "a.w": torch.ones(4, 8, dtype=torch.bfloat16)}, str(tmp_path / "model.safetensors"))
    model = loadplan.load(loadplan.import_model(tmp_path).manifest, tmp_path, 0)
    beta = torch.from_dlpack(model["a.beta"])
    assert beta.shape == () and beta.dtype == torch.bfloat16 and float(beta) == 1.5
    assert torch.from_dlpack(model["a.w"]).shape == (4, 8)


def test_a_reserve_that_leaves_no_room_is_refused_before_any_allocation(checkpoint):
    """api::CheckRoom, as `loadplan run` checks it: the plan's peak plus the reserve against the
    free bytes, exact in the exception, nothing allocated."""
    baseline = _free()
    with pytest.raises(loadplan.OutOfMemoryError, match="Nothing was allocated") as e:
        loadplan.load(TINY, checkpoint, reserve=1 << 50)
    assert e.value.requested > 1 << 50 and e.value.free is not None and e.value.free < 1 << 50
    assert _free() == baseline
