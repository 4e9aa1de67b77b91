#!/bin/sh
# bench.sh [BIN]: the speed goals, measured - predict on a generated 10,000-op graph, a full
# compare, and sweep throughput (one point = one workload, one mode, every execution model incl.
# the ILP). Each benchmark runs RUNS times (default 5, at least 5): the median decides PASS or
# FAIL against its goal, the min-max shows the spread. The machine (CPUs, model) is printed,
# since the goals assume no other load. Exit status 1 when a goal is missed.
set -u
bin=${1:-build/kitsune}
runs=${RUNS:-5}
[ "$runs" -ge 5 ] 2>/dev/null || runs=5
dir=build/bench
mkdir -p "$dir"
KITSUNE_HOME=${KITSUNE_HOME:-$(pwd)}; export KITSUNE_HOME
cpu=$(sed -n 's/^model name[[:space:]]*: *//p' /proc/cpuinfo 2>/dev/null | head -1)
echo "machine: $(nproc) CPUs (nproc), ${cpu:-unknown CPU} (/proc/cpuinfo), $(uname -sr); load average $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"
echo "each benchmark: $runs runs, median and min-max"
echo
# timed "$@": wall-clock ms of each of $runs runs, one per line ("-" when the command fails)
timed() {
    for _ in $(seq "$runs"); do
        t0=$(date +%s%N)
        "$@" >/dev/null 2>"$dir/err" || { echo "bench: failed: $* ($(cat "$dir/err"))" >&2; echo -; return; }
        t1=$(date +%s%N)
        echo "$t0 $t1" | awk '{printf "%.1f\n", ($2 - $1) / 1e6}'
    done
}
# row NAME UNIT OP GOAL PER: one table line from the values on stdin (ms; PER > 0 turns them
# into PER/(ms/1000) per second); OP is <, >= or - (no goal)
row() {
    r=$(awk -v op="$3" -v goal="$4" -v per="$5" '
        $1 == "-" { bad = 1; next }
        { v[++n] = per > 0 ? per / ($1 / 1e3) : $1 }
        END {
            if (bad || !n) { print "-", "-", "FAIL"; exit }
            for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
            med = n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
            f = per > 0 ? "%.0f" : "%.1f"
            verdict = op == "-" ? "-" : (op == "<" ? (med < goal ? "PASS" : "FAIL") : (med >= goal ? "PASS" : "FAIL"))
            printf f " " f "-" f " %s\n", med, v[1], v[n], verdict
        }')
    # shellcheck disable=SC2086
    set -- "$1" "$2" "$([ "$3" = - ] && echo - || echo "$3 $4")" $r
    printf '%-50s %-9s %8s %10s %17s  %s\n' "$1" "$2" "$3" "$4" "$5" "$6"
}
status=0
# bench NAME UNIT OP GOAL PER COMMAND...: run, print the row, remember a FAIL
bench() {
    name=$1 unit=$2 op=$3 goal=$4 per=$5
    shift 5
    line=$(timed "$@" | row "$name" "$unit" "$op" "$goal" "$per")
    echo "$line"
    case $line in *FAIL) status=1 ;; esac
}
sh scripts/gen-chain.sh 10000 "$dir/chain.json" >/dev/null
swp="--workload all --mode both --exec all --vary dram.bandwidth_GBps=1000:1190:+10"
# shellcheck disable=SC2086
npts=$("$bin" sweep --hw a100 $swp 2>/dev/null | awk -F, 'NR>1{p[$1]=1} END{n=0; for (k in p) n++; print n}')
printf '%-50s %-9s %8s %10s %17s  %s\n' benchmark unit goal median min-max verdict
bench "predict, 10,000-op chain, bsp" ms "<" 50 0 "$bin" predict --hw a100 --workload "$dir/chain.json"
bench "compare --workload all --mode both" ms "<" 100 0 "$bin" compare --hw a100 --workload all --mode both
# shellcheck disable=SC2086
bench "sweep --jobs 1, $npts points" points/s ">=" 1000 "$npts" "$bin" sweep --hw a100 $swp --jobs 1
# shellcheck disable=SC2086
bench "sweep --jobs 2, $npts points" points/s ">=" 2000 "$npts" "$bin" sweep --hw a100 $swp --jobs 2
# shellcheck disable=SC2086
bench "sweep --jobs 1, bsp only (the sweep machinery)" points/s - - "$npts" \
    "$bin" sweep --hw a100 $(echo $swp | sed 's/--exec all/--exec bsp/') --jobs 1
bench "predict, 10,000-op chain, all three models" ms - - 0 \
    "$bin" predict --hw a100 --workload "$dir/chain.json" --exec all
[ $status -ne 0 ] && echo "bench: a goal was missed (medians above; the goals assume an idle machine)"
exit $status
