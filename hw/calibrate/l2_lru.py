#!/usr/bin/env python3
"""l2_lru.py: the L2 hit curve of a cyclically re-read working set, from l2_lru.cu's Nsight
Compute run (stdlib only; no GPU needed).

For each working set W and line-to-SM mapping (fixed: a line is read by one SM every pass;
rotate: each pass moves every line 37 CTAs on, so SMs of both L2 halves read it) it prints the
fraction of the repeat passes' reads that missed L2: (DRAM bytes of the 5-pass launch - DRAM
bytes of the 1-pass launch) / (4 W).

With `ring` (data of `l2_lru ring`, default hw/calibrate/results/raw-l2-ring) it prints, per ring
of W MiB, the fraction of its lines written back (evicted dirty before their slot was rewritten)
and read back (evicted before the reader half a ring later came): the 5-pass launch's DRAM write
(read) bytes less the 1-pass launch's, less the fresh stream lines of the 4 extra passes, over
4 W. "ring-rw" is the ring alone; "ring-stream" adds one fresh line read and one written per 3
ring lines, and its footprint column counts those at half a ring line (a ring line is used by
SMs of both L2 halves, a stream line by one: the model's l2.partitions rule).

usage: python3 hw/calibrate/l2_lru.py [RAW_DIR]
       python3 hw/calibrate/l2_lru.py ring [RAW_DIR]
"""
import csv
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
MiB = 1 << 20


def load(raw, stem):
    """The profiled kernels of RAW/STEM_ncu.csv, the launch list of RAW/STEM_launches.txt and a
    reader of one metric of one kernel."""
    rows = list(csv.reader(open(os.path.join(raw, stem + "_ncu.csv"), newline="").read().splitlines()))
    h = next(i for i, r in enumerate(rows) if r and r[0] == "ID")
    col = {n: k for k, n in enumerate(rows[h])}
    data = [r for r in rows[h + 2:] if r and r[0].isdigit()]
    launches = [l.split() for l in open(os.path.join(raw, stem + "_launches.txt"))
                if l.startswith("launch ")]
    if len(data) != len(launches):
        sys.exit("l2_lru.py: %d profiled kernels, %d launches listed" % (len(data), len(launches)))
    return data, launches, lambda r, m: float(r[col[m]].replace(",", ""))


def ring(data, launches, num):
    runs = {}
    for r, l in zip(data, launches):
        kind, w, passes, stream = l[1], int(l[3]), int(l[5]), int(l[7])
        runs.setdefault((kind, w), {})[passes] = (num(r, "dram__bytes_read.sum"),
                                                   num(r, "dram__bytes_write.sum"), stream * 128)
    print("| kind | ring MiB | footprint MiB | written back | read back |")
    print("|---|---:|---:|---:|---:|")
    for (kind, w), d in sorted(runs.items()):
        ps = sorted(d)
        if len(ps) < 2:
            continue
        (r1, w1, s), (r5, w5, _) = d[ps[0]], d[ps[-1]]
        extra = (ps[-1] - ps[0]) * w * MiB
        wb = (w5 - w1 - (ps[-1] - ps[0]) * s) / extra
        rb = (r5 - r1 - (ps[-1] - ps[0]) * s) / extra
        foot = w + 0.5 * 2 * s / MiB  # the streams' read and written lines, at half a ring line
        print("| %s | %d | %.1f | %.3f | %.3f |" % (kind, w, foot, max(0.0, wb), max(0.0, rb)))
    return 0


def main():
    if len(sys.argv) > 1 and sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0
    args = sys.argv[1:]
    if args and args[0] == "ring":
        raw = args[1] if len(args) > 1 else os.path.join(HERE, "results", "raw-l2-ring")
        return ring(*load(raw, "l2_ring"))
    raw = args[0] if args else os.path.join(HERE, "results", "raw-l2-lru")
    data, launches, num = load(raw, "l2_lru")
    curve = {}
    for r, l in zip(data, launches):
        mode, w, passes = l[1], int(l[3]), int(l[5])
        curve.setdefault((mode, w), {})[passes] = num(r, "dram__bytes_read.sum")
    modes = sorted({m for m, _ in curve}, key=lambda m: m != "fixed")
    sizes = sorted({w for _, w in curve})
    print("| working set MiB | " + " | ".join("miss, %s" % m for m in modes) + " |")
    print("|---:|" + "---:|" * len(modes))
    for w in sizes:
        cells = []
        for m in modes:
            d = curve.get((m, w), {})
            ps = sorted(d)
            if len(ps) < 2:
                cells.append("-")
                continue
            extra = (d[ps[-1]] - d[ps[0]]) / ((ps[-1] - ps[0]) * w * MiB)
            cells.append("%.3f" % max(0.0, extra))
        print("| %d | %s |" % (w, " | ".join(cells)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
