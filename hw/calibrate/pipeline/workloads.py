#!/usr/bin/env python3
"""Workload graphs of exactly the pipelines hw/calibrate/pipeline runs (standard-library Python).

  python3 hw/calibrate/pipeline/workloads.py [DEST]   (default validation/pipeline/workloads)

Each graph holds only what the CUDA runtime computes, at its default sizes, so that
`kitsune map --stages ... --alloc ... --tile ...` predicts the pipeline that was timed:
  mgn-edge.json     MGN edge block (workloads/mgn.json's edge ops): gather, concat, 3 Linear,
                    LayerNorm, residual; e_out is the only output (the runtime writes no message)
  mgn-edge-mc.json  the same with the residual taking e from e_in's first 128 columns (a free
                    slice), as the runtime's mgn-mc variant does: e_in is multicast
  nerf-trunk.json   NeRF trunk fc1..fc8 with ReLU and the skip concat before fc6; x padded to 64
                    columns as the runtime takes it; a8 is the output (no heads)
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))


def mgn(mc):
    t = {
        "v": {"shape": ["N", "L"], "dtype": "bf16", "kind": "input"},
        "e": {"shape": ["E", "L"], "dtype": "bf16", "kind": "input"},
        "senders": {"shape": ["E"], "dtype": "int64", "kind": "input"},
        "receivers": {"shape": ["E"], "dtype": "int64", "kind": "input"},
        "v_src": {"shape": ["E", "L"], "dtype": "bf16"},
        "v_dst": {"shape": ["E", "L"], "dtype": "bf16"},
        "e_in": {"shape": ["E", "3*L"], "dtype": "bf16"},
    }
    ops = [
        {"name": "gather_src", "type": "index_select", "inputs": ["v", "senders"],
         "outputs": ["v_src"], "attrs": {"axis": 0}},
        {"name": "gather_dst", "type": "index_select", "inputs": ["v", "receivers"],
         "outputs": ["v_dst"], "attrs": {"axis": 0}},
        {"name": "edge_cat", "type": "concat", "inputs": ["e", "v_src", "v_dst"],
         "outputs": ["e_in"], "attrs": {"axis": 1}},
    ]
    prev, width = "e_in", "3*L"
    for k in (1, 2, 3):
        w, b, h = "edge_fc%d_w" % k, "edge_fc%d_b" % k, "edge_h%d" % k
        t[w] = {"shape": [width, "L"], "dtype": "bf16", "kind": "weight"}
        t[b] = {"shape": ["L"], "dtype": "bf16", "kind": "weight"}
        t[h] = {"shape": ["E", "L"], "dtype": "bf16"}
        ops.append({"name": "edge_fc%d" % k, "type": "linear", "inputs": [prev, w, b],
                    "outputs": [h]})
        prev, width = h, "L"
        if k < 3:
            a = "edge_a%d" % k
            t[a] = {"shape": ["E", "L"], "dtype": "bf16"}
            ops.append({"name": "edge_relu%d" % k, "type": "relu", "inputs": [h],
                        "outputs": [a]})
            prev = a
    t["edge_ln_g"] = {"shape": ["L"], "dtype": "bf16", "kind": "weight"}
    t["edge_ln_b"] = {"shape": ["L"], "dtype": "bf16", "kind": "weight"}
    t["edge_msg"] = {"shape": ["E", "L"], "dtype": "bf16"}
    t["e_out"] = {"shape": ["E", "L"], "dtype": "bf16", "kind": "output"}
    ops.append({"name": "edge_ln", "type": "layernorm",
                "inputs": ["edge_h3", "edge_ln_g", "edge_ln_b"], "outputs": ["edge_msg"]})
    res_e = "e"
    if mc:
        t["e_again"] = {"shape": ["E", "L"], "dtype": "bf16"}
        ops.append({"name": "e_slice", "type": "slice", "inputs": ["e_in"],
                    "outputs": ["e_again"],
                    "attrs": {"axis": 1, "start": 0, "end": 128, "copy": False}})
        res_e = "e_again"
    ops.append({"name": "edge_res", "type": "add", "inputs": [res_e, "edge_msg"],
                "outputs": ["e_out"]})
    return {
        "name": "mgn-edge-mc" if mc else "mgn-edge",
        "source": "The MGN edge block exactly as hw/calibrate/pipeline/ktpipe.cu runs it "
                  "(workloads/mgn.json's edge ops at its default sizes; the message is not "
                  "written, only e_out)" + ("; the residual reads e from e_in's first 128 "
                  "columns (mgn-mc: e_in multicast to fc1 and ln_res)" if mc else ""),
        "params": {"N": 65536, "E": 393216, "L": 128},
        "tensors": t, "ops": ops}


def nerf():
    t = {"x": {"shape": ["B", 64], "dtype": "bf16", "kind": "input"}}
    ops = []
    prev, width = "x", 64
    for k in range(1, 9):
        if k == 6:
            t["skip"] = {"shape": ["B", 64 + 256], "dtype": "bf16"}
            ops.append({"name": "skip_cat", "type": "concat", "inputs": ["x", prev],
                        "outputs": ["skip"], "attrs": {"axis": 1}})
            prev, width = "skip", 320
        w, b, h, a = "fc%d_w" % k, "fc%d_b" % k, "h%d" % k, "a%d" % k
        t[w] = {"shape": [width, "W"], "dtype": "bf16", "kind": "weight"}
        t[b] = {"shape": ["W"], "dtype": "bf16", "kind": "weight"}
        t[h] = {"shape": ["B", "W"], "dtype": "bf16"}
        t[a] = {"shape": ["B", "W"], "dtype": "bf16", **({"kind": "output"} if k == 8 else {})}
        ops.append({"name": "fc%d" % k, "type": "linear", "inputs": [prev, w, b], "outputs": [h]})
        ops.append({"name": "relu%d" % k, "type": "relu", "inputs": [h], "outputs": [a]})
        prev, width = a, "W"
    return {
        "name": "nerf-trunk",
        "source": "The NeRF trunk exactly as hw/calibrate/pipeline/ktpipe.cu runs it "
                  "(workloads/nerf.json's fc1..fc8 with ReLU and the skip concat before fc6; x "
                  "padded from 63 to 64 columns, no sigma/rgb heads; a8 is the output)",
        "params": {"B": 262144, "W": 256},
        "tensors": t, "ops": ops}


def main():
    dest = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "validation", "pipeline",
                                                              "workloads")
    os.makedirs(dest, exist_ok=True)
    for g in (mgn(False), mgn(True), nerf()):
        with open(os.path.join(dest, g["name"] + ".json"), "w") as f:
            json.dump(g, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
