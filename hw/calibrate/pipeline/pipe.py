#!/usr/bin/env python3
"""Driver for libktpipe.so: builds the MGN edge block and the NeRF trunk as spatial pipelines,
checks them against PyTorch, times them, sweeps allocations, and times the same blocks
bulk-synchronously (PyTorch eager in a CUDA graph) and under torch.compile (in a CUDA graph).

  python3 pipe.py selftest [--out DIR]                 small sizes, many allocations, correctness
  python3 pipe.py sweep --out DIR [--deadline S] [--quick]   full sizes, allocation sweep
  python3 pipe.py prof --out DIR [--alloc-json F]      one run of each case, for Nsight Compute
                                                       (run under ncu --profile-from-start off)
  python3 pipe.py one --pipe mgn --tm 128 --alloc 12-40-24-24-32 [--minb 1]   one case

Every pipeline run: the output is filled with NaN, the pipeline runs, the output must be NaN-free
and within rel. error 1e-2 of an fp32 PyTorch reference (||out - ref|| / ||ref||); the same
check is repeated on the output of the last timed repetition. Timing: CUDA events around the
kernel only, a 256 MiB read between repetitions evicts L2 (outside the events), median of reps.
"""
import argparse
import ctypes
import json
import math
import os
import random
import statistics
import subprocess
import sys
import time
import zlib

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
DEV = "cuda"
BF = torch.bfloat16
SEG_NONE, SEG_QUEUE, SEG_GLOBAL, SEG_GATHER = 0, 1, 2, 3
ST_GEMM, ST_COPY, ST_LN, ST_ADD = 1, 2, 3, 4
TOL = 1e-2
IMPL_NAMES = {0: "wmma", 1: "mma"}


def log(*a):
    print(*a, flush=True)


# ------------------------------------------------------------------ library
_lib = None


def lib():
    global _lib
    if _lib is not None:
        return _lib
    path = os.environ.get("KTP_LIB", os.path.join(HERE, "build", "libktpipe.so"))
    L = ctypes.CDLL(path)
    vp, ci, ll = ctypes.c_void_p, ctypes.c_int, ctypes.c_longlong
    L.ktp_create.restype = vp
    L.ktp_create.argtypes = [ci, ci]
    L.ktp_msg.restype = ctypes.c_char_p
    L.ktp_msg.argtypes = [vp]
    L.ktp_add_queue.argtypes = [vp, ci, ci, ci]
    L.ktp_add_stage.argtypes = [vp, ci, ci, ci]
    L.ktp_set_seg.argtypes = [vp, ci, ci, ci, ci, vp, vp, ll, ci, ci]
    L.ktp_set_gemm.argtypes = [vp, ci, vp, vp, ci, ci, ci]
    L.ktp_set_ln.argtypes = [vp, ci, vp, vp, ctypes.c_float]
    L.ktp_set_timeout.argtypes = [vp, ctypes.c_double]
    L.ktp_set_order.argtypes = [vp, ci]
    L.ktp_set_sm_order.argtypes = [vp, ctypes.POINTER(ci), ci]
    L.ktp_set_trace.argtypes = [vp, ci]
    L.ktp_trace.argtypes = [vp, ctypes.POINTER(ll), ll]
    L.ktp_prepare.argtypes = [vp, ci, ci]
    L.ktp_reset.argtypes = [vp, vp]
    L.ktp_kernel.argtypes = [vp, vp]
    L.ktp_clear_err.argtypes = [vp]
    L.ktp_errors.argtypes = [vp, ctypes.POINTER(ci)]
    L.ktp_prof.argtypes = [vp, ctypes.POINTER(ll), ci]
    L.ktp_info.argtypes = [vp, ctypes.POINTER(ci)]
    L.ktp_destroy.argtypes = [vp]
    _lib = L
    return L


def ptr(t):
    return ctypes.c_void_p(t.data_ptr()) if t is not None else ctypes.c_void_p(0)


class Pipe:
    """Thin builder over the C API. Segments: ('q', qid, col, width) | ('g', tensor, col, width)
    | ('x', tensor, index, col, width)."""

    def __init__(self, tm, rows):
        self.L = lib()
        self.h = self.L.ktp_create(tm, rows)
        self.tm, self.rows = tm, rows
        self.names, self.keep, self.ok = [], [], False

    def queue(self, width, ncons, slots):
        return self.L.ktp_add_queue(self.h, width, ncons, slots)

    def _seg(self, s, which, seg):
        k = seg[0]
        if k == "q":
            _, q, col, width = seg
            r = self.L.ktp_set_seg(self.h, s, which, SEG_QUEUE, q, None, None, 0, col, width)
        elif k == "g":
            _, t, col, width = seg
            self.keep.append(t)
            r = self.L.ktp_set_seg(self.h, s, which, SEG_GLOBAL, -1, ptr(t), None, t.stride(0), col,
                                   width)
        elif k == "x":
            _, t, idx, col, width = seg
            self.keep += [t, idx]
            r = self.L.ktp_set_seg(self.h, s, which, SEG_GATHER, -1, ptr(t), ptr(idx), t.stride(0),
                                   col, width)
        else:
            raise ValueError(seg)
        assert r == 0

    def stage(self, name, kind, ctas, segs, out, tensor=False, gemm=None, ln=None, res=None):
        s = self.L.ktp_add_stage(self.h, kind, ctas, 1 if tensor else 0)
        assert s >= 0
        self.names.append(name)
        for i, g in enumerate(segs):
            self._seg(s, i, g)
        if res is not None:
            self._seg(s, 3, res)
        if out[0] == "q":
            self.L.ktp_set_seg(self.h, s, 4, SEG_QUEUE, out[1], None, None, 0, 0, 0)
        else:
            t = out[1]
            self.keep.append(t)
            self.L.ktp_set_seg(self.h, s, 4, SEG_GLOBAL, -1, ptr(t), None, t.stride(0), 0, t.shape[1])
        if gemm is not None:
            W, b, relu = gemm
            self.keep += [W, b]
            self.L.ktp_set_gemm(self.h, s, ptr(W), ptr(b), W.shape[1], W.shape[0], 1 if relu else 0)
        if ln is not None:
            g, b = ln
            self.keep += [g, b]
            self.L.ktp_set_ln(self.h, s, ptr(g), ptr(b), ctypes.c_float(1e-5))
        return s

    def prepare(self, minb=1, timeout_s=2.0, impl=1, order=0, sm_key=None, trace=False):
        self.L.ktp_set_timeout(self.h, ctypes.c_double(timeout_s))
        self.L.ktp_set_order(self.h, order)
        self.L.ktp_set_trace(self.h, 1 if trace else 0)
        if sm_key:
            self.L.ktp_set_sm_order(self.h, (ctypes.c_int * len(sm_key))(*sm_key), len(sm_key))
        r = self.L.ktp_prepare(self.h, minb, impl)
        self.msg = self.L.ktp_msg(self.h).decode()
        self.ok = r == 0
        return r

    def info(self):
        a = (ctypes.c_int * 6)()
        self.L.ktp_info(self.h, a)
        return dict(smem=a[0], ctas_per_sm=a[1], sms=a[2], total=a[3], variant=a[4], regs=a[5])

    def launch(self, stream=None):
        st = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream if stream is None else stream)
        assert self.L.ktp_reset(self.h, st) == 0
        assert self.L.ktp_kernel(self.h, st) == 0, self.L.ktp_msg(self.h)

    def reset(self):
        st = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
        assert self.L.ktp_reset(self.h, st) == 0

    def kernel(self):
        st = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
        r = self.L.ktp_kernel(self.h, st)
        assert r == 0, self.L.ktp_msg(self.h)

    def errors(self):
        a = (ctypes.c_int * 5)()
        r = self.L.ktp_errors(self.h, a)
        if r != 0:
            return [-100, r, 0, 0, 0], self.L.ktp_msg(self.h).decode()
        return list(a), ""

    def clear_err(self):
        self.L.ktp_clear_err(self.h)

    def trace(self, nst, ntiles):
        """The last launch's per-(stage, tile) clock64 marks: [stage][tile] = (inputs held,
        before the output-slot wait, after it, done)."""
        n = nst * ntiles * 4
        a = (ctypes.c_longlong * n)()
        assert self.L.ktp_trace(self.h, a, n) == 0
        return [[tuple(a[(si * ntiles + t) * 4:(si * ntiles + t) * 4 + 4]) for t in range(ntiles)]
                for si in range(nst)]

    def prof(self):
        n = self.info()["total"]
        a = (ctypes.c_longlong * (8 * n))()
        self.L.ktp_prof(self.h, a, 8 * n)
        return [list(a[8 * i:8 * i + 8]) for i in range(n)]

    def close(self):
        if self.h:
            self.L.ktp_destroy(self.h)
            self.h = None


# ------------------------------------------------------------------ workloads
def mgn_data(E, N, L=128, seed=0):
    g = torch.Generator(device=DEV).manual_seed(seed)
    r = lambda *s, sc=1.0: (torch.randn(*s, device=DEV, generator=g) * sc)
    d = {
        "e": r(E, L).to(BF), "v": r(N, L).to(BF),
        "snd": torch.randint(0, N, (E,), device=DEV, generator=g, dtype=torch.int64),
        "rcv": torch.randint(0, N, (E,), device=DEV, generator=g, dtype=torch.int64),
        "W1": r(L, 3 * L, sc=(3 * L) ** -0.5).to(BF), "b1": r(L, sc=0.1).to(BF),
        "W2": r(L, L, sc=L ** -0.5).to(BF), "b2": r(L, sc=0.1).to(BF),
        "W3": r(L, L, sc=L ** -0.5).to(BF), "b3": r(L, sc=0.1).to(BF),
        "g": (1 + r(L, sc=0.1)).to(BF), "bt": r(L, sc=0.1).to(BF),
    }
    d["out"] = torch.empty(E, L, device=DEV, dtype=BF)
    d["E"], d["N"], d["L"] = E, N, L
    return d


def mgn_fn(e, v, snd, rcv, W1, b1, W2, b2, W3, b3, g, bt):
    """The MGN edge block exactly as workloads/mgn.json orders it (gather_src, gather_dst,
    edge_cat, edge_fc1, relu, edge_fc2, relu, edge_fc3, edge_ln, edge_res)."""
    vs = v.index_select(0, snd)
    vd = v.index_select(0, rcv)
    x = torch.cat([e, vs, vd], 1)
    h = F.relu(F.linear(x, W1, b1))
    h = F.relu(F.linear(h, W2, b2))
    h = F.linear(h, W3, b3)
    m = F.layer_norm(h, (h.shape[1],), g, bt, 1e-5)
    return e + m


def mgn_args(d, dt=None):
    ks = ["e", "v", "snd", "rcv", "W1", "b1", "W2", "b2", "W3", "b3", "g", "bt"]
    return [d[k] if (dt is None or d[k].dtype == torch.int64) else d[k].to(dt) for k in ks]


def mgn_ref(d):
    return mgn_fn(*mgn_args(d, torch.float32))


MGN_STAGES = {
    "mgn": ["cat", "fc1", "fc2", "fc3", "ln_res"],
    "mgn-fused": ["fc1_gather", "fc2", "fc3", "ln_res"],
    "mgn-split": ["cat", "fc1", "fc2", "fc3", "ln", "res"],
    "mgn-mc": ["cat", "fc1", "fc2", "fc3", "ln_res"],
}


def build_mgn(d, arch, alloc, tm, depth=2):
    E, L = d["E"], d["L"]
    names = MGN_STAGES[arch]
    assert len(alloc) == len(names), (arch, alloc)
    a = dict(zip(names, alloc))
    p = Pipe(tm, E)
    e, v, snd, rcv, out = d["e"], d["v"], d["snd"], d["rcv"], d["out"]
    sl = lambda *xs: depth * max(xs)
    cat_segs = [("g", e, 0, L), ("x", v, snd, 0, L), ("x", v, rcv, 0, L)]
    if arch == "mgn-fused":
        q1 = p.queue(L, 1, sl(a["fc1_gather"], a["fc2"]))
        p.stage("fc1_gather", ST_GEMM, a["fc1_gather"], cat_segs, ("q", q1), tensor=True,
                gemm=(d["W1"], d["b1"], True))
    else:
        mc = arch == "mgn-mc"
        if mc:  # e_in multicast to fc1 and to ln_res (which reads its first L columns as e)
            q0 = p.queue(3 * L, 2, depth * (a["cat"] + a["fc1"] + a["fc2"] + a["fc3"] + a["ln_res"]))
        else:
            q0 = p.queue(3 * L, 1, sl(a["cat"], a["fc1"]))
        p.stage("cat", ST_COPY, a["cat"], cat_segs, ("q", q0))
        q1 = p.queue(L, 1, sl(a["fc1"], a["fc2"]))
        p.stage("fc1", ST_GEMM, a["fc1"], [("q", q0, 0, 3 * L)], ("q", q1), tensor=True,
                gemm=(d["W1"], d["b1"], True))
    q2 = p.queue(L, 1, sl(a["fc2"], a["fc3"]))
    p.stage("fc2", ST_GEMM, a["fc2"], [("q", q1, 0, L)], ("q", q2), tensor=True,
            gemm=(d["W2"], d["b2"], True))
    nxt = "ln" if arch == "mgn-split" else "ln_res"
    q3 = p.queue(L, 1, sl(a["fc3"], a[nxt]))
    p.stage("fc3", ST_GEMM, a["fc3"], [("q", q2, 0, L)], ("q", q3), tensor=True,
            gemm=(d["W3"], d["b3"], False))
    if arch == "mgn-split":
        q4 = p.queue(L, 1, sl(a["ln"], a["res"]))
        p.stage("ln", ST_LN, a["ln"], [("q", q3, 0, L)], ("q", q4), ln=(d["g"], d["bt"]))
        p.stage("res", ST_ADD, a["res"], [("g", e, 0, L), ("q", q4, 0, L)], ("g", out))
    else:
        res = ("q", q0, 0, L) if arch == "mgn-mc" else ("g", e, 0, L)
        p.stage("ln_res", ST_LN, a["ln_res"], [("q", q3, 0, L)], ("g", out), ln=(d["g"], d["bt"]),
                res=res)
    return p


def nerf_data(B, PE=63, W=256, seed=1):
    g = torch.Generator(device=DEV).manual_seed(seed)
    r = lambda *s, sc=1.0: (torch.randn(*s, device=DEV, generator=g) * sc)
    x = (torch.rand(B, PE, device=DEV, generator=g) * 2 - 1).to(BF)
    Ws, bs = [], []
    for i in range(8):
        k = PE if i == 0 else (W + PE if i == 5 else W)
        Ws.append(r(W, k, sc=(2.0 / k) ** 0.5).to(BF))
        bs.append(r(W, sc=0.05).to(BF))
    # padded copies for the kernel: x -> [B, 64] (column 63 = 0); fc1 W -> [256, 64];
    # fc6 input is skip = cat([x, a5]) (x first, as workloads/nerf.json) -> [x64 | a5] = 320 wide
    xp = torch.zeros(B, 64, device=DEV, dtype=BF)
    xp[:, :PE] = x
    W1p = torch.zeros(W, 64, device=DEV, dtype=BF)
    W1p[:, :PE] = Ws[0]
    W6p = torch.zeros(W, 64 + W, device=DEV, dtype=BF)
    W6p[:, :PE] = Ws[5][:, :PE]
    W6p[:, 64:] = Ws[5][:, PE:]
    d = {"x": x, "Ws": Ws, "bs": bs, "xp": xp, "W1p": W1p, "W6p": W6p, "B": B, "W": W, "PE": PE,
         "out": torch.empty(B, W, device=DEV, dtype=BF)}
    return d


def nerf_fn(x, W0, b0, W1, b1, W2, b2, W3, b3, W4, b4, W5, b5, W6, b6, W7, b7):
    """NeRF trunk as workloads/nerf.json: fc1..fc8 each + ReLU, skip_cat = cat([x, a5]) before fc6."""
    Ws = [W0, W1, W2, W3, W4, W5, W6, W7]
    bs = [b0, b1, b2, b3, b4, b5, b6, b7]
    h = x
    for i in range(8):
        if i == 5:
            h = torch.cat([x, h], 1)
        h = F.relu(F.linear(h, Ws[i], bs[i]))
    return h


def nerf_args(d, dt=None):
    a = [d["x"]]
    for W, b in zip(d["Ws"], d["bs"]):
        a += [W, b]
    return [t.to(dt) for t in a] if dt is not None else a


def nerf_ref(d):
    return nerf_fn(*nerf_args(d, torch.float32))


NERF_STAGES = ["fc1", "fc2", "fc3", "fc4", "fc5", "fc6", "fc7", "fc8"]


def build_nerf(d, arch, alloc, tm, depth=2):
    B, W = d["B"], d["W"]
    assert len(alloc) == 8
    p = Pipe(tm, B)
    qs = []
    for i in range(7):
        qs.append(p.queue(W, 1, depth * max(alloc[i], alloc[i + 1])))
    for i in range(8):
        if i == 0:
            segs, Wt = [("g", d["xp"], 0, 64)], d["W1p"]
        elif i == 5:
            segs, Wt = [("g", d["xp"], 0, 64), ("q", qs[4], 0, W)], d["W6p"]
        else:
            segs, Wt = [("q", qs[i - 1], 0, W)], d["Ws"][i]
        out = ("q", qs[i]) if i < 7 else ("g", d["out"])
        p.stage(NERF_STAGES[i], ST_GEMM, alloc[i], segs, out, tensor=True,
                gemm=(Wt, d["bs"][i], True))
    return p


# ------------------------------------------------------------------ per-stage work estimates
def stage_work(pipe, arch, tm):
    """Estimated seconds per tile per CTA for each stage (tensor 2.5 TFLOP/s per CTA with wmma,
    60 GB/s per CTA of L2 traffic, 1.5 us of queue hand-off): used only to seed 'balanced'."""
    F_, B_, S_ = 2.5e12, 60e9, 1.5e-6
    gemm = lambda K, N: 2 * tm * K * N / F_ + tm * (K + N) * 2 / B_ + S_
    simt = lambda byts: byts / B_ + S_
    if pipe == "nerf":
        return [gemm(64, 256)] + [gemm(256, 256)] * 4 + [gemm(320, 256)] + [gemm(256, 256)] * 2
    L = 128
    w = {"cat": simt(tm * 3 * L * 2 * 2), "fc1": gemm(3 * L, L), "fc1_gather": gemm(3 * L, L) + 1e-6,
         "fc2": gemm(L, L), "fc3": gemm(L, L), "ln_res": simt(tm * L * 2 * 3),
         "ln": simt(tm * L * 2 * 2), "res": simt(tm * L * 2 * 3)}
    return [w[n] for n in MGN_STAGES[arch]]


def proportional(weights, total):
    s = sum(weights)
    raw = [max(1.0, total * w / s) for w in weights]
    a = [max(1, int(math.floor(x))) for x in raw]
    while sum(a) < total:
        i = max(range(len(a)), key=lambda j: raw[j] - a[j])
        a[i] += 1
    while sum(a) > total:
        i = max((j for j in range(len(a)) if a[j] > 1), key=lambda j: a[j] - raw[j])
        a[i] -= 1
    return a


def astr(a):
    return "-".join(str(x) for x in a)


# ------------------------------------------------------------------ timing helpers
class Flusher:
    def __init__(self):
        self.buf = torch.ones(64 << 20, device=DEV, dtype=torch.float32)  # 256 MiB

    def __call__(self):
        self.buf.sum()  # a read: evicts L2 and leaves only clean lines in it


def time_events(run, reps, flush, pre=None):
    st = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    en = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    for i in range(reps):
        flush()
        if pre is not None:
            pre()
        st[i].record()
        run()
        en[i].record()
    torch.cuda.synchronize()
    return [s.elapsed_time(e) * 1e-3 for s, e in zip(st, en)]


def rel_err(out, ref):
    o = out.float()
    if torch.isnan(o).any():
        return float("nan")
    return ((o - ref).norm() / ref.norm()).item()


# ------------------------------------------------------------------ one pipeline case
def run_case(ctx, pipe, arch, tm, alloc, minb=1, reps=21, kind="", depth=2, timeout_s=2.0,
             do_prof=True, impl=None, order=0, blocks=False, place=None, trace=False):
    if impl is None:
        impl = ctx.get("impl", 1)
    d = ctx["data"][pipe]
    ref = ctx["ref"][pipe]
    rec = {"pipeline": pipe, "arch": arch, "tile_rows": tm, "minb": minb, "alloc": astr(alloc),
           "stages": "-".join(MGN_STAGES[arch] if pipe == "mgn" else NERF_STAGES),
           "total_ctas": sum(alloc), "kind": kind, "depth": depth, "impl": IMPL_NAMES[impl]}
    build = build_mgn if pipe == "mgn" else build_nerf
    p = build(d, arch, alloc, tm, depth)
    try:
        r = p.prepare(minb, timeout_s, impl, order, sm_key(place) if place else None, trace)
        rec.update(p.info())
        rec["order"] = order
        if place:
            rec["place"] = place
        rec["msg"] = p.msg
        if r != 0:
            rec["status"] = "refused" if r == -2 else "error"
            return rec
        rows = d["E"] if pipe == "mgn" else d["B"]
        ntiles = rows // tm
        out = d["out"]
        # correctness run on a NaN-poisoned output
        out.fill_(float("nan"))
        p.launch()
        err, emsg = p.errors()
        if err[0] != 0:
            rec["status"] = "kernel-error"
            rec["err"] = err
            rec["msg"] += " " + emsg
            return rec
        rec["nan_free"] = not bool(torch.isnan(out).any().item())
        rec["rel_err"] = rel_err(out, ref)
        if pipe == "mgn":
            rec["rel_err_msg"] = rel_err(out.float() - d["e"].float(), ref - d["e"].float())
        # timing
        ts = time_events(p.kernel, reps, ctx["flush"], pre=p.reset)
        err, emsg = p.errors()
        rec["err"] = err
        rec["rel_err_last"] = rel_err(out, ref)
        ts_sorted = sorted(ts)
        med = statistics.median(ts)
        rec.update({"time_s": med, "time_min_s": ts_sorted[0],
                    "time_p90_s": ts_sorted[min(len(ts) - 1, (9 * len(ts)) // 10)], "reps": reps,
                    "tiles": ntiles, "tiles_per_s": ntiles / med})
        ok = (err[0] == 0 and rec["nan_free"] and rec["rel_err"] < TOL and rec["rel_err_last"] < TOL
              and (pipe != "mgn" or rec["rel_err_msg"] < TOL))
        rec["status"] = "ok" if ok else "wrong"
        if do_prof:
            pr = p.prof()
            names = p.names
            st = []
            for si, nm in enumerate(names):
                rows_ = [x for x in pr if x[0] == si]
                tot = sum(x[5] for x in rows_) or 1
                st.append({"stage": nm, "ctas": len(rows_),
                           "tiles": sum(x[2] for x in rows_),
                           "wait_in": round(sum(x[3] for x in rows_) / tot, 4),
                           "wait_out": round(sum(x[4] for x in rows_) / tot, 4),
                           "busy": round(1 - (sum(x[3] + x[4] for x in rows_)) / tot, 4),
                           "span_us": round(max((x[6] for x in rows_), default=0) / 1e3, 2),
                           "sms": len(set(x[7] for x in rows_))})
            rec["prof"] = st
            rec["distinct_sms"] = len(set(x[7] for x in pr))
            if trace:
                rec["service"] = service_stats(p.trace(len(names), ntiles), pr, a=alloc)
            if blocks:  # per block: stage, SM, wait_in and wait_out in 1/1000 of its cycles
                rec["blocks_stage_smid_win_wout_permille"] = [
                    [x[0], x[7], round(1000 * x[3] / max(1, x[5])), round(1000 * x[4] / max(1, x[5]))]
                    for x in pr]
        return rec
    finally:
        p.close()


# ------------------------------------------------------------------ bsp / torch.compile
def graph_of(fn, args):
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            out = fn(*args)
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        out = fn(*args)
    torch.cuda.synchronize()
    return g, out


def time_torch(ctx, pipe, mode, reps=31):
    d = ctx["data"][pipe]
    ref = ctx["ref"][pipe]
    fn = mgn_fn if pipe == "mgn" else nerf_fn
    args = mgn_args(d) if pipe == "mgn" else nerf_args(d)
    rec = {"pipeline": pipe, "mode": mode}
    t0 = time.time()
    if mode == "compile":
        torch._dynamo.reset()
        fn = torch.compile(fn)
        for _ in range(2):
            fn(*args)
        torch.cuda.synchronize()
        rec["compile_s"] = time.time() - t0
    try:
        g, out = graph_of(fn, args)
        run = g.replay
        rec["graph"] = True
    except Exception as ex:  # capture failed: time plain launches
        log(f"  {pipe} {mode}: CUDA graph capture failed ({type(ex).__name__}: {ex}); timing without")
        rec["graph"] = False
        rec["graph_error"] = f"{type(ex).__name__}: {ex}"[:300]
        res = {}

        def run():
            res["o"] = fn(*args)
        run()
        torch.cuda.synchronize()
        out = res["o"]
    out.fill_(float("nan"))
    run()
    torch.cuda.synchronize()
    if not rec["graph"]:
        out = res["o"]
    rec["rel_err"] = rel_err(out, ref)
    ts = time_events(run, reps, ctx["flush"])
    rec["time_s"] = statistics.median(ts)
    rec["time_min_s"] = min(ts)
    rec["reps"] = reps
    rows = d["E"] if pipe == "mgn" else d["B"]
    rec["rows"] = rows
    ctx.setdefault("torch_runs", {})[(pipe, mode)] = (run, out)
    return rec


# ------------------------------------------------------------------ sweep
def random_alloc(rng, n, total, around=None, sigma=0.5):
    """Dirichlet(1) shares (often very unbalanced), or, with `around`, the balanced shares times
    log-normal noise."""
    if around is None:
        w = [rng.expovariate(1.0) for _ in range(n)]
    else:
        w = [x * math.exp(rng.gauss(0.0, sigma)) for x in around]
    return proportional(w, total)


def neighbours(alloc, rng, count, maxtot):
    out = []
    n = len(alloc)
    cand = []
    for i in range(n):
        for j in range(n):
            if i == j:
                continue
            for dlt in (1, 2):
                if alloc[i] - dlt >= 1:
                    a = list(alloc)
                    a[i] -= dlt
                    a[j] += dlt
                    cand.append(a)
        for dlt in (1, 2):  # also shrink one stage (fewer CTAs in total)
            if alloc[i] - dlt >= 1:
                a = list(alloc)
                a[i] -= dlt
                cand.append(a)
    rng.shuffle(cand)
    for a in cand[:count]:
        if sum(a) <= maxtot:
            out.append(a)
    return out


def sweep_combo(ctx, pipe, arch, tm, minb, n_random, n_nbr, top, deadline, results, fh, extra=()):
    nst = len(MGN_STAGES[arch]) if pipe == "mgn" else 8
    maxtot = 132 * (2 if minb == 2 else 1)
    rng = random.Random(zlib.crc32(f"{pipe}|{arch}|{tm}|{minb}".encode()))
    w = stage_work(pipe, arch, tm)
    plan = [("balanced", proportional(w, maxtot)), ("equal", proportional([1] * nst, maxtot)),
            ("balanced-half", proportional(w, maxtot // 2))]
    for a in extra:
        plan.append(a)
    for i in range(n_random):
        if i % 2:
            plan.append(("random", random_alloc(rng, nst, maxtot)))
        else:
            plan.append(("random-near", random_alloc(rng, nst, maxtot, around=w)))
    for _ in range(max(1, n_random // 4)):
        plan.append(("random-small", random_alloc(rng, nst, rng.randint(nst + 4, maxtot - 8),
                                                  around=w)))
    # bad: the heaviest stage starved, and everything on the lightest
    heavy = max(range(nst), key=lambda i: w[i])
    b = proportional(w, maxtot)
    moved = b[heavy] - 2
    b[heavy] = 2
    light = min(range(nst), key=lambda i: w[i])
    b[light] += moved
    plan.append(("bad", b))
    seen = set()
    done = []

    def do(kind, a):
        if time.time() > deadline:
            return None
        key = astr(a)
        if key in seen:
            return None
        seen.add(key)
        rec = run_case(ctx, pipe, arch, tm, a, minb=minb, kind=kind)
        rec["wall"] = round(time.time() - ctx["t0"], 1)
        results.append(rec)
        fh.write(json.dumps(rec) + "\n")
        fh.flush()
        t = rec.get("time_s")
        log(f"  {pipe:5s} {arch:10s} tm{tm:<4d} x{minb} {kind:13s} {key:34s} "
            f"{(t or 0)*1e6:9.1f} us  err {rec.get('rel_err', float('nan')):.2e} {rec['status']}")
        if rec["status"] == "ok":
            done.append((t, a))
        return rec
    for kind, a in plan:
        do(kind, a)
    done.sort()
    for t, a in done[:top]:
        for nb in neighbours(a, rng, n_nbr, maxtot):
            do("neighbour", nb)
    # second round around the new best
    done.sort()
    if done:
        for nb in neighbours(done[0][1], rng, n_nbr, maxtot):
            do("neighbour2", nb)
    # queue depth (slots = depth x max CTAs of producer/consumer) at the best allocation, and the
    # other GEMM implementation at the best and the balanced allocation
    done.sort()
    if done and time.time() < deadline:
        a = done[0][1]
        alt = 1 - ctx.get("impl", 1)
        extra_runs = [(f"depth{dp}", a, dp, None) for dp in (1, 3, 4)]
        extra_runs += [("impl-alt-best", a, 2, alt), ("impl-alt-balanced", plan[0][1], 2, alt)]
        for kd, a, dp, im in extra_runs:
            rec = run_case(ctx, pipe, arch, tm, a, minb=minb, kind=kd, depth=dp, impl=im)
            rec["wall"] = round(time.time() - ctx["t0"], 1)
            results.append(rec)
            fh.write(json.dumps(rec) + "\n")
            fh.flush()
            log(f"  {pipe:5s} {arch:10s} tm{tm:<4d} x{minb} {kd:13s} {astr(a):34s} "
                f"{(rec.get('time_s') or 0)*1e6:9.1f} us  err {rec.get('rel_err', float('nan')):.2e} "
                f"{rec['status']}")


def env_info():
    pr = torch.cuda.get_device_properties(0)
    info = {"torch": str(torch.__version__), "cuda": str(torch.version.cuda),
            "gpu": str(torch.cuda.get_device_name(0)), "sms": int(pr.multi_processor_count),
            "l2_bytes": int(getattr(pr, "L2_cache_size", 0) or 0)}
    try:
        import subprocess
        q = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,clocks.sm,clocks.max.sm,"
                            "clocks.mem,power.limit,temperature.gpu", "--format=csv,noheader"],
                           capture_output=True, text=True, timeout=20)
        info["nvidia_smi"] = q.stdout.strip()
    except Exception as ex:
        info["nvidia_smi"] = f"unavailable: {ex}"
    return info


def make_ctx(mgn_size, nerf_size):
    ctx = {"t0": time.time(), "flush": Flusher(), "data": {}, "ref": {}}
    if mgn_size:
        E, N = mgn_size
        ctx["data"]["mgn"] = mgn_data(E, N)
        ctx["ref"]["mgn"] = mgn_ref(ctx["data"]["mgn"])
    if nerf_size:
        ctx["data"]["nerf"] = nerf_data(nerf_size)
        ctx["ref"]["nerf"] = nerf_ref(ctx["data"]["nerf"])
    torch.cuda.synchronize()
    return ctx


def cmd_selftest(args):
    ctx = make_ctx((16384, 4096), 16384)
    res = []
    cases = [
        ("mgn", "mgn", 128, [2, 4, 2, 2, 2], 1), ("mgn", "mgn", 64, [2, 4, 2, 2, 2], 1),
        ("mgn", "mgn", 128, [1, 1, 1, 1, 1], 1), ("mgn", "mgn", 64, [7, 3, 5, 2, 11], 2),
        ("mgn", "mgn", 128, [24, 40, 24, 20, 24], 1), ("mgn", "mgn", 64, [30, 80, 50, 50, 50], 2),
        ("mgn", "mgn-fused", 128, [5, 3, 3, 2], 1), ("mgn", "mgn-split", 128, [3, 5, 2, 2, 2, 1], 1),
        ("mgn", "mgn-mc", 128, [3, 5, 2, 2, 3], 1), ("mgn", "mgn-mc", 64, [1, 1, 1, 1, 1], 1),
        ("nerf", "nerf", 128, [2] * 8, 1), ("nerf", "nerf", 64, [3, 5, 2, 7, 1, 4, 2, 3], 1),
        ("nerf", "nerf", 128, [1] * 8, 1), ("nerf", "nerf", 128, [8, 18, 18, 18, 18, 20, 16, 16], 1),
        ("mgn", "mgn", 128, [40, 40, 40, 40, 40], 1),  # must be refused (does not fit)
    ]
    if args.cmd == "check":  # the quick pre-check of one implementation before a sweep
        cases = [c for i, c in enumerate(cases) if i in (0, 1, 3, 6, 8, 10, 11, 14)]
    fh = open(os.path.join(args.out, "selftest.jsonl"), "a")
    nbad = 0
    impls = (0, 1) if args.cmd == "selftest" else (args.impl,)
    for (pipe, arch, tm, a, minb), impl in [(c, i) for c in cases for i in impls]:
        rec = run_case(ctx, pipe, arch, tm, a, minb=minb, reps=5, kind=args.cmd, impl=impl)
        res.append(rec)
        fh.write(json.dumps(rec) + "\n")
        fh.flush()
        exp_refused = sum(a) > 132 * (2 if (minb == 2 and tm == 64 and pipe == "mgn") else 1)
        good = rec["status"] == ("refused" if exp_refused else "ok")
        nbad += not good
        log(f"{args.cmd} {IMPL_NAMES[impl]:4s} {pipe:5s} {arch:10s} tm{tm:<4d} x{minb} {astr(a):28s} {rec['status']:12s} "
            f"err {rec.get('rel_err', float('nan')):.2e} msg-err {rec.get('rel_err_msg', 0):.2e} "
            f"t {rec.get('time_s', 0)*1e6:8.1f} us  {'PASS' if good else 'FAIL'}  {rec.get('msg','')}")
    # eager bf16 vs fp32 reference, for scale
    for pipe in (("mgn", "nerf") if args.cmd == "selftest" else ()):
        d = ctx["data"][pipe]
        o = mgn_fn(*mgn_args(d)) if pipe == "mgn" else nerf_fn(*nerf_args(d))
        log(f"selftest eager-bf16 {pipe} rel err vs fp32 reference {rel_err(o, ctx['ref'][pipe]):.2e}")
    log(f"{args.cmd}: {len(cases) * len(impls) - nbad}/{len(cases) * len(impls)} as expected")
    return 1 if nbad else 0


def get_combos(quick, lite=False):
    """(pipeline, arch, TM, CTAs per SM, random samples, neighbours, top, extra allocations)"""
    model_mgn_split = [24, 32, 24, 24, 24, 12]  # kitsune map --hw h200 --workload mgn --select patterns
    combos = [("mgn", "mgn", 128, 1, 24, 10, 4, ()),
              ("nerf", "nerf", 128, 1, 24, 10, 4, ()),
              ("mgn", "mgn", 64, 1, 16, 8, 3, ()),
              ("nerf", "nerf", 64, 1, 16, 8, 3, ()),
              ("mgn", "mgn", 64, 2, 16, 8, 3, ()),
              ("mgn", "mgn-split", 128, 1, 6, 6, 1,
               (("model-scaled", proportional(model_mgn_split, 132)),)),
              ("mgn", "mgn-split", 64, 2, 6, 6, 1, (("model", model_mgn_split),)),
              ("mgn", "mgn-fused", 128, 1, 6, 6, 1, ()),
              ("mgn", "mgn-mc", 128, 1, 4, 4, 1, ())]
    if quick:
        combos = [(c[0], c[1], c[2], c[3], 2, 2, 1, c[7]) for c in combos[:2]]
    if lite:
        combos = [(c[0], c[1], c[2], c[3], min(c[4], 12), min(c[5], 8), min(c[6], 3), c[7])
                  for c in combos]
    return combos


def cmd_combo(args):
    pipe, arch, tm, minb, nr, nn, top, extra = get_combos(args.quick, args.lite)[args.index]
    ctx = make_ctx((393216, 65536), None) if pipe == "mgn" else make_ctx(None, 262144)
    ctx["impl"] = args.impl
    deadline = args.deadline_abs if args.deadline_abs else ctx["t0"] + args.deadline
    results = []
    with open(os.path.join(args.out, "sweep.jsonl"), "a") as fh:
        sweep_combo(ctx, pipe, arch, tm, minb, nr, nn, top, deadline, results, fh, extra)
    return 0


def cmd_sweep(args):
    ctx = make_ctx((393216, 65536), 262144)
    deadline = args.deadline_abs if args.deadline_abs else ctx["t0"] + args.deadline
    info = env_info()
    meta = {"env": info, "torch": [], "impl": None, "best": {}}
    mpath = os.path.join(args.out, "meta.json")
    json.dump(meta, open(mpath, "w"), indent=1)
    log(json.dumps(info))
    results = []
    fh = open(os.path.join(args.out, "sweep.jsonl"), "w")
    tr = []
    # baselines first: bulk-synchronous (eager in a CUDA graph), then torch.compile
    for pipe in (() if args.skip_eager else ("mgn", "nerf")):
        r = time_torch(ctx, pipe, "eager-graph")
        tr.append(r)
        log(f"  {pipe} eager-graph {r['time_s']*1e6:9.1f} us err {r['rel_err']:.2e}")
    meta["torch"] = tr
    json.dump(meta, open(mpath, "w"), indent=1)
    # the GEMM implementation: mma.sync if its quick check passes, else wmma
    fh.close()
    impl = None
    for cand in ((args.impl, 1 - args.impl) if not args.skip_check else ()):
        cmd = [sys.executable, os.environ.get("KTP_ENTRY", os.path.abspath(__file__)), "check",
               "--impl", str(cand), "--out", "/tmp/ktp-check"]
        try:
            rc = subprocess.run(cmd, timeout=90).returncode
        except subprocess.TimeoutExpired:
            rc = "timeout"
        log(f"check of impl {IMPL_NAMES[cand]}: rc {rc}")
        if rc == 0:
            impl = cand
            break
    if impl is None:
        impl = args.impl
        if not args.skip_check:
            log(f"no implementation passed the check; sweeping with {IMPL_NAMES[impl]} anyway")
    meta["impl"] = IMPL_NAMES[impl]
    json.dump(meta, open(mpath, "w"), indent=1)
    # each combination in its own process, so that a kernel fault (which poisons the CUDA
    # context) costs only that combination
    dl_combos = deadline - (0 if args.no_compile else args.compile_reserve)
    only = set(int(x) for x in args.combos.split(",")) if args.combos else None
    for i, c in enumerate(get_combos(args.quick, args.lite)):
        if only is not None and i not in only:
            continue
        left = dl_combos - time.time()
        if left < 5:
            log(f"deadline: skipping {c[:4]}")
            continue
        cmd = [sys.executable, os.environ.get("KTP_ENTRY", os.path.abspath(__file__)), "combo", "--index", str(i), "--out", args.out,
               "--deadline-abs", str(dl_combos), "--impl", str(impl)] + (["--quick"] if args.quick else []) \
            + (["--lite"] if args.lite else [])
        child(cmd, left + 60, f"combo {c[:4]}")
    results = []
    for line in open(os.path.join(args.out, "sweep.jsonl")):
        try:
            results.append(json.loads(line))
        except ValueError:
            pass
    for pipe in ("mgn", "nerf"):
        if args.no_compile or time.time() > deadline - 20:
            log(f"skipping torch.compile {pipe}")
            continue
        try:
            r = time_torch(ctx, pipe, "compile")
            tr.append(r)
            log(f"  {pipe} compile {r['time_s']*1e6:9.1f} us err {r['rel_err']:.2e} "
                f"(compile {r.get('compile_s', 0):.1f} s, graph {r['graph']})")
        except Exception as ex:
            log(f"  {pipe} compile FAILED {type(ex).__name__}: {ex}")
            tr.append({"pipeline": pipe, "mode": "compile", "error": f"{type(ex).__name__}: {ex}"[:300]})
    # best allocation per (pipeline, arch, tm, minb) for the profiling pass
    best = {}
    for r in results:
        if r["status"] != "ok" or r.get("impl") != meta["impl"]:
            continue
        k = f"{r['pipeline']}|{r['arch']}|{r['tile_rows']}|{r['minb']}"
        if k not in best or r["time_s"] < best[k]["time_s"]:
            best[k] = {"alloc": r["alloc"], "time_s": r["time_s"]}
    meta["best"] = best
    meta["torch"] = tr
    json.dump(meta, open(mpath, "w"), indent=1)
    summary(results, tr)
    return 0


def summary(results, tr):
    log("\n== summary (median of reps; tiles/s = tiles / time)")
    log(f"{'pipeline':6s} {'arch':10s} {'TM':>4s} {'x':>2s} {'gemm':4s} {'n':>4s} {'best_us':>9s} {'best alloc':28s} "
        f"{'worst_us':>9s} {'bal_us':>9s} {'best tiles/s':>12s} {'max err':>9s}")
    groups = {}
    for r in results:
        groups.setdefault((r["pipeline"], r["arch"], r["tile_rows"], r["minb"], r.get("impl")),
                          []).append(r)
    for k, rs in groups.items():
        ok = [r for r in rs if r["status"] == "ok"]
        bad = [r for r in rs if r["status"] not in ("ok", "refused")]
        if not ok:
            log(f"{k}: no ok runs ({len(bad)} failed: {sorted(set(r['status'] for r in bad))})")
            continue
        b = min(ok, key=lambda r: r["time_s"])
        w = max(ok, key=lambda r: r["time_s"])
        bal = next((r for r in ok if r["kind"] == "balanced"), None)
        log(f"{k[0]:6s} {k[1]:10s} {k[2]:4d} {k[3]:2d} {k[4] or '':4s} {len(ok):4d} {b['time_s']*1e6:9.1f} {b['alloc']:28s} "
            f"{w['time_s']*1e6:9.1f} {(bal['time_s']*1e6 if bal else float('nan')):9.1f} "
            f"{b['tiles_per_s']:12.4g} {max(r['rel_err'] for r in ok):9.2e}"
            + (f"  FAILED {len(bad)}" if bad else ""))
    for r in tr:
        if "time_s" in r:
            log(f"{r['pipeline']:6s} {r['mode']:12s} {r['time_s']*1e6:9.1f} us  err {r['rel_err']:.2e}"
                f"  graph {r.get('graph')}")


def cmd_prof(args):
    """One run of each case, each preceded by a marker kernel (torch.cuda._sleep -> spin_kernel),
    inside cudaProfilerStart/Stop: run under ncu --profile-from-start off."""
    ctx = make_ctx((393216, 65536), 262144)
    meta = json.load(open(args.alloc_json)) if args.alloc_json and os.path.exists(args.alloc_json) else {}
    best = meta.get("best", {})
    if meta.get("impl"):
        args.impl = {"wmma": 0, "mma": 1}[meta["impl"]]
    cases = []
    keys = [("mgn|mgn|128|1", "16-48-24-20-24"), ("nerf|nerf|128|1", "10-18-18-18-18-20-15-15"),
            ("mgn|mgn|64|2", "55-79-33-56-41")]
    if args.prof_only:
        keys = [k for k in keys if k[0].split("|")[0] in args.prof_only.split(",")]
    else:
        keys = keys[:2]
    for key, dflt in keys:
        a = best.get(key, {}).get("alloc", dflt)
        pipe, arch, tm, minb = key.split("|")
        cases.append((pipe, arch, int(tm), int(minb), [int(x) for x in a.split("-")]))
    order = []
    for pipe, arch, tm, minb, a in cases:
        d = ctx["data"][pipe]
        p = (build_mgn if pipe == "mgn" else build_nerf)(d, arch, a, tm)
        assert p.prepare(minb, 2.0, args.impl) == 0, p.msg
        p.launch()
        torch.cuda.synchronize()
        ctx["flush"]()
        p.reset()
        torch.cuda.synchronize()
        torch.cuda.profiler.start()
        torch.cuda._sleep(100)
        p.kernel()
        torch.cuda.synchronize()
        torch.cuda.profiler.stop()
        err, _ = p.errors()
        e = rel_err(d["out"], ctx["ref"][pipe])
        order.append({"case": f"pipeline {pipe} {arch} tm{tm} x{minb} {astr(a)} {IMPL_NAMES[args.impl]}",
                      "rel_err": e,
                      "err": err})
        p.close()
    for mode in (() if args.prof_only else ("eager", "compile")):
        for pipe in ("mgn", "nerf"):
            d = ctx["data"][pipe]
            fn = mgn_fn if pipe == "mgn" else nerf_fn
            args_ = mgn_args(d) if pipe == "mgn" else nerf_args(d)
            try:
                if mode == "compile":
                    fn = torch.compile(fn)
                for _ in range(2):
                    fn(*args_)
                torch.cuda.synchronize()
                ctx["flush"]()
                torch.cuda.synchronize()
                torch.cuda.profiler.start()
                torch.cuda._sleep(100)
                fn(*args_)
                torch.cuda.synchronize()
                torch.cuda.profiler.stop()
                order.append({"case": f"{mode} {pipe}"})
            except Exception as ex:
                log(f"prof {mode} {pipe} failed: {ex}")
    json.dump(order, open(os.path.join(args.out, "prof_order.json"), "w"), indent=1)
    log(json.dumps(order))
    return 0


def run_logged(ctx, fh, c, label, **kw):
    """run_case for case line c (pipe arch tm ctas_per_sm alloc kind), appended to fh as JSON
    and logged as one line; returns the record."""
    a = [int(x) for x in c[4].split("-")]
    rec = run_case(ctx, c[0], c[1], int(c[2]), a, kind=c[5], **kw)
    rec["wall"] = round(time.time() - ctx["t0"], 1)
    fh.write(json.dumps(rec) + "\n")
    fh.flush()
    log(f"  {label} {c[4]:34s} {(rec.get('time_s') or 0) * 1e6:9.1f} us  "
        f"err {rec.get('rel_err', float('nan')):.2e} {rec['status']}")
    return rec


def child(cmd, timeout_s, what):
    """Run a child process (a kernel fault costs only it); log how it failed, if it did."""
    try:
        rc = subprocess.run(cmd, timeout=timeout_s).returncode
    except subprocess.TimeoutExpired:
        rc = "timeout"
    if rc != 0:
        log(f"{what} exited with {rc}")


def each_group(cmd_name, args, groups, deadline, extra):
    """Run command cmd_name once per group of the case file, each in its own process (a kernel
    fault costs only that group), until the deadline."""
    for gi, g in enumerate(groups):
        left = deadline - time.time()
        if left < 5:
            log(f"deadline: skipping {g}")
            continue
        cmd = [sys.executable, os.environ.get("KTP_ENTRY", os.path.abspath(__file__)), cmd_name,
               "--file", args.file, "--index", str(gi), "--out", args.out,
               "--deadline-abs", str(deadline), "--reps", str(args.reps)] + extra
        child(cmd, left + 30, f"{cmd_name} {g}")
    return 0


def cmd_cases(args):
    """The cases of a file (model.py ilp --cases: `pipe arch tm ctas_per_sm alloc kind` per line),
    timed like the sweep's and appended to OUT/sweep.jsonl. Without --index, each (pipe, arch, tm,
    ctas_per_sm) group runs in its own process (a kernel fault costs only that group)."""
    cases = [l.split() for l in open(args.file) if l.strip() and not l.startswith("#")]
    groups = []
    for c in cases:
        g = tuple(c[:4])
        if g not in groups:
            groups.append(g)
    deadline = args.deadline_abs if args.deadline_abs else time.time() + args.deadline
    if args.index < 0:
        return each_group("cases", args, groups, deadline, ["--impl", str(args.impl)])
    pipe, arch, tm, minb = groups[args.index]
    tm, minb = int(tm), int(minb)
    ctx = make_ctx((393216, 65536), None) if pipe == "mgn" else make_ctx(None, 262144)
    ctx["impl"] = args.impl
    with open(os.path.join(args.out, "sweep.jsonl"), "a") as fh:
        for c in cases:
            if tuple(c[:4]) != groups[args.index] or time.time() > deadline:
                continue
            run_logged(ctx, fh, c, f"{pipe:5s} {arch:10s} tm{tm:<4d} x{minb} {c[5]:13s}",
                       minb=minb, reps=args.reps)
    return 0


def service_stats(tr, pr, a):
    """Per stage, the per-tile service time (the work between the waits: inputs held to the
    output-slot wait, then slot held to done) of the traced launch: mean (ns), coefficient of
    variation, percentiles 1-99 relative to the mean, the lag-1 autocorrelation of one CTA's
    successive tiles, and the mean gap between a CTA's tiles (waits included)."""
    # clock64 cycles per ns from the blocks' totals (one clock for the whole GPU)
    cyc = sum(x[5] for x in pr)
    ns = sum(x[6] for x in pr)
    per_ns = cyc / ns if ns else 1.0
    out = []
    for si, ts in enumerate(tr):
        sv = [((w0 - a0) + (c - w1)) / per_ns for a0, w0, w1, c in ts]
        m = sum(sv) / len(sv)
        var = sum((v - m) ** 2 for v in sv) / len(sv)
        srt = sorted(sv)
        pct = [round(srt[min(len(srt) - 1, int(q * len(srt) / 100))] / m, 4) for q in range(1, 100)]
        ac_n = ac_d = 0.0
        gaps = []
        for t in range(a[si], len(sv)):
            ac_n += (sv[t] - m) * (sv[t - a[si]] - m)
            ac_d += (sv[t] - m) ** 2
            gaps.append((ts[t][3] - ts[t - a[si]][3]) / per_ns)
        out.append({"mean_ns": round(m, 1), "cv": round(math.sqrt(var) / m, 4) if m else 0,
                    "pct_rel": pct, "lag1_autocorr": round(ac_n / ac_d, 4) if ac_d else 0,
                    "gap_mean_ns": round(sum(gaps) / len(gaps), 1) if gaps else 0})
    return out


# The H200's (and H100 SXM's) 132 SMs by GPC, as the block scheduler walks them: it visits the
# TPCs (SM pairs 2k, 2k + 1) of these SM-id ranges in turn (validation/pipeline/raw/run8-placement-h200:
# blocks 0-7 on SMs 124-131, then 0,1, 16,17, 32,33, 48,49, 2,3, ..., 64,65, 78,79, 92,93, 106,107).
GPC_BOUNDS = [0, 16, 32, 48, 64, 78, 92, 106, 120, 132]


def sm_key(place, nsm=132):
    """Per SM id, its rank in a placement (ktp_set_sm_order): roles in table order go to SMs in
    rank order. sm: SM-id order (a stage's CTAs fill whole GPCs, TPCs run one stage); walk: TPC
    by TPC across the GPCs (a stage spread over every GPC, TPCs run one stage); split: one SM of
    every TPC first, across the GPCs, then the other (a TPC's two SMs run different stages)."""
    key = []
    for s in range(nsm):
        g = max(i for i in range(len(GPC_BOUNDS) - 1) if GPC_BOUNDS[i] <= s)
        j = (s - GPC_BOUNDS[g]) // 2
        ng = len(GPC_BOUNDS) - 1
        if place == "sm":
            key.append(s)
        elif place == "walk":
            key.append((j * ng + g) * 2 + s % 2)
        elif place == "split":
            key.append(((s % 2) * 64 + j) * ng + g)
        else:
            raise ValueError("placement %r" % place)
    return key


def cmd_placement(args):
    """Where the block scheduler puts each stage's CTAs: the cases of a file (`pipe arch tm
    ctas_per_sm alloc kind`, as for `cases`), each timed under block orders 0 (stages in
    sequence, the default), 1 (stages interleaved) and 2.. (seeded shuffles), order-major so that
    drift reaches every allocation alike; order 0 once more at the end. Per-block profiles
    (with SM ids) kept. One process per (pipe, arch, tm, ctas_per_sm) group."""
    cases = [l.split() for l in open(args.file) if l.strip() and not l.startswith("#")]
    groups = []
    for c in cases:
        if tuple(c[:4]) not in groups:
            groups.append(tuple(c[:4]))
    deadline = args.deadline_abs if args.deadline_abs else time.time() + args.deadline
    if args.index < 0:
        return each_group("placement", args, groups, deadline,
                          ["--orders", str(args.orders), "--places", args.places])
    pipe, arch, tm, minb = groups[args.index]
    tm, minb = int(tm), int(minb)
    ctx = make_ctx((393216, 65536), None) if pipe == "mgn" else make_ctx(None, 262144)
    mine = [c for c in cases if tuple(c[:4]) == groups[args.index]]
    if args.places:
        plan = [(0, x) if not x.isdigit() else (int(x), None) for x in args.places.split(",")]
        plan = [(o, None, True) if x == "trace" else (o, x, False) for o, x in plan]
    else:
        plan = [(o, None, False) for o in list(range(args.orders)) + [0]]
    with open(os.path.join(args.out, "placement.jsonl"), "a") as fh:
        for order, place, trace in plan:
            for c in mine:
                if time.time() > deadline:
                    return 0
                how = "trace" if trace else place or str(order)
                run_logged(ctx, fh, c, f"{arch:10s} tm{tm:<4d} x{minb} {how:>5s} {c[5]:10s}",
                           minb=minb, reps=args.reps, order=order, blocks=not trace,
                           place=place, trace=trace)
    return 0


def cmd_one(args):
    ctx = make_ctx((args.E, args.N or args.E // 6), args.B)
    a = [int(x) for x in args.alloc.split("-")]
    rec = run_case(ctx, args.pipe, args.arch or args.pipe, args.tm, a, minb=args.minb, reps=args.reps,
                   impl=args.impl, depth=args.depth)
    log(json.dumps(rec, indent=1))
    return 0 if rec["status"] == "ok" else 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cmd", choices=["selftest", "check", "sweep", "combo", "prof", "one", "cases",
                                    "placement"])
    ap.add_argument("--orders", type=int, default=8, help="placement: block orders 0..N-1")
    ap.add_argument("--places", default="", help="placement: comma-separated block orders "
                    "(integers) and SM placements (sm, walk, split), instead of --orders")
    ap.add_argument("--file", help="cases: the case list (model.py ilp --cases)")
    ap.add_argument("--impl", type=int, default=1, help="GEMM: 1 mma.sync+ldmatrix, 0 wmma")
    ap.add_argument("--index", type=int, default=None)
    ap.add_argument("--out", default=os.environ.get("OUT", "/tmp/ktp-out"))
    ap.add_argument("--deadline", type=float, default=300.0)
    ap.add_argument("--deadline-abs", type=float, default=0.0, help="epoch seconds")
    ap.add_argument("--no-compile", action="store_true")
    ap.add_argument("--compile-reserve", type=float, default=110.0)
    ap.add_argument("--lite", action="store_true", help="fewer samples per combination")
    ap.add_argument("--combos", default="", help="comma-separated combination indices")
    ap.add_argument("--skip-eager", action="store_true")
    ap.add_argument("--skip-check", action="store_true")
    ap.add_argument("--prof-only", default="", help="prof: only these pipelines (mgn,nerf)")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--alloc-json")
    ap.add_argument("--pipe", default="mgn")
    ap.add_argument("--arch")
    ap.add_argument("--tm", type=int, default=128)
    ap.add_argument("--minb", type=int, default=1)
    ap.add_argument("--alloc", default="16-48-24-20-24")
    ap.add_argument("--reps", type=int, default=21)
    ap.add_argument("--depth", type=int, default=2, help="one: ring slots per CTA (see build_mgn)")
    ap.add_argument("--E", type=int, default=393216)
    ap.add_argument("--B", type=int, default=262144)
    ap.add_argument("--N", type=int, default=0, help="one: MGN nodes (default E / 6)")
    args = ap.parse_args()
    if args.index is None:  # combo: the first combination; cases: every group, each in a process
        args.index = -1 if args.cmd in ("cases", "placement") else 0
    os.makedirs(args.out, exist_ok=True)
    torch.backends.cuda.matmul.allow_tf32 = False
    return {"selftest": cmd_selftest, "check": cmd_selftest, "sweep": cmd_sweep, "combo": cmd_combo,
            "prof": cmd_prof, "cases": cmd_cases, "placement": cmd_placement,
            "one": cmd_one}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
