/* select: choice of the subgraphs that run as Kitsune spatial pipelines. */
#ifndef KT_SELECT_H
#define KT_SELECT_H
#include "../../arena.h"
#include "../op.h"
#include "../wl.h"

/** A candidate subgraph: the ops first..last of the topological (file) order. A run of
 *  consecutive ops is always contiguous (convex: no edge can leave and re-enter, since any op
 *  outside lies before first or after last). */
typedef struct sel_seg {
    int first, last;
} sel_seg;

/** A GEMM whose bulk-synchronous kernel already reaches this fraction of peak compute on all
 *  SMs is "bulk-sync friendly" and left out of pattern pipelines. Kitsune paper section 6: Llama
 *  ctx subgraphs, already above 50% of peak compute, gain only 4-8% from pipelining. */
#define SEL_BSP_FRIENDLY_SM_UTIL 0.5
/** Longest segment (ops, views included) the pattern rules grow (the search takes its own
 *  bound, by default the whole graph). */
enum { SEL_MAX_SEGMENT_OPS = 64 };
/** The search tries every segment length up to this many ops, and lengths growing by a quarter
 *  beyond (16, 20, 25, 31, ...): O(ops x log ops) segments. */
enum { SEL_SEARCH_DENSE_OPS = 16 };
/** Longest segment sel_valid accepts (ops, views included): its connectivity check's buffer.
 *  No shipped graph comes near it; `map` reports a pipeline that reaches it. */
enum { SEL_MAX_VALID_OPS = 256 };

/** 1 when ops first..last may form a pipeline: no index op (gather, embedding, scatter,
 *  index_copy) and no op marked op_work.no_pipe (it needs more than its own tile of its input:
 *  windowed convolutions, pooling, batch statistics, sorts and scans across rows), at least two
 *  kernel ops (free views do not count), first and last are kernel ops,
 *  and the kernel ops are connected through tensors produced inside (views followed). */
int sel_valid(const wl_graph *g, const op_work *w, int first, int last);
/** The paper's pattern rules in one pass over the topological order: ops are grown into a
 *  segment while each consumes a tensor of the segment and is not excluded (index and no_pipe
 *  ops; GEMMs with bsp_sm_util[i] >= SEL_BSP_FRIENDLY_SM_UTIL); a closed segment is kept when it
 *  is valid and
 *  holds a pattern: a chain of two or more Tensor ops (Linear -> elementwise -> Linear,
 *  attention), a multicast (a tensor read by two or more of its ops), a reduction tree (a split-K
 *  GEMM: bsp_split_k[i] > 1, or a backward weight-gradient GEMM) or an attention op. Writes up to
 *  max segments into out; returns the count. */
int sel_patterns(const wl_graph *g, const op_work *w, const double *bsp_sm_util,
                 const int *bsp_split_k, sel_seg *out, int max);
/** Time in seconds of ops first..last as one pipeline, or < 0 when it cannot be one; budget_s:
 *  the time it must beat to matter (the cost may stop refining beyond it). */
typedef double (*sel_cost_fn)(void *ctx, int first, int last, double budget_s);
/** Model-driven search: dynamic programming over the topological order,
 *  best[i] = min(best[i-1] + rest_s[i-1], min_j best[j] + cost(j, i-1)) over valid segments of at
 *  most max_len ops. lb (may be NULL) bounds cost from below cheaply (its budget_s: the time the
 *  segment must beat; it may stop tightening beyond it): a segment whose bound cannot improve
 *  best[i] is not costed (branch and bound; the result is the same). Returns the number of
 *  chosen segments (into out, up to max) or -1 when out of memory; *best_s is the predicted
 *  total. */
int sel_search(const wl_graph *g, const op_work *w, const double *rest_s, int max_len,
               sel_cost_fn cost, sel_cost_fn lb, void *ctx, arena *a, sel_seg *out, int max,
               double *best_s);

#endif
