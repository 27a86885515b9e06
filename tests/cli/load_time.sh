#!/usr/bin/env bash
# plan --machine / --cache / --fit and calibrate as a user meets them (docs/load-time.md):
# exit codes, the profile's errors with their JSON pointers, the fit verdicts in text and JSON.
# Usage: load_time.sh LOADPLAN SOURCE_DIR
set -u
L=$(realpath "$1") src=$(realpath "$2")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
prof=$src/tests/data/timing/profile.json
n=0 bad=0

source "$src/tests/cli/expect.sh"

"$L" example gpt-oss-120b --layers 2 -o m2.json || exit 1
expect 0 'Load time \(hot page cache, profile: NVIDIA H200, test fixture' "$L" plan m2.json --machine "$prof"
expect 0 'Load time \(cold page cache' "$L" plan m2.json --machine "$prof" --cache cold
expect 0 '"load_time"' "$L" plan m2.json --machine "$prof" --format json
expect 2 "is not one of|hot, cold" "$L" plan m2.json --machine "$prof" --cache warm
expect 2 "cannot open" "$L" plan m2.json --machine nothere.json
sed 's/"pinned_h2d": 55.27e9/"pinned_h2d": -1/' "$prof" >neg.json
expect 2 "/rates/pinned_h2d: expected a number > 0" "$L" plan m2.json --machine neg.json
sed 's/"direct_read"/"direct_reed": 1, "direct_read"/' "$prof" >typo.json
expect 2 "/rates/direct_reed: unknown key" "$L" plan m2.json --machine typo.json
sed 's/"version": 1/"version": 7/' "$prof" >v7.json
expect 2 "/version: 7" "$L" plan m2.json --machine v7.json
# --fit: the 2-layer load's staged peak is ~6.6 GiB, its naive one more.
expect 0 'choice: +staged' "$L" plan m2.json --fit 8GiB --machine "$prof"
expect 0 'built-in H200 default profile' "$L" plan m2.json --fit 8GiB
expect 1 'nothing fits: the smallest peak is .*needs [0-9.]+ GiB more' "$L" plan m2.json --fit 1GiB
expect 2 "--fit lots: not a size" "$L" plan m2.json --fit lots
expect 0 '"choice": 0' "$L" plan m2.json --fit 8GiB --format json
expect 1 '"needs_bytes"' "$L" plan m2.json --fit 1GiB --format json
expect 0 'choice: +staged, lanes 2' "$L" plan m2.json --fit 8GiB --lanes 2
# calibrate: no GPU on CI; with one it measures (scripts/gpu/gpu-check's predict part).
if ! command -v nvidia-smi >/dev/null || ! nvidia-smi >/dev/null 2>&1; then
  expect 3 "no CUDA device" "$L" calibrate -o p.json --dir "$work"  # as run: 3, no device
  expect 3 "no CUDA device" "$L" calibrate --choose-io -o p.json --dir "$work"
fi
echo "$n checks, $bad failed"
((bad == 0))
