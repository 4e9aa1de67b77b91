#!/usr/bin/env python3
"""results/raw-gather-probe (gather_probe.py's H200 run) -> validation/apps/h200-gather-probe.csv,
a `kitsune validate` reference table over single-kernel workloads (validation/h200-micro/*.json):
per case the vf (inductor) time_s (median CUDA-graph replay, cold L2) and the DRAM bytes read
(ncu dram__bytes_read.sum, one call with flushed caches). ncu's rows are matched to the cases by
order (one Triton kernel per case) and checked by grid size against the profiler's kernels.

No parameter is fitted on these rows: every row is out of sample. Rows of shapes the
applications run (MGN default and small, GraphCast default, DLRM B=4096) say "application
shape" in their source. Standard-library Python.

usage: python3 hw/calibrate/apps/collect_gather_probe.py [RAW_DIR]"""
import csv
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_micro_refs as mm  # noqa: E402
from make_micro_refs import T  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
RAW = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "results", "raw-gather-probe")
WDIR = os.path.join(ROOT, "validation", "h200-micro")
OUT = os.path.join(ROOT, "validation", "apps", "h200-gather-probe.csv")
SRC = ("Single-kernel workload for the H200 probe of Inductor's generated kernels with indexed "
       "loads (hw/calibrate/apps/gather_probe.py, {how}); shapes come from the reference table's "
       "params column.")


def workload(name, params, tensors, ops, how):
    return mm.workload(name, params, tensors, ops, how, src=SRC)


def gsel(name, table, idx, out):
    return {"name": name, "type": "index_select", "inputs": [table, idx], "outputs": [out],
            "attrs": {"axis": 0}}


def write_workloads():
    w = {}
    x = {"x": T(["N", "L"], "input"), "s": T(["E"], "input", "int64")}
    w["g1"] = workload("gather", {"E": 262144, "N": 32768, "L": 256},
                       dict(x, xs=T(["E", "L"], "output")), [gsel("gs", "x", "s", "xs")],
                       "torch.index_select(x, 0, s), compiled")
    w["g1relu"] = workload(
        "gather_relu", {"E": 262144, "N": 32768, "L": 256},
        dict(x, xs=T(["E", "L"]), y=T(["E", "L"], "output")),
        [gsel("gs", "x", "s", "xs"), {"name": "r", "type": "relu", "inputs": ["xs"],
                                      "outputs": ["y"]}],
        "relu(index_select(x, 0, s)), compiled")
    xd = dict(x, d=T(["E"], "input", "int64"), xs=T(["E", "L"]), xd=T(["E", "L"]))
    w["gcat2"] = workload(
        "gcat2", {"E": 262144, "N": 32768, "L": 256}, dict(xd, c=T(["E", "2*L"], "output")),
        [gsel("gs", "x", "s", "xs"), gsel("gd", "x", "d", "xd"),
         {"name": "cat", "type": "concat", "inputs": ["xs", "xd"], "outputs": ["c"],
          "attrs": {"axis": 1}}],
        "cat([x[s], x[d]], 1), compiled")
    w["gcat3"] = workload(
        "gcat3", {"E": 262144, "N": 32768, "L": 256},
        dict(xd, e=T(["E", "L"], "input"), c=T(["E", "3*L"], "output")),
        [gsel("gs", "x", "s", "xs"), gsel("gd", "x", "d", "xd"),
         {"name": "cat", "type": "concat", "inputs": ["xs", "xd", "e"], "outputs": ["c"],
          "attrs": {"axis": 1}}],
        "cat([x[s], x[d], e], 1), compiled: MGN's and GraphCast's edge input")
    w["relu"] = workload("relu", {"E": 262144, "L": 768},
                         {"a": T(["E", "L"], "input"), "y": T(["E", "L"], "output")},
                         [{"name": "r", "type": "relu", "inputs": ["a"], "outputs": ["y"]}],
                         "relu(a), compiled: a plain streaming kernel for comparison")
    w["embcat"] = workload(
        "embcat", {"B": 4096, "T": 26, "D": 128, "ROWS": 100000},
        {"h": T(["B", "D"], "input"), "tab": T(["T*ROWS", "D"], "weight"),
         "i": T(["B", "T"], "input", "int64"), "hr": T(["B", "D"]), "hv": T(["B", 1, "D"]),
         "eo": T(["B", "T", "D"]), "c": T(["B", "T+1", "D"], "output")},
        [{"name": "r", "type": "relu", "inputs": ["h"], "outputs": ["hr"]},
         {"name": "v", "type": "view", "inputs": ["hr"], "outputs": ["hv"]},
         {"name": "emb", "type": "embedding", "inputs": ["tab", "i"], "outputs": ["eo"]},
         {"name": "cat", "type": "concat", "inputs": ["hv", "eo"], "outputs": ["c"],
          "attrs": {"axis": 1}}],
        "cat([relu(h)[:, None], embedding(i, tab)], 1), compiled: DLRM's interaction input")
    w["cat3"] = "validation/h200-micro/cat3.json"
    return w


def params_of(kind, p):
    if kind == "cat3":
        return "R=%d A=%d" % (p["E"], p["L"])
    if kind == "relu":
        return "E=%d L=%d" % (p["E"], p["L"])
    if kind == "embcat":
        return "B=%d T=%d D=%d ROWS=%d" % (p["B"], p["T"], p["D"], p["ROWS"])
    return "E=%d N=%d L=%d" % (p["E"], p["N"], p["L"])


def ncu_rows(path):
    with open(path) as f:
        rows = list(csv.DictReader(f))
    return [r for r in rows if r.get("ID", "").strip().isdigit()]


def num(s):
    return float(s.replace(",", ""))


def main():
    os.makedirs(WDIR, exist_ok=True)
    wl = write_workloads()
    with open(os.path.join(RAW, "gather_probe.json")) as f:
        probe = json.load(f)
    nc = ncu_rows(os.path.join(RAW, "ncu.csv"))
    cases = [c for c in probe["cases"] if "error" not in c]
    if len(nc) != len(cases):
        sys.exit("ncu rows (%d) do not match the cases (%d)" % (len(nc), len(cases)))
    env = probe["env"]
    out = []
    for c, n in zip(cases, nc):
        grid = c["kernels"][0][1]
        gx = grid[0] * grid[1] * grid[2] if isinstance(grid, list) else None
        if gx is not None and int(num(n["launch__grid_size"])) != gx:
            sys.exit("%s: ncu grid %s != profiler grid %s" % (c["name"], n["launch__grid_size"], grid))
        kind = c["params"]["kind"]
        shape = "application shape" if c["set"] == "app" else "probe shape"
        k = c["kernels"][0]
        common = "NVIDIA H200 %s torch %s, %s, %s %s x %s" % (
            "measured 2026-12-04", env["torch"], shape, k[0], k[1], k[2])
        out.append([wl[kind], "inference", "vf", "time_s", "%.6e" % c["time_s"],
                    "%s: median of %d CUDA-graph replays, cold L2" % (common, c["replay"]["n"]),
                    "h200", params_of(kind, c["params"])])
        out.append([wl[kind], "inference", "vf", "dram_read_bytes",
                    "%d" % round(num(n["dram__bytes_read.sum"])),
                    "%s: ncu dram__bytes_read.sum, caches flushed" % common,
                    "h200", params_of(kind, c["params"])])
    mm.write_refs(OUT, out, lineterminator="\n")
    print("%s: %d rows" % (os.path.relpath(OUT, ROOT), len(out)))


if __name__ == "__main__":
    main()
