#!/usr/bin/env bash
# The pictures end to end (docs/rendering.md), read by Python's XML parser rather than by the
# writers' own code: the liveness view marks the widest moment and the peak that
# `plan --format json` reports; the full gpt-oss-120b's view fits one screen; every SVG parses;
# PNG output is a real PNG of the SVG's size; bad views, rows and formats are usage errors.
# Usage: pictures.sh LOADPLAN SOURCE_DIR
set -u
L=$(realpath "$1") src=$(realpath "$2")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
n=0 bad=0

source "$src/tests/cli/expect.sh"

"$L" example gpt-oss-120b --layers 2 -o m2.json 2>/dev/null

# check NAME MANIFEST: the liveness view of MANIFEST against its plan's JSON.
check() {
  n=$((n + 1))
  local name=$1 manifest=$2
  if ! "$L" graph $manifest -o "$name.svg" 2>err.txt || ! "$L" plan $manifest --format json \
    >"$name.plan.json" 2>>err.txt; then
    echo "FAIL graph/plan $name: $(cat err.txt)"
    bad=$((bad + 1))
    return
  fi
  if ! python3 - "$name.svg" "$name.plan.json" <<'PY'; then
import json, sys, xml.etree.ElementTree as ET
svg = ET.parse(sys.argv[1]).getroot()
plan = json.load(open(sys.argv[2]))
w, h = float(svg.get("width")), float(svg.get("height"))
assert w <= 1920 and h <= 1200, f"{w} x {h} pixels: more than one screen"
by_class = {}
for el in svg.iter():
    by_class.setdefault(el.get("class"), []).append(el)
widest = plan["widest"]
band = by_class["widest"]
assert len(band) == 1, band
assert int(band[0].get("data-call")) == widest["call"], (band[0].attrib, widest["call"])
assert int(band[0].get("data-bytes")) == widest["bytes"], (band[0].attrib, widest["bytes"])
live = by_class["widest-live"][0].text
names = [b["name"] for b in widest["live"]]
for name in names[:8]:
    assert name in live, (name, live)
if len(names) > 8:
    assert f"+{len(names) - 8} more" in live, live
peak = by_class["peak-label"][0]
assert peak.get("data-phase") == plan["peak"]["phase"], (peak.attrib, plan["peak"])
assert int(peak.get("data-bytes")) == plan["peak"]["max"]["bytes"], (peak.attrib, plan["peak"])
PY
    echo "FAIL the $name liveness view does not show the plan's widest moment and peak"
    bad=$((bad + 1))
  fi
}
check full ""         # the embedded full gpt-oss-120b: one row per layer
check m2 m2.json      # the 2-layer example: one row per buffer

# Rows: one per buffer on request, and then every drawn buffer has its bar.
n=$((n + 1))
"$L" graph m2.json --rows buffers -o rows.svg 2>/dev/null
if ! python3 - rows.svg m2.json <<'PY'; then
import json, sys, xml.etree.ElementTree as ET
bars = [el for el in ET.parse(sys.argv[1]).getroot().iter()
        if (el.get("class") or "").startswith("bar ")]
kinds = [b["kind"] for b in json.load(open(sys.argv[2]))["buffers"].values()]
assert len(bars) == sum(k != "peer" for k in kinds), (len(bars), len(kinds))
PY
  echo "FAIL --rows buffers: not one bar per buffer"
  bad=$((bad + 1))
fi

# Every picture parses as XML: both graph views, the timeline, the capacity map.
n=$((n + 1))
"$L" graph m2.json --view dataflow -o dataflow.svg 2>/dev/null &&
  "$L" timeline m2.json -o timeline.svg 2>/dev/null
"$L" plan --device-memory h200 --svg capacity.svg >/dev/null 2>&1
for f in dataflow.svg timeline.svg capacity.svg; do
  if ! python3 -c "import sys, xml.etree.ElementTree as ET; ET.parse(sys.argv[1])" "$f" 2>err.txt; then
    echo "FAIL $f does not parse: $(cat err.txt)"
    bad=$((bad + 1))
  fi
done

# The timeline's marked peak is at the plan's widest moment, with the plan's call named (on the
# 2-layer example both are the first maximum of the live sources; the JSON's widest is by
# aligned bytes, the timeline's by bytes, and here they agree).
n=$((n + 1))
if ! python3 - timeline.svg m2.plan.json <<'PY'; then
import json, sys, xml.etree.ElementTree as ET
labels = [el.text for el in ET.parse(sys.argv[1]).getroot().iter() if el.get("class") == "peak-label"]
w = json.load(open(sys.argv[2]))["widest"]
call = w["at"].replace(" call ", "#")  # "derive.l0.fc1_s call 0" -> "derive.l0.fc1_s#0"
assert len(labels) == 1 and f"t = {w['call']} (call {call})" in labels[0], (labels, w["call"], call)
PY
  echo "FAIL the timeline's peak is not the plan's widest moment"
  bad=$((bad + 1))
fi

# PNG: the signature, and IHDR's width and height are the SVG's.
n=$((n + 1))
for cmd in "graph m2.json -o g.png" "timeline m2.json -o t.png" "graph m2.json --view dataflow -o d.png"; do
  if ! "$L" $cmd 2>err.txt; then
    echo "FAIL $cmd: $(cat err.txt)"
    bad=$((bad + 1))
  fi
done
"$L" plan --device-memory h200 --svg c.png >/dev/null 2>&1
if ! python3 - <<'PY'; then
import struct, xml.etree.ElementTree as ET
for png, svg in [("g.png", "m2.svg"), ("t.png", "timeline.svg"), ("c.png", "capacity.svg")]:
    data = open(png, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", png
    w, h = struct.unpack(">II", data[16:24])
    root = ET.parse(svg).getroot()
    assert (w, h) == (round(float(root.get("width"))), round(float(root.get("height")))), (png, w, h)
    assert len(data) > 2000, (png, len(data))
open("d.png", "rb").read(8) == b"\x89PNG\r\n\x1a\n" or exit(1)
PY
  echo "FAIL the PNG files are not the SVGs' pictures"
  bad=$((bad + 1))
fi

expect 2 "liveness view is SVG or PNG" "$L" graph m2.json -o x.dot --view liveness
expect 2 "view" "$L" graph m2.json -o x.svg --view sideways
expect 2 "rows" "$L" graph m2.json -o x.svg --rows diagonal
expect 2 "use .svg, .png or .dot" "$L" graph m2.json -o x.jpeg
expect 2 "use .svg, .png or .json" "$L" timeline m2.json -o x.gif
expect 2 "cannot write" "$L" graph m2.json -o "$work/no/such/dir/x.png"

echo "$n checks, $bad failed"
[[ $bad == 0 ]]
