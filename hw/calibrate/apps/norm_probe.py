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
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
CHILD = "--ncu-child" in sys.argv
NO_NCU = "--no-ncu" in sys.argv
sys.argv = [sys.argv[0]]

import run_apps as ra  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

OUT = os.environ.get("OUT", "/tmp/norm_probe")
DS = (64, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096)
ELEMS = 64 << 20
METHOD = ("eager F.layer_norm / F.rms_norm (bf16, weight, bias for layer_norm) in a CUDA graph, "
          "median replay after a 256 MiB flush (cold L2)")


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


if __name__ == "__main__":
    if CHILD:
        ra.probe_child(cases(), make)
    else:
        ra.probe_main(OUT, "norm_probe", ("kind", "R", "D"), cases(), make, METHOD,
                      "regex:norm", __file__, NO_NCU, 400)
