#!/usr/bin/env python3
"""Raw output of run_apps.py -> the committed CSVs (standard-library Python only; no GPU).

  python3 hw/calibrate/apps/collect_apps.py [RAW_DIR] [--out-dir validation] [--hw h200]
                                          [--vf-from APP=RAW_DIR ...]
  python3 hw/calibrate/apps/collect_apps.py --selftest     (fake raw output, checks the writers)

RAW_DIR (default hw/calibrate/apps/results/raw) holds apps.json, micro.json, ncu_<tag>.csv +
ncu_<tag>_order.json (tag: default, other, quick), smi_log.csv and log.txt. --vf-from takes
APP's torch.compile cases (vf time_s and kernel lists, no ncu) from another run's apps.json:
the committed table takes NeRF's and DLRM's from clean re-runs without compile workers
(results/raw-nerf-rerun, raw-dlrm-rerun), since the workers' GPU load during compilation
perturbs pad_mm's compile-time benchmark, which decides their alignment-1 GEMMs.

Writes
  validation/h200-apps.csv           the `kitsune validate` reference table (docs/formats.md):
                                     bsp time_s (eager, CUDA-graph replay), vf time_s
                                     (torch.compile, same), bsp/vf dram_bytes (ncu sums);
                                     params = the size's overrides (empty at the defaults)
  validation/h200-apps-kernels.csv   every kernel of every step (profiler) with ncu DRAM bytes
  validation/h200-micro.csv          the microbenchmarks
  validation/h200-apps-env.json      GPU, driver, CUDA, torch, clocks, sizes, method
"""
import csv
import difflib
import json
import os
import re
import shutil
import statistics
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
EXEC = {"eager": "bsp", "compiled": "vf"}
NAME_MAX = 240


def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def num(s):
    s = (s or "").replace(",", "").strip()
    try:
        return float(s)
    except ValueError:
        return None


def read_ncu(raw, tag):
    """Segments of the ncu run `tag`: [{app, mode, size, exec, kernels: [{name, grid, block,
    read, write, time_s}]}], split at the marker kernels (spin_kernel) in order."""
    order = load_json(os.path.join(raw, "ncu_%s_order.json" % tag))
    path = os.path.join(raw, "ncu_%s.csv" % tag)
    if order is None or not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        rows = [r for r in csv.reader(l for l in f if not l.startswith("#"))]
    if len(rows) < 2:
        return []
    hdr, units = rows[0], rows[1]
    col = {h: i for i, h in enumerate(hdr)}
    scale = {"byte": 1.0, "kbyte": 1e3, "mbyte": 1e6, "gbyte": 1e9, "nsecond": 1e-9,
             "usecond": 1e-6, "msecond": 1e-3, "second": 1.0, "ns": 1e-9, "us": 1e-6,
             "ms": 1e-3, "s": 1.0}

    def val(r, name):
        v = num(r[col[name]]) if name in col else None
        if v is None:
            return None
        return v * scale.get(units[col[name]].strip().lower(), 1.0)
    data = [r for r in rows[2:] if len(r) >= len(hdr)]
    segs, cur = [], None
    for r in data:
        name = r[col["Kernel Name"]]
        if "spin_kernel" in name:
            cur = []
            segs.append(cur)
            continue
        if cur is None:
            continue
        cur.append({"name": name, "grid": r[col["Grid Size"]] if "Grid Size" in col else "",
                    "block": r[col["Block Size"]] if "Block Size" in col else "",
                    "read": val(r, "dram__bytes_read.sum"),
                    "write": val(r, "dram__bytes_write.sum"),
                    "time_s": val(r, "gpu__time_duration.sum")})
    out = []
    # markers are launched before every attempted segment; failed ones are in the order file
    # with ok=false (their partial kernels are dropped)
    for seg, meta in zip(segs, order.get("segments", [])):
        if meta.get("ok"):
            d = dict(meta)
            d["kernels"] = seg
            out.append(d)
    return out


def norm_name(n):
    """A short kernel name to align profiler (CUPTI) and ncu names."""
    n = n.replace("(anonymous namespace)", "").replace("<unnamed>", "")
    n = re.sub(r"^void ", "", n)
    depth, s = 0, []
    for ch in n:  # drop template arguments
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth = max(0, depth - 1)
        elif depth == 0:
            s.append(ch)
    n = "".join(s).split("(")[0].strip()
    return n.split("::")[-1]


def align(prof, ncu):
    """Indices pairing profiler kernels (kind k) with ncu kernels: in order if the counts and
    names agree, else by a sequence match on the short names."""
    pk = [i for i, k in enumerate(prof) if k["kind"] == "k"]
    a = [norm_name(prof[i]["name"]) for i in pk]
    b = [norm_name(k["name"]) for k in ncu]
    if len(a) == len(b):
        return {pk[i]: i for i in range(len(a))}
    m = {}
    sm = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for blk in sm.get_matching_blocks():
        for j in range(blk.size):
            m[pk[blk.a + j]] = blk.b + j
    return m


def fmt(x, f="%.6e"):
    return "" if x is None else f % x


def params_str(ov):
    return " ".join("%s=%s" % kv for kv in sorted((ov or {}).items()))


def case_params(app, mode, ov):
    """The kitsune parameters of a measured case: its overrides, and for DLRM training the
    table's gradient as measured. The harness ran F.embedding with its dense gradient until
    models.py took SPARSE_GRAD (the workload's default is now the sparse gradient of
    dlrm_s_pytorch.py); a case that does not name it was measured dense."""
    ov = dict(ov or {})
    if app == "dlrm" and mode == "training":
        ov.setdefault("SPARSE_GRAD", 0)
    return params_str(ov)


def clocks(raw):
    """SM clock / power statistics from nvidia-smi -lms 500 (samples with utilization > 0)."""
    path = os.path.join(raw, "smi_log.csv")
    sm, mem, pw, temp, busy = [], [], [], [], 0
    try:
        with open(path) as f:
            for line in f:
                p = [x.strip() for x in line.split(",")]
                if len(p) < 6:
                    continue
                try:
                    c, m, w, t, u = float(p[1]), float(p[2]), float(p[3]), float(p[4]), float(p[5])
                except ValueError:
                    continue
                pw.append(w)
                temp.append(t)
                if u > 0:
                    busy += 1
                    sm.append(c)
                    mem.append(m)
    except OSError:
        return None
    if not pw:
        return None
    d = {"samples": len(pw), "busy_samples": busy, "power_max_W": max(pw),
         "temperature_max_C": max(temp)}
    if sm:
        d.update({"sm_clock_busy_MHz": {"median": statistics.median(sm), "min": min(sm),
                                        "max": max(sm)},
                  "mem_clock_busy_MHz": statistics.median(mem)})
    return d


def source_base(env):
    return "%s measured %s torch %s" % (env.get("gpu", "GPU"), env.get("date_utc", "")[:10],
                                        env.get("torch", "?"))


def collect(raw, out_dir, hw="h200", vf_from=None):
    """vf_from: {app: RAW_DIR} - that app's compiled (vf) cases from another run's apps.json
    (a clean re-run), in place of raw's."""
    apps = load_json(os.path.join(raw, "apps.json"))
    if apps is None:
        print("collect_apps: no apps.json in %s" % raw, file=sys.stderr)
        return 1
    names = apps.get("kernel_names", [])
    env = apps.get("env", {})
    src_base = source_base(env)
    alt = {}  # (app, mode, size) -> (compiled record, kernel names, source)
    for app, d in (vf_from or {}).items():
        other = load_json(os.path.join(d, "apps.json"))
        if other is None:
            print("collect_apps: no apps.json in %s" % d, file=sys.stderr)
            return 1
        oenv = other.get("env", {})
        src = "%s (re-run %s without compile workers: pad_mm's compile-time benchmark " \
              "uncontended)" % (source_base(oenv), os.path.basename(os.path.normpath(d)))
        for c in other.get("cases", []):
            if c["app"] == app and c.get("compiled", {}).get("time_s"):
                alt[(app, c["mode"], c["size"])] = (c["compiled"], other.get("kernel_names", []),
                                                    src)
        if not any(k[0] == app for k in alt):
            print("collect_apps: no compiled %s case in %s" % (app, d), file=sys.stderr)
            return 1
    ncu = []
    for tag in ("default", "quick"):
        ncu += read_ncu(raw, tag)
    ncu_by = {(s["app"], s["mode"], s["size"], s["exec"]): s for s in ncu}

    ref_rows, krows, summary = [], [], []
    names0, src0 = names, src_base
    for c in apps.get("cases", []):
        app, mode, size = c["app"], c["mode"], c["size"]
        pstr = case_params(app, mode, c.get("overrides"))
        for ex in ("eager", "compiled"):
            r = c.get(ex)
            names, src_base = names0, src0
            rerun = ex == "compiled" and app in (vf_from or {}) and r is not None
            if rerun:
                r, names, src_base = alt.get((app, mode, size), (None, names0, src0))
                if r is None:
                    print("collect_apps: %s %s %s: no compiled case in the --vf-from run; no vf "
                          "row" % (app, mode, size), file=sys.stderr)
            if not r or "error" in r and "time_s" not in r:
                continue
            t = r.get("time_s")
            if not t and r.get("plain_time_s"):  # graph capture failed: plain launches
                ref_rows.append([app, mode, EXEC[ex], "time_s", "%.5e" % r["plain_time_s"],
                                 "%s %s plain launches, no CUDA graph (capture failed: %s)" % (
                                     src_base, ex, (r.get("graph_error") or "")[:80]), hw, pstr])
            if t:
                q = r.get("time", {})
                how = ("eager CUDA-graph replay" if ex == "eager" else
                       "torch.compile default mode CUDA-graph replay")
                ref_rows.append([app, mode, EXEC[ex], "time_s", "%.5e" % t,
                                 "%s %s median of %s cold-L2 replays (p10 %.4g p90 %.4g s)" % (
                                     src_base, how, q.get("n", "?"), q.get("p10", 0),
                                     q.get("p90", 0)), hw, pstr])
            seg = None if rerun else ncu_by.get((app, mode, size, ex))
            dram = None
            if seg and seg["kernels"]:
                rd = sum(k["read"] or 0 for k in seg["kernels"])
                wr = sum(k["write"] or 0 for k in seg["kernels"])
                dram = rd + wr
                what = "%d kernels" % len(seg["kernels"])
                ref_rows.append([app, mode, EXEC[ex], "dram_bytes", "%.6e" % dram,
                                 "%s ncu dram__bytes_read+write.sum over %s of one %s "
                                 "step (--cache-control none, L2 flushed before the step)" % (
                                     src_base, what, ex), hw, pstr])
            # kernels: profiler list, ncu bytes aligned to it
            prof = [{"name": names[k[0]] if isinstance(k[0], int) and k[0] < len(names)
                     else str(k[0]), "grid": k[1], "block": k[2], "start_us": k[3],
                     "dur_us": k[4], "kind": k[5]} for k in r.get("kernels", [])]
            nk = seg["kernels"] if seg else []
            m = align(prof, nk) if prof and nk else {}
            used = set(m.values())
            for i, k in enumerate(prof):
                j = m.get(i)
                n = nk[j] if j is not None else None
                krows.append([app, mode, size, pstr, EXEC[ex], i, k["kind"],
                              k["name"][:NAME_MAX], gridstr(k["grid"]), gridstr(k["block"]),
                              fmt(k["dur_us"] * 1e-6), fmt(k["start_us"] * 1e-6),
                              fmt(n and n["read"], "%.0f"), fmt(n and n["write"], "%.0f"),
                              fmt(n and n["time_s"]), r.get("kernels_source", "")])
            if not prof:  # no profiler list: the ncu kernels alone
                for j, n in enumerate(nk):
                    krows.append([app, mode, size, pstr, EXEC[ex], j, "k", n["name"][:NAME_MAX],
                                  n["grid"], n["block"], "", "", fmt(n["read"], "%.0f"),
                                  fmt(n["write"], "%.0f"), fmt(n["time_s"]), "ncu only"])
            unmatched = len(nk) - len(used) if prof else 0
            summary.append((app, mode, size, ex, t, r.get("plain_time_s"), r.get("n_kernels"),
                            dram, unmatched))

    os.makedirs(out_dir, exist_ok=True)
    ref = os.path.join(out_dir, "%s-apps.csv" % hw)
    with open(ref, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["workload", "mode", "exec", "metric", "value", "source", "hw", "params"])
        w.writerows(ref_rows)
    kp = os.path.join(out_dir, "%s-apps-kernels.csv" % hw)
    with open(kp, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["app", "mode", "size", "params", "exec", "index", "kind", "name", "grid",
                    "block", "duration_s", "start_s", "dram_read_bytes", "dram_write_bytes",
                    "ncu_duration_s", "list_source"])
        w.writerows(krows)

    micro = load_json(os.path.join(raw, "micro.json"))
    mrows = []
    if micro:
        mn = micro.get("kernel_names", names)
        for e in micro.get("entries", []):
            ks = e.get("kernels") or []
            kstr = "; ".join("%s %s x %s %.2fus" % (
                norm_name(mn[k[0]]) if k[0] < len(mn) else "?", gridstr(k[1]), gridstr(k[2]),
                k[4]) for k in ks[:6])
            if len(ks) > 6:
                kstr += "; ... (%d kernels)" % len(ks)
            err = e.get("error", "")
            if not ks and not err and e.get("time_s") is not None and "kernels" in e \
                    and not micro.get("cpu"):
                err = "no kernel launched (the op was a view): nothing measured"
            mrows.append([e["group"], e["name"], params_str(e.get("params")), e.get("k", ""),
                          fmt(e.get("time_s")), fmt(e.get("TFLOPs"), "%.3f"),
                          fmt(e.get("GBps_min_bytes"), "%.1f"), e.get("flops", ""),
                          e.get("min_bytes", ""), len(ks), kstr, err])
    mp = os.path.join(out_dir, "%s-micro.csv" % hw)
    with open(mp, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["group", "name", "params", "copies_in_graph", "time_s", "TFLOPs",
                    "GBps_min_bytes", "flops", "min_bytes", "n_kernels", "kernels", "error"])
        w.writerows(mrows)

    envp = os.path.join(out_dir, "%s-apps-env.json" % hw)
    cfg = apps.get("config", {})
    envd = {"env": env, "clocks": clocks(raw), "config": cfg,
            "ncu": [{k: v for k, v in n.items() if k != "tail"} for n in apps.get("ncu", [])],
            "phases": apps.get("phases", []), "skipped": apps.get("skipped", []),
            "compile_workers": apps.get("compile_workers", []),
            "errors": [{"app": c["app"], "mode": c["mode"], "size": c["size"],
                        "exec": ex, "error": c[ex].get("error") or c[ex].get("graph_error")}
                       for c in apps.get("cases", []) for ex in ("eager", "compiled")
                       if ex in c and (c[ex].get("error") or c[ex].get("graph_error"))],
            "sizes": {c["app"] + " " + c["mode"] + " " + c["size"]: c.get("params")
                      for c in apps.get("cases", [])},
            "method": {
                "bsp time_s": "eager step captured in a CUDA graph, median replay; 256 MiB read "
                              "before each replay (outside the CUDA events): cold L2",
                "vf time_s": "torch.compile(model, dynamic=False), default mode, captured and "
                             "replayed the same way",
                "training step": "forward + torch.autograd.backward(outputs, ones_like) (= the "
                                 "gradient of sum(outputs); one fill per output); gradients "
                                 "set to None before capture: written, never accumulated",
                "dram_bytes": "ncu --cache-control none --clock-control none, one plain step "
                              "per case, L2 flushed before it; sum of dram__bytes_read.sum + "
                              "dram__bytes_write.sum over its kernels",
                "kernels": "torch.profiler (CUPTI) over one flushed graph replay",
                "micro": (micro or {}).get("method", "")}}
    with open(envp, "w") as f:
        json.dump(envd, f, indent=1, sort_keys=True)
        f.write("\n")

    print("collect_apps: %s (%d rows), %s (%d rows), %s (%d rows), %s" % (
        rel(ref), len(ref_rows), rel(kp), len(krows), rel(mp), len(mrows), rel(envp)))
    print_summary(summary)
    return 0


def gridstr(g):
    if isinstance(g, (list, tuple)):
        return "x".join(str(x) for x in g)
    return "" if g is None else str(g)


def rel(p):
    try:
        return os.path.relpath(p, ROOT)
    except ValueError:
        return p


def print_summary(summary):
    by = {}
    for (app, mode, size, ex, t, tp, nk, dram, um) in summary:
        by.setdefault((app, mode, size), {})[ex] = (t, tp, nk, dram, um)
    print("\n%-14s %-9s %-7s %11s %11s %7s %11s %11s %5s %5s" % (
        "app", "mode", "size", "eager_us", "compile_us", "vf/bsp", "dram_e_MB", "dram_c_MB",
        "k_e", "k_c"))
    for (a, m, s), d in by.items():
        e = d.get("eager", (None,) * 5)
        c = d.get("compiled", (None,) * 5)
        print("%-14s %-9s %-7s %11s %11s %7s %11s %11s %5s %5s" % (
            a, m, s, "%.1f" % (e[0] * 1e6) if e[0] else "-",
            "%.1f" % (c[0] * 1e6) if c[0] else "-",
            "%.2fx" % (e[0] / c[0]) if e[0] and c[0] else "-",
            "%.1f" % (e[3] / 1e6) if e[3] else "-", "%.1f" % (c[3] / 1e6) if c[3] else "-",
            e[2] if e[2] is not None else "-", c[2] if c[2] is not None else "-"))


# ----------------------------------------------------------------------------- self-test
def selftest():
    """Fake raw output (two cases, one ncu run, micro) through collect(); checks the CSVs."""
    d = tempfile.mkdtemp(prefix="kt_collect_")
    raw = os.path.join(d, "raw")
    os.makedirs(raw)
    names = ["void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>"
             "(int, at::native::FillFunctor<float>)", "nvjet_sm90_tst_128x64_64x8_1x2_h_bz_NNT",
             "triton_poi_fused_relu_0"]
    k_e = [[1, [2, 64, 1], [384, 1, 1], 0.0, 10.0, "k"], [0, [100, 1, 1], [128, 1, 1], 11.0,
                                                            2.0, "k"],
           [0, None, None, 14.0, 1.0, "memset"]]
    k_c = [[1, [2, 64, 1], [384, 1, 1], 0.0, 10.0, "k"], [2, [10, 1, 1], [256, 1, 1], 11.0,
                                                            1.5, "k"]]
    apps = {"env": {"gpu": "NVIDIA H200", "torch": "2.11.0", "date_utc": "2026-12-02T00:00:00Z"},
            "kernel_names": names, "config": {},
            "cases": [{"app": "nerf", "mode": "inference", "size": "default", "overrides": {},
                       "eager": {"time_s": 1.2e-3, "time": {"n": 50, "p10": 1.1e-3,
                                                            "p90": 1.3e-3},
                                 "kernels": k_e, "n_kernels": 3, "kernels_source": "graph"},
                       "compiled": {"time_s": 0.4e-3, "time": {"n": 50, "p10": 0.3e-3,
                                                               "p90": 0.5e-3},
                                    "kernels": k_c, "n_kernels": 2, "kernels_source": "graph"}},
                      {"app": "nerf", "mode": "training", "size": "s1",
                       "overrides": {"B": 65536},
                       "eager": {"time_s": 2e-3, "kernels": [], "n_kernels": 0},
                       "compiled": {"time_s": 1e-3, "kernels": []}}]}
    json.dump(apps, open(os.path.join(raw, "apps.json"), "w"))
    json.dump({"segments": [{"app": "nerf", "mode": "inference", "size": "default",
                             "overrides": {}, "exec": "eager", "ok": True},
                            {"app": "nerf", "mode": "inference", "size": "default",
                             "overrides": {}, "exec": "compiled", "ok": True},
                            {"app": "nerf", "mode": "training", "size": "s1",
                             "overrides": {"B": 65536}, "exec": "eager", "ok": True}]},
              open(os.path.join(raw, "ncu_default_order.json"), "w"))
    hdr = ["ID", "Kernel Name", "Grid Size", "Block Size", "dram__bytes_read.sum",
           "dram__bytes_write.sum", "gpu__time_duration.sum"]
    units = ["", "", "", "", "byte", "byte", "ns"]
    rows = [["0", "cuda::<unnamed>::spin_kernel(long)", "(1, 1, 1)", "(1, 1, 1)", "2,816",
             "0", "1,000"],
            ["1", "nvjet_sm90_tst_128x64_64x8_1x2_h_bz_NNT", "(2, 64, 1)", "(384, 1, 1)",
             "4,214,016", "1,000,000", "9,500"],
            ["2", "vectorized_elementwise_kernel", "(100, 1, 1)", "(128, 1, 1)", "1,000", "2,000",
             "1,900"],
            ["3", "cuda::<unnamed>::spin_kernel(long)", "(1, 1, 1)", "(1, 1, 1)", "2,816", "0",
             "1,000"],
            ["4", "nvjet_sm90_tst_128x64_64x8_1x2_h_bz_NNT", "(2, 64, 1)", "(384, 1, 1)",
             "4,000,000", "1,000,000", "9,500"],
            ["5", "triton_poi_fused_relu_0", "(10, 1, 1)", "(256, 1, 1)", "500", "500", "1,400"],
            ["6", "cuda::<unnamed>::spin_kernel(long)", "(1, 1, 1)", "(1, 1, 1)", "2,816", "0",
             "1,000"],
            ["7", "nvjet_x", "(2, 64, 1)", "(384, 1, 1)", "7", "8", "9"]]
    with open(os.path.join(raw, "ncu_default.csv"), "w", newline="") as f:
        f.write("# ==PROF== Disconnected\n")
        w = csv.writer(f)
        w.writerow(hdr)
        w.writerow(units)
        w.writerows(rows)
    json.dump({"entries": [{"group": "align", "name": "nerf_fc1_fwd",
                            "params": {"M": 262144, "K": 63, "N": 256}, "k": 2, "time_s": 5e-5,
                            "TFLOPs": 171.0, "flops": 8455716864, "min_bytes": 1,
                            "kernels": [[1, [2, 64, 1], [384, 1, 1], 0, 50.0, "k"]]}],
               "kernel_names": names}, open(os.path.join(raw, "micro.json"), "w"))
    with open(os.path.join(raw, "smi_log.csv"), "w") as f:
        f.write("2026/12/02 10:39:55.120, 1980, 3201, 300.5, 45, 90\n"
                "2026/12/02 10:39:55.620, 345, 3201, 80.5, 44, 0\n")
    out = os.path.join(d, "validation")
    assert collect(raw, out) == 0
    ref = list(csv.reader(open(os.path.join(out, "h200-apps.csv"))))
    assert ref[0] == ["workload", "mode", "exec", "metric", "value", "source", "hw", "params"]
    got = {(r[0], r[1], r[2], r[3], r[7]): float(r[4]) for r in ref[1:]}
    assert got[("nerf", "inference", "bsp", "time_s", "")] == 1.2e-3, got
    assert got[("nerf", "inference", "vf", "time_s", "")] == 4e-4, got
    assert got[("nerf", "inference", "bsp", "dram_bytes", "")] == 4214016 + 1e6 + 3000, got
    assert got[("nerf", "inference", "vf", "dram_bytes", "")] == 5e6 + 1000, got
    assert got[("nerf", "training", "bsp", "time_s", "B=65536")] == 2e-3, got
    assert got[("nerf", "training", "bsp", "dram_bytes", "B=65536")] == 15, got
    ks = list(csv.DictReader(open(os.path.join(out, "h200-apps-kernels.csv"))))
    e = [k for k in ks if k["exec"] == "bsp" and k["mode"] == "inference"]
    assert abs(float(e[0]["ncu_duration_s"]) - 9.5e-6) < 1e-12, e[0]
    assert len(e) == 3 and e[0]["dram_read_bytes"] == "4214016" and \
        e[1]["dram_write_bytes"] == "2000" and e[2]["kind"] == "memset" and \
        e[2]["dram_read_bytes"] == "", e
    t = [k for k in ks if k["mode"] == "training"]
    assert len(t) == 1 and t[0]["list_source"] == "ncu only", t
    mic = list(csv.DictReader(open(os.path.join(out, "h200-micro.csv"))))
    assert mic[0]["TFLOPs"] == "171.000" and "nvjet" in mic[0]["kernels"], mic
    env = json.load(open(os.path.join(out, "h200-apps-env.json")))
    assert env["clocks"]["sm_clock_busy_MHz"]["median"] == 1980.0, env["clocks"]
    assert norm_name(names[0]) == "vectorized_elementwise_kernel", norm_name(names[0])
    # --vf-from: a re-run's compiled case replaces the vf time and kernels (no ncu bytes for it),
    # once per case; the eager rows and the other cases stay
    rerun = os.path.join(d, "rerun")
    os.makedirs(rerun)
    json.dump({"env": {"gpu": "NVIDIA H200", "torch": "2.11.0",
                       "date_utc": "2026-12-03T00:00:00Z"},
               "kernel_names": ["triton_poi_fused_cat_2"],
               "cases": [{"app": "nerf", "mode": "inference", "size": "default", "overrides": {},
                          "eager": {"time_s": 9e-3}},
                         {"app": "nerf", "mode": "inference", "size": "default", "overrides": {},
                          "compiled": {"time_s": 0.7e-3, "time": {"n": 20},
                                       "kernels": [[0, [5, 1, 1], [128, 1, 1], 0.0, 3.0, "k"]]}}]},
              open(os.path.join(rerun, "apps.json"), "w"))
    out2 = os.path.join(d, "validation2")
    assert collect(raw, out2, vf_from={"nerf": rerun}) == 0
    ref2 = list(csv.reader(open(os.path.join(out2, "h200-apps.csv"))))
    vf = [r for r in ref2 if r[1] == "inference" and r[2] == "vf"]
    assert [(r[3], float(r[4])) for r in vf] == [("time_s", 7e-4)], vf
    assert "re-run rerun without compile workers" in vf[0][5], vf
    got2 = {(r[0], r[1], r[2], r[3], r[7]): float(r[4]) for r in ref2[1:]}
    assert got2[("nerf", "inference", "bsp", "time_s", "")] == 1.2e-3, got2
    # a case the re-run lacks has no vf row (never the first run's), and a warning says so
    assert ("nerf", "training", "vf", "time_s", "B=65536") not in got2, got2
    ks2 = [k for k in csv.DictReader(open(os.path.join(out2, "h200-apps-kernels.csv")))
           if k["exec"] == "vf" and k["mode"] == "inference"]
    assert [k["name"] for k in ks2] == ["triton_poi_fused_cat_2"], ks2
    shutil.rmtree(d)  # kept when an assertion fails, for a look
    print("collect_apps selftest: ok")
    return 0


def main():
    args = sys.argv[1:]
    if "--selftest" in args:
        return selftest()
    out_dir = os.path.join(ROOT, "validation", "apps")
    hw = "h200"
    if "--out-dir" in args:
        out_dir = args[args.index("--out-dir") + 1]
    if "--hw" in args:
        hw = args[args.index("--hw") + 1]
    pos = [a for i, a in enumerate(args) if not a.startswith("--") and
           (i == 0 or args[i - 1] not in ("--out-dir", "--hw", "--vf-from"))]
    raw = pos[0] if pos else os.path.join(HERE, "results", "raw")
    vf_from = {}
    for i, a in enumerate(args):
        if a == "--vf-from" and i + 1 < len(args) and "=" in args[i + 1]:
            app, d = args[i + 1].split("=", 1)
            vf_from[app] = d
    return collect(raw, out_dir, hw, vf_from)


if __name__ == "__main__":
    sys.exit(main())
