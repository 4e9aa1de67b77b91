"""short_probe.py: ATen's reductions where the applications run them short (issue 12).

Two kernel classes the application traces show far slower than the model, at shapes no probe has
timed yet (prepared 2026-12-04; not yet run on the H200 - the device was not lent that day):
- column sums, the bias gradient of a linear layer (autograd's `grad.sum(0)`): DLRM training's
  take 9-12.6 us at R = 4,096 rows against 5.2-5.9 us predicted (the model costs every reduction
  from its row-reduction kernel); timed here over R = 256..262,144 rows and C = 64..4,096 columns
  (at most 64Mi elements), bf16 in, bf16 out;
- layer_norm / rms_norm forward at a few rows: Llama decode's two norms at 16 rows take 5.5 and
  7.2 us against 1.8 us predicted (one CTA per row: a latency-bound single wave that
  norm_probe.py's 16Ki..1Mi-row cases never exercise); timed here at R = 1..4,096 rows and
  D = 512..8,192.
Per case: the median CUDA-graph replay after a 256 MiB flush (cold L2, run_apps.time_graph), the
kernels with grid and block; in an ncu child the instructions executed, cycles, clock, issue
activity, warps resident, long-scoreboard stalls and DRAM bytes. Nothing changes clocks, power
limits or modes. Writes $OUT/short_probe.json (after every case) and $OUT/ncu.csv.

usage: OUT=DIR python3 hw/calibrate/apps/short_probe.py [--no-ncu]
"""
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
CHILD = "--ncu-child" in sys.argv
NO_NCU = "--no-ncu" in sys.argv
sys.argv = [sys.argv[0]]

import run_apps as ra  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

OUT = os.environ.get("OUT", "/tmp/short_probe")
T0 = time.time()
MAX_ELEMS = 64 << 20
COL_R = (256, 1024, 4096, 16384, 65536, 262144)
COL_C = (64, 128, 256, 512, 1024, 4096)
NORM_R = (1, 4, 16, 64, 256, 1024, 4096)
NORM_D = (512, 1024, 4096, 8192)
METRICS = ",".join([
    "gpu__time_duration.sum", "sm__cycles_elapsed.avg.per_second", "smsp__inst_executed.sum",
    "dram__bytes_read.sum", "dram__bytes_write.sum", "launch__grid_size", "launch__block_size",
    "launch__registers_per_thread", "smsp__issue_active.avg.pct_of_peak_sustained_active",
    "sm__warps_active.avg.pct_of_peak_sustained_active",
    "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio"])


def log(*a):
    print("[%7.1fs] %s" % (time.time() - T0, " ".join(str(x) for x in a)), flush=True)


def cases():
    """(kind, R, C): column sums first (the larger set), then the two norms."""
    out = [("colsum", R, C) for R in COL_R for C in COL_C if R * C <= MAX_ELEMS]
    for kind in ("layernorm", "rmsnorm"):
        out += [(kind, R, D) for D in NORM_D for R in NORM_R]
    return out


def make(kind, R, C):
    x = ra.rnd(R, C)
    if kind == "colsum":
        return lambda: x.sum(0)
    w = (1 + 0.1 * torch.randn(C, device="cuda")).to(torch.bfloat16)
    if kind == "layernorm":
        b = (0.1 * torch.randn(C, device="cuda")).to(torch.bfloat16)
        return lambda: F.layer_norm(x, (C,), w, b)
    return lambda: F.rms_norm(x, (C,), w)


def child():
    for kind, R, C in cases():
        fn = make(kind, R, C)
        fn()
        torch.cuda.synchronize()
        torch.cuda.profiler.start()
        fn()
        torch.cuda.synchronize()
        torch.cuda.profiler.stop()
        del fn
        torch.cuda.empty_cache()


def main():
    os.makedirs(OUT, exist_ok=True)
    flush = ra.Flusher()
    res = {"env": {"torch": torch.__version__, "gpu": torch.cuda.get_device_name()},
           "method": "eager x.sum(0) (bf16 [R, C]), F.layer_norm (weight, bias) and F.rms_norm "
                     "(weight) in a CUDA graph, median replay after a 256 MiB flush (cold L2)",
           "cases": []}
    for kind, R, C in cases():
        e = {"kind": kind, "R": R, "C": C}
        try:
            fn = make(kind, R, C)
            q, e["kernels"] = ra.time_graph(fn, flush)
            e["time_s"] = q["median"]
            e["replay"] = q
            log("%-9s R=%-7d C=%-5d %8.2f us  %s" % (kind, R, C, q["median"] * 1e6, " | ".join(
                "%s %s x %s %.1fus" % (k[0][:50], k[1], k[2], k[3]) for k in e["kernels"])))
            del fn
        except Exception as ex:  # one failing shape must not lose the others
            e["error"] = "%s: %s" % (type(ex).__name__, str(ex)[:300])
            log(kind, R, C, "failed:", e["error"])
        torch.cuda.empty_cache()
        res["cases"].append(e)
        ra.atomic_json(os.path.join(OUT, "short_probe.json"), res)
    if NO_NCU:
        return
    cmd = ["ncu", "--target-processes", "all", "--profile-from-start", "off",
           "--clock-control", "none", "--cache-control", "all", "--kernel-name",
           "regex:norm|reduce", "--metrics", METRICS, "--csv", "--page", "raw",
           sys.executable, os.path.abspath(__file__), "--ncu-child"]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=500)
    with open(os.path.join(OUT, "ncu.csv"), "w") as f:
        f.write(p.stdout)
    with open(os.path.join(OUT, "ncu_err.txt"), "w") as f:
        f.write(p.stderr[-20000:])
    log("ncu rc", p.returncode, "lines", p.stdout.count("\n"))


if __name__ == "__main__":
    if CHILD:
        child()
    else:
        main()
