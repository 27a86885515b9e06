"""Every relative link in docs/ and README.md opens a file of the repository, and every
repository path a doc names in backticks exists (issue 28: docs cited files that had moved or
were never in the repository)."""

import re

import pytest

from conftest import ROOT

DOCS = sorted((ROOT / "docs").rglob("*.md")) + [ROOT / "README.md"]
TOP = {p.name for p in ROOT.iterdir() if p.is_dir() and not p.name.startswith(".")}
TOP -= {"build", "build-asan", "build-py"}
SUFFIX = re.compile(r"\.(cc|h|cu|py|md|sh|json|txt|csv|svg|cmake)$")
LINK = re.compile(r"\]\(([^)\s]+)\)")
CODE = re.compile(r"`([^`\s]+)`")


def links(doc):
    for target in LINK.findall(doc.read_text()):
        if re.match(r"^[a-z]+:", target) or target.startswith("#"):
            continue  # a URL or an anchor in the same page
        yield target.split("#")[0]


def named_paths(doc):
    """Backticked words that are paths in the repository: a top-level folder, a '/', a file
    suffix; placeholders (DIR, N, <...>, *, $VAR) and outputs of commands are not."""
    for word in CODE.findall(doc.read_text()):
        word = word.rstrip(".,:;)").split(":")[0]
        head = word.split("/")[0]
        if "/" not in word or head not in TOP or not SUFFIX.search(word):
            continue
        if re.search(r"[*<>$]|\bDIR\b|\bMODEL\b|\bN\b|X\.|stage-\d", word):
            continue
        yield word


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(doc):
    missing = [t for t in links(doc) if not (doc.parent / t).exists()]
    assert not missing, f"{doc.relative_to(ROOT)} links to missing files: {missing}"


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_named_repository_paths_exist(doc):
    missing = sorted({p for p in named_paths(doc) if not (ROOT / p).exists()})
    assert not missing, f"{doc.relative_to(ROOT)} names missing paths: {missing}"
