#!/bin/sh
# bench-genz.sh [BIN]: one prediction of the Llama 3 8B decoder layer (workloads/llama3-8b-ctx.json,
# prefill, B=4 x 2,048 tokens, on an H100) by kitsune and by GenZ (the peer the speed issue
# names), side by side: in-process (kitsune: bench/predict_loop, the hw file and workload parsed
# once; GenZ: bench/genz_llama_layer.py, imported once) and as whole processes. GenZ is not
# packaged for Debian: give a checkout of github.com/abhibambhaniya/GenZ-LLM-Analyzer as GENZ_DIR
# and install python3-numpy python3-pandas python3-matplotlib python3-seaborn python3-ipython
# (Debian packages; paretoset, which only GenZ's Pareto search uses, gets a stub that raises).
# Without GENZ_DIR it says so and exits 0. Last line: "ratio RATIO_ALL RATIO_BSP" (GenZ's time
# over kitsune's, all three models and bsp alone, in-process medians).
set -u
bin=${1:-build/kitsune}
loop=$(dirname "$bin")/bench/predict_loop
py=/usr/bin/python3
KITSUNE_HOME=${KITSUNE_HOME:-$(pwd)}; export KITSUNE_HOME
if [ -z "${GENZ_DIR:-}" ] || [ ! -d "$GENZ_DIR/GenZ" ]; then
    echo "bench-genz: not run (set GENZ_DIR to a checkout of GenZ-LLM-Analyzer)"
    exit 0
fi
[ -x "$loop" ] || { echo "bench-genz: $loop missing (make bench builds it)" >&2; exit 1; }
stub=$(dirname "$bin")/bench/genz-stub
mkdir -p "$stub"
printf 'def paretoset(*a, **k):\n    raise NotImplementedError("paretoset: not packaged for Debian")\n' \
    >"$stub/paretoset.py"
hw=hw/h100.json
wl=workloads/llama3-8b-ctx.json
# medians of whole processes: N runs of COMMAND, wall ms
proc_ms() {
    n=$1
    shift
    for _ in $(seq "$n"); do
        t0=$(date +%s%N)
        "$@" >/dev/null 2>&1 || { echo -; return; }
        t1=$(date +%s%N)
        echo "$t0 $t1" | awk '{ printf "%.1f\n", ($2 - $1) / 1e6 }'
    done | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}
set -- $("$loop" $hw $wl bsp inference 2000)
k_bsp=$1
set -- $("$loop" $hw $wl all inference 200)
k_all=$1
set -- $(GENZ_DIR="$GENZ_DIR" PYTHONPATH="$stub" $py bench/genz_llama_layer.py 30) || exit 1
g_us=$1 g_lat=$4
kp_bsp=$(proc_ms 11 "$bin" predict --hw $hw --workload $wl --exec bsp)
kp_all=$(proc_ms 11 "$bin" predict --hw $hw --workload $wl --exec all)
gp=$(proc_ms 5 env GENZ_DIR="$GENZ_DIR" PYTHONPATH="$stub" $py bench/genz_llama_layer.py 1)
echo "one prediction, in-process (median): kitsune bsp $k_bsp us, kitsune bsp+vf+kitsune $k_all us, GenZ $g_us us (its latency: $g_lat ms)"
echo "a whole process (median): kitsune bsp $kp_bsp ms, kitsune all three $kp_all ms, GenZ $gp ms (import, one warm-up and one timed call)"
echo "$g_us $k_all $k_bsp $gp $kp_all $kp_bsp" | awk '{
    printf "GenZ / kitsune: in-process %.0fx (all three models), %.0fx (bsp alone); processes %.0fx (all three), %.0fx (bsp)\n", $1 / $2, $1 / $3, $4 / $5, $4 / $6
    printf "ratio %.1f %.1f\n", $1 / $2, $1 / $3 }'
