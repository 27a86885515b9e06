#!/usr/bin/env bash
# The README's pictures are current: scripts/regen/readme-pictures renders them again and every file
# must equal the committed one in docs/pictures/ (run the script and commit when a renderer
# changes on purpose).
# Usage: readme_pictures.sh LOADPLAN SOURCE_DIR
set -u
L=$(realpath "$1") src=$(realpath "$2")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if ! "$src/scripts/regen/readme-pictures" "$work" "$L" >/dev/null; then
  echo "FAIL scripts/regen/readme-pictures did not run"
  exit 1
fi
bad=0
for f in liveness.svg timeline.svg capacity.svg; do
  if ! cmp -s "$work/$f" "$src/docs/pictures/$f"; then
    echo "FAIL docs/pictures/$f is stale: run scripts/regen/readme-pictures and commit it"
    bad=$((bad + 1))
  fi
  grep -q "docs/pictures/$f" "$src/README.md" || { echo "FAIL README.md does not show $f"; bad=$((bad + 1)); }
done
echo "3 pictures, $bad stale or missing"
[[ $bad == 0 ]]
