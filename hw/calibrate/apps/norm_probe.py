"""norm_probe.py: ATen's layer_norm and rms_norm forward kernels over the row length (issue 12).

The model costs these kernels by issued instructions (op.c inst_per_cta + inst_per_elem x D,
fitted through D = 128 and 4096 from hw/calibrate/ncu_kernels.py). The per-op set's D = 512 rows
(held out) come out 17-20% fast, and so does GraphCast's 512-wide layer norm. This probe measures
both kernels at twelve row lengths D = 64..4096 (R x D = 64Mi elements, bf16, weight and bias):
the median CUDA-graph replay after a 256 MiB flush (cold L2), the kernel's grid and block, and
in an ncu child the instructions executed, issue activity, warps resident, registers, cycles,
clock and DRAM bytes. Nothing changes clocks, power limits or modes.

usage: OUT=DIR python3 hw/calibrate/apps/norm_probe.py [--no-ncu]
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

OUT = os.environ.get("OUT", "/tmp/norm_probe")
T0 = time.time()
DS = (64, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096)
ELEMS = 64 << 20
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
    out = []
    for kind in ("layernorm", "rmsnorm"):
        for D in DS:
            R = ELEMS // D
            out.append((kind, R, D))
    return out


def make(kind, R, D):
    x = ra.rnd(R, D)
    w = (1 + 0.1 * torch.randn(D, device="cuda")).to(torch.bfloat16)
    if kind == "layernorm":
        b = (0.1 * torch.randn(D, device="cuda")).to(torch.bfloat16)
        return lambda: F.layer_norm(x, (D,), w, b)
    return lambda: F.rms_norm(x, (D,), w)


def child():
    for kind, R, D in cases():
        fn = make(kind, R, D)
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
           "method": "eager F.layer_norm / F.rms_norm (bf16, weight, bias for layer_norm) in a "
                     "CUDA graph, median replay after a 256 MiB flush (cold L2)", "cases": []}
    for kind, R, D in cases():
        e = {"kind": kind, "R": R, "D": D}
        try:
            fn = make(kind, R, D)
            q, e["kernels"] = ra.time_graph(fn, flush)
            e["time_s"] = q["median"]
            e["replay"] = q
            log("%-9s R=%-8d D=%-5d %8.1f us  %s" % (kind, R, D, q["median"] * 1e6, " | ".join(
                "%s %s x %s %.1fus" % (k[0][:50], k[1], k[2], k[3]) for k in e["kernels"])))
            del fn
        except Exception as ex:
            e["error"] = "%s: %s" % (type(ex).__name__, str(ex)[:300])
            log(kind, R, D, "failed:", e["error"])
        torch.cuda.empty_cache()
        res["cases"].append(e)
        ra.atomic_json(os.path.join(OUT, "norm_probe.json"), res)
    if NO_NCU:
        return
    cmd = ["ncu", "--target-processes", "all", "--profile-from-start", "off",
           "--clock-control", "none", "--cache-control", "all", "--kernel-name", "regex:norm",
           "--metrics", METRICS, "--csv", "--page", "raw",
           sys.executable, os.path.abspath(__file__), "--ncu-child"]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=400)
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
