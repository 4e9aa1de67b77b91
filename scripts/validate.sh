#!/bin/sh
# validate.sh [BIN]: the model against every reference table in validation/ (a report: the
# paper's disagreement with the model does not fail the build).
#   validation/kitsune-paper.csv  the paper's Table 2 and text speedups, on a100
#   validation/h200-ops.csv       per-op H200 measurements, before calibration (hw/h200-datasheet.json)
#                                 and after (hw/h200.json); --launch plain, as they were timed
#                                 (CUDA events around one launch)
set -u
bin=${1:-build/kitsune}
KITSUNE_HOME=${KITSUNE_HOME:-$(pwd)}; export KITSUNE_HOME
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
for f in validation/*.csv; do
    [ -f "$f" ] || continue
    case "$f" in
    *h200*)
        echo "== $f, before calibration (hw/h200-datasheet.json), summary"
        sed 's|,h200,|,h200-datasheet,|' "$f" >"$tmp"
        "$bin" validate "$tmp" --launch plain | sed -n '/rows, /,$p'
        echo
        echo "== $f, after calibration (hw/h200.json)"
        "$bin" validate "$f" --launch plain
        rc=$?
        ;;
    *)
        echo "== $f (--hw a100)"
        "$bin" validate "$f" --hw a100
        rc=$?
        ;;
    esac
    [ $rc -ne 0 ] && echo "validate: $f: exit status $rc (reported, not fatal)"
    echo
done
exit 0
