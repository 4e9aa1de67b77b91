# plot-sweep.gp: draws what scripts/plot-sweep.awk decided (run by scripts/plot-sweep.sh).
# usage: gnuplot -e "dir='DIR'; outbase='OUT'" scripts/plot-sweep.gp
# Reads DIR/setup.gp (layout, titles, ranges) and DIR/data; writes OUT.png (pngcairo, 300 dpi)
# and OUT.svg, the same size in inches.
load dir.'/setup.gp'
data = dir.'/data'
set encoding utf8
array LC[10] = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#17becf', '#7f7f7f', '#bcbd22']
array PTY[10] = [7, 5, 9, 13, 11, 15, 4, 6, 8, 10]
set border 3 lw 0.8
set tics nomirror out scale 0.5
set xtics font ",6.5"
set ytics font ",6.5"
set mytics 2
set grid xtics ytics lt 1 lc rgb '#e3e3e3' lw 0.6
unset key
do for [term = 1:2] {
  if (term == 1) { set terminal pngcairo noenhanced size W*300, H*300 font "Sans,8" fontscale 3.125 linewidth 3.0 pointscale 3.0; set output outbase.'.png' }
  if (term == 2) { set terminal svg noenhanced size W*96, H*96 font "Sans,8" fontscale 1.0 linewidth 1.0 background rgb 'white'; set output outbase.'.svg' }
  if (logx) { set logscale x 2 } else { unset logscale x }
  set multiplot
  unset label; unset arrow; unset object
  set label 1 ttl at screen 0.5, screen T_Y center font T_FONT
  set label 2 subtext at screen 0.5, screen SUB_Y center font ",6.5" tc rgb '#333333'
  set label 3 xl at screen XL_X, screen XL_Y center font ",7.5"
  set label 4 yl at screen YL_X, screen YL_Y center rotate by 90 font ",7.5"
  # the legend: a line and point per series, under the x label
  if (ns > 1) {
    set label 5 keytitle.':' at screen KT_X, screen KT_Y + 0.04 / H left font ",6.5" tc rgb '#333333'
    do for [si = 1:ns] {
      set arrow 100 + si from screen S_X[si], screen S_Y[si] + 0.045 / H to screen S_X[si] + SAMPLE, screen S_Y[si] + 0.045 / H \
          nohead lw 1.2 lc rgb LC[(si - 1) % 10 + 1] front
      set label 100 + si '' at screen S_X[si] + SAMPLE / 2, screen S_Y[si] + 0.045 / H point pt PTY[(si - 1) % 10 + 1] ps 0.55 lc rgb LC[(si - 1) % 10 + 1] front
      set label 200 + si S_T[si] at screen S_X[si] + SAMPLE + 0.05 / W, screen S_Y[si] + 0.045 / H left font ",6.5" front
    }
  }
  do for [fi = 1:nf] {
    set lmargin at screen P_L[fi]; set rmargin at screen P_R[fi]
    set tmargin at screen P_T[fi]; set bmargin at screen P_B[fi]
    set format y (F_C[fi] ? '% h' : '')
    set yrange [Y_LO[fi]:Y_HI[fi]]
    if (speedup) { set arrow 1 from graph 0, first 1 to graph 1, first 1 nohead dt 2 lw 0.8 lc rgb '#555555' back }
    if (marker == marker) {
      set arrow 2 from first marker, graph 0 to first marker, graph 1 nohead dt 3 lw 1.0 lc rgb '#555555' back
      set label 6 markerlabel at first marker, graph 1.0 right offset -0.3, -0.6 font ",6" tc rgb '#444444' front
    }
    if (nf > 1) { set label 7 F_T[fi] at graph 0.5, graph 1.0 center offset 0, 0.6 font ",7" }
    plot for [si = 1:ns] data index (fi - 1) * ns + si - 1 using 1:2 with linespoints \
         lc rgb LC[(si - 1) % 10 + 1] pt PTY[(si - 1) % 10 + 1] ps 0.55 lw 1.2
    # what is drawn once (titles, legend) goes with the first panel
    unset label; unset arrow
  }
  unset multiplot
  unset output
}
