#!/bin/sh
# bench.sh [BIN]: the speed goals of issue 18, measured - a full compare per process, sweep
# throughput (one point = one workload, one mode, bsp + vf + kitsune with optimal mappings), a
# 100,000-op graph under all three models (time and peak memory), and the growth exponent of
# each execution model on generated 1,000-100,000-op chains. Each benchmark runs RUNS times
# (default 5, at least 5; the 100,000-op rows and the scaling fit once each, SCALE_RUNS to
# change): the median decides PASS or FAIL against its goal, the min-max shows the spread. The
# machine (CPUs, model, load) is printed, since the goals assume no other load. Exit status 1
# when a goal is missed. Peak memory and CPU seconds come from GNU time (/usr/bin/time, Debian
# package time); without it those cells are "-" and the fit uses wall-clock time.
set -u
bin=${1:-build/kitsune}
runs=${RUNS:-5}
[ "$runs" -ge 5 ] 2>/dev/null || runs=5
sruns=${SCALE_RUNS:-1}
[ "$sruns" -ge 1 ] 2>/dev/null || sruns=1
dir=build/bench
mkdir -p "$dir"
KITSUNE_HOME=${KITSUNE_HOME:-$(pwd)}; export KITSUNE_HOME
gtime=/usr/bin/time
[ -x "$gtime" ] && "$gtime" -f %M true >/dev/null 2>&1 || gtime=
cpu=$(sed -n 's/^model name[[:space:]]*: *//p' /proc/cpuinfo 2>/dev/null | head -1)
echo "machine: $(nproc) CPUs (nproc), ${cpu:-unknown CPU} (/proc/cpuinfo), $(uname -sr); load average $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"
echo "each benchmark: $runs runs (100,000-op rows and scaling: $sruns), median and min-max"
echo
# sample N COMMAND...: N lines "wall_ms cpu_s peak_KB" ("-" for what is unknown; one "-" line
# when the command fails)
sample() {
    n=$1
    shift
    for _ in $(seq "$n"); do
        t0=$(date +%s%N)
        if [ -n "$gtime" ]; then
            "$gtime" -f '%U %S %M' -o "$dir/time" "$@" >/dev/null 2>"$dir/err" ||
                { echo "bench: failed: $* ($(cat "$dir/err"))" >&2; echo -; return; }
        else
            "$@" >/dev/null 2>"$dir/err" || { echo "bench: failed: $* ($(cat "$dir/err"))" >&2; echo -; return; }
        fi
        t1=$(date +%s%N)
        if [ -n "$gtime" ]; then
            tail -1 "$dir/time" | awk -v a="$t0" -v b="$t1" '{printf "%.1f %.2f %d\n", (b - a) / 1e6, $1 + $2, $3}'
        else
            echo "$t0 $t1" | awk '{printf "%.1f - -\n", ($2 - $1) / 1e6}'
        fi
    done
}
# row NAME UNIT OP GOAL PER COL SCALE: one table line from column COL of the samples on stdin;
# PER > 0 turns ms into PER/(ms/1000) per second, SCALE divides (ms -> s, KB -> MB); OP is <,
# >= or - (no goal)
row() {
    r=$(awk -v op="$3" -v goal="$4" -v per="$5" -v col="$6" -v sc="$7" '
        $1 == "-" || $col == "-" { bad = 1; next }
        { v[++n] = per > 0 ? per / ($col / 1e3) : $col / sc }
        END {
            if (bad || !n) { print "-", "-", (op == "-" ? "-" : "FAIL"); exit }
            for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
            med = n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
            f = per > 0 ? "%.0f" : "%.1f"
            verdict = op == "-" ? "-" : (op == "<" ? (med < goal ? "PASS" : "FAIL") : (med >= goal ? "PASS" : "FAIL"))
            printf f " " f "-" f " %s\n", med, v[1], v[n], verdict
        }')
    # shellcheck disable=SC2086
    set -- "$1" "$2" "$([ "$3" = - ] && echo - || echo "$3 $4")" $r
    printf '%-52s %-9s %8s %10s %17s  %s\n' "$1" "$2" "$3" "$4" "$5" "$6"
}
status=0
# put LINE: print a table line, remember a FAIL
put() {
    echo "$1"
    case $1 in *FAIL) status=1 ;; esac
}
# bench NAME UNIT OP GOAL PER COMMAND...: RUNS wall-clock samples, one row
bench() {
    name=$1 unit=$2 op=$3 goal=$4 per=$5
    shift 5
    put "$(sample "$runs" "$@" | row "$name" "$unit" "$op" "$goal" "$per" 1 1)"
}
for n in 1000 3000 10000 30000 100000; do
    sh scripts/gen-chain.sh $n "$dir/chain$n.json" >/dev/null
done
swp="--workload all --mode both --exec all --vary dram.bandwidth_GBps=1000:1190:+10"
# shellcheck disable=SC2086
npts=$("$bin" sweep --hw a100 $swp 2>/dev/null | awk -F, 'NR>1{p[$1]=1} END{n=0; for (k in p) n++; print n}')
printf '%-52s %-9s %8s %10s %17s  %s\n' benchmark unit goal median min-max verdict
# compare runs its (workload, mode) pairs on one thread per online CPU (at most 8) by default:
# the goal is the wall-clock of that process; one thread's wall-clock (its CPU time, less than
# a millisecond of waiting) is shown beside it
bench "compare --workload all --mode both (a process)" ms "<" 20 0 \
    "$bin" compare --hw a100 --workload all --mode both
bench "  the same with --jobs 1 (one thread)" ms - - 0 \
    "$bin" compare --hw a100 --workload all --mode both --jobs 1
# shellcheck disable=SC2086
bench "sweep --jobs 1, $npts points" points/s ">=" 10000 "$npts" "$bin" sweep --hw a100 $swp --jobs 1
# shellcheck disable=SC2086
bench "sweep --jobs 2, $npts points" points/s ">=" 20000 "$npts" "$bin" sweep --hw a100 $swp --jobs 2
# points that differ only in energy and power fields share their runs (docs/tools.md, sweep)
# shellcheck disable=SC2086
bench "sweep --jobs 1, $npts points, energy and power fields" points/s - - "$npts" "$bin" sweep \
    --hw a100 --workload all --mode both --exec all --vary energy.dram_pJ_per_byte=5:50:+5 \
    --vary power.tdp_W=x0.5,x1 --jobs 1
# shellcheck disable=SC2046,SC2086
bench "sweep --jobs 1, bsp only (the sweep machinery)" points/s - - "$npts" \
    "$bin" sweep --hw a100 $(echo $swp | sed 's/--exec all/--exec bsp/') --jobs 1
bench "predict, 10,000-op chain, bsp" ms - - 0 "$bin" predict --hw a100 --workload "$dir/chain10000.json"
sample "$sruns" "$bin" predict --hw a100 --workload "$dir/chain100000.json" --exec all > "$dir/big"
put "$(row "predict, 100,000-op chain, all three models" s "<" 5 0 1 1000 < "$dir/big")"
put "$(row "  its peak memory (RSS)" MB "<" 500 0 3 1000 < "$dir/big")"
# scaling: CPU seconds (wall-clock without GNU time) per prediction at each size, less a
# process's start (kitsune --version), least-squares slope of log t on log n over 1,000-100,000
# ops. GNU time counts CPU in 10 ms steps: the smaller chains run ceil(30,000 / n) times in one
# sample (a 1,000-op bsp prediction is a few ms), and the sample is divided by that count.
col=2
[ -n "$gtime" ] || col=1
# per_run REPS COMMAND...: samples of COMMAND run REPS times in a row, per run (column col)
per_run() {
    reps=$1
    shift
    sample "$sruns" sh -c 'r=$1; shift; i=0; while [ $i -lt "$r" ]; do "$@" >/dev/null || exit 1; i=$((i + 1)); done' \
        sh "$reps" "$@" | awk -v r="$reps" -v col=$col '$col == "-" { print "-"; next } { print $col / r }'
}
start=$(per_run 30 "$bin" --version | sort -n | awk '{ v[NR] = $1 } END { print NR ? v[int((NR + 1) / 2)] : 0 }')
for e in bsp vf kitsune; do
    : > "$dir/scale-$e"
    for n in 1000 3000 10000 30000 100000; do
        per_run $(((30000 + n - 1) / n)) "$bin" predict --hw a100 --workload "$dir/chain$n.json" --exec $e |
            awk -v n=$n -v s="$start" '$1 == "-" { print n, "-"; next } { print n, $1 - s }' >> "$dir/scale-$e"
    done
    fit=$(awk '$2 == "-" { bad = 1 } $2 != "-" { t[$1] = t[$1] " " $2 }
        END {
            if (bad) { print "- - FAIL"; exit }
            for (n in t) {
                k = split(t[n], v, " ")
                for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (v[j] < v[i]) { s = v[i]; v[i] = v[j]; v[j] = s }
                y = k % 2 ? v[(k + 1) / 2] : (v[k / 2] + v[k / 2 + 1]) / 2
                if (y <= 0) y = 1e-4
                x = log(n); y = log(y); m++; sx += x; sy += y; sxx += x * x; sxy += x * y
                if (n == 1000) lo = exp(y); if (n == 100000) hi = exp(y)
            }
            b = (m * sxy - sx * sy) / (m * sxx - sx * sx)
            printf "%.2f %.3g-%.3g %s\n", b, lo, hi, b <= 1.15 ? "PASS" : "FAIL"
        }' "$dir/scale-$e")
    # shellcheck disable=SC2086
    set -- $fit
    put "$(printf '%-52s %-9s %8s %10s %17s  %s' "growth exponent, $e, 1k-100k ops ($([ $col = 2 ] && echo CPU || echo wall) s)" exponent "<= 1.15" "$1" "$2" "$3")"
done
# the peer: GenZ on the same Llama layer (scripts/bench-genz.sh; GENZ_DIR, a GenZ checkout)
genz=$(sh scripts/bench-genz.sh "$bin" 2>&1)
echo "$genz" | grep -v '^ratio ' | sed 's/^/  /' >&2
ratio=$(echo "$genz" | awk '$1 == "ratio" { print $2 }')
if [ -n "$ratio" ]; then
    put "$(printf '%-52s %-9s %8s %10s %17s  %s' "one prediction vs GenZ, Llama 3 8B layer (all three)" ratio ">= 1000" "$ratio" - "$(echo "$ratio" | awk '{ print ($1 >= 1000 ? "PASS" : "FAIL") }')")"
else
    printf '%-52s %-9s %8s %10s %17s  %s\n' "one prediction vs GenZ, Llama 3 8B layer" ratio ">= 1000" - - "not run (GENZ_DIR)"
fi
[ $status -ne 0 ] && echo "bench: a goal was missed (medians above; the goals assume an idle machine)"
exit $status
