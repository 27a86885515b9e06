"""loadplan.plan: the load plan's memory per phase, over the whole variable box."""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Union

from . import _loadplan
from ._check import ManifestSource, verified_text


@dataclass(frozen=True)
class Phase:
    """A phase's peak bytes: the symbolic expression and its bounds over the variable box."""

    name: str
    expr: str
    min: Optional[int]  # bytes; None where the bound is unknown
    max: Optional[int]
    exact: bool  # the max bound is attained (not only an upper bound)
    at: Optional[Dict[str, int]]  # {"min", "max"} at the `at` values, when given


class Plan:
    """A manifest's load plan as `loadplan plan --format json` reports it (see to_dict())."""

    def __init__(self, report: Dict[str, Any]) -> None:
        self._report = report

    def to_dict(self) -> Dict[str, Any]:
        """The report, key for key what `loadplan plan --format json` prints."""
        return copy.deepcopy(self._report)

    @property
    def phases(self) -> List[Phase]:
        out = []
        for p in self._report["phases"]:
            lo, hi = p.get("min"), p.get("max")
            out.append(Phase(name=p["name"], expr=p["expr"],
                             min=lo["bytes"] if lo else None, max=hi["bytes"] if hi else None,
                             exact=bool(hi and hi.get("exact")), at=p.get("at")))
        return out

    @property
    def peak(self) -> Optional[int]:
        """The peak bytes of the load over every admissible variable value."""
        m = self._report["peak"]["max"]
        return m["bytes"] if m else None

    @property
    def peak_phase(self) -> str:
        return self._report["peak"]["phase"]

    def _bytes(self, key: str) -> int:
        return self._report["bytes"][key]

    @property
    def load_peak(self) -> int:
        """Resident pool + staging arena as the plan rounds them."""
        return self._bytes("load_peak")

    @property
    def naive_peak(self) -> int:
        """The baseline: every checkpoint tensor resident together with the derived weights."""
        return self._bytes("naive_peak")

    @property
    def resident_bytes(self) -> int:
        return self._bytes("resident")

    @property
    def arena_bytes(self) -> int:
        return self._bytes("arena")

    @property
    def fits(self) -> Optional[bool]:
        """The verdict `loadplan plan` exits with: whether the peak fits ``device_memory`` at
        the ``at`` point when ``at`` binds every variable, else for every admissible value
        (None: no device given)."""
        d = self._report["device"]
        return d["fits"] if d else None

    def __repr__(self) -> str:
        return (f"Plan({self._report['manifest']!r}, peak={self.peak}, "
                f"load_peak={self.load_peak}, naive_peak={self.naive_peak})")


def plan(manifest: ManifestSource, *, lanes: Optional[int] = None,
         prefetch: Optional[int] = None, placement: str = "",
         at: Union[Mapping[str, int], List[str], None] = None,
         device_memory: Union[str, int, None] = None, naive: bool = False) -> Plan:
    """Plans a manifest's load and computes its memory per phase (`loadplan plan`).

    Options as the command's: ``lanes``, ``prefetch``, ``placement`` ("first-fit",
    "best-fit", ...), ``at`` (variable values: {"tokens": 4096} or ["tokens=4096"]),
    ``device_memory`` (bytes, "139.8GiB" or a preset: "h200"), ``naive`` (the baseline plan).
    Raises ManifestError (with ``diagnostics``) or OptionError.
    """
    text, file, _ = verified_text(manifest)
    at_texts = [f"{k}={v}" for k, v in at.items()] if isinstance(at, Mapping) else list(at or [])
    device = str(device_memory) if device_memory is not None else None
    return Plan(json.loads(_loadplan.plan_json(text, file, lanes, prefetch, placement, at_texts,
                                               device, naive)))
