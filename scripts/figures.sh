#!/bin/sh
# figures.sh [BIN] [OUTDIR]: the paper-style figures (a)-(f) for the shipped a100 configuration,
# PNG and SVG, into OUTDIR (default figures/). Writes the CSV it plots beside them:
#   compare.csv  kitsune compare --hw a100 --workload all --mode both --format csv
#   sweep.csv    kitsune sweep --hw a100 --workload all --vary sm_count=...
# Environment: HW (default a100); CMP_CSV / SWEEP_CSV plot existing files instead.
# Until every execution model runs, falls back to what does (bsp) and says so.
set -u
bin=${1:-build/kitsune}
out=${2:-figures}
hw=${HW:-a100}
mkdir -p "$out"
cmp=${CMP_CSV:-$out/compare.csv}
swp=${SWEEP_CSV:-$out/sweep.csv}
if [ -z "${CMP_CSV:-}" ]; then
    if ! "$bin" compare --hw "$hw" --workload all --mode both --format csv -o "$cmp" 2>"$out/.err"; then
        echo "figures: full comparison failed: $(cat "$out/.err")" >&2
        echo "figures: falling back to the execution models that run (bsp, inference)" >&2
        "$bin" compare --hw "$hw" --workload all --exec bsp --format csv -o "$cmp" || exit 1
    fi
fi
if [ -z "${SWEEP_CSV:-}" ]; then
    vary="--vary sm_count=27,54,108,216,432"
    # shellcheck disable=SC2086
    if ! "$bin" sweep --hw "$hw" --workload all --mode inference $vary -o "$swp" 2>"$out/.err"; then
        echo "figures: sweep failed: $(cat "$out/.err"); falling back to bsp, inference" >&2
        # shellcheck disable=SC2086
        "$bin" sweep --hw "$hw" --workload all --exec bsp $vary -o "$swp" || exit 1
    fi
fi
rm -f "$out/.err"
if ! command -v gnuplot >/dev/null 2>&1; then
    echo "figures: gnuplot not found: skipping the rendering (CSV data in $out/)"
    exit 0
fi
gnuplot -e "cmp='$cmp'; swp='$swp'; outdir='$out'" scripts/plot.gp || exit 1
for f in "$out"/fig-*.png; do echo "figures: wrote $f and ${f%.png}.svg"; done
