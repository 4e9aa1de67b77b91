#!/bin/sh
# Measured H200 truth as regression guards (no GPU needed: the CSVs are committed):
# - validation/h200-ops.csv, the per-operator set: the issue's goal, MAPE <= 15%;
# - validation/apps/h200-apps.csv, the five applications against PyTorch eager (bsp) and
#   torch.compile (vf, --vf inductor), CUDA-graph replays: bsp time MAPE <= 10% and DRAM bytes
#   MAPE <= 15% (the goals); bsp worst case, vf time MAPE and the vf/bsp speedup error are guarded
#   at their current levels, above their goals (worst <= 20%, mean |speedup error| <= 0.1x): a
#   change that makes them worse fails, one that meets the goals may tighten them;
# - validation/apps/h200-micro-{fit,holdout}.csv, the library-kernel microbenchmarks: the fit
#   rows (in-sample for the hw "kernels" parameters) and the held-out rows, at current levels;
#   validation/apps/h200-alignk.csv, alignment-1 GEMMs and their aligned K + 1 over K at four
#   shapes (held out, 7.4% when it landed; limit 10%);
# - validation/apps/h200-gather-probe.csv, Inductor's generated kernels with indexed loads:
#   time and ncu DRAM reads at their levels when they landed (20.9%, 18.7%);
# - validation/apps/h200-norm-probe.csv, ATen's layer/RMS norm forward over D = 64..4096
#   (11.4% when it landed);
# - validation/apps/h200-bmm-probe.csv, DLRM's interaction GEMMs over K, N and the batch (9.4%
#   when it landed);
# - validation/apps/h200-short-probe.csv, ATen's column sums and norms at few rows (8.9% when it
#   landed, held-out rows 9.7%);
# - validation/pipeline/runs.csv, the real spatial pipelines (hw/calibrate/pipeline) against
#   kitsune map with their stages, allocations and tiles imposed on hw/h200-ktpipe.json: every
#   run's time (p90 |error| <= 15%, Spearman >= 0.8 per allocation sweep: the goals), by
#   hw/calibrate/pipeline/model.py compare --check; their DRAM bytes (model.py dram --check:
#   node tables of 1-67 MB, validation/pipeline/dram.md) and the mapper's own allocations
#   against the best measured ones (model.py ilpcheck --check, validation/pipeline/ilp-summary.md).
#   The multicast-ring runs (model.py ring --check, validation/pipeline/ring.md) have no error
#   goal (the model does not evict ring lines yet); the committed report must be current. The
#   block-placement runs (model.py placement --check, validation/pipeline/placement.md): NeRF
#   within 2% over block orders, and the mapper's allocation within 5% of its fastest neighbour
#   on placement-robust times in at least 5 of 9 combinations; the committed report current.
#   The per-tile traces (model.py trace --check, validation/pipeline/trace.md): report current.
#   The mapper on measured stage times (model.py profilecheck --check, profile-summary.md): its
#   allocation within 5% of the best measured in at least 8 of 9 combinations, none beyond 6%,
#   and still the allocation that was measured.
# The gaps and their causes are in the README (Validation on a real GPU).
set -u
bin=${1:-build/kitsune}
KITSUNE_HOME=$(pwd); export KITSUNE_HOME
pass=0
fail=0

check() { # name value limit: value <= limit
    if awk -v v="$2" -v l="$3" 'BEGIN { exit !(v ~ /^[0-9.]+$/ && v + 0 <= l + 0) }'; then
        pass=$((pass + 1))
        echo "  ok   $1: $2 (limit $3)"
    else
        fail=$((fail + 1))
        echo "  FAIL $1: $2 (limit $3)"
    fi
}

out=$("$bin" validate validation/h200-ops.csv --launch plain 2>&1) || true
mape=$(echo "$out" | sed -n 's/^mean absolute percentage error: \([0-9.]*\)%.*/\1/p')
echo "h200 per-op validation:"
check "h200-ops time MAPE %" "${mape:-999}" 15

csv=$("$bin" validate validation/apps/h200-apps.csv --hw h200 --format csv 2>&1)
if [ $? -ne 0 ]; then
    echo "h200 applications: validate failed: $csv"
    fail=$((fail + 1))
else
    echo "h200 applications:"
    # per (exec, metric): MAPE and worst; vf/bsp speedups paired by (workload, mode, params)
    stats=$(echo "$csv" | awk -F, 'NR > 1 && $10 != "" {
            k = $4 "_" $5; s[k] += $11; n[k]++; if ($11 > w[k]) w[k] = $11
            if ($5 == "time_s") { key = $2 SUBSEP $3 SUBSEP $7; ref[$4, key] = $8; mod[$4, key] = $9 }
        }
        END {
            for (k in s) printf "%s_mape %.2f\n%s_worst %.2f\n", k, 100 * s[k] / n[k], k, 100 * w[k]
            for (pk in ref) {
                split(pk, p, SUBSEP)
                key = p[2] SUBSEP p[3] SUBSEP p[4]
                if (p[1] != "bsp" || !(("vf", key) in ref)) continue
                d = ref["bsp", key] / ref["vf", key] - mod["bsp", key] / mod["vf", key]
                sd += d < 0 ? -d : d; nd++
                if ((d < 0 ? -d : d) > wd) wd = d < 0 ? -d : d
            }
            if (nd) printf "speedup_mean %.3f\nspeedup_worst %.3f\n", sd / nd, wd
        }')
    get() { echo "$stats" | awk -v k="$1" '$1 == k { print $2 }'; }
    check "bsp time MAPE % (goal 10)" "$(get bsp_time_s_mape)" 10
    check "bsp time worst % (goal 20)" "$(get bsp_time_s_worst)" 20
    check "bsp DRAM bytes MAPE % (goal 15)" "$(get bsp_dram_bytes_mape)" 15
    check "vf (inductor) time MAPE %" "$(get vf_time_s_mape)" 10
    check "vf/bsp speedup mean |error| x (goal 0.1)" "$(get speedup_mean)" 0.1
    # the goal's worst case (0.25x) is not met: README "What still misses" names the two cases
    check "vf/bsp speedup worst |error| x (goal 0.25, not met)" "$(get speedup_worst)" 0.5
fi

for part in micro-fit micro-holdout alignk; do
    out=$("$bin" validate validation/apps/h200-$part.csv --hw h200 2>&1) || true
    mape=$(echo "$out" | sed -n 's/^mean absolute percentage error: \([0-9.]*\)%.*/\1/p')
    case $part in micro-fit) lim=12 ;; micro-holdout) lim=25 ;; *) lim=10 ;; esac
    check "${part#micro-} time MAPE %" "${mape:-999}" $lim
done

# Inductor's generated kernels with indexed loads (hw/calibrate/apps/gather_probe.py): time and
# ncu DRAM reads, nothing fitted on them; before the L2 model of gathered tables was applied to
# them: time 32.3%, DRAM reads 24.6%
out=$("$bin" validate validation/apps/h200-gather-probe.csv --hw h200 2>&1) || true
for m in time_s dram_read_bytes; do
    mape=$(echo "$out" | awk -v m="$m" '$1 == m && $4 == "MAPE" { sub("%", "", $5); print $5 }')
    case $m in time_s) lim=22 ;; *) lim=20 ;; esac
    check "gather-probe $m MAPE %" "${mape:-999}" $lim
done

# ATen's layer_norm and rms_norm forward at twelve row lengths (hw/calibrate/apps/norm_probe.py):
# 16.6% with the linear instruction model, 11.4% with the per-warp one (op.c norm_warp_inst)
out=$("$bin" validate validation/apps/h200-norm-probe.csv --hw h200 2>&1) || true
mape=$(echo "$out" | sed -n 's/^mean absolute percentage error: \([0-9.]*\)%.*/\1/p')
check "norm-probe time MAPE %" "${mape:-999}" 12.5

# DLRM's interaction GEMMs on cuBLAS's wmma alignment-1 kernel (hw/calibrate/apps/bmm_probe.py;
# kernels.gemm_wmma_* fitted on 10 of the 39 rows): 84.6% with the 128x128 kernels' parameters
out=$("$bin" validate validation/apps/h200-bmm-probe.csv --hw h200 2>&1) || true
mape=$(echo "$out" | sed -n 's/^mean absolute percentage error: \([0-9.]*\)%.*/\1/p')
check "bmm-probe time MAPE %" "${mape:-999}" 10.5

# ATen's column sums and one-wave norms at few rows (hw/calibrate/apps/short_probe.py, CUPTI
# kernel durations): 48.6% before the chain of round trips and the ATen grid emulation (cost.c),
# 8.9% when they landed; kernels.col_reduce_fixed_ns is fitted on the C = 64, 256, 1024 column
# sums, so the held-out rows (the other column sums and every norm) are guarded on their own
# (9.7% when it landed)
out=$("$bin" validate validation/apps/h200-short-probe.csv --hw h200 --format csv 2>&1) || true
held=$(echo "$out" | awk -F, 'NR > 1 && /held out/ { n++; s += $11 } END { if (n) printf "%.2f", 100 * s / n }')
all=$(echo "$out" | awk -F, 'NR > 1 && $11 != "" { n++; s += $11 } END { if (n) printf "%.2f", 100 * s / n }')
check "short-probe time MAPE %" "${all:-999}" 10
check "short-probe held-out time MAPE %" "${held:-999}" 11

echo "real spatial pipelines (validation/pipeline):"
if command -v python3 >/dev/null; then
    for what in compare:times dram:DRAM ilpcheck:mapper profilecheck:profile ring:ring placement:placement \
        trace:trace; do
        tmpd=$(mktemp -d)
        if KITSUNE="$bin" python3 hw/calibrate/pipeline/model.py "${what%%:*}" --check \
            --out "$tmpd" >"$tmpd/log" 2>&1; then
            pass=$((pass + 1))
            echo "  ok   pipeline ${what#*:}: $(tail -1 "$tmpd/log" | cut -c1-100)"
        else
            fail=$((fail + 1))
            echo "  FAIL pipeline ${what#*:}:"; tail -5 "$tmpd/log"
        fi
        rm -rf "$tmpd"
    done
else
    echo "  (skipped: no python3)"
fi

echo "validation: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
