#!/bin/sh
# make fuzz: run each libFuzzer harness for SECONDS from its seed corpus and dictionary; new
# inputs go to build/fuzz/corpus/NAME (merge the interesting ones into tests/fuzz/corpus/NAME),
# crashes to build/fuzz/crash-NAME-*. Prints executions per harness and the total, and appends
# them to build/fuzz/stats.log. Exit status 1 when a harness found a crash.
# usage: sh tests/fuzz/run.sh DIR SECONDS NAME...    (DIR holds fuzz_NAME)
set -u
dir=$1; secs=$2; shift 2
KITSUNE_HOME=$(pwd); export KITSUNE_HOME
out=build/fuzz
mkdir -p "$out"
total=0; crashed=0
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
for name in "$@"; do
    mkdir -p "$out/corpus/$name"
    dict=""; [ -f "tests/fuzz/$name.dict" ] && dict="-dict=tests/fuzz/$name.dict"
    log="$out/fuzz-$name.log"
    ASAN_OPTIONS=detect_leaks=1 "$dir/fuzz_$name" "$out/corpus/$name" "tests/fuzz/corpus/$name" $dict \
        -max_total_time="$secs" -max_len=16384 -timeout=20 -rss_limit_mb=4096 -print_final_stats=1 \
        -artifact_prefix="$out/crash-$name-" >"$log" 2>&1
    st=$?
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    runs=${runs:-0}
    total=$((total + runs))
    if [ $st != 0 ]; then
        crashed=$((crashed + 1)); echo "fuzz $name: CRASH after $runs executions (see $log)"
        grep -m5 -E "ERROR|invariant|runtime error" "$log"
    else
        echo "fuzz $name: $runs executions in $secs s, no crash"
    fi
    echo "$(date -u +%FT%TZ) $commit $name $secs s $runs execs exit $st" >>"$out/stats.log"
done
echo "fuzz: $total executions in total, $crashed harnesses crashed"
[ "$crashed" -eq 0 ]
