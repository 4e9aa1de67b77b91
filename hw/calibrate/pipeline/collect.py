#!/usr/bin/env python3
"""Raw device output of run.sh full -> commit-able tables (standard-library Python only).

  python3 hw/calibrate/pipeline/collect.py [LABEL=]RAW_DIR ... [--dest validation/pipeline]

Each RAW_DIR (one device call of run.sh) holds sweep.jsonl, meta.json, ncu.csv, prof_order.json,
smi_log.csv and log.txt; LABEL names the run in the tables (default: the folder name).
Writes into DEST:
  runs.csv       one row per pipeline run: pipeline, arch (stage boundaries), tile_rows,
                 ctas_per_sm, gemm (mma|wmma), allocation, stages, total_ctas, depth, kind,
                 time_s, tiles, tiles_per_s, rel_err, status, per-stage busy/wait fractions,
                 dram bytes (ncu) where measured
  baselines.csv  the same blocks bulk-synchronously (eager in a CUDA graph) and under
                 torch.compile (default mode, in a CUDA graph), with ncu DRAM bytes
  summary.md     best / worst / balanced per (pipeline, tile size), vs eager and compile
and copies the raw files to DEST/raw/LABEL/.
"""
import csv
import json
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
UNIT = {"byte": 1, "kbyte": 1e3, "mbyte": 1e6, "gbyte": 1e9, "nsecond": 1e-9, "ns": 1e-9,
        "usecond": 1e-6, "us": 1e-6, "msecond": 1e-3, "ms": 1e-3, "second": 1}


def parse_ncu(path):
    """List of sections, each a list of kernels {name, read, write, time_s}, split at the marker
    kernel (torch.cuda._sleep -> spin_kernel) that opens every profiled section."""
    try:
        lines = open(path, newline="").read().splitlines()
    except OSError:
        return []
    start = next((i for i, l in enumerate(lines) if l.startswith('"ID"')), None)
    if start is None:
        return []
    rows = list(csv.reader(lines[start:]))
    hdr, units = rows[0], rows[1]
    col = {h: i for i, h in enumerate(hdr)}

    def val(r, name):
        s = r[col[name]].replace(",", "")
        try:
            return float(s) * UNIT.get(units[col[name]].strip().lower(), 1.0)
        except ValueError:
            return float("nan")
    secs, cur = [], None
    for r in rows[2:]:
        if len(r) < len(hdr):
            continue
        name = r[col["Kernel Name"]]
        if "spin_kernel" in name:
            cur = []
            secs.append(cur)
            continue
        if cur is None:
            continue
        cur.append({"name": name, "read": val(r, "dram__bytes_read.sum"),
                    "write": val(r, "dram__bytes_write.sum"),
                    "time_s": val(r, "gpu__time_duration.sum")})
    return secs


def load_raw(raw):
    runs = [json.loads(l) for l in open(os.path.join(raw, "sweep.jsonl")) if l.strip()]
    meta = {}  # run.sh ilp writes none
    if os.path.exists(os.path.join(raw, "meta.json")):
        meta = json.load(open(os.path.join(raw, "meta.json")))
    order = []
    if os.path.exists(os.path.join(raw, "prof_order.json")):
        order = json.load(open(os.path.join(raw, "prof_order.json")))
    secs = parse_ncu(os.path.join(raw, "ncu.csv"))
    ncu = {}  # case -> (read, write, time, kernels)
    for o, sec in zip(order, secs):
        ncu[o["case"]] = (sum(k["read"] for k in sec), sum(k["write"] for k in sec),
                          sum(k["time_s"] for k in sec), len(sec))
    if order and len(order) != len(secs):
        print(f"collect: {raw}: {len(order)} profiled cases but {len(secs)} ncu sections",
              file=sys.stderr)
    return runs, meta, ncu


def fmt(x, f):
    return format(x, f) if x is not None else ""


def main(argv):
    args = [a for a in argv[1:] if not a.startswith("--")]
    if not args:
        print(__doc__)
        return 2
    dest = os.path.join(ROOT, "validation", "pipeline")
    if "--dest" in argv:
        dest = argv[argv.index("--dest") + 1]
        args = [a for a in args if a != dest]
    srcs = []
    for a in args:
        label, _, raw = a.rpartition("=")
        srcs.append((label or os.path.basename(os.path.normpath(raw)), raw))
    fields = ["run", "pipeline", "arch", "tile_rows", "ctas_per_sm", "gemm", "allocation", "stages",
              "total_ctas", "depth", "kind", "time_s", "time_min_s", "reps", "tiles", "tiles_per_s",
              "rel_err", "rel_err_last", "status", "busy", "wait_in", "wait_out",
              "dram_read_bytes", "dram_write_bytes", "ncu_time_s"]
    rows, brows, allruns, base = [], [], [], {}
    for label, raw in srcs:
        runs, meta, ncu = load_raw(raw)
        os.makedirs(os.path.join(dest, "raw", label), exist_ok=True)
        for fn in ("sweep.jsonl", "meta.json", "ncu.csv", "prof_order.json", "log.txt", "smi_log.csv",
                   "ncu_ilp1.csv", "ncu_ilp2.csv"):
            if os.path.exists(os.path.join(raw, fn)):
                shutil.copy(os.path.join(raw, fn), os.path.join(dest, "raw", label, fn))
        for r in runs:
            r["run"] = label
            allruns.append(r)
            pr = r.get("prof", [])
            key = (f"pipeline {r['pipeline']} {r['arch']} tm{r['tile_rows']} x{r['minb']} "
                   f"{r['alloc']} {r.get('impl', '')}")
            d = ncu.pop(key, None) if r.get("depth", 2) == 2 and r.get("impl") == meta.get("impl") \
                else None
            rows.append([label, r["pipeline"], r["arch"], r["tile_rows"], r.get("ctas_per_sm", ""),
                         r.get("impl", ""), r["alloc"], r["stages"], r["total_ctas"], r.get("depth", 2),
                         r["kind"], fmt(r.get("time_s"), ".9g"), fmt(r.get("time_min_s"), ".9g"),
                         r.get("reps", ""), r.get("tiles", ""), fmt(r.get("tiles_per_s"), ".6g"),
                         fmt(r.get("rel_err"), ".3e"), fmt(r.get("rel_err_last"), ".3e"), r["status"],
                         "-".join(f"{x['busy']:.2f}" for x in pr),
                         "-".join(f"{x['wait_in']:.2f}" for x in pr),
                         "-".join(f"{x['wait_out']:.2f}" for x in pr),
                         fmt(d[0], ".0f") if d else "", fmt(d[1], ".0f") if d else "",
                         fmt(d[2], ".6g") if d else ""])
        for t in meta.get("torch", []):
            mode = {"eager-graph": "eager", "compile": "compile"}.get(t["mode"], t["mode"])
            d = ncu.get(f"{mode} {t['pipeline']}")
            base[(t["pipeline"], t["mode"])] = t.get("time_s")
            brows.append([label, t["pipeline"],
                          "bsp-eager-cudagraph" if mode == "eager" else "torch-compile-cudagraph",
                          fmt(t.get("time_s"), ".9g"), fmt(t.get("time_min_s"), ".9g"),
                          t.get("reps", ""), fmt(t.get("rel_err"), ".3e"), t.get("graph", ""),
                          fmt(t.get("compile_s"), ".1f"), fmt(d[0], ".0f") if d else "",
                          fmt(d[1], ".0f") if d else "", fmt(d[2], ".6g") if d else "",
                          d[3] if d else ""])
    with open(os.path.join(dest, "runs.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(fields)
        w.writerows(rows)
    with open(os.path.join(dest, "baselines.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["run", "pipeline", "mode", "time_s", "time_min_s", "reps", "rel_err", "cuda_graph",
                    "compile_s", "dram_read_bytes", "dram_write_bytes", "ncu_time_s", "ncu_kernels"])
        w.writerows(brows)
    out = ["| run | pipeline | stages | TM | CTAs/SM | gemm | runs ok | best us | best allocation | "
           "worst us | balanced us | best tiles/s | vs eager (graph) | vs torch.compile | max rel err |",
           "|---|---|---|---:|---:|---|---:|---:|---|---:|---:|---:|---:|---:|---:|"]
    groups = {}
    for r in allruns:
        groups.setdefault((r["run"], r["pipeline"], r["arch"], r["tile_rows"], r["minb"], r.get("impl")),
                          []).append(r)
    for k, rs in groups.items():
        ok = [r for r in rs if r["status"] == "ok" and r.get("depth", 2) == 2]
        if not ok:
            out.append(f"| {' | '.join(str(x) for x in k)} | 0 | | | | | | | | |")
            continue
        b = min(ok, key=lambda r: r["time_s"])
        wr = max(ok, key=lambda r: r["time_s"])
        bal = next((r for r in ok if r["kind"] == "balanced"), None)
        e, c = base.get((k[1], "eager-graph")), base.get((k[1], "compile"))
        out.append(f"| {k[0]} | {k[1]} | {k[2]} | {k[3]} | {k[4]} | {k[5]} | {len(ok)} | "
                   f"{b['time_s']*1e6:.1f} | {b['alloc']} | {wr['time_s']*1e6:.1f} | "
                   f"{(bal['time_s']*1e6) if bal else float('nan'):.1f} | {b['tiles_per_s']:.4g} | "
                   f"{(e / b['time_s']) if e else float('nan'):.2f}x | "
                   f"{(c / b['time_s']) if c else float('nan'):.2f}x | "
                   f"{max(r['rel_err'] for r in ok):.1e} |")
    out.append("")
    for (p, m), t in sorted(base.items()):
        if t:
            out.append(f"- {p} {m}: {t*1e6:.1f} us")
    open(os.path.join(dest, "summary.md"), "w").write("\n".join(out) + "\n")
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
