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
    return w ? kt_summarize_works(g, w, a, s, e) : -1;
}

int kt_summarize_works(const wl_graph *g, const op_work *w, arena *a, kt_summary *s, kt_err *e)
{
    memset(s, 0, sizeof *s);
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

/* A result under the power limits: the board's (board_W > 0, the TDP: the GPU's firmware lowers
 * the clock of a kernel that would draw more, gpu-params.md 2.3; a kernel under it is unchanged;
 * 0 when the power policy lifts it) and with cap_W > 0 a --power-cap (the cap that applies;
 * cap_tag is the value asked for). board may be r. */
static int limit(const hw_gpu *hw, kt_result *r, double board_W, double cap_W, double cap_tag,
                 en_memo *memo, arena *a, kt_result *board, kt_result *capped)
{
    en_account(hw, r);
    kt_result b = *r;
    if (board_W > 0) {
        if (en_power_cap_memo(hw, r, board_W, memo ? &memo[0] : NULL, a, &b))
            return -1;
        b.power_cap_W = 0;
    }
    *board = b;
    if (cap_W > 0) {
        if (en_power_cap_memo(hw, board, cap_W, memo ? &memo[1] : NULL, a, capped))
            return -1;
        capped->power_cap_W = cap_tag;
    }
    return 0;
}

/* Kitsune under the limits. Its pipelines were chosen before them (ks_run); a limit can slow
 * pipelines more than the rest, so the choice is then checked against the option without
 * pipelines under the same limits, which is reported instead when it is strictly faster: the
 * limits never leave kitsune slower than its own run without pipelines. A limit only slows, so
 * that option is not evaluated when it is not faster even before the limits, or when the
 * kernels it shares with the choice (already re-clocked, en_memo) slow it enough. */
static int limit_kitsune(const hw_gpu *hw, kt_result *r, double board_W, double cap_W,
                         double cap_tag, arena *a, kt_result *board, kt_result *capped)
{
    const ks_plan *pl = r->extra;
    kt_result from = *r, cb, cc;
    en_memo memo[2] = {{0}, {0}}; /* the options share most kernels: re-clock each once */
    if (limit(hw, r, board_W, cap_W, cap_tag, memo, a, &cb, &cc))
        return -1;
    int use_b = 0, use_c = 0;
    kt_result nb, nc;
    if (pl->npipelines > 0 && pl->none) {
        kt_result none = *pl->none;
        int need_b = none.time_s < cb.time_s, need_c = cap_W > 0 && none.time_s < cc.time_s;
        if ((need_b || need_c) && board_W > 0) { /* a lower bound from the kernels re-clocked */
            en_account(hw, &none);
            double low = none.time_s + en_memo_slowdown(hw, &none, board_W, &memo[0]);
            need_b = need_b && low <= cb.time_s * (1 + 1e-12); /* slack: another summation order */
            need_c = need_c && low <= cc.time_s * (1 + 1e-12);
        }
        if ((need_b || need_c) && limit(hw, &none, board_W, cap_W, cap_tag, memo, a, &nb, &nc))
            return -1;
        use_b = need_b && nb.time_s < cb.time_s;
        use_c = need_c && nc.time_s < cc.time_s;
    }
    *board = cb;
    if (use_b && ks_without_pipelines(&from, &nb, a, board))
        return -1;
    if (cap_W > 0) {
        *capped = cc;
        if (use_c && ks_without_pipelines(&from, &nc, a, capped))
            return -1;
    }
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

int kt_prepare(const wl_graph *fwd, const kt_opts *o, arena *a, kt_prep *p, kt_err *e)
{
    memset(p, 0, sizeof *p);
    if (kt_graph(fwd, o->training, o->optimizer, a, &p->g, e))
        return -1;
    return (p->works = op_works(p->g, a, e)) ? 0 : -1;
}

int kt_run_times(const hw_gpu *hw, const kt_prep *p, const kt_opts *o, arena *a,
                 kt_run_result *out, kt_err *e)
{
    memset(out, 0, sizeof *out);
    const wl_graph *g = p->g;
    const op_work *works = p->works;
    out->g = g;
    out->works = works;
    cost_ctx c = {.clock_MHz = hw->clock_MHz, .graph_launch = o->graph_launch};
    /* kitsune reuses the bsp run (with its misses) and the vf run */
    const kt_result *bsp = NULL, *vf = NULL;
    int64_t **miss = NULL;
    if (o->exec_mask & EXEC_BSP) {
        bsp = &out->res[out->nres];
        if (bsp_run_masked(hw, g, works, &c, NULL, a, &out->res[out->nres],
                           o->exec_mask & EXEC_KITSUNE ? &miss : NULL, e))
            return -1;
        out->nres++;
    }
    if (o->exec_mask & EXEC_VF) {
        vf_opts vo = {o->vf_policy, o->vf_backward};
        vf = &out->res[out->nres];
        if (vf_run(hw, g, works, &c, &vo, a, &out->res[out->nres], e))
            return -1;
        out->nres++;
    }
    if (o->exec_mask & EXEC_KITSUNE) {
        ks_opts ko = {o->select, o->scheduler_shared, o->rest_bsp, o->vf_policy, o->vf_backward,
                      o->ilp_time_limit_s, o->why, o->ks_force, bsp, vf, miss};
        if (ks_run(hw, g, works, &c, &ko, a, &out->res[out->nres], e))
            return -1;
        out->nres++;
    }
    for (int i = 0; i < out->nres; i++)
        out->by[out->res[i].exec_id] = &out->res[i];
    return 0;
}

int kt_run_power(const hw_gpu *hw, const kt_opts *o, const kt_run_result *times, arena *a,
                 kt_run_result *out, kt_err *e)
{
    memset(out, 0, sizeof *out);
    out->g = times->g;
    out->works = times->works;
    out->nres = times->nres;
    for (int i = 0; i < times->nres; i++)
        out->res[i] = times->res[i];
    const char *file = out->g ? out->g->file : NULL;
    /* energy and the board limit of the part as the power policy describes it */
    hw_gpu *ph = arena_calloc(a, 1, sizeof *ph);
    if (!ph)
        return err_set(e, KT_EINTERNAL, file, NULL, "out of memory");
    *ph = kt_power_hw(hw, o);
    for (int i = 0; i < out->nres; i++) {
        kt_result *r = &out->res[i];
        /* the board's power limit (TDP) applies unless the policy lifts it */
        double board_W = o->power_policy != KT_POWER_NONE ? ph->tdp_W : 0;
        double cap_W = o->power_cap_W > 0 && board_W > 0 && o->power_cap_W > board_W
                           ? board_W
                           : o->power_cap_W;
        int rc = r->exec_id == EX_KITSUNE && r->extra
                     ? limit_kitsune(ph, r, board_W, cap_W, o->power_cap_W, a, r, &out->capped[i])
                     : limit(ph, r, board_W, cap_W, o->power_cap_W, NULL, a, r, &out->capped[i]);
        if (rc)
            return err_set(e, KT_EINTERNAL, file, NULL, "power limit evaluation failed");
        if (o->power_cap_W > 0)
            out->capped_by[out->capped[i].exec_id] = &out->capped[i];
        out->by[r->exec_id] = r;
    }
    return run_check(out, file, e);
}

int kt_run(const hw_gpu *hw, const wl_graph *fwd, const kt_opts *o, arena *a, kt_run_result *out,
           kt_err *e)
{
    kt_prep p;
    kt_run_result t;
    memset(out, 0, sizeof *out);
    return kt_prepare(fwd, o, a, &p, e) || kt_run_times(hw, &p, o, a, &t, e) ||
                   kt_run_power(hw, o, &t, a, out, e)
               ? -1
               : 0;
}
