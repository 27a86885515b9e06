"""The exceptions loadplan raises, and the mapping from the C++ library's error kinds."""

from __future__ import annotations

import re
from typing import Any, Optional, Sequence


class LoadplanError(Exception):
    """Base class of every loadplan exception."""


class ManifestError(LoadplanError, ValueError):
    """The manifest has verification errors; ``diagnostics`` lists every one of them."""

    def __init__(self, message: str, diagnostics: Sequence[Any] = ()) -> None:
        super().__init__(message)
        self.diagnostics = list(diagnostics)


class OptionError(LoadplanError, ValueError):
    """An option loadplan cannot use (a placement policy, an ``at`` value, a device size)."""


class CheckpointError(LoadplanError, OSError):
    """The checkpoint cannot be read or does not match the plan (a tensor missing, wrong size)."""


class InputFileError(LoadplanError, OSError):
    """A manifest file that cannot be read: missing, not a regular file (a FIFO, a device, a
    directory: refused before any read), or over the parser's size limit."""


class _MissingInputFile(InputFileError, FileNotFoundError):
    """An InputFileError that is also a FileNotFoundError (the path does not exist)."""


class DeviceError(LoadplanError, RuntimeError):
    """No usable GPU, or a CUDA error other than out of memory."""


class OutOfMemoryError(LoadplanError, MemoryError):
    """An allocation was refused (device memory or ``memory_limit``).

    ``requested``: the bytes asked for (exact); ``free``: the device's free bytes as the
    message states them (its GiB text, two decimals); None where the message does not say.
    """

    def __init__(self, message: str) -> None:
        super().__init__(message)
        m = re.search(r" of [0-9.]+ GiB \((\d+) bytes\) failed", message)
        self.requested: Optional[int] = int(m.group(1)) if m else None
        self.free = _gib(r"([0-9.]+) GiB free of", message)
        room = re.search(r"= \S+ \S+ \((\d+) B\), but GPU .* has \S+ \S+ \((\d+) B\) free", message)
        if room:  # api::CheckRoom: the load and its reserve against the free bytes, exact
            self.requested, self.free = int(room.group(1)), int(room.group(2))


class CancelledError(LoadplanError):
    """The load was cancelled."""


class InternalError(LoadplanError, RuntimeError):
    """An independent checker caught a loadplan bug; please report it."""


def _gib(pattern: str, message: str) -> Optional[int]:
    m = re.search(pattern, message)
    return int(float(m.group(1)) * (1 << 30)) if m else None


def from_status(kind: str, message: str, during: str) -> LoadplanError:
    """The exception for a C++ ``base::Status`` (``kind`` is ``base::ErrorKindName``)."""
    if kind == "I/O error" and during == "read":
        missing = message.endswith("No such file or directory")
        return (_MissingInputFile if missing else InputFileError)(message)
    if kind == "invalid input":
        return CheckpointError(message) if during in ("load", "import") else OptionError(message)
    classes = {
        "I/O error": CheckpointError,
        "out of memory": OutOfMemoryError,
        "device error": DeviceError,
        "cancelled": CancelledError,
        "option": OptionError,
    }
    return classes.get(kind, InternalError)(message)
