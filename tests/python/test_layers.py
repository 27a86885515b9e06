"""The include graph of the libraries, seen from outside (issue 28): every `#include` of a
library file goes to its own folder or to one docs/architecture.md places below it. KNOWN lists
arrows still pointing the wrong way, each with its way out (none is left: the registry's
back arrow went with expr/, the importer's with builders/); the test fails when a new one
appears, and when a listed one is gone (so the list stays true)."""

import collections
import re

from conftest import ROOT

# Folders as the libraries they are, and what each may include (docs/architecture.md).
LOW = {"base"}
ALLOWED = {
    "base": set(),
    "expr": LOW,  # size expressions: below the kernel registry and the verifier
    "simulator/placement": LOW,  # a leaf on base alone, as MiniMalloc keeps its solver
    "kernels/registry": LOW | {"expr"},
    "verifier": LOW | {"expr", "kernels/registry"},
    "builders": LOW | {"expr", "kernels/registry", "verifier"},
    "examples": LOW | {"kernels/registry", "verifier", "builders"},
    "simulator/planner": LOW | {"kernels/registry", "verifier", "simulator", "simulator/placement"},
    "simulator/check": LOW | {"kernels/registry", "verifier", "simulator", "simulator/placement"},
    "simulator": LOW | {"kernels/registry", "verifier", "simulator/placement", "simulator/planner"},
    "kernels": LOW | {"kernels/registry"},
}
ALLOWED["backend"] = ALLOWED["simulator"] | {"simulator", "kernels"}
ALLOWED["backend/cuda"] = ALLOWED["backend"] | {"backend"}
ALLOWED["backend/measure"] = ALLOWED["backend/cuda"] | {"backend/cuda"}
ALLOWED["importer"] = LOW | {"verifier", "kernels/registry", "backend", "builders"}
ALLOWED["api"] = ALLOWED["backend/cuda"] | {"backend/cuda", "simulator/check", "importer", "builders"}
ALLOWED["render"] = ALLOWED["api"]
ALLOWED["fuzz"] = ALLOWED["api"] | {"examples", "builders"}
ALLOWED["cli"] = ALLOWED["api"] | {"api", "importer", "render", "examples", "fuzz", "backend/measure"}
ALLOWED["python/src"] = ALLOWED["api"] | {"api", "importer"}

KNOWN: dict = {  # (from, to): the way out, still to take
}


def unit(path):
    for u in sorted(ALLOWED, key=len, reverse=True):
        if path == u or path.startswith(u + "/"):
            return u
    return None


def include_edges():
    edges = collections.defaultdict(set)  # (from, to) -> files
    for f in ROOT.rglob("*"):
        rel = f.relative_to(ROOT).as_posix()
        if f.suffix not in (".cc", ".h", ".cu") or rel.split("/")[0].startswith(("build", ".")):
            continue
        u = unit(rel)
        if u is None:
            continue
        for inc in re.findall(r'^#include "([^"]+)"', f.read_text(errors="replace"), re.M):
            v = unit(inc)
            if v is not None and v != u:
                edges[(u, v)].add(rel)
    return edges


def test_every_include_goes_down_or_is_a_listed_exception():
    edges = include_edges()
    wrong = {e: sorted(files)[:3] for e, files in edges.items()
             if e[1] not in ALLOWED[e[0]] and e not in KNOWN}
    assert not wrong, f"includes that point up or sideways: {wrong}"


def test_the_listed_exceptions_still_exist():
    edges = include_edges()
    gone = [e for e in KNOWN if e not in edges]
    assert not gone, f"fixed: take these out of KNOWN: {gone}"


def test_placement_is_a_leaf_on_base():
    edges = include_edges()
    assert {v for (u, v) in edges if u == "simulator/placement"} <= {"base"}
