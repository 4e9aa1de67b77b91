#!/bin/sh
# figures.sh [BIN] [OUTDIR]: the paper-style figures for one GPU, PNG (300 dpi at 3.5 in, paper
# column width) and SVG, into OUTDIR (default figures/):
#   fig-a-speedup   speedup over bsp per workload and mode, geomean group, paper marks
#   fig-b-traffic   DRAM traffic removed vs bsp, geomean group, paper marks (Table 2)
#   fig-c-coverage  ops in multi-op kernels / pipelines, paper marks (Table 2)
#   fig-d-classes   time by utilization class, % of bsp, inference and training panels
#   fig-e-energy    energy by part (DRAM, L2, compute, SMEM+RF, static), % of bsp, both modes
#   fig-f-sweep     kitsune speedup vs SM count with L2 bandwidth scaled alike (the paper's
#                   sensitivity study), per workload, inference and training panels
#   fig-g-sweep2d   kitsune speedup vs SM count x L2 bandwidth (cross product), per workload
# Every title names the GPU and whether its hw file is calibrated (has a "measured" object) or
# datasheet. The paper's numbers (validation/kitsune-paper.csv, scripts/paper-geomeans.csv) are
# marked only for an A100-class GPU (the paper simulated one); other GPUs say so in the caption.
# Writes the CSV it plots beside them:
#   compare.csv       kitsune compare --hw HW --workload all --mode both --format csv
#   energy-parts.csv  per-part energy from `kitsune predict --format json`, when compare.csv
#                     has no energy_*_J columns
#   paper-ref.csv     the paper's numbers and op counts, as drawn
#   sweep.csv         kitsune sweep --hw HW --workload all --mode both --vary sm_count=x0.25..x4
#                     --vary l2.bandwidth_GBps=x0.25..x4
# Environment: HW (default a100, else the hw column of CMP_CSV); CMP_CSV / SWEEP_CSV plot
# existing files instead (a SWEEP_CSV is drawn by scripts/plot-sweep.sh's automatic choice).
# Until every execution model runs, falls back to what does (bsp) and says so.
# Exit status: 0 (also when gnuplot is missing: CSV only), 1 when a step fails.
set -u
bin=${1:-build/kitsune}
out=${2:-figures}
here=$(dirname "$0")
root=$here/..
mkdir -p "$out"
cmp=${CMP_CSV:-$out/compare.csv}
swp=${SWEEP_CSV:-$out/sweep.csv}
if [ -n "${HW:-}" ]; then
    hw=$HW
elif [ -n "${CMP_CSV:-}" ]; then
    hw=$(awk -F, 'NR==1{for(i=1;i<=NF;i++)if($i=="hw")c=i;next} c{print $c;exit}' "$CMP_CSV")
    hw=${hw:-a100}
else
    hw=a100
fi
status=0
fallback=0
if [ -z "${CMP_CSV:-}" ]; then
    if ! "$bin" compare --hw "$hw" --workload all --mode both --format csv -o "$cmp" 2>"$out/.err"; then
        echo "figures: full comparison failed: $(cat "$out/.err")" >&2
        echo "figures: falling back to the execution models that run (bsp, inference)" >&2
        "$bin" compare --hw "$hw" --workload all --exec bsp --format csv -o "$cmp" || exit 1
        fallback=1
    fi
fi
sweepx="--vary sm_count=x0.25,x0.5,x1,x2,x4 --vary l2.bandwidth_GBps=x0.25,x0.5,x1,x2,x4"
if [ -z "${SWEEP_CSV:-}" ]; then
    # shellcheck disable=SC2086
    if ! "$bin" sweep --hw "$hw" --workload all --mode both $sweepx -o "$swp" 2>"$out/.err"; then
        echo "figures: sweep failed: $(cat "$out/.err"); falling back to bsp, inference" >&2
        # shellcheck disable=SC2086
        "$bin" sweep --hw "$hw" --workload all --exec bsp $sweepx -o "$swp" || exit 1
        fallback=1
    fi
fi
rm -f "$out/.err"

# The GPU: its name, a short description, calibrated or datasheet (`kitsune info --hw HW
# --format json`, which resolves names and "base" files as every command does).
hwname=$hw desc='' calib="hw file not found"
if hwjson=$("$bin" info --hw "$hw" --format json 2>/dev/null); then
    # one line per field: name, description, calibration (fields, gpu, date) or nothing
    info=$(printf '%s\n' "$hwjson" | awk '
        function str(key, s,   t) {
            if (!match(s, "\"" key "\": (\"[^\"]*\"|[0-9]+)")) return ""
            t = substr(s, RSTART, RLENGTH); sub(/^"[^"]*": "?/, "", t); sub(/"$/, "", t); return t
        }
        /"hw": / {
            print str("name", $0); print str("description", $0)
            if (match($0, /"calibration": \{[^}]*\}/)) {
                m = substr($0, RSTART, RLENGTH); n = str("fields", m)
                print "calibrated hw file (" (n > 0 ? n " values " : "") "measured on " str("gpu", m) (str("date", m) != "" ? ", " str("date", m) : "") ")"
            } else print "datasheet hw file (not calibrated)"
            exit
        }')
    n=$(printf '%s\n' "$info" | sed -n 1p); [ -n "$n" ] && hwname=$n
    desc=$(printf '%s\n' "$info" | sed -n 2p | sed 's/ (.*//; s/[;,].*//; s/ from .*//')
    calib=$(printf '%s\n' "$info" | sed -n 3p)
fi
gpu=$hwname
[ -n "$desc" ] && gpu="$hwname ($desc)"
# the paper simulated an A100-class GPU: its numbers go on A100 figures only
case "$hwname $desc" in
*a100* | *A100*) paper=1 nopaper= ;;
*) paper=0 nopaper="paper marks omitted: the paper simulated an A100-class GPU, not $hwname" ;;
esac

# The paper's numbers as drawn: Table 2, its speedups and geomeans, its op counts (coverage).
ref=$out/paper-ref.csv
{
    cat "$root/validation/kitsune-paper.csv"
    grep -v '^#' "$here/paper-geomeans.csv" | tail -n +2
    "$bin" info --format json 2>/dev/null | awk '
        function str(key,   t) {
            if (!match($0, "\"" key "\": (\"[^\"]*\"|[0-9]+)")) return ""
            t = substr($0, RSTART, RLENGTH); sub(/^"[^"]*": "?/, "", t); sub(/"$/, "", t); return t
        }
        str("paper_ops") != "" { print str("workload") "," str("mode") ",,paper_ops," str("paper_ops") ",kitsune info (the paper'"'"'s op count)" }'
} >"$ref" 2>/dev/null || { echo "figures: could not write $ref" >&2; status=1; }

# Energy parts: from compare.csv when it has them, else from predict's JSON (same defaults).
parts=
if ! head -1 "$cmp" | tr ',' '\n' | grep -qx 'energy_dram_J' && [ -z "${CMP_CSV:-}" ]; then
    parts=$out/energy-parts.csv
    echo "workload,mode,exec,energy_tensor_J,energy_simt_J,energy_dram_J,energy_l2_J,energy_smem_J,energy_rf_J,energy_static_J" >"$parts"
    awk -F, 'NR==1{for(i=1;i<=NF;i++)c[$i]=i;next} !s[$c["workload"] " " $c["mode"]]++{print $c["workload"], $c["mode"]}' "$cmp" |
        while read -r w m; do
            "$bin" predict --hw "$hw" --workload "$w" --mode "$m" --exec all --format json 2>/dev/null |
                awk -v w="$w" -v m="$m" '
                function num(key,   t) {
                    if (!match(b, "\"" key "\": [-0-9.e+]+")) return ""
                    t = substr(b, RSTART, RLENGTH); sub(/^[^:]*: /, "", t); return t
                }
                /^ *\{"exec": / {
                    x = $0; sub(/^ *\{"exec": "/, "", x); sub(/".*/, "", x)
                    if (!match($0, /"energy_breakdown_J": \{[^}]*\}/)) next
                    b = substr($0, RSTART, RLENGTH)
                    print w "," m "," x "," num("tensor") "," num("simt") "," num("dram") "," num("l2") "," num("smem") "," num("rf") "," num("static")
                }'
        done >>"$parts"
    [ "$(wc -l <"$parts")" -gt 1 ] || parts=
fi

if ! command -v gnuplot >/dev/null 2>&1; then
    echo "figures: gnuplot not found: skipping the rendering (CSV data in $out/)"
    exit $status
fi
gq() { printf '%s' "$1" | sed "s/'/''/g"; } # a gnuplot single-quoted string
gnuplot -e "cmp='$(gq "$cmp")'; outdir='$(gq "$out")'; scripts='$(gq "$here")'; ref='$(gq "$ref")'; \
parts='$(gq "$parts")'; paper=$paper; nopaper='$(gq "$nopaper")'; gpu='$(gq "$gpu")'; calib='$(gq "$calib")'" \
    "$here/plot.gp" || exit 1

# The sweep figures.
ps() { sh "$here/plot-sweep.sh" --bin "$bin" --hw "$hw" --gpu "$gpu" --calib "$calib" "$@"; }
if [ -n "${SWEEP_CSV:-}" ]; then
    ps --title "(f) $(basename "$swp")" "$swp" "$out/fig-f-sweep" || status=1
elif [ $fallback -eq 0 ]; then
    ps --title "(f) Scaling SMs and L2 bandwidth together" \
        -y speedup_vs_bsp -w exec=kitsune --diag sm_count,l2.bandwidth_GBps \
        -x sm_count -s workload -f mode "$swp" "$out/fig-f-sweep" || status=1
    ps --title "(g) Kitsune inference speedup: SMs x L2 bandwidth" --free-y \
        -y speedup_vs_bsp -w exec=kitsune -w mode=inference \
        -x sm_count -s l2.bandwidth_GBps -f workload "$swp" "$out/fig-g-sweep2d" || status=1
else
    ps --title "(f) bsp time, SMs and L2 bandwidth scaled together (bsp only: fallback)" \
        -y time_s -w exec=bsp -w mode=inference --diag sm_count,l2.bandwidth_GBps \
        -x sm_count -s workload "$swp" "$out/fig-f-sweep" || status=1
fi
for f in "$out"/fig-*.png; do [ -e "$f" ] && echo "figures: wrote $f and ${f%.png}.svg"; done
exit $status
