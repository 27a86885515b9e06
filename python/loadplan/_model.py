"""loadplan.load: a checkpoint on the GPU in this process, as a mapping of DLPack tensors."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from typing import Any, Callable, Dict, Iterator, Optional

from . import _loadplan
from ._check import ManifestSource, display_name, manifest_text
from ._errors import OptionError

Progress = Callable[[int, int], None]


class Model(Mapping):
    """A loaded model: buffer name -> a zero-copy tensor with ``__dlpack__``.

    ``torch.from_dlpack(model["l0.fc1_w"])`` shares the device memory. The memory is freed
    when this Model and every tensor taken from it are gone. Dtypes frameworks do not share
    (FP4, FP6, FP8) and buffers whose shape depends on variables come as raw ``uint8`` bytes;
    ``info(name)`` gives the manifest's dtype and shape.
    """

    stage: Optional[Dict[str, Any]] = None  # a deployment's stage this process loaded

    def __init__(self, core: "_loadplan.Model") -> None:
        self._core = core
        self._names = core.names()

    def __getitem__(self, name: str) -> Any:
        return self._core.tensor(name)

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in self._core

    def info(self, name: str) -> Dict[str, Any]:
        """name, kind ("weight"/"carry"), exported, dtype, shape, bytes, id (plan buffer id)."""
        return self._core.info(name)

    @property
    def report(self) -> Dict[str, Any]:
        """predicted_peak, resident_bytes, fill_bytes, measured_peak (the backend's allocations
        at their most), measured_used_delta (cudaMemGetInfo's drop at its most), in bytes;
        gbps, wall_s."""
        return self._core.report()

    @property
    def device(self) -> int:
        return self._core.device

    @property
    def device_bytes(self) -> int:
        return self._core.device_bytes

    def state_dict(self, framework: str = "torch") -> Dict[str, Any]:
        """Every tensor as a torch.Tensor sharing this model's memory (needs torch)."""
        if framework != "torch":
            raise ValueError(f"framework {framework!r}: only 'torch' is supported")
        import torch  # optional dependency

        return {name: torch.from_dlpack(self[name]) for name in self._names}

    def __repr__(self) -> str:
        return f"Model({len(self)} tensors, {self.device_bytes} bytes on cuda:{self.device})"


def _bar() -> Progress:
    def show(done: int, total: int) -> None:
        frac = done / total if total else 1.0
        filled = int(frac * 30)
        sys.stderr.write(f"\rloadplan [{'#' * filled}{'.' * (30 - filled)}] "
                         f"{done / 2**30:7.2f} / {total / 2**30:.2f} GiB")
        if done >= total:
            sys.stderr.write("\n")
        sys.stderr.flush()

    return show


def load(manifest: ManifestSource, checkpoint: "str | os.PathLike[str] | None" = None,
         device: int = 0, *,
         io_threads: Optional[int] = None, chunk_bytes: Optional[int] = None,
         machine: "str | os.PathLike[str] | None" = None, memory_limit: Optional[int] = None,
         reserve: int = 0, naive: bool = False, derive: bool = True, direct_io: bool = False,
         slice_read: str = "auto", lanes: Optional[int] = None, rank: Optional[int] = None,
         prefetch: Optional[int] = None, placement: str = "",
         progress: Optional[Progress] = None) -> Model:
    """Verifies, plans and loads a checkpoint folder onto GPU ``device``; returns a Model.

    ``manifest`` may be a Hugging Face model folder: imported with the default options
    (import_model), the folder is then also the checkpoint. It may be a deployment file (docs/deploy.md): under torchrun or mpirun, one
    process per stage, it loads stage RANK on GPU LOCAL_RANK (``device`` does not apply) and
    the Model's ``stage`` says which; with ``rank=r`` it loads stage (or tensor-parallel rank)
    r on ``device``, whatever the environment says. Otherwise ``stage`` is None.

    The GIL is released during the load; Ctrl-C cancels it (KeyboardInterrupt, with every
    byte it allocated freed). ``progress(done, total)`` is called with bytes handed to the
    device; without it a bar is drawn when stderr is a terminal. ``naive``, ``lanes``,
    ``prefetch`` and ``placement`` choose the plan as in plan(); ``derive=False`` runs no
    derive kernel; ``direct_io=True`` reads with O_DIRECT around the page cache (a checkpoint
    that is not cached: docs/runtime.md); ``slice_read`` ("auto", "runs", "span" or "map") reads a
    tensor-parallel slice along a dimension > 0 run by run, as its covering span or out of a
    mapping of its pages, as ``loadplan run --slice-read`` (docs/deploy.md); ``io_threads`` and ``chunk_bytes`` default to the
    ``machine`` profile's pair (``loadplan calibrate --choose-io`` wrote it: docs/load-time.md),
    else to DEFAULT_IO_THREADS and DEFAULT_CHUNK_BYTES, as ``loadplan run --machine``; ``memory_limit`` refuses device allocations beyond that many bytes.
    Before anything is allocated, the plan's peak plus ``reserve`` bytes (what the process needs
    beside the weights) must fit the GPU's free memory, else OutOfMemoryError saying both (the
    check `loadplan run` makes, with its bounds on io_threads, chunk_bytes: OptionError). Raises ManifestError,
    CheckpointError, DeviceError, OutOfMemoryError (a MemoryError) or CancelledError.
    """
    stage, text = None, None
    if _is_path(manifest):  # what it names, as `loadplan run` reads it (api::ResolveSource)
        source = _loadplan.resolve_source(os.fspath(manifest), rank, device)
        stage, device = source["stage"], source["device"]
        if source["folder"]:  # a model folder: imported, and its own checkpoint
            from ._import import import_model
            manifest = import_model(source["folder"]).manifest
            checkpoint = checkpoint if checkpoint is not None else source["folder"]
        else:  # the manifest (named by its path); its text as resolve_source read it, if it did
            manifest, text = source["manifest"], source["text"] or None
    elif rank is not None:
        raise OptionError(f"rank (rank=) {rank}: {display_name(manifest)} is a manifest, not a "
                          "deployment file; rank= picks a stage or tensor-parallel rank of one")
    if checkpoint is None:
        raise OptionError("checkpoint: a manifest needs the checkpoint folder it reads (only a "
                          "model folder is its own)")
    if text is None:
        text, _ = manifest_text(manifest)  # verified once, by the load itself
    if progress is None and sys.stderr.isatty():
        progress = _bar()
    core = _loadplan.load(manifest, text, os.fspath(checkpoint), device, io_threads, chunk_bytes,
                          None if machine is None else os.fspath(machine), memory_limit, reserve,
                          naive, derive, direct_io, slice_read, lanes, prefetch, placement,
                          progress)
    model = Model(core)
    model.stage = stage
    return model


def _is_path(source: ManifestSource) -> bool:
    """A manifest, deployment file or model folder named by its path (not a dict or JSON text)."""
    return not isinstance(source, (Mapping, bytes, bytearray)) and not (
        isinstance(source, str) and source.lstrip().startswith(("{", "[")))
