#!/usr/bin/env bash
# `plan`'s capacity options end to end (docs/capacity.md): --svg draws exactly the frontier
# points `plan --format json` reports (the SVG read by Python's XML parser, not by the writer's
# own code); --at that binds every variable judges at that point; --reserve, --device-memory free
# and their errors.
# Usage: capacity.sh LOADPLAN SOURCE_DIR
set -u
L=$(realpath "$1") src=$(realpath "$2")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
gpt=$src/examples/gpt-oss-120b.json k3=$src/examples/k3-stage.json
n=0 bad=0

source "$src/tests/cli/expect.sh"

# The picture's frontier points are the JSON's, exactly (both tables, the --at ladder value).
n=$((n + 1))
"$L" plan "$gpt" --device-memory h200 --reserve 1GiB --at ctx=5000 --format json --svg cap.svg \
  >plan.json 2>err.txt
rc=$?
if [[ $rc != 1 ]]; then
  echo "FAIL plan --svg: exit $rc: $(cat err.txt)"
  bad=$((bad + 1))
elif ! python3 - cap.svg plan.json <<'EOF'; then
import json, sys, xml.etree.ElementTree as ET
ns = {"s": "http://www.w3.org/2000/svg"}
drawn = set()
for c in ET.parse(sys.argv[1]).getroot().iter("{http://www.w3.org/2000/svg}circle"):
    if c.get("class") == "frontier-point":
        drawn.add((int(c.get("data-table")), c.get("data-pinned"), int(c.get("data-pinned-value")),
                   c.get("data-var"), int(c.get("data-largest"))))
f = json.load(open(sys.argv[2]))["frontier"]
want = set()
for t, table in enumerate(f["tables"]):
    for row in table["rows"]:
        if row["largest"] is not None:
            want.add((t, table["pinned"], row["pinned"][table["pinned"]], row["var"], row["largest"]))
assert drawn == want, (sorted(drawn ^ want))
assert 5000 in f["ladders"]["ctx"], f["ladders"]["ctx"]
assert f["budget"] == 150109106995 - (1 << 30), f["budget"]
print(len(drawn), "points")
EOF
  echo "FAIL: the SVG's frontier points differ from plan --format json"
  bad=$((bad + 1))
fi

# The frontier in text; --at binding every variable judges at that point.
expect 1 "largest batch at each ctx" "$L" plan "$gpt" --device-memory h200
expect 1 "KV token capacity: [0-9]+ tokens" "$L" plan "$gpt" --device-memory h200
expect 0 "judged at this point" "$L" plan "$gpt" --device-memory h200 --at batch=16 --at ctx=131072
n=$((n + 1))  # a point that fits never sits under a shouted box verdict (issue 28)
if "$L" plan "$gpt" --device-memory h200 --at batch=16 --at ctx=131072 | grep -q "DOES NOT FIT"; then
  echo "FAIL: DOES NOT FIT printed where the verdict, at the point, is fits"
  bad=$((bad + 1))
fi
expect 0 "over every admissible value: would not fit" "$L" plan "$gpt" --device-memory h200 --at batch=16 --at ctx=131072
expect 1 "ctx=131072: DOES NOT FIT \(every variable bound" "$L" plan "$gpt" --device-memory h200 --at batch=17 --at ctx=131072
expect 1 "DOES NOT FIT" "$L" plan "$gpt" --device-memory h200 --at batch=16   # ctx stays free
expect 1 "DOES NOT FIT \(every variable bound" "$L" plan "$gpt" --device-memory h200 --reserve 5GiB --at batch=16 --at ctx=131072
expect 1 "nothing fits" "$L" plan "$k3" --device-memory h200

# Errors: what and where.
expect 2 "--reserve 2 parsecs: not a size" "$L" plan "$gpt" --device-memory h200 --reserve "2 parsecs"
expect 2 "leaves no budget" "$L" plan "$gpt" --device-memory h200 --reserve 140GiB
expect 2 "needs --device-memory" "$L" plan "$gpt" --reserve 1GiB
expect 2 "needs --device-memory" "$L" plan "$gpt" --svg x.svg
expect 2 "needs two variables" "$L" plan "$k3" --device-memory h200 --svg x.svg
expect 2 "cannot write" "$L" plan "$gpt" --device-memory h200 --svg /nonexistent/x.svg
# Without a usable GPU, free memory cannot be read; with one, it is the budget.
if nvidia-smi >/dev/null 2>&1; then
  expect 0 "free on GPU 0" "$L" plan "$src/examples/tiny.json" --device-memory free
else
  expect 2 "--device-memory free: cannot read GPU 0: no CUDA device" "$L" plan "$gpt" --device-memory free
fi
expect 2 "cannot read GPU 7" "$L" plan "$gpt" --device-memory free --device 7

echo "$n checks, $bad failures"
[ "$bad" -eq 0 ]
