/* vf: the vertical-fusion baseline - fusion planner and cost of fused groups. */
#ifndef KT_VF_H
#define KT_VF_H
#include "../../arena.h"
#include "../../err.h"
#include "../cost.h"
#include "../hw.h"
#include "../result.h"
#include "../wl.h"

/** Plan fusion groups and predict vertical-fusion execution. fuse_backward: 0 = forward ops only
 *  (the paper's assumption for training), 1 = backward chains too. r->items are the groups
 *  (single-op groups included), r->ops_covered counts ops inside multi-op groups. */
int vf_run(const hw_gpu *hw, const wl_graph *g, const op_work *works, const cost_ctx *c,
           int fuse_backward, arena *a, kt_result *r, kt_err *e);
/** The same over the ops with exclude[i] == 0 only (exclude may be NULL): kitsune runs the ops
 *  outside its pipelines this way. Excluded ops produce no items; r->ops_total counts all ops. */
int vf_run_masked(const hw_gpu *hw, const wl_graph *g, const op_work *works, const cost_ctx *c,
                  int fuse_backward, const unsigned char *exclude, arena *a, kt_result *r,
                  kt_err *e);

#endif
