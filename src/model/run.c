/* run: one prediction - workload on a GPU under the requested execution models. */
#include "run.h"

#include <stdio.h>
#include <string.h>

#include "autodiff.h"
#include "energy.h"
#include "exec/bsp.h"
#include "exec/kitsune.h"
#include "exec/vf.h"
#include "graph.h"
#include "op.h"

const char *kt_power_policy_name(int p)
{
    static const char *const N[KT_POWER_COUNT] = {"scaled", "fixed", "none"};
    return p >= 0 && p < KT_POWER_COUNT ? N[p] : "?";
}

int kt_power_policy_parse(const char *s)
{
    for (int i = 0; i < KT_POWER_COUNT; i++)
        if (!strcmp(s, kt_power_policy_name(i)))
            return i;
    return -1;
}

hw_gpu kt_power_hw(const hw_gpu *hw, const kt_opts *o)
{
    hw_gpu h = *hw;
    int ref = o->power_ref_sm_count;
    if (o->power_policy == KT_POWER_SCALED && ref > 0 && ref != hw->sm_count) {
        double f = (double)hw->sm_count / ref;
        h.tdp_W *= f;
        h.static_W *= f;
        h.idle_W *= f;
    }
    return h;
}

void kt_opts_default(kt_opts *o)
{
    memset(o, 0, sizeof *o);
    o->exec_mask = EXEC_ALL;
    o->graph_launch = 1;
    o->select = SELECT_SEARCH;
    ks_opts k;
    ks_opts_default(&k);
    o->ilp_time_limit_s = k.ilp_time_limit_s;
}

int kt_graph(const wl_graph *fwd, int training, int optimizer, arena *a, const wl_graph **out,
             kt_err *e)
{
    *out = fwd;
    if (!training)
        return 0;
    if (fwd->inference_only)
        return err_set(e, KT_EINPUT, fwd->file, "inference_only",
                       "workload \"%s\" is inference-only (no training graph)", fwd->name);
    wl_graph *tg = arena_calloc(a, 1, sizeof *tg);
    if (!tg)
        return err_set(e, KT_EINTERNAL, fwd->file, NULL, "out of memory");
    if (ad_training_graph(fwd, optimizer, a, tg, e))
        return -1;
    *out = tg;
    return 0;
}

int kt_summarize(const wl_graph *g, arena *a, kt_summary *s, kt_err *e)
{
    memset(s, 0, sizeof *s);
    op_work *w = op_works(g, a, e);
    if (!w)
        return -1;
    s->ops = g->nop;
    for (int i = 0; i < g->nop; i++) {
        if (w[i].kind != OPK_FREE)
            s->kernels++;
        s->flops_tensor = kt_count_add(s->flops_tensor, w[i].flops_tensor);
        s->flops_simt = kt_count_add(s->flops_simt, w[i].flops_simt);
    }
    for (int i = 0; i < g->ntensor; i++) {
        const wl_tensor *t = &g->t[i];
        int view = t->producer >= 0 && w[t->producer].kind == OPK_FREE;
        if (t->kind == TK_WEIGHT)
            s->weight_bytes = kt_count_add(s->weight_bytes, t->bytes);
        if (t->kind == TK_INTER && !view)
            s->act_bytes = kt_count_add(s->act_bytes, t->bytes);
        if (t->kind == TK_INPUT || t->kind == TK_WEIGHT || t->kind == TK_OUTPUT)
            s->min_dram_bytes = kt_count_add(s->min_dram_bytes, t->bytes);
        if (t->saved)
            s->saved_bytes = kt_count_add(s->saved_bytes, t->bytes);
    }
    const int64_t v[] = {kt_count_add(s->flops_tensor, s->flops_simt), s->weight_bytes,
                         s->act_bytes, s->min_dram_bytes, s->saved_bytes};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        if ((double)v[i] >= KT_COUNT_LIMIT)
            return err_set(e, KT_EINPUT, g->file, NULL,
                           "the graph's total FLOPs or bytes exceed 9e18, the range of 64-bit "
                           "counters (use smaller parameters)");
    graph_mem m;
    if (graph_memory(g, a, &m, e))
        return -1;
    s->peak_act_bytes = m.peak_act_bytes;
    if (wl_add(m.weight_bytes, m.peak_act_bytes, &s->footprint_bytes))
        return err_set(e, KT_EINPUT, g->file, NULL, "memory footprint overflows 64 bits");
    return 0;
}

/* Every result is reportable (result_check): counts within 64 bits, finite non-negative times
 * and energies; and kitsune is never slower than the plan it falls back to without pipelines
 * (kitsune.c keeps the best), which a failure here would mean the model broke. */
static int run_check(const kt_run_result *rr, const char *file, kt_err *e)
{
    for (int i = 0; i < rr->nres; i++) {
        char what[64];
        snprintf(what, sizeof what, "%s run", rr->res[i].exec);
        if (result_check(&rr->res[i], what, file, e))
            return -1;
        if (rr->capped_by[rr->res[i].exec_id]) {
            snprintf(what, sizeof what, "%s run under the power cap", rr->res[i].exec);
            if (result_check(&rr->capped[i], what, file, e))
                return -1;
        }
    }
    return 0;
}

int kt_run(const hw_gpu *hw, const wl_graph *fwd, const kt_opts *o, arena *a, kt_run_result *out,
           kt_err *e)
{
    memset(out, 0, sizeof *out);
    const wl_graph *g;
    if (kt_graph(fwd, o->training, o->optimizer, a, &g, e))
        return -1;
    out->g = g;
    op_work *works = op_works(g, a, e);
    if (!works)
        return -1;
    cost_ctx c = {.clock_MHz = hw->clock_MHz, .graph_launch = o->graph_launch};
    if (o->exec_mask & EXEC_BSP) {
        if (bsp_run(hw, g, works, &c, a, &out->res[out->nres], e))
            return -1;
        out->nres++;
    }
    if (o->exec_mask & EXEC_VF) {
        vf_opts vo = {o->vf_policy, o->vf_backward};
        if (vf_run(hw, g, works, &c, &vo, a, &out->res[out->nres], e))
            return -1;
        out->nres++;
    }
    if (o->exec_mask & EXEC_KITSUNE) {
        ks_opts ko = {o->select, o->scheduler_shared, o->rest_bsp, o->vf_policy, o->vf_backward,
                      o->ilp_time_limit_s, o->why, o->ks_force};
        if (ks_run(hw, g, works, &c, &ko, a, &out->res[out->nres], e))
            return -1;
        out->nres++;
    }
    /* energy and the board limit of the part as the power policy describes it */
    hw_gpu *ph = arena_calloc(a, 1, sizeof *ph);
    if (!ph)
        return err_set(e, KT_EINTERNAL, g->file, NULL, "out of memory");
    *ph = kt_power_hw(hw, o);
    for (int i = 0; i < out->nres; i++) {
        en_account(ph, &out->res[i]);
        /* the board's power limit (TDP) applies unless the policy lifts it: the GPU's firmware
         * lowers the clock of a kernel that would draw more (gpu-params.md 2.3); a kernel under
         * TDP is unchanged */
        if (o->power_policy != KT_POWER_NONE) {
            kt_result board;
            if (en_power_cap(ph, &out->res[i], ph->tdp_W, a, &board))
                return err_set(e, KT_EINTERNAL, g->file, NULL, "power limit evaluation failed");
            board.power_cap_W = 0;
            out->res[i] = board;
        }
        if (o->power_cap_W > 0) {
            double cap = o->power_cap_W < ph->tdp_W || o->power_policy == KT_POWER_NONE
                             ? o->power_cap_W
                             : ph->tdp_W;
            if (en_power_cap(ph, &out->res[i], cap, a, &out->capped[i]))
                return err_set(e, KT_EINTERNAL, g->file, NULL, "power cap evaluation failed");
            out->capped[i].power_cap_W = o->power_cap_W;
            out->capped_by[out->capped[i].exec_id] = &out->capped[i];
        }
        out->by[out->res[i].exec_id] = &out->res[i];
    }
    return run_check(out, g->file, e);
}
