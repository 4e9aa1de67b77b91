#!/bin/sh
# Golden CLI tests: tests/golden/NNNN-name/{args, expect.out|expect.err, status}.
# args: one line of arguments to kitsune (run from the repository root); status: exit code
# (default 0). expect.out is compared with stdout, expect.err with stderr, byte for byte.
set -u
bin=${1:-build/kitsune}
KITSUNE_HOME=$(pwd); export KITSUNE_HOME
pass=0; fail=0
tmp=$(mktemp -d)
for d in tests/golden/*/; do
    [ -f "$d/args" ] || continue
    want=0; [ -f "$d/status" ] && want=$(cat "$d/status")
    # shellcheck disable=SC2046
    eval "set -- $(cat "$d/args")"
    "$bin" "$@" >"$tmp/out" 2>"$tmp/err"; got=$?
    ok=1
    [ "$got" = "$want" ] || { echo "FAIL $d: exit $got, want $want"; ok=0; }
    if [ -f "$d/expect.out" ] && ! cmp -s "$d/expect.out" "$tmp/out"; then
        echo "FAIL $d: stdout differs"; diff "$d/expect.out" "$tmp/out" | head -10; ok=0
    fi
    if [ -f "$d/expect.err" ] && ! cmp -s "$d/expect.err" "$tmp/err"; then
        echo "FAIL $d: stderr differs"; diff "$d/expect.err" "$tmp/err" | head -10; ok=0
    fi
    if [ $ok = 1 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
done
rm -rf "$tmp"
echo "golden: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
