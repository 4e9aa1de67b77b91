#!/usr/bin/env python3
"""report.py: the README's whole-application table and goal figures from the committed truth.

Runs `kitsune validate validation/apps/h200-apps.csv --format csv` and prints, per (app, mode):
the default-size bsp and vf (inductor) times measured, the signed model errors, the vf/bsp
speedup measured and modelled, and the absolute bsp / vf errors at the two other sizes; then
the goal lines (bsp time MAPE and worst case, DRAM-byte MAPE, vf MAPE, speedup error).

usage: python3 hw/calibrate/apps/report.py [--bin build/kitsune]
"""
import argparse, csv, io, os, subprocess, sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
ORDER = ["dlrm", "mgn", "nerf", "graphcast", "llama3-8b-ctx", "llama3-8b-tok"]


def size_of(params):
    """A case's size: its params less SPARSE_GRAD=0 (the dense table gradient every measured
    DLRM training size took: collect_apps.case_params); a sparse case stays a case of its own."""
    return " ".join(p for p in params.split() if p != "SPARSE_GRAD=0")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "kitsune"))
    ap.add_argument("--table", action="store_true", help="the table only (README's generated "
                    "region), not the goal lines")
    a = ap.parse_args()
    out = subprocess.run([a.bin, "validate", "validation/apps/h200-apps.csv", "--format", "csv"],
                         cwd=ROOT, capture_output=True, text=True, check=True).stdout
    rows = list(csv.DictReader(io.StringIO(out)))
    t = {}  # (app, mode, params, exec, metric) -> (ref, model)
    for r in rows:
        if r["model_value"] == "":
            continue
        t[(r["workload"], r["mode"], size_of(r["params"]), r["exec"], r["metric"])] = (
            float(r["ref_value"]), float(r["model_value"]))
    sizes = {}
    for (w, m, p, e, k) in t:
        sizes.setdefault((w, m), set()).add(p)

    def err(w, m, p, e, k="time_s"):
        ref, mod = t[(w, m, p, e, k)]
        return mod / ref - 1.0

    print("| app | mode | bsp measured ms | bsp error | vf measured ms | vf error | "
          "vf/bsp speedup, measured / model | other two sizes: bsp / vf error |")
    print("|---|---|---|---|---|---|---|---|")
    for w in ORDER:
        for m in ("inference", "training"):
            if (w, m) not in sizes:
                continue
            bref, bmod = t[(w, m, "", "bsp", "time_s")]
            vf = (w, m, "", "vf", "time_s") in t
            cells = [w, m, "%.3f" % (bref * 1e3), "%+.1f%%" % (100 * err(w, m, "", "bsp"))]
            if vf:
                vref, vmod = t[(w, m, "", "vf", "time_s")]
                cells += ["%.3f" % (vref * 1e3), "%+.1f%%" % (100 * err(w, m, "", "vf")),
                          "%.2fx / %.2fx" % (bref / vref, bmod / vmod)]
            else:
                cells += ["-", "-", "-"]
            other = []
            for p in sorted(sizes[(w, m)] - {""}):
                b = abs(100 * err(w, m, p, "bsp"))
                v = abs(100 * err(w, m, p, "vf")) if (w, m, p, "vf", "time_s") in t else None
                other.append("%.0f/%s" % (b, "%.0f%%" % v if v is not None else "-"))
            cells.append(", ".join(other))
            print("| " + " | ".join(cells) + " |")

    def mape(e, k):
        v = [abs(mod / ref - 1.0) for (w, m, p, ee, kk), (ref, mod) in t.items() if ee == e and kk == k]
        return 100 * sum(v) / len(v), 100 * max(v), len(v)

    sp = []
    for (w, m, p, e, k), (ref, mod) in t.items():
        if e == "bsp" and k == "time_s" and (w, m, p, "vf", "time_s") in t:
            vref, vmod = t[(w, m, p, "vf", "time_s")]
            sp.append(abs(mod / vmod - ref / vref))
    if a.table:
        return
    b = mape("bsp", "time_s")
    print()
    print("bsp time MAPE %.1f%% over %d cases, worst %.1f%%" % (b[0], b[2], b[1]))
    d = mape("bsp", "dram_bytes")
    print("bsp DRAM bytes MAPE %.1f%% over %d cases" % (d[0], d[2]))
    v = mape("vf", "time_s")
    print("vf (inductor) time MAPE %.1f%% over %d cases" % (v[0], v[2]))
    print("vf/bsp speedup |error| mean %.2fx, worst %.2fx over %d cases" % (sum(sp) / len(sp), max(sp), len(sp)))


if __name__ == "__main__":
    sys.exit(main())
