"""bmm_probe.py: cuBLAS's batched GEMMs of DLRM's feature interaction on the H200 (issue 12).

DLRM's interaction z = bmm(F, F^T) (F = [B, 27, 128] bf16) and its gradients (dZ @ F, dZ^T @ F:
[B, 27, 27] x [B, 27, 128]) run cuBLAS's legacy alignment-1 kernels, the wmma 32x32 one among
them. The model costs every alignment-1 tile with the 128x128/64x64 kernels' per-tile set-up
(hw kernels.gemm_align1_tile_clk); the traces show the wmma kernel much cheaper per tile at
short K. This probe times torch.bmm over K (the forward shape [B, 27, K] x [B, K, 27]) and over
N (the gradient shape [B, 27, 27] x [B, 27, N]) at two batch sizes, with the kernels each launched
(name, grid, block): the median CUDA-graph replay after a 256 MiB flush (cold L2). Nothing
changes clocks, power limits or modes.

usage: OUT=DIR python3 hw/calibrate/apps/bmm_probe.py
"""
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.argv = [sys.argv[0]]

import run_apps as ra  # noqa: E402
import torch  # noqa: E402

OUT = os.environ.get("OUT", "/tmp/bmm_probe")
T0 = time.time()


def cases():
    out = []
    for B in (4096, 16384):
        for K in (8, 16, 27, 48, 64, 96, 128, 192, 256, 512):
            out.append(("fwd", B, 27, 27, K))
        for N in (16, 27, 32, 64, 96, 128, 256):
            out.append(("grad", B, 27, N, 27))
    for M in (16, 27, 32, 48, 64):
        out.append(("fwd", 4096, M, M, 128))
    return out


def make(kind, B, M, N, K):
    if kind == "fwd":
        a = ra.rnd(B, M, K)
        b = ra.rnd(B, N, K)
        return lambda: torch.bmm(a, b.transpose(1, 2))
    a = ra.rnd(B, M, K)
    b = ra.rnd(B, K, N)
    return lambda: torch.bmm(a, b)


def main():
    os.makedirs(OUT, exist_ok=True)
    flush = ra.Flusher()
    res = {"env": {"torch": torch.__version__, "gpu": torch.cuda.get_device_name()},
           "method": "torch.bmm in bf16 in a CUDA graph, median replay after a 256 MiB flush",
           "cases": []}
    for kind, B, M, N, K in cases():
        e = {"kind": kind, "B": B, "M": M, "N": N, "K": K}
        try:
            fn = make(kind, B, M, N, K)
            q, e["kernels"] = ra.time_graph(fn, flush, target_s=0.05)
            e["time_s"] = q["median"]
            e["replay"] = q
            print("[%6.1fs] %-4s B=%-6d M=%-3d N=%-4d K=%-4d %8.2f us  %s" % (
                time.time() - T0, kind, B, M, N, K, q["median"] * 1e6, " | ".join(
                    "%s %s x %s %.2fus" % (k[0][:70], k[1], k[2], k[3]) for k in e["kernels"])),
                flush=True)
            del fn
        except Exception as ex:
            e["error"] = "%s: %s" % (type(ex).__name__, str(ex)[:300])
            print(kind, B, M, N, K, "failed:", e["error"], flush=True)
        torch.cuda.empty_cache()
        res["cases"].append(e)
        ra.atomic_json(os.path.join(OUT, "bmm_probe.json"), res)


if __name__ == "__main__":
    main()
