#!/usr/bin/env python3
"""results/raw-short-probe (short_probe.py's H200 run) -> validation/apps/h200-short-probe.csv, a
`kitsune validate` reference table: the bsp time_s of ATen's column sums (x.sum(0), workload
validation/h200-micro/colsum.json, params R and C) and of layer_norm / rms_norm forward at short
row counts (validation/h200-ops/{layernorm,rmsnorm}.json, params R and D), each the median
CUDA-graph replay after a 256 MiB flush. A mechanism fitted on part of these rows must say which
in its source column (FIT below); the rest, and the applications' own short kernels, stay held
out. Standard-library Python.

usage: python3 hw/calibrate/apps/collect_short_probe.py [RAW_DIR] [--date YYYY-MM-DD]"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_micro_refs as mm  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
OUT = os.path.join(ROOT, "validation", "apps", "h200-short-probe.csv")
WORKLOAD = {"colsum": "validation/h200-micro/colsum.json",
            "layernorm": "validation/h200-ops/layernorm.json",
            "rmsnorm": "validation/h200-ops/rmsnorm.json"}
# (kind, R, C) rows a model change fits its parameters on; empty until one does
FIT = set()


def rows(probe, date):
    out = []
    for c in probe["cases"]:
        if "error" in c or not c.get("kernels"):
            continue
        kind, R, C = c["kind"], c["R"], c["C"]
        ks = " + ".join("%s %s x %s" % (k[0][:60], k[1], k[2]) for k in c["kernels"])
        fit = "in the fit" if (kind, R, C) in FIT else "held out"
        params = "R=%d C=%d" % (R, C) if kind == "colsum" else "R=%d D=%d" % (R, C)
        out.append([WORKLOAD[kind], "inference", "bsp", "time_s", "%.6e" % c["time_s"],
                    "NVIDIA H200 measured %s torch %s, %s, %s: median of %d CUDA-graph "
                    "replays, cold L2" % (date, probe["env"]["torch"], fit, ks, c["replay"]["n"]),
                    "h200", params])
    return out


def main():
    args = [a for a in sys.argv[1:]]
    date = "(date not given)"
    if "--date" in args:
        i = args.index("--date")
        date = args[i + 1]
        del args[i:i + 2]
    raw = args[0] if args else os.path.join(HERE, "results", "raw-short-probe")
    with open(os.path.join(raw, "short_probe.json")) as f:
        probe = json.load(f)
    out = rows(probe, date)
    mm.write_refs(OUT, out, lineterminator="\n")
    print("%s: %d rows" % (os.path.relpath(OUT, ROOT), len(out)))


if __name__ == "__main__":
    main()
