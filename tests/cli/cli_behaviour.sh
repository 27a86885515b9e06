#!/usr/bin/env bash
# The command line as a newcomer meets it (docs/cli.md): exit codes, usage errors without
# CLI11 internals, --help with defaults and examples, JSON output on error paths, non-UTF-8
# file names, colour only on a terminal, generated completion, and gen's guards.
# Usage: cli_behaviour.sh LOADPLAN SOURCE_DIR
set -u
L=$(realpath "$1") src=$(realpath "$2")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
tiny=$src/examples/tiny.json
n=0 bad=0

source "$src/tests/cli/expect.sh"
# refuse PATTERN CMD...: the output must not match (CLI11 internals).
refuse() {
  local pattern=$1
  shift
  n=$((n + 1))
  if "$@" 2>&1 </dev/null | grep -qE -- "$pattern"; then
    echo "FAIL [$*]: output matches '$pattern'"
    bad=$((bad + 1))
  fi
}

# Exit codes and usage errors.
expect 2 "cannot open nofile.csv: No such file" "$L" place nofile.csv
expect 2 "apply to the exact and best" "$L" place "$src/tests/data/rules/B1.json" --policy first-fit --work-budget 9
expect 2 "not a directory" "$L" gen "$tiny" -o /etc/passwd
expect 2 "name a manifest" "$L" gen -o out
expect 2 "must|not an integer from 1" "$L" fuzz --cases -5
expect 2 "not an integer from 1" "$L" fuzz --cases 0
expect 2 "not an integer from 1 to 1000000000" "$L" fuzz --cases 1100000000

# Inputs that are not regular files: one way to open an input (base/input_file.h), refused at
# once and never read (a FIFO used to hang; /dev/zero grew until std::bad_alloc).
mkfifo fifo
mkdir -p zero-config zero-index fifo-shard
ln -s /dev/zero zero-config/config.json
printf '\x02\x00\x00\x00\x00\x00\x00\x00{}' >zero-config/model.safetensors
ln -s /dev/zero zero-index/model.safetensors.index.json
echo '{"weight_map": {"a": "s.safetensors"}}' >fifo-shard/model.safetensors.index.json
mkfifo fifo-shard/s.safetensors
expect 2 "cannot read fifo: a FIFO, not a regular file" timeout 10 "$L" check fifo
expect 2 "cannot read /dev/zero: a character device" timeout 10 "$L" plan "$tiny" --machine /dev/zero
expect 2 "cannot read fifo: a FIFO" timeout 10 "$L" plan "$tiny" --machine fifo
expect 2 "config.json: a character device" timeout 10 "$L" import zero-config -o m.json
expect 2 "index.json: a character device" timeout 10 "$L" import zero-index -o m.json
expect 2 "s.safetensors: a FIFO" timeout 10 "$L" import fifo-shard -o m.json
expect 2 "cannot read fifo: a FIFO" timeout 10 "$L" place fifo
# A model folder given to `run` (the front door, api::ResolveSource): import it first, exit 2.
expect 2 "zero-config is a model folder: make its manifest with .loadplan import" timeout 10 "$L" run zero-config --checkpoint zero-config
expect 2 "cannot read /dev/zero: a character device" timeout 10 "$L" place /dev/zero
expect 2 "did you mean 'check'" "$L" chek x.json
expect 2 "loadplan plan: unknown option '--lane'; did you mean '--lanes'\\?" "$L" plan "$tiny" --lane 2
expect 2 "unknown option '--max-bach'; did you mean '--max-batch'" "$L" import x --max-bach 3
expect 2 "already bound" "$L" plan "$tiny" --at batch=1 --at batch=2
expect 2 "--layers applies to" "$L" example tiny --layers 3
expect 2 "--reserve: not a size: lots" "$L" run "$tiny" --checkpoint nowhere --reserve lots
expect 2 "read_bytes \(--read-mib\) 8388608 B is not in \[4 KiB, chunk_bytes 4194304 B\]" "$L" run "$tiny" --checkpoint nowhere --read-mib 8
expect 2 "read_bytes \(--read-mib\) applies to buffered reads, not direct_io \(--direct\)" "$L" run "$tiny" --checkpoint nowhere --read-mib 1 --direct
expect 2 "--io-threads: .0. is not an integer from 1 to 256" "$L" run "$tiny" --checkpoint nowhere --io-threads 0
expect 2 "'yaml' is not one of: text, json" "$L" check "$tiny" --format yaml
expect 2 "'nope' is not one of" "$L" example nope
for args in "check $tiny --format yaml" "example yaml" "plan --lanes 0" "plan --help" "check --help"; do
  # shellcheck disable=SC2086
  refuse 'ENUM|FAILED|->[0-9]|in \[[0-9]' "$L" $args
done
expect 0 "Example:" "$L" plan --help
expect 0 '--format text\|json=text' "$L" check --help
expect 0 "1000" "$L" fuzz --help

# JSON output: errors of plan, several files of check, J3 with the same keys, non-UTF-8 names.
printf '{"schema": 1, "name": "x", "buffers": {"a": {"kind": "weight"}}}' > bad.json
expect 1 '"code": "S3"' "$L" plan bad.json --format json
out=$("$L" plan bad.json --format json 2>/dev/null)
python3 -c 'import json,sys; d=json.loads(sys.argv[1]); assert isinstance(d, list) and d' "$out" || { echo "FAIL plan json"; bad=$((bad+1)); }
out=$("$L" check "$tiny" bad.json missing.json --format json 2>/dev/null)
python3 - "$out" <<'PY' || { echo "FAIL check several files: $out" | head -c 600; bad=$((bad+1)); }
import json, sys
d = json.loads(sys.argv[1])
files = d["files"]
assert [f["exit"] for f in files] == [0, 1, 2], files
assert files[0]["diagnostics"] == [] and files[0]["errors"] == 0
keys = {"severity", "code", "file", "pointer", "message", "hint", "notes"}
for f in files:
    for x in f["diagnostics"]:
        assert set(x) == keys, x
assert files[2]["diagnostics"][0]["code"] == "J3"
PY
n=$((n + 2))
cp bad.json $'caf\xe9.json'
expect 1 '"file": "caf' "$L" check --format json $'caf\xe9.json'
cp "$tiny" $'caf\xe9.json'
expect 0 '"file"' "$L" plan --format json $'caf\xe9.json'

# Numbers beyond a double are S11 (the rest is still checked), not J1.
python3 -c 'import sys; t=open(sys.argv[1]).read(); open("huge.json","w").write(t.replace("\"shape\": [32]", "\"shape\": [1%s]" % ("0"*308), 1))' "$tiny"
expect 1 'error\[S11\]' "$L" check huge.json

# gen: a 20-digit layer number in a tensor name; a checkpoint larger than the free space.
sed 's/"norm.weight"/"model.layers.99999999999999999999.norm"/' "$tiny" > layers.json
expect 0 'tensors' "$L" gen layers.json --layers 2 -o ckpt
sed 's/"shape": \[32\], "tensor": "norm.weight"/"shape": [1000000000000000], "tensor": "norm.weight"/' "$tiny" > big.json
expect 2 'not enough disk space: .* needs [0-9]{16} bytes' "$L" gen big.json -o big
# gen: a `tensors` buffer's 32 elements in 2 listed tensors of 16 (4 tensors in all), or refused
# in 3 (exit 1, the numbers named).
sed 's/"tensor": "norm.weight"/"tensors": ["norm.1", "norm.0"]/' "$tiny" > parts.json
expect 0 ': 4 tensors' "$L" gen parts.json -o parts
sed 's/"tensor": "norm.weight"/"tensors": ["norm.1", "norm.0", "norm.2"]/' "$tiny" > thirds.json
expect 1 'buffer norm: its 32 elements do not divide evenly among its 3 listed tensors' "$L" gen thirds.json -o thirds

# Colour: on a terminal only, and never with NO_COLOR.
expect 1 'error\[S3\]' "$L" check bad.json
refuse $'\033' "$L" check bad.json
if script -qec true /dev/null >/dev/null 2>&1; then
  expect 1 $'\033\\[1;31merror' script -qec "$L check $work/bad.json" /dev/null
  refuse $'\033' env NO_COLOR=1 script -qec "$L check $work/bad.json" /dev/null
fi

# import: a model folder that is not one, a bad option, a folder whose config is wrong.
expect 2 "not a model folder" "$L" import nodir
expect 2 "'q4' is not one of" "$L" import . --recipe q4
expect 2 "'int3' is not one of" "$L" import . --kv-dtype int3
mkdir -p hf && echo '{"model_type": "mamba", "num_hidden_layers": 1}' > hf/config.json
expect 1 'model_type "mamba" is not one loadplan knows by name' "$L" import hf --strict
expect 1 'found 0' "$L" import hf  # a config and no safetensors
expect 2 "'keras' is not one of" "$L" import hf --layout keras
expect 2 "--kv-bytes-per-token" "$L" import hf --kv-bytes-per-token 0
expect 0 'import' "$L" import --help
expect 2 'holds a control character: a manifest name cannot' "$L" import hf --name $'a\e[31mb\nc'

# Completion generated from the CLI definition: every command and option is in it.
"$L" completion bash > loadplan.bash && bash -n loadplan.bash || { echo "FAIL bash completion"; bad=$((bad+1)); }
expect 0 'place.*--work-budget|--work-budget' "$L" completion bash
expect 0 '#compdef loadplan' "$L" completion zsh
expect 0 "'check:Verify" "$L" completion zsh
if command -v zsh >/dev/null; then "$L" completion zsh | zsh -n || { echo "FAIL zsh completion"; bad=$((bad+1)); }; fi
expect 2 "'fish' is not one of" "$L" completion fish

# Output that cannot be written is an error (exit 2, one line), never exit 0 (issue 28).
expect 2 "cannot write to stdout" bash -c "'$L' check --format json '$tiny' >/dev/full"
expect 2 "cannot write to stdout" bash -c "'$L' plan '$tiny' >/dev/full"
expect 2 "cannot write to stdout: stdout is closed" bash -c "'$L' plan '$tiny' >&-"
expect 2 "cannot write to stdout" bash -c "'$L' completion bash >/dev/full"
expect 2 "cannot write to stdout" bash -c "'$L' --help >/dev/full"
printf 'id,lower,upper,size\n0,0,2,8\n1,1,3,8\n' >two.csv
expect 2 "^place: cannot write to stdout$" bash -c "'$L' place two.csv >/dev/full"
n=$((n + 1))
if [[ $("$L" place two.csv 2>&1 >/dev/full | wc -l) != 1 ]]; then echo "FAIL: place >/dev/full: not one line"; bad=$((bad + 1)); fi
# Numbers out of range are usage errors, not wrapped or taken.
expect 2 "'-1' is not a number of seconds" "$L" place two.csv --time-budget -1
expect 2 "'nan' is not a number of seconds" "$L" place two.csv --time-budget nan
expect 2 "'-1' is not an integer from 0" "$L" fuzz --seed -1 --cases 1
expect 2 "'-1' is not an integer from 0" "$L" gen "$tiny" -o g --seed -1
expect 2 "--fit 0: a size of 0 bytes fits no load" "$L" plan "$tiny" --fit 0

echo "$n checks, $bad failures"
[ "$bad" -eq 0 ]
