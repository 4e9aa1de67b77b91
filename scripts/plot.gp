# plot.gp: paper-style figures from the CSV files kitsune writes.
# usage: gnuplot -e "cmp='compare.csv'; swp='sweep.csv'; outdir='figures'" scripts/plot.gp
#   cmp: kitsune compare --format csv (one row per workload, mode, exec)
#   swp: kitsune sweep CSV whose first varied column (column 4) is the x axis, e.g. sm_count
# Writes outdir/fig-{a..f}-*.png (pngcairo) and .svg, 3.5 in wide (paper column width).
# Columns are looked up by header name, so column order may change.

if (!exists("cmp")) cmp = 'figures/compare.csv'
if (!exists("swp")) swp = 'figures/sweep.csv'
if (!exists("outdir")) outdir = 'figures'

# awk prelude: map header names to column numbers; short workload labels.
AWK = "awk -F, 'NR==1{for(i=1;i<=NF;i++)c[$i]=i;next} \
function lab(w){sub(/^llama3-8b-/,\"llama-\",w);return w} "

# (a)-(c): one row per workload: label, vf/kitsune inference, vf/kitsune training of column COL
# scaled by S; 0 (no bar) where missing, so that a partial CSV still plots.
pivot(col, s) = "< ".AWK."{w=$c[\"workload\"];k=$c[\"mode\"] \"/\" $c[\"exec\"];v=$c[\"".col."\"];\
 if(!(w in seen)){seen[w]=1;ord[++n]=w} if(v!=\"\")val[w,k]=v*".s."} \
 END{for(i=1;i<=n;i++){w=ord[i];printf \"%s\",lab(w);\
 split(\"inference/vf inference/kitsune training/vf training/kitsune\",K,\" \");\
 for(j=1;j<=4;j++)printf \" %s\",((w,K[j]) in val)?val[w,K[j]]:0;print \"\"}}' ".cmp

# (d): inference rows per (workload, exec): the four utilization classes as % of the bsp time.
classes = "< ".AWK."$c[\"mode\"]==\"inference\"{w=$c[\"workload\"];x=$c[\"exec\"];\
 if(x==\"bsp\")b[w]=$c[\"time_s\"];r[++n]=w;e[n]=x;\
 for(j=0;j<4;j++)t[n,j]=$c[\"class_\" (j==0?\"both_low\":j==1?\"sm_low\":j==2?\"dram_low\":\"neither_low\") \"_time_s\"]} \
 END{for(i=1;i<=n;i++){s=b[r[i]]>0?100/b[r[i]]:0;printf \"%s\",(e[i]==\"bsp\"?lab(r[i]) \":bsp\":e[i]);\
 for(j=0;j<4;j++)printf \" %g\",t[i,j]*s;print \"\"}}' ".cmp

# (e): inference energy per workload, columns bsp vf kitsune, in mJ.
energy = "< ".AWK."$c[\"mode\"]==\"inference\"{w=$c[\"workload\"];if(!(w in seen)){seen[w]=1;ord[++n]=w}\
 if($c[\"energy_J\"]!=\"\")v[w,$c[\"exec\"]]=$c[\"energy_J\"]*1e3} \
 END{split(\"bsp vf kitsune\",X,\" \");for(i=1;i<=n;i++){w=ord[i];printf \"%s\",lab(w);\
 for(j=1;j<=3;j++){y=((w,X[j]) in v)?v[w,X[j]]:0;printf \" %s\",(y>0?y:\"-\")};print \"\"}}' ".cmp

# (f): kitsune (else the best available exec) speedup over bsp vs the first varied column, one
# block per (workload, mode) separated by two blank lines; the block title is its first line.
sweepx = system("head -1 ".swp." 2>/dev/null | cut -d, -f4 | tr -d '\\r\\n'")
sweepdata = "< awk -F, 'NR==1{for(i=1;i<=NF;i++)c[$i]=i;next} \
 {x=$c[\"exec\"];if(x!=\"kitsune\")next;k=$c[\"workload\"] \" \" $c[\"mode\"];\
 if(!(k in seen)){seen[k]=1;ord[++n]=k} d[k]=d[k] $4 \" \" $c[\"speedup_vs_bsp\"] \"\\n\"} \
 END{for(i=1;i<=n;i++){k=ord[i];sub(/llama3-8b-/,\"llama-\",k);printf \"# %s\\n%s\\n\\n\",k,d[ord[i]]}}' ".swp
sweepn = int(system("awk -F, 'NR>1 && $0 ~ /,kitsune,/{k[$2 \" \" $3]=1} END{n=0;for(i in k)n++;print n}' ".swp." 2>/dev/null"))
sweeptitles = system("awk -F, 'NR>1 && $0 ~ /,kitsune,/{k=$2 \"/\" substr($3,1,3);if(!(k in s)){s[k]=1;printf \"%s \", k}}' ".swp." 2>/dev/null | sed 's/llama3-8b-/llama-/g'")

set datafile missing '-'
set style fill solid 0.85 border -1
set boxwidth 0.85
set key above horizontal maxcols 2 font ",8" samplen 1.5 spacing 0.9 width 1
set xtics rotate by 30 right font ",8" nomirror
set ytics font ",8" nomirror
set grid ytics lt 0 lw 0.5
set border 3

do for [term = 1:2] {
  if (term == 1) { set terminal pngcairo size 1050,720 font "Sans,9" fontscale 2.9 linewidth 2.5; ext = '.png' }
  if (term == 2) { set terminal svg size 525,360 font "Sans,9" fontscale 1.3 linewidth 1; ext = '.svg' }

  # (a) speedup over bsp
  set output outdir.'/fig-a-speedup'.ext
  set style data histogram
  set style histogram clustered gap 1
  set ylabel "speedup over bsp (x)"
  set xlabel ""
  set yrange [0:*]
  set title "(a) speedup over bulk-synchronous" font ",9"
  set arrow 1 from graph 0, first 1 to graph 1, first 1 nohead dt 2 lw 1 front
  plot pivot('speedup_vs_bsp', 1) using 2:xtic(1) title 'vf, inference' lc rgb '#9ecae1', \
       '' using 3 title 'kitsune, inference' lc rgb '#08519c', \
       '' using 4 title 'vf, training' lc rgb '#fdae6b', \
       '' using 5 title 'kitsune, training' lc rgb '#a63603'
  unset arrow 1

  # (b) off-chip traffic reduction
  set output outdir.'/fig-b-traffic'.ext
  set ylabel "DRAM traffic reduction vs bsp (%)"
  set yrange [0:100]
  set title "(b) off-chip traffic removed" font ",9"
  plot pivot('traffic_reduction_frac', 100) using 2:xtic(1) title 'vf, inference' lc rgb '#9ecae1', \
       '' using 3 title 'kitsune, inference' lc rgb '#08519c', \
       '' using 4 title 'vf, training' lc rgb '#fdae6b', \
       '' using 5 title 'kitsune, training' lc rgb '#a63603'

  # (c) operator coverage
  set output outdir.'/fig-c-coverage'.ext
  set ylabel "ops covered (% of all ops)"
  set yrange [0:105]
  set title "(c) operator coverage (multi-op groups / pipelines)" font ",9"
  plot pivot('coverage_frac', 100) using 2:xtic(1) title 'vf, inference' lc rgb '#9ecae1', \
       '' using 3 title 'kitsune, inference' lc rgb '#08519c', \
       '' using 4 title 'vf, training' lc rgb '#fdae6b', \
       '' using 5 title 'kitsune, training' lc rgb '#a63603'

  # (d) time breakdown into the four utilization classes, normalized to the bsp time
  set output outdir.'/fig-d-classes'.ext
  set style histogram rowstacked
  set boxwidth 0.75
  set ylabel "time, % of bsp time"
  set yrange [0:*]
  set xtics rotate by 90 right font ",7"
  set key above horizontal font ",7" samplen 1 maxcols 4
  set title "(d) inference time by utilization class (low: < 33% of peak)" font ",8"
  set bmargin 5.5
  set yrange [0:105]
  plot classes using 2:xtic(1) title 'SM+DRAM low' lc rgb '#d7191c', \
       '' using 3 title 'SM low' lc rgb '#fdae61', \
       '' using 4 title 'DRAM low' lc rgb '#abd9e9', \
       '' using 5 title 'neither low' lc rgb '#2c7bb6'
  unset bmargin
  set yrange [0:*]
  set xtics rotate by 30 right font ",8"
  set key above horizontal maxcols 2 font ",8" samplen 1.5 width 1
  set style histogram clustered gap 1
  set boxwidth 0.85

  # (e) energy per execution model
  set output outdir.'/fig-e-energy'.ext
  set logscale y
  set yrange [*:*]
  set ylabel "energy per inference pass (mJ)"
  set title "(e) energy by execution model (inference)" font ",9"
  plot energy using 2:xtic(1) title 'bsp' lc rgb '#969696', \
       '' using 3 title 'vf' lc rgb '#9ecae1', \
       '' using 4 title 'kitsune' lc rgb '#08519c'
  unset logscale y

  # (f) sweep: speedup vs the first varied input
  set output outdir.'/fig-f-sweep'.ext
  set style data linespoints
  set autoscale xy
  set xtics rotate by 0 center font ",8"
  set logscale x 2
  set xlabel sweepx." (varied input, log scale)" noenhanced
  set ylabel "kitsune speedup over bsp (x)"
  set yrange [0:*]
  set key above horizontal maxcols 3 font ",7" samplen 2 width 1
  set title "(f) kitsune speedup vs ".sweepx font ",9" noenhanced
  if (sweepn > 0) {
    plot for [i=0:sweepn-1] sweepdata index i using 1:2 with linespoints lc (i % 8) + 1 pt (i % 7) + 4 ps 0.8 \
         title word(sweeptitles, i + 1)
  } else {
    set label 1 "no kitsune rows in ".swp at graph 0.5, graph 0.5 center
    set yrange [0:1]
    plot 1/0 notitle
    unset label 1
  }
  unset logscale x
  set xlabel ""
  set xtics rotate by 30 right
  set key above horizontal maxcols 2 font ",8" samplen 1.5 width 1
  set style data histogram
  unset output
}
