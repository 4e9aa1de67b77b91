/* fusion: placeholder until the vertical-fusion planner lands. */
#include "fusion.h"

int vf_run_masked(const hw_gpu *hw, const wl_graph *g, const op_work *works, const cost_ctx *c,
                  int fuse_backward, const unsigned char *exclude, arena *a, kt_result *r,
                  kt_err *e)
{
    (void)exclude;
    return vf_run(hw, g, works, c, fuse_backward, a, r, e);
}

int vf_run(const hw_gpu *hw, const wl_graph *g, const op_work *works, const cost_ctx *c,
           int fuse_backward, arena *a, kt_result *r, kt_err *e)
{
    (void)hw; (void)works; (void)c; (void)fuse_backward; (void)a; (void)r;
    return err_set(e, KT_EINPUT, g->file, NULL, "vertical fusion is not implemented yet");
}
