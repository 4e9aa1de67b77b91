#!/usr/bin/env python3
"""results/raw-short-probe (short_probe.py's H200 run) -> validation/apps/h200-short-probe.csv, a
`kitsune validate` reference table: the bsp time_s of ATen's column sums (x.sum(0), workload
validation/h200-micro/colsum.json, params R and C) and of layer_norm / rms_norm forward at short
row counts (validation/h200-ops/{layernorm,rmsnorm}.json, params R and D), each the median
CUDA-graph replay after a 256 MiB flush. A mechanism fitted on part of these rows must say which
in its source column (FIT below); the rest, and the applications' own short kernels, stay held
out. Standard-library Python.

usage: python3 hw/calibrate/apps/collect_short_probe.py [RAW_DIR] [--date YYYY-MM-DD] [--fit]
       python3 hw/calibrate/apps/collect_short_probe.py --gaps RAW_K_A RAW_K_B
           (the launch gap inside a graph from two --copies runs; see gaps())"""
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
# (kind, R, C) rows a model change fits its parameters on: kernels.col_reduce_fixed_ns on the
# column sums of C = 64, 256 and 1024 (`--fit`); the other column sums and every norm are held out
FIT = {("colsum", R, C) for R in (256, 1024, 4096, 16384, 65536, 262144) for C in (64, 256, 1024)}


def value(c):
    """(time_s, how): with K > 1 copies in the graph, the median replay / K (one kernel in a
    graph, its launch gap included, as `kitsune predict` counts it); with one, the kernels'
    durations (CUPTI, one flushed replay; the replay's events also hold the host's graph-launch
    latency, 3.5-4 us, which no kernel in an application's graph pays)"""
    k = c.get("copies", 1)
    if k > 1:
        return c["time_s"] / k, "median of %d CUDA-graph replays of %d copies / %d" % (
            c["replay"]["n"], k, k)
    per = c["kernels"]
    return sum(x[3] for x in per) * 1e-6, "kernel durations of one CUDA-graph replay (CUPTI)"


def rows(probe, date):
    out = []
    for c in probe["cases"]:
        if "error" in c or not c.get("kernels"):
            continue
        kind, R, C = c["kind"], c["R"], c["C"]
        k = c.get("copies", 1)
        ks = " + ".join("%s %s x %s" % (x[0][:60], x[1], x[2]) for x in c["kernels"][:len(c["kernels"]) // k])
        fit = "in the fit" if (kind, R, C) in FIT else "held out"
        params = "R=%d C=%d" % (R, C) if kind == "colsum" else "R=%d D=%d" % (R, C)
        t, how = value(c)
        out.append([WORKLOAD[kind], "inference", "bsp", "time_s", "%.6e" % t,
                    "NVIDIA H200 measured %s torch %s, %s, %s: %s, cold L2" % (
                        date, probe["env"]["torch"], fit, ks, how), "h200", params])
    return out


def fit_fixed(probe):
    """kernels.col_reduce_fixed_ns of hw/h200.json: the median, over the FIT rows, of the
    measured time less kitsune's prediction with the parameter at 0 (hw/h200.json so changed in
    a temporary file); returns (ns, the residuals of every row in us)"""
    import subprocess
    import tempfile
    hw = json.load(open(os.path.join(ROOT, "hw", "h200.json")))
    hw["kernels"]["col_reduce_fixed_ns"] = 0
    kit = os.environ.get("KITSUNE", os.path.join(ROOT, "build", "kitsune"))
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(hw, f)
    res = {}
    try:
        for c in probe["cases"]:
            if c["kind"] != "colsum" or "error" in c or not c.get("kernels"):
                continue
            p = subprocess.run([kit, "predict", "--hw", f.name, "--workload",
                                os.path.join(ROOT, WORKLOAD["colsum"]), "--set", "R=%d" % c["R"],
                                "--set", "C=%d" % c["C"], "--format", "json"],
                               capture_output=True, text=True, check=True)
            model = json.loads(p.stdout)["results"][0]["time_s"]
            res[(c["R"], c["C"])] = (value(c)[0] - model) * 1e6
    finally:
        os.unlink(f.name)
    r = sorted(v for (R, C), v in res.items() if ("colsum", R, C) in FIT)
    n = len(r)
    med = (r[n // 2] if n % 2 else (r[n // 2 - 1] + r[n // 2]) / 2) if n else 0
    return med * 1e3, res


def gaps(dir_a, dir_b):
    """The launch gap of a kernel inside a CUDA graph, from two runs of the probe with K_a < K_b
    copies per graph (short_probe.py --copies): per case, (replay_b - replay_a) / (K_b - K_a) is
    one copy's time inside a graph with the host's graph launch cancelled; less the copy's
    kernel durations (CUPTI, the mean over the K_b copies of one replay) and over its kernels,
    the gap each kernel adds. Returns [(kind, R, C, kernels per copy, per-copy us, kernel us,
    gap us per kernel)]."""
    runs = []
    for d in (dir_a, dir_b):
        with open(os.path.join(d, "short_probe.json")) as f:
            runs.append({(c["kind"], c["R"], c["C"]): c for c in json.load(f)["cases"]
                         if "error" not in c and c.get("kernels")})
    out = []
    for key, ca in runs[0].items():
        cb = runs[1].get(key)
        if not cb:
            continue
        ka, kb = ca["copies"], cb["copies"]
        per = (cb["time_s"] - ca["time_s"]) / (kb - ka) * 1e6
        nk = len(cb["kernels"]) / kb
        kern = sum(x[3] for x in cb["kernels"]) / kb
        out.append(key + (nk, per, kern, (per - kern) / nk))
    return out


def main():
    if "--gaps" in sys.argv:
        i = sys.argv.index("--gaps")
        g = gaps(sys.argv[i + 1], sys.argv[i + 2])
        for kind, R, C, nk, per, kern, gap in g:
            print("%-9s R=%-6d C=%-5d kernels %.0f  per copy %7.2f us  kernels %7.2f us  gap %5.2f "
                  "us per kernel" % (kind, R, C, nk, per, kern, gap))
        v = sorted(x[-1] for x in g)
        n = len(v)
        print("%d cases: gap per kernel median %.3f us, quartiles %.3f-%.3f us" % (
            n, v[n // 2], v[n // 4], v[(3 * n) // 4]))
        return
    args = [a for a in sys.argv[1:] if a != "--fit"]
    date = "(date not given)"
    if "--date" in args:
        i = args.index("--date")
        date = args[i + 1]
        del args[i:i + 2]
    raw = args[0] if args else os.path.join(HERE, "results", "raw-short-probe")
    with open(os.path.join(raw, "short_probe.json")) as f:
        probe = json.load(f)
    if "--fit" in sys.argv:
        ns, res = fit_fixed(probe)
        for (R, C), v in sorted(res.items()):
            print("R=%-6d C=%-5d measured - model(fixed 0) %7.2f us%s" % (
                R, C, v, "  (fit)" if ("colsum", R, C) in FIT else ""))
        print("kernels.col_reduce_fixed_ns = %.0f (median over the fit rows)" % ns)
        return
    out = rows(probe, date)
    mm.write_refs(OUT, out, lineterminator="\n")
    print("%s: %d rows" % (os.path.relpath(OUT, ROOT), len(out)))


if __name__ == "__main__":
    main()
