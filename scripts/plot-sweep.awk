# plot-sweep.awk: decides what a sweep CSV figure shows, or refuses; scripts/plot-sweep.sh runs it.
# usage: awk -F, -f plot-sweep.awk -v xf= -v sf= -v ff= -v yc= -v where='F=V;F=V' \
#            -v diag='A,B' -v bases='F=V;F=V' -v gpuname=HW -v gpu=TEXT -v calib=TEXT \
#            -v params=';P;Q' -v wl=WORKLOAD -v title=TEXT [-v size=WxH] [-v freey=1] -v out=DIR SWEEP.csv
# Writes DIR/data (index block (facet-1)*nseries + series-1: "x y" rows, by x) and DIR/setup.gp
# (gnuplot variables for plot-sweep.gp: the layout in screen fractions, titles, ranges, tics). On a CSV it cannot draw faithfully, prints the reason
# to stderr and exits 2.
#
# Inputs are the columns before `exec` (but `point`), the first of each name; `exec` is one
# too. A dimension is an input that takes more than one value in the kept rows. Inputs that
# vary together one-to-one (a zipped sweep, or --diag on a cross product) count as one
# dimension: the first is drawn, the others are named in the axis label. The figure has three
# places for dimensions (x, series, facets); every other input must hold one value (fix it with
# -w FIELD=VALUE), or the lines would join points that differ in something not shown.

function die(msg) { print "plot-sweep: " msg > "/dev/stderr"; failed = 1; exit 2 }
function isnum(s) { return s ~ /^[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?$/ }
function cat_field(f) { return f == "workload" || f == "mode" || f == "exec" || f == "hw" }
function short(v) { sub(/^llama3-8b-/, "llama-", v); return v }
function g4(v) { return (v == int(v) || v >= 1000 || v <= -1000) ? sprintf("%.0f", v) : sprintf("%.4g", v) }
function gq(s) { gsub(/\\/, "\\\\", s); gsub(/"/, "\\\"", s); return "\"" s "\"" }
function brief(f) { return (f in BRIEF) ? BRIEF[f] : f }
function pretty(f) {
    if (f in PRETTY) return PRETTY[f]
    return f
}
function vals(f,   i, s, n) {
    s = ""; n = 0
    for (i = 1; i <= nv[f]; i++) { if (n == 6) { s = s ", ..."; break } s = s (n ? ", " : "") v[f, i]; n++ }
    return s
}
# distinct values of every candidate dimension over the kept rows, in the order they appear
function count(   r, j, f, val) {
    for (j = 1; j <= nin; j++) {
        f = inp[j]; nv[f] = 0; split("", seenv)
        for (r = 1; r <= nr; r++) if (keep[r]) {
            val = cell[r, col[f]]
            if (!(val in seenv)) { seenv[val] = 1; v[f, ++nv[f]] = val }
        }
    }
}
# sort the values of f: numeric ascending when all numeric; exec in model order; else as seen
function sortvals(f,   i, j, t, allnum, rank) {
    allnum = 1
    for (i = 1; i <= nv[f]; i++) if (!isnum(v[f, i])) allnum = 0
    numeric[f] = allnum
    if (f == "exec") { rank["bsp"] = 1; rank["vf"] = 2; rank["kitsune"] = 3 }
    for (i = 2; i <= nv[f]; i++) for (j = i; j > 1; j--) {
        if (allnum ? (v[f, j - 1] + 0 > v[f, j] + 0) : (f == "exec" && rank[v[f, j - 1]] > rank[v[f, j]])) {
            t = v[f, j]; v[f, j] = v[f, j - 1]; v[f, j - 1] = t
        } else break
    }
    for (i = 1; i <= nv[f]; i++) pos[f, v[f, i]] = i
}
BEGIN {
    PRETTY["sm_count"] = "SM count"
    PRETTY["clock_MHz"] = "SM clock (MHz)"
    PRETTY["l2.bandwidth_GBps"] = "L2 bandwidth (GB/s)"
    PRETTY["l2.capacity_MiB"] = "L2 capacity (MiB)"
    PRETTY["dram.bandwidth_GBps"] = "DRAM bandwidth (GB/s)"
    PRETTY["dram.capacity_GiB"] = "DRAM capacity (GiB)"
    PRETTY["sm.smem_per_sm_KiB"] = "shared memory per SM (KiB)"
    PRETTY["speedup_vs_bsp"] = "speedup over bsp (×)"
    PRETTY["speedup_vs_vf"] = "speedup over vf (×)"
    PRETTY["capped_speedup_vs_bsp"] = "speedup over bsp under the power cap (×)"
    PRETTY["time_s"] = "time (s)"
    PRETTY["energy_J"] = "energy (J)"
    PRETTY["avg_power_W"] = "average power (W)"
    PRETTY["dram_bytes"] = "DRAM bytes"
    PRETTY["workload"] = "workload"; PRETTY["mode"] = "mode"; PRETTY["exec"] = "execution model"; PRETTY["hw"] = "GPU"
    BRIEF["sm_count"] = "SMs"; BRIEF["clock_MHz"] = "clock"; BRIEF["l2.bandwidth_GBps"] = "L2 bandwidth"
    BRIEF["l2.capacity_MiB"] = "L2 capacity"; BRIEF["dram.bandwidth_GBps"] = "DRAM bandwidth"
    BRIEF["dram.capacity_GiB"] = "DRAM capacity"
    if (yc == "") yc = "speedup_vs_bsp"
    nb = split(bases, B, ";")
    for (i = 1; i <= nb; i++) if (B[i] != "") { k = B[i]; sub(/=.*/, "", k); t = B[i]; sub(/^[^=]*=/, "", t); base[k] = t }
}
/^[ \t]*$/ { next }
NR == 1 || hdr == 0 {
    sub(/\r$/, "")
    for (i = 1; i <= NF; i++) if (!($i in col)) { col[$i] = i; name[i] = $i }
    if (!("exec" in col)) die(FILENAME ": no exec column: not a kitsune sweep CSV (header: " $0 ")")
    for (i = 1; i < col["exec"]; i++) if (name[i] != "" && name[i] != "point") inp[++nin] = name[i]
    inp[++nin] = "exec"
    hdr = 1; ncol = NF
    next
}
{
    sub(/\r$/, "")
    if ($1 == "point" || $(col["exec"]) == "exec") next   # a header repeated by a merge
    nr++
    for (i = 1; i <= NF; i++) cell[nr, i] = $i
    keep[nr] = 1
}
END {
    if (failed) exit 2
    if (nr == 0) die(FILENAME ": no rows")
    if (!(yc in col)) {
        s = ""; for (i = col["exec"] + 1; i <= ncol; i++) if (name[i] != "") s = s " " name[i]
        die("-y " yc ": no such column in " FILENAME "; outputs:" s)
    }
    isin["exec"] = 1
    for (j = 1; j <= nin; j++) isin[inp[j]] = 1
    # -w FIELD=VALUE filters
    nw = split(where, W, ";")
    for (i = 1; i <= nw; i++) {
        if (W[i] == "") continue
        f = W[i]; sub(/=.*/, "", f); val = W[i]; sub(/^[^=]*=/, "", val)
        if (!(f in col)) die("-w " W[i] ": no column " f " in " FILENAME)
        fixed[f] = 1; n = 0
        for (r = 1; r <= nr; r++) if (keep[r]) { if (cell[r, col[f]] == val || (isnum(val) && isnum(cell[r, col[f]]) && cell[r, col[f]] + 0 == val + 0)) n++; else keep[r] = 0 }
        if (n == 0) die("-w " W[i] ": no row has " f " = " val)
    }
    # the trivial series of a speedup: bsp over bsp (vf over vf) is 1 by definition
    triv = (yc ~ /speedup_vs_bsp$/) ? "bsp" : (yc ~ /speedup_vs_vf$/) ? "vf" : ""
    if (triv != "" && !fixed["exec"]) {
        n = 0
        for (r = 1; r <= nr; r++) if (keep[r] && cell[r, col["exec"]] != triv) n++
        if (n == 0) die(yc " of " triv " is 1 by definition and " FILENAME " has only " triv " rows: choose another -y (e.g. time_s)")
        for (r = 1; r <= nr; r++) if (cell[r, col["exec"]] == triv) keep[r] = 0
        dropped = "exec " triv " left out (" yc " = 1)"
    }
    # --diag A,B: keep the points where B is scaled from the real GPU by the same factor as A
    if (diag != "") {
        if (split(diag, D, ",") != 2) die("--diag " diag ": give two fields, A,B")
        for (i = 1; i <= 2; i++) {
            if (!(D[i] in isin)) die("--diag: " D[i] " is not a varied input of " FILENAME)
            if (!(D[i] in base) || base[D[i]] + 0 == 0) die("--diag: the real GPU value of " D[i] " is unknown: give --bin and --hw, or --base " D[i] "=VALUE")
        }
        n = 0
        for (r = 1; r <= nr; r++) if (keep[r]) {
            a = cell[r, col[D[1]]] / base[D[1]]; b = cell[r, col[D[2]]] / base[D[2]]
            if (a <= 0 || b <= 0 || (a / b > 1.0001 || b / a > 1.0001)) keep[r] = 0; else n++
        }
        if (n == 0) die("--diag " diag ": no row has " D[2] " scaled by the same factor as " D[1])
    }
    # rows without a y value (e.g. capped_* without --power-cap) cannot be drawn
    nobad = 0
    for (r = 1; r <= nr; r++) if (keep[r] && !isnum(cell[r, col[yc]])) { keep[r] = 0; nobad++ }
    n = 0; for (r = 1; r <= nr; r++) n += keep[r]
    if (n == 0) die("no row has a value of " yc (nobad ? " (it is empty in " nobad " rows)" : ""))
    count()
    for (j = 1; j <= nin; j++) sortvals(inp[j])
    # several GPUs in one file (an hw column): no single real GPU to mark or scale from
    if (("hw" in isin) && nv["hw"] > 1) {
        split("", base); gpuname = ""; calib = ""
        gpu = ""; for (i = 1; i <= nv["hw"]; i++) gpu = gpu (i > 1 ? ", " : "") v["hw", i]
        gpus = 1
    }
    # inputs that vary together one-to-one are one dimension (zipped or --diag)
    for (j = 1; j <= nin; j++) {
        a = inp[j]
        if (nv[a] < 2 || (a in carried) || cat_field(a) || !numeric[a]) continue
        for (k = j + 1; k <= nin; k++) {
            b = inp[k]
            if (nv[b] != nv[a] || (b in carried) || cat_field(b) || !numeric[b]) continue
            split("", ab); split("", ba); ok = 1
            for (r = 1; r <= nr && ok; r++) if (keep[r]) {
                va = cell[r, col[a]]; vb = cell[r, col[b]]
                if ((va in ab) && ab[va] != vb) ok = 0
                if ((vb in ba) && ba[vb] != va) ok = 0
                ab[va] = vb; ba[vb] = va
            }
            if (ok) { carried[b] = a; with[a] = with[a] (with[a] != "" ? ", " : "") b }
        }
    }
    # a field the user named that rides on another: draw it instead
    split(xf " " sf " " ff, U, " ")
    for (i = 1; i <= 3; i++) if (U[i] in carried) {
        a = carried[U[i]]; b = U[i]
        delete carried[b]; carried[a] = b
        nw2 = split(with[a], T, ", "); with[b] = a
        for (k = 1; k <= nw2; k++) if (T[k] != b) { carried[T[k]] = b; with[b] = with[b] ", " T[k] }
        delete with[a]
    }
    # the user's choices
    role["x"] = xf; role["s"] = sf; role["f"] = ff
    split("x s f", R, " "); opt["x"] = "-x"; opt["s"] = "-s"; opt["f"] = "-f"
    for (i = 1; i <= 3; i++) {
        f = role[R[i]]
        if (f == "") continue
        if (!(f in isin)) die(opt[R[i]] " " f ": not an input of " FILENAME " (inputs: " join_inputs() ")")
        if (nv[f] < 2) die(opt[R[i]] " " f ": " f " has one value (" v[f, 1] ") in the rows drawn; nothing to draw along it")
        if (used[f]) die(opt[R[i]] " " f ": also given as " opt[used[f]])
        used[f] = R[i]
    }
    if (xf != "" && !numeric[xf]) die("-x " xf ": the x axis needs numbers (" vals(xf) "); use -s " xf " or -f " xf)
    # the dimensions left, in order: numeric inputs, then hw, workload, exec, mode
    nd = 0
    for (pass = 1; pass <= 2; pass++) for (j = 1; j <= nin; j++) {
        f = inp[j]
        if (nv[f] < 2 || (f in carried) || used[f]) continue
        if ((pass == 1) != (numeric[f] && !cat_field(f))) continue
        dims[++nd] = f
    }
    # order the categorical ones: hw, workload, exec, mode
    split("hw workload exec mode", CO, " ")
    m = 0
    for (j = 1; j <= nd; j++) if (!cat_field(dims[j])) od[++m] = dims[j]
    for (k = 1; k <= 4; k++) for (j = 1; j <= nd; j++) if (dims[j] == CO[k]) od[++m] = dims[j]
    for (j = 1; j <= nd; j++) dims[j] = od[j]
    d = 1
    if (xf == "") {
        for (j = 1; j <= nd; j++) if (numeric[dims[j]] && !cat_field(dims[j])) break
        if (j > nd) die("nothing numeric varies for the x axis" (nd ? " (varied: " join_dims() ")" : " (no input of " FILENAME " takes two values)"))
        xf = dims[j]; used[xf] = "x"
    }
    for (j = 1; j <= nd; j++) if (!used[dims[j]]) rest[++nrest] = dims[j]
    i = 1
    if (sf == "" && i <= nrest) { sf = rest[i]; used[sf] = "s"; i++ }
    if (ff == "" && i <= nrest) { ff = rest[i]; used[ff] = "f"; i++ }
    if (i <= nrest) {
        s = ""; sug = ""
        for (k = 1; k <= nin; k++) { f = inp[k]; if (nv[f] > 1 && !(f in carried)) s = s (s != "" ? "; " : "") f " (" vals(f) ")" }
        for (k = i; k <= nrest; k++) sug = sug " -w " rest[k] "=" (rest[k] == "exec" ? v[rest[k], nv[rest[k]]] : v[rest[k], 1])
        n = 0; for (k = 1; k <= nin; k++) if (nv[inp[k]] > 1 && !(inp[k] in carried)) n++
        die(n " fields vary but a figure shows three (x, series, facets): " s \
            ". Fix the others to one value, e.g." sug (diag == "" ? ", or draw a zipped pair with --diag A,B" : ""))
    }
    # one row per (facet, series, x), else the lines would zigzag between points not told apart
    for (r = 1; r <= nr; r++) if (keep[r]) {
        k = (ff != "" ? cell[r, col[ff]] : "") SUBSEP (sf != "" ? cell[r, col[sf]] : "") SUBSEP cell[r, col[xf]]
        if (k in rowof) {
            die("rows " rowof[k] + 1 " and " r + 1 " of " FILENAME " are the same point (" xf "=" cell[r, col[xf]] \
                (sf != "" ? ", " sf "=" cell[r, col[sf]] : "") (ff != "" ? ", " ff "=" cell[r, col[ff]] : "") \
                ") with " (cell[r, col[yc]] == cell[rowof[k], col[yc]] ? "the same" : "different") " " yc \
                ": the file repeats points (merged twice?) or varies something it has no column for")
        }
        rowof[k] = r
    }
    emit()
}
function join_inputs(   j, s) { s = ""; for (j = 1; j <= nin; j++) s = s (j > 1 ? ", " : "") inp[j]; return s }
function join_dims(   j, s) { s = ""; for (j = 1; j <= nd; j++) s = s (j > 1 ? ", " : "") dims[j]; return s }
function lab(f, val,   t) {
    if (f == "workload") return short(val)
    if (numeric[f] && !cat_field(f)) {
        t = g4(val)
        if ((f in base) && base[f] + 0 > 0) t = t " (×" g4(val / base[f]) ")"
        return t
    }
    return val
}
# text width in inches, roughly (DejaVu Sans: 0.55 em a character)
function tw(str, pt) { return length(str) * 0.55 * pt / 72 }
function put(line) { print line > setup }
function emit(   nf, ns, fi, si, xi, r, k, o, y, ymin, ymax, xmin, xmax, logx, t, dummy, n, i, xl, \
                 cols, rows, W, H, pw, ph, L, Rt, gap, fx, fy, top, lrows, kcols, colw, sub1, sub2, nsub, \
                 ftl, rowgap, kt, ybot, s, mk, note, consts, fxd, lx, ly) {
    nf = (ff != "") ? nv[ff] : 1
    ns = (sf != "") ? nv[sf] : 1
    if (ns > 10) die("-s " sf ": " ns " series are more than a reader can tell apart (10); fix some with -w or facet them (-f " sf ")")
    if (nf > 12) die("-f " ff ": " nf " facets are too many (12); fix some with -w")
    ymin = ""; ymax = ""
    for (r = 1; r <= nr; r++) if (keep[r]) {
        y = cell[r, col[yc]] + 0
        if (ymin == "" || y < ymin) ymin = y
        if (ymax == "" || y > ymax) ymax = y
        fi = (ff != "") ? pos[ff, cell[r, col[ff]]] : 1
        if (!(fi in fmin) || y < fmin[fi]) fmin[fi] = y
        if (!(fi in fmax) || y > fmax[fi]) fmax[fi] = y
    }
    xmin = v[xf, 1] + 0; xmax = v[xf, nv[xf]] + 0
    logx = (xmin > 0 && xmax / xmin > 10)
    dummy = (logx ? xmax * 1000 : xmax + 1000 * (xmax - xmin + 1)) " 0"
    o = out "/data"
    printf "" > o
    for (fi = 1; fi <= nf; fi++) for (si = 1; si <= ns; si++) {
        n = 0
        for (xi = 1; xi <= nv[xf]; xi++) {
            k = (ff != "" ? v[ff, fi] : "") SUBSEP (sf != "" ? v[sf, si] : "") SUBSEP v[xf, xi]
            if (k in rowof) { print cell[rowof[k], col[xf]], cell[rowof[k], col[yc]] > o; n++ }
        }
        if (n == 0) print dummy > o
        else if (n < nv[xf]) missing++
        printf "\n\n" > o
    }
    close(o)

    cols = (nf <= 3) ? nf : (nf == 4) ? 2 : (nf <= 6) ? 3 : 4
    W = (cols <= 2) ? 3.5 : 7.0
    if (size != "") { split(size, t, "x"); W = t[1] + 0 }
    # the caption: GPU and hw file (one line, or two when long), then what is held fixed
    note = dropped
    if (nobad) note = note (note != "" ? "; " : "") nobad " rows without " yc " left out"
    fxd = where; gsub(/;+/, ", ", fxd); sub(/^, /, "", fxd); sub(/, $/, "", fxd)
    consts = ""
    for (j = 1; j <= nin; j++) {
        f = inp[j]
        if (nv[f] == 1 && !index(where ";", ";" f "=") && !(f in carried)) consts = consts (consts != "" ? ", " : "") f "=" short(v[f, 1])
    }
    s = fxd (fxd != "" && consts != "" ? ", " : "") consts
    if (s != "") s = "fixed: " s
    if (note != "") s = s (s != "" ? "; " : "") note
    nsub = 0
    if (gpu != "") {
        t[1] = (gpus ? "GPUs " : "GPU ") gpu
        if (calib != "" && tw(t[1] ", " calib, 6.5) <= W - 0.2) { sub1[++nsub] = t[1] ", " calib }
        else { sub1[++nsub] = t[1]; if (calib != "") sub1[++nsub] = calib }
    }
    if (s != "") { n = wrap(s, W - 0.2, 6.5); for (i = 1; i <= n; i++) sub1[++nsub] = WR[i] }

    # layout, inches: up to 3 panels a row at column width (3.5 in), 4 at double width (7 in)
    cols = (nf <= 3) ? nf : (nf == 4) ? 2 : (nf <= 6) ? 3 : 4
    rows = int((nf + cols - 1) / cols)
    W = (cols <= 2) ? 3.5 : 7.0
    if (size != "") { split(size, t, "x"); W = t[1] + 0 }
    # room between panels and on the right for the x tic labels that overhang the panel edges
    t[7] = tw(g4(v[xf, 1]), 6.5) / 2; t[8] = tw(g4(v[xf, nv[xf]]), 6.5) / 2
    L = 0.52; Rt = (t[8] + 0.04 > 0.10) ? t[8] + 0.04 : 0.10
    gap = (cols > 1) ? (t[7] + t[8] + 0.06 > 0.10 ? t[7] + t[8] + 0.06 : 0.10) + (freey ? 0.30 : 0) : 0
    pw = (W - L - Rt - gap * (cols - 1)) / cols
    ph = (cols == 1) ? 1.7 : (W / cols > 2.2 ? 1.5 : 1.3)
    ftl = (nf > 1) ? 0.17 : 0                     # facet titles
    rowgap = 0.22 + ftl + 0.05                    # tic labels, the next row's facet title
    # legend: the series title on its own line, then columns of entries
    kcols = 1; lrows = 0; kt = 0
    if (ns > 1) {
        colw = 0
        for (si = 1; si <= ns; si++) if (tw(lab(sf, v[sf, si]), 6.5) > colw) colw = tw(lab(sf, v[sf, si]), 6.5)
        colw += 0.38
        kcols = int((W - 0.4) / colw); if (kcols < 1) kcols = 1; if (kcols > ns) kcols = ns
        lrows = int((ns + kcols - 1) / kcols); kt = 0.15
        colw = (W - 0.4) / kcols
    }
    ybot = 0.05 + lrows * 0.15 + kt + 0.06 + 0.18 + 0.20     # legend, x label, tic labels
    H = 0.22 + nsub * 0.115 + 0.06 + ftl + rows * ph + (rows - 1) * rowgap + ybot
    if (size != "") H = t[2] + 0
    if (size != "") ph = (H - 0.22 - nsub * 0.115 - 0.06 - ftl - (rows - 1) * rowgap - ybot) / rows
    if (ph < 0.6) die("--size " size ": too small for " rows " rows of panels")

    setup = out "/setup.gp"
    printf "" > setup
    put("nf = " nf "; ns = " ns "; logx = " logx "; W = " W "; H = " H)
    put("array P_L[" nf "]; array P_R[" nf "]; array P_T[" nf "]; array P_B[" nf "]; array F_T[" nf "]; array F_C[" nf "]")
    for (fi = 1; fi <= nf; fi++) {
        fx = (fi - 1) % cols; fy = int((fi - 1) / cols)
        top = H - 0.22 - nsub * 0.115 - 0.06 - ftl - fy * (ph + rowgap)
        put(sprintf("P_L[%d] = %.5f; P_R[%d] = %.5f; P_T[%d] = %.5f; P_B[%d] = %.5f; F_C[%d] = %d; F_T[%d] = %s", \
            fi, (L + fx * (pw + gap)) / W, fi, (L + fx * (pw + gap) + pw) / W, fi, top / H, fi, (top - ph) / H, \
            fi, (fx == 0 || freey), fi, gq(ff != "" ? pretty(ff) " = " lab(ff, v[ff, fi]) : "")))
    }
    put("array S_T[" ns "]")
    for (si = 1; si <= ns; si++) put(sprintf("S_T[%d] = %s", si, gq(sf != "" ? lab(sf, v[sf, si]) : pretty(yc))))
    # the legend's places, screen fractions: entry si at (S_X, S_Y), its title at (KT_X, KT_Y)
    put("array S_X[" ns "]; array S_Y[" ns "]")
    for (si = 1; si <= ns; si++) {
        lx = 0.3 + ((si - 1) % kcols) * colw; ly = 0.05 + (lrows - 1 - int((si - 1) / kcols)) * 0.15
        put(sprintf("S_X[%d] = %.5f; S_Y[%d] = %.5f", si, lx / W, si, ly / H))
    }
    put(sprintf("keytitle = %s; KT_X = %.5f; KT_Y = %.5f; SAMPLE = %.5f", gq(sf != "" ? pretty(sf) : ""), 0.3 / W, (0.05 + lrows * 0.15) / H, 0.28 / W))
    put(sprintf("XL_Y = %.5f; XL_X = %.5f; YL_X = %.5f; YL_Y = %.5f", (0.05 + lrows * 0.15 + kt + 0.1) / H, \
        (L + (W - L - Rt) / 2) / W, 0.1 / W, (H - 0.22 - nsub * 0.115 - 0.06 - ftl + ybot) / 2 / H))
    # the title (default: Y vs X); its font: 8.5 pt, smaller when it would not fit the width
    if (title == "") { title = pretty(yc); sub(/ \([^)]*\)$/, "", title); title = title " vs " brief(xf) }
    put("ttl = " gq(title))
    t[1] = 8.5; if (tw(title, 8.5) > W - 0.15) t[1] = (W - 0.15) / (length(title) * 0.55 / 72)
    if (t[1] < 6.5) t[1] = 6.5
    put(sprintf("T_Y = %.5f; T_FONT = ',%.1f'", (H - 0.12) / H, t[1]))
    s = ""; for (i = 1; i <= nsub; i++) s = s (i > 1 ? "\\n" : "") sub1[i]
    put(sprintf("subtext = %s; SUB_Y = %.5f", gq2(s), (H - 0.28) / H))
    # x label: the field, the fields varied with it, the scale; shorter forms when too wide
    xl = pretty(xf); t[2] = brief(xf); t[3] = xf
    if (xf in with) {
        n = split(with[xf], t, ", ")
        xl = brief(xf); t[3] = xf
        for (i = 1; i <= n; i++) { xl = xl (i == 1 ? " and " : ", ") brief(t[i]); t[3] = t[3] " + " t[i] }
        xl = xl " scaled together"; t[2] = xl
    }
    if (logx) xl = xl ", log scale"
    if (tw(xl, 7.5) > W - L) xl = t[2] (logx ? ", log" : "")
    if (tw(xl, 7.5) > W - L) xl = t[3] (logx ? ", log" : "")
    put(sprintf("xl = %s; yl = %s", gq(xl), gq(pretty(yc))))
    if (logx) put(sprintf("set xrange [%.6g:%.6g]", xmin / 1.2, xmax * 1.2))
    else put(sprintf("set xrange [%.6g:%.6g]", xmin - 0.05 * (xmax - xmin), xmax + 0.05 * (xmax - xmin)))
    # y ranges: one for all panels, or one per panel (--free-y)
    put("array Y_LO[" nf "]; array Y_HI[" nf "]")
    for (fi = 1; fi <= nf; fi++) {
        t[5] = freey ? fmin[fi] : ymin; t[6] = freey ? fmax[fi] : ymax
        if (t[5] == "") { t[5] = ymin; t[6] = ymax }
        yrng(t[5], t[6])
        put(sprintf("Y_LO[%d] = %.6g; Y_HI[%d] = %.6g", fi, ylo, fi, yhi))
    }
    put("speedup = " ((yc ~ /speedup/) ? 1 : 0))
    if (nv[xf] <= 12) {
        s = ""
        for (xi = 1; xi <= nv[xf]; xi++) s = s (xi > 1 ? ", " : "") gq(g4(v[xf, xi])) " " v[xf, xi]
        put("set xtics (" s ")")
    } else put("set xtics autofreq")
    mk = ""
    if ((xf in base) && base[xf] + 0 >= xmin && base[xf] + 0 <= xmax) mk = base[xf]
    t[9] = index(params ";", ";" xf ";") ? short(wl) " default" : (gpuname != "" ? gpuname : "real GPU")
    put(sprintf("marker = %s; markerlabel = %s", (mk != "" ? mk : "NaN"), gq(mk != "" ? t[9] : "")))
    close(setup)
    if (missing) print "plot-sweep: note: " missing " lines lack some x values (drawn with the points they have)" > "/dev/stderr"
}
# a y range with some room: from 0 when the data start near it; speedups always show 1
function yrng(lo, hi,   d) {
    if (yc ~ /speedup/) { if (lo > 1) lo = 1; if (hi < 1) hi = 1 }
    d = hi - lo; if (d <= 0) d = (hi != 0 ? (hi < 0 ? -hi : hi) : 1)
    if (lo >= 0 && lo < 0.3 * hi) lo = 0; else lo = lo - 0.06 * d
    ylo = lo; yhi = hi + 0.08 * d
}
# split s into lines of at most width inches (at pt points) at ", " and "; ": WR[1..n], returns n
function wrap(s, width, pt,   n, w, line, rest, cut, i, c) {
    n = 0; line = ""
    while (s != "") {
        # the next piece: up to and including the next separator
        cut = 0
        for (i = 1; i < length(s); i++) { c = substr(s, i, 2); if (c == ", " || c == "; ") { cut = i + 1; break } }
        w = cut ? substr(s, 1, cut) : s; s = cut ? substr(s, cut + 1) : ""
        if (line != "" && tw(line w, pt) > width) { sub(/ $/, "", line); WR[++n] = line; line = "" }
        line = line w
    }
    if (line != "") { sub(/ $/, "", line); WR[++n] = line }
    return n
}
# a gnuplot double-quoted string whose \n are newlines
function gq2(s) { gsub(/"/, "\\\"", s); return "\"" s "\"" }
