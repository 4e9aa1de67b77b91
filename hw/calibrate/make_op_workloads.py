#!/usr/bin/env python3
"""Write the single-operator workloads validation/h200-ops/*.json (docs/formats.md) that
validation/h200-ops.csv refers to; shapes are params, overridden per CSV row. Stdlib only."""
import json
import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DIR = os.path.join(ROOT, "validation", "h200-ops")
SRC = ("Single-operator workload for the H200 per-operator truth table (validation/h200-ops.csv); "
       "measured with PyTorch {how} in bf16 by hw/calibrate/torch_bench.py; shapes come from the "
       "CSV's params column.")


def w(name, params, tensors, ops, how):
    d = {"name": name, "source": SRC.format(how=how), "params": params, "tensors": tensors,
         "ops": ops}
    with open(os.path.join(DIR, name + ".json"), "w") as f:
        json.dump(d, f, indent=2)
        f.write("\n")


def T(shape, kind=None, dtype="bf16"):
    d = {"shape": shape, "dtype": dtype}
    if kind:
        d["kind"] = kind
    return d


def main():
    os.makedirs(DIR, exist_ok=True)
    w("gemm", {"M": 4096, "N": 4096, "K": 4096},
      {"a": T(["M", "K"], "input"), "b": T(["K", "N"], "weight"), "c": T(["M", "N"], "output")},
      [{"name": "mm", "type": "matmul", "inputs": ["a", "b"], "outputs": ["c"]}],
      "torch.matmul (cuBLAS)")
    for op in ("add", "mul"):
        w(op, {"N": 1 << 26},
          {"a": T(["N"], "input"), "b": T(["N"], "input"), "y": T(["N"], "output")},
          [{"name": op, "type": op, "inputs": ["a", "b"], "outputs": ["y"]}], f"torch.{op}")
    for op, how in (("relu", "torch.relu"), ("gelu", "F.gelu (erf)"), ("silu", "F.silu")):
        w(op, {"N": 1 << 26}, {"x": T(["N"], "input"), "y": T(["N"], "output")},
          [{"name": op, "type": op, "inputs": ["x"], "outputs": ["y"]}], how)
    w("reduce_sum", {"R": 65536, "C": 4096},
      {"x": T(["R", "C"], "input"), "y": T(["R"], "output")},
      [{"name": "sum", "type": "reduce", "inputs": ["x"], "outputs": ["y"],
        "attrs": {"op": "sum", "axes": [-1], "keepdim": False}}], "x.sum(dim=-1)")
    w("layernorm", {"R": 32768, "D": 4096},
      {"x": T(["R", "D"], "input"), "g": T(["D"], "weight"), "b": T(["D"], "weight"),
       "y": T(["R", "D"], "output")},
      [{"name": "ln", "type": "layernorm", "inputs": ["x", "g", "b"], "outputs": ["y"]}],
      "F.layer_norm")
    w("rmsnorm", {"R": 32768, "D": 4096},
      {"x": T(["R", "D"], "input"), "g": T(["D"], "weight"), "y": T(["R", "D"], "output")},
      [{"name": "rms", "type": "rmsnorm", "inputs": ["x", "g"], "outputs": ["y"]}], "F.rms_norm")
    w("softmax", {"R": 32768, "C": 4096},
      {"x": T(["R", "C"], "input"), "y": T(["R", "C"], "output")},
      [{"name": "sm", "type": "softmax", "inputs": ["x"], "outputs": ["y"], "attrs": {"axis": -1}}],
      "torch.softmax")
    att = {"q": T(["B", "Hq", "S", "D"], "input"), "k": T(["B", "Hkv", "L", "D"], "input"),
           "v": T(["B", "Hkv", "L", "D"], "input"), "o": T(["B", "Hq", "S", "D"], "output")}
    w("attention_causal", {"B": 4, "Hq": 32, "Hkv": 8, "S": 2048, "L": 2048, "D": 128}, att,
      [{"name": "sdpa", "type": "attention", "inputs": ["q", "k", "v"], "outputs": ["o"],
        "attrs": {"causal": True}}],
      "F.scaled_dot_product_attention(is_causal=True, enable_gqa=True)")
    w("attention", {"B": 4, "Hq": 32, "Hkv": 8, "S": 1, "L": 2048, "D": 128}, att,
      [{"name": "sdpa", "type": "attention", "inputs": ["q", "k", "v"], "outputs": ["o"],
        "attrs": {"causal": False}}],
      "F.scaled_dot_product_attention(enable_gqa=True), decode (S=1)")
    w("embedding", {"R": 128256, "D": 4096, "I": 4096},
      {"table": T(["R", "D"], "weight"), "idx": T(["I"], "input", "int64"),
       "y": T(["I", "D"], "output")},
      [{"name": "emb", "type": "embedding", "inputs": ["table", "idx"], "outputs": ["y"]}],
      "F.embedding")
    w("index_select", {"R": 65536, "D": 128, "I": 393216},
      {"x": T(["R", "D"], "input"), "idx": T(["I"], "input", "int64"),
       "y": T(["I", "D"], "output")},
      [{"name": "sel", "type": "index_select", "inputs": ["x", "idx"], "outputs": ["y"],
        "attrs": {"axis": 0}}], "torch.index_select")
    w("index_add", {"E": 393216, "N": 65536, "D": 128},
      {"src": T(["E", "D"], "input"), "idx": T(["E"], "input", "int64"),
       "y": T(["N", "D"], "output")},
      [{"name": "scatter", "type": "index_add", "inputs": ["src", "idx"], "outputs": ["y"],
        "attrs": {"axis": 0}}], "torch.zeros(N,D).index_add_(0, idx, src) (zero fill included)")
    w("concat", {"R": 16384, "C1": 4096, "C2": 4096},
      {"a": T(["R", "C1"], "input"), "b": T(["R", "C2"], "input"),
       "y": T(["R", "C1 + C2"], "output")},
      [{"name": "cat", "type": "concat", "inputs": ["a", "b"], "outputs": ["y"],
        "attrs": {"axis": 1}}], "torch.cat(dim=1)")
    print("wrote", DIR)


if __name__ == "__main__":
    main()
