/* bsp: bulk-synchronous execution - one kernel per op on all SMs. */
#include "bsp.h"

#include <stdio.h>
#include <string.h>

#include "l2.h"

op_work *bsp_works(const wl_graph *g, arena *a, kt_err *e)
{
    op_work *w = arena_calloc(a, (size_t)g->nop, sizeof *w);
    if (!w) {
        err_set(e, KT_EINTERNAL, g->file, NULL, "out of memory");
        return NULL;
    }
    for (int i = 0; i < g->nop; i++) {
        char msg[128];
        if (op_work_of(g, &g->op[i], &w[i], msg, sizeof msg)) {
            char p[64];
            snprintf(p, sizeof p, "ops[%d]", i);
            err_set(e, KT_EINPUT, g->file, p, "%s", msg);
            return NULL;
        }
    }
    return w;
}

int bsp_run(const hw_gpu *hw, const wl_graph *g, const op_work *works, const cost_ctx *c,
            arena *a, kt_result *r, kt_err *e)
{
    return bsp_run_masked(hw, g, works, c, NULL, a, r, e);
}

int bsp_run_masked(const hw_gpu *hw, const wl_graph *g, const op_work *works, const cost_ctx *c,
                   const unsigned char *exclude, arena *a, kt_result *r, kt_err *e)
{
    memset(r, 0, sizeof *r);
    r->exec = "bsp";
    r->clock_MHz = c->clock_MHz;
    r->items = arena_calloc(a, (size_t)g->nop, sizeof *r->items);
    double *last = arena_calloc(a, (size_t)g->ntensor, sizeof(double));
    if (!r->items || !last)
        return err_set(e, KT_EINTERNAL, g->file, NULL, "out of memory");
    l2_state l2;
    l2_init(&l2, hw_l2_bytes(hw), last, g->ntensor);
    for (int i = 0; i < g->nop; i++) {
        const wl_op *o = &g->op[i];
        const op_work *w = &works[i];
        if (exclude && exclude[i]) {
            for (int j = 0; j < o->nout; j++)
                l2_write(&l2, o->out[j], g->t[o->out[j]].bytes);
            continue;
        }
        kt_item *it = &r->items[r->nitems++];
        it->name = o->name;
        it->type = op_name(o->type);
        it->nops = 1;
        int *idx = arena_calloc(a, 1, sizeof(int));
        if (!idx)
            return err_set(e, KT_EINTERNAL, g->file, NULL, "out of memory");
        *idx = i;
        it->ops = idx;
        it->pipeline = -1;
        if (w->kind == OPK_FREE) {
            l2_alias(&l2, o->out[0], o->in[0]);
            cost_eval(hw, w, hw->sm_count, c, 0, 0, &it->c);
            continue;
        }
        int64_t rd = 0;
        for (int j = 0; j < o->nin; j++)
            if (w->in_bytes[j] > 0)
                rd += l2_read(&l2, o->in[j], w->in_bytes[j]);
        cost_eval(hw, w, hw->sm_count, c, rd, w->out_bytes, &it->c);
        l2_advance(&l2, (double)it->c.dram_read_bytes - (double)rd);
        for (int j = 0; j < o->nout; j++)
            l2_write(&l2, o->out[j], o->nout == 1 ? w->out_bytes : g->t[o->out[j]].bytes);
    }
    r->ops_total = g->nop;
    r->ops_covered = 0;
    result_sum(r);
    return 0;
}
