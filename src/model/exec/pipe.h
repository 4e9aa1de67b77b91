/* pipe: one Kitsune spatial pipeline - its stages, queues, stage rates, resources, the mapping
 * of stages to SMs (ILP) and the resulting time and traffic. */
#ifndef KT_PIPE_H
#define KT_PIPE_H
#include <stdint.h>

#include "../../arena.h"
#include "../cost.h"
#include "../hw.h"
#include "../wl.h"

/** One stage: a kernel with a limited number of persistent CTAs (one per SM it is given). */
typedef struct ks_stage {
    int op;                  /* the stage's op (graph index) */
    int nmembers;            /* op plus epilogue-fused elementwise neighbours */
    int *members;
    int tensor;              /* 1: Tensor-core stage, 0: SIMT stage */
    int ctas;                /* CTAs = SMs of its pool it occupies */
    double rate_tiles_per_s; /* throughput at ctas: min(tiles / body_s, ctas / queue_s_per_tile) */
    double body_s;           /* the op's (and epilogues') work on ctas SMs */
    double queue_s_per_tile; /* one CTA's queue transfers + syncs per tile */
    double latency_s;        /* first tile through the stage (fill) */
    cost_bound bound;        /* bound of the op's work at ctas SMs */
    const char *limit;       /* "compute", "l2", "dram", "latency" or "queue" */
    int reduction_tree;      /* 1: the streamed dimension is reduced (split-K / weight gradient) */
    /* design */
    double queue_bytes_per_cta; /* L2 storage of the rings its CTAs produce into */
    double reduction_s;      /* one level of its reduction tree (partial sums through a queue) */
    double *cand_rate;       /* tiles/s at each candidate CTA count (pipe_env.cand) */
    int choice;              /* chosen candidate */
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
    /* design totals */
    int64_t ext_read_bytes, ext_write_bytes, queue_traffic_bytes;
} ks_pipeline;

/** Candidate CTA counts per stage at most. */
enum { PIPE_MAX_CAND = 24 };

/** Per-op stage rate at one candidate CTA count (cached across the pipelines of a run). */
typedef struct pipe_rate {
    double body_s, compute_s;
    int64_t l2_bytes, extra_dram;
    cost_bound bound;
    int done;
} pipe_rate;

/** What designing the pipelines of one graph needs: the GPU, the ops, the candidate CTA counts,
 *  per-op resources and, when known, which external input bytes miss L2 in the run. */
typedef struct pipe_env {
    const hw_gpu *hw;
    const wl_graph *g;
    const op_work *w;
    cost_ctx c;
    int scheduler_shared;    /* one SM pool for SIMT and Tensor stages (ablation) */
    double ilp_time_limit_s;
    int ncand, cand[PIPE_MAX_CAND];
    pipe_rate *rate;         /* [nop][ncand] */
    double *smem_cta, *regs_cta;
    int *split_k;            /* per op: split-K of its bsp kernel */
    int64_t **miss;          /* per op, per input: bytes missing L2 in the run (NULL: all) */
    int *root;               /* per tensor: the tensor owning its storage (graph_storage) */
    int *max_reader;         /* per storage tensor: last op reading it */
    unsigned char *must_write; /* per storage tensor: graph output or saved activation */
} pipe_env;

/** Prepare designing pipelines over g (allocated in a). 0, or -1 when memory runs out. */
int pipe_env_init(pipe_env *x, const hw_gpu *hw, const wl_graph *g, const op_work *w,
                  const cost_ctx *c, int scheduler_shared, double ilp_time_limit_s, arena *a);
/** Design ops first..last as one pipeline (stages, queues, per-candidate rates) and map it:
 *  use_ilp 1 solves the mapping ILP (ilp.c), 0 takes the greedy allocation (a cheap estimate
 *  for the selection search); force (NULL, or per stage an index into x->cand) imposes an
 *  allocation instead. Everything in p is allocated in a. 0, or -1 (out of memory). */
int pipe_build(pipe_env *x, int first, int last, int use_ilp, const int *force, arena *a,
               ks_pipeline *p);

#endif
