#!/usr/bin/env bash
# Whole-application truth (issue 12) on the GPU of this machine, in one call; raw results go to
# $OUT (default hw/calibrate/apps/results/raw). Then, on any machine (standard-library Python):
#   python3 hw/calibrate/apps/collect_apps.py     raw/ -> validation/h200-apps*.csv, h200-micro.csv
# Usage: hw/calibrate/apps/run.sh [--quick] [--budget-s S] [--no-ncu] [--no-micro]
#                                 [--micro-only GROUP[,GROUP]] (only those micro groups, e.g. alignk)
#                                 [--no-compile] [--workers N]
# Nothing here changes clocks, power limits or GPU modes (ncu runs with --clock-control none).
set -u
HERE="$(cd "$(dirname "$0")" && pwd)"
OUT="${OUT:-$HERE/results/raw}"
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
# one Inductor/Triton cache for the parent, the compile workers and the ncu child
export TORCHINDUCTOR_CACHE_DIR="${TORCHINDUCTOR_CACHE_DIR:-/tmp/kt_inductor_cache}"
export TRITON_CACHE_DIR="${TRITON_CACHE_DIR:-/tmp/kt_triton_cache}"
LOG="$OUT/log.txt"
exec > >(tee -a "$LOG") 2>&1

echo "== $(date -u +%Y-%m-%dT%H:%M:%SZ) kitsune application harness $*"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu --format=csv || true
python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)' || true

# clock / power log in the background for the whole run
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,utilization.gpu \
  --format=csv,noheader,nounits -lms 500 > "$OUT/smi_log.csv" 2>/dev/null &
SMI_PID=$!

python3 "$HERE/run_apps.py" --out "$OUT" "$@"
rc=$?

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv || true
kill "$SMI_PID" 2>/dev/null
echo "== done rc=$rc $(date -u +%Y-%m-%dT%H:%M:%SZ)"
ls -la "$OUT"
exit $rc
