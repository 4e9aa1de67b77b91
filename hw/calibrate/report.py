#!/usr/bin/env python3
"""Print the README's results tables (markdown) from results/h200-measured.json and
results/h200-ops-measured.json. Usage: python3 hw/calibrate/report.py [--readme]
  --readme: replace the text between the results markers in hw/calibrate/README.md."""
import contextlib
import io
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def load(name):
    try:
        with open(os.path.join(HERE, "results", name)) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def main():
    m = load("h200-measured.json")
    if not m:
        print("no results/h200-measured.json")
        return
    c = m.get("clocks_seen", {})
    print(f"Measured on {m['gpu']} (driver {m.get('driver')}, torch {m.get('torch')}), "
          f"{m['date']}; {m.get('sm_count')} SMs, L2 {m.get('l2_size_bytes', 0) / 2**20:.0f} MiB; "
          f"SM clock while busy {c.get('sm_min_MHz')}..{c.get('sm_max_MHz')} MHz "
          f"(median {c.get('sm_median_MHz')}), power up to {c.get('power_max_W')} W.\n")
    rows = [("SIMT fp32 FMA", "simt_fp32_TFLOPs", "TFLOP/s"),
            ("best large GEMM bf16", "gemm_bf16_best_large_TFLOPs", "TFLOP/s"),
            ("best large GEMM fp16", "gemm_fp16_best_large_TFLOPs", "TFLOP/s"),
            ("best large GEMM tf32", "gemm_tf32_best_large_TFLOPs", "TFLOP/s"),
            ("DRAM read", "dram_read_GBps", "GB/s"),
            ("DRAM write", "dram_write_GBps", "GB/s"),
            ("DRAM copy kernel (read+write)", "dram_copy_GBps", "GB/s"),
            ("DRAM cudaMemcpy D2D (read+write)", "dram_memcpy_d2d_GBps", "GB/s"),
            ("L2 read (best working set <= 16 MiB)", "l2_read_GBps", "GB/s"),
            ("L2 read, 8 MiB working set", "l2_read_8MiB_GBps", "GB/s"),
            ("L2 latency (chase, 8 MiB)", "l2_latency_ns", "ns"),
            ("L2 latency (chase, 1 MiB)", "l2_latency_1MiB_ns", "ns"),
            ("DRAM latency (chase, 256 MiB, cold L2)", "dram_latency_ns", "ns"),
            ("DRAM latency (chase, 1 GiB, cold L2)", "dram_latency_1GiB_ns", "ns"),
            ("atomicAdd latency (dependent chain)", "atomic_latency_ns", "ns"),
            ("CTA-to-CTA ping-pong round trip", "cta_pingpong_round_trip_ns", "ns"),
            ("launch, back-to-back empty kernels", "launch_overhead_us", "µs/kernel"),
            ("launch, inside a CUDA graph", "launch_graph_overhead_us", "µs/kernel"),
            ("launch + synchronize (host clock)", "launch_sync_latency_us", "µs")]
    print("| quantity | value | unit |\n|---|---:|---|")
    for name, k, u in rows:
        if k in m:
            print(f"| {name} | {m[k]:.4g} | {u} |")
    sw = m.get("l2_read_sweep")
    if sw:
        print("\nL2 read bandwidth by working set: " + ", ".join(
            f"{r['working_set_MiB']} MiB {r['read_GBps']:.0f}" for r in sw) + " GB/s.")

    g = m.get("gemm", [])
    if g:
        print("\n### Tensor GEMM (torch.matmul / cuBLAS), TFLOP/s\n")
        shapes = []
        for r in g:
            s = (r["M"], r["N"], r["K"])
            if s not in shapes:
                shapes.append(s)
        t = {(r["dtype"], r["M"], r["N"], r["K"]): r for r in g}
        print("| M | N | K | bf16 | fp16 | tf32 | bf16 time µs |\n|---:|---:|---:|---:|---:|---:|---:|")
        for s in shapes:
            cells = [f"{t[(d,) + s]['TFLOPs']:.1f}" if (d,) + s in t else "" for d in
                     ("bf16", "fp16", "tf32")]
            bt = t.get(("bf16",) + s)
            print(f"| {s[0]} | {s[1]} | {s[2]} | " + " | ".join(cells) +
                  f" | {bt['time_us'] if bt else ''} |")

    q = m.get("queue")
    if q:
        print("\n### Ring queues through L2 (2-entry ring per producer/consumer CTA pair)\n")
        Ns = sorted({r["queues"] for r in q})
        pays = sorted({r["payload_bytes"] for r in q})
        t = {(r["queues"], r["payload_bytes"]): r for r in q}
        print("Per-queue GB/s / aggregate GB/s (unsynchronized baseline aggregate in brackets):\n")
        print("| payload | " + " | ".join(f"N={n}" for n in Ns) + " | ns/transfer (N=1) |")
        print("|---:|" + "---:|" * (len(Ns) + 1))
        for p in pays:
            cells = []
            for n in Ns:
                r = t.get((n, p))
                cells.append(f"{r['per_queue_GBps']:.2f} / {r['aggregate_GBps']:.0f} "
                             f"[{r['nosync_aggregate_GBps']:.0f}]" + ("" if r["data_ok"] else " !")
                             if r else "")
            r1 = t.get((Ns[0], p))
            lab = f"{p // 1024} KiB" if p < 1 << 20 else f"{p >> 20} MiB"
            print(f"| {lab} | " + " | ".join(cells) + f" | {r1['ns_per_transfer'] if r1 else ''} |")
        bad = [r for r in q if not r["data_ok"]]
        nmax = max(Ns)
        big = [t[(nmax, p)] for p in (131072, 262144) if (nmax, p) in t]
        spill = [t[(nmax, p)] for p in pays if p > 262144 and (nmax, p) in t]
        one = [t[(n, 1024)] for n in Ns if (n, 1024) in t]
        peak1 = max(r["per_queue_GBps"] for r in q if r["queues"] == Ns[0])
        if big and one:
            print("\n#### Hopper queues vs the paper (A100, real GPU)\n")
            print("| | A100, paper | H200, measured here |\n|---|---|---|")
            print(f"| queues filling the GPU | 54 (108 CTAs) | {nmax} ({2 * nmax} CTAs) |")
            print("| aggregate, 128-256 KB payloads, all queues | ~2 TB/s | " +
                  " / ".join(f"{r['aggregate_GBps'] / 1000:.2f}" for r in big) + " TB/s |")
            print("| per queue, 128-256 KB | ~37 GB/s | " +
                  " / ".join(f"{r['per_queue_GBps']:.1f}" for r in big) + f" GB/s (N={nmax}) |")
            if spill:
                print("| beyond 256 KB (queues exceed L2) | falls toward ~1.5 TB/s | falls to " +
                      " / ".join(f"{r['aggregate_GBps'] / 1000:.2f}" for r in spill) +
                      " TB/s (" + ", ".join(f"{r['payload_bytes'] // 1024} KiB" for r in spill) + ") |")
            r1 = t[(Ns[0], 1024)]
            print(f"| bandwidth loss at 1 KB payloads | ~12x | {peak1 / r1['per_queue_GBps']:.0f}x vs "
                  f"the best per-queue rate ({peak1:.1f} GB/s); {r1['sync_overhead_frac'] + 1:.1f}x vs "
                  f"the unsynchronized copy at 1 KiB |")
            ovh = [t[(n, p)]["sync_overhead_frac"] for n in Ns for p in pays
                   if p >= 65536 and (n, p) in t and t[(n, p)]["sync_overhead_frac"] > 0]
            o64 = [t[(n, 65536)]["sync_overhead_frac"] for n in Ns if (n, 65536) in t]
            print(f"| synchronization overhead at >= 64 KB | < 63% | {max(ovh) * 100:.0f}% at most "
                  f"(64 KiB: {min(o64) * 100:.0f}-{max(o64) * 100:.0f}%; t_sync/t_nosync - 1) |")
            if "atomic_rate_per_cta_Mops" in m:
                print(f"| uncontended atomics per CTA | ~100 M/s | {m['atomic_rate_per_cta_Mops']:.1f} M/s "
                      f"dependent (latency {m['atomic_latency_ns']:.0f} ns); hand-off "
                      f"{r1['ns_per_transfer'] / 1000:.2f} µs per transfer |")
        print(f"\nData check: {len(q) - len(bad)} of {len(q)} configurations' checksums matched.")

    ops = load("h200-ops-measured.json")
    if ops:
        print("\n### Per-operator truth (bf16, cold L2)\n")
        print("| op | params | time µs | DRAM MB (ncu) | min MB | kernels | GB/s (ncu bytes) |")
        print("|---|---|---:|---:|---:|---:|---:|")
        for o in ops["ops"]:
            p = " ".join(f"{k}={v}" for k, v in o["params"].items())
            b = o.get("dram_read_bytes", 0) + o.get("dram_write_bytes", 0)
            ncu = f"{b / 1e6:.1f}" if "dram_read_bytes" in o else "n/a"
            gb = f"{b / o['time_s'] / 1e9:.0f}" if "dram_read_bytes" in o else ""
            print(f"| {o['workload']} | {p} | {o['time_s'] * 1e6:.1f} | {ncu} | "
                  f"{o['min_dram_bytes'] / 1e6:.1f} | {o.get('kernels', '')} | {gb} |")


if __name__ == "__main__":
    if "--readme" in sys.argv:
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            main()
        path = os.path.join(HERE, "README.md")
        with open(path) as f:
            text = f.read()
        a, b = "<!-- results:begin -->\n", "<!-- results:end -->"
        i, j = text.index(a) + len(a), text.index(b)
        with open(path, "w") as f:
            f.write(text[:i] + buf.getvalue() + "\n" + text[j:])
        print("report: updated", path)
    else:
        main()
