# plot.gp: figures (a)-(e) from a `kitsune compare --mode both --format csv` file.
# usage: gnuplot -e "cmp='compare.csv'; outdir='figures'" scripts/plot.gp
# Optional variables (scripts/figures.sh sets them all):
#   gpu     the GPU, for every title: "a100 (NVIDIA A100 SXM4 40 GB)"; default: the CSV's hw column
#   calib   "datasheet hw file" or "calibrated hw file (...)"; default: nothing
#   ref     the paper's numbers (format of validation/kitsune-paper.csv, plus paper_ops rows for
#           coverage and workload "geomean" rows); drawn as marks when paper=1
#   paper   1: overlay ref as "paper (A100, simulated)"; 0: say why not (the text in nopaper);
#           default: 1 when gpu names an A100
#   parts   energy parts CSV (workload,mode,exec,energy_dram_J,...) when cmp lacks those columns
#   scripts the folder of figdata.awk (default scripts)
# Writes outdir/fig-{a..e}-*.png (pngcairo, 300 dpi, 3.5 in wide: paper column width) and .svg
# (same size in inches). Columns are looked up by header name, so column order may change. The
# sweep figures are scripts/plot-sweep.sh.

if (!exists("cmp")) cmp = 'figures/compare.csv'
if (!exists("outdir")) outdir = 'figures'
if (!exists("scripts")) scripts = 'scripts'
if (!exists("ref")) ref = ''
if (!exists("parts")) parts = ''
if (!exists("gpu")) gpu = system("awk -F, 'NR==1{for(i=1;i<=NF;i++)if($i==\"hw\")c=i;next} c{print $c;exit}' '".cmp."'")
if (!exists("calib")) calib = ''
# the paper simulated an A100-class GPU: by default its marks go on A100 figures only
if (!exists("paper")) paper = (ref ne '' && (strstrt(gpu, 'a100') > 0 || strstrt(gpu, 'A100') > 0))
if (!exists("nopaper")) nopaper = (ref ne '' && !paper) ? 'paper marks omitted: the paper simulated an A100-class GPU' : ''
q(f) = (f eq '') ? '' : "'".f."'"
files = q(ref).' '.q(cmp).' '.q(parts)
AWK(kind, opts) = sprintf("awk -F, -f '%s/figdata.awk' -v kind=%s %s %s", scripts, kind, opts, files)
# the caption under the title: the GPU and its hw file, on two lines when one is too long
gpuline = 'GPU '.gpu
sub = (strlen(gpuline) + strlen(calib) > 62) ? gpuline."\n".calib : gpuline.(calib ne '' ? ', '.calib : '')
nsub = (strlen(gpuline) + strlen(calib) > 62) ? 2 : 1
if (!paper && nopaper ne '') { sub = sub."\n".nopaper; nsub = nsub + 1 }
energyparts = system(AWK('info', '-v what=energy')) eq 'parts'

set encoding utf8
set datafile missing '-'
set style fill solid 1.0 border lc rgb '#333333'
set border 3 lw 0.8
set tics nomirror out scale 0.5
unset key

# colours: vf light, kitsune dark; inference blue, training orange
c_vi = '#9ecae1'; c_ki = '#2171b5'; c_vt = '#fdae6b'; c_kt = '#d94801'

# a legend drawn by hand, in inches from the bottom left (W, H: the figure's size)
LBOX(id, x, y, c) = sprintf("set object %d rect from screen %.5f,%.5f to screen %.5f,%.5f fc rgb '%s' fs solid 1.0 border lc rgb '#333333' front", \
                            id, x / W, y / H, (x + 0.11) / W, (y + 0.085) / H, c)
LTXT(id, x, y, t) = sprintf("set label %d \"%s\" at screen %.5f,%.5f left font ',6.5' front", id, t, x / W, (y + 0.04) / H)
LPT(id, x, y) = sprintf("set label %d '' at screen %.5f,%.5f point pt 12 ps 0.8 lw 1.2 lc rgb 'black' front", id, (x + 0.055) / W, (y + 0.042) / H)
LPTW(id, x, y) = sprintf("set label %d '' at screen %.5f,%.5f point pt 13 ps 0.8 lc rgb 'white' front", id, (x + 0.055) / W, (y + 0.042) / H)

do for [term = 1:2] {
  if (term == 1) { ext = '.png'; dpi = 300.0; fs = 3.125; lws = 3.0; pss = 3.0 }
  if (term == 2) { ext = '.svg'; dpi = 96.0; fs = 1.0; lws = 1.0; pss = 1.0 }

  # (a)-(c): grouped bars, a geomean group, value labels on short bars, paper marks; 3.5 x 2.5 in
  W = 3.5; H = 2.45 + 0.12 * (nsub - 1)
  if (term == 1) { set terminal pngcairo noenhanced size W*dpi, H*dpi font "Sans,8" fontscale fs linewidth lws pointscale pss }
  if (term == 2) { set terminal svg noenhanced size W*dpi, H*dpi font "Sans,8" fontscale fs linewidth lws background rgb 'white' }
  do for [fig = 1:3] {
    if (fig == 1) { met = 'speedup_vs_bsp'; opt = '-v geo=1 -v scale=1'; name = 'a-speedup'
                    ttl = '(a) Speedup over bulk-synchronous (bsp)'; yl = 'speedup over bsp (×)' }
    if (fig == 2) { met = 'traffic_reduction_frac'; opt = '-v geo=1 -v red=1 -v scale=100'; name = 'b-traffic'
                    ttl = '(b) DRAM traffic removed, vs bsp'; yl = 'DRAM bytes removed (%)' }
    if (fig == 3) { met = 'coverage_frac'; opt = '-v geo=0 -v scale=100'; name = 'c-coverage'
                    ttl = '(c) Ops in multi-op kernels or pipelines'; yl = 'ops covered (% of ops)' }
    opt = opt.' -v paper='.paper
    set output outdir.'/fig-'.name.ext
    unset label; unset arrow; unset object
    eval system(AWK('barsset', '-v metric='.met.' '.opt))
    set label 1 ttl at screen 0.5, screen (H - 0.13) / H center font ",8.5"
    set label 2 sub at screen 0.5, screen (H - 0.29) / H center font ",6.5" tc rgb '#333333'
    set tmargin at screen (H - 0.40 - 0.12 * nsub) / H
    set bmargin at screen 0.66 / H
    set lmargin at screen 0.50 / W
    set rmargin at screen (W - 0.06) / W
    set ylabel yl font ",7.5" offset 1.5, 0
    set ytics font ",6.5"
    set mytics 2
    set xtics font ",6.5" scale 0 offset 0, 0.15
    set grid ytics lt 1 lc rgb '#dddddd' lw 0.6
    set boxwidth 0.86 absolute
    if (fig == 1) { set arrow 1 from graph 0, first 1 to graph 1, first 1 nohead dt 2 lw 0.8 lc rgb '#444444' front }
    # legend: inference / training rows of vf, kitsune; the paper mark on the right
    eval LTXT(11, 0.30, 0.19, 'inference'); eval LBOX(12, 0.95, 0.19, c_vi); eval LTXT(13, 1.09, 0.19, 'vf')
    eval LBOX(14, 1.35, 0.19, c_ki); eval LTXT(15, 1.49, 0.19, 'kitsune')
    eval LTXT(16, 0.30, 0.05, 'training'); eval LBOX(17, 0.95, 0.05, c_vt); eval LTXT(18, 1.09, 0.05, 'vf')
    eval LBOX(19, 1.35, 0.05, c_kt); eval LTXT(20, 1.49, 0.05, 'kitsune')
    if (npaper) { eval LPTW(21, 2.15, 0.19); eval LPT(22, 2.15, 0.19); eval LTXT(23, 2.29, 0.19, 'paper (A100, simulated)') }
    D = '< '.AWK('bars', '-v metric='.met.' '.opt)
    plot D index 0 using 1:2 with boxes lc rgb c_vi, \
         '' index 1 using 1:2 with boxes lc rgb c_ki, \
         '' index 2 using 1:2 with boxes lc rgb c_vt, \
         '' index 3 using 1:2 with boxes lc rgb c_kt, \
         '' index 4 using 1:2:3 with labels rotate by 90 left offset 0, 0.3 font ",6", \
         '' index 6 using 1:2:3 with labels rotate by 90 left offset 0, 0.3 font ",5.5" tc rgb '#777777', \
         '' index 5 using 1:2 with points pt 13 ps 0.8 lc rgb 'white', \
         '' index 5 using 1:2 with points pt 12 ps 0.8 lw 1.2 lc rgb 'black'
  }

  # (d), (e): stacked parts of time / energy per exec, % of bsp; inference and training panels
  W = 3.5; H = 4.3 + 0.12 * (nsub - 1)
  if (term == 1) { set terminal pngcairo noenhanced size W*dpi, H*dpi font "Sans,8" fontscale fs linewidth lws pointscale pss }
  if (term == 2) { set terminal svg noenhanced size W*dpi, H*dpi font "Sans,8" fontscale fs linewidth lws background rgb 'white' }
  do for [fig = 4:5] {
    unset label; unset arrow; unset object
    if (fig == 4) {
      set output outdir.'/fig-d-classes'.ext
      what = 'time'; np = 4; totcol = 6
      ttl = '(d) Time by utilization class (low: < 33% of peak)'
      yl = 'time (% of bsp time)'
      array ptitle[5] = ['SM and DRAM both low', 'SM low', 'DRAM low', 'neither low', '']
      array pcol[5] = ['#d7191c', '#fdae61', '#abd9e9', '#2c7bb6', '#bbbbbb']
      note = 'b, v, k: bsp, vf, kitsune; numbers: % of bsp time'
    }
    if (fig == 5) {
      set output outdir.'/fig-e-energy'.ext
      what = 'energy'; np = energyparts ? 5 : 0; totcol = 7
      ttl = '(e) Energy by part, per execution model'
      yl = 'energy (% of bsp energy)'
      array ptitle[5] = ['DRAM', 'L2', 'compute (tensor + SIMT)', 'SMEM + RF', 'static']
      array pcol[5] = ['#8c510a', '#dfc27d', '#2c7fb8', '#80cdc1', '#bdbdbd']
      note = 'b, v, k: bsp, vf, kitsune; numbers: % of bsp energy'.(energyparts ? '' : '; no parts in the CSV: totals only')
    }
    set multiplot
    set label 1 ttl at screen 0.5, screen (H - 0.13) / H center font ",8.5"
    set label 2 sub at screen 0.5, screen (H - 0.29) / H center font ",6.5" tc rgb '#333333'
    # at the bottom: the legend (two columns of boxes), then what the letters and numbers are
    set label 3 note at screen 0.5, screen 0.09 / H center font ",6.5" tc rgb '#555555'
    if (np > 0) {
      do for [i = 1:np] {
        lx = 0.55 + ((i - 1) % 2) * 1.45; ly = 0.21 + (int((np - 1) / 2) - int((i - 1) / 2)) * 0.15
        eval LBOX(10 + 2 * i, lx, ly, pcol[i]); eval LTXT(11 + 2 * i, lx + 0.15, ly, ptitle[i])
      }
    }
    lgh = 0.21 + (np > 0 ? (int((np - 1) / 2) + 1) * 0.15 : 0)
    ptop = H - 0.50 - 0.12 * nsub
    pan_h = (ptop - lgh - 0.38 - 0.62) / 2.0
    set boxwidth 0.8 absolute
    set lmargin at screen 0.50 / W
    set rmargin at screen (W - 0.06) / W
    set grid ytics lt 1 lc rgb '#dddddd' lw 0.6
    do for [pan = 1:2] {
      md = (pan == 1) ? 'inference' : 'training'
      o = '-v mode='.md.' -v what='.what
      eval system(AWK('stackset', o))
      S = '< '.AWK('stack', o)
      ytop = stackmax * 1.12
      set yrange [0:(ytop < 112 ? 112 : ytop)]
      set ytics 0, 20 font ",6.5"
      set mytics 2
      set ylabel yl font ",7.5" offset 1.5, 0
      set xtics font ",6.2" scale 0 offset 0, 0.15
      if (pan == 1) { set tmargin at screen ptop / H; set bmargin at screen (ptop - pan_h) / H }
      if (pan == 2) { set tmargin at screen (ptop - pan_h - 0.62) / H; set bmargin at screen (lgh + 0.38) / H }
      set label 4 md at graph 0.0, graph 1.0 left offset 0, 0.6 font ",7.5"
      if (np > 0) {
        plot for [i = np:1:-1] S index 0 using 1:(column(i + 1)) with boxes lc rgb pcol[i], \
             S index 0 using 1:(column(totcol)):(column(totcol + 1) > 1 ? sprintf('%.0f', column(totcol)) : '') \
               with labels offset 0, 0.45 font ",5.5", \
             S index 1 using 1:2:3 with labels offset 0, 0.5 font ",6" tc rgb '#777777'
      } else {
        plot S index 0 using 1:(column(totcol)) with boxes lc rgb '#969696', \
             S index 0 using 1:(column(totcol)):(column(totcol + 1) > 1 ? sprintf('%.0f', column(totcol)) : '') \
               with labels offset 0, 0.45 font ",5.5", \
             S index 1 using 1:2:3 with labels offset 0, 0.5 font ",6" tc rgb '#777777'
      }
      unset label; unset object
    }
    unset multiplot
    set autoscale; set ytics autofreq
  }
  unset output
}
