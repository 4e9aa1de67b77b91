/* kitsune: Kitsune execution of a graph - subgraph selection, pipelines (pipe.c) for the
 * selected subgraphs, the rest as vf or bsp, and the totals. */
#ifndef KT_KITSUNE_H
#define KT_KITSUNE_H
#include "../../arena.h"
#include "../../err.h"
#include "../cost.h"
#include "../hw.h"
#include "../result.h"
#include "../wl.h"
#include "pipe.h"

/** Subgraph selection: the model-driven search (default) or the paper's pattern rules. */
enum { KS_SELECT_SEARCH, KS_SELECT_PATTERNS };

/** An imposed pipeline (map --ops/--stages/--alloc/--tile/--ctas-per-sm): instead of the
 *  selection, ops first..last run as this one pipeline, the rest as usual. Names are op names of
 *  the run's graph (the training graph in training). */
typedef struct ks_force_spec {
    const char *ops;       /* "FIRST..LAST": the model's own stages for these ops (or NULL) */
    const char *stages;    /* "a+b,c,d+e": the stages, each a '+'-list of ops (or NULL) */
    const int *ctas;       /* CTAs per stage (nctas of them), or NULL: the mapper's allocation */
    int nctas;
    int64_t tile_rows;     /* rows per tile, 0: the model's choice */
    int ctas_per_sm;       /* CTAs per SM of a stage_body runtime's kernel, 0: the hw's */
    /* a stage_body runtime's measured stage times (a profile): per stage, one CTA's seconds for
     * one tile at this tile height and CTAs per SM (its busy time: hand-offs, loads, math,
     * stores; not its spinning), in place of the modelled stage body; NULL: the model's */
    const double *stage_cta_tile_s;
    int nstage_times;
} ks_force_spec;

/** Options of a kitsune run. */
typedef struct ks_opts {
    int select;            /* KS_SELECT_* */
    int scheduler_shared;  /* ablation: one SM pool for SIMT and Tensor stages */
    int rest_bsp;          /* ops outside pipelines run bsp (default: vf) */
    int vf_policy;         /* the vf rest's fusion policy (vf.h VF_*) */
    int vf_backward;       /* the vf rest fuses backward chains too (VF_RULES) */
    double ilp_time_limit_s;
    int why;               /* also explain every candidate subgraph (ks_plan.cands) */
    const ks_force_spec *force; /* NULL, or one imposed pipeline instead of the selection */
    /* The bsp and vf runs of the same graph, works and cost context when the caller has them
     * (kt_run), else NULL: kitsune's bsp pass and its run without pipelines take them instead of
     * running them again. bsp_miss: the bsp run's misses per op and input (bsp_run_masked), in
     * memory that lives as long as the result; vf: run with vf_policy and vf_backward. */
    const kt_result *bsp, *vf;
    int64_t **bsp_miss;
} ks_opts;

/** A candidate subgraph of the selection and what became of it (map --why). */
typedef struct ks_candidate {
    int first, last;       /* ops first..last */
    const char *source;    /* "patterns", "search" or "longest run" */
    int pipelined;         /* 1: a pipeline of the result (pipeline index in `pipeline`) */
    int pipeline;
    double pipeline_s;     /* its time as a pipeline (exact search), -1 when it is none */
    double rest_s;         /* the same ops as the rest runs them (vf or bsp) */
    int nstages;
    char reason[200];      /* why it was or was not pipelined */
} ks_candidate;

/** A selected segment that does not run as a pipeline: no allocation of SMs fits its stages
 *  (fewer SMs than stages in a pool, shared memory, registers). */
typedef struct ks_rejected {
    int first_op, last_op;
    const char *why;
} ks_rejected;

/** What ks_run stores in kt_result.extra. */
typedef struct ks_plan {
    int npipelines;
    ks_pipeline *p;
    const char *select;        /* "search" or "patterns" */
    const char *chosen;        /* the set used: "search", "patterns" or "none" */
    double search_time_s;      /* end-to-end time with the search's choice (its best) */
    double patterns_time_s;    /* end-to-end time with the paper's patterns */
    double none_time_s;        /* no pipelines: the rest model alone */
    double rest_bsp_time_s;    /* the same pipelines with every other op bulk-synchronous */
    int ncands;                /* with ks_opts.why: the candidates, by first op */
    ks_candidate *cands;
    const char *rest;          /* "vf" or "bsp" */
    int rest_fallback;         /* 1: vf was unavailable, the rest ran bsp */
    int scheduler_shared;
    int measured_stage_times;  /* 1: measured stage times priced the stage bodies (imposed) */
    int nrejected;             /* selected segments with no feasible mapping (run as the rest) */
    const ks_rejected *rejected;
    const kt_result *none;     /* the option without pipelines (the rest model alone), in full:
                                  run.c checks the choice against it under the power limits */
    const struct ks_plan *none_plan;
} ks_plan;

/** Defaults: search selection, the paper's heterogeneity-aware scheduler, the rest as vf
 *  (forward fusion only), a 1 s ILP time limit per pipeline. */
void ks_opts_default(ks_opts *o);
/** Predict Kitsune execution: selected subgraphs run as pipelines, the rest as in vf (or bsp with
 *  o->rest_bsp). r->extra points at a ks_plan for `map`. */
int ks_run(const hw_gpu *hw, const wl_graph *g, const op_work *works, const cost_ctx *c,
           const ks_opts *o, arena *a, kt_result *r, kt_err *e);
/** Kitsune without pipelines: out = `limited`, r's option without pipelines (plan->none) under
 *  a power limit, with r's plan marked as having chosen none (its end-to-end times stay those
 *  before the limit). For run.c, when a limit leaves r's pipelines slower than none. 0, or -1
 *  when memory runs out. */
int ks_without_pipelines(const kt_result *r, const kt_result *limited, arena *a, kt_result *out);
/** Design, map (ILP) and evaluate ops first..last as one pipeline, every external input read
 *  from DRAM (no residency from earlier kernels). For tests and `map` experiments. */
int ks_eval_segment(const hw_gpu *hw, const wl_graph *g, const op_work *works, const cost_ctx *c,
                    const ks_opts *o, int first, int last, arena *a, ks_pipeline *p, kt_err *e);

#endif
