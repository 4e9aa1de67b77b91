#!/bin/sh
# Shell tests of the tools: sweep (cross products, ranges, shards, resume, jobs), validate's
# arithmetic on a hand-made table and on measured traces, compare's CSV, and the figures (gnuplot
# rendering).
# usage: sh tests/run-tools.sh [BIN]
set -u
bin=${1:-build/kitsune}
KITSUNE_HOME=$(pwd); export KITSUNE_HOME
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0; fail=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL tools: $*"; fail=$((fail + 1)); }
check() { # check NAME GOT WANT
    if [ "$2" = "$3" ]; then ok; else bad "$1: got '$2', want '$3'"; fi
}
mm=tests/data/tools/mm.json
# every execution model when the tree has them all, else bsp (the rest still being built)
if "$bin" sweep --hw a100 --workload $mm --vary B=8 >/dev/null 2>&1; then ex=all; nex=3; else ex=bsp; nex=1; fi
rows() { tail -n +2 "$1" | wc -l | tr -d ' '; }

# 1. cross products: 3 x 2 values x 2 workloads = 12 points
"$bin" sweep --hw a100 --exec $ex --workload $mm --workload nerf --vary B=1,2,3 \
    --vary sm_count=54,108 -o "$tmp/x.csv" || bad "sweep cross product exit status"
check "cross product rows" "$(rows "$tmp/x.csv")" $((12 * nex))
check "cross product points" "$(tail -n +2 "$tmp/x.csv" | cut -d, -f1 | sort -un | wc -l | tr -d ' ')" 12
check "header" "$(head -1 "$tmp/x.csv" | cut -d, -f1-7)" "point,hw,workload,mode,B,sm_count,exec"
# 2. ranges and multiples
"$bin" sweep --hw a100 --exec bsp --workload $mm --vary B=32:4096:x2 >"$tmp/r.csv"
check "geometric range" "$(tail -n +2 "$tmp/r.csv" | cut -d, -f5 | tr '\n' ' ')" "32 64 128 256 512 1024 2048 4096 "
"$bin" sweep --hw a100 --exec bsp --workload $mm --vary B=1:10:+3 >"$tmp/r.csv"
check "arithmetic range" "$(tail -n +2 "$tmp/r.csv" | cut -d, -f5 | tr '\n' ' ')" "1 4 7 10 "
"$bin" sweep --hw a100 --exec bsp --workload $mm --vary l2.bandwidth_GBps=x1,x2 >"$tmp/r.csv"
check "multiples of the file's value" "$(tail -n +2 "$tmp/r.csv" | cut -d, -f5 | tr '\n' ' ')" \
    "$(awk '/"l2"/{l2=1} l2 && /"bandwidth_GBps"/{v=$2; sub(/,/, "", v); printf "%g %g ", v, 2*v; exit}' hw/a100.json)"
"$bin" sweep --hw a100 --workload $mm --vary nosuch=1 >/dev/null 2>"$tmp/err"
check "unknown vary name exit status" $? 2
grep -q 'neither a parameter of workload "mm" nor a numeric field' "$tmp/err" && ok || bad "unknown vary message: $(cat "$tmp/err")"
# 2b. --zip: fields varied together (one axis), crossed with --vary; several --hw (an axis, and
#     the hw column); each GPU's multiples of its own value
col() { # col FILE NAME: the values of column NAME, space-separated
    awk -F, -v n="$2" 'NR==1{for(i=1;i<=NF;i++)if($i==n)c=i;next}{printf "%s ", $c}' "$1"
}
"$bin" sweep --hw a100 --exec bsp --workload $mm --zip sm_count=x1,x2 --zip l2.bandwidth_GBps=x1,x2 >"$tmp/z.csv"
check "zip points" "$(rows "$tmp/z.csv")" 2
check "zip sm_count" "$(col "$tmp/z.csv" sm_count)" "108 216 "
check "zip l2 bandwidth" "$(col "$tmp/z.csv" l2.bandwidth_GBps)" "7219 14438 "
"$bin" sweep --hw a100 --exec bsp --workload $mm --vary B=1,2,3 --zip sm_count=54,108 --zip dram.bandwidth_GBps=x1,x2 >"$tmp/z.csv"
check "zip x vary points" "$(rows "$tmp/z.csv")" 6
check "zip x vary order (the first option slowest)" "$(col "$tmp/z.csv" B)" "1 1 2 2 3 3 "
check "zip x vary zipped" "$(col "$tmp/z.csv" sm_count)" "54 108 54 108 54 108 "
"$bin" sweep --hw a100 --workload $mm --zip sm_count=1,2 --zip l2.bandwidth_GBps=1,2,3 >/dev/null 2>"$tmp/err"
check "zip length mismatch exit status" $? 2
grep -q 'zipped fields vary together' "$tmp/err" && ok || bad "zip length message: $(cat "$tmp/err")"
"$bin" sweep --hw a100 --hw h100 --exec bsp --workload $mm --vary sm_count=x1,x2 >"$tmp/h.csv"
check "several --hw: hw column" "$(col "$tmp/h.csv" hw)" "a100 a100 h100 h100 "
check "several --hw: each GPU's multiples" "$(col "$tmp/h.csv" sm_count)" "108 216 132 264 "
"$bin" sweep --hw a100 --workload $mm --vary B=1 --hw a100 >/dev/null 2>"$tmp/err"
check "the same GPU twice exit status" $? 2
# traffic_reduction_frac and coverage_frac agree with compare's
"$bin" sweep --hw a100 --exec $ex --workload nerf --vary B=x1 >"$tmp/t.csv"
"$bin" compare --hw a100 --exec $ex --workload nerf --format csv >"$tmp/t2.csv"
for c in traffic_reduction_frac coverage_frac; do
    check "sweep $c = compare's" "$(col "$tmp/t.csv" $c)" "$(col "$tmp/t2.csv" $c)"
done
# points that do not fit the GPU's memory: one warning
"$bin" sweep --hw a100 --exec bsp --workload tests/data/tiny.json --vary B=64,100000000 >/dev/null 2>"$tmp/err"
grep -q 'warning: 1 point needs more memory than the GPU has' "$tmp/err" && ok || bad "sweep memory warning: $(cat "$tmp/err")"
# 2c. hw new: an H100 from its datasheet numbers over the A100 file loads, and every field that
#     hw/h100.json derives the same way comes out equal (read back through sweep --vary F=x1)
"$bin" hw new --name h100-sheet --source H100-BLOG --sm-count 132 --clock-MHz 1830 \
    --tflops bf16=989.4 --tflops fp16=989.4 --tflops tf32=494.7 --tflops fp8=1978.9 \
    --fp32-tflops 66.9 --fp32-clock-MHz 1980 --dram-GBps 3350 --dram-GB 80 --l2-MiB 50 \
    --tdp-W 700 --base a100 -o "$tmp/h100-sheet.json" 2>"$tmp/err"
check "hw new exit status" $? 0
"$bin" predict --hw "$tmp/h100-sheet.json" --workload $mm >/dev/null 2>&1 && ok || bad "hw new: the file does not load"
for f in sm_count clock_MHz tensor_flop_per_clk_per_sm.bf16 tensor_flop_per_clk_per_sm.fp16 \
    tensor_flop_per_clk_per_sm.tf32 tensor_flop_per_clk_per_sm.fp8 simt_fp32_flop_per_clk_per_sm \
    dram.bandwidth_GBps dram.capacity_GiB l2.capacity_MiB l2.bandwidth_GBps power.tdp_W \
    launch.cta_dispatch_ns; do
    a=$("$bin" sweep --hw "$tmp/h100-sheet.json" --workload $mm --exec bsp --vary "$f=x1" | col /dev/stdin "$f")
    b=$("$bin" sweep --hw h100 --workload $mm --exec bsp --vary "$f=x1" | col /dev/stdin "$f")
    check "hw new $f = hw/h100.json's" "$a" "$b"
done
grep -q '"tensor_flop_per_clk_per_sm.bf16": "D, derived: 989.4 TFLOP/s / (132 SMs x 1830 MHz)' "$tmp/h100-sheet.json" &&
    ok || bad "hw new: derived field not marked in sources"
"$bin" hw new --name x --sm-count 132 >/dev/null 2>"$tmp/err"
check "hw new without a clock exit status" $? 2
# 3. shards: the union of K/3 is the whole sweep, no duplicates
"$bin" sweep --hw a100 --exec $ex --workload $mm --vary B=1:15:+1 --vary sm_count=54,108 -o "$tmp/all.csv"
for k in 0 1 2; do
    "$bin" sweep --hw a100 --exec $ex --workload $mm --vary B=1:15:+1 --vary sm_count=54,108 --shard $k/3 \
        -o "$tmp/s$k.csv" || bad "shard $k/3 exit status"
done
{ head -1 "$tmp/s0.csv"; for k in 0 1 2; do tail -n +2 "$tmp/s$k.csv"; done | sort -t, -k1,1n -s; } >"$tmp/merged.csv"
cmp -s "$tmp/merged.csv" "$tmp/all.csv" && ok || bad "shard union differs from the whole sweep"
check "shard duplicates" "$(for k in 0 1 2; do tail -n +2 "$tmp/s$k.csv"; done | sort | uniq -d | wc -l | tr -d ' ')" 0
# 4. jobs: same bytes with 1 and 3 threads
"$bin" sweep --hw a100 --exec $ex --workload $mm --vary B=1:15:+1 --vary sm_count=54,108 --jobs 3 -o "$tmp/j3.csv"
cmp -s "$tmp/j3.csv" "$tmp/all.csv" && ok || bad "--jobs 3 output differs from --jobs 1"
# points that differ only in energy, power and DVFS fields share their runs before energy (a
# worker keeps them; same_group hands it such points in a row): every row equals the same point
# swept alone in its own process (nothing shared), with the board limit binding (tdp x0.3, so
# kernels are re-clocked through the shared runs) and under a power cap; the same bytes with 1
# and 3 threads. The timing axis (sm_count) sits between the energy axes.
ev="--vary energy.dram_pJ_per_byte=5,20 --vary sm_count=54,108 --vary power.tdp_W=x0.3,x1"
# shellcheck disable=SC2086
"$bin" sweep --hw a100 --exec $ex --workload $mm --workload nerf --mode both --power-cap 180 \
    $ev --jobs 1 -o "$tmp/e1.csv" || bad "energy sweep exit status"
# shellcheck disable=SC2086
"$bin" sweep --hw a100 --exec $ex --workload $mm --workload nerf --mode both --power-cap 180 \
    $ev --jobs 3 -o "$tmp/e3.csv" || bad "energy sweep --jobs 3 exit status"
cmp -s "$tmp/e1.csv" "$tmp/e3.csv" && ok || bad "energy sweep: --jobs 3 output differs from --jobs 1"
: >"$tmp/alone.csv"
for w in $mm nerf; do for m in inference training; do for d in 5 20; do for s in 54 108; do for t in x0.3 x1; do
    "$bin" sweep --hw a100 --exec $ex --workload $w --mode $m --power-cap 180 \
        --vary energy.dram_pJ_per_byte=$d --vary sm_count=$s --vary power.tdp_W=$t |
        tail -n +2 | cut -d, -f2- >>"$tmp/alone.csv"
done; done; done; done; done
check "energy sweep: rows" "$(rows "$tmp/e1.csv")" "$(wc -l <"$tmp/alone.csv" | tr -d ' ')"
tail -n +2 "$tmp/e1.csv" | cut -d, -f2- | cmp -s - "$tmp/alone.csv" && ok ||
    bad "energy sweep: a point differs from the same point swept alone"
check "energy sweep: the board limit binds somewhere" \
    "$(awk -F, 'NR > 1 && $19 < 1410 { n++ } END { print (n > 0) }' "$tmp/e1.csv")" 1
# a point failing inside such a run of points (a negative energy) stops the sweep with its error,
# whatever the thread count (the run's earlier points are written, none after)
for j in 1 3; do
    timeout 60 "$bin" sweep --hw a100 --exec $ex --workload nerf --mode both \
        --vary energy.dram_pJ_per_byte=5,10,-1,20 --jobs $j >"$tmp/ef$j.csv" 2>"$tmp/ef$j.err"
    check "energy sweep, point 2 fails, --jobs $j: exit status" $? 2
    check "energy sweep, point 2 fails, --jobs $j: rows" "$(rows "$tmp/ef$j.csv")" $((2 * nex))
done
cmp -s "$tmp/ef1.err" "$tmp/ef3.err" && ok || bad "energy sweep failure: --jobs 3 error differs"
# compare runs its (workload, mode) pairs on threads: the same bytes with 1 and 4, and the first
# error in output order (a bad file after good ones) whatever the count
"$bin" compare --hw h200 --exec $ex --workload all --mode both --format json --jobs 1 >"$tmp/c1.json"
"$bin" compare --hw h200 --exec $ex --workload all --mode both --format json --jobs 4 >"$tmp/c4.json"
cmp -s "$tmp/c1.json" "$tmp/c4.json" && ok || bad "compare --jobs 4 output differs from --jobs 1"
printf '{"name": "broken", "tensors": [' >"$tmp/broken.json"
for j in 1 4; do
    "$bin" compare --hw a100 --exec $ex --workload nerf --workload "$tmp/broken.json" --workload dlrm \
        --mode both --jobs $j >"$tmp/cb$j.out" 2>"$tmp/cb$j.err"
    check "compare --jobs $j, bad file: exit status" $? 2
done
cmp -s "$tmp/cb1.err" "$tmp/cb4.err" && ok || bad "compare --jobs 4 error differs from --jobs 1"
check "compare, bad file: no output" "$(wc -c <"$tmp/cb4.out" | tr -d ' ')" 0
# runs that fail (a test hook: run K and every later one): the threads take the longest runs
# first and meet the failures in that order (llama3-8b-ctx training, run 5, before run 3); the
# runs from the first unfinished one on are redone in order, so the error is run K's, the one a
# sequential run meets
for k in 0 3 9; do
    for j in 1 2 4; do
        KITSUNE_TEST_FAIL_RUN=$k "$bin" compare --hw a100 --exec $ex --workload all --mode both \
            --jobs $j >"$tmp/cf$j.out" 2>"$tmp/cf$j.err"
        check "compare, run $k fails, --jobs $j: exit status" $? 1
        check "compare, run $k fails, --jobs $j: no output" "$(wc -c <"$tmp/cf$j.out" | tr -d ' ')" 0
    done
    check "compare, run $k fails: the error" "$(cat "$tmp/cf4.err")" "$(cat "$tmp/cf1.err")"
    grep -q "run $k failed" "$tmp/cf2.err" && ok || bad "compare, run $k fails: $(cat "$tmp/cf2.err")"
done
# 5. resume from a partial file cut in the middle of a row (tests/run-crash.sh kills sweeps)
{ KITSUNE_TEST_CRASH_AT=rows-written "$bin" sweep --hw a100 --exec $ex --workload $mm --vary B=1:15:+1 \
    --vary sm_count=54,108 -o "$tmp/res.csv"; } 2>/dev/null
n=$(wc -l <"$tmp/res.csv.partial")
head -n $((n / 2)) "$tmp/res.csv.partial" >"$tmp/half"
sed -n "$((n / 2 + 1))p" "$tmp/res.csv.partial" | cut -c1-20 | tr -d '\n' >>"$tmp/half"
mv "$tmp/half" "$tmp/res.csv.partial"
"$bin" sweep --hw a100 --exec $ex --workload $mm --vary B=1:15:+1 --vary sm_count=54,108 --resume -o "$tmp/res.csv" ||
    bad "resume exit status"
cmp -s "$tmp/res.csv" "$tmp/all.csv" && ok || bad "resumed sweep differs from an uninterrupted one"
[ ! -e "$tmp/res.csv.partial" ] && ok || bad "partial file left after a completed sweep"
# a workload whose name holds a comma and quotes: quoted in the CSV, resumed all the same
"$bin" sweep --hw a100 --exec bsp --workload tests/data/tools/mm-comma.json --vary B=1:20:+1 -o "$tmp/q-ref.csv"
{ KITSUNE_TEST_CRASH_AT=rows-written "$bin" sweep --hw a100 --exec bsp --workload tests/data/tools/mm-comma.json \
    --vary B=1:20:+1 -o "$tmp/q.csv"; } 2>/dev/null
head -n 12 "$tmp/q.csv.partial" >"$tmp/half" && mv "$tmp/half" "$tmp/q.csv.partial"
"$bin" sweep --hw a100 --exec bsp --workload tests/data/tools/mm-comma.json --vary B=1:20:+1 --resume -o "$tmp/q.csv" &&
    cmp -s "$tmp/q.csv" "$tmp/q-ref.csv" && ok || bad "resume of a sweep with a quoted workload name"
# 6. validate arithmetic on the hand-made table: relative errors 0, 0.25, 0.2, 0.6 and one row
#    with a reference of 0 (left out) -> MAPE = (0 + 0.25 + 0.2 + 0.6) / 4 = 0.2625, worst line 7,
#    references and model values in the same order -> Spearman 1
"$bin" validate tests/data/tools/refs.csv --hw a100 --format json >"$tmp/v.json" || bad "validate exit status"
summary=$(grep '"summary"' "$tmp/v.json")
case "$summary" in *'"mape_frac": 0.2625,'*) ok ;; *) bad "validate MAPE: $summary" ;; esac
case "$summary" in *'"spearman": 1,'*) ok ;; *) bad "validate Spearman: $summary" ;; esac
case "$summary" in *'"worst": {"line": 7, "rel_error_frac": 0.6}'*) ok ;; *) bad "validate worst row: $summary" ;; esac
case "$summary" in *'"rows": 5, "rows_with_model": 5, "rows_in_mape": 4,'*) ok ;; *) bad "validate counts: $summary" ;; esac
"$bin" validate tests/data/tools/refs.csv --hw a100 --max-error 0.2 >/dev/null 2>&1
check "validate --max-error 0.2 exit status" $? 3
"$bin" validate tests/data/tools/refs.csv --hw a100 --max-error 0.3 >/dev/null 2>&1
check "validate --max-error 0.3 exit status" $? 0
# 30,000 rows of one model run: the rank correlation is O(n log n) (it was O(n^2): 34 s)
awk 'BEGIN { print "workload,mode,exec,metric,value,source,params";
    for (i = 0; i < 30000; i++) printf "tests/data/tools/mm.json,inference,bsp,flops,%d,r%d,B=1\n", 1000 + (i * 7919) % 30000, i }' >"$tmp/big.csv"
t0=$(date +%s)
"$bin" validate "$tmp/big.csv" --hw a100 --format json >"$tmp/bigv.json" || bad "validate 30,000 rows exit status"
check "validate 30,000 rows in under 3 s" "$(($(date +%s) - t0 < 3))" 1
grep -q '"rows": 30000, "rows_with_model": 30000' "$tmp/bigv.json" && ok || bad "validate 30,000 rows: $(grep summary "$tmp/bigv.json")"
# 6b. validate --trace arithmetic. (a) tests/data/traces/tiny-chrome.json by hand: 7 kernels of
#     10 + 4 + 2 + 8 + 2 + 3 + 5 = 34 us; the copy (2 us) has no model op and the split-K
#     reduction joins fc2's GEMM, so 5 model kernels take 6 measured ones and 1 is left over; the
#     memset (1 us) is not a kernel. --range ProfilerStep#2 of tiny-steps.json keeps the second
#     step: 5 kernels of 20 + 8 + 16 + 6 + 10 = 60 us.
tiny=tests/data/tiny.json
"$bin" validate --trace tests/data/traces/tiny-chrome.json --hw a100 --workload $tiny --format json \
    >"$tmp/t.json" || bad "validate --trace exit status"
total=$(grep '"total"' "$tmp/t.json")
case "$total" in *'"measured_kernels": 7, "measured_time_s": 3.4e-05, "model_kernels": 5,'*) ok ;;
    *) bad "validate --trace totals: $total" ;; esac
case "$total" in *'"matched_model_kernels": 5, "matched_measured_kernels": 6,'*) ok ;;
    *) bad "validate --trace matches: $total" ;; esac
case "$total" in *'"unmatched_measured_kernels": 1, "unmatched_measured_time_s": 2e-06, "unmatched_model_kernels": 0,'*) ok ;;
    *) bad "validate --trace unmatched: $total" ;; esac
grep -q '"other_gpu_events": 1, "profiler_steps": 0, "other_gpu_events_time_s": 1e-06' "$tmp/t.json" && ok ||
    bad "validate --trace memset not left out"
"$bin" validate --trace tests/data/traces/tiny-steps.json --range 'ProfilerStep#2' --hw a100 \
    --workload $tiny --format json | grep '"total"' | grep -q '"measured_kernels": 5, "measured_time_s": 6e-05,' &&
    ok || bad "validate --range ProfilerStep#2"
#     The ncu export of the same kernels (tiny-ncu.csv, Kbyte = 1000 bytes): DRAM read 150 +
#     0 + 131.072 + 1.024 + 0 + 0.256 = 282.352 KB, written 65.536 + 65.536 + 0 + 16.384 * 3 =
#     180.224 KB, 462,576 bytes in all; 32 us in 6 kernels, the split-K reduction joining fc2.
"$bin" validate --trace tests/data/traces/tiny-ncu.csv --hw a100 --workload $tiny --format json |
    grep '"total"' | grep -q '"measured_kernels": 6, "measured_time_s": 3.2e-05,.*"matched_measured_kernels": 6,.*"measured_dram_bytes": 462576,' &&
    ok || bad "validate --trace ncu totals"
#     torch.compile (tiny-compiled.json) against vf: cuBLAS addmm, Triton gelu, cuBLAS mm, Triton
#     add+rmsnorm = 10 + 3 + 8 + 4 = 25 us, one measured kernel per vf kernel (res..norm a group).
"$bin" validate --trace tests/data/traces/tiny-compiled.json --hw a100 --workload $tiny --exec vf \
    --format json | grep '"total"' | grep -q '"measured_kernels": 4, "measured_time_s": 2.5e-05, "model_kernels": 4,.*"matched_model_kernels": 4, "matched_measured_kernels": 4,' &&
    ok || bad "validate --trace --exec vf on a torch.compile trace"
#     A whole model (tiny-model-chrome.json, by hand): per block the kernels it launched -
#     head 1 kernel of 2 us; blockK 30(K+1) us in 5, block1 6 with the copy after its gelu (2 us,
#     no model op: in the block before it); tail 1 of 7 us; 191 us in all.
"$bin" validate --trace tests/data/traces/tiny-model-chrome.json --hw a100 \
    --workload tests/data/tiny-model.json --format json >"$tmp/tm.json" || bad "validate --trace whole model"
check "validate --trace per block" "$(grep -o '"block": "[a-z0-9]*", "totals": {"measured_kernels": [0-9]*, "measured_time_s": [0-9.e-]*' "$tmp/tm.json" |
    sed 's/"block": "\([a-z0-9]*\)", "totals": {"measured_kernels": \([0-9]*\), "measured_time_s": /\1 \2 /' | tr '\n' ' ')" \
    "head 1 2e-06 block0 5 3e-05 block1 6 6.2e-05 block2 5 9e-05 tail 1 7e-06 "
grep '"total"' "$tmp/tm.json" | grep -q '"measured_kernels": 18, "measured_time_s": 0.000191, "model_kernels": 17,' &&
    ok || bad "validate --trace whole model totals"
#     (b) a trace whose kernels take twice the model's device times (time_s - launch_s in
#     predict's CSV): every kernel and the total are off by (m - 2m) / 2m = -50%; one more copy
#     kernel as long as all the others makes the total (M - 4M) / 4M = -75%.
"$bin" predict --hw a100 --workload $tiny --format csv | awk -F, -v extra="$tmp/t2x.json" '
    NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
    { t = 2e6 * ($c["time_s"] - $c["launch_s"]); ty = $c["type"]
      n = ty ~ /linear|matmul/ ? "nvjet_gemm" : ty ~ /norm/ ? "rms_norm_kernel" : "elementwise_" ty
      ev = ev sprintf("%s{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"%s\", \"ts\": %.17g, \"dur\": %.17g}",
                      NR > 2 ? ", " : "", n, ts, t)
      ts += t + 1; sum += t }
    END { printf "{\"traceEvents\": [%s]}\n", ev
          printf "{\"traceEvents\": [%s, {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"copy_kernel\", \"ts\": %.17g, \"dur\": %.17g}]}\n", ev, ts, sum >extra }' \
    >"$tmp/t2.json"
"$bin" validate --trace "$tmp/t2.json" --hw a100 --workload $tiny --format json >"$tmp/t2.out" ||
    bad "validate --trace 2x exit status"
check "validate --trace 2x: 5 kernels, 3 classes and the total at -50%" "$(grep -o '"rel_error_frac": [-0-9.e]*' "$tmp/t2.out" |
    awk '{ d = $2 + 0.5; if (d < 0) d = -d; if (d > 1e-6) bad++; n++ } END { print n, bad + 0 }')" "9 0"
"$bin" validate --trace "$tmp/t2x.json" --hw a100 --workload $tiny --format json >"$tmp/t2x.out" ||
    bad "validate --trace 2x+copy exit status"
check "validate --trace 2x + copy: total -75%" "$(grep '"total"' "$tmp/t2x.out" |
    grep -o '"rel_error_frac": [-0-9.e]*' | awk '{ d = $2 + 0.75; print (d < 1e-6 && d > -1e-6) }')" 1
"$bin" validate --trace "$tmp/t2.json" --hw a100 --workload $tiny --max-error 0.4 >/dev/null 2>&1
check "validate --trace --max-error 0.4 exit status" $? 3
"$bin" validate --trace "$tmp/t2.json" --hw a100 --workload $tiny --max-error 0.6 >/dev/null 2>&1
check "validate --trace --max-error 0.6 exit status" $? 0
# 7. compare: one CSV row per (workload, mode, exec)
nwl=$(ls workloads/*.json | wc -l | tr -d ' ')
"$bin" compare --hw a100 --workload all --exec $ex --format csv -o "$tmp/c.csv" || bad "compare exit status"
check "compare rows" "$(rows "$tmp/c.csv")" $((nwl * nex))
check "compare bsp speedup" "$(awk -F, '$3=="bsp"{print $6}' "$tmp/c.csv" | sort -u)" 1
# 8. figures
if command -v gnuplot >/dev/null 2>&1; then
    if sh scripts/figures.sh "$bin" "$tmp/fig" >"$tmp/fig.log" 2>&1; then
        for f in a-speedup b-traffic c-coverage d-classes e-energy f-sweep; do
            for x in png svg; do
                [ -s "$tmp/fig/fig-$f.$x" ] && ok || bad "figure fig-$f.$x missing"
            done
        done
        grep -qi "warning\|error" "$tmp/fig.log" && ! grep -q "falling back" "$tmp/fig.log" &&
            bad "gnuplot warnings: $(cat "$tmp/fig.log")"
    else
        bad "figures.sh failed: $(cat "$tmp/fig.log")"
    fi
else
    echo "tools: gnuplot not found: skipping the figure rendering test"
fi
# the bar labels' digits follow the magnitude, negative values too (a label read -16.81 for -17),
# on a hand-made table: traffic cuts of -16.81%, -7.04%, -235% and 0.5% (the three short bars
# are labelled; "-" is the empty label list's placeholder row)
printf 'workload,mode,exec,time_s,traffic_reduction_frac\nw,inference,vf,1,-0.1681\nw,inference,kitsune,1,-0.0704\nw,training,vf,1,-2.35\nw,training,kitsune,1,0.005\n' >"$tmp/lbl.csv"
check "figure labels by magnitude" "$(awk -F, -f scripts/figdata.awk -v kind=bars \
    -v metric=traffic_reduction_frac -v scale=100 "$tmp/lbl.csv" | awk 'NF == 3 { print $3 }' | sort | tr '\n' ' ')" \
    "- -17 -7.0 0.5 "
# 9. every --format json output is one valid JSON document
if command -v python3 >/dev/null 2>&1; then
    WL=validation/pipeline/workloads/mgn-edge.json
    ST=gather_src+gather_dst+edge_cat,edge_fc1+edge_relu1,edge_fc2+edge_relu2,edge_fc3,edge_ln+edge_res
    for args in "predict --hw a100 --workload nerf" "predict --hw a100 --workload dlrm --mode training" \
        "compare --hw h200 --workload mgn" "map --hw a100 --workload dlrm" \
        "map --hw a100 --workload nerf --why" "info --hw h200" "info --workload mgn" \
        "map --hw h200-ktpipe --workload $WL --stages $ST --alloc 40-29-18-15-30 --tile 128"; do
        # shellcheck disable=SC2086
        if "$bin" $args --format json 2>/dev/null | python3 -c 'import json, sys; json.load(sys.stdin)' \
            2>"$tmp/json.err"; then ok; else bad "invalid JSON from: $args ($(head -1 "$tmp/json.err"))"; fi
    done
    # 9a. under --power-cap, predict's JSON lists every capped kernel: each at most the cap and
    # its uncapped clock, their times summing to the capped total
    "$bin" predict --hw a100 --workload nerf --exec all --power-cap 200 --format json >"$tmp/cap.json"
    if python3 - "$tmp/cap.json" >"$tmp/cap.err" 2>&1 <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert len(d["capped_results"]) == 3
for u, c in zip(d["results"], d["capped_results"]):
    k = [k for k in c if isinstance(c[k], list) and k != "pipelines"][0]
    assert len(c[k]) == len(u[k]) > 0, c["exec"]
    assert abs(sum(o["time_s"] for o in c[k]) - c["time_s"]) <= 1e-8 * c["time_s"], c["exec"]  # 9 digits printed
    for a, b in zip(u[k], c[k]):
        assert b["clock_MHz"] <= a["clock_MHz"] and b["avg_power_W"] <= 200 * (1 + 1e-9), b["name"]
PY
    then ok; else bad "predict --power-cap JSON: $(tail -1 "$tmp/cap.err")"; fi
    # 9b. the application harness's raw-to-CSV writer on fake raw output (--vf-from included)
    if python3 hw/calibrate/apps/collect_apps.py --selftest >"$tmp/collect.log" 2>&1; then ok
    else bad "collect_apps.py --selftest: $(tail -1 "$tmp/collect.log")"; fi
fi
# 8b. workload paths of any length (compare, sweep and info cut them at 63 characters) and
#     any number of shipped workloads (compare --workload all read at most 64)
deep="$tmp/$(printf 'directory-name-%02d-' 1 2 3 4 5 6)"
mkdir -p "$deep" && cp $mm "$deep/mm.json"
for cmd in "compare --hw a100 --exec bsp --format csv" "info --format json" \
    "sweep --hw a100 --exec bsp --vary B=1,2"; do
    "$bin" $cmd --workload $mm >"$tmp/short.out" 2>&1
    "$bin" $cmd --workload "$deep/mm.json" >"$tmp/long.out" 2>&1 &&
        cmp -s "$tmp/short.out" "$tmp/long.out" && ok || bad "${cmd%% *} with a ${#deep}-byte path: $(head -2 "$tmp/long.out")"
done
mkdir -p "$tmp/home/workloads"
ln -s "$KITSUNE_HOME/hw" "$tmp/home/hw"
for i in $(seq 100 169); do cp $mm "$tmp/home/workloads/w$i.json"; done
check "compare --workload all over 70 files" \
    "$(KITSUNE_HOME="$tmp/home" "$bin" compare --hw a100 --exec bsp --workload all --format csv | tail -n +2 | wc -l | tr -d ' ')" 70
# 10. output files: atomic replacement of regular files (mode from the umask, symlinks kept),
#    devices and FIFOs written in place, write errors reported, temporary files removed on
#    SIGTERM and SIGINT, names up to the file system's 255 bytes
o="$tmp/out"; mkdir "$o"
(umask 027 && "$bin" predict --hw a100 --workload $mm -o "$o/m.txt") || bad "-o exit status"
check "-o mode with umask 027" "$(stat -c %a "$o/m.txt")" 640
(umask 002 && "$bin" sweep --hw a100 --exec bsp --workload $mm --vary B=1,2 -o "$o/s.csv") || bad "sweep -o exit status"
check "sweep -o mode with umask 002" "$(stat -c %a "$o/s.csv")" 664
"$bin" predict --hw a100 --workload $mm >"$o/want.txt"
ln -s m2.txt "$o/link.txt"
"$bin" predict --hw a100 --workload $mm -o "$o/link.txt" || bad "-o through a symlink"
[ -L "$o/link.txt" ] && cmp -s "$o/m2.txt" "$o/want.txt" && ok || bad "-o replaced the symlink instead of its target"
ln -s m3.csv "$o/slink.csv"
"$bin" sweep --hw a100 --exec bsp --workload $mm --vary B=1,2 -o "$o/slink.csv" || bad "sweep -o through a symlink"
[ -L "$o/slink.csv" ] && cmp -s "$o/m3.csv" "$o/s.csv" && ok || bad "sweep -o replaced the symlink"
"$bin" predict --hw a100 --workload $mm -o /dev/null && [ -c /dev/null ] && ok || bad "-o /dev/null"
"$bin" sweep --hw a100 --exec bsp --workload $mm --vary B=1,2 -o /dev/null && [ -c /dev/null ] && ok || bad "sweep -o /dev/null"
check "-o /dev/stdout" "$("$bin" predict --hw a100 --workload $mm -o /dev/stdout)" "$(cat "$o/want.txt")"
if [ -w /dev/full ]; then
    for cmd in "predict --hw a100 --workload $mm" "sweep --hw a100 --exec bsp --workload $mm --vary B=1,2" \
        "info --workload $mm" "list" "--help" "--version" "predict --help" "hw --help" \
        "info --hw a100" "map --hw a100 --workload $mm --why"; do
        "$bin" $cmd >/dev/full 2>"$o/err"
        st=$?
        [ $st = 1 ] && grep -q 'No space left on device' "$o/err" && ok || bad "$cmd >/dev/full: exit $st: $(cat "$o/err")"
    done
    "$bin" predict --hw a100 --workload $mm -o /dev/full 2>"$o/err"
    check "-o /dev/full" "$?: $(cat "$o/err")" "1: kitsune predict: /dev/full: cannot write: No space left on device"
    [ -c /dev/full ] && ok || bad "/dev/full was replaced"
fi
"$bin" sweep --hw a100 --exec bsp --workload $mm --vary B=1,2 --resume -o /dev/null 2>"$o/err"
check "--resume -o /dev/null" "$?: $(cat "$o/err")" \
    "2: kitsune sweep: --resume: needs -o FILE naming a regular file (it continues FILE.partial)"
mkfifo "$o/fifo"
cat "$o/fifo" >"$o/from-fifo" &
"$bin" predict --hw a100 --workload $mm -o "$o/fifo" || bad "-o FIFO exit status"
wait
[ -p "$o/fifo" ] && cmp -s "$o/from-fifo" "$o/want.txt" && ok || bad "-o FIFO"
long=$(printf '%0250d' 0)
"$bin" predict --hw a100 --workload $mm -o "$o/$long.x" && cmp -s "$o/$long.x" "$o/want.txt" && ok ||
    bad "-o with a 252-byte name"
{ KITSUNE_TEST_CRASH_AT=rows-written "$bin" sweep --hw a100 --exec bsp --workload $mm --vary B=1,2 -o "$o/$long"; } 2>/dev/null
[ "$(ls "$o" | grep -c '\.partial$')" = 1 ] && ok || bad "no partial file for a 250-byte name"
"$bin" sweep --hw a100 --exec bsp --workload $mm --vary B=1,2 --resume -o "$o/$long" &&
    cmp -s "$o/$long" "$o/s.csv" && [ "$(ls "$o" | grep -c '\.partial$')" = 0 ] && ok || bad "sweep -o with a 250-byte name"
# (a shell that runs its commands in the background ignores SIGINT for them, and kitsune keeps an
# ignored signal ignored: GNU env resets both to their default first where it can)
dflt=""; env --default-signal=INT,TERM true 2>/dev/null && dflt="env --default-signal=INT,TERM"
for sig in TERM INT; do
    cp "$o/want.txt" "$o/keep.txt"
    { KITSUNE_TEST_CRASH_AT=output-created:$sig $dflt "$bin" compare --hw a100 --workload $mm -o "$o/keep.txt"; } 2>/dev/null
    st=$?
    [ $st -gt 128 ] && cmp -s "$o/keep.txt" "$o/want.txt" && [ -z "$(ls -A "$o" | grep '\.tmp')" ] && ok ||
        bad "SIG$sig during -o: exit $st, left: $(ls -A "$o" | grep '\.tmp')"
done
echo "tools: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
