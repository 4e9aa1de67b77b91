/* run: one prediction - a workload (forward, or training derived from it) on a GPU under the
 * requested execution models. Pure: (hw, graph, options) -> results. */
#ifndef KT_RUN_H
#define KT_RUN_H
#include "../arena.h"
#include "../err.h"
#include "autodiff.h"
#include "exec/kitsune.h"
#include "hw.h"
#include "result.h"
#include "wl.h"

/** Bit masks of the execution models to run (kt_opts.exec_mask). */
enum { EXEC_BSP = 1 << EX_BSP, EXEC_VF = 1 << EX_VF, EXEC_KITSUNE = 1 << EX_KITSUNE, EXEC_ALL = 7 };
enum { SELECT_SEARCH = KS_SELECT_SEARCH, SELECT_PATTERNS = KS_SELECT_PATTERNS };

typedef struct kt_opts {
    int training;          /* derive forward + backward (autodiff.c) */
    int optimizer;         /* OPTIM_* update ops appended in training */
    int exec_mask;         /* EXEC_* */
    int graph_launch;      /* 1: CUDA-graph launch gaps (default), 0: plain launches */
    int vf_policy;         /* vf fusion policy (exec/vf.h VF_*; default VF_INDUCTOR) */
    int vf_backward;       /* vf (rules policy) also fuses backward chains */
    int select;            /* SELECT_* (kitsune subgraph selection) */
    int scheduler_shared;  /* kitsune ablation: one SM pool for SIMT and Tensor stages */
    int rest_bsp;          /* kitsune: ops outside pipelines run bsp (default: vf) */
    double power_cap_W;    /* 0 = uncapped */
    double ilp_time_limit_s;
    int power_policy;      /* KT_POWER_*: the board limit of a part with another SM count */
    int power_ref_sm_count;/* SMs the hw file's power fields describe (0: the hw's own) */
    int why;               /* kitsune: explain every candidate subgraph (ks_plan.cands) */
    const ks_force_spec *ks_force; /* kitsune: one imposed pipeline (map --stages ...), or NULL */
} kt_opts;

/** Power of a what-if part (a hw whose SM count differs from the file its power fields come
 *  from): scaled (default) multiplies TDP, static and idle power by SMs / power_ref_sm_count,
 *  as a larger die of the same design; fixed keeps the file's TDP; none lifts the board limit
 *  (energy is still accounted). */
enum { KT_POWER_SCALED, KT_POWER_FIXED, KT_POWER_NONE, KT_POWER_COUNT };
/** "scaled", "fixed", "none". */
const char *kt_power_policy_name(int p);
/** Parse a power policy name; -1 if unknown. */
int kt_power_policy_parse(const char *s);
/** The hw a run accounts energy and the board limit with under o's power policy. */
hw_gpu kt_power_hw(const hw_gpu *hw, const kt_opts *o);

/** Defaults: inference, all execution models, graph launches, search selection, rest = vf. */
void kt_opts_default(kt_opts *o);

typedef struct kt_run_result {
    const wl_graph *g;     /* the graph that ran (the training graph in training mode) */
    const op_work *works;  /* its op_works (allocated in the run's arena) */
    int nres;
    kt_result res[3];      /* in order bsp, vf, kitsune, those requested */
    kt_result capped[3];   /* the same under power_cap_W (when > 0) */
    const kt_result *by[EX_COUNT];        /* res by execution model, NULL when not run */
    const kt_result *capped_by[EX_COUNT]; /* capped by execution model, NULL when not run */
} kt_run_result;

/** The graph a run in this mode executes: fwd itself for inference, or the training graph
 *  derived from it (autodiff.c; allocated in a). -1 with e set when fwd is inference-only. */
int kt_graph(const wl_graph *fwd, int training, int optimizer, arena *a, const wl_graph **out,
             kt_err *e);

/** What a graph holds, for reports (info). */
typedef struct kt_summary {
    int ops, kernels;      /* graph nodes; nodes that launch a kernel (views are free) */
    int64_t flops_tensor, flops_simt;
    int64_t weight_bytes;  /* weights */
    int64_t act_bytes;     /* intermediates that own storage (not views) */
    int64_t min_dram_bytes;/* inputs and weights read once, outputs written once */
    int64_t saved_bytes;   /* forward activations the backward reads */
    int64_t peak_act_bytes;/* largest sum of live activations over the op order (graph_memory) */
    int64_t footprint_bytes; /* weight_bytes + peak_act_bytes: the memory a run needs */
} kt_summary;
/** Summarize a checked graph. 0, or -1 with e set (overflow, out of memory). */
int kt_summarize(const wl_graph *g, arena *a, kt_summary *s, kt_err *e);
/** The same from the graph's op_works (a run's kt_run_result.works): no second copy of them. */
int kt_summarize_works(const wl_graph *g, const op_work *w, arena *a, kt_summary *s, kt_err *e);

/** Run. fwd: the loaded forward graph. All memory from a. The same as kt_prepare, then
 *  kt_run_times, then kt_run_power on one hw. */
int kt_run(const hw_gpu *hw, const wl_graph *fwd, const kt_opts *o, arena *a, kt_run_result *out,
           kt_err *e);

/* ---- a run in three parts, for callers that reuse the first two (sweep: every point with the
 * same workload parameters shares a kt_prep; every point that differs from another only in
 * energy, power and DVFS fields (hw_same_timing) shares its kt_run_times) ---- */

/** The graph a run executes (the training graph in training mode) and its op_works. */
typedef struct kt_prep {
    const wl_graph *g;
    const op_work *works;
} kt_prep;
/** Derive p from the forward graph for o's mode (o->training, o->optimizer); memory from a. */
int kt_prepare(const wl_graph *fwd, const kt_opts *o, arena *a, kt_prep *p, kt_err *e);
/** The execution models' runs on hw, before energy and power limits: times, bytes, kernels and
 *  kitsune's plan. They read no energy, power or DVFS field of hw (tested). hw, p and a must
 *  outlive every kt_run_power of out (items re-evaluate through them at other clocks). */
int kt_run_times(const hw_gpu *hw, const kt_prep *p, const kt_opts *o, arena *a,
                 kt_run_result *out, kt_err *e);
/** Energy and the board's and --power-cap's limits (o->power_*) of the runs in times on hw, into
 *  out (memory from a). hw may differ from the hw times ran on only where hw_same_timing allows.
 *  Rewrites the energy fields of times' items (each call sets all of them), nothing else: times
 *  can serve any number of calls, one at a time. */
int kt_run_power(const hw_gpu *hw, const kt_opts *o, const kt_run_result *times, arena *a,
                 kt_run_result *out, kt_err *e);

#endif
