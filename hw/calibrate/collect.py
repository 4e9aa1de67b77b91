#!/usr/bin/env python3
"""Collect the raw output of hw/calibrate/run.sh into hw/calibrate/results/h200-measured.json.

Usage: python3 hw/calibrate/collect.py [RAW_DIR] [-o OUT.json]
  RAW_DIR defaults to hw/calibrate/results/raw (calib.json, gemm.json, smi_log.csv,
  smi_info.txt, log.txt as written by run.sh). Standard library only.
Every value carries its unit in its key name.
"""
import json
import os
import re
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def load(path, default=None):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as ex:
        print(f"collect: cannot read {path}: {ex}", file=sys.stderr)
        return default


def main(argv):
    raw = os.path.join(HERE, "results", "raw")
    out = os.path.join(HERE, "results", "h200-measured.json")
    args = list(argv)
    if "-o" in args:
        i = args.index("-o")
        out = args[i + 1]
        del args[i:i + 2]
    if args:
        raw = args[0]
    calib = load(os.path.join(raw, "calib.json"), {})
    gemm = load(os.path.join(raw, "gemm.json"), {})
    if not calib and not gemm:
        print("collect: no calib.json or gemm.json in " + raw, file=sys.stderr)
        return 1

    m = {}
    # date / gpu / driver
    date = None
    try:
        with open(os.path.join(raw, "log.txt")) as f:
            mm = re.search(r"== (\d{4}-\d\d-\d\d)T", f.read())
            date = mm.group(1) if mm else None
    except OSError:
        pass
    gpu, driver, maxclk = calib.get("gpu", "unknown"), None, None
    try:
        with open(os.path.join(raw, "smi_info.txt")) as f:
            parts = [p.strip() for p in f.readline().split(",")]
            gpu, driver = parts[0], parts[1]
            maxclk = float(parts[2].split()[0])
    except (OSError, IndexError, ValueError):
        pass
    m["date"] = date or "unknown"
    m["gpu"] = gpu
    m["driver"] = driver
    m["torch"] = gemm.get("torch")
    m["cuda_torch"] = gemm.get("cuda")
    m["sm_count"] = calib.get("sm_count")
    m["l2_size_bytes"] = calib.get("l2_size_bytes")
    m["max_clock_MHz"] = maxclk or calib.get("max_clock_MHz")
    # clocks seen during the run (samples while the GPU was busy)
    sm, mem, pw = [], [], []
    try:
        with open(os.path.join(raw, "smi_log.csv")) as f:
            for line in f:
                p = [x.strip() for x in line.split(",")]
                if len(p) < 6:
                    continue
                try:
                    if float(p[5]) > 0:
                        sm.append(float(p[1]))
                        mem.append(float(p[2]))
                        pw.append(float(p[3]))
                except ValueError:
                    continue
    except OSError:
        pass
    if sm:
        m["clocks_seen"] = {"sm_min_MHz": min(sm), "sm_median_MHz": statistics.median(sm),
                            "sm_max_MHz": max(sm), "mem_median_MHz": statistics.median(mem),
                            "power_median_W": statistics.median(pw),
                            "power_max_W": max(pw), "busy_samples": len(sm)}

    # CUDA microbenchmarks
    for k in ("simt_fp32_TFLOPs", "dram_read_GBps", "dram_write_GBps", "dram_copy_GBps",
              "dram_memcpy_d2d_GBps", "dram_buffer_bytes", "l2_read_GBps", "l2_read_8MiB_GBps",
              "l2_read_16MiB_GBps", "l2_read_sweep", "l2_latency_ns", "l2_latency_1MiB_ns",
              "dram_latency_ns", "dram_latency_1GiB_ns", "atomic_latency_ns",
              "atomic_rate_per_cta_Mops", "cta_pingpong_round_trip_ns", "launch_overhead_us",
              "launch_sync_latency_us", "launch_graph_overhead_us"):
        if k in calib:
            m[k] = calib[k]

    # GEMMs: best large (min(M,N,K) >= 4096) per dtype, and the full table
    g = gemm.get("gemm", [])
    for dt in ("bf16", "fp16", "tf32"):
        big = [r["TFLOPs"] for r in g if r["dtype"] == dt and min(r["M"], r["N"], r["K"]) >= 4096]
        if big:
            m[f"gemm_{dt}_best_large_TFLOPs"] = max(big)
    m["gemm"] = [{"dtype": r["dtype"], "M": r["M"], "N": r["N"], "K": r["K"],
                  "time_us": round(r["time_s"] * 1e6, 3), "TFLOPs": round(r["TFLOPs"], 2)}
                 for r in g]
    if "queue" in calib:
        m["queue"] = calib["queue"]
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w") as f:
        json.dump(m, f, indent=1)
        f.write("\n")
    print(f"collect: wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
