# The check the CLI test scripts share; source it after setting n=0 bad=0.
# expect RC PATTERN CMD...: exit code RC and combined output matching the extended regex.
expect() {
  local want=$1 pattern=$2
  shift 2
  n=$((n + 1))
  local out rc
  out=$("$@" 2>&1 </dev/null)
  rc=$?
  if [[ $rc != "$want" ]] || ! grep -qE -- "$pattern" <<<"$out"; then
    echo "FAIL [$*]: exit $rc (want $want), output: $(head -c 600 <<<"$out")"
    bad=$((bad + 1))
  fi
}
