#!/bin/sh
# paper-table.sh [BIN [VF]]: the model against the Kitsune paper on its A100-class GPU, as a Markdown
# table (the README's "Results on the paper's A100-class GPU", which `make docs` regenerates and
# `make demo` prints): per workload and mode the vf and kitsune speedups over bsp, DRAM traffic
# removed and ops covered, with the paper's number in parentheses where it has one
# (validation/kitsune-paper.csv: Table 2 and the text; op totals: the workloads' paper_ops), then
# the geomeans (paper: scripts/paper-geomeans.csv) and the validate summary. VF: the vf policy
# (default inductor; docs/pipelines.md shows the table with the paper's, `paper`).
set -u
bin=${1:-build/kitsune}
vf=${2:-inductor}
here=$(dirname "$0")
root=$here/..
KITSUNE_HOME=${KITSUNE_HOME:-$root}; export KITSUNE_HOME
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$bin" compare --hw a100 --workload all --mode both --vf "$vf" --format csv >"$tmp/cmp.csv" || exit 1
"$bin" info --format json >"$tmp/info.json" || exit 1
# the paper's numbers, one "workload,mode,exec,metric,value" line each; op totals as exec "all"
{
    grep -v '^#' "$root/validation/kitsune-paper.csv" | tail -n +2 | cut -d, -f1-5
    grep -v '^#' "$here/paper-geomeans.csv" | tail -n +2 | cut -d, -f1-5
    awk '
        function str(key,   t) {
            if (!match($0, "\"" key "\": (\"[^\"]*\"|[0-9]+)")) return ""
            t = substr($0, RSTART, RLENGTH); sub(/^"[^"]*": "?/, "", t); sub(/"$/, "", t); return t
        }
        str("paper_ops") != "" && str("paper_ops") != "0" { print str("workload") "," str("mode") ",all,ops_total," str("paper_ops") }' "$tmp/info.json"
} >"$tmp/paper.csv"
awk -F, -v paper="$tmp/paper.csv" '
    BEGIN {
        while ((getline l < paper) > 0) { split(l, p, ","); P[p[1] "," p[2] "," p[3] "," p[4]] = p[5] }
        print "| workload | mode | vf speedup | kitsune speedup | vf traffic cut | kitsune traffic cut | vf covered | kitsune covered |"
        print "|---|---|---|---|---|---|---|---|"
    }
    NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
    function ref(k, fmt,   v) { return (k in P) ? sprintf(fmt, P[k]) : "" }
    function pct(k,   v) { if (!(k in P)) return ""; v = 100 * P[k]; return sprintf(v >= 0.1 ? " (%.1f)" : " (%.2f)", v) }
    {
        w = $c["workload"]; m = $c["mode"]; x = $c["exec"]; key = w "," m
        if (!(key in seen)) { seen[key] = 1; order[++n] = key }
        S[key, x] = $c["speedup_vs_bsp"]; R[key, x] = $c["traffic_reduction_frac"]
        C[key, x] = $c["ops_covered"] "/" $c["ops_total"]
        if (x != "bsp") { L[m, x] += log($c["speedup_vs_bsp"]); N[m, x]++ }
    }
    END {
        for (i = 1; i <= n; i++) {
            k = order[i]; split(k, a, ",")
            printf "| %s | %s", a[1], a[2]
            for (j = 1; j <= 2; j++) { x = j == 1 ? "vf" : "kitsune"; printf " | %.2fx%s", S[k, x], ref(k "," x ",speedup_vs_bsp", " (%g)") }
            for (j = 1; j <= 2; j++) { x = j == 1 ? "vf" : "kitsune"; printf " | %.1f%%%s", 100 * R[k, x], pct(k "," x ",traffic_reduction") }
            for (j = 1; j <= 2; j++) {
                x = j == 1 ? "vf" : "kitsune"
                printf " | %s%s", C[k, x], (k "," x ",ops_covered" in P) ? " (" P[k "," x ",ops_covered"] "/" P[k ",all,ops_total"] ")" : ""
            }
            print " |"
        }
        print ""
        printf "Geomean speedup over bsp: inference vf %.2fx (paper %gx) and kitsune %.2fx (paper %gx);\n",
            exp(L["inference", "vf"] / N["inference", "vf"]), P["geomean,inference,vf,speedup_vs_bsp"],
            exp(L["inference", "kitsune"] / N["inference", "kitsune"]), P["geomean,inference,kitsune,speedup_vs_bsp"]
        printf "training vf %.2fx and kitsune %.2fx (paper: 1.1-2.2x).\n",
            exp(L["training", "vf"] / N["training", "vf"]), exp(L["training", "kitsune"] / N["training", "kitsune"])
    }' "$tmp/cmp.csv"
# make validate on the paper's numbers; Llama decode's tiny references (0.01% and 0.07%) dominate
# its MAPE, so also without them
summary() { # summary CSV: "ROWS MAPE SPEARMAN TRAFFIC_MAPE"
    "$bin" validate "$1" --hw a100 --vf "$vf" | awk '
        / rows, / { r = $2 }
        /^mean absolute percentage error/ { m = $5; sub(/;/, "", m) }
        /^Spearman/ { s = $NF }
        $1 == "traffic_reduction" { t = $5 }
        END { print r, m, s, t }'
}
set -- $(summary "$root/validation/kitsune-paper.csv")
grep -v '^llama3-8b-tok,' "$root/validation/kitsune-paper.csv" >"$tmp/no-tok.csv"
all_rows=$1 all_mape=$2 all_rho=$3
set -- $(summary "$tmp/no-tok.csv")
printf '`make validate` compares all %s paper numbers: MAPE %s, Spearman rank correlation %.2f.\n' \
    "$all_rows" "$all_mape" "$all_rho"
printf 'Without the Llama decode rows, MAPE is %s over %s rows (%s on traffic reductions).\n' "$2" "$1" "$4"
