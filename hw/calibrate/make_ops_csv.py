#!/usr/bin/env python3
"""Build validation/h200-ops.csv (per-operator truth on the H200) from run.sh's raw output.

Usage: python3 hw/calibrate/make_ops_csv.py [RAW_DIR] [-o validation/h200-ops.csv] [--details D.json]
  RAW_DIR defaults to hw/calibrate/results/raw: ops.json (timed), prof_order.json and ncu.csv
  (Nsight Compute DRAM bytes). Also writes hw/calibrate/results/h200-ops-measured.json with
  the per-op details (read/write split, kernel count, analytic minimum bytes).
Standard library only.

Rows: time_s = median kernel time with a cold L2 (CUDA events around the op);
dram_bytes = dram__bytes_read.sum + dram__bytes_write.sum summed over the op's kernels
(ncu, caches flushed before each kernel). If ncu output is missing for an op, dram_bytes is
the analytic minimum (inputs read once + outputs written once) and its source says so.
"""
import csv
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
UNIT = {"byte": 1, "kbyte": 1e3, "mbyte": 1e6, "gbyte": 1e9, "nsecond": 1e-9, "usecond": 1e-6,
        "msecond": 1e-3, "second": 1, "ns": 1e-9, "us": 1e-6, "ms": 1e-3}


def parse_ncu(path):
    """Return a list of ops, each a list of kernels {name, read, write, time_s}, split at the
    marker kernel (torch.cuda._sleep -> spin_kernel) that precedes every profiled op."""
    try:
        with open(path, newline="") as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    start = next((i for i, l in enumerate(lines) if l.startswith('"ID"')), None)
    if start is None:
        return None
    rows = list(csv.reader(lines[start:]))
    hdr, units = rows[0], rows[1]
    col = {h: i for i, h in enumerate(hdr)}
    need = ("Kernel Name", "dram__bytes_read.sum", "dram__bytes_write.sum",
            "gpu__time_duration.sum")
    if any(n not in col for n in need):
        return None

    def val(r, name):
        s = r[col[name]].replace(",", "")
        u = units[col[name]].strip().lower()
        try:
            return float(s) * UNIT.get(u, 1.0)
        except ValueError:
            return float("nan")
    ops, cur = [], None
    for r in rows[2:]:
        if len(r) < len(hdr):
            continue
        name = r[col["Kernel Name"]]
        if "spin_kernel" in name:
            cur = []
            ops.append(cur)
            continue
        if cur is None:
            continue
        cur.append({"name": name, "read": val(r, "dram__bytes_read.sum"),
                    "write": val(r, "dram__bytes_write.sum"),
                    "time_s": val(r, "gpu__time_duration.sum")})
    return ops


def lib_of(wl):
    if wl == "gemm":
        return "cuBLAS"
    if wl.startswith("attention"):
        return "SDPA"
    return "ATen"


def main(argv):
    raw = os.path.join(HERE, "results", "raw")
    out = os.path.join(ROOT, "validation", "h200-ops.csv")
    args = list(argv)
    details_path = None
    if "--details" in args:
        i = args.index("--details")
        details_path = args[i + 1]
        del args[i:i + 2]
    if "-o" in args:
        i = args.index("-o")
        out = args[i + 1]
        del args[i:i + 2]
    if args:
        raw = args[0]
    try:
        with open(os.path.join(raw, "ops.json")) as f:
            ops = json.load(f)
    except (OSError, ValueError) as ex:
        print(f"make_ops_csv: cannot read ops.json in {raw}: {ex}", file=sys.stderr)
        return 1
    date = "unknown"
    try:
        with open(os.path.join(raw, "log.txt")) as f:
            mm = re.search(r"== (\d{4}-\d\d-\d\d)T", f.read())
            date = mm.group(1) if mm else date
    except OSError:
        pass
    tv = ops.get("torch", "?").split("+")[0]
    tv = ".".join(tv.split(".")[:2])
    prof = None
    try:
        with open(os.path.join(raw, "prof_order.json")) as f:
            order = json.load(f)["order"]
        nc = parse_ncu(os.path.join(raw, "ncu.csv"))
        if nc is not None and len(nc) == len(order):
            prof = {o["key"]: k for o, k in zip(order, nc)}
        else:
            print(f"make_ops_csv: ncu ops {None if nc is None else len(nc)} != profiled "
                  f"{len(order)}; using analytic bytes", file=sys.stderr)
    except (OSError, ValueError, KeyError) as ex:
        print(f"make_ops_csv: no ncu data ({ex}); using analytic bytes", file=sys.stderr)

    rows, details = [], []
    for o in ops["ops"]:
        wl = f"validation/h200-ops/{o['workload']}.json"
        params = " ".join(f"{k}={v}" for k, v in o["params"].items())
        src = f"H200 measured {date} torch {tv} {lib_of(o['workload'])}"
        rows.append([wl, "inference", "bsp", "time_s", f"{o['time_s']:.4e}",
                     src + " median cold-L2 CUDA events", "h200", params])
        k = prof.get(o["key"]) if prof else None
        d = {"workload": o["workload"], "params": o["params"], "time_s": o["time_s"],
             "time_p10_s": o.get("time_p10_s"), "time_p90_s": o.get("time_p90_s"),
             "min_dram_bytes": o["min_dram_bytes"]}
        if k:
            rd = sum(x["read"] for x in k)
            wr = sum(x["write"] for x in k)
            d.update({"dram_read_bytes": rd, "dram_write_bytes": wr, "kernels": len(k),
                      "ncu_time_s": sum(x["time_s"] for x in k),
                      "kernel_names": [x["name"][:80] for x in k]})
            rows.append([wl, "inference", "bsp", "dram_bytes", f"{rd + wr:.4e}",
                         src + f" ncu dram__bytes_read+write ({len(k)} kernels)", "h200", params])
        else:
            rows.append([wl, "inference", "bsp", "dram_bytes", f"{o['min_dram_bytes']:.4e}",
                         "analytic minimum bytes (ncu unavailable)", "h200", params])
        details.append(d)
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["workload", "mode", "exec", "metric", "value", "source", "hw", "params"])
        w.writerows(rows)
    det = details_path or os.path.join(HERE, "results", "h200-ops-measured.json")
    os.makedirs(os.path.dirname(det), exist_ok=True)
    with open(det, "w") as f:
        json.dump({"date": date, "torch": ops.get("torch"), "ops": details}, f, indent=1)
        f.write("\n")
    print(f"make_ops_csv: wrote {out} ({len(rows)} rows) and {det}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
