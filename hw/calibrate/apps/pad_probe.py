"""pad_probe.py: why torch.compile pads an alignment-1 GEMM at one size and not at another.

Compiles each case (app, mode, sizes) in a fresh process with a fresh Inductor cache directory
and logs every decision of Inductor's pad_mm pass (torch/_inductor/fx_passes/pad_mm.py): the
GEMM's M, K, N, its arithmetic-intensity pre-filter, whether the padding time is excluded
(the operand's producer can be planned padded), and the compile-time benchmark's original and
padded times, plus the compiled step's kernel names. Each case twice (run-to-run changes); the last case compiles three sizes in one process, in
the order run_apps.py does.
Writes $OUT/pad_probe.jsonl. usage: OUT=DIR python3 pad_probe.py [CASE ...]
(internal: pad_probe.py one APP MODE K=V,K=V LOG)"""
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
CASES = [
    ("nerf", "inference", ""),
    ("nerf", "inference", "B=65536"),
    ("nerf", "inference", "B=16384"),
    ("nerf", "training", "B=65536"),
    ("dlrm", "inference", "B=1024"),
    ("dlrm", "inference", ""),
    ("nerf", "inference", ";B=65536;B=16384"),  # one process, sizes in the harness's order
]


def one(app, mode, ov, log_path):
    sys.argv = [sys.argv[0]]
    sys.path.insert(0, HERE)
    import torch
    import torch._inductor.fx_passes.pad_mm as pm
    import run_apps as ra

    events = []

    def shape(t):
        return [int(d) for d in t.shape], [int(s) for s in t.stride()]

    orig_cb = pm.is_mm_compute_bound

    def cb(M, K, N, dtype):
        r = orig_cb(M, K, N, dtype)
        events.append({"ev": "compute_bound", "M": int(M), "K": int(K), "N": int(N), "result": bool(r)})
        return r

    orig_fast = pm.is_padded_faster

    def fast(key, ori, pad):
        r = orig_fast(key, ori, pad)
        events.append({"ev": "bench", "key": key[:300], "ori_ms": ori, "pad_ms": pad, "pad": bool(r)})
        return r

    orig_can = pm.can_pad

    def can(mat1, mat2, op, input=None):
        r = orig_can(mat1, mat2, op, input)
        events.append({"ev": "can_pad", "op": str(op), "mat1": shape(mat1), "mat2": shape(mat2),
                       "result": bool(r)})
        return r

    orig_excl = pm.should_exclude_padding_time

    def excl(match, name):
        r = orig_excl(match, name)
        events.append({"ev": "exclude_pad_time", "arg": name, "result": bool(r)})
        return r

    pm.is_mm_compute_bound, pm.is_padded_faster, pm.can_pad = cb, fast, can
    pm.should_exclude_padding_time = excl
    for one_ov in ov.split(";"):
        del events[:]
        compile_one(ra, torch, app, mode, one_ov, events, log_path, ov != one_ov)


def compile_one(ra, torch, app, mode, ov, events, log_path, in_sequence):
    overrides = dict(kv.split("=") for kv in ov.split(",") if kv)
    overrides = {k: int(v) for k, v in overrides.items()}
    case = ra.Case(app, mode, overrides)
    t0 = time.perf_counter()
    step = case.step_fn(ra.compiled_module(case.model))
    if mode == "training":
        case.grads_none()
    step()
    torch.cuda.synchronize()
    compile_s = time.perf_counter() - t0
    names = []
    from torch.profiler import profile, ProfilerActivity
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        if mode == "training":
            case.grads_none()
        step()
        torch.cuda.synchronize()
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            names.append([e.name[:120], round(e.device_time_total, 2) if hasattr(e, "device_time_total") else None])
    rec = {"app": app, "mode": mode, "overrides": ov, "compile_s": compile_s, "events": events,
           "kernels": names, "torch": torch.__version__,
           "in_sequence": in_sequence}
    with open(log_path, "a") as f:
        f.write(json.dumps(rec) + "\n")


def main():
    out = os.environ.get("OUT", "/tmp")
    log_path = os.path.join(out, "pad_probe.jsonl")
    cases = CASES
    if len(sys.argv) > 1:
        cases = [tuple(a.split(":")) for a in sys.argv[1:]]
    deadline = time.time() + float(os.environ.get("BUDGET_S", "480"))
    for rep in range(2):
        for app, mode, ov in cases:
            if time.time() > deadline - 40:
                print("budget: skipping", app, mode, ov, "rep", rep, flush=True)
                continue
            env = dict(os.environ)
            env["TORCHINDUCTOR_CACHE_DIR"] = tempfile.mkdtemp(prefix="kt_pad_")
            env["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="kt_triton_")
            t0 = time.time()
            r = subprocess.run([sys.executable, os.path.abspath(__file__), "one", app, mode, ov,
                                log_path], env=env, capture_output=True, text=True,
                               timeout=max(30, deadline - time.time()))
            print("%s %s %s rep %d: rc %d in %.0f s" % (app, mode, ov, rep, r.returncode,
                                                       time.time() - t0), flush=True)
            if r.returncode:
                print(r.stderr[-2000:], flush=True)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "one":
        one(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5])
    else:
        main()
