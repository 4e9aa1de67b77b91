#!/bin/sh
# demo.sh [BIN]: the main job on the shipped defaults - bsp, vf and kitsune side by side for every
# shipped workload on a100, inference and training, the table of the model against the paper
# (the README's "Results on the paper's A100-class GPU"), then the figures (make figures).
set -u
bin=${1:-build/kitsune}
KITSUNE_HOME=${KITSUNE_HOME:-$(pwd)}; export KITSUNE_HOME
echo "== kitsune compare --hw a100 --workload all --mode both"
if ! "$bin" compare --hw a100 --workload all --mode both; then
    echo "demo: the full comparison failed (see above); showing what runs: bsp, inference"
    "$bin" compare --hw a100 --workload all --exec bsp || exit 1
fi
echo
echo "== the model against the Kitsune paper on its A100-class GPU (paper values in parentheses)"
sh scripts/paper-table.sh "$bin" || echo "demo: the paper table failed (see above)"
echo
echo "== figures (scripts/figures.sh)"
sh scripts/figures.sh "$bin" figures || exit 1
echo "demo: figures are in $(pwd)/figures/ (fig-a..g, PNG and SVG; data: compare.csv, sweep.csv)"
