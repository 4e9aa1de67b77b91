/* pipeline: Kitsune spatial pipelines - subgraph selection, pipeline design, queue model and
 * ILP stage-to-SM mapping, and the resulting execution. */
#ifndef KT_PIPELINE_H
#define KT_PIPELINE_H
#include "../arena.h"
#include "../err.h"
#include "cost.h"
#include "hw.h"
#include "result.h"
#include "run.h"
#include "wl.h"

/** Predict Kitsune execution: selected subgraphs run as pipelines, the rest as in vf (or bsp with
 *  o->rest_bsp). r->extra points at the pipeline details for `map`. */
int ks_run(const hw_gpu *hw, const wl_graph *g, const op_work *works, const cost_ctx *c,
           const kt_opts *o, arena *a, kt_result *r, kt_err *e);

#endif
