#!/bin/sh
# workload-table.sh [BIN]: the README's table of shipped workloads (`make docs` regenerates it):
# the model each file describes and its default sizes (written here, one line per workload),
# then what `kitsune info --mode both` counts - ops (kernels, when views make them differ) and
# GFLOP for inference / training, the paper's op counts (the files' paper_ops) and the weights.
# A workload without a line here still gets its counted columns.
set -u
bin=${1:-build/kitsune}
here=$(dirname "$0")
KITSUNE_HOME=${KITSUNE_HOME:-$here/..}; export KITSUNE_HOME
"$bin" info --mode both --format json | awk '
    BEGIN {
        M["dlrm"] = "DLRM, MLPerf config: bottom MLP 13-512-256-128, 26 tables x 128 (table-batched lookup), dot interaction, top MLP 479-1024-1024-512-256-1"
        D["dlrm"] = "B=4096"
        M["mgn"] = "MeshGraphNets, one processor block, latent 128"
        D["mgn"] = "N=65,536, E=393,216"
        M["nerf"] = "NeRF MLP: 8x256 + skip, sigma and rgb heads"
        D["nerf"] = "B=262,144"
        M["graphcast"] = "GraphCast processor block, latent 512"
        D["graphcast"] = "N=40,962, E=327,660"
        M["llama3-8b-ctx"] = "Llama 3 8B decoder layer, prefill (GQA 32/8, SwiGLU 14336)"
        D["llama3-8b-ctx"] = "B=4, S=2048 (training: B=2)"
        M["llama3-8b-tok"] = "the same layer, decode with a 2048-token KV cache (inference only)"
        D["llama3-8b-tok"] = "B=64, P=2048"
        print "| workload | model (source in the file) | defaults | ops (kernels) inf / train | paper #ops | GFLOP inf / train | weights |"
        print "|---|---|---|---|---|---|---|"
    }
    function field(key,   t) {
        if (!match($0, "\"" key "\": (\"[^\"]*\"|[0-9]+)")) return ""
        t = substr($0, RSTART, RLENGTH); sub(/^"[^"]*": "?/, "", t); sub(/"$/, "", t); return t
    }
    function gflop(f) { f /= 1e9; return f >= 1000 ? sprintf("%.0f", f) : sprintf("%.1f", f) }
    /"workload": / {
        w = field("workload"); m = field("mode")
        if (!(w in seen)) { seen[w] = 1; order[++n] = w }
        ops = field("ops"); k = field("kernels")
        OPS[w, m] = ops (k != ops ? " (" k ")" : "")
        P[w, m] = field("paper_ops"); G[w, m] = gflop(field("flops"))
        W[w] = field("weight_bytes") / 1e6
    }
    function pair(A, w,   t) {
        t = A[w, "inference"]
        if ((w, "training") in A)
            t = t " / " A[w, "training"]
        return t
    }
    END {
        for (i = 1; i <= n; i++) {
            w = order[i]
            mb = W[w] >= 100 ? sprintf("%.0f", W[w]) : sprintf("%.2f", W[w])
            printf "| `%s` | %s | %s | %s | %s | %s | %s MB |\n", w, ((w in M) ? M[w] : "-"),
                ((w in D) ? D[w] : "-"), pair(OPS, w), pair(P, w), pair(G, w), mb
        }
    }'
