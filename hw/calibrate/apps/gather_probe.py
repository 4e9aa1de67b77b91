"""gather_probe.py: Inductor's generated kernels with indexed loads on the H200 (issue 12).

torch.compile turns a gather (index_select, embedding) into an indexed load inside a generated
Triton kernel and fuses it with its consumers: MGN's and GraphCast's cat(x[src], x[dst], e),
DLRM's cat(relu(bottom), embedding(idx)). In the application traces those kernels run at
2.0-2.8 TB/s while plain generated kernels stream at DRAM speed. This probe times such kernels
on shapes that are NOT the applications' (the fit set) and on the applications' own shapes
(a check against the application traces), and records what explains the time:
- the time: median CUDA-graph replay after a 256 MiB flush (cold L2), as run_apps.py;
- the kernels (torch.profiler): name, grid, block, duration;
- the Triton source Inductor generated (run_and_get_code) and the SASS of every Triton kernel
  (cuobjdump -sass on the cubins in TRITON_CACHE_DIR): are the indexed loads vectorized?
- ncu counters per Triton kernel: instructions executed, global load/store instructions,
  DRAM bytes, cycles, issue activity, occupancy (--clock-control none, caches flushed).
Nothing changes clocks, power limits or modes. Writes $OUT/gather_probe.json, $OUT/code/,
$OUT/sass/, $OUT/ncu.csv, $OUT/log.txt.

usage: OUT=DIR python3 hw/calibrate/apps/gather_probe.py [--budget-s S] [--no-ncu]
       (internal) python3 gather_probe.py --ncu-child   (run by the parent under ncu)
"""
import glob
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
CHILD = "--ncu-child" in sys.argv
NO_NCU = "--no-ncu" in sys.argv
BUDGET_S = 420.0
if "--budget-s" in sys.argv:
    BUDGET_S = float(sys.argv[sys.argv.index("--budget-s") + 1])
sys.argv = [sys.argv[0]]  # run_apps parses sys.argv at import

import run_apps as ra  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

OUT = os.environ.get("OUT", "/tmp/gather_probe")
T0 = time.time()
METRICS = ",".join([
    "gpu__time_duration.sum", "sm__cycles_elapsed.avg", "sm__cycles_elapsed.avg.per_second",
    "smsp__inst_executed.sum", "smsp__inst_executed_op_global_ld.sum",
    "smsp__inst_executed_op_global_st.sum", "dram__bytes_read.sum", "dram__bytes_write.sum",
    "lts__t_bytes.sum", "launch__grid_size", "launch__block_size",
    "launch__registers_per_thread", "smsp__issue_active.avg.pct_of_peak_sustained_active",
    "sm__warps_active.avg.pct_of_peak_sustained_active",
    "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio"])


def log(*a):
    msg = "[%7.1fs] %s" % (time.time() - T0, " ".join(str(x) for x in a))
    print(msg, flush=True)


def idx(n, hi):
    return torch.randint(0, hi, (n,), device="cuda", dtype=torch.int64)


# (name, fit|app, params, builder) - builder() -> (fn, args, bytes moved at least, elements out)
def cases():
    out = []

    def gcat(E, N, L, k, tag):
        def b():
            x = ra.rnd(N, L)
            e = ra.rnd(E, L)
            s, d = idx(E, N), idx(E, N)
            if k == 3:
                fn = lambda x, s, d, e: torch.cat(
                    [torch.index_select(x, 0, s), torch.index_select(x, 0, d), e], 1)
                args = (x, s, d, e)
            else:
                fn = lambda x, s, d: torch.cat(
                    [torch.index_select(x, 0, s), torch.index_select(x, 0, d)], 1)
                args = (x, s, d)
            nb = 2 * (N * L + E * k * L + (E * L if k == 3 else 0)) + 8 * 2 * E
            return fn, args, nb, E * k * L
        out.append(("gcat%d_E%d_N%d_L%d" % (k, E, N, L), tag,
                    {"kind": "gcat%d" % k, "E": E, "N": N, "L": L}, b))

    def gather(E, N, L, relu, tag):
        def b():
            x = ra.rnd(N, L)
            s = idx(E, N)
            fn = (lambda x, s: torch.relu(torch.index_select(x, 0, s))) if relu else \
                (lambda x, s: torch.index_select(x, 0, s))
            return fn, (x, s), 2 * (N * L + E * L) + 8 * E, E * L
        out.append(("g1%s_E%d_N%d_L%d" % ("relu" if relu else "", E, N, L), tag,
                    {"kind": "g1relu" if relu else "g1", "E": E, "N": N, "L": L}, b))

    def cat3(E, L, tag):
        def b():
            a, c, d = ra.rnd(E, L), ra.rnd(E, L), ra.rnd(E, L)
            return (lambda a, c, d: torch.cat([a, c, d], 1)), (a, c, d), 2 * 6 * E * L, 3 * E * L
        out.append(("cat3_E%d_L%d" % (E, L), tag, {"kind": "cat3", "E": E, "L": L}, b))

    def relu(E, L, tag):
        def b():
            a = ra.rnd(E, L)
            return (lambda a: torch.relu(a)), (a,), 2 * 2 * E * L, E * L
        out.append(("relu_E%d_L%d" % (E, L), tag, {"kind": "relu", "E": E, "L": L}, b))

    def embcat(B, T, D, ROWS, tag):
        def b():
            h = ra.rnd(B, D)
            tab = ra.rnd(T * ROWS, D)
            i = idx(B * T, T * ROWS).view(B, T)
            fn = lambda h, tab, i: torch.cat([torch.relu(h).view(B, 1, D), F.embedding(i, tab)], 1)
            return fn, (h, tab, i), 2 * (B * D + B * T * D + B * (T + 1) * D) + 8 * B * T, \
                B * (T + 1) * D
        out.append(("embcat_B%d_T%d_D%d" % (B, T, D), tag,
                    {"kind": "embcat", "B": B, "T": T, "D": D, "ROWS": ROWS}, b))

    # fit set: shapes no application has
    for L in (64, 256):
        gather(262144, 32768, L, False, "fit")
        gcat(262144, 32768, L, 3, "fit")
    gcat(262144, 32768, 256, 2, "fit")
    gather(262144, 32768, 256, True, "fit")
    cat3(262144, 256, "fit")
    relu(262144, 768, "fit")
    gcat(65536, 8192, 256, 3, "fit")
    embcat(8192, 26, 128, 100000, "fit")
    # the applications' own shapes (MGN default and small, GraphCast default, DLRM B=4096)
    gcat(393216, 65536, 128, 3, "app")
    gcat(24576, 4096, 128, 3, "app")
    gcat(327660, 40962, 512, 3, "app")
    embcat(4096, 26, 128, 100000, "app")
    return out


def sass_dump():
    """cuobjdump -sass of every Triton cubin in the cache, to $OUT/sass."""
    d = os.environ.get("TRITON_CACHE_DIR", os.path.expanduser("~/.triton/cache"))
    os.makedirs(os.path.join(OUT, "sass"), exist_ok=True)
    n = 0
    for cub in sorted(glob.glob(os.path.join(d, "**", "*.cubin"), recursive=True)):
        name = os.path.basename(cub)[:-6]
        h = os.path.basename(os.path.dirname(cub))[:10]
        try:
            s = subprocess.run(["cuobjdump", "-sass", cub], capture_output=True, text=True,
                               timeout=60).stdout
        except Exception as ex:
            s = "cuobjdump failed: %s" % ex
        with open(os.path.join(OUT, "sass", "%s_%s.sass" % (name, h)), "w") as f:
            f.write(s)
        n += 1
    return n


def compile_case(name, b):
    torch._dynamo.reset()
    fn, args, nb, elems = b()
    cf = torch.compile(fn, dynamic=False)
    return cf, args, nb, elems


def child():
    for name, tag, params, b in cases():
        try:
            cf, args, nb, elems = compile_case(name, b)
            for _ in range(2):
                cf(*args)
            torch.cuda.synchronize()
            torch.cuda.nvtx.range_push(name)
            torch.cuda.profiler.start()
            cf(*args)
            torch.cuda.synchronize()
            torch.cuda.profiler.stop()
            torch.cuda.nvtx.range_pop()
            del cf, args
            torch.cuda.empty_cache()
        except Exception as ex:
            print("child %s failed: %s" % (name, ex), flush=True)


def main():
    os.makedirs(os.path.join(OUT, "code"), exist_ok=True)
    from torch._inductor.utils import run_and_get_code
    flush = ra.Flusher()
    res = {"env": {"torch": torch.__version__, "gpu": torch.cuda.get_device_name(),
                   "sm_count": torch.cuda.get_device_properties(0).multi_processor_count},
           "method": "compiled fn (torch.compile default mode, static shapes) captured in a "
                     "CUDA graph, median replay after a 256 MiB flush (cold L2)",
           "cases": []}
    for name, tag, params, b in cases():
        if time.time() - T0 > BUDGET_S * 0.55:
            res["stopped"] = name
            log("budget: stopping before", name)
            break
        e = {"name": name, "set": tag, "params": params}
        try:
            cf, args, nb, elems = compile_case(name, b)
            t = time.time()
            _, codes = run_and_get_code(cf, *args)
            e["compile_s"] = time.time() - t
            with open(os.path.join(OUT, "code", name + ".py"), "w") as f:
                f.write("\n\n# ----\n\n".join(codes))
            q, e["kernels"] = ra.time_graph(lambda: cf(*args), flush, target_s=0.1)
            e["time_s"] = q["median"]
            e["replay"] = q
            e["min_bytes"] = nb
            e["elems_out"] = elems
            e["GBps_min_bytes"] = nb / q["median"] / 1e9
            log("%-32s %-4s %9.1f us %7.0f GB/s  %s" % (
                name, tag, q["median"] * 1e6, e["GBps_min_bytes"],
                " | ".join("%s %s x %s %.1fus" % (k[0][:40], k[1], k[2], k[3])
                           for k in e["kernels"])))
            del cf, args
        except Exception as ex:
            e["error"] = "%s: %s" % (type(ex).__name__, str(ex)[:300])
            log("case", name, "failed:", e["error"])
        torch.cuda.empty_cache()
        res["cases"].append(e)
        ra.atomic_json(os.path.join(OUT, "gather_probe.json"), res)
    res["sass_files"] = sass_dump()
    ra.atomic_json(os.path.join(OUT, "gather_probe.json"), res)
    if NO_NCU:
        return
    left = BUDGET_S - (time.time() - T0) - 10
    log("ncu child, %.0f s left" % left)
    cmd = ["ncu", "--target-processes", "all", "--profile-from-start", "off",
           "--clock-control", "none", "--cache-control", "all", "--kernel-name", "regex:triton_",
           "--metrics", METRICS, "--csv", "--page", "raw",
           sys.executable, os.path.abspath(__file__), "--ncu-child"]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=max(30, left))
        with open(os.path.join(OUT, "ncu.csv"), "w") as f:
            f.write(p.stdout)
        with open(os.path.join(OUT, "ncu_err.txt"), "w") as f:
            f.write(p.stderr[-20000:])
        log("ncu rc", p.returncode, "lines", p.stdout.count("\n"))
    except subprocess.TimeoutExpired as ex:
        log("ncu timed out")
        with open(os.path.join(OUT, "ncu.csv"), "w") as f:
            f.write((ex.stdout or b"").decode() if isinstance(ex.stdout, bytes) else (ex.stdout or ""))


if __name__ == "__main__":
    if CHILD:
        child()
    else:
        main()
