/* pipeline: Kitsune spatial pipelines - subgraph selection, pipeline design, queue model and
 * ILP stage-to-SM mapping, and the resulting execution. */
#ifndef KT_PIPELINE_H
#define KT_PIPELINE_H
#include <stdint.h>

#include "../arena.h"
#include "../err.h"
#include "cost.h"
#include "hw.h"
#include "result.h"
#include "run.h"
#include "wl.h"

/** One stage: a kernel with a limited number of persistent CTAs (one per SM it is given). */
typedef struct ks_stage {
    int op;                  /* the stage's op (graph index) */
    int nmembers;            /* op plus epilogue-fused elementwise neighbours */
    const int *members;
    int tensor;              /* 1: Tensor-core stage, 0: SIMT stage */
    int ctas;                /* CTAs = SMs of its pool it occupies */
    double rate_tiles_per_s; /* throughput at ctas: min(tiles / body_s, ctas / queue_s_per_tile) */
    double body_s;           /* the op's (and epilogues') work on ctas SMs */
    double queue_s_per_tile; /* one CTA's queue transfers + syncs per tile */
    double latency_s;        /* first tile through the stage (fill) */
    cost_bound bound;        /* bound of the op's work at ctas SMs */
    const char *limit;       /* "compute", "l2", "dram", "latency" or "queue" */
    int reduction_tree;      /* 1: the streamed dimension is reduced (split-K / weight gradient) */
} ks_stage;

/** One ring queue (per producer CTA) carrying a tensor between stages. */
typedef struct ks_queue {
    int tensor;              /* graph tensor carried */
    int producer_stage;
    int nconsumers;          /* > 1: multicast */
    int64_t payload_bytes;
    int depth;
    int transfers_per_tile;
    int64_t storage_bytes;   /* depth x payload x producer CTAs */
    double spill_frac;       /* part of the storage that does not fit L2 */
    int spilled;             /* spill_frac > 0: queue traffic goes to DRAM for that part */
    double eff_bandwidth_GBps; /* one queue's effective bandwidth at this payload */
} ks_queue;

typedef struct ks_pipeline {
    int first_op, last_op;   /* graph ops first..last (views included) */
    int nstages;
    ks_stage *stages;
    int nqueues;
    ks_queue *queues;
    int64_t stream_rows;     /* streamed dimension (rows of the largest activation) */
    int64_t tiles;           /* ceil(stream_rows / Q_TILE_ROWS) */
    double throughput_tiles_per_s;
    double dram_bound_tiles_per_s, l2_bound_tiles_per_s; /* bandwidth bounds (0 = none) */
    int bottleneck_stage;    /* -1 when a bandwidth bound limits */
    const char *bottleneck;  /* stage op name, "dram" or "l2" */
    double fill_s, time_s;
    int64_t dram_read_bytes, dram_write_bytes, l2_bytes, flops;
    int64_t queue_storage_bytes, spilled_bytes, weight_bytes, weight_reread_bytes;
    int ilp_status, ilp_fallback;
    const char *ilp_status_name;
    double ilp_objective_tiles_per_s, ilp_bound_tiles_per_s, ilp_gap;
} ks_pipeline;

/** What ks_run stores in kt_result.extra. */
typedef struct ks_plan {
    int npipelines;
    ks_pipeline *p;
    const char *select;        /* "search" or "patterns" */
    const char *chosen;        /* the set used: "search", "patterns" or "none" */
    double search_time_s;      /* end-to-end time with the search's choice (its best) */
    double patterns_time_s;    /* end-to-end time with the paper's patterns */
    double none_time_s;        /* no pipelines: the rest model alone */
    const char *rest;          /* "vf" or "bsp" */
    int rest_fallback;         /* 1: vf was unavailable, the rest ran bsp */
    int scheduler_shared;
} ks_plan;

/** Predict Kitsune execution: selected subgraphs run as pipelines, the rest as in vf (or bsp with
 *  o->rest_bsp). r->extra points at a ks_plan for `map`. */
int ks_run(const hw_gpu *hw, const wl_graph *g, const op_work *works, const cost_ctx *c,
           const kt_opts *o, arena *a, kt_result *r, kt_err *e);
/** Design, map (ILP) and evaluate ops first..last as one pipeline, every external input read
 *  from DRAM (no residency from earlier kernels). For tests and `map` experiments. */
int ks_eval_segment(const hw_gpu *hw, const wl_graph *g, const op_work *works, const cost_ctx *c,
                    const kt_opts *o, int first, int last, arena *a, ks_pipeline *p, kt_err *e);

#endif
