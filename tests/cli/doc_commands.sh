#!/usr/bin/env bash
# Runs every `loadplan` command shown in README.md, examples/README.md and docs/*.md, so the
# docs cannot name a file or a command that does not exist:
# - code-block lines starting with `$L ` or `loadplan ` run in order, in one scratch directory
#   that has examples/, scripts/ and ../shared/ (so later commands see earlier outputs), and so
#   do the lines starting with `python3 scripts/` (the docs' helpers: model skeletons);
# - inline `loadplan CMD ARGS` spans run too; a bare `loadplan CMD` (or a synopsis with
#   placeholders: FILE, [--x], ...) must at least name a command (`CMD --help` exits 0).
# Each must exit 0, except `run` and `calibrate` without a GPU (exit 3, "no CUDA device") and `plan` over
# --device-memory (exit 1, "DOES NOT FIT"). Headings are not commands. The only
# rewrite: `--cases N` becomes `--cases 3` (the fuzz properties, kept short for CI).
# Usage: doc_commands.sh LOADPLAN SOURCE_DIR SHARED_DIR
set -u
loadplan=$(realpath "$1") src=$(realpath "$2") shared=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/cwd"
ln -s "$src/examples" "$work/cwd/examples"
ln -s "$src/scripts" "$work/cwd/scripts"
ln -s "$shared" "$work/shared"
docs=("$src/README.md" "$src/examples/README.md" "$src"/docs/*.md)
n=0 bad=0

fail() { echo "FAIL $*"; bad=$((bad + 1)); }

# Lines of fenced code blocks that are loadplan commands, "file<TAB>command".
block_commands() {
  awk '/^[[:space:]]*```/ { inside = !inside; next }
       inside && /^[[:space:]]*(\$L|loadplan) / { sub(/^[[:space:]]*(\$L|loadplan) /, ""); print FILENAME "\t" $0 }
       inside && /^[[:space:]]*python3 scripts\// { sub(/^[[:space:]]*/, ""); print FILENAME "\t!" $0 }' "${docs[@]}"
}
# Inline `loadplan ...` spans, "file<TAB>span" (a span cut by a line end still names its command).
inline_commands() {
  for f in "${docs[@]}"; do
    grep -v '^#' "$f" | grep -o '`loadplan [^`]*`\?' | sed -e 's/^`loadplan //' -e 's/`$//' | sed "s|^|$f\t|"
  done
}

run_one() {  # file, command text
  local file=$1 cmd=$2
  cmd=${cmd%%#*}                                           # the trailing comment
  if [[ $cmd == '!'* ]]; then                              # a python3 scripts/ helper line
    n=$((n + 1))
    local pout
    pout=$(cd "$work/cwd" && eval "timeout 300 ${cmd#!}" 2>&1 </dev/null) ||
      fail "$file: ${cmd#!}: $(tail -c 400 <<<"$pout")"
    return
  fi
  cmd=$(sed -E 's/--cases [0-9]+/--cases 3/' <<<"$cmd")
  local word=${cmd%% *}
  [[ $word =~ [A-Z] ]] && return                           # `loadplan COMMAND --help`: a placeholder
  n=$((n + 1))
  if ! "$loadplan" "$word" --help >/dev/null 2>&1; then
    fail "$file: \`loadplan $word\` is not a command"
    return
  fi
  # A synopsis or a bare command name: naming the command is all it can show.
  if [[ $cmd == "$word" || $cmd == "$word " || $cmd =~ [A-Z]{3,}|\[|\.\.\. ]]; then return; fi
  local out rc
  out=$(cd "$work/cwd" && eval "timeout 300 \"$loadplan\" $cmd" 2>&1 </dev/null)
  rc=$?
  if [[ ($word == run || $word == calibrate) && $rc == 3 && $out == *"no CUDA device"* ]]; then
    return
  fi
  # `plan --device-memory` exits 1 when the peak does not fit, and says so (README's example).
  if [[ $word == plan && $rc == 1 && $out == *"DOES NOT FIT"* ]]; then return; fi
  [[ $rc == 0 ]] || fail "$file: loadplan $cmd: exit $rc: $(tail -c 400 <<<"$out")"
}

while IFS=$'\t' read -r file cmd; do run_one "$file" "$cmd"; done < <(block_commands; inline_commands)
echo "$n commands, $bad failures"
[ "$n" -ge 10 ] && [ "$bad" -eq 0 ]
