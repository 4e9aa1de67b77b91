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

usage: OUT=DIR python3 hw/calibrate/apps/short_probe.py [--no-ncu] [--copies K]
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
CHILD = "--ncu-child" in sys.argv
NO_NCU = "--no-ncu" in sys.argv
# --copies K: each case is K copies of the op on K distinct inputs in one CUDA graph, so that a
# replay's time / K is one kernel inside a graph (its launch gap included, the host's graph launch
# latency of ~3.5-4 us amortized); K = 1 (the default) is the op alone
COPIES = int(sys.argv[sys.argv.index("--copies") + 1]) if "--copies" in sys.argv else 1
sys.argv = [sys.argv[0]]

import run_apps as ra  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

OUT = os.environ.get("OUT", "/tmp/short_probe")
MAX_ELEMS = 64 << 20
COL_R = (256, 1024, 4096, 16384, 65536, 262144)
COL_C = (64, 128, 256, 512, 1024, 4096)
NORM_R = (1, 4, 16, 64, 256, 1024, 4096)
NORM_D = (512, 1024, 4096, 8192)
METHOD = ("eager x.sum(0) (bf16 [R, C]), F.layer_norm (weight, bias) and F.rms_norm (weight) in "
          "a CUDA graph, median replay after a 256 MiB flush (cold L2)")


def cases():
    """(kind, R, C): column sums first (the larger set), then the two norms."""
    out = [("colsum", R, C, COPIES) for R in COL_R for C in COL_C if R * C <= MAX_ELEMS]
    for kind in ("layernorm", "rmsnorm"):
        out += [(kind, R, D, COPIES) for D in NORM_D for R in NORM_R]
    return out


def make(kind, R, C, copies=1):
    xs = [ra.rnd(R, C) for _ in range(copies)]
    if kind == "colsum":
        return lambda: [x.sum(0) for x in xs]
    ws = [(1 + 0.1 * torch.randn(C, device=ra.DEV)).to(torch.bfloat16) for _ in range(copies)]
    if kind == "layernorm":
        bs = [(0.1 * torch.randn(C, device=ra.DEV)).to(torch.bfloat16) for _ in range(copies)]
        return lambda: [F.layer_norm(x, (C,), w, b) for x, w, b in zip(xs, ws, bs)]
    return lambda: [F.rms_norm(x, (C,), w) for x, w in zip(xs, ws)]


if __name__ == "__main__":
    if CHILD:
        ra.probe_child(cases(), make)
    else:
        ra.probe_main(OUT, "short_probe", ("kind", "R", "C", "copies"), cases(), make, METHOD,
                      "regex:norm|reduce", __file__, NO_NCU, 500)
