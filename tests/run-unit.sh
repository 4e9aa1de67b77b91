#!/bin/sh
# Run the check unit-test binary of every tests/check_*.c in a build directory (stale binaries
# of renamed tests are skipped); fail if any fails.
set -u
build=${1:-build}
KITSUNE_HOME=$(pwd); export KITSUNE_HOME
CK_DEFAULT_TIMEOUT=${CK_DEFAULT_TIMEOUT:-60}; export CK_DEFAULT_TIMEOUT
fail=0; n=0
for src in tests/check_*.c; do
    t="$build/tests/$(basename "$src" .c)"
    [ -x "$t" ] || { echo "FAILED: $t not built"; fail=$((fail + 1)); continue; }
    n=$((n + 1))
    "$t" || { echo "FAILED: $t"; fail=$((fail + 1)); }
done
echo "unit: $n test binaries, $fail failed"
[ "$fail" -eq 0 ]
