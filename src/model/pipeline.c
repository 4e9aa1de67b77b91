/* pipeline: placeholder until spatial pipelines land. */
#include "pipeline.h"

int ks_run(const hw_gpu *hw, const wl_graph *g, const op_work *works, const cost_ctx *c,
           const kt_opts *o, arena *a, kt_result *r, kt_err *e)
{
    (void)hw; (void)works; (void)c; (void)o; (void)a; (void)r;
    return err_set(e, KT_EINPUT, g->file, NULL, "kitsune pipelines are not implemented yet");
}
