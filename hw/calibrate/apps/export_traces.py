#!/usr/bin/env python3
"""Measured kernel lists as the files `kitsune validate --trace` reads (issue 15, part 5).

run_apps.py recorded every step with torch.profiler and kept, per case, the kernels of one
flushed CUDA-graph replay (name, grid, block, start and duration in us, kind) in
results/raw/apps.json; the Chrome trace files themselves were temporary. This script writes them
back as Chrome traces in torch.profiler's format (the events kitsune reads: "ph": "X", "cat":
"kernel" / "gpu_memset" / "gpu_memcpy", "name", "ts" and "dur" in us, "args" grid and block),
and cuts the matching segment out of the Nsight Compute run (results/raw/ncu_default.csv,
`ncu --csv --page raw`, segments split at the marker kernels) unchanged: header, units row and
that segment's rows.

  hw/calibrate/apps/export_traces.py [APP MODE [EXEC]]   (default: llama3-8b-ctx inference eager)

EXEC is eager (the bsp truth) or compiled (torch.compile, the vf truth); writes
validation/traces/h200-APP-MODE-EXEC.json and, for eager, .ncu.csv (ncu ran the eager steps
only). Stdlib only.
"""
import csv
import io
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
RAW = os.path.join(HERE, "results", "raw")
OUT = os.path.join(ROOT, "validation", "traces")
CAT = {"k": "kernel", "memset": "gpu_memset", "memcpy": "gpu_memcpy"}


def chrome_trace(case, exec_, names):
    ev = []
    for name_idx, grid, block, start_us, dur_us, kind in case[exec_]["kernels"]:
        e = {"ph": "X", "cat": CAT[kind], "name": names[name_idx], "pid": 0, "tid": 7,
             "ts": start_us, "dur": dur_us}
        if grid is not None:
            e["args"] = {"grid": grid, "block": block}
        ev.append(e)
    meta = {"source": "hw/calibrate/apps/results/raw/apps.json, case %s %s %s %s: torch.profiler "
                      "(CUPTI) kernels of one flushed CUDA-graph replay on an NVIDIA H200, "
                      "re-exported by hw/calibrate/apps/export_traces.py"
                      % (case["app"], case["mode"], case["size"], exec_),
            "params": case["params"]}
    return {"schemaVersion": 1, "kitsune_note": meta, "traceEvents": ev}


def ncu_segment(index):
    """Header, units row and the rows of segment `index` (after its marker kernel) of the ncu
    run, as they are in the file."""
    with open(os.path.join(RAW, "ncu_default.csv"), newline="") as f:
        lines = [l for l in f if not l.startswith("#")]
    rows = list(csv.reader(lines))
    hdr, units, data = rows[0], rows[1], rows[2:]
    col = hdr.index("Kernel Name")
    segs, cur = [], None
    for r in data:
        if "spin_kernel" in r[col]:
            cur = []
            segs.append(cur)
        elif cur is not None:
            cur.append(r)
    buf = io.StringIO()
    w = csv.writer(buf, quoting=csv.QUOTE_ALL, lineterminator="\n")
    w.writerow(hdr)
    w.writerow(units)
    w.writerows(segs[index])
    return buf.getvalue()


def main(argv):
    app = argv[0] if argv else "llama3-8b-ctx"
    mode = argv[1] if len(argv) > 1 else "inference"
    exec_ = argv[2] if len(argv) > 2 else "eager"
    with open(os.path.join(RAW, "apps.json")) as f:
        d = json.load(f)
    case = next(c for c in d["cases"] if c["app"] == app and c["mode"] == mode and
                c["size"] == "default" and c.get(exec_, {}).get("kernels"))
    os.makedirs(OUT, exist_ok=True)
    base = os.path.join(OUT, "h200-%s-%s-%s" % (app, mode, exec_))
    with open(base + ".json", "w") as f:
        json.dump(chrome_trace(case, exec_, d["kernel_names"]), f, indent=0)
        f.write("\n")
    if exec_ == "eager":
        with open(os.path.join(RAW, "ncu_default_order.json")) as f:
            order = json.load(f)["segments"]
        idx = next(i for i, s in enumerate(order) if s["app"] == app and s["mode"] == mode
                   and s["size"] == "default" and s["exec"] == "eager")
        with open(base + ".ncu.csv", "w") as f:
            f.write(ncu_segment(idx))
    print("wrote", base + ".*")


if __name__ == "__main__":
    main(sys.argv[1:])
