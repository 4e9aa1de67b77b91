#!/bin/sh
# bench.sh [BIN]: timing of predict on a generated 10,000-op graph, a full compare, and sweep
# throughput (one point = one workload, one mode, every execution model incl. the ILP).
set -u
bin=${1:-build/kitsune}
dir=build/bench
mkdir -p "$dir"
KITSUNE_HOME=${KITSUNE_HOME:-$(pwd)}; export KITSUNE_HOME
ms() { echo "$1 $2" | awk '{printf "%.1f", ($2 - $1) / 1e6}'; }
best() { # best of 3 wall-clock runs of "$@" (1 run when it takes over 1 s), in ms
    b=""
    for _ in 1 2 3; do
        [ -n "$b" ] && awk -v b="$b" 'BEGIN{exit !(b > 1000)}' && break
        t0=$(date +%s%N); "$@" >/dev/null 2>"$dir/err" || { echo "bench: failed: $* ($(cat "$dir/err"))" >&2; echo "-"; return; }
        t1=$(date +%s%N); t=$(ms "$t0" "$t1")
        if [ -z "$b" ] || awk -v a="$t" -v b="$b" 'BEGIN{exit !(a < b)}'; then b=$t; fi
    done
    echo "$b"
}
sh scripts/gen-chain.sh 10000 "$dir/chain.json" >/dev/null
t_pred=$(best "$bin" predict --hw a100 --workload "$dir/chain.json" --exec all); prednote="all exec models"
[ "$t_pred" = "-" ] && { t_pred=$(best "$bin" predict --hw a100 --workload "$dir/chain.json"); prednote="bsp"; }
t_predb=$(best "$bin" predict --hw a100 --workload "$dir/chain.json")
t_cmp=$(best "$bin" compare --hw a100 --workload all --mode both)
cmpnote=""
if [ "$t_cmp" = "-" ]; then
    t_cmp=$(best "$bin" compare --hw a100 --workload all --exec bsp); cmpnote=" (bsp, inference only)"
fi
# sweep: every workload x 2 modes x 20 DRAM bandwidths (bsp-only fallback if needed)
vary="--vary dram.bandwidth_GBps=1000:1190:+10"
mode="--mode both"; exec_="--exec all"; swnote=""
"$bin" sweep --hw a100 --workload all $mode $exec_ --vary sm_count=108 >/dev/null 2>&1 ||
    { mode="--mode inference"; exec_="--exec bsp"; swnote=" (bsp, inference only)"; }
npts=$("$bin" sweep --hw a100 --workload all $mode $exec_ $vary 2>/dev/null | awk -F, 'NR>1{p[$1]=1} END{n=0; for (k in p) n++; print n}')
rate() { t=$(best "$bin" sweep --hw a100 --workload all $mode $exec_ $vary --jobs "$1"); awk -v n="$npts" -v t="$t" 'BEGIN{ if (t == "-" || t <= 0) print "-"; else printf "%.0f", n / (t / 1e3) }'; }
r1=$(rate 1); r2=$(rate 2)
exec_="--exec bsp"; rb=$(rate 1)
printf '%-58s %14s %14s\n' "benchmark" "goal" "measured"
printf '%-58s %14s %14s\n' "predict, 10,000-op chain, bsp (ms)" "< 50" "$t_predb"
printf '%-58s %14s %14s\n' "predict, 10,000-op chain, $prednote (ms)" "-" "$t_pred"
printf '%-58s %14s %14s\n' "compare --workload all --mode both (ms)$cmpnote" "< 100" "$t_cmp"
printf '%-58s %14s %14s\n' "sweep --jobs 1, $npts points (points/s)$swnote" ">= 1000" "$r1"
printf '%-58s %14s %14s\n' "sweep --jobs 2, $npts points (points/s)$swnote" ">= 2000" "$r2"
printf '%-58s %14s %14s\n' "sweep --jobs 1, bsp only: the sweep machinery (points/s)" "-" "$rb"
