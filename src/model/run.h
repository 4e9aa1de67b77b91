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

enum { EXEC_BSP = 1, EXEC_VF = 2, EXEC_KITSUNE = 4, EXEC_ALL = 7 };
enum { SELECT_SEARCH = KS_SELECT_SEARCH, SELECT_PATTERNS = KS_SELECT_PATTERNS };

typedef struct kt_opts {
    int training;          /* derive forward + backward (autodiff.c) */
    int optimizer;         /* OPTIM_* update ops appended in training */
    int exec_mask;         /* EXEC_* */
    int graph_launch;      /* 1: CUDA-graph launch gaps (default), 0: plain launches */
    int vf_backward;       /* vf also fuses backward chains */
    int select;            /* SELECT_* (kitsune subgraph selection) */
    int scheduler_shared;  /* kitsune ablation: one SM pool for SIMT and Tensor stages */
    int rest_bsp;          /* kitsune: ops outside pipelines run bsp (default: vf) */
    double power_cap_W;    /* 0 = uncapped */
    double ilp_time_limit_s;
} kt_opts;

/** Defaults: inference, all execution models, graph launches, search selection, rest = vf. */
void kt_opts_default(kt_opts *o);

typedef struct kt_run_result {
    const wl_graph *g;     /* the graph that ran (the training graph in training mode) */
    int nres;
    kt_result res[3];      /* in order bsp, vf, kitsune, those requested */
    kt_result capped[3];   /* the same under power_cap_W (when > 0) */
} kt_run_result;

/** Run. fwd: the loaded forward graph. All memory from a. */
int kt_run(const hw_gpu *hw, const wl_graph *fwd, const kt_opts *o, arena *a, kt_run_result *out,
           kt_err *e);

#endif
