#!/usr/bin/env bash
# Run the whole calibration on the GPU of this machine; raw results go to $OUT (default
# hw/calibrate/results/raw). Then, on any machine:
#   python3 hw/calibrate/collect.py  <raw dir>   -> hw/calibrate/results/h200-measured.json (+ ops)
#   python3 hw/calibrate/merge.py                -> hw/h200.json
#   python3 hw/calibrate/make_ops_csv.py         -> validation/h200-ops.csv
# Usage: hw/calibrate/run.sh [--quick] [--skip-ncu]
set -u
HERE="$(cd "$(dirname "$0")" && pwd)"
OUT="${OUT:-$HERE/results/raw}"
mkdir -p "$OUT"
QUICK=""; NCU=1
for a in "$@"; do
  case "$a" in --quick) QUICK="--quick";; --skip-ncu) NCU=0;; esac
done
export PYTHONUNBUFFERED=1
LOG="$OUT/log.txt"
exec > >(tee -a "$LOG") 2>&1

echo "== $(date -u +%Y-%m-%dT%H:%M:%SZ) kitsune calibration $QUICK"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu --format=csv || true
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader > "$OUT/smi_info.txt" 2>/dev/null || true
python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)' || true

# clock / power log in the background for the whole run
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,utilization.gpu \
  --format=csv,noheader,nounits -lms 500 > "$OUT/smi_log.csv" 2>/dev/null &
SMI_PID=$!

echo "== build"
nvcc -O3 -std=c++17 -arch=sm_90 -o /tmp/kt_calib "$HERE/calib.cu" || { echo "nvcc failed"; }

echo "== calib (CUDA microbenchmarks)"
/tmp/kt_calib $QUICK > "$OUT/calib.json" || echo "calib FAILED rc=$?"

echo "== gemm throughput (PyTorch/cuBLAS)"
python3 "$HERE/torch_bench.py" gemm "$OUT/gemm.json" $QUICK || echo "gemm FAILED rc=$?"

echo "== per-operator timing"
python3 "$HERE/torch_bench.py" ops "$OUT/ops.json" $QUICK || echo "ops FAILED rc=$?"

if [ "$NCU" = 1 ]; then
  echo "== per-operator DRAM bytes (Nsight Compute)"
  t0=$(date +%s)
  ncu --clock-control none --profile-from-start off --print-units base --csv --page raw \
      --metrics dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum \
      --log-file "$OUT/ncu.csv" \
      python3 "$HERE/torch_bench.py" prof "$OUT/prof_order.json" $QUICK || echo "ncu FAILED rc=$?"
  echo "ncu took $(( $(date +%s) - t0 )) s"
fi

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv || true
kill "$SMI_PID" 2>/dev/null
echo "== done $(date -u +%Y-%m-%dT%H:%M:%SZ)"
ls -la "$OUT"
