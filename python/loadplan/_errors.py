"""The exceptions loadplan raises, and the mapping from the C++ library's error kinds."""

from __future__ import annotations

import errno
from typing import Any, Optional, Sequence


class LoadplanError(Exception):
    """Base class of every loadplan exception.

    ``problems``: the problems an all-at-once check found (every binding a preflight refused),
    one string each, from the C++ error's typed list; empty when the error is one problem.
    """

    problems: Sequence[str] = ()


class ManifestError(LoadplanError, ValueError):
    """The manifest has verification errors; ``diagnostics`` lists every one of them."""

    def __init__(self, message: str, diagnostics: Sequence[Any] = ()) -> None:
        super().__init__(message)
        self.diagnostics = list(diagnostics)


class OptionError(LoadplanError, ValueError):
    """An option loadplan cannot use (a placement policy, an ``at`` value, a device size)."""


class CheckpointError(LoadplanError, OSError):
    """The checkpoint cannot be read or does not match the plan (a tensor missing, wrong size).

    A failed read carries its place as data (from the C++ error's ``base::ErrorFile`` and
    ``base::ErrorPlace``, not parsed from the message): ``path`` the file, ``errno`` the system's
    error number (None when the file ended early), ``tensor`` the tensor being read (None: the
    header) and ``offset`` the byte in it where the read stopped. None where not known.
    """

    tensor: Optional[str] = None
    offset: Optional[int] = None


class InputFileError(LoadplanError, OSError):
    """A manifest file that cannot be read: missing, not a regular file (a FIFO, a device, a
    directory: refused before any read), or over the parser's size limit. ``path`` is the file;
    ``errno`` the system's error number when the system refused it (None when loadplan did)."""


class _MissingInputFile(InputFileError, FileNotFoundError):
    """An InputFileError that is also a FileNotFoundError (the path does not exist)."""


class DeviceError(LoadplanError, RuntimeError):
    """No usable GPU, or a CUDA error other than out of memory."""


class OutOfMemoryError(LoadplanError, MemoryError):
    """An allocation was refused (device memory, ``memory_limit``, or no room for the load and
    its ``reserve``).

    ``requested``: the bytes asked for; ``free``: the bytes free then, where the library knew
    them (None otherwise). Both are the C++ error's typed figures (``base::ErrorBytes``), not
    read back from the message.
    """

    def __init__(self, message: str, requested: Optional[int] = None,
                 free: Optional[int] = None) -> None:
        super().__init__(message)
        self.requested = requested
        self.free = free


class CancelledError(LoadplanError):
    """The load was cancelled."""


class InternalError(LoadplanError, RuntimeError):
    """An independent checker caught a loadplan bug; please report it."""


def from_status(kind: str, message: str, during: str, requested: Optional[int] = None,
                free: Optional[int] = None, path: Optional[str] = None,
                error_number: Optional[int] = None, tensor: Optional[str] = None,
                offset: Optional[int] = None) -> LoadplanError:
    """The exception for a C++ ``base::Status``, with its typed fields as attributes."""
    error = _error_of(kind, message, during, requested, free, path, error_number)
    if offset is not None:  # base::ErrorPlace: where in the input (a tensor's byte)
        error.tensor, error.offset = tensor or None, offset
    return error


def _error_of(kind: str, message: str, during: str, requested: Optional[int],
              free: Optional[int], path: Optional[str],
              error_number: Optional[int]) -> LoadplanError:
    """The exception for a kind (``kind`` is ``base::ErrorKindName``;
    ``requested``/``free`` its typed bytes, for an out-of-memory error; ``path`` and
    ``error_number`` the file an input error is about and its errno, ``base::ErrorFile``)."""
    if kind == "out of memory":
        return OutOfMemoryError(message, requested, free)
    if kind == "I/O error" and during == "read":
        missing = error_number == errno.ENOENT
        error = (_MissingInputFile if missing else InputFileError)(message)
        error.errno = error_number or None  # OSError's field (its message stays loadplan's)
        error.path = path
        return error
    if kind == "invalid input":
        return CheckpointError(message) if during in ("load", "import") else OptionError(message)
    if kind == "I/O error" and during in ("load", "import"):
        failed = CheckpointError(message)
        failed.errno = error_number or None
        failed.path = path
        return failed
    classes = {
        "I/O error": CheckpointError,
        "out of memory": OutOfMemoryError,
        "device error": DeviceError,
        "cancelled": CancelledError,
        "option": OptionError,
    }
    return classes.get(kind, InternalError)(message)
