#!/bin/sh
# The paper's heterogeneity-aware scheduler against one shared SM pool: kitsune time per
# application under --scheduler hetero (default) and shared (docs/pipelines.md; `make docs`).
#   sh scripts/scheduler-table.sh [BIN] [HW]
bin=${1:-build/kitsune}
hw=${2:-a100}
echo "| workload | mode | hetero us | shared us | hetero gain |"
echo "|---|---|---:|---:|---:|"
for m in inference training; do
    for s in hetero shared; do
        "$bin" compare --hw "$hw" --workload all --mode "$m" --exec kitsune --scheduler "$s" \
            --format csv 2>/dev/null | awk -F, -v s="$s" -v m="$m" 'NR > 1 { print $1, m, s, $5 }'
    done
done | awk '{ k = $1 " " $2; if ($3 == "hetero") h[k] = $4; else sh[k] = $4; if (!(k in seen)) { seen[k] = 1; order[n++] = k } }
    END { for (i = 0; i < n; i++) { k = order[i]; split(k, p, " ")
            printf "| %s | %s | %.1f | %.1f | %.1f%% |\n", p[1], p[2], h[k] * 1e6, sh[k] * 1e6, 100 * (sh[k] / h[k] - 1) } }'
