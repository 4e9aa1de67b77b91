#!/usr/bin/env python3
"""The model against the real pipelines of hw/calibrate/pipeline (standard-library Python).

  python3 hw/calibrate/pipeline/model.py fit [--write] [--poll]
      Fit the stage_body rates of hw/h200-ktpipe.json to the measured per-tile stage times and
      print the fit and its errors (in-sample and held out); with --poll or --write, then fit
      stage_body.poll_ns (the spin per queue transfer that busy time leaves out) to the measured
      pipeline times, the rates fixed; --write stores the values and their sources in
      hw/h200-ktpipe.json.
  python3 hw/calibrate/pipeline/model.py compare [--check] [--out DIR]
      Predict every measured run with `kitsune map` (its stages, allocation, tile height and CTAs
      per SM imposed) and write DIR/model.csv and DIR/model-summary.md (DIR defaults to
      validation/pipeline); with --check exit 1 when the errors exceed the goals stated in
      GOALS below.
  python3 hw/calibrate/pipeline/model.py ilp [--cases FILE]
      The mapper's own allocation for every (pipeline, stages, tile, CTAs per SM) combination;
      with --cases, also write them and their neighbourhood (one CTA moved from any stage to any
      other) as `pipe.py cases` input, one case per line: pipe arch tm ctas_per_sm alloc kind.
  python3 hw/calibrate/pipeline/model.py dram [--check] [--out DIR]
      DRAM bytes of the pipelines (validation/pipeline/raw/run4-dram-h200, run.sh dram: node
      tables of 1-67 MB) and of the mapper's MGN allocation on an H100 (run3-ilp-h100) against
      the model's; writes DIR/dram.csv and DIR/dram.md; --check guards DRAM_GUARD below.
  python3 hw/calibrate/pipeline/model.py ring [--check] [--out DIR]
      The multicast ring of mgn-mc (validation/pipeline/raw/run6-ring-h200 and run7-ring2-h200,
      run.sh ring): DRAM and L2 bytes at ring sizes of 8-50 MiB against mgn at the same
      allocation (no deep ring), and the model's bytes where it can express the run (queue depth
      2); writes DIR/ring.csv and DIR/ring.md. No error goal (the model has no eviction of ring
      lines yet); --check fails when the committed validation/pipeline/ring.{csv,md} differ from
      the regenerated ones.
  python3 hw/calibrate/pipeline/model.py ilpcheck [--check] [--out DIR]
      The measured run of those cases (validation/pipeline/raw/run3-ilp-h100, run.sh ilp): per
      combination, the mapper's allocation against the best allocation measured before (timed
      again in the same run) and against its one-CTA neighbourhood, with the model's prediction
      of each; writes DIR/ilp.csv and DIR/ilp-summary.md; --check guards ILP_GUARDS below.
      Cases file hw/calibrate/pipeline/ilp-cases.txt: the current mapper's (run11); run5's and
      run3's are in the git history (before stage_body.poll_ns).
  python3 hw/calibrate/pipeline/model.py profile [--cases FILE]
      The mapper on measured stage times: per combination of raw/run11-ilp-poll-h200, the stage
      times (one CTA's busy time per tile) of its run of the model's own allocation, passed to
      `kitsune map --stage-cta-tile-us`; with --cases, the resulting allocation, its one-CTA
      neighbourhood, the model's allocation and run11's best as `pipe.py cases` input (the three
      references twice), for `run.sh ilp FILE`.
  python3 hw/calibrate/pipeline/model.py profilecheck [--check] [--out DIR]
      That run (validation/pipeline/raw/run13-profile-h200): the profiled allocation against the
      best measured one and the model's, Spearman over each neighbourhood, the run's noise;
      writes DIR/profile.csv and DIR/profile-summary.md; --check guards PROFILE_GUARD below and
      fails when the committed files are stale or the mapper's allocation from the profile is
      no longer the one measured.
  python3 hw/calibrate/pipeline/model.py placement [--check] [--out DIR]
      Where the block scheduler puts each stage's CTAs (validation/pipeline/raw/run8-placement-h200,
      run.sh placement): the mapper's allocation and its fastest and slowest one-CTA neighbours of
      run5 under 10 block orders (stages in sequence, interleaved, 8 shuffles), with the model's
      prediction of each; writes DIR/placement.md; --check fails when the committed file differs
      from the regenerated one or PLACEMENT_GUARDS below do not hold.
  python3 hw/calibrate/pipeline/model.py trace [--check] [--out DIR]
      Per-tile stage times (validation/pipeline/raw/run10-trace-h200, run.sh placement trace:
      every tile's clock64 marks in one launch of each placement case): per stage the service
      time (work between the waits) and its spread, the busy time per tile the fit uses, and the
      time between a CTA's tiles, against the model's stage time; writes DIR/trace.md; --check
      fails when the committed file differs from the regenerated one.

Measured data: validation/pipeline/runs.csv (run.sh full / cat; see README.md). Runs with queue
depth other than 2 and the wmma GEMM path are left out (the model has one queue depth and one
stage-body profile); run1's rows with a COPY stage used an earlier gather code that run2
replaced, so they are compared but never fitted.

Stage service time (what the fit sees): a stage's busy fraction x the kernel time / tiles per
CTA, from the runtime's per-CTA clock64 counters.

Fit split: the stage_body rates are fitted on the TM = 128, one-CTA-per-SM stages (every
pipeline variant); the co-resident slowdown on the mgn-split TM = 64, two-CTA-per-SM stages.
Everything else (TM = 64 at one CTA per SM, the mgn TM = 64 two-CTA runs, and every pipeline
time) is held out.
"""
import csv
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
BIN = os.environ.get("KITSUNE", os.path.join(ROOT, "build", "kitsune"))
HW = "h200-ktpipe"
WL = os.path.join(ROOT, "validation", "pipeline", "workloads")

# the runtime's stage names -> the workload's ops
MGN = {"cat": "gather_src+gather_dst+edge_cat", "fc1": "edge_fc1+edge_relu1",
       "fc2": "edge_fc2+edge_relu2", "fc3": "edge_fc3", "ln_res": "edge_ln+edge_res",
       "ln": "edge_ln", "res": "edge_res",
       "fc1_gather": "gather_src+gather_dst+edge_cat+edge_fc1+edge_relu1"}
NERF = {"fc%d" % k: ("skip_cat+" if k == 6 else "") + "fc%d+relu%d" % (k, k)
        for k in range(1, 9)}
WORKLOAD = {"mgn": "mgn-edge", "mgn-split": "mgn-edge", "mgn-fused": "mgn-edge",
            "mgn-mc": "mgn-edge-mc", "nerf": "nerf-trunk"}
# combinations run2 re-measured with the current gather (COPY) stage: run1's rows are older code
RERUN = {("mgn", 128, 1), ("mgn", 64, 2), ("mgn-split", 64, 2)}
# issue 14's goals: pipeline time within 15% of measured (here: the 90th percentile of |error|
# over every run with the current code), Spearman rank correlation >= 0.8 within each allocation
# sweep (groups of >= 10 runs). --check guards the current levels: the p90 goal is met; one
# group (mgn-fused, 22 runs) is at 0.78, so the Spearman guard is 0.75 until the model meets 0.8
GOALS = {"p90_abs_err": 0.15, "spearman_min": 0.8}
GUARDS = {"p90_abs_err": 0.15, "spearman_min": 0.75}
# the stage_body rates, in the order of the fit's columns
RATES = ["load_GBps", "operand_GBps", "gather_GBps", "store_GBps", "tensor_GFLOPps",
         "simt_GFLOPps"]


def stages_arg(arch, names):
    table = NERF if arch == "nerf" else MGN
    return ",".join(table[n] for n in names)


def runs():
    out = []
    with open(os.path.join(ROOT, "validation", "pipeline", "runs.csv"), newline="") as f:
        for r in csv.DictReader(f):
            if r["status"] != "ok" or r["gemm"] != "mma" or r["depth"] != "2":
                continue
            r["tm"] = int(r["tile_rows"])
            r["cps"] = int(r["ctas_per_sm"])
            r["alloc"] = [int(x) for x in r["allocation"].split("-")]
            r["names"] = r["stages"].split("-")
            r["old_copy"] = (r["run"] == "run1-full" and (r["arch"], r["tm"], r["cps"]) in RERUN)
            r["copy_stage"] = r["arch"] != "nerf" and r["arch"] != "mgn-fused"
            out.append(r)
    return out


def kitsune_map(arch, names, tm, cps, alloc=None, hw=HW, sets=(), times_us=None):
    """The one pipeline of `kitsune map` with the runtime's stages, tile height and CTAs per SM
    imposed, and the allocation (None: the mapper's) and measured stage times (None: the
    model's stage bodies) when given."""
    cmd = [BIN, "map", "--hw", hw, "--workload", os.path.join(WL, WORKLOAD[arch] + ".json"),
           "--stages", stages_arg(arch, names), "--tile", str(tm), "--ctas-per-sm", str(cps),
           "--format", "json"]
    for kv in sets:
        cmd += ["--set", kv]
    if times_us:
        cmd += ["--stage-cta-tile-us", ",".join("%.4f" % t for t in times_us)]
    if alloc:
        cmd += ["--alloc", "-".join(str(a) for a in alloc)]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode:
        sys.exit("model.py: %s failed: %s" % (" ".join(cmd), p.stderr.strip()))
    return json.loads(p.stdout)["pipelines"][0]


def lstsq(X, y):
    """Least squares by the normal equations (small, well-scaled problems)."""
    n = len(X[0])
    A = [[sum(r[i] * r[j] for r in X) for j in range(n)] for i in range(n)]
    b = [sum(r[i] * t for r, t in zip(X, y)) for i in range(n)]
    for i in range(n):
        p = max(range(i, n), key=lambda k: abs(A[k][i]))
        A[i], A[p], b[i], b[p] = A[p], A[i], b[p], b[i]
        for k in range(n):
            if k != i:
                f = A[k][i] / A[i][i]
                A[k] = [u - f * v for u, v in zip(A[k], A[i])]
                b[k] -= f * b[i]
    return [b[i] / A[i][i] for i in range(n)]


def spearman(a, b):
    def ranks(v):
        order = sorted(range(len(v)), key=lambda i: v[i])
        r = [0.0] * len(v)
        i = 0
        while i < len(v):
            j = i
            while j + 1 < len(v) and v[order[j + 1]] == v[order[i]]:
                j += 1
            for k in range(i, j + 1):
                r[order[k]] = (i + j) / 2.0
            i = j + 1
        return r
    ra, rb = ranks(a), ranks(b)
    ma, mb = sum(ra) / len(ra), sum(rb) / len(rb)
    cov = sum((x - ma) * (y - mb) for x, y in zip(ra, rb))
    va = math.sqrt(sum((x - ma) ** 2 for x in ra))
    vb = math.sqrt(sum((y - mb) ** 2 for y in rb))
    return cov / (va * vb) if va > 0 and vb > 0 else float("nan")


def quantile(v, q):
    v = sorted(v)
    if not v:
        return float("nan")
    k = (len(v) - 1) * q
    lo = int(math.floor(k))
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (k - lo)


def stage_points(rs):
    """Per (run row, stage): measured service time per tile and the model's body work."""
    feats = {}
    pts = []
    for r in rs:
        key = (r["arch"], tuple(r["names"]), r["tm"], r["cps"])
        if key not in feats:
            p = kitsune_map(r["arch"], r["names"], r["tm"], r["cps"], r["alloc"])
            feats[key] = [s["body_work_per_tile"] for s in p["stages"]]
        T = float(r["time_s"])
        busy = [float(x) for x in r["busy"].split("-")]
        total = sum(r["alloc"])
        share = min(r["cps"], max(1.0, total / 132.0))
        for i, (n, a, b) in enumerate(zip(r["names"], r["alloc"], busy)):
            if b <= 0:  # no busy time recorded (a CTA's counters did not report): no point
                continue
            f = feats[key][i]
            pts.append({"arch": r["arch"], "stage": n, "tm": r["tm"], "cps": r["cps"],
                        "run": r["run"], "old_copy": r["old_copy"] and n == "cat",
                        "t": b * T / (float(r["tiles"]) / a), "share": share, "f": f})
    return pts


def fit(write, poll=False):
    rs = runs()
    pts = stage_points(rs)
    hw = json.load(open(os.path.join(ROOT, "hw", HW + ".json")))
    hand = hw["stage_body"]["handoff_ns"] * 1e-9

    def x(p):  # loads are a SIMT stage's or a tensor-core stage's (its GEMM operands)
        f = p["f"]
        ten = f["tensor_flops"] > 0
        return [0 if ten else f["load_bytes"], f["load_bytes"] if ten else 0, f["gather_bytes"],
                f["store_bytes"], f["tensor_flops"], f["simt_flops"]]
    train = [p for p in pts if p["tm"] == 128 and p["cps"] == 1 and not p["old_copy"]]
    inv = lstsq([x(p) for p in train], [p["t"] - hand * p["f"]["handoffs"] for p in train])
    rates = [1.0 / v for v in inv]  # bytes/s and FLOP/s
    if min(rates) <= 0:
        sys.exit("model.py: the fit gave a rate <= 0: %s" % rates)

    def pred(p, sigma):
        rate = sum(a * b for a, b in zip(x(p), inv))
        return hand * p["f"]["handoffs"] + rate * (1 + (p["share"] - 1) * sigma)
    two = [p for p in pts if p["cps"] == 2 and p["arch"] == "mgn-split" and not p["old_copy"]]
    num = sum((p["t"] - pred(p, 0)) * (pred(p, 1) - pred(p, 0)) for p in two)
    den = sum((pred(p, 1) - pred(p, 0)) ** 2 for p in two)
    sigma = num / den

    def summary(label, sel):
        e = [pred(p, sigma) / p["t"] - 1 for p in sel]
        a = [abs(v) for v in e]
        return "%-46s %5d stage-runs  median |err| %5.1f%%  p90 %5.1f%%  max %5.1f%%" % (
            label, len(sel), 100 * quantile(a, 0.5), 100 * quantile(a, 0.9), 100 * max(a))
    print("stage_body fit (per SM, one tile at a time per CTA; hand-off %.0f ns measured):" %
          (hand * 1e9))
    for n, v in zip(RATES, rates):
        print("  %-15s %10.1f" % (n, v / 1e9))
    print("  %-15s %10.3f" % ("coresident_slowdown_frac", sigma))
    groups = [("in-sample: TM 128, 1 CTA/SM (rates)", train),
              ("in-sample: mgn-split TM 64, 2 CTAs/SM (slowdown)", two),
              ("held out: TM 64, 1 CTA/SM", [p for p in pts if p["tm"] == 64 and p["cps"] == 1
                                             and not p["old_copy"]]),
              ("held out: mgn TM 64, 2 CTAs/SM", [p for p in pts if p["cps"] == 2 and
                                                  p["arch"] == "mgn" and not p["old_copy"]]),
              ("not fitted: run1's older gather stage", [p for p in pts if p["old_copy"]])]
    lines = [summary(l, s) for l, s in groups if s]
    for l in lines:
        print(l)
    per = {}
    for p in pts:
        if not p["old_copy"]:
            per.setdefault((p["arch"], p["tm"], p["cps"], p["stage"]), []).append(p)
    print("\nper stage (medians): measured us, predicted us")
    for k in sorted(per):
        ps = per[k]
        m = quantile([p["t"] for p in ps], 0.5) * 1e6
        q = quantile([pred(p, sigma) for p in ps], 0.5) * 1e6
        print("  %-10s TM %3d x%d %-10s %7.2f %7.2f %+5.0f%%" % (k[0], k[1], k[2], k[3], m, q,
                                                                100 * (q / m - 1)))
    if write:
        sb = hw["stage_body"]
        src = hw.setdefault("sources", {})
        fitted = ("M (fitted): hw/calibrate/pipeline/model.py fit, least squares of the measured "
                  "per-tile stage times (validation/pipeline/runs.csv, H200 2026-12-02, "
                  "per-CTA clock64 busy time) on the TM 128 one-CTA-per-SM stages of every "
                  "pipeline variant (in-sample); held out: TM 64 and two CTAs per SM. ")
        for n, v in zip(RATES, rates):
            sb[n] = round(v / 1e9, 2)
            src["stage_body." + n] = fitted + lines[0].split("  ", 1)[1].strip()
        sb["coresident_slowdown_frac"] = round(sigma, 3)
        src["stage_body.coresident_slowdown_frac"] = (
            "M (fitted): hw/calibrate/pipeline/model.py fit, one-parameter least squares on the "
            "mgn-split TM 64 two-CTA-per-SM stage times (in-sample), the rates fixed; held out: "
            "the mgn TM 64 two-CTA runs")
        with open(os.path.join(ROOT, "hw", HW + ".json"), "w") as f:
            json.dump(hw, f, indent=2)
            f.write("\n")
        print("\nwrote hw/%s.json" % HW)
    if write or poll:
        fit_poll(rs, write)


def pipeline_errors(rs, hw_path):
    """Predicted / measured - 1 of every current-code run's pipeline time under hw_path."""
    out, seen = [], {}
    for r in rs:
        if r["old_copy"]:
            continue
        k = (r["arch"], tuple(r["names"]), r["tm"], r["cps"], tuple(r["alloc"]))
        if k not in seen:
            seen[k] = kitsune_map(r["arch"], r["names"], r["tm"], r["cps"], r["alloc"],
                                  hw=hw_path)["time_s"]
        out.append(seen[k] / float(r["time_s"]) - 1)
    return out


def fit_poll(rs, write):
    """stage_body.poll_ns: a CTA's spin per queue transfer that its busy time (what the rates
    are fitted on) leaves out. One-parameter least squares of the relative error of the pipeline
    times of runs.csv (current code: in-sample), the rates fixed; golden-section search."""
    path = os.path.join(ROOT, "hw", HW + ".json")
    hw = json.load(open(path))
    tmpd = tempfile.mkdtemp()
    tmp = os.path.join(tmpd, HW + "-poll.json")

    def sse(pi):
        hw["stage_body"]["poll_ns"] = pi
        with open(tmp, "w") as f:
            json.dump(hw, f)
        e = pipeline_errors(rs, tmp)
        return sum(v * v for v in e), e
    lo, hi = 0.0, 1500.0
    g = (math.sqrt(5) - 1) / 2
    a, b = hi - g * (hi - lo), lo + g * (hi - lo)
    fa, fb = sse(a)[0], sse(b)[0]
    while hi - lo > 1.0:
        if fa < fb:
            hi, b, fb = b, a, fa
            a = hi - g * (hi - lo)
            fa = sse(a)[0]
        else:
            lo, a, fa = a, b, fb
            b = lo + g * (hi - lo)
            fb = sse(b)[0]
    pi = round((lo + hi) / 2)

    def line(label, e):
        ab = sorted(abs(v) for v in e)
        return "%s: %d runs, bias %+.1f%%, median |err| %.1f%%, p90 %.1f%%, max %.1f%%" % (
            label, len(e), 100 * sum(e) / len(e), 100 * quantile(ab, 0.5), 100 * quantile(ab, 0.9),
            100 * ab[-1])
    l0 = line("poll 0 ns", sse(0.0)[1])
    l1 = line("poll %d ns" % pi, sse(float(pi))[1])
    shutil.rmtree(tmpd)
    print("\nstage_body.poll_ns, fitted on the pipeline times of runs.csv (in-sample):")
    print("  " + l0)
    print("  " + l1)
    if write:
        hw = json.load(open(path))
        hw["stage_body"]["poll_ns"] = pi
        hw["sources"]["stage_body.poll_ns"] = (
            "M (fitted): hw/calibrate/pipeline/model.py fit --write, one-parameter least squares "
            "of the pipeline times of validation/pipeline/runs.csv (H200 2026-12-02, current "
            "code: in-sample), the stage rates fixed: " + l1 + " (" + l0 + "). The mechanism is "
            "measured (validation/pipeline/trace.md: every stage spins 250-2800 ns per tile "
            "outside its busy time); held out: the mapper's allocations and their neighbourhoods "
            "(ilp-summary.md, placement.md)")
        with open(path, "w") as f:
            json.dump(hw, f, indent=2)
            f.write("\n")
        print("wrote stage_body.poll_ns = %d to hw/%s.json" % (pi, HW))


def compare(check, dest):
    rs = runs()
    rows = []
    for r in rs:
        p = kitsune_map(r["arch"], r["names"], r["tm"], r["cps"], r["alloc"])
        rows.append({"run": r["run"], "pipeline": r["pipeline"], "arch": r["arch"],
                     "tile_rows": r["tm"], "ctas_per_sm": r["cps"],
                     "allocation": r["allocation"], "kind": r["kind"],
                     "measured_s": float(r["time_s"]), "predicted_s": p["time_s"],
                     "bottleneck": p["bottleneck"],
                     "old_copy": int(r["old_copy"]),
                     "held_out": int(not (r["tm"] == 128 and r["cps"] == 1)
                                     and not (r["arch"] == "mgn-split" and r["cps"] == 2)),
                     "measured_dram_read_bytes": r["dram_read_bytes"],
                     "measured_dram_write_bytes": r["dram_write_bytes"],
                     "predicted_dram_read_bytes": p["dram_read_bytes"],
                     "predicted_dram_write_bytes": p["dram_write_bytes"]})
    for row in rows:
        row["rel_err"] = row["predicted_s"] / row["measured_s"] - 1
    os.makedirs(dest, exist_ok=True)
    cols = ["run", "pipeline", "arch", "tile_rows", "ctas_per_sm", "allocation", "kind",
            "measured_s", "predicted_s", "rel_err", "bottleneck", "held_out", "old_copy",
            "measured_dram_read_bytes", "predicted_dram_read_bytes",
            "measured_dram_write_bytes", "predicted_dram_write_bytes"]
    tmp = os.path.join(dest, "model.csv.tmp")
    with open(tmp, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(cols)
        for row in rows:
            w.writerow([("%.6g" % row[c]) if isinstance(row[c], float) else row[c]
                        for c in cols])
    os.replace(tmp, os.path.join(dest, "model.csv"))
    groups = {}
    for row in rows:
        groups.setdefault((row["run"], row["arch"], row["tile_rows"], row["ctas_per_sm"]),
                          []).append(row)
    out = ["| run | stages | TM | CTAs/SM | runs | fit | median abs err | p90 abs err | "
           "max abs err | Spearman | best measured us (alloc) | predicted there us | "
           "model's best of these (measured us) |",
           "|---|---|---:|---:|---:|---|---:|---:|---:|---:|---|---:|---|"]
    fails, misses = [], []
    allerr = []
    for k in sorted(groups):
        g = groups[k]
        a = [abs(r["rel_err"]) for r in g]
        rho = spearman([r["measured_s"] for r in g], [r["predicted_s"] for r in g])
        best = min(g, key=lambda r: r["measured_s"])
        pbest = min(g, key=lambda r: r["predicted_s"])
        fit_kind = ("held out" if g[0]["held_out"] else "in-sample rates") + (
            ", older gather" if g[0]["old_copy"] else "")
        out.append("| %s | %s | %d | %d | %d | %s | %.1f%% | %.1f%% | %.1f%% | %.2f | %.0f (%s) | "
                   "%.0f | %s (%.0f, %+.1f%%) |" % (
                       k[0], k[1], k[2], k[3], len(g), fit_kind, 100 * quantile(a, 0.5),
                       100 * quantile(a, 0.9), 100 * max(a), rho, best["measured_s"] * 1e6,
                       best["allocation"], best["predicted_s"] * 1e6, pbest["allocation"],
                       pbest["measured_s"] * 1e6,
                       100 * (pbest["measured_s"] / best["measured_s"] - 1)))
        if not g[0]["old_copy"]:
            allerr += a
            if len(g) >= 10 and rho < GOALS["spearman_min"]:
                misses.append("%s %s TM %d x%d: Spearman %.2f < %.2f" % (
                    k[0], k[1], k[2], k[3], rho, GOALS["spearman_min"]))
            if len(g) >= 10 and rho < GUARDS["spearman_min"]:
                fails.append("%s %s TM %d x%d: Spearman %.2f < %.2f" % (
                    k[0], k[1], k[2], k[3], rho, GUARDS["spearman_min"]))
    p90 = quantile(allerr, 0.9)
    tail = ["", "All %d runs with the current code: median |err| %.1f%%, p90 %.1f%%, max %.1f%%." %
            (len(allerr), 100 * quantile(allerr, 0.5), 100 * p90, 100 * max(allerr))]
    if p90 > GOALS["p90_abs_err"]:
        misses.append("p90 |err| %.1f%% > %.0f%%" % (100 * p90, 100 * GOALS["p90_abs_err"]))
    if p90 > GUARDS["p90_abs_err"]:
        fails.append("p90 |err| %.1f%% > %.0f%%" % (100 * p90, 100 * GUARDS["p90_abs_err"]))
    tail.append("Goals (p90 |error| <= %.0f%%, Spearman >= %.2f per sweep of >= 10 runs): %s." % (
        100 * GOALS["p90_abs_err"], GOALS["spearman_min"],
        "met" if not misses else "missed: " + "; ".join(misses)))
    with open(os.path.join(dest, "model-summary.md.tmp"), "w") as f:
        f.write("\n".join(out + tail) + "\n")
    os.replace(os.path.join(dest, "model-summary.md.tmp"),
               os.path.join(dest, "model-summary.md"))
    print("\n".join(out + tail))
    if check and fails:
        for m in fails:
            print("model.py: guard failed: " + m, file=sys.stderr)
        return 1
    return 0


def write_cases(cases, path):
    """`pipe.py cases` input: one `pipe arch tm ctas_per_sm alloc kind` line per case."""
    with open(path, "w") as f:
        for c in cases:
            f.write("%s %s %d %d %s %s\n" % c)
    print("%d cases -> %s" % (len(cases), path))


def ilp(cases_path):
    seen = set()
    cases = []
    rs = runs()
    best = {}
    for r in rs:
        key = (r["arch"], tuple(r["names"]), r["tm"], r["cps"])
        if not r["old_copy"] and (key not in best or float(r["time_s"]) < float(best[key]["time_s"])):
            best[key] = r
    for r in rs:
        key = (r["arch"], tuple(r["names"]), r["tm"], r["cps"])
        if key in seen or r["old_copy"]:
            continue
        seen.add(key)
        # the best allocation measured so far, timed again in the same run (same card, same clocks)
        b = best[key]
        cases.append((r["pipeline"], r["arch"], r["tm"], r["cps"],
                      "-".join(str(c) for c in b["alloc"]), "best-measured"))
        p = kitsune_map(r["arch"], r["names"], r["tm"], r["cps"])
        a = [s["ctas"] for s in p["stages"]]
        alloc = "-".join(str(c) for c in a)
        print("%s %s --tm %d --cps %d --alloc %s   # predicted %.1f us" % (
            r["pipeline"], r["arch"], r["tm"], r["cps"], alloc, p["time_s"] * 1e6))
        cases.append((r["pipeline"], r["arch"], r["tm"], r["cps"], alloc, "ilp"))
        cases += [(r["pipeline"], r["arch"], r["tm"], r["cps"], "-".join(str(c) for c in b),
                   "ilp-neighbour") for b in neighbours(a)]
    if cases_path:
        write_cases(cases, cases_path)


# model.py profile: the measured run whose per-stage busy times are the profile (the mapper's
# allocations of run11, one launch each)
PROFILE_FROM = "run11-ilp-poll-h200"


def profile_times(r):
    """A measured run's stage times: per stage, one CTA's busy microseconds per tile (its busy
    fraction of the stage's span over its tiles per CTA)."""
    return [p["busy"] * p["span_us"] / (p["tiles"] / p["ctas"]) for p in r["prof"]]


def sweep_groups(raw, key):
    """The ok records of raw/sweep.jsonl grouped by key(record): ({key: [records]}, keys in
    file order)."""
    groups, order = {}, []
    for line in open(os.path.join(raw, "sweep.jsonl")):
        r = json.loads(line)
        if r.get("status") != "ok":
            continue
        k = key(r)
        if k not in groups:
            groups[k] = []
            order.append(k)
        groups[k].append(r)
    return groups, order


def neighbours(a):
    """Every allocation with one CTA moved from one stage to another."""
    out = []
    for i in range(len(a)):
        for j in range(len(a)):
            if i != j and a[i] > 1:
                b = list(a)
                b[i] -= 1
                b[j] += 1
                out.append(b)
    return out


def profile(cases_path):
    """The mapper on measured stage times: per combination of PROFILE_FROM, the stage times of
    its run of the model's allocation; the mapper's allocation from them (profiled), its one-CTA
    neighbourhood, the model's own allocation (ilp) and PROFILE_FROM's best allocation
    (best-measured), as `pipe.py cases` lines (each allocation once)."""
    groups, order = sweep_groups(os.path.join(ROOT, "validation", "pipeline", "raw", PROFILE_FROM),
                                 lambda r: (r["pipeline"], r["arch"], r["tile_rows"], r["minb"]))
    cases = []
    for key in order:
        pipe, arch, tm, cps = key
        rs = groups[key]
        names = rs[0]["stages"].split("-")
        src = next(r for r in rs if r["kind"] == "ilp")
        times = profile_times(src)
        pa = [s["ctas"] for s in kitsune_map(arch, names, tm, cps, times_us=times)["stages"]]
        ma = [s["ctas"] for s in kitsune_map(arch, names, tm, cps)["stages"]]
        best = min(rs, key=lambda r: r["time_s"])
        print("%s %s TM %d x%d: profile (us) %s from %s; profiled %s, model %s, %s best %s" % (
            pipe, arch, tm, cps, " ".join("%.2f" % t for t in times), src["alloc"],
            "-".join(map(str, pa)), "-".join(map(str, ma)), PROFILE_FROM, best["alloc"]))
        seen = set()
        for a, kind in ([(pa, "profiled"), ([int(x) for x in best["alloc"].split("-")],
                                            "best-measured"), (ma, "ilp")] +
                        [(b, "profiled-neighbour") for b in neighbours(pa)]):
            k = "-".join(map(str, a))
            if k not in seen:
                seen.add(k)
                cases.append((pipe, arch, tm, cps, k, kind))
    # the three reference allocations once more at the end of their group: the run's noise
    cases += [c[:5] + (c[5] + "-repeat",) for c in cases
              if c[5] in ("profiled", "best-measured", "ilp")]
    if cases_path:
        write_cases(cases, cases_path)


# run.sh ilp profile-cases.txt (model.py profile --cases): the allocations the mapper derives from
# measured stage times, their neighbourhoods and the reference allocations, on the H200
PROFILE_RAW = "run13-profile-h200"
# issue 14's goal for the mapper: its allocation within 5% of the best measured one. With measured
# stage times 8 of 9 combinations met it when the run landed; the ninth (mgn-mc, 1.052x) is within
# the run's noise (the same allocation timed twice differed by up to 3.8%). --check guards that
# (at least 8 within 5%, none beyond 6%) and fails when the mapper's allocation from the profile
# is no longer the one measured (re-run model.py profile --cases and run.sh ilp then)
PROFILE_GUARD = {"within_5pct_min": 8, "max_ratio": 1.06}


def profilecheck(check, dest):
    """The mapper on measured stage times against the GPU (PROFILE_RAW)."""
    src = os.path.join(ROOT, "validation", "pipeline", "raw", PROFILE_FROM, "sweep.jsonl")
    prof = {}
    for line in open(src):
        r = json.loads(line)
        if r.get("status") == "ok" and r["kind"] == "ilp":
            prof[(r["arch"], r["tile_rows"], r["minb"])] = (r["alloc"], profile_times(r))
    groups, order = sweep_groups(os.path.join(ROOT, "validation", "pipeline", "raw", PROFILE_RAW),
                                 lambda r: (r["arch"], r["tile_rows"], r["minb"]))
    lines = ["# The mapper on measured stage times", "",
             "Generated by `python3 hw/calibrate/pipeline/model.py profilecheck` from `raw/%s` "
             "(`run.sh ilp profile-cases.txt`, cases from `model.py profile`). The profile: per "
             "stage, one CTA's busy time per tile in `raw/%s`'s run of the model's own allocation "
             "(one launch's clock64 counters). `kitsune map --hw %s --stage-cta-tile-us` maps "
             "from those times (the paper's ILP takes each op's measured throughput the same "
             "way); its allocation (profiled), every allocation one CTA away from it, the "
             "model's own allocation (model) and the best allocation of `raw/%s` were timed in "
             "one run, the three references twice (first and last: the run's noise). Times: the "
             "mean of an allocation's launches in this run." % (
                 PROFILE_RAW, PROFILE_FROM, HW, PROFILE_FROM), "",
             "| stages | TM | CTAs/SM | profile (us per tile and CTA) | profiled allocation | us "
             "| best measured | us | profiled / best | rank | model's allocation | model / best "
             "| Spearman (profile) | Spearman (model) | predicted us (profile) |",
             "|---|---:|---:|---|---|---:|---|---:|---:|---:|---|---:|---:|---:|---:|"]
    ratios, mratios, noise, fails, rows, spreads, drifts = [], [], [], [], [], [], []
    rho_p, rho_m = [], []
    for key in order:
        arch, tm, cps = key
        rs = groups[key]
        names = rs[0]["stages"].split("-")
        _, times = prof[key]
        per = {}
        for r in rs:
            per.setdefault(r["alloc"], []).append(r["time_s"])
        for k in ("profiled", "best-measured", "ilp"):
            t = [r["time_s"] for r in rs if r["kind"] in (k, k + "-repeat")]
            if len(t) == 2:
                noise.append(abs(t[0] - t[1]) / (0.5 * (t[0] + t[1])))
        mean = {a: sum(v) / len(v) for a, v in per.items()}
        # a stage's busy time per tile across this run's allocations, and the profile against it
        st = [profile_times(r) for r in rs]
        for i in range(len(times)):
            col = sorted(t[i] for t in st)
            med = quantile(col, 0.5)
            spreads.append((col[-1] - col[0]) / med)
            drifts.append(abs(times[i] / med - 1))
        pa = next(r["alloc"] for r in rs if r["kind"] == "profiled")
        ma = next(r["alloc"] for r in rs if r["kind"] == "ilp")
        now = "-".join(str(s_["ctas"]) for s_ in
                       kitsune_map(arch, names, tm, cps, times_us=times)["stages"])
        if now != pa:
            fails.append("%s TM%d x%d: the mapper now gives %s from the profile, the run measured "
                         "%s (re-run model.py profile --cases and run.sh ilp)" % (arch, tm, cps,
                                                                                  now, pa))
        best = min(mean, key=lambda a: (mean[a], a))
        nb = [r["alloc"] for r in rs if r["kind"] in ("profiled", "profiled-neighbour")]
        rank = sorted(nb, key=lambda a: mean[a]).index(pa) + 1
        pred_p = {a: kitsune_map(arch, names, tm, cps, [int(x) for x in a.split("-")],
                                 times_us=times)["time_s"] for a in nb}
        pred_m = {a: kitsune_map(arch, names, tm, cps, [int(x) for x in a.split("-")])["time_s"]
                  for a in nb}
        rp = spearman([mean[a] for a in nb], [pred_p[a] for a in nb])
        rm = spearman([mean[a] for a in nb], [pred_m[a] for a in nb])
        rho_p.append(rp)
        rho_m.append(rm)
        ratio, mratio = mean[pa] / mean[best], mean[ma] / mean[best]
        ratios.append(ratio)
        mratios.append(mratio)
        if ratio > PROFILE_GUARD["max_ratio"]:
            fails.append("%s TM%d x%d: the profiled allocation is %.3fx the best measured" % (
                arch, tm, cps, ratio))
        lines.append("| %s | %d | %d | %s | %s | %.1f | %s | %.1f | %.3f | %d/%d | %s | %.3f | "
                     "%.2f | %.2f | %.1f (%+.1f%%) |" % (
                         arch, tm, cps, " ".join("%.2f" % t for t in times), pa, mean[pa] * 1e6,
                         best, mean[best] * 1e6, ratio, rank, len(nb), ma, mratio, rp, rm,
                         pred_p[pa] * 1e6, 100 * (pred_p[pa] / mean[pa] - 1)))
        for a in sorted(per):
            kinds = sorted(set(r["kind"] for r in rs if r["alloc"] == a))
            rows.append([arch, tm, cps, a, "+".join(kinds), len(per[a]), "%.6g" % mean[a],
                         "%.6g" % pred_p[a] if a in pred_p else "",
                         "%.6g" % pred_m[a] if a in pred_m else ""])
    noise.sort()
    if sum(1 for x in ratios if x <= 1.05) < PROFILE_GUARD["within_5pct_min"]:
        fails.append("the profiled allocation is within 5%% of the best in %d of %d combinations"
                     % (sum(1 for x in ratios if x <= 1.05), len(ratios)))
    lines += ["", "With measured stage times the mapper's allocation is within 5%% of the best "
              "measured allocation in %d of %d combinations (%.3f-%.3fx); the model's own "
              "allocation, from modelled stage times, in %d of %d (%.3f-%.3fx). Spearman over "
              "each neighbourhood: median %.2f with measured stage times, %.2f with the model's. "
              "The same allocation timed twice in the run differs by %.1f%% (median) and %.1f%% "
              "(max)." % (sum(1 for x in ratios if x <= 1.05), len(ratios), min(ratios),
                          max(ratios), sum(1 for x in mratios if x <= 1.05), len(mratios),
                          min(mratios), max(mratios), quantile(sorted(rho_p), 0.5),
                          quantile(sorted(rho_m), 0.5), 100 * quantile(noise, 0.5),
                          100 * noise[-1]),
              "", "A stage's busy time per tile hardly depends on the allocation: over this run's "
              "allocations it spans %.1f%% of its median (median over stages, at most %.1f%%), and "
              "the profile, taken two days earlier at another allocation, is within %.1f%% of "
              "this run's medians (at most %.1f%%)." % (
                  100 * quantile(sorted(spreads), 0.5), 100 * max(spreads),
                  100 * quantile(sorted(drifts), 0.5), 100 * max(drifts))]
    lines += ["", "The same profile across the allocation sweeps of runs.csv (every allocation of "
              "one (stages, tile, CTAs per SM) combination with at least 10 runs, current code), "
              "predicted with the profile's stage times and with the model's:", "",
              "| sweep | stages | TM | CTAs/SM | runs | Spearman (profile) | Spearman (model) | "
              "median abs err (profile) | median abs err (model) |",
              "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    sweeps = {}
    for r in runs():
        if not r["old_copy"]:
            sweeps.setdefault((r["run"], r["arch"], r["tm"], r["cps"], tuple(r["names"])),
                              []).append(r)
    for (run, arch, tm, cps, names), v in sorted(sweeps.items()):
        if len(v) < 10 or (arch, tm, cps) not in prof:
            continue
        times = prof[(arch, tm, cps)][1]
        meas = [float(r["time_s"]) for r in v]
        pp = [kitsune_map(arch, list(names), tm, cps, r["alloc"], times_us=times)["time_s"]
              for r in v]
        pm = [kitsune_map(arch, list(names), tm, cps, r["alloc"])["time_s"] for r in v]
        lines.append("| %s | %s | %d | %d | %d | %.2f | %.2f | %.1f%% | %.1f%% |" % (
            run, arch, tm, cps, len(v), spearman(pp, meas), spearman(pm, meas),
            100 * quantile(sorted(abs(a / b - 1) for a, b in zip(pp, meas)), 0.5),
            100 * quantile(sorted(abs(a / b - 1) for a, b in zip(pm, meas)), 0.5)))
    lines.append("")
    lines.append("Spearman over a one-CTA neighbourhood ranks times that differ by 1-3%, about the "
                 "run's noise; across the allocation sweeps it is the table above (run1's MGN "
                 "sweeps at TM 64 x1, mgn-split TM 128 and mgn-mc ran an older copy stage than "
                 "the profiled launch, hence their larger errors with the profile). "
                 "Predicted with the profile: the pipeline model's time given the measured stage "
                 "times (fill plus the slowest stage, the poll added); its shortfall is the "
                 "coupling of near-balanced stages through their rings (trace.md).")
    with open(os.path.join(dest, "profile.csv"), "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["arch", "tile_rows", "ctas_per_sm", "allocation", "kind", "launches",
                    "time_s", "predicted_measured_stage_times_s", "predicted_model_s"])
        w.writerows(rows)
    report(dest, "profile-summary.md", lines)
    here = os.path.join(ROOT, "validation", "pipeline")
    if check:
        for name in ("profile-summary.md", "profile.csv"):
            if open(os.path.join(dest, name)).read() != open(os.path.join(here, name)).read():
                fails.append("validation/pipeline/%s is out of date (run model.py profilecheck)"
                             % name)
    print(next(x for x in lines if x.startswith("With measured stage times")))
    if check and fails:
        for m in fails:
            print("model.py: " + m, file=sys.stderr)
        return 1
    return 0


# run.sh ilp: run11 the mapper's allocations with stage_body.poll_ns (H200, held out: the guards
# below apply to it); run5 those before poll_ns on the H200 of the fit and run3 (another day) on
# an H100, their predictions with the current model
ILP_RAWS = ["run11-ilp-poll-h200", "run5-ilp-h200", "run3-ilp-h100"]
# issue 14's goal: the ILP's allocation within 5% of the best measured allocation. --check
# guards what the run shows: the mapper's allocation is never more than 5% slower than the best
# allocation the allocation sweep had found (timed again in the same run), and within 15% of the
# best allocation of its own one-CTA neighbourhood
ILP_GUARDS = {"vs_previous_best": 1.05, "vs_neighbourhood_best": 1.15}


def ncu_metrics(lines):
    """{metric: value} of the first kernel of an ncu --csv --page raw listing (its lines), or
    None when it has none: the header row starts with "ID", a units row follows, then values
    (thousands separated by commas)."""
    rows = list(csv.reader(lines))
    h = next((i for i, r in enumerate(rows) if r and r[0] == "ID"), None)
    if h is None or len(rows) < h + 3:
        return None
    out = {}
    for name, v in zip(rows[h], rows[h + 2]):
        if "__" in name:
            try:
                out[name] = float(v.replace(",", ""))
            except ValueError:
                pass
    return out


def ncu_kernel(path):
    """(dram read bytes, dram write bytes, time s) of the one kernel of an ncu --csv raw page."""
    m = ncu_metrics(open(path, newline="").read().splitlines())
    return m["dram__bytes_read.sum"], m["dram__bytes_write.sum"], m["gpu__time_duration.sum"] * 1e-9


def ilpcheck(check, dest):
    rows, out, fails = [], [], []
    for label in ILP_RAWS:
        raw = os.path.join(ROOT, "validation", "pipeline", "raw", label)
        r, o, f = ilp_run(label, raw)
        rows += r
        out += o
        fails += f if label == ILP_RAWS[0] else []
    with open(os.path.join(dest, "ilp.csv"), "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["run", "pipeline", "arch", "tile_rows", "ctas_per_sm", "kind", "allocation",
                    "time_s", "predicted_time_s", "rel_err"])
        w.writerows(rows)
    head = ["# The mapper's allocations on a real GPU", "",
            "Generated by `python3 hw/calibrate/pipeline/model.py ilpcheck` from `raw/%s` "
            "(`run.sh ilp`). In every row, the mapper's allocation (ILP), the best allocation "
            "of the earlier H200 allocation sweep (runs.csv) and the ILP allocation's one-CTA "
            "neighbourhood (every allocation with one CTA moved from one stage to another) were "
            "timed in the same run, on the card named. Predictions: `kitsune map --hw %s` with "
            "the allocation imposed (stage-body rates fitted on the H200 sweep)." % (
                "` and `raw/".join(ILP_RAWS), HW), "",
            "Columns: the ILP allocation and its measured time; the sweep's best allocation and "
            "its time in this run; the best of the ILP allocation's neighbourhood; the ILP "
            "allocation's rank in its neighbourhood; Spearman of predicted against measured "
            "time over the neighbourhood; the model's time for the ILP allocation.", ""]
    text = head + out
    with open(os.path.join(dest, "ilp-summary.md"), "w") as f:
        f.write("\n".join(text) + "\n")
    print("\n".join(text))
    print(next(l for l in out if l.startswith(ILP_RAWS[0] + ":")))
    if check and fails:
        for m in fails:
            print("model.py: guard failed: " + m, file=sys.stderr)
        return 1
    return 0


def ilp_run(label, raw):
    stats = []
    gpu = "?"
    for line in open(os.path.join(raw, "log.txt")):
        if line.startswith("NVIDIA "):
            gpu = line.split(",")[0]
            break
    groups, order = sweep_groups(raw, lambda r: (r["pipeline"], r["arch"], r["tile_rows"],
                                                 r["minb"]))
    rows = []
    summary = []
    fails = []
    for key in order:
        pipe, arch, tm, cps = key
        rs = groups[key]
        names = rs[0]["stages"].split("-")
        for r in rs:
            a = [int(x) for x in r["alloc"].split("-")]
            r["pred_s"] = kitsune_map(arch, names, tm, cps, a)["time_s"]
            rows.append([label, pipe, arch, tm, cps, r["kind"], r["alloc"], "%.6g" % r["time_s"],
                         "%.6g" % r["pred_s"], "%.4f" % (r["pred_s"] / r["time_s"] - 1)])
        il = next(r for r in rs if r["kind"] == "ilp")
        prev = next(r for r in rs if r["kind"] == "best-measured")
        nb = [r for r in rs if r["kind"] != "best-measured"]
        nbest = min(nb, key=lambda r: r["time_s"])
        rank = sorted(nb, key=lambda r: r["time_s"]).index(il) + 1
        rho = spearman([r["time_s"] for r in nb], [r["pred_s"] for r in nb])
        summary.append("| %s | %d | %d | %s | %.1f | %s | %.1f | %.3f | %s | %.1f | %.3f | %d/%d "
                       "| %.2f | %.1f | %+.1f%% |" % (
                           arch, tm, cps, il["alloc"], il["time_s"] * 1e6, prev["alloc"],
                           prev["time_s"] * 1e6, il["time_s"] / prev["time_s"], nbest["alloc"],
                           nbest["time_s"] * 1e6, il["time_s"] / nbest["time_s"], rank, len(nb),
                           rho, il["pred_s"] * 1e6, 100 * (il["pred_s"] / il["time_s"] - 1)))
        if il["time_s"] > ILP_GUARDS["vs_previous_best"] * prev["time_s"]:
            fails.append("%s TM%d x%d: ILP allocation %.3fx the previous best" % (
                arch, tm, cps, il["time_s"] / prev["time_s"]))
        if il["time_s"] > ILP_GUARDS["vs_neighbourhood_best"] * nbest["time_s"]:
            fails.append("%s TM%d x%d: ILP allocation %.3fx its neighbourhood's best" % (
                arch, tm, cps, il["time_s"] / nbest["time_s"]))
        stats.append((il["time_s"] / prev["time_s"], il["time_s"] / nbest["time_s"]))
    dram = []
    for k, name in ((1, "mgn TM128 x1"), (2, "mgn-mc TM128 x1")):
        path = os.path.join(raw, "ncu_ilp%d.csv" % k)
        if os.path.exists(path):
            rd, wr, t = ncu_kernel(path)
            dram.append("- %s, the mapper's allocation: DRAM read %.1f MB, write %.1f MB "
                        "(Nsight Compute, one profiled launch of %.1f us)" % (
                            name, rd / 1e6, wr / 1e6, t * 1e6))
    out = ["## %s (%s)" % (label, gpu), "",
           "| stages | TM | CTAs/SM | ILP allocation | ILP us | sweep's best | its us | ILP / "
           "sweep best | best neighbour | its us | ILP / neighbour best | ILP rank | Spearman "
           "| predicted us | pred err |",
           "|---|---:|---:|---|---:|---|---:|---:|---|---:|---:|---:|---:|---:|---:|"]
    prev = [a for a, _ in stats]
    nb = [b for _, b in stats]
    out += summary + [""] + dram + [""]
    out.append("%s: the ILP allocation is %.2f-%.2fx the sweep's best (faster in %d of %d), "
               "within 5%% of the best measured allocation of its neighbourhood in %d of %d "
               "(worst %.1f%% slower)." % (label, min(prev), max(prev),
                                           sum(1 for a in prev if a < 1), len(prev),
                                           sum(1 for b in nb if b <= 1.05), len(nb),
                                           100 * (max(nb) - 1)))
    out.append("")
    return rows, out, fails


# the model's DRAM read bytes against Nsight Compute's at every node-table size: the five-stage
# MGN pipeline within 10%, the gather-fused one within 20% (it reads 7-56 MB more than one pass
# over its rows); the multicast variant, whose deep ring L2 partly evicts (l2.ring_reuse), within
# 15% (-11.6% and +2.2% when the ring model landed, from -43% and -49%)
DRAM_GUARD = {"mgn": 0.10, "mgn-fused": 0.20, "mgn-mc": 0.15}
STAGE_NAMES = {"mgn": "cat-fc1-fc2-fc3-ln_res", "mgn-mc": "cat-fc1-fc2-fc3-ln_res",
               "mgn-fused": "fc1_gather-fc2-fc3-ln_res",
               "nerf": "fc1-fc2-fc3-fc4-fc5-fc6-fc7-fc8"}


def dram_cases():
    """The cases of run.sh dram (its CASES list): label pipe arch tm alloc N."""
    text = open(os.path.join(HERE, "run.sh")).read()
    body = text.split("<<'CASES'\n", 1)[1].split("\nCASES", 1)[0]
    return [l.split() for l in body.splitlines() if l.strip()]


def dram(check, dest):
    raw = os.path.join(ROOT, "validation", "pipeline", "raw", "run4-dram-h200")
    rows, table, fails = [], [], []
    cases = [(c, raw, HW) for c in dram_cases()]
    # the H100 of run3: the same MGN allocation, its 50 MiB L2 (Nsight Compute's
    # device__attribute_l2_cache_size) and 3.35 TB/s
    h100 = os.path.join("/tmp", "kt-h100-ktpipe-%d.json" % os.getpid())
    with open(h100, "w") as f:
        json.dump({"base": os.path.join(ROOT, "hw", HW + ".json"), "name": "h100-ktpipe",
                   "l2": {"capacity_MiB": 50, "persisting_max_MiB": 37.5},
                   "dram": {"bandwidth_GBps": 3350}}, f)
    cases.append((["ilp1", "mgn", "mgn", "128", "46-32-18-18-17", "65536"],
                  os.path.join(ROOT, "validation", "pipeline", "raw", "run3-ilp-h100"), h100))
    try:
        for c, where, hw in cases:
            label, pipe, arch, tm, alloc, n = c
            path = os.path.join(where, ("dram_%s.csv" if where == raw else "ncu_%s.csv") % label)
            if not os.path.exists(path):
                continue
            rd, wr, t = ncu_kernel(path)
            sets = ["N=%s" % n] if pipe == "mgn" and n != "0" else []
            p = kitsune_map(arch, STAGE_NAMES[arch].split("-"), int(tm), 1,
                            [int(x) for x in alloc.split("-")], hw=hw, sets=sets)
            err = p["dram_read_bytes"] / rd - 1
            gpu = "H100" if hw == h100 else "H200"
            table_mb = int(n) * 256 / 1e6 if pipe == "mgn" else 0
            rows.append([gpu, arch, tm, alloc, n if pipe == "mgn" else "", "%.0f" % rd,
                         "%.0f" % wr, p["dram_read_bytes"], p["dram_write_bytes"],
                         p.get("gather_dram_bytes", 0), "%.4f" % err])
            table.append("| %s | %s | %s | %s | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %+.1f%% |" % (
                gpu, arch, alloc, ("%.1f" % table_mb) if table_mb else "-", rd / 1e6, wr / 1e6,
                p["dram_read_bytes"] / 1e6, p["dram_write_bytes"] / 1e6,
                p.get("gather_dram_bytes", 0) / 1e6, t * 1e6, 100 * err))
            if arch in DRAM_GUARD and abs(err) > DRAM_GUARD[arch]:
                fails.append("%s %s %s N=%s: DRAM read off by %+.1f%%" % (gpu, arch, alloc, n,
                                                                          100 * err))
    finally:
        os.remove(h100)
    with open(os.path.join(dest, "dram.csv"), "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["gpu", "arch", "tile_rows", "allocation", "nodes", "dram_read_bytes",
                    "dram_write_bytes", "predicted_dram_read_bytes", "predicted_dram_write_bytes",
                    "predicted_gather_dram_bytes", "read_rel_err"])
        w.writerows(rows)
    out = ["# DRAM bytes of the real pipelines against the model", "",
           "Generated by `python3 hw/calibrate/pipeline/model.py dram` from "
           "`raw/run4-dram-h200` (`run.sh dram`: Nsight Compute, one launch each, the mapper's "
           "allocations at TM 128; MGN with node tables of N x 128 bf16) and `raw/run3-ilp-h100` "
           "(the same MGN allocation on an H100, 50 MiB L2). Predicted: `kitsune map --hw %s` "
           "with the stages and allocation imposed (`--set N=...`). Bytes in MB." % HW, "",
           "| GPU | stages | allocation | node table MB | read | write | predicted read | "
           "predicted write | of which gathered rows | kernel us | read error |",
           "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"] + table
    report(dest, "dram.md", out)
    if check and fails:
        for m in fails:
            print("model.py: guard failed: " + m, file=sys.stderr)
        return 1
    return 0


def report(dest, name, lines):
    """Write a Markdown report DIR/name and print it."""
    with open(os.path.join(dest, name), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


def ncu_blocks(path):
    """{label: (case fields, {metric: value})} of run.sh ring's CSV: each ncu raw page behind a
    '## case LABEL pipe arch tm depth alloc N' line."""
    out, label, fields, lines = {}, None, None, []
    for line in open(path, newline="").read().splitlines() + ["## case"]:
        if line.startswith("## case"):
            m = ncu_metrics(lines) if label else None
            if m:
                out[label] = (fields, m)
            f = line.split()[2:]
            label, fields, lines = (f[0] if f else None), f[1:], []
        else:
            lines.append(line)
    return out


RING_RUNS = ["run6-ring-h200", "run7-ring2-h200"]
MGN_EDGES = 393216  # pipe.py's default --E, which run.sh ring keeps


def ring(check, dest):
    cases = {}
    for run in RING_RUNS:
        for k, (f, m) in ncu_blocks(os.path.join(ROOT, "validation", "pipeline", "raw", run,
                                                 "ring.csv")).items():
            cases[k] = (f, m, run)
    L = 128  # MGN latent width; e_in = [e | v_src | v_dst] is 3L bf16 wide
    rows, table = [], []
    for label, (f, m, run) in cases.items():
        pipe, arch, tm, depth, alloc, n = f
        tm, depth = int(tm), int(depth)
        a = [int(x) for x in alloc.split("-")]
        rd, wr = m["dram__bytes_read.sum"], m["dram__bytes_write.sum"]
        t = m["gpu__time_duration.sum"] * 1e-9
        ring_mib = depth * sum(a) * tm * 3 * L * 2 / 2 ** 20 if arch == "mgn-mc" else 0.0
        ctrl = next((v for k, v in cases.items() if v[0][1] == "mgn" and arch == "mgn-mc" and
                     v[0][2:] == f[2:] and v[2] == run), None)
        xr = xw = None
        if ctrl:
            xr = rd - ctrl[1]["dram__bytes_read.sum"]
            xw = wr - ctrl[1]["dram__bytes_write.sum"]
        pr = pw = None
        if depth == 2:
            p = kitsune_map(arch, STAGE_NAMES[arch].split("-"), tm, 1, a, sets=["N=%s" % n])
            pr, pw = p["dram_read_bytes"], p["dram_write_bytes"]
        l2r = m.get("lts__t_sectors_op_read.sum", 0) * 32
        l2w = m.get("lts__t_sectors_op_write.sum", 0) * 32
        rows.append([run, label, arch, tm, depth, alloc, n, "%.2f" % ring_mib, "%.0f" % rd, "%.0f" % wr,
                     "" if xr is None else "%.0f" % xr, "" if xw is None else "%.0f" % xw,
                     "%.0f" % l2r, "%.0f" % l2w, "%.3g" % t, "" if pr is None else pr,
                     "" if pw is None else pw])
        mb = lambda v: "-" if v is None else "%.1f" % (v / 1e6)
        table.append("| %s | %s | %d | %d | %s | %.1f | %.1f | %s | %s | %s | %s | %s | %s | %.1f |" % (
            run.split("-")[0], arch, tm, depth, alloc, int(n) * 256 / 1e6, ring_mib, mb(rd), mb(wr), mb(xr), mb(xw),
            mb(pr), mb(pw), t * 1e6))
    with open(os.path.join(dest, "ring.csv"), "w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(["run", "case", "arch", "tile_rows", "depth", "allocation", "nodes", "ring_MiB",
                    "dram_read_bytes", "dram_write_bytes", "extra_read_bytes_vs_mgn",
                    "extra_write_bytes_vs_mgn", "l2_read_bytes", "l2_write_bytes", "time_s",
                    "predicted_dram_read_bytes", "predicted_dram_write_bytes"])
        w.writerows(rows)
    e_in = MGN_EDGES * 3 * L * 2
    out = ["# The multicast ring of mgn-mc on the H200", "",
           "Generated by `python3 hw/calibrate/pipeline/model.py ring` from `raw/run6-ring-h200` "
           "and `raw/run7-ring2-h200` (`run.sh ring` with `ring-cases.txt` and "
           "`ring-cases2.txt`: Nsight Compute, one launch each; a control is taken from the same "
           "run). `mgn-mc` sends `e_in` (%.0f MB) "
           "through one ring to fc1 and to ln_res; the runtime gives that ring depth x (all CTAs "
           "from cat to ln_res) slots of one tile. `mgn` reads `e` from DRAM instead; at the "
           "same tile, depth, allocation and node table it is the control, and `extra` is "
           "mgn-mc's bytes beyond it. Predicted: `kitsune map --hw %s` with the run imposed "
           "(queue depth 2 only: the model has one depth). Bytes in MB." % (e_in / 1e6, HW), "",
           "| run | stages | TM | depth | allocation | node table MB | ring MiB | read | write | "
           "extra read | extra write | predicted read | predicted write | kernel us |",
           "|---|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"] + table
    report(dest, "ring.md", out)
    if check:  # the committed report is the current one (a model change must regenerate it)
        here = os.path.join(ROOT, "validation", "pipeline")
        for name in ("ring.csv", "ring.md"):
            if open(os.path.join(dest, name)).read() != open(os.path.join(here, name)).read():
                print("model.py: validation/pipeline/%s is out of date (run model.py ring)" % name,
                      file=sys.stderr)
                return 1
    return 0


def ok_records(raw_label, name):
    """The records of validation/pipeline/raw/RAW_LABEL/NAME (JSON lines) whose status is ok."""
    path = os.path.join(ROOT, "validation", "pipeline", "raw", raw_label, name)
    return [r for r in map(json.loads, open(path)) if r.get("status") == "ok"]


def grouped(records, key, item, add):
    """Records grouped by key(r) in first-seen order: ({key: {item(r): value}}, [keys]), each
    value built by add(old value or None, r)."""
    groups, order = {}, []
    for r in records:
        k = key(r)
        if k not in groups:
            groups[k] = {}
            order.append(k)
        groups[k][item(r)] = add(groups[k].get(item(r)), r)
    return groups, order


PLACEMENT_RAW = "run8-placement-h200"
# what the committed run shows, guarded: NeRF's times do not depend on where its CTAs run (every
# allocation within 2% over all orders); the mapper's allocation is within 5% of its fastest
# neighbour, compared on placement-robust times (the median over the shuffled orders), in at
# least 5 of the 9 combinations (the count when the run landed)
PLACEMENT_GUARDS = {"nerf_spread_max": 0.02, "ilp_within_5pct_min": 5, "pinned_repeat_max": 0.01}
PLACEMENT_RAW2 = "run9-smplace-h200"
PLACEMENT_RAW3 = "run12-sweep-pinned-h200"


def placement(check, dest):
    combo = lambda r: (r["pipeline"], r["arch"], r["tile_rows"], r["minb"])
    case = lambda r: (r["kind"], r["alloc"])
    groups, order = grouped(ok_records(PLACEMENT_RAW, "placement.jsonl"), combo, case,
                            lambda old, r: (old or []) + [r])
    lines = ["# Where the CTAs run: block placement against allocation", "",
             "Generated by `python3 hw/calibrate/pipeline/model.py placement` from `raw/%s` "
             "(`run.sh placement`, one process per row group, every case correct against its "
             "PyTorch reference). Per combination, the mapper's allocation and its fastest and "
             "slowest one-CTA neighbours of run5-ilp-h200 were timed under 10 block orders: "
             "order 0, the runtime's default (each stage's CTAs in consecutive blocks), timed "
             "first and again last; order 1, the stages interleaved rank by rank; orders 2-9, "
             "seeded shuffles. Which SM a block lands on is the hardware block scheduler's "
             "choice; the runs record it (`%%smid`). Times are medians of 21 launches, each "
             "after an L2 flush." % PLACEMENT_RAW, "",
             "| stages | TM | CTAs/SM | case | allocation | predicted us | order 0 us (first, "
             "last) | interleaved us | shuffled us: median [min-max] | spread over orders |",
             "|---|---:|---:|---|---|---:|---:|---:|---:|---:|"]
    summary, fails, within, nerf_spread = [], [], 0, 0.0
    for key in order:
        pipe, arch, tm, cps = key
        med = {}
        for (kind, alloc), rs in groups[key].items():
            a = [int(x) for x in alloc.split("-")]
            pred = kitsune_map(arch, rs[0]["stages"].split("-"), tm, cps, a)["time_s"]
            t0 = [r["time_s"] for r in rs if r["order"] == 0]
            t1 = [r["time_s"] for r in rs if r["order"] == 1]
            sh = sorted(r["time_s"] for r in rs if r["order"] >= 2)
            allt = [r["time_s"] for r in rs]
            spread = max(allt) / min(allt) - 1
            if pipe == "nerf":
                nerf_spread = max(nerf_spread, spread)
            med[kind] = quantile(sh, 0.5)
            lines.append("| %s | %d | %d | %s | %s | %.0f | %s | %.0f | %.0f [%.0f-%.0f] | %.1f%% |" % (
                arch, tm, cps, kind, alloc, pred * 1e6, ", ".join("%.0f" % (t * 1e6) for t in t0),
                t1[0] * 1e6, med[kind] * 1e6, sh[0] * 1e6, sh[-1] * 1e6, 100 * spread))
        ratio = med["ilp"] / min(med["fastest"], med["ilp"])
        within += ratio <= 1.05
        summary.append("%s TM%d x%d %.3f" % (arch, tm, cps, ratio))
    lines += ["", "NeRF's largest spread over block orders: %.1f%%." % (100 * nerf_spread), "",
              "The mapper's allocation against its fastest neighbour, on the shuffled orders' "
              "medians: " + ", ".join(summary) + " (within 5%% in %d of %d)." % (within, len(order))]
    # run9: placements pinned by SM id (the CTA takes its role from its SM), each timed twice
    lines += ["", "## Placement pinned to SMs (`raw/%s`)" % PLACEMENT_RAW2, "",
              "`run.sh placement walk,sm,split,0,walk,sm,split,0`: each CTA takes its role from the "
              "SM it runs on (`ktp_set_sm_order`, after an arrival barrier), so the placement no "
              "longer depends on the block scheduler. `walk`: TPC by TPC across the GPCs (every "
              "stage in every GPC, a TPC's two SMs run one stage); `sm`: SM-id order (a stage "
              "fills whole GPCs); `split`: a TPC's two SMs run different stages. Each placement "
              "was timed twice, 8 runs apart; order 0 is the block-scheduler default. "
              "Microseconds.", "",
              "| stages | TM | CTAs/SM | case | allocation | walk | sm | split | order 0 |",
              "|---|---:|---:|---|---|---:|---:|---:|---:|"]
    place = lambda r: r.get("place") or str(r["order"])

    def by_place(old, r):
        old = old or {}
        old.setdefault(place(r), []).append(r["time_s"])
        return old
    g2, order2 = grouped(ok_records(PLACEMENT_RAW2, "placement.jsonl"), combo, case, by_place)
    pinned_rep, pinned_ratio, within2 = 0.0, [], 0
    for key in order2:
        pipe, arch, tm, cps = key
        t = {}
        for (kind, alloc), by in g2[key].items():
            lines.append("| %s | %d | %d | %s | %s | %s |" % (arch, tm, cps, kind, alloc, " | ".join(
                "/".join("%.0f" % (v * 1e6) for v in by.get(pl, [])) for pl in ("walk", "sm", "split", "0"))))
            t[kind] = by
            for pl in ("walk", "sm", "split"):
                pinned_rep = max(pinned_rep, max(by[pl]) / min(by[pl]) - 1)
        rs = [min(t["ilp"][pl]) / min(min(t["fastest"][pl]), min(t["ilp"][pl]))
              for pl in ("walk", "sm", "split")]
        pinned_ratio.append("%s TM%d x%d %.3f-%.3f" % (arch, tm, cps, min(rs), max(rs)))
        within2 += max(rs) <= 1.05
    lines += ["", "A pinned placement repeats within %.1f%% (the two runs of each); under each of "
              "the three, the mapper's allocation against its fastest neighbour: %s (within 5%% "
              "under all three in %d of %d)." % (100 * pinned_rep, ", ".join(pinned_ratio),
                                                 within2, len(order2))]
    # run12: the one-CTA-per-SM MGN sweeps of runs.csv again, pinned (walk) and order 0
    lines += ["", "## The MGN allocation sweeps under a pinned placement (`raw/%s`)" %
              PLACEMENT_RAW3, "",
              "`run.sh placement walk,0 sweep-pinned-cases.txt`: every one-CTA-per-SM MGN "
              "allocation of runs.csv (current code), timed pinned (`walk`) and with the "
              "scheduler's order 0 in the same run. Spearman of the model's times against each; "
              "runs.csv's time of the same allocation (the sweep) for comparison.", "",
              "| stages | TM | sweep | allocations | Spearman pinned | Spearman order 0 | "
              "Spearman runs.csv | pinned vs order 0 | median abs err pinned | order 0 |",
              "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|"]
    first = {}
    with open(os.path.join(ROOT, "validation", "pipeline", "runs.csv"), newline="") as f:
        for r in csv.DictReader(f):
            if r["status"] == "ok" and r["gemm"] == "mma" and r["depth"] == "2":
                first[(r["run"], r["arch"], int(r["tile_rows"]), r["allocation"])] = float(
                    r["time_s"])
    g3, order3 = grouped(ok_records(PLACEMENT_RAW3, "placement.jsonl"),
                         lambda r: (r["arch"], r["tile_rows"], r["kind"], r["stages"]),
                         lambda r: r["alloc"], lambda old, r: dict(old or {}, **{place(r): r["time_s"]}))
    for key in order3:
        arch, tm, run, stages = key
        al = list(g3[key])
        pred = [kitsune_map(arch, stages.split("-"), tm, 1, [int(x) for x in a.split("-")])["time_s"]
                for a in al]
        w = [g3[key][a]["walk"] for a in al]
        o = [g3[key][a]["0"] for a in al]
        old = [first[(run, arch, tm, a)] for a in al]
        med = lambda m: 100 * quantile(sorted(abs(p / t - 1) for p, t in zip(pred, m)), 0.5)
        lines.append("| %s | %d | %s | %d | %.2f | %.2f | %.2f | %.2f | %.1f%% | %.1f%% |" % (
            arch, tm, run, len(al), spearman(w, pred), spearman(o, pred), spearman(old, pred),
            spearman(w, o), med(w), med(o)))
    if pinned_rep > PLACEMENT_GUARDS["pinned_repeat_max"]:
        fails.append("a pinned placement repeats only within %.1f%%" % (100 * pinned_rep))
    if nerf_spread > PLACEMENT_GUARDS["nerf_spread_max"]:
        fails.append("NeRF spread over block orders %.1f%%" % (100 * nerf_spread))
    if within < PLACEMENT_GUARDS["ilp_within_5pct_min"]:
        fails.append("the ILP allocation within 5%% of its fastest neighbour in %d" % within)
    here = os.path.join(ROOT, "validation", "pipeline")
    name = "placement.md"
    report(dest, name, lines)
    if check:
        if open(os.path.join(dest, name)).read() != open(os.path.join(here, name)).read():
            fails.append("validation/pipeline/%s is out of date (run model.py placement)" % name)
        for m in fails:
            print("model.py: guard failed: " + m, file=sys.stderr)
        return 1 if fails else 0
    return 0

TRACE_RAW = "run10-trace-h200"


def ring_queues(arch, a, depth=2):
    """The runtime's rings for allocation a (pipe.py build_mgn / build_nerf): per queue its
    producer stage, consumer stages and slots (depth x the larger CTA count of its ends; mgn-mc's
    e_in ring, read by fc1 and ln_res, depth x every stage's CTAs)."""
    n = len(a)
    if arch == "mgn-mc":
        return [(0, [1, n - 1], depth * sum(a))] + [
            (i, [i + 1], depth * max(a[i], a[i + 1])) for i in range(1, n - 1)]
    return [(i, [i + 1], depth * max(a[i], a[i + 1])) for i in range(n - 1)]


def ring_recurrence(busy, a, queues, tiles, lat):
    """The runtime's schedule, tile by tile: stage s's CTA t mod a[s] starts tile t when it has
    finished its previous tile, every input of t was published lat ago and the slot t takes was
    freed by every consumer of its tile t - slots lat ago; it is busy for busy[s]. Returns when
    the last tile is done (s)."""
    n = len(busy)
    done = [[0.0] * tiles for _ in range(n)]
    inq = [[] for _ in range(n)]
    outq = [None] * n
    for q in queues:
        outq[q[0]] = q
        for c in q[1]:
            inq[c].append(q)
    for t in range(tiles):
        for s in range(n):
            st = done[s][t - a[s]] if t >= a[s] else 0.0
            for q in inq[s]:
                st = max(st, done[q[0]][t] + lat)
            q = outq[s]
            if q and t >= q[2]:
                for c in q[1]:
                    st = max(st, done[c][t - q[2]] + lat)
            done[s][t] = st + busy[s]
    return max(d[-1] for d in done)


def coupling():
    """trace.md's last section: the traced launches predicted from their own per-stage busy
    times, by fill plus the slowest stage and by the tile-by-tile schedule of the rings."""
    hw = json.load(open(os.path.join(ROOT, "hw", HW + ".json")))
    lat = hw["stage_body"]["handoff_ns"]
    rows, e_max, e_rec, e_half = [], [], [], []
    for r in ok_records(TRACE_RAW, "placement.jsonl"):
        if not r.get("service"):
            continue
        a = [int(x) for x in r["alloc"].split("-")]
        busy = [p["busy"] * p["span_us"] * 1e3 / (p["tiles"] / p["ctas"]) for p in r["prof"]]
        n, T = r["tiles"], r["time_s"] * 1e9
        mx = sum(busy) + (n - 1) * max(b / c for b, c in zip(busy, a))
        rc = ring_recurrence(busy, a, ring_queues(r["arch"], a), n, lat)
        e_max.append(mx / T - 1)
        e_rec.append(rc / T - 1)
        e_half.append(ring_recurrence(busy, a, ring_queues(r["arch"], a), n, lat / 2) / T - 1)
        rows.append("| %s | %d | %d | %s | %s | %.0f | %+.1f%% | %+.1f%% |" % (
            r["arch"], r["tile_rows"], r["minb"], r["kind"], r["alloc"], T / 1e3,
            100 * e_max[-1], 100 * e_rec[-1]))
    am = sorted(abs(x) for x in e_max)
    ar = sorted(abs(x) for x in e_rec)
    ah = sorted(abs(x) for x in e_half)
    return ["", "## Coupling through the rings", "",
            "Each traced launch predicted from its own stages' busy times (the table above, "
            "measured): by fill plus (tiles - 1) x the slowest stage's busy time / CTAs, the "
            "form of the model's time; and by the runtime's schedule tile by tile (each CTA "
            "takes its tiles in turn, t -> t mod CTAs; a tile starts when the CTA's previous "
            "tile is done, its input was published and the ring slot it takes was freed by its "
            "consumers, each hand-off seen %.0f ns later: the `calib.cu` hand-off per tile, "
            "which holds both sides' fences, so an upper end of the delay; "
            "`ring_recurrence` in model.py). The slowest stage alone misses by %.1f%% "
            "(median |error|); the schedule through the rings by %.1f%% (%.1f%% with half that "
            "delay): near-balanced stages hold each "
            "other up through rings of 2 x CTAs slots, a loss the bottleneck form cannot "
            "show. With the model's stage times instead of the measured ones the same schedule "
            "does not help (their errors of up to 10-15%% per stage decide which stages are "
            "near-balanced), so the model keeps the bottleneck form and `stage_body.poll_ns`." % (
                lat, 100 * quantile(am, 0.5), 100 * quantile(ar, 0.5), 100 * quantile(ah, 0.5)),
            "", "| stages | TM | CTAs/SM | kind | allocation | measured us | fill + slowest stage "
            "| ring schedule |",
            "|---|---:|---:|---|---|---:|---:|---:|"] + rows


def trace(check, dest):
    """Per-tile stage times of the traced launches against the model's stage times."""
    lines = ["# Per-tile stage times on the H200", "",
             "Generated by `python3 hw/calibrate/pipeline/model.py trace` from `raw/%s` "
             "(`run.sh placement trace`: the mapper's allocation and its fastest and slowest "
             "one-CTA neighbours of every combination, block order 0; every tile's clock64 marks "
             "in one launch). Per stage: service = the tile's work between the waits (inputs "
             "held to the output-slot wait, then slot held to done), its coefficient of "
             "variation and 99th percentile over the tiles; busy = the per-CTA busy time per "
             "tile that `model.py fit` fits (service plus fences and barriers, no spinning); "
             "gap = the time from one of a CTA's tiles to its next (waits included); per tile "
             "of the pipeline = gap / CTAs. Model = `kitsune map --hw %s` stage time per tile "
             "and CTA (`body_cta_tile_s`). The mapper's allocations only; nanoseconds." % (
                 TRACE_RAW, HW), "",
             "| stages | TM | CTAs/SM | stage | CTAs | service | cv | p99/mean | busy | gap | "
             "gap - busy | per tile of the pipeline | model |",
             "|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    cvs, tails, sums = [], [], []
    for r in ok_records(TRACE_RAW, "placement.jsonl"):
        if not r.get("service"):
            continue
        for sv in r["service"]:
            cvs.append(sv["cv"])
            tails.append(sv["pct_rel"][98])
        if r["kind"] != "ilp":
            continue
        names = r["stages"].split("-")
        a = [int(x) for x in r["alloc"].split("-")]
        mp = kitsune_map(r["arch"], names, r["tile_rows"], r["minb"], a)
        T = r["time_s"] * 1e9
        per = []
        for p, sv, ms in zip(r["prof"], r["service"], mp["stages"]):
            busy = p["busy"] * p["span_us"] * 1e3 / (p["tiles"] / p["ctas"])
            per.append(sv["gap_mean_ns"] / p["ctas"])
            lines.append("| %s | %d | %d | %s | %d | %.0f | %.3f | %.2f | %.0f | %.0f | %.0f | %.0f "
                         "| %.0f |" % (r["arch"], r["tile_rows"], r["minb"], p["stage"], p["ctas"],
                                       sv["mean_ns"], sv["cv"], sv["pct_rel"][98], busy,
                                       sv["gap_mean_ns"], sv["gap_mean_ns"] - busy,
                                       sv["gap_mean_ns"] / p["ctas"],
                                       ms["body_cta_tile_s"] * 1e9))
        model_per = max(s_["body_cta_tile_s"] / c for s_, c in zip(mp["stages"], a)) * 1e9
        sums.append("%s TM%d x%d: measured %.0f us, %.0f ns per tile in steady state (the "
                    "slowest stage's gap / CTAs); model %.0f us, %.0f ns" % (
                        r["arch"], r["tile_rows"], r["minb"], T / 1e3, max(per),
                        mp["time_s"] * 1e6, model_per))
    cvs.sort()
    lines += ["", "Over all %d traced stages: service cv median %.3f, max %.3f; the 99th "
              "percentile at most %.2fx the mean." % (len(cvs), quantile(cvs, 0.5), cvs[-1],
                                                         max(tails)), ""]
    lines += ["- " + x for x in sums]
    lines += coupling()
    here = os.path.join(ROOT, "validation", "pipeline")
    report(dest, "trace.md", lines)
    if check and open(os.path.join(dest, "trace.md")).read() != open(
            os.path.join(here, "trace.md")).read():
        print("model.py: validation/pipeline/trace.md is out of date (run model.py trace)",
              file=sys.stderr)
        return 1
    return 0


def main():
    a = sys.argv[1:]
    if not a or a[0] in ("-h", "--help"):
        print(__doc__)
        return 0
    if a[0] == "fit":
        fit("--write" in a, "--poll" in a)
        return 0
    reports = {"compare": compare, "dram": dram, "ilpcheck": ilpcheck, "ring": ring,
               "trace": trace, "placement": placement, "profilecheck": profilecheck}
    if a[0] in reports:
        dest = a[a.index("--out") + 1] if "--out" in a else os.path.join(ROOT, "validation",
                                                                          "pipeline")
        return reports[a[0]]("--check" in a, dest)
    if a[0] == "ilp":
        ilp(a[a.index("--cases") + 1] if "--cases" in a else None)
        return 0
    if a[0] == "profile":
        profile(a[a.index("--cases") + 1] if "--cases" in a else None)
        return 0
    sys.exit("model.py: unknown command %s (see --help)" % a[0])


if __name__ == "__main__":
    sys.exit(main())
