#!/usr/bin/env python3
"""Merge measured calibration values into a kitsune hw file (default hw/h200.json).

Usage: python3 hw/calibrate/merge.py [--hw hw/h200.json] [--measured M.json] [--dry-run]
  --measured defaults to hw/calibrate/results/h200-measured.json (written by collect.py).
Standard library only. Exits 1 with a message if either file is missing or malformed.

What it sets (peaks stay vendor values; the measurements become ceilings/fractions):
  efficiency.dram_frac   = best copy (copy kernel or cudaMemcpy D2D, read+write) / dram.bandwidth_GBps
  efficiency.tensor_frac = best large bf16 GEMM / (sm_count * clock_MHz * tensor_flop_per_clk_per_sm.bf16)
  efficiency.simt_frac   = simt_fp32_TFLOPs / (sm_count * clock_MHz * simt_fp32_flop_per_clk_per_sm)
  efficiency.l2_frac     = l2_read_GBps / l2.bandwidth_GBps
  l2.latency_ns, dram.latency_ns, launch.overhead_us, launch.graph_overhead_us,
  queue.atomic_latency_ns (queue.atomic_round_trip_ns if the file uses that name) : measured
Fractions are clamped to (0, 1]. It records {"date", "gpu", "fields"} under "measured" and
rewrites sources[<path>] for every field it set.
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def die(msg):
    print("merge: " + msg, file=sys.stderr)
    sys.exit(1)


def get(d, path):
    cur = d
    for p in path.split("."):
        if not isinstance(cur, dict) or p not in cur:
            return None
        cur = cur[p]
    return cur


def put(d, path, v):
    parts = path.split(".")
    cur = d
    for p in parts[:-1]:
        if not isinstance(cur.get(p), dict):
            cur[p] = {}
        cur = cur[p]
    cur[parts[-1]] = v


def num(d, path, what):
    v = get(d, path)
    if not isinstance(v, (int, float)) or isinstance(v, bool) or v <= 0:
        die(f"{what}: '{path}' missing or not a positive number")
    return float(v)


def main(argv):
    hw_path = os.path.join(ROOT, "hw", "h200.json")
    meas_path = os.path.join(HERE, "results", "h200-measured.json")
    dry = False
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--hw" and i + 1 < len(argv):
            hw_path = argv[i + 1]
            i += 1
        elif a == "--measured" and i + 1 < len(argv):
            meas_path = argv[i + 1]
            i += 1
        elif a == "--dry-run":
            dry = True
        else:
            die(f"unknown argument '{a}' (see --help in the source docstring)")
        i += 1
    for p, what in ((hw_path, "hw file"), (meas_path, "measured file")):
        if not os.path.isfile(p):
            die(f"{what} {p} does not exist")
    try:
        with open(hw_path) as f:
            hw = json.load(f)
        with open(meas_path) as f:
            m = json.load(f)
    except ValueError as ex:
        die(f"malformed JSON: {ex}")
    if not isinstance(hw, dict) or not isinstance(m, dict):
        die("both files must hold a JSON object")

    date, gpu = m.get("date", "unknown"), m.get("gpu", "unknown")
    sm = num(hw, "sm_count", hw_path)
    clk = num(hw, "clock_MHz", hw_path) * 1e6
    set_fields = {}  # path -> (value, detail)

    def frac(x):
        return round(min(1.0, max(1e-3, x)), 4)

    copies = [(m[k], how) for k, how in (("dram_copy_GBps", "copy kernel"),
                                         ("dram_memcpy_d2d_GBps", "cudaMemcpy D2D"))
              if isinstance(m.get(k), (int, float))]
    if copies:
        spec = num(hw, "dram.bandwidth_GBps", hw_path)
        best, how = max(copies)
        set_fields["efficiency.dram_frac"] = (
            frac(best / spec),
            f"best copy ({how}) {best:.0f} GB/s (read+write) / spec {spec:.0f} GB/s")
    bf16 = m.get("gemm_bf16_best_large_TFLOPs")
    if isinstance(bf16, (int, float)):
        per = num(hw, "tensor_flop_per_clk_per_sm.bf16", hw_path)
        peak = sm * clk * per / 1e12
        set_fields["efficiency.tensor_frac"] = (
            frac(bf16 / peak), f"best large bf16 GEMM {bf16:.0f} TFLOP/s / peak {peak:.0f}")
    if isinstance(m.get("simt_fp32_TFLOPs"), (int, float)):
        per = num(hw, "simt_fp32_flop_per_clk_per_sm", hw_path)
        peak = sm * clk * per / 1e12
        set_fields["efficiency.simt_frac"] = (
            frac(m["simt_fp32_TFLOPs"] / peak),
            f"fp32 FMA {m['simt_fp32_TFLOPs']:.1f} TFLOP/s / peak {peak:.1f}")
    if isinstance(m.get("l2_read_GBps"), (int, float)):
        spec = num(hw, "l2.bandwidth_GBps", hw_path)
        set_fields["efficiency.l2_frac"] = (
            frac(m["l2_read_GBps"] / spec),
            f"L2 read {m['l2_read_GBps']:.0f} GB/s / l2.bandwidth_GBps {spec:.0f}")
    direct = [("l2.latency_ns", "l2_latency_ns", "pointer chase, 8 MiB working set"),
              ("dram.latency_ns", "dram_latency_ns", "pointer chase, 256 MiB working set"),
              ("launch.overhead_us", "launch_overhead_us", "back-to-back empty kernels"),
              ("launch.graph_overhead_us", "launch_graph_overhead_us",
               "empty kernels in a CUDA graph")]
    qkey = "queue.atomic_latency_ns"
    if get(hw, "queue.atomic_latency_ns") is None and get(hw, "queue.atomic_round_trip_ns") is not None:
        qkey = "queue.atomic_round_trip_ns"
    direct.append((qkey, "atomic_latency_ns", "dependent chain of atomicAdd, one thread"))
    for path, key, how in direct:
        v = m.get(key)
        if isinstance(v, (int, float)) and v > 0:
            set_fields[path] = (round(float(v), 3), how)
    if not set_fields:
        die(f"{meas_path} holds no usable measured value")

    src = hw.get("sources")
    if not isinstance(src, dict):
        src = {}
        hw["sources"] = src
    for path, (v, how) in set_fields.items():
        old = get(hw, path)
        put(hw, path, v)
        src[path] = (f"M: measured on {gpu} {date} by hw/calibrate "
                     f"(see hw/calibrate/README.md): {how}")
        print(f"{path:32s} {old!s:>10} -> {v}")
    meas = hw.get("measured") if isinstance(hw.get("measured"), dict) else {}
    fields = [f for f in meas.get("fields", []) if f not in set_fields] + list(set_fields)
    hw["measured"] = {"date": date, "gpu": gpu, "fields": fields}
    if dry:
        print("merge: dry run, nothing written")
        return 0
    tmp = hw_path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(hw, f, indent=2)
        f.write("\n")
    os.replace(tmp, hw_path)
    print(f"merge: wrote {hw_path} ({len(set_fields)} fields)")
    return 0


if __name__ == "__main__":
    if "-h" in sys.argv or "--help" in sys.argv:
        print(__doc__)
        sys.exit(0)
    sys.exit(main(sys.argv[1:]))
