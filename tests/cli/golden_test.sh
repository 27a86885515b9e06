#!/usr/bin/env bash
# Every command's output on the examples equals tests/data/golden/ byte for byte
# (scripts/regen/golden-outputs writes both; a difference prints its diff and fails).
set -u
root=$1 loadplan=$2 data=$3
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
"$root/scripts/regen/golden-outputs" "$tmp" "$loadplan" "$data" || { echo "golden-outputs failed"; exit 1; }
n=$(ls "$root/tests/data/golden" | wc -l)
[ "$n" -ge 20 ] || { echo "only $n golden files"; exit 1; }
[ "$(ls "$tmp" | wc -l)" -eq "$n" ] || { echo "file sets differ"; diff <(ls "$tmp") <(ls "$root/tests/data/golden"); exit 1; }
# Graphviz writes a graph's subgraphs in the order of their cgraph ids, which its default id
# discipline takes from the addresses of interned strings: the same binary writes the same
# file, but any change to what was allocated before can reorder the clusters (never their
# content or layout). DOT files are therefore compared as sets of lines; everything else
# byte for byte.
same() {
  case $1 in
    *.dot) cmp -s <(LC_ALL=C sort "$1") <(LC_ALL=C sort "$2") ;;
    *) cmp -s "$1" "$2" ;;
  esac
}
bad=0
for f in "$root"/tests/data/golden/*; do
  if ! same "$f" "$tmp/$(basename "$f")"; then
    echo "DIFFERS: $(basename "$f")"; diff "$f" "$tmp/$(basename "$f")" | head -20; bad=1
  fi
done
echo "$n outputs compared"
exit $bad
