"""loadplan.check: every diagnostic of a manifest (the rules of docs/verifier.md)."""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from typing import Any, Dict, List, Mapping, Sequence, Tuple, Union

from . import _loadplan
from ._errors import ManifestError

ManifestSource = Union[str, "os.PathLike[str]", Mapping[str, Any]]


@dataclass(frozen=True)
class Note:
    """A related place: "written here", "declared here"."""

    pointer: str
    message: str


@dataclass(frozen=True)
class Diagnostic:
    """One problem: a stable rule code, "error" or "warning", a JSON pointer, a fix hint."""

    code: str
    severity: str
    pointer: str
    message: str
    hint: str = ""
    notes: Tuple[Note, ...] = ()
    file: str = ""

    @property
    def is_error(self) -> bool:
        return self.severity == "error"

    def to_dict(self) -> Dict[str, Any]:
        """The keys and values `loadplan check --format json` prints for this diagnostic."""
        d = asdict(self)
        d["notes"] = [asdict(n) for n in self.notes]
        return d

    def __str__(self) -> str:
        return f"{self.file}: {self.severity}[{self.code}] {self.pointer}: {self.message}"


def display_name(source: ManifestSource) -> str:
    """How diagnostics name a manifest: its path, or "<dict>" / "<string>"."""
    if isinstance(source, Mapping):
        return "<dict>"
    if isinstance(source, (bytes, bytearray)) or (
            isinstance(source, str) and source.lstrip().startswith(("{", "["))):
        return "<string>"
    return str(os.fspath(source))


def manifest_text(source: ManifestSource) -> Tuple[str, str]:
    """(text, display name) of a manifest given as a path, JSON text or a dict."""
    if isinstance(source, Mapping):
        return json.dumps(source), display_name(source)
    if isinstance(source, (bytes, bytearray)):
        return bytes(source).decode("utf-8", errors="replace"), display_name(source)
    if isinstance(source, str) and source.lstrip().startswith(("{", "[")):
        return source, display_name(source)
    path = os.fspath(source)
    return _loadplan.read_manifest(path), display_name(source)


def _diagnostic(t: Tuple[Any, ...]) -> Diagnostic:
    """A Diagnostic from the verifier's tuple (python/src/check.cc: DiagnosticTuples)."""
    code, severity, pointer, message, hint, notes, file = t
    return Diagnostic(code=code, severity=severity, pointer=pointer, message=message, hint=hint,
                      notes=tuple(Note(pointer=p, message=m) for p, m in notes), file=file)


def check_text(text: str, file: str) -> List[Diagnostic]:
    return [_diagnostic(t) for t in _loadplan.check_diagnostics(text, file)]


def raise_manifest_error(tuples: Sequence[Tuple[Any, ...]], file: str) -> None:
    """The ManifestError of diagnostics the load's own verification found (no second pass)."""
    _raise_errors([_diagnostic(t) for t in tuples], file)


def _raise_errors(diags: List[Diagnostic], file: str) -> None:
    errors = [d for d in diags if d.is_error]
    if errors:
        lines = "\n".join(str(d) for d in errors[:10])
        more = f"\n... and {len(errors) - 10} more" if len(errors) > 10 else ""
        raise ManifestError(f"{file}: {len(errors)} verification error(s)\n{lines}{more}", diags)


def check(source: ManifestSource) -> List[Diagnostic]:
    """Every diagnostic of a manifest, sorted by pointer then code (errors and warnings).

    ``source`` is a path (str or os.PathLike), manifest JSON text (a str starting with "{"),
    or the manifest as a dict. A file that cannot be read raises OSError.
    """
    return check_text(*manifest_text(source))


def verified_text(source: ManifestSource) -> Tuple[str, str, List[Diagnostic]]:
    """Text, display name and diagnostics of a manifest; ManifestError when it has errors."""
    text, file = manifest_text(source)
    diags = check_text(text, file)
    _raise_errors(diags, file)
    return text, file, diags
