#!/bin/sh
# Run every check unit-test binary of a build directory; fail if any fails.
set -u
build=${1:-build}
KITSUNE_HOME=$(pwd); export KITSUNE_HOME
CK_DEFAULT_TIMEOUT=${CK_DEFAULT_TIMEOUT:-60}; export CK_DEFAULT_TIMEOUT
fail=0; n=0
for t in "$build"/tests/check_*; do
    [ -x "$t" ] || continue
    n=$((n + 1))
    "$t" || { echo "FAILED: $t"; fail=$((fail + 1)); }
done
echo "unit: $n test binaries, $fail failed"
[ "$fail" -eq 0 ]
