"""bias_probe.py: cuBLAS linear with and without its bias, M = 64Ki..384Ki rows, K 128..384, N 128
and 256 (MGN's and NeRF's shapes), timed as run_apps.py's microbenchmarks (k input copies in one
CUDA graph, cold L2). Writes $OUT/bias_probe.json. usage: OUT=DIR python3 bias_probe.py
BIAS_SWEEP=1: the wider sweep instead (M 64Ki..384Ki x 12 (K, N) pairs, K 64..512 at N 128,
N 64..512 at K 128, and K = N 256, 384), to $OUT/bias_sweep.json."""
import os, sys, time
sys.argv = [sys.argv[0]]
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_apps as ra
import torch
import torch.nn.functional as F

def specs(quick=False):
    out = []
    L2 = 60 << 20
    def copies(nbytes):
        import math
        return int(max(2, min(32, math.ceil(3 * L2 / max(nbytes, 1)))))
    def linear(M, K, N, bias):
        def make(k):
            xs = [ra.rnd(M, K) for _ in range(k)]
            ws = [ra.rnd(N, K) for _ in range(k)]
            bs = [ra.rnd(N) for _ in range(k)] if bias else [None] * k
            return lambda i: F.linear(xs[i], ws[i], bs[i])
        return make, 2 * M * N * K, 2 * (M * K + N * K + M * N + (N if bias else 0))
    sweep = os.environ.get("BIAS_SWEEP") == "1"
    Ms = (65536, 131072, 262144, 393216) if sweep else (65536, 262144, 393216)
    KN = ((64, 128), (128, 128), (256, 128), (384, 128), (512, 128), (128, 64), (128, 192),
          (128, 256), (128, 384), (128, 512), (256, 256), (384, 384)) if sweep else \
        ((128, 128), (384, 128), (128, 256), (256, 256))
    for M in Ms:
        for K, N in KN:
            for bias in (False, True):
                mk, fl, by = linear(M, K, N, bias)
                out.append(("bias", "linear_%s" % ("bias" if bias else "nobias"),
                            {"M": M, "K": K, "N": N, "bias": int(bias)}, mk, fl, by, copies(by)))
    return out

ra.micro_specs = specs
out = os.environ.get("OUT", "/tmp")
ra.run_micro(os.path.join(out, "bias_sweep.json" if os.environ.get("BIAS_SWEEP") == "1"
                           else "bias_probe.json"), time.time() + 400)
