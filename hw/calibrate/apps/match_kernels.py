#!/usr/bin/env python3
"""Kernel-level matching of kitsune's predictions against the measured H200 kernels (issue 12).

For every measured (app, mode, size, exec) in validation/apps/h200-apps-kernels.csv, runs
`kitsune predict --hw h200 --format json` for the same workload, mode, parameters and execution
model (bsp = PyTorch eager, vf = torch.compile with `--vf inductor`), sorts both sides into kernel
classes and prints predicted vs measured time and kernel count per class, so that each miss is
attributed to the kind of kernel it comes from. With --kernels, also both kernel lists in order.

  hw/calibrate/apps/match_kernels.py [--kitsune build/kitsune] [--app A] [--mode M] [--size S]
                                     [--exec bsp|vf] [--kernels] [--csv FILE]

Classes (from kernel names on the measured side, from item types on the model side):
  gemm       cuBLAS/CUTLASS GEMMs incl. their split-K reductions (model: linear, matmul)
  attention  flash / memory-efficient attention (model: attention, attention_backward)
  norm       layer/RMS norm forward and backward kernels incl. gamma/beta reductions
  reduce     ATen reductions (model: reduce, softmax, softmax_backward)
  index      gathers, scatters, embedding lookups and their backward incl. cub sort kernels
  copy       concatenations, slices, transposes, layout copies, pad copies
  fill       fills and memsets (model: fill)
  elementwise  the rest of ATen's element-wise kernels
  generated  vf only: Triton kernels (triton_*) and the model's generated groups and ops
Under vf (inductor) everything the model does not run as a library call (GEMM, attention,
scatter) is generated code, as Triton's kernels are on the measured side.

Stdlib only; reads the CSV committed in the repository, needs no GPU.
"""
import csv
import json
import os
import re
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
KERNELS_CSV = os.path.join(ROOT, "validation", "apps", "h200-apps-kernels.csv")

CLASSES = ["gemm", "attention", "norm", "reduce", "index", "copy", "fill", "elementwise",
           "generated"]

# measured kernel name -> class (first match wins)
NAME_RULES = [
    ("generated", r"^triton_"),
    ("gemm", r"nvjet|gemm|cutlass|cublas|splitKreduce|xmma|sm90_"),
    ("attention", r"flash|fmha|attention|sdpa"),
    ("norm", r"layer_norm|rms_norm|GammaBeta|layernorm|rmsnorm|norm_backward"),
    ("index", r"gather|scatter|index|embedding|radix|cub::|unique|segment|sum_and_scatter|"
              r"compute_grad_weight|partial"),
    ("copy", r"Cat|copy|Copy|transpose|Memcpy|pad"),
    ("fill", r"Fill|Memset|zero"),
    ("reduce", r"reduce_kernel|Reduce|softmax|Softmax"),
]

TYPE_CLASS = {
    "linear": "gemm", "matmul": "gemm",
    "attention": "attention", "attention_backward": "attention",
    "layernorm": "norm", "rmsnorm": "norm", "norm_backward": "norm",
    "reduce": "reduce", "softmax": "reduce", "softmax_backward": "reduce",
    "gather": "index", "index_select": "index", "embedding": "index", "scatter_add": "index",
    "index_add": "index", "index_copy": "index", "embedding_backward": "index",
    "concat": "copy", "slice": "copy", "transpose": "copy", "copy": "copy", "reshape": "copy",
    "view": "copy", "expand": "copy", "pad": "copy",
    "fill": "fill",
}
LIBRARY_TYPES = {"linear", "matmul", "attention", "attention_backward", "scatter_add",
                 "index_add"}


def kernel_class(name):
    for cls, pat in NAME_RULES:
        if re.search(pat, name):
            return cls
    return "elementwise"


def item_class(item, exec_):
    t = item["type"]
    if exec_ == "vf" and t not in LIBRARY_TYPES:
        return "generated"
    if t == "group":
        return "generated"
    return TYPE_CLASS.get(t, "elementwise")


def predict(kitsune, app, mode, params, exec_):
    cmd = [kitsune, "predict", "--hw", "h200", "--workload", app, "--mode", mode, "--exec",
           exec_, "--format", "json"]
    if exec_ == "vf":
        cmd += ["--vf", "inductor"]
    for p in params.split():
        cmd += ["--set", p]
    out = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    if out.returncode != 0:
        raise SystemExit("match_kernels: %s failed: %s" % (" ".join(cmd), out.stderr.strip()))
    res = json.loads(out.stdout)["results"][0]
    items = res.get("groups", res.get("ops", []))  # vf lists groups, bsp ops
    return res["time_s"], [g for g in items if g["time_s"] > 0]


def main(argv):
    args = {"--kitsune": os.path.join(ROOT, "build", "kitsune")}
    flags = set()
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in ("--kernels",):
            flags.add(a)
            i += 1
        elif a in ("--kitsune", "--app", "--mode", "--size", "--exec", "--csv") and i + 1 < len(argv):
            args[a] = argv[i + 1]
            i += 2
        else:
            raise SystemExit(__doc__.strip().split("\n\n")[1] if a in ("-h", "--help")
                             else "match_kernels: unknown argument %r (see --help)" % a)
    cases = {}
    with open(KERNELS_CSV) as f:
        for r in csv.DictReader(f):
            key = (r["app"], r["mode"], r["size"], r["params"], r["exec"])
            cases.setdefault(key, []).append(r)
    rows = []
    for (app, mode, size, params, exec_), ks in sorted(cases.items()):
        if any(args.get(o) not in (None, v) for o, v in
               (("--app", app), ("--mode", mode), ("--size", size), ("--exec", exec_))):
            continue
        total_s, items = predict(args["--kitsune"], app, mode, params, exec_)
        meas = {c: [0.0, 0] for c in CLASSES}
        model = {c: [0.0, 0] for c in CLASSES}
        for k in ks:
            c = kernel_class(k["name"])
            meas[c][0] += float(k["duration_s"])
            meas[c][1] += 1
        for it in items:
            c = item_class(it, exec_)
            model[c][0] += it["time_s"]
            model[c][1] += 1
        mt = sum(v[0] for v in meas.values())
        print("%s %s %s%s, %s: measured kernels %.1f us (%d), model %.1f us (%d items)" %
              (app, mode, size, " (" + params + ")" if params else "", exec_, mt * 1e6, len(ks),
               total_s * 1e6, len(items)))
        print("  %-12s %12s %6s %12s %6s %9s" % ("class", "measured_us", "n", "model_us", "n",
                                                  "diff_us"))
        for c in CLASSES:
            if meas[c][1] == 0 and model[c][1] == 0:
                continue
            d = (model[c][0] - meas[c][0]) * 1e6
            print("  %-12s %12.1f %6d %12.1f %6d %+9.1f" % (c, meas[c][0] * 1e6, meas[c][1],
                                                           model[c][0] * 1e6, model[c][1], d))
            rows.append([app, mode, size, params, exec_, c, "%.4e" % meas[c][0], meas[c][1],
                         "%.4e" % model[c][0], model[c][1]])
        if "--kernels" in flags:
            print("  measured kernels, in order:")
            for k in ks:
                print("    %9.1f us  %-11s %s" % (float(k["duration_s"]) * 1e6,
                                                  kernel_class(k["name"]), k["name"][:90]))
            print("  model items, in order:")
            for it in items:
                print("    %9.1f us  %-11s %s (%s)" % (it["time_s"] * 1e6, item_class(it, exec_),
                                                      it["name"], it["type"]))
        print()
    if "--csv" in args:
        tmp = args["--csv"] + ".tmp"
        with open(tmp, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["app", "mode", "size", "params", "exec", "class", "measured_s",
                        "measured_kernels", "model_s", "model_items"])
            w.writerows(rows)
        os.replace(tmp, args["--csv"])


if __name__ == "__main__":
    main(sys.argv[1:])
