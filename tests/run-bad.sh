#!/bin/sh
# Bad-input corpus: every tests/data/bad/NAME.json has NAME.expect (the exact stderr line) and is
# run as a workload (files named hw-*.json as hardware, trace-*.json and trace-*.csv as a measured
# trace of tests/data/tiny.json for validate --trace). Each must exit 2 with that message.
set -u
bin=${1:-build/kitsune}
KITSUNE_HOME=$(pwd); export KITSUNE_HOME
pass=0; fail=0
for f in tests/data/bad/*.json tests/data/bad/trace-*.csv; do
    [ -f "$f" ] || continue
    name=$(basename "$f"); name=${name%.*}
    exp="tests/data/bad/$name.expect"
    case "$name" in
        hw-*) err=$("$bin" predict --hw "$f" --workload nerf 2>&1 >/dev/null); st=$? ;;
        trace-*) err=$("$bin" validate --trace "$f" --hw a100 --workload tests/data/tiny.json 2>&1 >/dev/null)
            st=$? ;;
        *) err=$("$bin" predict --hw a100 --workload "$f" 2>&1 >/dev/null); st=$? ;;
    esac
    if [ "$st" != 2 ]; then echo "FAIL $f: exit $st, want 2 ($err)"; fail=$((fail + 1)); continue; fi
    if [ ! -f "$exp" ] || [ "$err" != "$(cat "$exp")" ]; then
        echo "FAIL $f: message"; echo "  got:  $err"; [ -f "$exp" ] && echo "  want: $(cat "$exp")"
        fail=$((fail + 1)); continue
    fi
    pass=$((pass + 1))
done
# -o with bad input: exit 2, the existing target untouched, no temporary file left behind.
tmpd=$(mktemp -d)
echo old >"$tmpd/out.json"
"$bin" predict --hw a100 --workload tests/data/bad/unknown-tensor.json -o "$tmpd/out.json" 2>/dev/null
st=$?
if [ "$st" = 2 ] && [ "$(cat "$tmpd/out.json")" = old ] && [ "$(ls "$tmpd")" = out.json ]; then
    pass=$((pass + 1))
else
    echo "FAIL -o with bad input: exit $st, left: $(ls "$tmpd")"; fail=$((fail + 1))
fi
# Determinism: two runs (stdout, then -o FILE) give byte-identical output in every format.
for fmt in table json csv; do
    "$bin" predict --hw a100 --workload nerf --format "$fmt" >"$tmpd/a.$fmt" 2>&1
    "$bin" predict --hw a100 --workload nerf --format "$fmt" -o "$tmpd/b.$fmt" 2>&1
    if cmp -s "$tmpd/a.$fmt" "$tmpd/b.$fmt" && [ -s "$tmpd/a.$fmt" ]; then
        pass=$((pass + 1))
    else
        echo "FAIL determinism ($fmt): two runs differ"; fail=$((fail + 1))
    fi
done
rm -rf "$tmpd"
echo "bad inputs: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
