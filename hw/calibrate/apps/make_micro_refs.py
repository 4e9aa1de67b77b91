#!/usr/bin/env python3
"""validation/apps/h200-micro.csv (the microbenchmarks of hw/calibrate/apps) -> `kitsune validate`
reference tables over single-operator workloads (validation/h200-micro/*.json):

  validation/h200-micro-fit.csv      the rows the kernel-class parameters of hw/h200.json were
                                     estimated from (in-sample)
  validation/h200-micro-holdout.csv  every other row (held out)
  validation/h200-alignk.csv         the K sweep of alignment-1 GEMMs (run.sh --micro-only alignk,
                                     results/raw-alignk): held out, every row

A row is the median time of one microbenchmark step in a CUDA graph (bsp time_s, --launch graph).
Which rows are in-sample is decided here, by a rule per mechanism, never by the error a row shows.
Standard-library Python."""
import csv
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
MICRO = os.path.join(ROOT, "validation", "apps", "h200-micro.csv")
WDIR = os.path.join(ROOT, "validation", "h200-micro")
SRC = ("Single-operator workload for the H200 microbenchmarks of hw/calibrate/apps (run_apps.py, "
       "{how}); shapes come from the reference table's params column.")


def T(shape, kind=None, dtype="bf16"):
    d = {"shape": shape, "dtype": dtype}
    if kind:
        d["kind"] = kind
    return d


def workload(name, params, tensors, ops, how, src=SRC):
    d = {"name": name, "source": src.format(how=how), "params": params, "tensors": tensors, "ops": ops}
    with open(os.path.join(WDIR, name + ".json"), "w") as f:
        json.dump(d, f, indent=1)
        f.write("\n")
    return "validation/h200-micro/" + name + ".json"


def write_refs(path, rows, lineterminator="\r\n"):
    """A `kitsune validate` reference table, written to a temporary file and renamed."""
    tmp = path + ".tmp"
    with open(tmp, "w", newline="") as f:
        cw = csv.writer(f, lineterminator=lineterminator)
        cw.writerow(["workload", "mode", "exec", "metric", "value", "source", "hw", "params"])
        cw.writerows(rows)
    os.replace(tmp, path)


def write_workloads():
    os.makedirs(WDIR, exist_ok=True)
    w = {}
    w["mm"] = workload("mm", {"M": 4096, "N": 4096, "K": 4096},
                       {"a": T(["M", "K"], "input"), "b": T(["N", "K"], "weight"), "c": T(["M", "N"], "output")},
                       [{"name": "mm", "type": "matmul", "inputs": ["a", "b"], "outputs": ["c"],
                         "attrs": {"transpose_b": True}}], "x @ W.t()")
    w["addmm"] = workload("addmm", {"M": 4096, "N": 4096, "K": 4096},
                          {"x": T(["M", "K"], "input"), "w": T(["N", "K"], "weight"), "b": T(["N"], "weight"),
                           "y": T(["M", "N"], "output")},
                          [{"name": "linear", "type": "linear", "inputs": ["x", "w", "b"], "outputs": ["y"],
                            "attrs": {"transpose_b": True}}], "F.linear with bias (addmm)")
    w["wgrad"] = workload("wgrad", {"M": 256, "N": 256, "K": 4096},
                          {"x": T(["K", "M"], "input"), "dy": T(["K", "N"], "input"), "dw": T(["M", "N"], "output")},
                          [{"name": "wgrad", "type": "matmul", "inputs": ["x", "dy"], "outputs": ["dw"],
                            "attrs": {"transpose_a": True}}], "x.t() @ dy")
    w["dgrad"] = workload("dgrad", {"M": 4096, "N": 256, "K": 256},
                          {"dy": T(["M", "K"], "input"), "w": T(["K", "N"], "weight"), "dx": T(["M", "N"], "output")},
                          [{"name": "dgrad", "type": "matmul", "inputs": ["dy", "w"], "outputs": ["dx"]}],
                          "dy @ W")
    w["bmm_nt"] = workload("bmm_nt", {"B": 4096, "M": 27, "K": 128},
                           {"f": T(["B", "M", "K"], "input"), "y": T(["B", "M", "M"], "output")},
                           [{"name": "bmm", "type": "matmul", "inputs": ["f", "f"], "outputs": ["y"],
                             "attrs": {"transpose_b": True}}], "torch.bmm(f, f.transpose(1, 2))")
    w["colsum"] = workload("colsum", {"R": 4096, "C": 128},
                           {"x": T(["R", "C"], "input"), "y": T(["C"], "output")},
                           [{"name": "sum", "type": "reduce", "inputs": ["x"], "outputs": ["y"],
                             "attrs": {"op": "sum", "axes": [0]}}], "x.sum(0)")
    w["rowsum"] = workload("rowsum", {"R": 4096, "C": 128},
                           {"x": T(["R", "C"], "input"), "y": T(["R"], "output")},
                           [{"name": "sum", "type": "reduce", "inputs": ["x"], "outputs": ["y"],
                             "attrs": {"op": "sum", "axes": [1]}}], "x.sum(1)")
    w["cat2"] = workload("cat2", {"R": 4096, "A": 64, "B": 256},
                         {"a": T(["R", "A"], "input"), "b": T(["R", "B"], "input"), "y": T(["R", "A+B"], "output")},
                         [{"name": "cat", "type": "concat", "inputs": ["a", "b"], "outputs": ["y"],
                           "attrs": {"axis": 1}}], "torch.cat(dim=1)")
    w["cat3"] = workload("cat3", {"R": 4096, "A": 128},
                         {"a": T(["R", "A"], "input"), "b": T(["R", "A"], "input"), "c": T(["R", "A"], "input"),
                          "y": T(["R", "3*A"], "output")},
                         [{"name": "cat", "type": "concat", "inputs": ["a", "b", "c"], "outputs": ["y"],
                           "attrs": {"axis": 1}}], "torch.cat(dim=1)")
    w["fill"] = workload("fill", {"N": 1024},
                         {"y": T(["N"], "output", "fp32")},
                         [{"name": "zero", "type": "fill", "inputs": [], "outputs": ["y"],
                           "attrs": {"value": 0}}], "tensor.zero_()")
    return w


def num(p, k, d=None):
    return int(p[k]) if k in p else d


def rows_for(r, w):
    """(workload, params) of a microbenchmark row, or None when no single op models it."""
    g, name = r["group"], r["name"]
    p = dict(kv.split("=", 1) for kv in r["params"].split() if "=" in kv)
    op = r["params"].split("op=", 1)[1] if "op=" in r["params"] else ""  # "mm x.t()@dy" etc.
    if g in ("align", "alignk", "shortk", "splitk"):
        M, N, K = num(p, "M"), num(p, "N"), num(p, "K")
        if "bmm" in op:
            return w["bmm_nt"], "B=%d M=%d K=%d" % (num(p, "B"), M, K)
        if op == "addmm":
            return w["addmm"], "M=%d N=%d K=%d" % (M, N, K)
        if "x.t()" in op:
            return w["wgrad"], "M=%d N=%d K=%d" % (M, N, K)
        if "dy@W" in op.replace(" ", ""):
            return w["dgrad"], "M=%d N=%d K=%d" % (M, N, K)
        if g == "splitk" and "wgrad" in name:
            return w["wgrad"], "M=%d N=%d K=%d" % (M, N, K)
        return w["mm"], "M=%d N=%d K=%d" % (M, N, K)
    if g == "reduce":
        R, C = num(p, "R"), num(p, "C")
        return (w["colsum"] if name.startswith("col") else w["rowsum"]), "R=%d C=%d" % (R, C)
    if g == "concat" and name == "cat_dim1":
        ws = [int(x) for x in p["widths"].split("+")]
        if len(ws) == 2:
            return w["cat2"], "R=%s A=%d B=%d" % (p["R"], ws[0], ws[1])
        if len(set(ws)) == 1 and len(ws) == 3:
            return w["cat3"], "R=%s A=%d" % (p["R"], ws[0])
    if g == "memset" and name.startswith("zero_"):
        return w["fill"], "N=%d" % max(1, int(p["bytes"]) // 4)
    return None


def in_sample(r):
    """The rows each mechanism's parameters come from (hw/h200.json sources name them)."""
    g = r["group"]
    p = dict(kv.split("=", 1) for kv in r["params"].split() if "=" in kv)
    if g == "shortk":      # nvjet per-kernel and per-tile costs: the M=65536 half of the grid
        return p.get("M") == "65536"
    if g == "align":       # alignment-1 kernels: the NeRF forward shapes K=63, K=319 (128x128
        # tiles: per-tile and per-K cost) and N=3 (64x64 tiles: the per-element epilogue cost)
        return (r["name"] == "nerf_fc1_fwd" and p.get("K") == "63") or \
            (r["name"] == "nerf_fc6_fwd" and p.get("K") == "319") or \
            (r["name"] == "nerf_rgb_fc2_fwd" and p.get("N") == "3")
    if g == "reduce":      # column reductions: R=262144, C=128 and 256
        return r["name"].startswith("col") and p.get("R") == "262144" and p.get("C") in ("128", "256")
    if g == "concat":      # unaligned copies: the 63+256 concatenation
        return p.get("widths") == "63+256"
    return False


def main():
    w = write_workloads()
    out = {"fit": [], "holdout": []}
    with open(MICRO) as f:
        for r in csv.DictReader(f):
            m = rows_for(r, w)
            if not m or not r["time_s"] or r.get("error"):
                continue
            wl, params = m
            src = "H200 microbenchmark %s/%s (%s), median of CUDA-graph replays, cold L2" % (
                r["group"], r["name"], r["kernels"][:120].replace(",", ";"))
            out["fit" if in_sample(r) else "holdout"].append(
                [wl, "inference", "bsp", "time_s", r["time_s"], src, "h200", params])
    # the alignk sweep: its raw JSON (kernels named through its kernel_names)
    raw = os.path.join(HERE, "results", "raw-alignk", "micro-alignk.json")
    if os.path.exists(raw):
        m = json.load(open(raw))
        names = m.get("kernel_names", [])
        out["alignk"] = []
        for e in m["entries"]:
            if e.get("time_s") is None or e.get("error"):
                continue
            r = {"group": e["group"], "name": e["name"],
                 "params": " ".join("%s=%s" % kv for kv in e["params"].items())}
            wl, params = rows_for(r, w)
            ks = "; ".join("%s %s x %s %.2fus" % (
                names[k[0]].split("<")[-1].split(">")[0][:60] if k[0] < len(names) else "?",
                "x".join(map(str, k[1] or [])), "x".join(map(str, k[2] or [])), k[4])
                for k in e.get("kernels") or [])
            src = "H200 microbenchmark alignk/linear (%s), median of CUDA-graph replays, cold L2" % (
                ks[:120].replace(",", ";"))
            out["alignk"].append([wl, "inference", "bsp", "time_s", "%.6e" % e["time_s"], src,
                                  "h200", params])
    for k, rows in out.items():
        path = os.path.join(ROOT, "validation", "apps",
                            "h200-%s.csv" % k if k == "alignk" else "h200-micro-%s.csv" % k)
        write_refs(path, rows)
        print("wrote %s (%d rows)" % (os.path.relpath(path, ROOT), len(rows)))


if __name__ == "__main__":
    main()
