# figdata.awk: the tables scripts/plot.gp draws, from a `kitsune compare --format csv` file.
# usage: awk -F, -f scripts/figdata.awk -v kind=KIND [-v metric=COL] [-v mode=M] [...] \
#            [REF.csv] CMP.csv [PARTS.csv]
# Files are told apart by their header: CMP has time_s, REF (the paper's numbers, the format of
# validation/kitsune-paper.csv: workload,mode,exec,metric,value[,source]) has metric, PARTS
# (energy parts, when CMP lacks them) has energy_dram_J. Columns are found by header name.
#
# kind=bars     metric=COL scale=S geo=0|1 paper=0|1 red=0|1
#   bars per workload: vf/kitsune x inference/training (4 series), then a geomean group (geo=1;
#   red=1 takes the geomean of 1 - value, for reductions). Index blocks: 0-3 the series
#   (x y), 4 value labels (x y text), 5 paper marks (x y), 6 "n/a" marks (x y text).
# kind=barsset  same options: gnuplot commands, on one line, for kind=bars (xtics, ranges, npaper).
# kind=stack    mode=M what=time|energy: per workload, bars bsp vf kitsune of the parts
#   (utilization classes or energy parts) as % of the bsp total, cumulative: x c1 .. cN total
#   exec (1 bsp, 2 vf, 3 kitsune);
#   index 1: "x 0 n/a" for workloads without this mode (every workload keeps its slot).
# kind=stackset mode=M what=...: gnuplot commands, on one line (xtics: exec letters and workloads).
# kind=info     what=energy: prints "parts" when the energy parts are there, else "total".
# Empty index blocks get one point far left of the x range, so gnuplot never warns.

function lab(w) { sub(/^llama3-8b-/, "llama-", w); return w }
function two(w) { sub(/-/, "\\n", w); return w }   # a tic label on two lines: llama\nctx
function has(f, name) { return ((f SUBSEP name) in col) }
function get(f, name) { return has(f, name) ? $(col[f, name]) : "" }
function fmt(v,   a) {
    if (metric == "speedup_vs_bsp") return sprintf("%.2f", v)
    a = v < 0 ? -v : v  # digits by magnitude: -16.81 was printed for -17
    if (a >= 9.95) return sprintf("%.0f", v)
    if (a >= 0.095 || v == 0) return sprintf("%.1f", v)
    return sprintf("%.2f", v)
}
BEGIN {
    if (scale == "") scale = 1
    nser = split("inference/vf inference/kitsune training/vf training/kitsune", SER, " ")
    nex = split("bsp vf kitsune", EX, " ")
    if (what == "energy")
        npart = split("energy_dram_J energy_l2_J energy_tensor_J+energy_simt_J energy_smem_J+energy_rf_J energy_static_J", PART, " ")
    else
        npart = split("class_both_low_time_s class_sm_low_time_s class_dram_low_time_s class_neither_low_time_s", PART, " ")
    tot = (what == "energy") ? "energy_J" : "time_s"
    NOPT = "-1000 0"
}
/^#/ || /^[ \t]*$/ { next }
!(FILENAME in kindof) {
    for (i = 1; i <= NF; i++) { h = $i; gsub(/[\r" ]/, "", h); if (!((FILENAME, h) in col)) col[FILENAME, h] = i }
    kindof[FILENAME] = has(FILENAME, "metric") ? "ref" : has(FILENAME, "time_s") ? "cmp" : "parts"
    next
}
{ sub(/\r$/, "") }
kindof[FILENAME] == "ref" {
    w = get(FILENAME, "workload"); m = get(FILENAME, "mode"); x = get(FILENAME, "exec")
    mt = get(FILENAME, "metric"); v = get(FILENAME, "value")
    if (mt == "traffic_reduction") mt = "traffic_reduction_frac"
    if (mt == "paper_ops") { pops[w, m] = v; next }
    ref[w, m "/" x, mt] = v
    next
}
kindof[FILENAME] == "cmp" {
    w = get(FILENAME, "workload"); m = get(FILENAME, "mode"); x = get(FILENAME, "exec")
    if (!(w in seen)) { seen[w] = 1; ord[++nw] = w }
    k = w SUBSEP m "/" x
    row[k] = 1
    if (metric != "") { v = get(FILENAME, metric); if (v != "") val[k] = v * scale }
    tv[k] = get(FILENAME, tot)
    for (p = 1; p <= npart; p++) {
        n = split(PART[p], q, "+"); s = ""
        for (j = 1; j <= n; j++) if (has(FILENAME, q[j]) && get(FILENAME, q[j]) != "") s += get(FILENAME, q[j]); else s = "x"
        if (s != "x" && s != "") part[k, p] = s
    }
    next
}
kindof[FILENAME] == "parts" {
    k = get(FILENAME, "workload") SUBSEP get(FILENAME, "mode") "/" get(FILENAME, "exec")
    for (p = 1; p <= npart; p++) {
        n = split(PART[p], q, "+"); s = 0
        for (j = 1; j <= n; j++) if (has(FILENAME, q[j]) && get(FILENAME, q[j]) != "") s += get(FILENAME, q[j]); else s = "x"
        if (s != "x" && !((k, p) in part)) part[k, p] = s
    }
    next
}
# paper value of one bar: the metric itself, or coverage from ops_covered and the paper's op count
function pref(w, s,   m) {
    if ((w, s, metric) in ref) return ref[w, s, metric] * scale
    split(s, m, "/")
    if (metric == "coverage_frac" && ((w, s, "ops_covered") in ref) && ((w, m[1]) in pops) && pops[w, m[1]] > 0)
        return ref[w, s, "ops_covered"] / pops[w, m[1]] * scale
    return ""
}
function bars(   g, i, w, k, x, v, y, n, lg, ok, pv, plg, pn, ymin, ymax, gw, o, base) {
    gw = nser + 1.2                       # group width: the bars and a gap
    ymin = 0; ymax = 0
    for (g = 1; g <= nw; g++) {
        w = ord[g]; gx[g] = (g - 1) * gw; gl[g] = lab(w)
        for (i = 1; i <= nser; i++) {
            k = w SUBSEP SER[i]; x = gx[g] + i - 1
            if (k in val) { bx[i] = bx[i] x " " val[k] "\n"; bv[g, i] = val[k]; if (val[k] > ymax) ymax = val[k]; if (val[k] < ymin) ymin = val[k] }
            else if (!(k in row)) na = na x " 0 n/a\n"
            pv = pref(w, SER[i])
            if (paper && pv != "") { pm = pm x " " pv "\n"; pvv[g, i] = pv; if (pv > ymax) ymax = pv; if (pv < ymin) ymin = pv }
        }
    }
    ng = nw
    if (geo && nw > 0) {
        ng = nw + 1; gx[ng] = nw * gw + 0.8; gl[ng] = "geomean"
        for (i = 1; i <= nser; i++) {
            lg = 0; n = 0; plg = 0; pn = 0; ok = 1
            for (g = 1; g <= nw; g++) {
                if (!((g, i) in bv)) continue
                v = bv[g, i] / scale; if (red) v = 1 - v; if (v < 1e-9) v = 1e-9
                lg += log(v); n++
                pv = pref(ord[g], SER[i]); if (pv == "") ok = 0
                else { pv /= scale; if (red) pv = 1 - pv; if (pv < 1e-9) pv = 1e-9; plg += log(pv); pn++ }
            }
            x = gx[ng] + i - 1
            if (n > 0) {
                v = exp(lg / n); if (red) v = 1 - v; v *= scale
                bx[i] = bx[i] x " " v "\n"; bv[ng, i] = v; if (v > ymax) ymax = v
            }
            # the paper's geomean: its own number where it gives one, else the geomean of its
            # per-workload numbers when it has one for every workload of the model's geomean
            pv = ""
            if (("geomean", SER[i], metric) in ref) pv = ref["geomean", SER[i], metric] * scale
            else if (n > 0 && ok && pn == n) { pv = exp(plg / pn); if (red) pv = 1 - pv; pv *= scale }
            if (paper && pv != "") { pm = pm x " " pv "\n"; pvv[ng, i] = pv; if (pv > ymax) ymax = pv }
        }
    }
    ymax = ymax > 0 ? ymax * 1.16 : 1
    if (metric ~ /_frac$/ && scale == 100 && ymax > 100) ymax = (ymax < 112) ? 112 : ymax
    ymin = ymin < 0 ? ymin * 1.16 : 0      # a reduction below zero: more traffic than bsp
    # labels: every geomean bar, and bars too short to read off the axis: under 10% of the range
    # (speedups: within 10% of the range from 1); above the paper's mark when it is in the way
    base = (metric ~ /speedup/) ? 1 : 0
    for (g = 1; g <= ng; g++) for (i = 1; i <= nser; i++) if ((g, i) in bv) {
        v = bv[g, i]
        if (!(g == ng && geo) && (v - base < 0 ? base - v : v - base) >= 0.10 * (ymax - ymin - base)) continue
        y = v < 0 ? 0 : v
        # the rotated label spans about 16% of the axis above y (of its whole range, negative part
        # included): move it over a mark in that span
        span = ymax - ymin
        if (((g, i) in pvv) && pvv[g, i] > y - 0.03 * span && pvv[g, i] < y + 0.16 * span) y = (pvv[g, i] > y ? pvv[g, i] : y) + 0.035 * span
        lb = lb (gx[g] + i - 1) " " y " " fmt(v) "\n"
    }
    if (kind == "barsset") {
        o = "set xtics ("
        for (g = 1; g <= ng; g++) o = o (g > 1 ? ", " : "") "\"" two(gl[g]) "\" " (gx[g] + (nser - 1) / 2)
        o = o "); set xrange [-0.9:" (gx[ng] + nser - 0.1) "]; set yrange [" ymin ":" ymax "]; "
        if (geo && nw > 0) o = o "set arrow 9 from first " ((gx[nw] + nser - 1 + gx[ng]) / 2) ", graph 0 to first " ((gx[nw] + nser - 1 + gx[ng]) / 2) ", graph 1 nohead dt 3 lw 0.8 lc rgb '#777777' back; "
        else o = o "unset arrow 9; "
        print o "npaper = " (pm != "" ? 1 : 0)
        return
    }
    for (i = 1; i <= nser; i++) printf "%s\n\n", (bx[i] != "" ? bx[i] : NOPT "\n")
    printf "%s\n\n", (lb != "" ? lb : NOPT " -\n")
    printf "%s\n\n", (pm != "" ? pm : NOPT "\n")
    printf "%s\n\n", (na != "" ? na : NOPT " -\n")
}
# the stacked bars of one mode: fills sdata (rows), xs (tic list), ns (groups), smax (tallest)
function stack(   g, w, i, k, x, b, c, p, o, gw, ok, lbl) {
    gw = nex + 1.3
    for (g = 1; g <= nw; g++) {
        # every workload gets its slot in both modes, so that the panels line up
        w = ord[g]; k = w SUBSEP mode "/bsp"; ns++
        b = ((k in row) && tv[k] > 0) ? tv[k] : 0
        if (b == 0) nadata = nadata ((ns - 1) * gw + 1) " 0 n/a\n"
        for (i = 1; i <= nex; i++) {
            k = w SUBSEP mode "/" EX[i]; x = (ns - 1) * gw + i - 1
            lbl = (b == 0) ? "" : substr(EX[i], 1, 1)  # no letters under a workload without this mode
            xs = xs (xs != "" ? ", " : "") "\"" (i == 2 ? lbl "\\n" lab(w) : lbl) "\" " x
            if (!(k in row) || b == 0) continue
            c = 0; o = x; ok = 1
            for (p = 1; p <= npart; p++) {
                if (!((k, p) in part)) { ok = 0; break }
                c += part[k, p]; o = o " " c * 100 / b
            }
            if (!ok) { o = x; for (p = 1; p <= npart; p++) o = o " -" }
            sdata = sdata o " " tv[k] * 100 / b " " i "\n"
            if (tv[k] * 100 / b > smax) smax = tv[k] * 100 / b
        }
    }
    if (sdata == "") { o = NOPT; for (p = 1; p <= npart; p++) o = o " 0"; sdata = o " 0 1\n" }
}
END {
    if (kind == "bars" || kind == "barsset") bars()
    else if (kind == "stack") { stack(); printf "%s\n\n%s", sdata, (nadata != "" ? nadata : NOPT " -\n") }
    else if (kind == "stackset") {
        stack()
        print "set xtics (" xs "); set xrange [-0.8:" ((ns > 0 ? ns : 1) * (nex + 1.3) - 1.5) "]; stackmax = " (smax > 0 ? smax : 100) "; nstack = " ns
    } else if (kind == "info") {
        any = 0; all = 1
        for (k in row) { any = 1; for (p = 1; p <= npart; p++) if (!((k, p) in part)) all = 0 }
        print (any && all) ? "parts" : "total"
    }
}
