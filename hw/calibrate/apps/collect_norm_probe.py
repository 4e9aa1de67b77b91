#!/usr/bin/env python3
"""results/raw-norm-probe (norm_probe.py's H200 run) -> validation/apps/h200-norm-probe.csv, a
`kitsune validate` reference table: the bsp time_s of ATen's layer_norm and rms_norm forward at
twelve row lengths (median CUDA-graph replay, cold L2; workloads validation/h200-ops/
{layernorm,rmsnorm}.json). The kernels' instruction counts (op.c norm_warp_inst) were fitted on
the ncu counts of D = 64, 256, 1024, 3072; the times were never fitted. Standard-library Python.

usage: python3 hw/calibrate/apps/collect_norm_probe.py [RAW_DIR]"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_micro_refs as mm  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
RAW = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "results", "raw-norm-probe")
OUT = os.path.join(ROOT, "validation", "apps", "h200-norm-probe.csv")
FIT_D = (64, 256, 1024, 3072)


def main():
    with open(os.path.join(RAW, "norm_probe.json")) as f:
        probe = json.load(f)
    out = []
    for c in probe["cases"]:
        if "error" in c:
            continue
        k = c["kernels"][0]
        fit = "instruction counts of this D in the fit" if c["D"] in FIT_D else \
            "held out (instruction counts not fitted at this D)"
        out.append(["validation/h200-ops/%s.json" % c["kind"], "inference", "bsp", "time_s",
                    "%.6e" % c["time_s"],
                    "NVIDIA H200 measured 2026-12-04 torch %s, %s, %s %s x %s: median of %d "
                    "CUDA-graph replays, cold L2" % (probe["env"]["torch"], fit, k[0][:60], k[1],
                                                     k[2], c["replay"]["n"]),
                    "h200", "R=%d D=%d" % (c["R"], c["D"])])
    mm.write_refs(OUT, out, lineterminator="\n")
    print("%s: %d rows" % (os.path.relpath(OUT, ROOT), len(out)))


if __name__ == "__main__":
    main()
