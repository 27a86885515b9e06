#!/usr/bin/env bash
# Every command's output on the examples equals tests/data/golden/ byte for byte
# (scripts/golden-outputs writes both; a difference prints its diff and fails).
set -u
root=$1 loadplan=$2 data=$3
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$root/scripts/golden-outputs" "$tmp" "$loadplan" "$data" || { echo "golden-outputs failed"; exit 1; }
n=$(ls "$root/tests/data/golden" | wc -l)
[ "$n" -ge 20 ] || { echo "only $n golden files"; exit 1; }
[ "$(ls "$tmp" | wc -l)" -eq "$n" ] || { echo "file sets differ"; diff <(ls "$tmp") <(ls "$root/tests/data/golden"); exit 1; }
bad=0
for f in "$root"/tests/data/golden/*; do
  if ! cmp -s "$f" "$tmp/$(basename "$f")"; then
    echo "DIFFERS: $(basename "$f")"; diff "$f" "$tmp/$(basename "$f")" | head -20; bad=1
  fi
done
echo "$n outputs compared"
exit $bad
