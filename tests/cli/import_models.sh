#!/usr/bin/env bash
# `loadplan import` of the published models (tests/data/hf: configs as published, skeletons of
# their checkpoints written by scripts/hf_skeleton.py, headers only): each imports, verifies
# clean (`check`: no error, no warning), and `plan` prints its table; the BF16 recipes import
# on the MXFP4 and FP8 models too.
# Usage: import_models.sh LOADPLAN SOURCE_DIR
set -u
L=$(realpath "$1") src=$(realpath "$2")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 "$src/scripts/hf_skeleton.py" --all "$work/models" >/dev/null || { echo "FAIL skeletons"; exit 1; }
n=0 bad=0
one() {  # model, recipe
  local m=$1 recipe=$2 out="$work/$1.$2.json"
  n=$((n + 1))
  local msg
  if ! msg=$("$L" import "$work/models/$m" --recipe "$recipe" -o "$out" 2>&1); then
    echo "FAIL import $m --recipe $recipe: $msg"; bad=$((bad + 1)); return
  fi
  local check
  check=$("$L" check "$out" 2>&1)
  if [[ $? != 0 || $check != *"0 errors, 0 warnings"* ]]; then
    echo "FAIL check $m ($recipe): $(tail -c 400 <<<"$check")"; bad=$((bad + 1)); return
  fi
  local plan
  plan=$("$L" plan "$out" 2>&1)
  if [[ $? != 0 || $plan != *"load peak"* || $plan != *"serve"* ]]; then
    echo "FAIL plan $m ($recipe): $(tail -c 400 <<<"$plan")"; bad=$((bad + 1)); return
  fi
  echo "ok $m ($recipe): $(head -1 <<<"$msg")"
}
for m in $(ls "$src/tests/data/hf"); do
  [ -d "$src/tests/data/hf/$m" ] && one "$m" auto
done
one gpt-oss-20b mxfp4-bf16
one gpt-oss-20b none
one deepseek-v3 fp8-bf16
echo "$n imports, $bad failures"
[ "$n" -ge 12 ] && [ "$bad" -eq 0 ]
