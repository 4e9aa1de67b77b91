/* pipe: one Kitsune spatial pipeline - its stages and their work split, queues, per-tile time and
 * traffic, the mapping of stages to SMs (ilp.c) and the resulting time and traffic. */
#ifndef KT_PIPE_H
#define KT_PIPE_H
#include <stdint.h>

#include "../../arena.h"
#include "../cost.h"
#include "../hw.h"
#include "../wl.h"

/** How a stage's CTAs share its work. Row: each CTA takes whole tiles (rows) and needs all of a
 *  broadcast operand (a weight); column: the CTAs of a group take column slices of every tile
 *  (of the output and of the weight), each reading the whole input tile (multicast); a stage of
 *  c CTAs in g groups runs g row groups of c/g column slices (g = c: row, g = 1: column).
 *  Reduction: the output is not row-aligned (weight gradients, bias gradients): each CTA
 *  accumulates its slice of it over all tiles. Hidden: a hidden-dimension pipeline's stage (see
 *  ks_pipeline.hidden_cols): tiles are (row sub-block, hidden chunk); the contracting stage's
 *  CTAs are row groups of column slices accumulating split-K partial sums. */
typedef enum ks_split { KS_SPLIT_ROW, KS_SPLIT_COL, KS_SPLIT_2D, KS_SPLIT_REDUCE, KS_SPLIT_HIDDEN } ks_split;

/** Why a stage runs at its rate ("compute", "l2 port", "queue sync", "stage body": a runtime's
 *  per-tile hand-offs, loads, math and stores, one tile at a time per CTA, hw stage_body). */
typedef enum ks_limit { KS_LIMIT_COMPUTE, KS_LIMIT_PORT, KS_LIMIT_QUEUE, KS_LIMIT_BODY } ks_limit;

/** One stage: a kernel with a limited number of persistent CTAs (one per SM it is given). */
typedef struct ks_stage {
    int op;                  /* the stage's op (graph index) */
    int nmembers;            /* op plus epilogue-fused elementwise neighbours */
    int *members;
    int tensor;              /* 1: Tensor-core stage, 0: SIMT stage (which SM pool it draws) */
    /* at the chosen allocation */
    int ctas;                /* CTAs = SMs of its pool it occupies */
    int groups;              /* row groups (g); ctas / groups column slices each */
    ks_split split;
    double period_s;         /* seconds per tile: max(compute, port, queue, body) */
    double compute_s;        /* per tile: the members' math on ctas SMs */
    double port_s;           /* per tile: the stage's L2 bytes through ctas SM ports */
    double queue_s;          /* per tile: queue synchronization of its CTAs */
    double body_s;           /* per tile: the runtime's stage body (hw stage_body; 0 without) */
    double body_cta_tile_s;  /* one CTA's time for one tile (its share) in the stage body */
    /* per tile, the stage body's work (with or without a stage_body): queue transfers one CTA
     * synchronizes, bytes loaded (queue slots, streamed inputs, L2 re-reads), gathered, stored,
     * and tensor / SIMT FLOPs */
    double body_handoffs, body_load_bytes, body_gather_bytes, body_store_bytes;
    double body_tensor_flops, body_simt_flops;
    double fill_s;           /* the first tile through the stage (one group's latency) */
    ks_limit limit;
    double l2_bytes_per_tile, dram_bytes_per_tile;
    double bcast_bytes;      /* broadcast operand bytes (weights, non-streamed inputs) */
    int bcast_resident;      /* 1: each CTA keeps its slice in shared memory across tiles */
    int bcast_in_l2;         /* 1: not resident but stays in L2 (DRAM once) */
    double acc_bytes_per_cta;/* reduction: the CTA's slice of the output (fp32) */
    int acc_spills;          /* reduction: the slice does not fit on chip, spilled every tile */
    int choice;              /* chosen candidate index */
} ks_stage;

/** One queue: a tensor streamed between stages through rings in L2. */
typedef struct ks_queue {
    int tensor;              /* graph tensor carried (storage root) */
    int producer_stage;
    int nconsumers;          /* > 1: multicast to several stages */
    int last_stage;          /* its farthest consumer stage (> producer_stage + 1: a deep ring) */
    int64_t tile_bytes;      /* bytes of one tile of the tensor */
    int64_t payload_bytes;   /* one transfer (a producer CTA's share of a tile, <= 1 MiB) */
    int depth;
    int64_t storage_bytes;   /* depth x tile x the groups of the stages producer..last_stage
                                (one slot per tile in flight until its last reader pops it) */
    double spill_frac;       /* pinned rings: part of the storage beyond the queue budget */
    double written_back_frac;/* of the tensor's bytes: written to DRAM (pinned: spill_frac;
                                otherwise evicted dirty, as l2.ring_reuse measures) */
    double read_back_frac;   /* of the tensor's bytes: read back from DRAM */
    double eff_bandwidth_GBps; /* one transfer stream's effective bandwidth at this payload */
} ks_queue;

typedef struct ks_pipeline {
    int first_op, last_op;   /* graph ops first..last (views included) */
    int nstages;
    ks_stage *stages;
    int nqueues;
    ks_queue *queues;
    int64_t stream_rows;     /* streamed dimension M (rows of the largest activation) */
    int64_t tile_rows;       /* rows per tile (chosen: the fastest of PIPE_TILE_ROWS_*) */
    int64_t tiles;           /* ceil(M / tile_rows); hidden streaming: x ceil(F / hidden_cols) */
    int64_t hidden_cols;     /* 0: rows stream; else the hidden dimension F streams in chunks of
                                this many columns within each row sub-block (hidden streaming) */
    int64_t hidden_dim;      /* F (hidden streaming) */
    int hidden_acc_in_l2;    /* hidden streaming: the partial sums live in L2 (else on chip) */
    int64_t row_block_rows;  /* hidden streaming: rows whose accumulators are live at once; each
                                weight is read from DRAM once per such row block */
    int barriers;            /* in-pipeline tensors that are not streamed (consumers wait) */
    double period_s;         /* seconds per tile in steady state */
    double throughput_tiles_per_s;
    int bottleneck_stage;    /* -1 when a bandwidth bound limits */
    const char *bottleneck;  /* stage op name, "dram" or "l2" */
    double fill_s, setup_s, time_s;
    int64_t dram_read_bytes, dram_write_bytes, l2_bytes, flops;
    double l2_bytes_per_tile, dram_bytes_per_tile; /* steady state, all stages */
    int64_t queue_storage_bytes, queue_budget_bytes, spilled_bytes;
    int64_t weight_bytes, weight_reread_bytes;
    int64_t gather_dram_bytes; /* gathered tables' rows read from DRAM (in dram_read_bytes) */
    int ilp_status, ilp_fallback;
    const char *ilp_status_name;
    const char *infeasible;  /* why no allocation fits (even one CTA per stage: a pool with
                                fewer SMs than stages, shared memory, registers); the pipeline
                                cannot run and kitsune.c rejects it. NULL when one fits */
    double ilp_objective_s, ilp_bound_s, ilp_gap;
    /* design totals */
    int64_t ext_read_bytes, ext_write_bytes, queue_traffic_bytes;
} ks_pipeline;

/** Candidate CTA counts per stage at most (every count 1..#SMs for GPUs up to this size; with a
 *  stage_body, 1..ctas_per_sm x #SMs). */
enum { PIPE_MAX_CAND = 512 };
/** Tile heights tried (rows of the streamed dimension per tile). */
enum { PIPE_TILE_ROWS_MIN = 64, PIPE_TILE_ROWS_MAX = 256 };

/** Per-op work on c persistent CTAs (cached across the pipelines of a run). */
typedef struct pipe_rate {
    double compute_s;        /* math of the whole op on c SMs */
    double l2_bytes;         /* the op's own L2 traffic as a standalone kernel (attention) */
} pipe_rate;
/** One op's rates by CTA count 1..#SMs, allocated when the op is first met (NULL before;
 *  compute_s NaN: not computed yet). */
typedef struct pipe_rate_row {
    pipe_rate *by_ctas;
    op_work *work; /* the op's work as a stage body runs it (rate_eval's), made with by_ctas */
} pipe_rate_row;

/** What designing the pipelines of one graph needs: the GPU, the ops, the candidate CTA counts,
 *  per-op resources and, when known, which external input bytes miss L2 in the run. */
typedef struct pipe_env {
    const hw_gpu *hw;
    const wl_graph *g;
    const op_work *w;
    cost_ctx c;
    int scheduler_shared;    /* one SM pool for SIMT and Tensor stages (ablation) */
    double ilp_time_limit_s;
    int ncand, cand[PIPE_MAX_CAND]; /* candidate CTA counts (all of 1..#SMs, or a grid) */
    int search_ncand, search_cand[PIPE_MAX_CAND]; /* the selection search's coarser grid */
    int est_cand[2];         /* {1, #SMs}: the fluid estimate's two ends */
    double search_budget_s;  /* estimates: other tile heights are tried only when the default
                                one is within PIPE_SEARCH_SLACK of this (0: always) */
    pipe_rate_row *rate;     /* [op - rate_first_op]: its rates by CTA count */
    int rate_first_op;       /* first op the rate table covers (0: the whole graph) */
    arena *rate_arena;       /* where the rate rows are allocated (the run's: cache_arena) */
    pipe_rate rate_spare;    /* a rate computed when memory ran out (not kept) */
    double *smem_cta, *regs_cta;
    int *split_k;            /* per op: split-K of its bsp kernel */
    int64_t **miss;          /* per op, per input: bytes missing L2 in the run (NULL: all) */
    int *root;               /* per tensor: the tensor owning its storage (graph_storage) */
    int *max_reader;         /* per storage tensor: last op reading it */
    int *rd_start, *rd_op;   /* per storage tensor: the kernel ops reading it, ascending (CSR) */
    unsigned char *must_write; /* per storage tensor: graph output or saved activation */
    int64_t *rows;           /* per tensor: its rows (all dimensions but the last) */
    unsigned char *streams;  /* per tensor: an activation of at least a tile of rows not
                                produced by an op that reduces the rows away (row_aligned's
                                test that does not depend on the segment) */
    /* a design imposed by the caller (map --stages): per op (graph index) its stage, -1 for a
     * free op; NULL: the model's own stages (epilogue fusion) */
    const int *force_stage_of;
    /* with force_stage_of and a stage_body: per stage of the imposed design, one CTA's measured
     * seconds for one tile (ks_force_spec.stage_cta_tile_s) in place of the modelled stage body;
     * NULL: the model's. Stages priced with them are never cached. */
    const double *force_cta_tile_s;
    /* with an imposed allocation (pipe_build's force): rebuild the hidden-dimension design with
     * chunks of this many columns (0: the row design; negative: its accumulators in L2);
     * re-evaluations at another clock */
    int64_t force_hidden_cols;
    /* a stage_body runtime: CTAs per SM of its kernel (one pool of ctas_per_sm x #SMs CTAs for
     * all stages) and how many share an SM at the allocation evaluated (>= 1) */
    int body_ctas_per_sm;
    double body_sharing;
    int *ep_prod, *ep_lo, *ep_hi; /* per op: it joins op ep_prod's stage as an epilogue in a
                                segment whose first op is in [ep_lo, ep_hi] (epilogue_stage) */
    double *lb_work;         /* [3][nop + 1]: prefix sums of each op's least CTA-seconds per
                                stream (pipe_estimate_lb), by pool: SIMT, Tensor, either */
    int *wclass;             /* per op: the first op with a byte-identical op_work (its work
                                class: the rate rows and the stage cache are kept per class) */
    /* stage evaluations the selection search reuses across segments (per work class of the
     * stage's op; NULL: no cache) */
    struct pipe_cache_entry **cache;
    struct exact_memo **exact_memo; /* ilp_exact's answers for plans made of cache entries
                                       (hash buckets, in cache_arena; NULL: none yet) */
    arena cache_arena;       /* owns the cache and the rate rows: pipe_env_release frees it */
    size_t cache_bytes;      /* allocated in cache_arena; beyond PIPE_CACHE_BYTES both start
                                over (recomputed when needed: the same values) */
} pipe_env;

/** Prepare designing pipelines over g (allocated in a, the stage cache in its own arena).
 *  0, or -1 when memory runs out. */
int pipe_env_init(pipe_env *x, const hw_gpu *hw, const wl_graph *g, const op_work *w,
                  const cost_ctx *c, int scheduler_shared, double ilp_time_limit_s, arena *a);
/** Free the stage cache (a copy of x made for later re-evaluations must have cache NULL). */
void pipe_env_release(pipe_env *x);
/** use_ilp of pipe_build: the exact search over every CTA count, without the MILP. */
enum { PIPE_EXACT = 2 };
/** Design ops first..last as one pipeline (stages, splits, queues, per-candidate period, traffic
 *  and fill at each tile height) and map it: use_ilp 1 solves the mapping ILP over every CTA
 *  count 1..#SMs (ilp.c), PIPE_EXACT takes the exact search over them, 0 the estimate over the
 *  coarser grid (the selection search's); force (NULL, or per stage a CTA count) imposes an
 *  allocation instead, at tile height force_tile_rows (0: choose). Everything in p is allocated
 *  in a. 0, or -1 (out of memory). */
int pipe_build(pipe_env *x, int first, int last, int use_ilp, const int *force,
               int64_t force_tile_rows, arena *a, ks_pipeline *p);
/** The selection search's estimate of ops first..last as a pipeline, fluid in the CTA counts:
 *  every stage's work per tile at one CTA over the SMs of its pool, the pipeline's L2 and DRAM
 *  bytes per tile (at all SMs) over their bandwidths, whichever is longest, plus the stages'
 *  fill; O(stages), no mapping. *time_s, *dram_bytes (read + written) and *nstages; *time_s
 *  is -1 when not even one CTA per stage fits (no pipeline). 0, or -1 (memory; scratch
 *  allocated in a). */
int pipe_estimate(pipe_env *x, int first, int last, arena *a, double *time_s, int64_t *dram_bytes,
                  int *nstages);
/** A lower bound on pipe_estimate's time of ops first..last: launch, DRAM latency and N - 1
 *  periods of at least (in O(1)) the busier pool's work over the estimate's pool of CTAs (#SMs,
 *  or ctas_per_sm x #SMs with a stage_body), where each op adds the least of its math at one CTA
 *  and at the whole pool times its size (a stage's period is at least its members' math;
 *  epilogue members may join either pool); when that is below budget_s and no hidden-dimension
 *  design applies, also (in O(inputs)) N - 1 periods of the L2 bytes per tile its stage heads
 *  must read and its stages write over the L2's bandwidth, plus each stage's fill of at least
 *  one period per CTA group at its CTAs' L2 ports (scratch in a, released). The selection's branch and bound uses it: a segment
 *  it rules out could not have won, so the choice is the same. */
double pipe_estimate_lb(const pipe_env *x, int first, int last, double budget_s, arena *a);
/** "row", "column", "row x column", "reduction", "hidden". */
const char *ks_split_name(ks_split s);
/** "compute", "l2 port", "queue sync", "stage body". */
const char *ks_limit_name(ks_limit l);

#endif
