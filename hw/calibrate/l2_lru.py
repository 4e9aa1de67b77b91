#!/usr/bin/env python3
"""l2_lru.py: the L2 hit curve of a cyclically re-read working set, from l2_lru.cu's Nsight
Compute run (stdlib only; no GPU needed).

For each working set W and line-to-SM mapping (fixed: a line is read by one SM every pass;
rotate: each pass moves every line 37 CTAs on, so SMs of both L2 halves read it) it prints the
fraction of the repeat passes' reads that missed L2: (DRAM bytes of the 5-pass launch - DRAM
bytes of the 1-pass launch) / (4 W).

usage: python3 hw/calibrate/l2_lru.py [RAW_DIR]   (default hw/calibrate/results/raw-l2-lru)
"""
import csv
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
MiB = 1 << 20


def main():
    if len(sys.argv) > 1 and sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0
    raw = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "results", "raw-l2-lru")
    rows = list(csv.reader(open(os.path.join(raw, "l2_lru_ncu.csv"), newline="").read().splitlines()))
    h = next(i for i, r in enumerate(rows) if r and r[0] == "ID")
    col = {n: k for k, n in enumerate(rows[h])}
    data = [r for r in rows[h + 2:] if r and r[0].isdigit()]
    launches = [l.split() for l in open(os.path.join(raw, "l2_lru_launches.txt"))
                if l.startswith("launch ")]
    if len(data) != len(launches):
        sys.exit("l2_lru.py: %d profiled kernels, %d launches listed" % (len(data), len(launches)))
    num = lambda r, m: float(r[col[m]].replace(",", ""))
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
