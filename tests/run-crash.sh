#!/bin/sh
# Crash safety of `sweep -o FILE`: kill -9 at random instants (100 times, many of them inside a
# resume's own start-up) and at every named step of the partial-file protocol
# (KITSUNE_TEST_CRASH_AT), resume, and compare the bytes with an uninterrupted run. Also: no
# finished point is ever lost (the complete rows of FILE.partial never decrease from one kill to
# the next), a partial file of another sweep is refused, an empty one is rebuilt.
# usage: sh tests/run-crash.sh [BIN]    (KITSUNE_CRASH_SEED=N repeats a run's random instants)
set -u
bin=${1:-build/kitsune}
KITSUNE_HOME=$(pwd); export KITSUNE_HOME
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0; fail=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL crash: $*"; fail=$((fail + 1)); }
mm=tests/data/tools/mm.json
# about half a second uninterrupted (normal build): 50,000 points, 5.5 MB of rows
args="--hw a100 --exec bsp --workload $mm --vary B=1:50000:+1"
"$bin" sweep $args -o "$tmp/ref.csv" || { bad "reference sweep failed"; exit 1; }
out="$tmp/k.csv"
part="$out.partial"
rows() { # complete rows in the partial file (its two header lines and a torn line excluded)
    if [ -f "$part" ]; then echo $(($(wc -l <"$part") - 2)); else echo 0; fi
}
finish() { # resume to the end and compare: finish WHAT
    "$bin" sweep $args --resume -o "$out" 2>"$tmp/err" || { bad "$1: resume failed: $(cat "$tmp/err")"; return; }
    if cmp -s "$out" "$tmp/ref.csv" && [ ! -e "$part" ]; then ok; else bad "$1: resumed output differs"; fi
    rm -f "$out"
}

# 1. every named step of the protocol
for at in partial-created rows-written output-renamed; do
    { KITSUNE_TEST_CRASH_AT=$at "$bin" sweep $args -o "$out"; } 2>/dev/null
    [ $? = 137 ] && ok || bad "crash point $at was not reached"
    finish "crash at $at"
done
for at in resume-scanned resume-truncated; do
    # a partial with half the points and a torn row, then a crash inside the resume's start-up
    { KITSUNE_TEST_CRASH_AT=rows-written "$bin" sweep $args -o "$out"; } 2>/dev/null
    n=$(wc -l <"$part")
    head -n $((n / 2)) "$part" >"$tmp/half"
    sed -n "$((n / 2 + 1))p" "$part" | cut -c1-25 | tr -d '\n' >>"$tmp/half"
    mv "$tmp/half" "$part"
    { KITSUNE_TEST_CRASH_AT=$at "$bin" sweep $args --resume -o "$out"; } 2>/dev/null
    [ $? = 137 ] && ok || bad "crash point $at was not reached"
    [ "$(rows)" -ge $((n / 2 - 2)) ] && ok || bad "crash at $at lost rows: $(rows) of $((n / 2 - 2))"
    finish "crash at $at"
done

# 2. kill -9 at random instants: half of them within 40 ms of the start (a resume's start-up
#    reads and checks the partial file), half anywhere in a run; every 10th chain is finished
#    and compared
seed=${KITSUNE_CRASH_SEED:-$(date +%s)}
delays=$(awk -v s="$seed" 'BEGIN { srand(s); for (i = 0; i < 100; i++)
    printf "%.3f ", (i % 2 ? 0.040 : 0.500) * rand() }')
kills=0; startup=0; done_early=0; last=0; t=0
for d in $delays; do
    t=$((t + 1))
    "$bin" sweep $args --resume -o "$out" 2>"$tmp/err" &
    pid=$!
    sleep "$d"
    kill -9 $pid 2>/dev/null
    { wait $pid; } 2>/dev/null
    st=$?
    if [ $st = 0 ]; then # finished before the kill
        done_early=$((done_early + 1))
        cmp -s "$out" "$tmp/ref.csv" && ok || bad "trial $t (seed $seed): finished output differs"
        rm -f "$out"; last=0
    elif [ $st = 137 ]; then
        kills=$((kills + 1))
        now=$(rows)
        if [ -e "$out" ] && [ ! -e "$part" ]; then # killed after the output was in place
            cmp -s "$out" "$tmp/ref.csv" && ok || bad "trial $t (seed $seed): output differs"
            rm -f "$out"; now=0
        else
            [ "$now" -ge "$last" ] && ok || bad "trial $t (seed $seed): rows went from $last to $now"
            [ "$now" = "$last" ] && [ "$last" -gt 0 ] && startup=$((startup + 1))
        fi
        last=$now
    else
        bad "trial $t (seed $seed): exit $st: $(cat "$tmp/err")"
    fi
    if [ $((t % 10)) = 0 ]; then
        finish "trial $t (seed $seed)"
        last=0
    fi
done
echo "crash: $kills kill -9 trials (seed $seed), $startup of them in a resume's start-up (before its first row), $done_early runs finished before their kill"

# 3. partial files that are not this sweep's
"$bin" sweep $args -o "$out"
{ KITSUNE_TEST_CRASH_AT=rows-written "$bin" sweep --hw a100 --exec bsp --workload $mm --vary B=1:10:+1 -o "$out"; } 2>/dev/null
"$bin" sweep $args --resume -o "$out" 2>"$tmp/err"
[ $? = 2 ] && grep -q 'holds rows of a different sweep' "$tmp/err" && ok || bad "other sweep's partial: $(cat "$tmp/err")"
cmp -s "$out" "$tmp/ref.csv" && ok || bad "a refused resume changed the output"
: >"$part"
finish "empty partial"
echo "crash: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
