#!/bin/sh
# plot-sweep.sh: draw any `kitsune sweep` CSV, or refuse with the reason.
usage() {
    cat <<'EOF'
usage: sh scripts/plot-sweep.sh [options] SWEEP.csv OUT
Writes OUT.png (pngcairo, 300 dpi) and OUT.svg: Y against one varied input (x), one line per
value of a second (series), one panel per value of a third (facets). Inputs are the columns
before `exec` (hw fields, workload parameters, workload, mode, exec, and any other column a
sweep writes there). Inputs that vary together one-to-one (a zipped sweep) are one input.
Every other input must hold one value in the rows drawn, else the figure is refused: fix it with
-w, so that no line joins points that differ in something the figure does not show.

  -x FIELD          x axis, numeric (default: the first numeric input that varies); log scale
                    when its values span more than 10x
  -s FIELD          one line per value (default: the next input that varies; may be exec,
                    workload, mode)
  -f FIELD          one panel per value (default: the next one after that)
  -y COLUMN         what to draw (default speedup_vs_bsp; bsp rows, 1 by definition, left out)
  -w FIELD=VALUE    keep only rows where FIELD is VALUE (repeatable), e.g. -w exec=kitsune
  --diag A,B        keep the points where B is scaled from the real GPU by the same factor as A:
                    "A and B scaled together" drawn from an A x B cross product (needs --bin and
                    --hw, or --base)
  --bin BIN --hw HW the real GPU: a dotted marker at its x value, x factors in series labels
                    (looked up with `BIN sweep --hw HW --vary FIELD=x1`; for a workload
                    parameter, the workload's default)
  --base FIELD=V    the real GPU's value of FIELD without --bin (repeatable)
  --title TEXT      the title (default: Y vs X)
  --gpu TEXT        the GPU, in the title's second line (default: the --hw name)
  --calib TEXT      its hw file's status (calibrated / datasheet), after the GPU
  --free-y          a y range per panel (default: one for all, so panels compare)
  --size WxH        figure size in inches (default: 3.5 wide up to 3 panels a row, else 7)
Exit status: 0 drawn, 2 refused or bad options (the reason on stderr), 1 gnuplot failed.
example: sh scripts/plot-sweep.sh --bin build/kitsune --hw a100 -w exec=kitsune \
         -w mode=inference -x sm_count -s l2.bandwidth_GBps -f workload sweep.csv fig-sweep
EOF
}
set -u
here=$(dirname "$0")
xf='' sf='' ff='' yc=speedup_vs_bsp where='' diag='' bin='' hw='' bases=''
title='' gpu='' calib='' size='' freey=0 params='' wl=''
die() { echo "plot-sweep: $*" >&2; exit 2; }
need() { [ $# -ge 2 ] || die "$1 needs a value (see --help)"; }
while [ $# -gt 0 ]; do
    case $1 in
    -h | --help) usage; exit 0 ;;
    -x) need "$@"; xf=$2; shift 2 ;;
    -s) need "$@"; sf=$2; shift 2 ;;
    -f) need "$@"; ff=$2; shift 2 ;;
    -y) need "$@"; yc=$2; shift 2 ;;
    -w) need "$@"; case $2 in *=*) ;; *) die "-w $2: give FIELD=VALUE" ;; esac
        where="$where;$2"; shift 2 ;;
    --diag) need "$@"; diag=$2; shift 2 ;;
    --bin) need "$@"; bin=$2; shift 2 ;;
    --hw) need "$@"; hw=$2; shift 2 ;;
    --base) need "$@"; case $2 in *=*) ;; *) die "--base $2: give FIELD=VALUE" ;; esac
        bases="$bases;$2"; shift 2 ;;
    --title) need "$@"; title=$2; shift 2 ;;
    --gpu) need "$@"; gpu=$2; shift 2 ;;
    --calib) need "$@"; calib=$2; shift 2 ;;
    --free-y) freey=1; shift ;;
    --size) need "$@"; case $2 in *x*) ;; *) die "--size $2: give WxH in inches, e.g. 7x3" ;; esac
        size=$2; shift 2 ;;
    --) shift; break ;;
    -*) die "$1: unknown option (see --help)" ;;
    *) break ;;
    esac
done
[ $# -eq 2 ] || { usage >&2; exit 2; }
csv=$1 outbase=$2
[ -r "$csv" ] || die "$csv: cannot read"
command -v gnuplot >/dev/null 2>&1 || die "gnuplot not found"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

# the real GPU's value of every numeric input: BIN sweep --hw HW --vary FIELD=x1 (one point)
if [ -n "$bin" ] && [ -n "$hw" ]; then
    wl=$(awk -F, 'NR==1{for(i=1;i<=NF;i++)if($i=="workload")c=i;next} c{print $c;exit}' "$csv")
    # shellcheck disable=SC2013 # field names have no spaces
    for f in $(awk -F, 'NR==1{for(i=1;i<=NF;i++){if($i=="exec")exit; if($i!="point"&&$i!="workload"&&$i!="mode"&&$i!="hw")print $i}}' "$csv"); do
        case ";$bases" in *";$f="*) continue ;; esac
        val=$("$bin" sweep --hw "$hw" --workload "${wl:-nerf}" --exec bsp --vary "$f=x1" 2>/dev/null |
            awk -F, -v f="$f" 'NR==1{for(i=1;i<=NF;i++)if($i==f&&!c)c=i;next} c{print $c;exit}')
        [ -n "$val" ] && bases="$bases;$f=$val"
    done
    # workload parameters (their "real" value is the workload's default, not the GPU's)
    params=$("$bin" info --workload "${wl:-nerf}" 2>/dev/null | sed -n 's/^ *params: //p' | head -1 |
        tr ' ' '\n' | sed -n 's/=.*//p' | tr '\n' ';')
fi
awk -F, -f "$here/plot-sweep.awk" -v xf="$xf" -v sf="$sf" -v ff="$ff" -v yc="$yc" \
    -v where="$where" -v diag="$diag" -v bases="$bases" -v gpuname="$hw" -v size="$size" \
    -v gpu="${gpu:-$hw}" -v calib="$calib" -v title="$title" -v freey=$freey \
    -v params=";$params" -v wl="$wl" \
    -v out="$tmp" "$csv" || exit 2
gq() { printf '%s' "$1" | sed "s/'/''/g"; }
gnuplot -e "dir='$(gq "$tmp")'; outbase='$(gq "$outbase")'" \
    "$here/plot-sweep.gp" || exit 1
