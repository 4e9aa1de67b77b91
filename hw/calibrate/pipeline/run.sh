#!/usr/bin/env bash
# Spatial-pipeline measurements on the GPU of this machine (H200). Raw output goes to $OUT
# (default /tmp/ktp-out); at most 8 files, so that all of them come back from the device tool.
#   hw/calibrate/pipeline/run.sh smoke   build check, small-size self-test, one quick sweep, tiny ncu
#   hw/calibrate/pipeline/run.sh full    self-test, the allocation sweep, bsp/compile, ncu (< 9 min)
#   hw/calibrate/pipeline/run.sh cat     MGN-only re-sweep (3 combinations, fewer samples) + ncu, < 3 min
#   hw/calibrate/pipeline/run.sh ilp [CASES]  the mapper's allocations and their neighbourhoods
#                                        (ilp-cases.txt from model.py ilp --cases, or the file
#                                        CASES) + ncu of two, < 7 min
#   hw/calibrate/pipeline/run.sh placement  the cases of placement-cases.txt (the mapper's
#                                        allocation and its fastest and slowest one-CTA
#                                        neighbours) under 10 block orders (where the block
#                                        scheduler puts each stage's CTAs), per-block profiles, < 6 min
#   hw/calibrate/pipeline/run.sh placement PLACES [CASES]  the same cases (or those of the file
#                                        CASES) under the given block orders and SM placements
#                                        (pipe.py sm_key: sm, walk, split; trace: order 0 traced)
#   hw/calibrate/pipeline/run.sh dram    where the MGN pipelines' DRAM bytes go: ncu L2 and DRAM
#                                        counters of the mapper's allocations, node tables of
#                                        1 to 67 MB, < 5 min
#   hw/calibrate/pipeline/run.sh ring [FILE]  the multicast ring of mgn-mc (e_in to fc1 and
#                                        ln_res) at ring sizes of 8-50 MiB (queue depth 1-4,
#                                        44-132 CTAs, TM 64 and 128) against mgn (no deep ring) at
#                                        the same allocations: ncu L2 and DRAM counters, one CSV,
#                                        < 7 min; the cases of FILE (default ring-cases.txt)
# Clocks, power limits and GPU modes are left as found (ncu with --clock-control none).
set -u
HERE="$(cd "$(dirname "$0")" && pwd)"
MODE="${1:-smoke}"
OUT="${OUT:-/tmp/ktp-out}"
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
START=$(date +%s)
exec > >(tee -a "$OUT/log.txt") 2>&1
el() { echo $(( $(date +%s) - START )); }

echo "== $(date -u +%Y-%m-%dT%H:%M:%SZ) ktpipe $MODE"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu,compute_mode --format=csv || true
python3 -c 'import torch, triton; print("torch", torch.__version__, "cuda", torch.version.cuda, "triton", triton.__version__)' || true
nvcc --version | tail -2 || true

# clock / power log for the whole run
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,utilization.gpu \
  --format=csv,noheader,nounits -lms 500 > "$OUT/smi_log.csv" 2>/dev/null &
SMI_PID=$!

# library: the carried build if it loads, else build here
LIB="$HERE/build/libktpipe.so"
if ! python3 -c "import ctypes,sys; ctypes.CDLL(sys.argv[1])" "$LIB" 2>/dev/null; then
  echo "== building libktpipe.so on the device"
  mkdir -p /tmp/ktpb
  nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -Xcompiler -fPIC -shared \
       -Xptxas -v -o /tmp/ktpb/libktpipe.so "$HERE/ktpipe.cu" 2>&1 | grep -E "error|registers|spill" 
  LIB=/tmp/ktpb/libktpipe.so
fi
export KTP_LIB="$LIB"
echo "library: $LIB (t=$(el)s)"

if command -v cuobjdump >/dev/null; then
  cuobjdump --dump-sass "$LIB" > /tmp/ktp.sass 2>/dev/null
  echo "SASS: $(grep -c HMMA /tmp/ktp.sass) HMMA, $(grep -c LDSM /tmp/ktp.sass) LDSM, $(grep -c LDGSTS /tmp/ktp.sass) LDGSTS, $(grep -cE 'LDL|STL' /tmp/ktp.sass) LDL/STL"
fi
if [ "$MODE" = smoke ]; then
  echo "== selftest (t=$(el)s)"
  timeout 90 python3 "$HERE/pipe.py" selftest --out "$OUT" || echo "selftest rc=$?"
  echo "== ncu tiny (t=$(el)s)"
  timeout 60 ncu --clock-control none --print-units base --csv --page raw -k regex:ktp_kernel -c 1 \
      --metrics dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum \
      --log-file "$OUT/ncu_tiny.csv" \
      python3 "$HERE/pipe.py" one --pipe mgn --tm 128 --alloc 4-8-4-4-4 --E 16384 --B 16384 --reps 1 \
      > /tmp/ncu_tiny.out 2>&1 || echo "ncu rc=$?"
  tail -5 /tmp/ncu_tiny.out; tail -3 "$OUT/ncu_tiny.csv"
  echo "== quick sweep at full size (t=$(el)s)"
  timeout 130 python3 "$HERE/pipe.py" sweep --quick --out "$OUT" --deadline-abs $(( START + 225 )) \
      || echo "sweep rc=$?"
elif [ "$MODE" = ilp ]; then
  echo "== the mapper's allocations and neighbours (t=$(el)s)"
  timeout 330 python3 "$HERE/pipe.py" cases --file "${2:-$HERE/ilp-cases.txt}" --out "$OUT" \
      --deadline-abs $(( START + 300 )) || echo "cases rc=$?"
  # DRAM bytes of the mapper's MGN allocations (the mgn stages, and e_in multicast to ln_res)
  n=0
  for c in "mgn mgn 128 1" "mgn mgn-mc 128 1"; do
    set -- $c
    a=$(awk -v p="$1" -v r="$2" -v t="$3" -v m="$4" '$1==p && $2==r && $3==t && $4==m && $6=="ilp" {print $5; exit}' "$HERE/ilp-cases.txt")
    REM=$(( 400 - $(el) ))
    [ -n "$a" ] && [ $REM -gt 20 ] || continue
    n=$((n + 1))
    echo "== ncu $c $a (t=$(el)s)"
    timeout $REM ncu --clock-control none --print-units base --csv --page raw -k regex:ktp_kernel -c 1 \
        --metrics dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum \
        --log-file "$OUT/ncu_ilp$n.csv" \
        python3 "$HERE/pipe.py" one --pipe "$1" --arch "$2" --tm "$3" --minb "$4" --alloc "$a" --reps 1 \
        > /tmp/ncu_ilp.out 2>&1 || echo "ncu rc=$?"
    tail -2 "$OUT/ncu_ilp$n.csv"
  done
elif [ "$MODE" = placement ]; then
  echo "== block orders (t=$(el)s)"
  # PLACES (optional second argument): block orders and SM placements, e.g. walk,sm,split,0
  # CASES (optional third argument): another cases file (default placement-cases.txt)
  timeout 480 python3 "$HERE/pipe.py" placement --file "${3:-$HERE/placement-cases.txt}" --out "$OUT" \
      --orders 10 --places "${2:-}" --deadline-abs $(( START + 450 )) || echo "placement rc=$?"
elif [ "$MODE" = dram ]; then
  # label pipe arch tm alloc N: the node table is N x 128 bf16 (N = 65536: 16.8 MB, the default)
  M=dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum
  M=$M,lts__t_sectors_op_read.sum,lts__t_sectors_op_write.sum
  M=$M,lts__t_sector_op_read_hit_rate.pct,lts__t_sector_op_write_hit_rate.pct
  n=0
  while read -r label p arch tm alloc N; do
    REM=$(( 300 - $(el) ))
    [ $REM -gt 15 ] || { echo "deadline: skipping $label"; continue; }
    n=$((n + 1))
    echo "== ncu $label: $p $arch TM$tm $alloc N=$N (t=$(el)s)"
    timeout $REM ncu --clock-control none --print-units base --csv --page raw -k regex:ktp_kernel -c 1 \
        --metrics $M --log-file "$OUT/dram_$label.csv" \
        python3 "$HERE/pipe.py" one --pipe "$p" --arch "$arch" --tm "$tm" --alloc "$alloc" --N "$N" \
        --reps 1 > "/tmp/dram_$label.out" 2>&1 || { echo "ncu rc=$?"; tail -3 "/tmp/dram_$label.out"; }
    grep -o '"time_s": [0-9.e-]*' "/tmp/dram_$label.out" | head -1
  done <<'CASES'
mgn-n65k mgn mgn 128 46-32-18-18-17 65536
mgn-n4k mgn mgn 128 46-32-18-18-17 4096
mgn-n262k mgn mgn 128 46-32-18-18-17 262144
mc-n65k mgn mgn-mc 128 46-31-18-18-19 65536
mc-n4k mgn mgn-mc 128 46-31-18-18-19 4096
fused-n65k mgn mgn-fused 128 59-25-25-23 65536
fused-n4k mgn mgn-fused 128 59-25-25-23 4096
nerf nerf nerf 128 9-17-17-17-17-20-17-16 0
mgn-n16k mgn mgn 128 46-32-18-18-17 16384
mgn-n32k mgn mgn 128 46-32-18-18-17 32768
mgn-n131k mgn mgn 128 46-32-18-18-17 131072
fused-n262k mgn mgn-fused 128 59-25-25-23 262144
CASES
elif [ "$MODE" = ring ]; then
  # label pipe arch tm depth alloc N: every ncu CSV appended to $OUT/ring.csv behind its case
  M=dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum
  M=$M,lts__t_sectors_op_read.sum,lts__t_sectors_op_write.sum
  M=$M,lts__t_sector_op_read_hit_rate.pct,lts__t_sector_op_write_hit_rate.pct
  : > "$OUT/ring.csv"
  while read -r label p arch tm depth alloc N; do
    REM=$(( 400 - $(el) ))
    [ $REM -gt 20 ] || { echo "deadline: skipping $label"; continue; }
    echo "== ncu $label: $p $arch TM$tm depth $depth $alloc N=$N (t=$(el)s)"
    timeout $REM ncu --clock-control none --print-units base --csv --page raw -k regex:ktp_kernel -c 1 \
        --metrics $M --log-file "/tmp/ring_$label.csv" \
        python3 "$HERE/pipe.py" one --pipe "$p" --arch "$arch" --tm "$tm" --depth "$depth" \
        --alloc "$alloc" --N "$N" --reps 1 < /dev/null > "/tmp/ring_$label.out" 2>&1 \
        || { echo "ncu rc=$?"; tail -3 "/tmp/ring_$label.out"; }
    grep -o '"time_s": [0-9.e-]*' "/tmp/ring_$label.out" | head -1
    grep -o '"status": "[a-z]*"' "/tmp/ring_$label.out" | head -1
    if [ -s "/tmp/ring_$label.csv" ]; then
      echo "## case $label $p $arch $tm $depth $alloc $N" >> "$OUT/ring.csv"
      grep -v '^==' "/tmp/ring_$label.csv" >> "$OUT/ring.csv"
    fi
  done < <(grep -v '^#' "${2:-$HERE/ring-cases.txt}")
elif [ "$MODE" = cat ]; then
  # re-sweep of the MGN pipelines after a change to the gather/concat stage (no baselines)
  echo "== sweep, MGN only (t=$(el)s)"
  timeout $(( 125 - $(el) )) python3 "$HERE/pipe.py" sweep --out "$OUT" --combos 0,4,6 --lite \
      --skip-eager --skip-check --no-compile --impl 1 --deadline-abs $(( START + 100 )) || echo "sweep rc=$?"
  REM=$(( 150 - $(el) ))
  echo "== ncu (t=$(el)s, ${REM}s left)"
  if [ $REM -gt 15 ]; then
    timeout $REM ncu --clock-control none --profile-from-start off --print-units base --csv --page raw \
        --metrics dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum \
        --log-file "$OUT/ncu.csv" \
        python3 "$HERE/pipe.py" prof --prof-only mgn --out "$OUT" --alloc-json "$OUT/meta.json" \
        > /tmp/ncu_prof.out 2>&1 || echo "ncu rc=$?"
    tail -3 /tmp/ncu_prof.out
  fi
else
  echo "== selftest (t=$(el)s)"
  timeout 60 python3 "$HERE/pipe.py" selftest --out /tmp/ktp-selftest || echo "selftest rc=$?"
  echo "== sweep (t=$(el)s)"
  timeout $(( 360 - $(el) )) python3 "$HERE/pipe.py" sweep --out "$OUT" --deadline-abs $(( START + 335 )) \
      || echo "sweep rc=$?"
  REM=$(( 475 - $(el) ))
  echo "== ncu (t=$(el)s, ${REM}s left)"
  if [ $REM -gt 40 ]; then
    timeout $REM ncu --clock-control none --profile-from-start off --print-units base --csv --page raw \
        --metrics dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum \
        --log-file "$OUT/ncu.csv" \
        python3 "$HERE/pipe.py" prof --out "$OUT" --alloc-json "$OUT/meta.json" > /tmp/ncu_prof.out 2>&1 \
        || echo "ncu rc=$?"
    tail -5 /tmp/ncu_prof.out
  fi
fi
kill $SMI_PID 2>/dev/null
echo "== done (t=$(el)s)"
ls -la "$OUT"
