#!/bin/sh
# Bad-input corpus: every tests/data/bad/NAME.json has NAME.expect (the exact stderr line) and is
# run as a workload (files named hw-*.json as hardware). Each must exit 2 with that message.
set -u
bin=${1:-build/kitsune}
KITSUNE_HOME=$(pwd); export KITSUNE_HOME
pass=0; fail=0
for f in tests/data/bad/*.json; do
    [ -f "$f" ] || continue
    name=$(basename "$f" .json)
    exp="tests/data/bad/$name.expect"
    case "$name" in
        hw-*) err=$("$bin" predict --hw "$f" --workload nerf 2>&1 >/dev/null); st=$? ;;
        *) err=$("$bin" predict --hw a100 --workload "$f" 2>&1 >/dev/null); st=$? ;;
    esac
    if [ "$st" != 2 ]; then echo "FAIL $f: exit $st, want 2 ($err)"; fail=$((fail + 1)); continue; fi
    if [ ! -f "$exp" ] || [ "$err" != "$(cat "$exp")" ]; then
        echo "FAIL $f: message"; echo "  got:  $err"; [ -f "$exp" ] && echo "  want: $(cat "$exp")"
        fail=$((fail + 1)); continue
    fi
    pass=$((pass + 1))
done
echo "bad inputs: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
