#!/usr/bin/env python3
"""check_zoo.py's JSON -> the markdown table of docs/models.md ("The zoo"): one row per
causal-LM model_type, the totals first.

    python3 scripts/dev/zoo/zoo_table.py ZOO_CHECK.json [--zoo ZOO_DIR/zoo.json]
"""
import json
import sys


def cell(text: str, width: int = 90) -> str:
    text = " ".join(str(text).split()).replace("|", "\\|")
    return text if len(text) <= width else text[: width - 3] + "..."


def main() -> int:
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    d = json.load(open(sys.argv[1]))
    zoo = json.load(open(sys.argv[sys.argv.index("--zoo") + 1]))["models"] if "--zoo" in sys.argv else {}
    rows = d["rows"]
    built = [r for r in rows if r["import"] != "not built"]
    passed = [r for r in built if r["import"] == "ok" and r["layout"] == "ok" and
              r["logits"] == "equal" and r["bytes"] in ("equal", "not run")]
    runs = [r for r in built if zoo.get(r["model_type"], {}).get("stage") == "done"]
    passed_runs = [r for r in passed if r in runs]
    print(f"transformers {d['transformers']}, torch {d['torch']}, device {d['device']}: "
          f"{len(rows)} causal-LM model types; {len(built)} build small and save; "
          f"**{len(passed)} of {len(built)} pass** import, layout, bytes and logits "
          f"({len(passed_runs)} of the {len(runs)} whose own forward and reload run). "
          f"Imports: {sum(r['import'] == 'ok' for r in built)} of {len(built)}.\n")
    print("| model_type | import | layout | bytes | logits | cache | why not / notes |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        why = r.get("why", "")
        if not why and r["logits"] not in ("equal", "not run"):
            own = zoo.get(r["model_type"], {})
            if own.get("stage") not in (None, "done"):
                why = f"transformers' own {own['stage']} fails: {own.get('error', '')}"
        print(f"| {r['model_type']} | {cell(r['import'], 40)} | {cell(r['layout'], 60)} | "
              f"{cell(r['bytes'], 30)} | {cell(r['logits'], 60)} | {cell(r['cache'], 50)} | "
              f"{cell(why, 110)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
