#!/usr/bin/env python3
"""PyTorch side of the kitsune calibration harness (runs on the GPU machine).

  python3 torch_bench.py gemm  OUT.json      tensor GEMM throughput (bf16/fp16/tf32) over shapes
  python3 torch_bench.py ops   OUT.json      per-operator truth: median kernel time, cold L2
  python3 torch_bench.py prof  ORDER.json    the same ops once each, bracketed for Nsight Compute
                                             (run under ncu --profile-from-start off; see run.sh)
  add --quick for a tiny smoke run.

Timing: CUDA events around the op only; warm-up first; median of repeats. For `ops` a 256 MiB
buffer is written before every repeat (outside the events) so that L2 holds none of the inputs;
for `gemm` the inputs are rotated among enough copies that their total exceeds the L2.
Inputs are random (torch.randn / randint), never zeros.
"""
import json
import math
import statistics
import sys
import time

import torch
import torch.nn.functional as F

DEV = "cuda"
QUICK = "--quick" in sys.argv
BF = torch.bfloat16


def rnd(*shape, dtype=BF):
    return torch.randn(*shape, device=DEV, dtype=torch.float32).to(dtype)


def events_median(fn, reps, flush=None, warm=3):
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    st = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    en = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    for i in range(reps):
        if flush is not None:
            flush()
        st[i].record()
        fn(i)
        en[i].record()
    torch.cuda.synchronize()
    t = [s.elapsed_time(e) * 1e-3 for s, e in zip(st, en)]
    return statistics.median(t), t


# ------------------------------------------------------------------ GEMM throughput
def gemm_shapes():
    sq = [256, 512, 1024, 2048, 4096, 8192, 16384]
    shapes = [(n, n, n) for n in sq]
    for m in (1, 8, 16, 32, 64, 128, 256):  # decode-like skinny
        shapes.append((m, 14336, 4096))
        shapes.append((m, 4096, 14336))
    for m in (65536, 262144):  # tall-skinny MLP-like
        for n, k in ((128, 256), (256, 256), (1024, 1024)):
            shapes.append((m, n, k))
    shapes += [(4096, 14336, 4096), (8192, 4096, 14336), (16384, 8192, 1024)]
    if QUICK:
        shapes = [(1024, 1024, 1024), (16, 4096, 4096)]
    return shapes


def bench_gemm(out_path):
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    res = []
    for dtname, dt in (("bf16", torch.bfloat16), ("fp16", torch.float16), ("tf32", torch.float32)):
        for (M, N, K) in gemm_shapes():
            if dtname != "bf16" and max(M, N, K) > 16384:
                continue
            esz = 2 if dt != torch.float32 else 4
            byt = (M * K + K * N + M * N) * esz
            if dtname == "tf32" and M == N == K == 16384:
                continue
            copies = max(1, min(8, math.ceil(256e6 / byt)))
            As = [rnd(M, K, dtype=dt) for _ in range(copies)]
            Bs = [rnd(K, N, dtype=dt) for _ in range(copies)]
            Cs = [torch.empty(M, N, device=DEV, dtype=dt) for _ in range(copies)]
            flop = 2.0 * M * N * K
            # pick repeats to spend about 0.15 s per shape
            torch.matmul(As[0], Bs[0], out=Cs[0])
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            for i in range(3):
                torch.matmul(As[i % copies], Bs[i % copies], out=Cs[i % copies])
            torch.cuda.synchronize()
            est = (time.perf_counter() - t0) / 3
            reps = int(max(10, min(300, 0.15 / max(est, 1e-6))))
            if QUICK:
                reps = 5
            med, _ = events_median(
                lambda i=0: torch.matmul(As[i % copies], Bs[i % copies], out=Cs[i % copies]), reps)
            r = {"dtype": dtname, "M": M, "N": N, "K": K, "time_s": med,
                 "TFLOPs": flop / med / 1e12, "GBps_min_bytes": byt / med / 1e9, "reps": reps}
            res.append(r)
            print(f"gemm {dtname} M={M} N={N} K={K}: {med*1e6:9.1f} us {r['TFLOPs']:7.1f} TFLOP/s",
                  flush=True)
            del As, Bs, Cs
    torch.cuda.empty_cache()
    json.dump({"torch": torch.__version__, "cuda": torch.version.cuda, "gemm": res},
              open(out_path, "w"), indent=1)


# ------------------------------------------------------------------ per-operator truth
# Each entry: (workload file, params dict, builder) where builder() returns fn(i) running the op
# once, plus the analytic minimum DRAM bytes (inputs read once + outputs written once).
def op_list():
    OPS = []

    def add(wl, params, build):
        OPS.append((wl, params, build))

    # GEMMs: C[M,N] = A[M,K] @ B[K,N]
    gemms = [(n, n, n) for n in (1024, 2048, 4096, 8192)]
    gemms += [(m, 14336, 4096) for m in (1, 16, 64)] + [(m, 4096, 14336) for m in (1, 16, 64)]
    gemms += [(65536, 128, 256), (131072, 256, 128), (262144, 256, 256), (262144, 128, 128)]
    gemms += [(4096, 14336, 4096)]
    for (M, N, K) in gemms:
        def b(M=M, N=N, K=K):
            A, B = rnd(M, K), rnd(K, N)
            C = torch.empty(M, N, device=DEV, dtype=BF)
            return (lambda i=0: torch.matmul(A, B, out=C)), 2 * (M * K + K * N + M * N)
        add("gemm", {"M": M, "N": N, "K": K}, b)

    # elementwise
    sizes = [1 << 24, 1 << 26, 1 << 28] if not QUICK else [1 << 20]
    for name in ("add", "mul", "relu", "gelu", "silu"):
        for n in sizes:
            def b(name=name, n=n):
                x = rnd(n)
                y = torch.empty_like(x)
                if name in ("add", "mul"):
                    z = rnd(n)
                    f = torch.add if name == "add" else torch.mul
                    return (lambda i=0: f(x, z, out=y)), 6 * n
                f = {"relu": lambda: torch.relu(x), "gelu": lambda: F.gelu(x),
                     "silu": lambda: F.silu(x)}[name]
                return (lambda i=0: f()), 4 * n
            add(name, {"N": n}, b)

    # reductions: sum over the last dim
    for (R, C) in ((65536, 4096), (1 << 20, 128), (4096, 65536), (16384, 1024)):
        def b(R=R, C=C):
            x = rnd(R, C)
            return (lambda i=0: x.sum(dim=-1)), 2 * (R * C + R)
        add("reduce_sum", {"R": R, "C": C}, b)

    # norms: rows x {128, 512, 4096}
    for (R, D) in ((1 << 20, 128), (1 << 18, 512), (1 << 15, 4096), (8192, 4096)):
        def bl(R=R, D=D):
            x, w, bb = rnd(R, D), rnd(D), rnd(D)
            return (lambda i=0: F.layer_norm(x, (D,), w, bb)), 2 * (2 * R * D + 2 * D)

        def br(R=R, D=D):
            x, w = rnd(R, D), rnd(D)
            return (lambda i=0: F.rms_norm(x, (D,), w)), 2 * (2 * R * D + D)
        add("layernorm", {"R": R, "D": D}, bl)
        add("rmsnorm", {"R": R, "D": D}, br)

    # softmax over the last dim
    for (R, C) in ((1 << 20, 128), (1 << 17, 1024), (32768, 4096), (4096, 32768)):
        def b(R=R, C=C):
            x = rnd(R, C)
            return (lambda i=0: torch.softmax(x, dim=-1)), 4 * R * C
        add("softmax", {"R": R, "C": C}, b)

    # attention (SDPA): causal prefill with GQA, and decode (S=1, L=2048)
    for (wl, B, Hq, Hkv, S, L, D, causal) in (
            ("attention_causal", 4, 32, 8, 2048, 2048, 128, True),
            ("attention_causal", 1, 32, 8, 8192, 8192, 128, True),
            ("attention", 4, 32, 8, 1, 2048, 128, False),
            ("attention", 64, 32, 8, 1, 2048, 128, False),
            ("attention", 16, 32, 8, 1, 8192, 128, False)):
        def b(B=B, Hq=Hq, Hkv=Hkv, S=S, L=L, D=D, causal=causal):
            q, k, v = rnd(B, Hq, S, D), rnd(B, Hkv, L, D), rnd(B, Hkv, L, D)
            try:
                F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=True)
                return (lambda i=0: F.scaled_dot_product_attention(
                    q, k, v, is_causal=causal, enable_gqa=True)), \
                    2 * (2 * B * Hq * S * D + 2 * B * Hkv * L * D)
            except Exception as ex:  # no enable_gqa: expand K/V outside the timed region
                print("enable_gqa failed:", ex, flush=True)
                kk = k.repeat_interleave(Hq // Hkv, dim=1)
                vv = v.repeat_interleave(Hq // Hkv, dim=1)
                return (lambda i=0: F.scaled_dot_product_attention(q, kk, vv, is_causal=causal)), \
                    2 * (2 * B * Hq * S * D + 2 * B * Hq * L * D)
        add(wl, {"B": B, "Hq": Hq, "Hkv": Hkv, "S": S, "L": L, "D": D}, b)

    # embedding lookups (gather of rows)
    for (R, D, I) in ((128256, 4096, 4096), (128256, 4096, 32768), (1 << 20, 128, 393216)):
        def b(R=R, D=D, I=I):
            t = rnd(R, D)
            idx = torch.randint(0, R, (I,), device=DEV, dtype=torch.int64)
            return (lambda i=0: F.embedding(idx, t)), 2 * 2 * I * D + 8 * I
        add("embedding", {"R": R, "D": D, "I": I}, b)
    for (R, D, I) in ((65536, 128, 393216), (1 << 20, 256, 1 << 20)):
        def b(R=R, D=D, I=I):
            x = rnd(R, D)
            idx = torch.randint(0, R, (I,), device=DEV, dtype=torch.int64)
            return (lambda i=0: torch.index_select(x, 0, idx)), 2 * 2 * I * D + 8 * I
        add("index_select", {"R": R, "D": D, "I": I}, b)

    # scatter-add: E rows of D into N rows (output zero-initialised: the fill is timed too)
    for (E, N, D) in ((393216, 65536, 128), (1 << 20, 65536, 128), (393216, 8192, 128)):
        def b(E=E, N=N, D=D):
            src = rnd(E, D)
            idx = torch.randint(0, N, (E,), device=DEV, dtype=torch.int64)
            return (lambda i=0: torch.zeros(N, D, device=DEV, dtype=BF).index_add_(0, idx, src)), \
                2 * E * D + 8 * E + 2 * N * D
        add("index_add", {"E": E, "N": N, "D": D}, b)

    # concat along the last dim
    for (R, C1, C2) in ((16384, 4096, 4096), (65536, 1024, 128), (8192, 14336, 4096)):
        def b(R=R, C1=C1, C2=C2):
            a, c = rnd(R, C1), rnd(R, C2)
            return (lambda i=0: torch.cat([a, c], dim=1)), 2 * 2 * R * (C1 + C2)
        add("concat", {"R": R, "C1": C1, "C2": C2}, b)

    if QUICK:
        seen, Q = set(), []
        for e in OPS:
            if e[0] not in seen:
                seen.add(e[0])
                Q.append(e)
        OPS = Q
    return OPS


def params_str(p):
    return " ".join(f"{k}={v}" for k, v in p.items())


def bench_ops(out_path, profile=False):
    flush_buf = torch.empty(256 << 20, dtype=torch.uint8, device=DEV)
    flush = lambda: flush_buf.fill_(7)
    res, order = [], []
    for wl, params, build in op_list():
        fn, min_bytes = build()
        torch.cuda.synchronize()
        key = f"{wl} {params_str(params)}"
        if profile:
            fn()
            fn()
            torch.cuda.synchronize()
            torch.cuda.profiler.start()
            torch.cuda._sleep(100)  # marker kernel between ops
            fn()
            torch.cuda.synchronize()
            torch.cuda.profiler.stop()
            order.append({"workload": wl, "params": params, "key": key})
        else:
            # estimate the time to choose repeats
            t0 = time.perf_counter()
            fn()
            torch.cuda.synchronize()
            est = time.perf_counter() - t0
            reps = int(max(15, min(100, 0.3 / max(est, 1e-6))))
            if QUICK:
                reps = 3
            med, ts = events_median(fn, reps, flush=flush)
            ts.sort()
            res.append({"workload": wl, "params": params, "key": key, "time_s": med,
                        "time_p10_s": ts[len(ts) // 10], "time_p90_s": ts[(9 * len(ts)) // 10],
                        "reps": reps, "min_dram_bytes": min_bytes})
            print(f"{key:50s} {med*1e6:10.1f} us  min-bytes {min_bytes/1e6:9.1f} MB "
                  f"-> {min_bytes/med/1e9:7.0f} GB/s", flush=True)
        del fn
        torch.cuda.empty_cache()
    out = {"torch": torch.__version__, "cuda": torch.version.cuda,
           "cublas": torch.backends.cuda.preferred_blas_library().name
           if hasattr(torch.backends.cuda, "preferred_blas_library") else "cuBLAS",
           "flush_bytes": 256 << 20}
    if profile:
        out["order"] = order
    else:
        out["ops"] = res
    json.dump(out, open(out_path, "w"), indent=1)


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if len(args) != 2 or args[0] not in ("gemm", "ops", "prof"):
        print(__doc__)
        sys.exit(2)
    torch.manual_seed(0)
    if args[0] == "gemm":
        bench_gemm(args[1])
    elif args[0] == "ops":
        bench_ops(args[1])
    else:
        bench_ops(args[1], profile=True)
