"""Functions in the libraries and the CLI are at most 50 lines (issue 28), tables excepted: a
function whose body is one table of rows (conversions, mutators, kernel contracts) is listed
here by name. A brace-matching scan of every .cc/.cu/.h under the library folders: a function
starts at a line that opens a body at namespace level, after a signature."""

import re

from conftest import ROOT

FOLDERS = ["api", "backend", "base", "cli", "expr", "examples", "fuzz", "importer", "kernels",
           "python/src", "simulator", "verifier"]
LIMIT = 50
TABLES = {  # file: function, each one table of rows
    "importer/layouts.cc": "Build",  # transformers' conversions, one row per model_type
    "fuzz/mutators.cc": "Mutators",  # one row per mutator
    "examples/moe.cc": "Families",  # the six expert tensor families
    "examples/kernels.cc": "ServingKernels",  # the serving kernels' contracts
}
NOT_FUNCTION = re.compile(r"^(namespace|struct|class|enum|union|extern|template\s*<.*>\s*(struct|class))\b")
NAMESPACE = re.compile(r'^\s*(namespace\b.*|extern "C"\s*)\{\s*$')


def functions(path):
    """(first line, lines, signature) of each function defined at namespace level: a body
    opened at depth 0 after a signature (which may span lines) with a parameter list."""
    depth, start, head, out = 0, None, None, []
    lines = path.read_text(errors="replace").split("\n")
    for i, line in enumerate(lines):
        code = re.sub(r'"(\\.|[^"\\])*"', '""', re.sub(r"//.*", "", line))
        if NAMESPACE.match(code) or re.match(r"^\s*\}\s*//\s*namespace", line):
            continue
        if depth == 0 and start is None:
            stripped = code.strip()
            if head is None and stripped and not stripped.startswith(("#", "}")):
                head = i  # a declaration or definition starts here
            text = " ".join(lines[head:i + 1]) if head is not None else ""
            if (stripped.endswith("{") and head is not None and ")" in text
                    and not NOT_FUNCTION.match(lines[head].strip()) and "=" not in
                    text.split("(")[0]):
                start = head
            if stripped.endswith((";", "}")) or not stripped:
                head = None
        depth += code.count("{") - code.count("}")
        if start is not None and depth == 0:
            out.append((start + 1, i - start + 1, lines[start].strip()))
            start, head = None, None
        elif depth == 0 and start is None and code.strip().endswith("}"):
            head = None
    return out


def test_functions_are_at_most_fifty_lines():
    long = []
    for folder in FOLDERS:
        for f in sorted((ROOT / folder).rglob("*")):
            if f.suffix not in (".cc", ".cu", ".h"):
                continue
            rel = f.relative_to(ROOT).as_posix()
            for line, n, signature in functions(f):
                table = TABLES.get(rel)
                if n > LIMIT and not (table and re.search(rf"\b{table}\(", signature)):
                    long.append(f"{rel}:{line}: {n} lines: {signature[:80]}")
    assert not long, "functions over 50 lines:\n" + "\n".join(long)


def test_the_scan_finds_functions():
    found = functions(ROOT / "api/load.cc")
    assert len(found) >= 3 and all(n > 0 for _, n, _ in found)
