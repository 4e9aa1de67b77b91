/* vf: the vertical-fusion baseline - fusion planner and cost of fused groups. */
#ifndef KT_VF_H
#define KT_VF_H
#include "../../arena.h"
#include "../../err.h"
#include "../cost.h"
#include "../hw.h"
#include "../result.h"
#include "../wl.h"

/** Fusion policies: which groups a vertical-fusion compiler forms.
 *  VF_INDUCTOR: what torch.compile (default mode) does: GEMMs stay library calls (a bias is
 *    folded in by addmm, nothing else), pointwise ops, reductions, norms, gathers and
 *    concatenations fuse into generated kernels, backward ops too.
 *  VF_PAPER: what the Kitsune paper's baseline fuses: GEMM epilogues and AStitch stitching, GEMM
 *    chains only when every resource of the chained kernel fits, forward ops only.
 *  VF_RULES: the aggressive rules (epilogues, row epilogues, stitching, GEMM chains) with the same
 *    complete resource check; backward chains with fuse_backward. */
enum { VF_INDUCTOR, VF_PAPER, VF_RULES, VF_NPOLICIES };

/** "inductor", "paper", "rules". */
const char *vf_policy_name(int policy);
/** Parse a policy name; -1 if unknown. */
int vf_policy_parse(const char *s);

/** Options of a vf run. */
typedef struct vf_opts {
    int policy;        /* VF_* */
    int fuse_backward; /* VF_RULES: fuse backward chains too (the paper assumed forward only) */
} vf_opts;

/** Plan fusion groups and predict vertical-fusion execution under a policy. r->items are the
 *  groups (single-op groups included), r->ops_covered counts ops inside multi-op groups. */
int vf_run(const hw_gpu *hw, const wl_graph *g, const op_work *works, const cost_ctx *c,
           const vf_opts *vo, arena *a, kt_result *r, kt_err *e);
/** The same over the ops with exclude[i] == 0 only (exclude may be NULL): kitsune runs the ops
 *  outside its pipelines this way. Excluded ops produce no items; r->ops_total counts all ops. */
int vf_run_masked(const hw_gpu *hw, const wl_graph *g, const op_work *works, const cost_ctx *c,
                  const vf_opts *vo, const unsigned char *exclude, arena *a, kt_result *r,
                  kt_err *e);
/** vf_run_masked with the planner's temporary memory (hundreds of bytes per op) taken from
 *  scratch and released to its mark before returning: a caller that plans many times keeps one
 *  scratch arena (its blocks are reused, not faulted in again); vf_run_masked uses its own. */
int vf_run_scratch(const hw_gpu *hw, const wl_graph *g, const op_work *works, const cost_ctx *c,
                   const vf_opts *vo, const unsigned char *exclude, arena *a, arena *scratch,
                   kt_result *r, kt_err *e);

#endif
