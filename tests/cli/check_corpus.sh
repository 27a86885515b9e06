#!/usr/bin/env bash
# `loadplan check` on every JSONTestSuite file (none is a manifest): each must end in a
# clear error with exit code 1 (valid JSON, not a manifest) or 2 (not JSON), never a
# crash (exit >= 128: a signal), a hang (timeout) or success.
set -u
loadplan=$1 corpus=$2
[ -d "$corpus" ] || { echo "no corpus at $corpus"; exit 1; }
n=0 bad=0
for f in "$corpus"/*.json; do
  n=$((n + 1))
  out=$(timeout 10 "$loadplan" check "$f" 2>&1)
  rc=$?
  case $f in
    */n_*) want="2" ;;   # not JSON
    *) want="1 2" ;;     # y_ and i_: JSON (or implementation-defined), never a manifest
  esac
  if [[ " $want " != *" $rc "* ]] || ! grep -qE 'error\[|cannot|bytes' <<<"$out"; then
    echo "FAIL $f: exit $rc: $(head -c 300 <<<"$out")"
    bad=$((bad + 1))
  fi
done
echo "$n files, $bad failures"
[ "$n" -ge 300 ] && [ "$bad" -eq 0 ]
