/* bsp: bulk-synchronous execution - one kernel per op on all SMs, the schedule core's walk. */
#include "bsp.h"

#include <string.h>

#include "../sched.h"

int bsp_run(const hw_gpu *hw, const wl_graph *g, const op_work *works, const cost_ctx *c,
            arena *a, kt_result *r, kt_err *e)
{
    return bsp_run_masked(hw, g, works, c, NULL, a, r, NULL, e);
}

int bsp_run_masked(const hw_gpu *hw, const wl_graph *g, const op_work *works, const cost_ctx *c,
                   const unsigned char *exclude, arena *a, kt_result *r, int64_t ***miss, kt_err *e)
{
    memset(r, 0, sizeof *r);
    r->exec_id = EX_BSP;
    r->exec = kt_exec_name(EX_BSP);
    r->clock_MHz = c->clock_MHz;
    r->items = arena_calloc(a, (size_t)g->nop + 1, sizeof *r->items);
    int *idx = arena_calloc(a, (size_t)g->nop + 1, sizeof(int));
    int64_t **m = miss ? arena_calloc(a, (size_t)g->nop + 1, sizeof *m) : NULL;
    sched_walk s;
    if (!r->items || !idx || (miss && !m) || sched_begin(&s, hw, g, c, a))
        return err_set(e, KT_EINTERNAL, g->file, NULL, "out of memory");
    for (int i = 0; i < g->nop; i++) {
        const wl_op *o = &g->op[i];
        if (exclude && exclude[i]) {
            sched_skip(&s, i);
            continue;
        }
        kt_item *it = &r->items[r->nitems++];
        it->name = o->name;
        it->type = op_name(o->type);
        it->nops = 1;
        idx[i] = i;
        it->ops = &idx[i];
        it->pipeline = -1;
        if (m && works[i].kind != OPK_FREE &&
            !(m[i] = arena_calloc(a, (size_t)o->nin + 1, sizeof(int64_t))))
            return err_set(e, KT_EINTERNAL, g->file, NULL, "out of memory");
        if (sched_op(&s, i, &works[i], it, m ? m[i] : NULL))
            return err_set(e, KT_EINTERNAL, g->file, NULL, "out of memory");
    }
    if (miss)
        *miss = m;
    r->ops_total = g->nop;
    r->ops_covered = 0;
    result_sum(r);
    return 0;
}
