#!/usr/bin/env python3
"""results/raw-bmm-probe (bmm_probe.py's H200 run) -> validation/apps/h200-bmm-probe.csv, a
`kitsune validate` reference table over the batched GEMMs of DLRM's feature interaction: bsp
time_s (median CUDA-graph replay, cold L2) of [B, M, K] x [B, N, K]^T ("fwd") and
[B, M, K] x [B, K, N] ("grad"), workloads validation/h200-micro/bmm_ab_nt.json and bmm_nn.json.
The wmma kernel's hw parameters (kernels.gemm_wmma_*) were fitted on the "fwd" rows at
B = 16384 with M = N = 27 (in-sample, said in their source); every other row is held out.
Standard-library Python.

usage: python3 hw/calibrate/apps/collect_bmm_probe.py [RAW_DIR]"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_micro_refs as mm  # noqa: E402
from make_micro_refs import T  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
RAW = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "results", "raw-bmm-probe")
OUT = os.path.join(ROOT, "validation", "apps", "h200-bmm-probe.csv")
SRC = ("Single-operator workload for the H200 probe of DLRM's interaction GEMMs "
       "(hw/calibrate/apps/bmm_probe.py, {how}); shapes come from the reference table's params "
       "column.")


def workloads():
    w = {}
    w["fwd"] = mm.workload("bmm_ab_nt", {"B": 4096, "M": 27, "N": 27, "K": 128},
                           {"a": T(["B", "M", "K"], "input"), "b": T(["B", "N", "K"], "input"),
                            "y": T(["B", "M", "N"], "output")},
                           [{"name": "bmm", "type": "matmul", "inputs": ["a", "b"],
                             "outputs": ["y"], "attrs": {"transpose_b": True}}],
                           "torch.bmm(a, b.transpose(1, 2))", src=SRC)
    w["grad"] = mm.workload("bmm_nn", {"B": 4096, "M": 27, "N": 128, "K": 27},
                            {"a": T(["B", "M", "K"], "input"), "b": T(["B", "K", "N"], "input"),
                             "y": T(["B", "M", "N"], "output")},
                            [{"name": "bmm", "type": "matmul", "inputs": ["a", "b"],
                              "outputs": ["y"]}],
                            "torch.bmm(a, b)", src=SRC)
    return w


def main():
    w = workloads()
    with open(os.path.join(RAW, "bmm_probe.json")) as f:
        probe = json.load(f)
    out = []
    for c in probe["cases"]:
        if "error" in c:
            continue
        fit = c["kind"] == "fwd" and c["B"] == 16384 and c["M"] == 27
        ks = "; ".join("%s %s x %s" % (k[0][:60], k[1], k[2]) for k in c["kernels"])
        out.append([w[c["kind"]], "inference", "bsp", "time_s", "%.6e" % c["time_s"],
                    "NVIDIA H200 measured 2026-12-04 torch %s, %s, %s: median of %d CUDA-graph "
                    "replays, cold L2" % (probe["env"]["torch"],
                                          "fit (kernels.gemm_wmma_*)" if fit else "held out",
                                          ks, c["replay"]["n"]),
                    "h200", "B=%d M=%d N=%d K=%d" % (c["B"], c["M"], c["N"], c["K"])])
    mm.write_refs(OUT, out, lineterminator="\n")
    print("%s: %d rows" % (os.path.relpath(OUT, ROOT), len(out)))


if __name__ == "__main__":
    main()
