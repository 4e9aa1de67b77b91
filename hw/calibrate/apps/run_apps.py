#!/usr/bin/env python3
"""Whole-application truth for kitsune on the GPU (issue 12): eager (bsp) and torch.compile
(vf) steps of the shipped workloads, their kernels, DRAM bytes (Nsight Compute) and the
microbenchmarks of the mechanisms the model lacks. One call writes everything under OUT.

  python3 run_apps.py [--out DIR] [--budget-s 500] [--quick] [--no-ncu] [--no-micro]
                      [--no-compile] [--workers N] [--apps A,B] [--cpu]
  (internal) run_apps.py ncu-child CASES.json ORDER.json DEADLINE
  (internal) run_apps.py compile-worker CASES.json LOG.jsonl DEADLINE

--cpu: a check of the code paths without a GPU (torch 1.13 is enough): tiny sizes, CPU timers,
no CUDA graphs / compile / profiler / ncu; writes the same JSON files.

Method (README.md beside this file has the details):
- A step is the module's forward under torch.no_grad() (inference), or forward plus
  torch.autograd.backward(outputs, ones) (training: the gradient of sum(outputs); one ones
  fill per output as kitsune's autodiff). Gradients are set to None before the capture, so the
  captured backward writes (never accumulates into) every gradient: no zeroing kernels.
- bsp truth: the eager step captured in a CUDA graph (after a warm-up on a side stream) and
  replayed; vf truth: torch.compile(model, dynamic=False) (default mode, Inductor, no
  cudagraphs of its own), captured and replayed the same way. Before every timed replay a
  256 MiB buffer is read (a sum kernel, outside the CUDA events), so L2 holds clean lines of
  that buffer and none of the step's inputs or weights. Median over the replays.
- Kernel lists: torch.profiler (CUPTI) over one flushed replay of the graph (kernel name,
  grid, block, start, duration); the plain eager step if the graph gave no kernels.
- DRAM bytes: ncu --cache-control none --clock-control none over one plain step per case
  (L2 flushed before the step, outside the profiled range), kernels summed.
"""
import glob
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import models  # noqa: E402

T_START = time.time()
CPU = "--cpu" in sys.argv
DEV = "cpu" if CPU else "cuda"
BF = torch.bfloat16
FLUSH_BYTES = 256 << 20


def log(*a):
    print("[%6.1fs]" % (time.time() - T_START), *a, flush=True)


# ----------------------------------------------------------------------------- sizes
# Other sizes per app (overrides of the mode's defaults). Batch-like parameters scaled by about
# 1/4 and 1/16 (GraphCast: icosahedral refinements 5 and 4 of the multi-mesh; Llama prefill:
# one sequence, and one of 512 tokens; Llama decode: B=16 and a 4x longer cache).
OTHER_SIZES = {
    "dlrm": [{"B": 1024}, {"B": 16384}],
    "mgn": [{"N": 16384, "E": 98304}, {"N": 4096, "E": 24576}],
    "nerf": [{"B": 65536}, {"B": 16384}],
    "graphcast": [{"N": 10242, "E": 81900}, {"N": 2562, "E": 20460}],
    "llama3-8b-ctx": [{"B": 1}, {"B": 1, "S": 512}],
    "llama3-8b-tok": [{"B": 16}, {"P": 8192}],
}
CPU_SIZES = {
    "dlrm": {"B": 64, "ROWS": 100, "TOP1": 64, "TOP2": 64, "TOP3": 32, "TOP4": 16, "BOT1": 32,
             "BOT2": 16, "D": 16},
    "mgn": {"N": 64, "E": 256, "L": 16},
    "nerf": {"B": 128, "W": 32, "W2": 16},
    "graphcast": {"N": 64, "E": 256, "L": 32},
    "llama3-8b-ctx": {"B": 2, "S": 16, "D": 64, "H": 4, "KVH": 2, "HD": 16, "F": 128},
    "llama3-8b-tok": {"B": 2, "P": 16, "D": 64, "H": 4, "KVH": 2, "HD": 16, "F": 128},
}


def all_cases(quick=False):
    """[(prio, app, mode, size_label, overrides)] in run order."""
    cases = []
    for app in models.APPS:
        for mode in ("inference", "training"):
            if mode == "training" and models.is_inference_only(app):
                continue
            # DLRM training names its table gradient: dense at every size (what the committed
            # table measured), and once sparse at the default size (the workload's default,
            # dlrm_s_pytorch.py's sparse=True); collect_apps reads a case without it as dense
            grad = {"SPARSE_GRAD": 0} if (app, mode) == ("dlrm", "training") else {}
            if CPU:
                cases.append((0, app, mode, "cpu", dict(CPU_SIZES[app], **grad)))
                if grad:
                    cases.append((0, app, mode, "cpu-sparse", dict(CPU_SIZES[app], SPARSE_GRAD=1)))
                continue
            if quick:  # smallest size only
                cases.append((0, app, mode, "s2", dict(OTHER_SIZES[app][1], **grad)))
                continue
            cases.append((0, app, mode, "default", dict(grad)))
            for i, o in enumerate(OTHER_SIZES[app]):
                cases.append((1 + i, app, mode, "s%d" % (i + 1), dict(o, **grad)))
            if grad:
                cases.append((1, app, mode, "sparse", {"SPARSE_GRAD": 1}))
    cases.sort(key=lambda c: c[0])
    return cases


# ----------------------------------------------------------------------------- helpers
def sync():
    if not CPU:
        torch.cuda.synchronize()


class Flusher:
    """Reads FLUSH_BYTES (a sum kernel): afterwards L2 holds clean lines of this buffer only."""

    def __init__(self):
        n = FLUSH_BYTES // 4
        self.src = torch.ones(n if not CPU else 1024, device=DEV, dtype=torch.float32)
        self.dst = torch.empty((), device=DEV, dtype=torch.float32)

    def __call__(self):
        torch.sum(self.src, dim=0, out=self.dst)


def atomic_json(path, obj):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(obj, f, separators=(",", ":"))
    os.replace(tmp, path)


def quantiles(ts):
    ts = sorted(ts)
    n = len(ts)
    return {"median": statistics.median(ts), "min": ts[0], "p10": ts[n // 10],
            "p90": ts[min(n - 1, (9 * n) // 10)], "n": n}


class Names:
    """Kernel-name table (names are long: store each once)."""

    def __init__(self):
        self.names, self.idx = [], {}

    def __call__(self, s):
        if s not in self.idx:
            self.idx[s] = len(self.names)
            self.names.append(s)
        return self.idx[s]


NAMES = Names()


def parse_trace(path, labels=("kt_step",)):
    """Kernels (and memsets/memcpys) launched inside each record_function range in `labels`:
    GPU events whose correlation id belongs to a runtime/driver call made inside that range
    (graph replays: the cudaGraphLaunch). Returns {label: [[name_idx, grid, block, start_us,
    dur_us, cat]]}."""
    with open(path) as f:
        d = json.load(f)
    ev = d["traceEvents"] if isinstance(d, dict) else d
    want = set(labels)
    ann = [e for e in ev if e.get("ph") == "X" and e.get("name") in want
           and e.get("cat") in ("user_annotation", "cpu_op", "python_function")]
    rt = sorted((e for e in ev if e.get("ph") == "X" and
                 e.get("cat") in ("cuda_runtime", "cuda_driver")), key=lambda e: e["ts"])
    rts = [e["ts"] for e in rt]
    import bisect
    corr = {}
    for a in ann:
        t0, t1 = a["ts"], a["ts"] + a.get("dur", 0)
        for j in range(bisect.bisect_left(rts, t0), bisect.bisect_right(rts, t1)):
            c = rt[j].get("args", {}).get("correlation")
            if c is not None:
                corr[c] = a["name"]
    res = {lab: [] for lab in labels}
    gk = [e for e in ev if e.get("ph") == "X" and e.get("cat") in
          ("kernel", "gpu_memset", "gpu_memcpy")]
    gk.sort(key=lambda e: e["ts"])
    for e in gk:
        lab = corr.get(e.get("args", {}).get("correlation"))
        if lab is not None:
            res[lab].append(e)
    out = {}
    for lab, sel in res.items():
        t0 = sel[0]["ts"] if sel else 0
        out[lab] = [[NAMES(e.get("name", "?")), e.get("args", {}).get("grid"),
                     e.get("args", {}).get("block"), round(e["ts"] - t0, 3),
                     round(e.get("dur", 0), 3),
                     {"kernel": "k", "gpu_memset": "memset", "gpu_memcpy": "memcpy"}[e["cat"]]]
                    for e in sel]
    return out


def profile_many(fns, flush):
    """fns: [(label, fn)]; each fn() is called once (after a flush) inside record_function(label)
    in one torch.profiler session. Returns {label: kernels}."""
    if CPU or not fns:
        return {lab: [] for lab, _ in fns}
    from torch.profiler import profile, ProfilerActivity, record_function
    sync()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for lab, fn in fns:
            flush()
            sync()
            with record_function(lab):
                fn()
            sync()
    fd, path = tempfile.mkstemp(suffix=".json", prefix="kt_trace_")
    os.close(fd)
    try:
        prof.export_chrome_trace(path)
        return parse_trace(path, [lab for lab, _ in fns])
    finally:
        try:
            os.remove(path)
        except OSError:
            pass


def profile_kernels(fn, flush, label="kt_step"):
    """One call of fn() (after a flush) under torch.profiler; its kernels."""
    return profile_many([(label, fn)], flush)[label]


def time_graph(fn, flush, target_s=0.08, min_reps=10, max_reps=60):
    """fn() captured in a CUDA graph and replayed after flush() (the probes' measurement):
    (quantiles of the replays, [[name, grid, block, duration_us] of the kernels of one replay])."""
    g = capture(fn, warm=2)
    q = time_replays(g.replay, flush, target_s=target_s, min_reps=min_reps, max_reps=max_reps)
    ks = profile_kernels(g.replay, flush)
    del g
    return q, [[NAMES.names[k[0]], k[1], k[2], k[4]] for k in ks]


def capture(fn, warm=2, pre=None):
    """Warm up on a side stream, then capture fn() in a CUDA graph. `pre` runs (on the host)
    before every warm-up call and before the capture (e.g. grads -> None)."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(warm):
            if pre:
                pre()
            fn()
    torch.cuda.current_stream().wait_stream(s)
    sync()
    if pre:
        pre()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        fn()
    sync()
    return g


def time_replays(run, flush, target_s=0.12, min_reps=10, max_reps=100, warm=2):
    """Median of timed calls of run() (a graph replay or a plain step), each after a flush
    outside the CUDA events."""
    if CPU:
        ts = []
        for _ in range(3):
            t0 = time.perf_counter()
            run()
            ts.append(time.perf_counter() - t0)
        return quantiles(ts)
    for _ in range(warm):
        flush()
        run()
    sync()
    t0 = time.perf_counter()
    flush()
    run()
    sync()
    est = time.perf_counter() - t0
    reps = int(max(min_reps, min(max_reps, target_s / max(est, 1e-6))))
    st = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    en = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    for i in range(reps):
        flush()
        st[i].record()
        run()
        en[i].record()
    sync()
    return quantiles([a.elapsed_time(b) * 1e-3 for a, b in zip(st, en)])


class Pauser:
    """Stops the background compile workers (SIGSTOP to their process groups, by id) while the
    parent times something, so that their autotuning benchmarks and compiled warm-up steps do
    not share the GPU with a measurement; SIGCONT afterwards. Nestable."""

    def __init__(self):
        self.procs, self.depth = [], 0

    def alive(self):
        return [p for p in self.procs if p.poll() is None]

    def __enter__(self):
        import signal
        self.depth += 1
        if self.depth == 1:
            live = self.alive()
            for p in live:
                try:
                    os.killpg(p.pid, signal.SIGSTOP)
                except OSError:
                    pass
            if live:
                time.sleep(0.12)  # let the work they already queued on the GPU drain
        return self

    def __exit__(self, *a):
        import signal
        self.depth -= 1
        if self.depth == 0:
            for p in self.alive():
                try:
                    os.killpg(p.pid, signal.SIGCONT)
                except OSError:
                    pass
        return False


PAUSE = Pauser()


# ----------------------------------------------------------------------------- app steps
class Case:
    """Model, inputs and step function of one (app, mode, sizes, exec)."""

    def __init__(self, app, mode, overrides):
        self.app, self.mode, self.overrides = app, mode, overrides
        self.params = models.workload_params(app, mode, overrides)
        self.model, self.inputs = models.build(app, self.params, DEV, BF)
        self.rg = models.requires_grad_inputs(app) if mode == "training" else []
        for n in self.rg:
            self.inputs[n].requires_grad_(True)
        if mode == "inference":
            for p in self.model.parameters():
                p.requires_grad_(False)
        self.args = models.forward_args(app, self.inputs)
        self.leaves = list(self.model.parameters()) + [self.inputs[n] for n in self.rg]

    def grads_none(self):
        for t in self.leaves:
            t.grad = None

    def step_fn(self, fn):
        args = self.args
        if self.mode == "inference":
            def step():
                with torch.no_grad():
                    return fn(*args)
        else:
            def step():
                outs = fn(*args)
                torch.autograd.backward(outs, [torch.ones_like(o) for o in outs])
                return outs
        return step

    def check(self):
        with torch.no_grad():
            outs = self.model(*self.args)
        bad = models.check_against_json(self.app, self.params, self.model, self.inputs, outs)
        for n, o in zip(models.output_names(self.app), outs):
            if not bool(torch.isfinite(o).all()):
                bad.append("output %s has non-finite values" % n)
        return bad

    def free(self):
        self.grads_none()
        del self.model, self.inputs, self.args, self.leaves


def compiled_module(model):
    import torch._dynamo
    torch._dynamo.reset()
    return torch.compile(model, dynamic=False)


def run_exec(case, exec_, flush, do_graph=True):
    """Measure one exec ('eager' or 'compiled') of a case. Returns a result dict."""
    r = {"exec": exec_}
    t0 = time.perf_counter()
    fn = case.model if exec_ == "eager" else compiled_module(case.model)
    step = case.step_fn(fn)
    pre = case.grads_none if case.mode == "training" else None
    # first call (compiles under torch.compile) timed on the host clock
    if pre:
        pre()
    step()
    sync()
    r["first_call_s"] = time.perf_counter() - t0
    g = None
    if do_graph and not CPU:
        try:
            g = capture(step, warm=2, pre=pre)
            r["graph"] = True
        except Exception as ex:
            r["graph"] = False
            r["graph_error"] = "%s: %s" % (type(ex).__name__, str(ex)[:400])
            log("  graph capture failed:", r["graph_error"])
            try:
                torch.cuda.synchronize()
            except Exception:
                pass
            g = None
    r["workers_alive"] = len(PAUSE.alive())
    if g is not None:
        with PAUSE:
            q = time_replays(g.replay, flush)
            r["time_s"] = q["median"]
            r["time"] = q
            r["kernels"] = profile_kernels(g.replay, flush)
        r["kernels_source"] = "graph"
    # plain launches (no graph): launch gaps included; CPU-bound at small sizes
    if pre:
        saved = [t.grad for t in case.leaves]

        def plain():
            pre()
            step()
    else:
        plain = step
    with PAUSE:
        q = time_replays(plain, flush, target_s=0.05, min_reps=5, max_reps=20)
        r["plain_time_s"] = q["median"]
        r["plain_time"] = q
        if g is None:
            r["time_s"] = None
            r["kernels"] = profile_kernels(plain, flush)
            r["kernels_source"] = "plain"
        elif not r["kernels"]:
            r["kernels"] = profile_kernels(plain, flush)
            r["kernels_source"] = "plain (graph replay gave no kernels)"
    if pre:  # the last plain step left fresh gradients: every leaf must have one
        r["grads_missing"] = sum(1 for t in case.leaves if t.grad is None)
        r["grads_nonfinite"] = sum(1 for t in case.leaves
                                   if t.grad is not None and not bool(torch.isfinite(
                                       t.grad._values() if t.grad.is_sparse else t.grad).all()))
        for t, s in zip(case.leaves, saved):
            t.grad = s
    if CPU:
        r["time_s"] = r["plain_time_s"]
        r["kernels_source"] = "cpu (no kernels)"
    ks = r["kernels"]
    r["n_kernels"] = len(ks)
    if ks:
        r["kernel_sum_s"] = sum(k[4] for k in ks) * 1e-6
        r["kernel_span_s"] = (ks[-1][3] + ks[-1][4]) * 1e-6
    r["total_s"] = time.perf_counter() - t0
    del g, step, fn
    return r


def run_case(app, mode, label, overrides, execs, flush, results, out_path, check=False):
    rec = {"app": app, "mode": mode, "size": label, "overrides": overrides}
    t0 = time.perf_counter()
    case = None
    try:
        case = Case(app, mode, overrides)
        rec["params"] = case.params
        rec["requires_grad"] = case.rg
        if check:
            bad = case.check()
            rec["json_check"] = bad or "ok"
            if bad:
                log("  JSON check:", bad)
        for ex in execs:
            try:
                r = run_exec(case, ex, flush)
                rec[ex] = r
                log("  %-8s %s  %s kernels  first call %.1fs" % (
                    ex, fmt_t(r.get("time_s")), r.get("n_kernels"), r["first_call_s"]))
            except Exception as e:
                rec[ex] = {"exec": ex, "error": "%s: %s" % (type(e).__name__, str(e)[:600])}
                log("  %s FAILED: %s" % (ex, rec[ex]["error"]))
                traceback.print_exc()
                if not CPU:
                    torch.cuda.synchronize()
    except Exception as e:
        rec["error"] = "%s: %s" % (type(e).__name__, str(e)[:600])
        log("  case FAILED:", rec["error"])
        traceback.print_exc()
    finally:
        if case is not None:
            case.free()
        del case
        import gc
        gc.collect()
        if not CPU:
            torch.cuda.synchronize()
            torch.cuda.empty_cache()
    rec["wall_s"] = time.perf_counter() - t0
    results["cases"].append(rec)
    results["kernel_names"] = NAMES.names
    atomic_json(out_path, results)
    return rec


def fmt_t(t):
    if t is None:
        return "      -   "
    return "%9.1f us" % (t * 1e6)


# ----------------------------------------------------------------------------- env
def sh(cmd):
    try:
        return subprocess.run(cmd, shell=True, capture_output=True, text=True,
                              timeout=20).stdout.strip()
    except Exception as ex:
        return "ERR %s" % ex


def env_info():
    e = {"torch": torch.__version__, "python": sys.version.split()[0],
         "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    if CPU:
        e["device"] = "cpu"
        return e
    p = torch.cuda.get_device_properties(0)
    e.update({"gpu": p.name, "sm_count": p.multi_processor_count,
              "memory_bytes": p.total_memory, "cuda": torch.version.cuda,
              "cudnn": torch.backends.cudnn.version(),
              "l2_bytes": getattr(p, "L2_cache_size", None)})
    try:
        import triton
        e["triton"] = triton.__version__
    except Exception:
        pass
    e["nvidia_smi"] = sh("nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,"
                         "clocks.mem,clocks.max.mem,power.limit,power.max_limit,"
                         "temperature.gpu,persistence_mode,compute_mode "
                         "--format=csv")
    e["driver"] = sh("nvidia-smi --query-gpu=driver_version --format=csv,noheader")
    e["ncu"] = sh("ncu --version | tail -1")
    e["nvcc"] = sh("nvcc --version | tail -2 | head -1")
    e["cublas"] = str(getattr(torch.backends.cuda, "preferred_blas_library", lambda: "cuBLAS")())
    return e


# ----------------------------------------------------------------------------- compile workers
def compile_worker(cases_path, log_path, deadline):
    """Compile each case once (forward, and backward in training) so that the on-disk Inductor
    / AOTAutograd / Triton caches are warm for the parent; writes compile times. Runs at a
    lower CPU priority than the measuring parent."""
    try:
        os.nice(10)
    except OSError:
        pass
    cases = json.load(open(cases_path))
    for app, mode, label, ov in cases:
        if time.time() > deadline:
            break
        t0 = time.perf_counter()
        rec = {"app": app, "mode": mode, "size": label}
        try:
            c = Case(app, mode, ov)
            step = c.step_fn(compiled_module(c.model))
            if mode == "training":
                c.grads_none()
            step()
            torch.cuda.synchronize()
            rec["compile_s"] = time.perf_counter() - t0
            c.free()
        except Exception as e:
            rec["error"] = "%s: %s" % (type(e).__name__, str(e)[:300])
        torch.cuda.empty_cache()
        with open(log_path, "a") as f:
            f.write(json.dumps(rec) + "\n")


def drop_best_configs():
    """Runtime autotuning results written by the compile workers (measured while the parent
    used the GPU) are deleted, so the parent re-tunes each kernel on an idle GPU."""
    d = os.environ.get("TORCHINDUCTOR_CACHE_DIR")
    if not d:
        return 0
    n = 0
    for p in glob.glob(os.path.join(d, "**", "*.best_config"), recursive=True):
        try:
            os.remove(p)
            n += 1
        except OSError:
            pass
    return n


# ----------------------------------------------------------------------------- ncu
def ncu_child(cases_path, order_path, deadline):
    """Run under ncu --profile-from-start off: for each case and exec, one plain step between
    cudaProfilerStart/Stop, preceded by a marker kernel (torch.cuda._sleep -> spin_kernel)."""
    cases = json.load(open(cases_path))
    flush = Flusher()
    order = {"segments": [], "t0": time.time()}
    for app, mode_, label, ov, execs in cases:
        if time.time() > deadline:
            order["stopped"] = "deadline before %s %s %s" % (app, mode_, label)
            break
        try:
            c = Case(app, mode_, ov)
        except Exception as e:
            order.setdefault("errors", []).append("%s %s %s: %s" % (app, mode_, label, e))
            continue
        for ex in execs:
            if time.time() > deadline:
                order["stopped"] = "deadline at %s %s %s %s" % (app, mode_, label, ex)
                break
            seg = None
            try:
                fn = c.model if ex == "eager" else compiled_module(c.model)
                step = c.step_fn(fn)
                for _ in range(2):
                    if mode_ == "training":
                        c.grads_none()
                    step()
                if mode_ == "training":
                    c.grads_none()
                torch.cuda.synchronize()
                flush()
                torch.cuda.synchronize()
                seg = {"app": app, "mode": mode_, "size": label, "overrides": ov, "exec": ex,
                       "ok": False, "t_start": round(time.time() - order["t0"], 2)}
                order["segments"].append(seg)
                torch.cuda.profiler.start()
                torch.cuda._sleep(100)
                step()
                torch.cuda.synchronize()
                torch.cuda.profiler.stop()
                seg["ok"] = True
                seg["t_end"] = round(time.time() - order["t0"], 2)
                del step, fn
            except Exception as e:
                try:
                    torch.cuda.profiler.stop()
                except Exception:
                    pass
                order.setdefault("errors", []).append("%s %s %s %s: %s" % (
                    app, mode_, label, ex, str(e)[:300]))
            atomic_json(order_path, order)
        c.free()
        del c
        torch.cuda.empty_cache()
    order["done"] = True
    order["wall_s"] = time.time() - order["t0"]
    atomic_json(order_path, order)


NCU_KEEP = ["ID", "Kernel Name", "Grid Size", "Block Size", "dram__bytes_read.sum",
            "dram__bytes_write.sum", "gpu__time_duration.sum"]


def compact_ncu(src, dst):
    """ncu --page raw prints ~270 columns a kernel; keep the ones used (and the units row)."""
    import csv
    with open(src, newline="") as f:
        lines = f.read().splitlines()
    start = next((i for i, l in enumerate(lines) if l.startswith('"ID"')), None)
    notes = [l for l in lines[:start if start is not None else len(lines)]]
    n = 0
    with open(dst, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        for l in notes:
            f.write("# " + l + "\n")
        if start is not None:
            rows = list(csv.reader(lines[start:]))
            col = {h: i for i, h in enumerate(rows[0])}
            keep = [col[k] for k in NCU_KEEP if k in col]
            for r in rows:
                if len(r) >= len(rows[0]):
                    w.writerow([r[i] for i in keep])
                    n += 1
    return n


def kill_group(p):
    """Kill a process this script started (its own session) and its children, by id."""
    import signal
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except (OSError, ProcessLookupError):
        pass


def run_ncu(out_dir, tag, cases, budget_s):
    """One ncu process over `cases` [(app, mode, label, overrides, execs)]: every kernel of one
    step per (case, exec) profiled, a marker kernel before each step."""
    t0 = time.time()
    deadline = t0 + budget_s - 15
    cpath = os.path.join(tempfile.gettempdir(), "kt_ncu_cases_%s.json" % tag)
    json.dump(cases, open(cpath, "w"))
    order = os.path.join(out_dir, "ncu_%s_order.json" % tag)
    full = os.path.join(tempfile.gettempdir(), "kt_ncu_%s_full.csv" % tag)
    cmd = ["ncu", "--target-processes", "application-only", "--clock-control", "none",
           "--cache-control", "none",
           "--profile-from-start", "off", "--print-units", "base", "--csv", "--page", "raw",
           "--metrics", "dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum",
           "--log-file", full,
           sys.executable, os.path.abspath(__file__), "ncu-child", cpath, order, str(deadline)]
    log("ncu %s: %d cases, budget %.0f s" % (tag, len(cases), budget_s))
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                         start_new_session=True)
    try:
        so, _ = p.communicate(timeout=budget_s)
        tail = (so or "")[-3000:]
        rc = p.returncode
    except subprocess.TimeoutExpired:
        kill_group(p)
        so, _ = p.communicate()
        rc = "timeout"
        tail = (so or "")[-3000:]
    n = 0
    try:
        n = compact_ncu(full, os.path.join(out_dir, "ncu_%s.csv" % tag))
    except Exception as e:
        tail += "\ncompact failed: %s" % e
    log("ncu %s: rc %s, %d rows, %.0f s" % (tag, rc, n, time.time() - t0))
    if rc != 0:
        log("ncu tail:", tail[-1500:])
    return {"tag": tag, "rc": rc, "rows": n, "wall_s": time.time() - t0,
            "tail": tail[-1500:]}


# ----------------------------------------------------------------------------- probes
# What the kernel probes (norm_probe.py, short_probe.py) read from ncu per kernel.
PROBE_METRICS = ",".join([
    "gpu__time_duration.sum", "sm__cycles_elapsed.avg.per_second", "smsp__inst_executed.sum",
    "dram__bytes_read.sum", "dram__bytes_write.sum", "launch__grid_size", "launch__block_size",
    "launch__registers_per_thread", "smsp__issue_active.avg.pct_of_peak_sustained_active",
    "sm__warps_active.avg.pct_of_peak_sustained_active",
    "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio",
    "smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio"])


def probe_child(cases, make):
    """A probe's ncu child: every case's fn() once inside the profiler's range."""
    for case in cases:
        fn = make(*case)
        fn()
        torch.cuda.synchronize()
        torch.cuda.profiler.start()
        fn()
        torch.cuda.synchronize()
        torch.cuda.profiler.stop()
        del fn
        torch.cuda.empty_cache()


def probe_main(out, name, keys, cases, make, method, kernel_regex, script, no_ncu,
               ncu_timeout_s):
    """A kernel probe: every case (a tuple named by `keys`, fn = make(*case)) timed by
    time_graph after a flush, OUT/NAME.json rewritten after each (a failing case keeps its
    error and the others); then, unless no_ncu, ncu over `script --ncu-child` for the kernels
    whose names match kernel_regex, into OUT/ncu.csv (stderr's tail in OUT/ncu_err.txt)."""
    os.makedirs(out, exist_ok=True)
    flush = Flusher()
    res = {"env": {"torch": torch.__version__,
                   "gpu": torch.cuda.get_device_name() if not CPU else "cpu"},
           "method": method, "cases": []}
    for case in cases:
        e = dict(zip(keys, case))
        label = " ".join("%s=%s" % kv for kv in list(e.items())[1:])
        try:
            fn = make(*case)
            q, e["kernels"] = time_graph(fn, flush)
            e["time_s"] = q["median"]
            e["replay"] = q
            log("%-9s %-18s %9.2f us  %s" % (case[0], label, q["median"] * 1e6, " | ".join(
                "%s %s x %s %.1fus" % (k[0][:50], k[1], k[2], k[3]) for k in e["kernels"])))
            del fn
        except Exception as ex:  # one failing shape must not lose the others
            e["error"] = "%s: %s" % (type(ex).__name__, str(ex)[:300])
            log(case[0], label, "failed:", e["error"])
        torch.cuda.empty_cache()
        res["cases"].append(e)
        atomic_json(os.path.join(out, name + ".json"), res)
    if no_ncu:
        return
    cmd = ["ncu", "--target-processes", "all", "--profile-from-start", "off",
           "--clock-control", "none", "--cache-control", "all", "--kernel-name", kernel_regex,
           "--metrics", PROBE_METRICS, "--csv", "--page", "raw",
           sys.executable, os.path.abspath(script), "--ncu-child"]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=ncu_timeout_s)
    with open(os.path.join(out, "ncu.csv"), "w") as f:
        f.write(p.stdout)
    with open(os.path.join(out, "ncu_err.txt"), "w") as f:
        f.write(p.stderr[-20000:])
    log("ncu rc", p.returncode, "lines", p.stdout.count("\n"))


# ----------------------------------------------------------------------------- micro
def rnd(*shape):
    return torch.randn(*shape, device=DEV, dtype=torch.float32).to(BF)


def micro_specs(quick=False, groups=None):
    """[(group, name, params, make(k) -> fn(i), flops, min_bytes, k, train)]: make(k) builds k
    input copies; fn(i) runs the op once on copy i. groups: only these groups (None: every
    group but the opt-in ones, OPT_IN_GROUPS)."""
    S = (lambda n: max(8, n // 4096)) if CPU else (lambda n: n)
    L2 = 60 << 20
    specs = []

    def copies(nbytes):
        return int(max(2, min(32, math.ceil(3 * L2 / max(nbytes, 1)))))

    def add(group, name, params, make, flops, nbytes, k=None):
        specs.append((group, name, params, make, flops, nbytes,
                      k if k is not None else copies(nbytes)))

    # --- (a) operand alignment, (b) short K / skinny / split-K
    def linear(M, K, N, bias=True):
        def make(k):
            xs = [rnd(M, K) for _ in range(k)]
            ws = [rnd(N, K) for _ in range(k)]
            bs = [rnd(N) for _ in range(k)] if bias else [None] * k
            return lambda i: F.linear(xs[i], ws[i], bs[i])
        return make, 2 * M * N * K, 2 * (M * K + N * K + M * N + N)

    def mm(M, K, N, ta=False, tb=False):
        """C[M,N] = op(A) op(B); ta: A stored [K,M] (a transposed view, as x.t() in wgrad)."""
        def make(k):
            As = [rnd(K, M).t() if ta else rnd(M, K) for _ in range(k)]
            Bs = [rnd(N, K).t() if tb else rnd(K, N) for _ in range(k)]
            return lambda i: torch.mm(As[i], Bs[i])
        return make, 2 * M * N * K, 2 * (M * K + K * N + M * N)

    def bmm(B, T, D):
        def make(k):
            fs = [rnd(B, T, D) for _ in range(k)]
            return lambda i: torch.bmm(fs[i], fs[i].transpose(1, 2))
        return make, 2 * B * T * T * D, 2 * (B * T * D + B * T * T)

    M = S(262144)
    Md = S(4096)
    for (nm, K, Ka, N) in (("nerf_fc1", 63, 64, 256), ("nerf_fc6", 319, 320, 256),
                           ("nerf_rgb_fc1", 283, 288, 128)):
        for KK in (K, Ka):
            mk, fl, by = linear(M, KK, N)
            add("align", "%s_fwd" % nm, {"M": M, "K": KK, "N": N, "op": "addmm"}, mk, fl, by)
            # weight gradient as autograd runs it: x.t() @ dy, inner dimension M
            mk, fl, by = mm(KK, M, N, ta=True)
            add("align", "%s_wgrad" % nm, {"M": KK, "K": M, "N": N, "op": "mm x.t()@dy"},
                mk, fl, by)
            if nm != "nerf_fc1":  # input gradient dy @ W -> [M, K]
                mk, fl, by = mm(M, N, KK)
                add("align", "%s_dgrad" % nm, {"M": M, "K": N, "N": KK, "op": "mm dy@W"},
                    mk, fl, by)
    for (nm, K, N, Na) in (("nerf_sigma", 256, 1, 8), ("nerf_rgb_fc2", 128, 3, 8)):
        for NN in (N, Na):
            mk, fl, by = linear(M, K, NN)
            add("align", "%s_fwd" % nm, {"M": M, "K": K, "N": NN, "op": "addmm"}, mk, fl, by)
            mk, fl, by = mm(M, NN, K)
            add("align", "%s_dgrad" % nm, {"M": M, "K": NN, "N": K, "op": "mm dy@W"}, mk, fl, by)
    for (nm, K, Ka, N) in (("dlrm_bot_fc1", 13, 16, 512), ("dlrm_top_fc1", 479, 480, 1024)):
        for KK in (K, Ka):
            mk, fl, by = linear(Md, KK, N)
            add("align", "%s_fwd" % nm, {"M": Md, "K": KK, "N": N, "op": "addmm"}, mk, fl, by)
            mk, fl, by = mm(KK, Md, N, ta=True)
            add("align", "%s_wgrad" % nm, {"M": KK, "K": Md, "N": N, "op": "mm x.t()@dy"},
                mk, fl, by)
            if nm == "dlrm_top_fc1":
                mk, fl, by = mm(Md, N, KK)
                add("align", "%s_dgrad" % nm, {"M": Md, "K": N, "N": KK, "op": "mm dy@W"},
                    mk, fl, by)
    for NN in (1, 8):
        mk, fl, by = linear(Md, 256, NN)
        add("align", "dlrm_top_fc5_fwd", {"M": Md, "K": 256, "N": NN, "op": "addmm"}, mk, fl, by)
    for Bb in (S(4096), S(16384)):
        for T in (27, 32):
            mk, fl, by = bmm(Bb, T, 128)
            add("align", "dlrm_interaction_bmm", {"B": Bb, "M": T, "N": T, "K": 128,
                                                  "op": "bmm f@f.T"}, mk, fl, by)

    # (a') alignment-1 GEMMs over K (opt-in, --micro-only alignk): the forward addmm at K = 7
    # mod 8 and the aligned K + 1, at NeRF-like, DLRM-like and two middle shapes
    if groups and "alignk" in groups:
        for (MM, N, Kset) in ((S(262144), 256, (31, 63, 127, 191, 255, 319, 383, 447, 479, 511,
                                                  575, 639, 767)),
                              (S(65536), 512, (63, 127, 255, 479)),
                              (S(16384), 1024, (63, 127, 255, 287, 319, 351, 383, 415, 447, 479,
                                                511, 543, 575, 639, 703, 767)),
                              (S(4096), 1024, (63, 127, 255, 383, 479, 767))):
            for K in Kset:
                for KK in (K, K + 1):
                    mk, fl, by = linear(MM, KK, N)
                    add("alignk", "linear", {"M": MM, "K": KK, "N": N, "op": "addmm"}, mk, fl,
                        by)

    Ks = (16, 32, 64, 128, 256) if not quick else (16, 256)
    Ns = (8, 32, 128, 256) if not quick else (8, 256)
    for MM in ((S(65536), S(262144)) if not quick else (S(262144),)):
        for K in Ks:
            for N in Ns:
                mk, fl, by = mm(MM, K, N, tb=True)
                add("shortk", "mm", {"M": MM, "K": K, "N": N, "op": "mm x@W.t()"}, mk, fl, by)
    # split-K candidates: weight gradients (tiny output, huge inner dim) and decode GEMMs
    for (MM, K, N, why) in ((256, S(262144), 256, "nerf fc wgrad"),
                            (128, S(393216), 128, "mgn fc wgrad"),
                            (384, S(393216), 128, "mgn edge_fc1 wgrad"),
                            (512, S(327660), 512, "graphcast fc wgrad"),
                            (1536, S(327660), 512, "graphcast edge_fc1 wgrad"),
                            (1024, S(4096), 1024, "dlrm top_fc2 wgrad"),
                            (S(4096), S(4096), S(14336), "llama gate wgrad (B*S=4096)"),
                            (S(64), S(14336), S(4096), "decode down_proj"),
                            (S(64), S(4096), S(14336), "decode gate/up"),
                            (S(16), S(4096), S(4096), "decode q_proj B=16")):
        if quick and why not in ("nerf fc wgrad", "decode down_proj"):
            continue
        ta = "wgrad" in why
        mk, fl, by = mm(MM, K, N, ta=ta)
        add("splitk", why, {"M": MM, "K": K, "N": N, "op": "mm x.t()@dy" if ta else "mm"},
            mk, fl, by)

    # --- (c) column vs row reductions (bias gradients: dy.sum(0))
    red = [(S(262144), 256), (S(262144), 128), (S(262144), 3), (S(262144), 1), (S(393216), 128),
           (S(65536), 128), (S(327660), 512), (S(40962), 512), (S(4096), 512), (S(4096), 1024),
           (S(4096), 1), (S(8192), 4096)]
    if quick:
        red = red[:2]
    for (R, C) in red:
        def mkc(k, R=R, C=C):
            xs = [rnd(R, C) for _ in range(k)]
            return lambda i: xs[i].sum(0)

        def mkr(k, R=R, C=C):
            xs = [rnd(C, R) for _ in range(k)]
            return lambda i: xs[i].sum(1)
        by = 2 * (R * C + C)
        add("reduce", "col_sum_dim0", {"R": R, "C": C}, mkc, R * C, by)
        add("reduce", "row_sum_same_size", {"R": C, "C": R}, mkr, R * C, by)

    # --- (d) concat and copies of unaligned widths
    def cat(R, widths):
        def make(k):
            xs = [[rnd(R, w) for w in widths] for _ in range(k)]
            return lambda i: torch.cat(xs[i], dim=1)
        return make, 0, 4 * R * sum(widths)
    cats = [(S(262144), (63, 256)), (S(262144), (64, 256)), (S(262144), (256, 27)),
            (S(262144), (256, 32)), (S(4096), (128, 351)), (S(4096), (128, 352)),
            (S(393216), (128, 128, 128)), (S(65536), (128, 128)), (S(327660), (512, 512, 512))]
    if quick:
        cats = cats[:2]
    for (R, w) in cats:
        mk, fl, by = cat(R, w)
        add("concat", "cat_dim1", {"R": R, "widths": "+".join(map(str, w))}, mk, fl, by)

    def cat3(B, T):
        def make(k):
            a = [rnd(B, 1, 128) for _ in range(k)]
            b = [rnd(B, T, 128) for _ in range(k)]
            return lambda i: torch.cat([a[i], b[i]], dim=1)
        return make, 0, 4 * B * (T + 1) * 128
    mk, fl, by = cat3(S(4096), 26)
    add("concat", "dlrm_int_cat", {"B": S(4096), "T": 26, "D": 128}, mk, fl, by)
    for W in ((319, 320) if not quick else (319,)):
        R = S(262144)

        def mkn(k, R=R, W=W):  # cat backward materialised: a narrow column slice copied
            xs = [rnd(R, W) for _ in range(k)]
            return lambda i: xs[i][:, :256].contiguous()

        def mkl(k, R=R, W=W):
            xs = [rnd(R, W) for _ in range(k)]
            return lambda i: xs[i].clone()
        add("copy", "narrow_copy", {"R": R, "W": W, "cols": 256}, mkn, 0, 4 * R * 256)
        add("copy", "clone", {"R": R, "W": W}, mkl, 0, 4 * R * W)
    if not quick:
        def mkt(k):  # [B,H,S,D] -> [B,S,H,D] contiguous (Llama attention output copy)
            # (the run of 2026-12-02 built xs as a transposed view here, so .contiguous() was a
            # no-op and nothing was measured; fixed since)
            xs = [rnd(4, 32, S(2048), 128) for _ in range(k)]
            return lambda i: xs[i].transpose(1, 2).contiguous()
        add("copy", "transpose_copy", {"B": 4, "H": 32, "S": 2048, "D": 128}, mkt, 0,
            4 * 4 * 32 * 2048 * 128)

    # --- (e) tiny kernels and memsets inside a CUDA graph
    def tiny_add(k):
        a = torch.ones(1, device=DEV, dtype=BF)
        b = torch.empty(1, device=DEV, dtype=BF)
        return lambda i: torch.add(a, 1.0, out=b)
    add("tiny", "add_1elem", {"kernels_in_graph": 256}, tiny_add, 0, 4, k=256)

    def tiny_sleep(k):
        return lambda i: torch.cuda._sleep(0)
    if not CPU:
        add("tiny", "empty_kernel(_sleep0)", {"kernels_in_graph": 256}, tiny_sleep, 0, 0, k=256)
    sizes = (4, 4096, 1 << 20, 64 << 20, 1 << 30) if not quick else (4, 1 << 20)
    for nb in sizes:
        nb2 = nb if not CPU else min(nb, 1 << 16)

        def mkz(k, nb=nb2):
            bufs = [torch.empty(nb // 2, device=DEV, dtype=BF) for _ in range(k)]
            return lambda i: bufs[i].zero_()
        kk = 64 if nb2 <= (1 << 20) else 2
        add("memset", "zero_(fill kernel)", {"bytes": nb2}, mkz, 0, nb2, k=kk)
        if not CPU:
            def mkm(k, nb=nb2):
                ms = memset_fn()
                bufs = [torch.empty(nb, device=DEV, dtype=torch.uint8) for _ in range(k)]
                return lambda i: ms(bufs[i], nb)
            add("memset", "cudaMemsetAsync", {"bytes": nb2}, mkm, 0, nb2, k=kk)

    # --- (f) embeddings: one table-batched lookup vs one lookup per table (DLRM)
    def emb(B, T, ROWS, D, batched, train):
        def make(k):
            if batched:
                tab = rnd(T * ROWS, D).requires_grad_(train)
                idx = [(torch.randint(0, ROWS, (B, T), device=DEV) +
                        torch.arange(T, device=DEV)[None, :] * ROWS) for _ in range(k)]
                gy = rnd(B, T, D)

                def f(i):
                    o = F.embedding(idx[i], tab)
                    if train:
                        tab.grad = None
                        o.backward(gy)
                    return o
            else:
                tabs = [rnd(ROWS, D).requires_grad_(train) for _ in range(T)]
                idx = [[torch.randint(0, ROWS, (B,), device=DEV) for _ in range(T)]
                       for _ in range(k)]
                gy = rnd(B, D)

                def f(i):
                    os_ = [F.embedding(idx[i][t], tabs[t]) for t in range(T)]
                    if train:
                        for t in range(T):
                            tabs[t].grad = None
                        torch.autograd.backward(os_, [gy] * T)
                    return os_
            return f
        return make
    for B in ((S(4096), S(16384)) if not quick else (S(4096),)):
        for train in (False, True):
            for batched in (True, False):
                ROWS = 100000 if not CPU else 100
                by = 2 * B * 26 * 128 * (2 if not train else 4) + (
                    2 * 26 * ROWS * 128 if train else 0)
                add("embedding", ("batched_1_kernel" if batched else "per_table_26") +
                    ("_fwd_bwd" if train else "_fwd"),
                    {"B": B, "T": 26, "ROWS": ROWS, "D": 128}, emb(B, 26, ROWS, 128, batched,
                                                                    train), 0, by,
                    k=1 if train else 4)
    if groups:
        specs = [x for x in specs if x[0] in groups]
    return specs


_MEMSET = None


def memset_fn():
    """cudaMemsetAsync on the current stream (ctypes on libcudart; cuda.bindings fallback)."""
    global _MEMSET
    if _MEMSET is not None:
        return _MEMSET
    import ctypes
    lib = None
    cands = []
    for sp in sys.path:
        cands += glob.glob(os.path.join(sp, "nvidia", "**", "libcudart.so*"), recursive=True)
    cands += ["libcudart.so", "libcudart.so.13", "libcudart.so.12"]
    for c in cands:
        try:
            lib = ctypes.CDLL(c)
            break
        except OSError:
            continue
    if lib is not None:
        f = lib.cudaMemsetAsync
        f.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t, ctypes.c_void_p]
        f.restype = ctypes.c_int

        def ms(buf, nb):
            rc = f(ctypes.c_void_p(buf.data_ptr()), 0, nb,
                   ctypes.c_void_p(torch.cuda.current_stream().cuda_stream))
            if rc != 0:
                raise RuntimeError("cudaMemsetAsync rc %d" % rc)
        _MEMSET = ms
        return ms
    from cuda.bindings import runtime as cudart

    def ms2(buf, nb):
        err = cudart.cudaMemsetAsync(buf.data_ptr(), 0, nb,
                                     torch.cuda.current_stream().cuda_stream)
        if int(err[0]) != 0:
            raise RuntimeError("cudaMemsetAsync %s" % (err,))
    _MEMSET = ms2
    return ms2


def print_micro(e):
    kn = ""
    if e.get("kernels"):
        kn = " | ".join(NAMES.names[kk[0]][:50] for kk in e["kernels"][:3])
    log("micro %-9s %-26s %-36s %s %s  %s" % (
        e["group"], e["name"][:26], " ".join("%s=%s" % kv for kv in e["params"].items())[:36],
        fmt_t(e.get("time_s")),
        ("%6.1f TFLOP/s" % e["TFLOPs"]) if "TFLOPs" in e else
        ("%6.0f GB/s" % e["GBps_min_bytes"]) if "GBps_min_bytes" in e else "", kn))


def run_micro(out_path, deadline, quick=False, groups=None):
    res = {"entries": [], "method": (
        "each op run on k input copies inside one CUDA graph (k chosen so that the copies "
        "exceed 3x the 60 MiB L2 where memory allows, 2..32; tiny/memset ops: k=256/64/2); "
        "time per op = median graph replay / k; kernels from torch.profiler over one eager "
        "call")}
    res["cpu"] = CPU
    specs = micro_specs(quick, groups)
    log("micro: %d ops" % len(specs))
    pending = []  # (entry, fn): kernels profiled in batches (one profiler session per batch)

    def flush_pending():
        if not pending:
            return
        try:
            ks = profile_many([("m%d" % j, (lambda f=f: f(0))) for j, (e, f) in
                               enumerate(pending)], lambda: None)
            for j, (e, f) in enumerate(pending):
                e["kernels"] = ks.get("m%d" % j, [])
        except Exception as ex:
            log("micro profile failed:", ex)
        for e, f in pending:
            print_micro(e)
        pending.clear()
        if not CPU:
            torch.cuda.empty_cache()

    for (group, name, params, make, flops, nbytes, k) in specs:
        if time.time() > deadline:
            res["stopped"] = "deadline at %s %s" % (group, name)
            log("micro: deadline, stopping")
            break
        e = {"group": group, "name": name, "params": params, "k": k, "flops": flops,
             "min_bytes": nbytes}
        fn = None
        try:
            fn = make(k)
            if CPU:
                t0 = time.perf_counter()
                for i in range(k):
                    fn(i)
                e["time_s"] = (time.perf_counter() - t0) / k
            else:
                def allk():
                    for i in range(k):
                        fn(i)
                g = capture(allk, warm=1)
                q = time_replays(g.replay, lambda: None, target_s=0.06, min_reps=5,
                                 max_reps=100, warm=1)
                e["time_s"] = q["median"] / k
                e["replay"] = q
                del g
            if flops:
                e["TFLOPs"] = flops / e["time_s"] / 1e12
            if nbytes:
                e["GBps_min_bytes"] = nbytes / e["time_s"] / 1e9
        except Exception as ex:
            e["error"] = "%s: %s" % (type(ex).__name__, str(ex)[:300])
            log("micro %s %s failed: %s" % (group, name, e["error"]))
            fn = None
            if not CPU:
                try:
                    torch.cuda.synchronize()
                except Exception:
                    pass
        res["entries"].append(e)
        if fn is not None and "error" not in e:
            pending.append((e, fn))
        else:
            print_micro(e)
        del fn
        if CPU or len(pending) >= 40 or torch.cuda.memory_allocated() > (24 << 30) \
                or group in ("embedding", "tiny", "memset"):
            flush_pending()
    flush_pending()
    res["kernel_names"] = NAMES.names
    atomic_json(out_path, res)
    return res


# ----------------------------------------------------------------------------- main
def main():
    args = sys.argv[1:]
    if args and args[0] == "ncu-child":
        ncu_child(args[1], args[2], float(args[3]))
        return
    if args and args[0] == "compile-worker":
        compile_worker(args[1], args[2], float(args[3]))
        return

    def opt(name, default):
        if name in args:
            return args[args.index(name) + 1]
        return default
    out_dir = opt("--out", os.environ.get("OUT", os.path.join(HERE, "results", "raw")))
    budget = float(opt("--budget-s", "500"))
    quick = "--quick" in args
    do_ncu = "--no-ncu" not in args and not CPU
    do_micro = "--no-micro" not in args
    do_compile = "--no-compile" not in args and not CPU and hasattr(torch, "compile")
    n_workers = int(opt("--workers", "0"))
    os.makedirs(out_dir, exist_ok=True)
    t_end = T_START + budget
    torch.manual_seed(0)

    def left():
        return t_end - time.time()

    apps_path = os.path.join(out_dir, "apps.json")
    results = {"env": env_info(), "cases": [], "kernel_names": [],
               "config": {"budget_s": budget, "quick": quick, "cpu": CPU,
                          "flush_bytes": FLUSH_BYTES, "other_sizes": OTHER_SIZES,
                          "defaults": {a: models.workload_params(a) for a in models.APPS},
                          "training_defaults": {a: models.workload_params(a, "training")
                                                for a in models.APPS},
                          "requires_grad": {a: models.requires_grad_inputs(a)
                                            for a in models.APPS},
                          "mapping_notes": models.MAPPING_NOTES},
               "phases": []}
    log("env:", json.dumps({k: v for k, v in results["env"].items() if k != "nvidia_smi"}))
    if not CPU:
        log(results["env"].get("nvidia_smi", ""))
    micro_only = opt("--micro-only", "")  # only these micro groups, no applications
    if micro_only:
        groups = micro_only.split(",")
        m = run_micro(os.path.join(out_dir, "micro-%s.json" % "-".join(groups)), t_end, quick,
                      groups)
        m["env"] = results["env"]
        atomic_json(os.path.join(out_dir, "micro-%s.json" % "-".join(groups)), m)
        return
    flush = Flusher()
    cases = all_cases(quick)
    only = opt("--apps", "")  # a comma-separated subset of the applications
    if only:
        cases = [c for c in cases if c[1] in only.split(",")]
    defaults = [c for c in cases if c[0] == 0]
    others = [c for c in cases if c[0] != 0]

    # background compile workers: warm the on-disk caches for the compiled phase
    workers = []
    try:
        os.remove(os.path.join(tempfile.gettempdir(), "kt_compile_workers.jsonl"))
    except OSError:
        pass
    if do_compile and n_workers > 0:
        # defaults first, training first within (slowest), spread round-robin
        todo = [[a, m, lab, ov] for (pr, a, m, lab, ov) in
                sorted(cases, key=lambda c: (c[0], c[2] != "training"))]
        for w in range(n_workers):
            part = todo[w::n_workers]
            cp = os.path.join(tempfile.gettempdir(), "kt_cw_%d.json" % w)
            json.dump(part, open(cp, "w"))
            lp = os.path.join(tempfile.gettempdir(), "kt_compile_workers.jsonl")
            workers.append(subprocess.Popen(
                [sys.executable, os.path.abspath(__file__), "compile-worker", cp, lp,
                 str(t_end - 60)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                start_new_session=True))
        PAUSE.procs = workers
        log("started %d compile workers over %d cases" % (n_workers, len(todo)))

    # Order (each step guarded by the time left): eager at all sizes, micro, compiled at all
    # sizes, ncu (eager defaults first).
    R_NCU1 = (95 if not quick else 35) if do_ncu else 0   # reserved for ncu
    R_MICRO = (20 if not quick else 10) if do_micro else 0

    def phase(name, t0):
        results["phases"].append({"phase": name, "wall_s": time.time() - t0,
                                  "end_s": time.time() - T_START})
        atomic_json(apps_path, results)

    def skip(what, app, mode, lab):
        log("skip %s %s %s %s (time)" % (what, app, mode, lab))
        results.setdefault("skipped", []).append([what, app, mode, lab])

    # 1. eager (bsp truth) at every size: defaults first
    t0 = time.time()
    eager_done = set()
    for (_, app, mode, lab, ov) in cases:
        if left() < R_NCU1 + R_MICRO + (60 if do_compile else 10):
            skip("eager", app, mode, lab)
            continue
        log("case %s %s %s %s" % (app, mode, lab, ov))
        rec = run_case(app, mode, lab, ov, ["eager"], flush, results, apps_path, check=True)
        if rec.get("eager", {}).get("time_s") is not None or CPU:
            eager_done.add((app, mode, lab))
    phase("eager", t0)

    # 2. microbenchmarks
    t0 = time.time()
    micro = None
    if do_micro:
        with PAUSE:  # the workers wait for the whole (short) micro phase
            micro = run_micro(os.path.join(out_dir, "micro.json"),
                              min(t_end - R_NCU1 - 40, time.time() + R_MICRO), quick)
    phase("micro", t0)

    def wait_workers(max_s):
        t = time.time()
        for p in workers:
            try:
                p.wait(timeout=max(0.0, max_s - (time.time() - t)))
            except subprocess.TimeoutExpired:
                pass

    # 3. compiled (vf truth) at every size: defaults first
    t0 = time.time()
    compiled_done = set()
    if do_compile:
        wait_workers(min(15.0, max(0.0, left() - R_NCU1 - 100)))
        if workers and all(p.poll() is not None for p in workers):
            log("compile workers finished; dropped %d autotune results" % drop_best_configs())
        for (_, app, mode, lab, ov) in cases:
            if left() < R_NCU1 + 8:
                skip("compiled", app, mode, lab)
                continue
            log("case %s %s %s %s (compiled)" % (app, mode, lab, ov))
            rec = run_case(app, mode, lab, ov, ["compiled"], flush, results, apps_path)
            if rec.get("compiled", {}).get("time_s") is not None:
                compiled_done.add((app, mode, lab))
    phase("compiled", t0)
    for p in workers:  # free the CPUs and the GPU for ncu
        kill_group(p)

    # 4. ncu, every kernel of one step per case (marker kernels between steps): eager steps at
    #    the default sizes first (the bsp DRAM truth), then compiled at the defaults, then the
    #    other sizes; the child stops at its deadline.
    ncu_runs = []
    results["ncu"] = ncu_runs
    if do_ncu:
        t0 = time.time()
        nc = [[a, m, lab, ov, ["eager"]] for (_, a, m, lab, ov) in defaults
              if (a, m, lab) in eager_done]
        nc += [[a, m, lab, ov, ["compiled"]] for (_, a, m, lab, ov) in defaults
               if (a, m, lab) in compiled_done]
        for (_, a, m, lab, ov) in others:
            ex = [e for e, done in (("eager", eager_done), ("compiled", compiled_done))
                  if (a, m, lab) in done]
            if ex:
                nc.append([a, m, lab, ov, ex])
        if quick:  # a small check: two cases, eager and compiled
            nc = [[a, m, lab, ov, ["eager", "compiled"]] for (_, a, m, lab, ov) in defaults
                  if a in ("nerf", "mgn") and m == "inference"]
        if nc and left() > 25:
            ncu_runs.append(run_ncu(out_dir, "default" if not quick else "quick", nc,
                                    left() - 5))
        phase("ncu", t0)

    for p in workers:
        if p.poll() is None:
            log("compile worker %d still running: killed" % p.pid)
        kill_group(p)  # also its Inductor compile pool
    try:
        with open(os.path.join(tempfile.gettempdir(), "kt_compile_workers.jsonl")) as f:
            results["compile_workers"] = [json.loads(l) for l in f if l.strip()]
    except OSError:
        pass
    results["wall_s"] = time.time() - T_START
    results["kernel_names"] = NAMES.names
    atomic_json(apps_path, results)
    summary_micro(micro)
    summary(results)


def summary(results):
    print("\n%-14s %-9s %-7s %12s %12s %7s %5s %5s" % (
        "app", "mode", "size", "eager_us", "compiled_us", "speedup", "k_e", "k_c"))
    for c in results["cases"]:
        pass
    by = {}
    for c in results["cases"]:
        key = (c["app"], c["mode"], c["size"])
        by.setdefault(key, {}).update({k: c[k] for k in ("eager", "compiled") if k in c})
    for (a, m, s), d in by.items():
        te = d.get("eager", {}).get("time_s")
        tc = d.get("compiled", {}).get("time_s")
        print("%-14s %-9s %-7s %12s %12s %7s %5s %5s" % (
            a, m, s, "%.1f" % (te * 1e6) if te else "-", "%.1f" % (tc * 1e6) if tc else "-",
            "%.2f" % (te / tc) if te and tc else "-", d.get("eager", {}).get("n_kernels", "-"),
            d.get("compiled", {}).get("n_kernels", "-")))
    print("wall %.1f s" % results.get("wall_s", 0))


def summary_micro(micro):
    if not micro:
        return
    print("\nmicro (selected): group name params -> us, TFLOP/s or GB/s, first kernel")
    for e in micro.get("entries", []):
        if e["group"] in ("align", "reduce", "splitk", "tiny", "embedding") or \
                (e["group"] == "memset" and e["params"].get("bytes", 0) <= 4096):
            if e["group"] == "align" and "fwd" not in e["name"] and "bmm" not in e["name"]:
                continue
            k = e.get("kernels") or []
            kn = NAMES.names[k[0][0]][:38] if k else ""
            print("%-8s %-22s %-26s %9s %8s %s%s" % (
                e["group"], e["name"][:22], " ".join("%s=%s" % kv for kv in e["params"].items()
                                                     if kv[0] != "op")[:26],
                "%.2f" % (e["time_s"] * 1e6) if e.get("time_s") else "ERR",
                ("%.1fT" % e["TFLOPs"]) if "TFLOPs" in e else
                ("%.0fG" % e["GBps_min_bytes"]) if "GBps_min_bytes" in e else "",
                kn, " +%d" % (len(k) - 1) if len(k) > 1 else "")[:130])


if __name__ == "__main__":
    main()
