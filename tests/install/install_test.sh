#!/usr/bin/env bash
# Installs the build tree into a fresh prefix, builds tests/install/consumer against the
# installed package (find_package(loadplan), loadplan::loadplan) and runs it on an example.
#   tests/install/install_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1 src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" >/dev/null
test -x "$work/prefix/bin/loadplan"
test -f "$work/prefix/include/loadplan/api/loadplan.h"
test -f "$work/prefix/lib/cmake/loadplan/loadplanConfig.cmake"
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -G Ninja -S "$src/tests/install/consumer" -B "$work/consumer" -DCMAKE_PREFIX_PATH="$work/prefix" \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo "${launcher[@]}" >/dev/null
cmake --build "$work/consumer" >/dev/null
out=$("$work/consumer/consumer" "$src/examples/tiny.json")
echo "$out"
grep -q '^planned tiny: ' <<<"$out"
"$work/prefix/bin/loadplan" check "$src/examples/tiny.json" >/dev/null
echo "install + consumer: ok"
