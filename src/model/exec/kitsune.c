/* kitsune: Kitsune execution of a graph (Kitsune paper sections 3-5) - which subgraphs run as
 * spatial pipelines (the paper's patterns or a model-driven search, select.c), each one designed
 * and mapped by pipe.c, the ops outside pipelines as vf (or bsp), merged in op order. The search
 * is judged end to end against the patterns and against no pipelines at all; the best wins. */
#include "kitsune.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bsp.h"
#include "select.h"
#include "vf.h"

/* What a run over the graph knows besides the pipeline environment: its bsp kernels. */
typedef struct ks_ctx {
    pipe_env env;
    const ks_opts *o;
    arena *a;
    double *bsp_s, *bsp_util;
    int64_t *bsp_bytes;      /* per op: DRAM bytes of its bsp kernel */
    const pipe_env *kept;    /* the environment copied into the arena for re-evaluations */
} ks_ctx;

/* A pipeline that would move more DRAM bytes than the same ops bulk-synchronously (weights
 * re-read per tile, spilled queues) defeats Kitsune's purpose (paper section 3: only inputs,
 * outputs and weights touch DRAM); selection rejects it. */
static int worse_than_bsp(const ks_ctx *x, const ks_pipeline *p)
{
    if (!x->bsp_bytes)
        return 0;
    int64_t b = 0;
    for (int i = p->first_op; i <= p->last_op; i++)
        b += x->bsp_bytes[i];
    return p->dram_read_bytes + p->dram_write_bytes > b;
}

/* Selection cost of ops first..last as one pipeline: its time with the greedy allocation, or -1
 * when it moves more DRAM bytes than bsp. Scratch memory is released after each evaluation. */
static double seg_cost(void *vx, int first, int last)
{
    ks_ctx *x = vx;
    ks_pipeline p;
    arena_pos mark = arena_mark(x->a);
    double t = -1;
    if (pipe_build(&x->env, first, last, 0, NULL, x->a, &p) == 0)
        t = worse_than_bsp(x, &p) ? -1 : p.time_s;
    arena_release(x->a, mark);
    return t;
}

/* bsp pass over the whole graph: per op input the bytes that miss L2, per op time, utilization
 * and DRAM bytes (the references the pipelines are judged against). */
static int bsp_pass(ks_ctx *x, kt_err *e)
{
    const wl_graph *g = x->env.g;
    kt_result r;
    if (bsp_run_masked(x->env.hw, g, x->env.w, &x->env.c, NULL, x->a, &r, &x->env.miss, e))
        return -1;
    x->bsp_s = arena_calloc(x->a, (size_t)g->nop + 1, sizeof(double));
    x->bsp_util = arena_calloc(x->a, (size_t)g->nop + 1, sizeof(double));
    x->bsp_bytes = arena_calloc(x->a, (size_t)g->nop + 1, sizeof(int64_t));
    if (!x->bsp_s || !x->bsp_util || !x->bsp_bytes)
        return err_set(e, KT_EINTERNAL, g->file, NULL, "out of memory");
    for (int k = 0; k < r.nitems; k++) {
        int i = r.items[k].ops[0];
        const cost_result *c = &r.items[k].c;
        if (x->env.w[i].kind == OPK_FREE)
            continue;
        x->bsp_s[i] = c->time_s;
        x->bsp_util[i] = c->sm_util;
        x->bsp_bytes[i] = c->dram_read_bytes + c->dram_write_bytes;
    }
    return 0;
}

/* The cost of a pipeline as one item (kernel) of the run. */
static void pipe_cost(const pipe_env *x, const ks_pipeline *p, cost_result *c)
{
    const hw_gpu *hw = x->hw;
    const op_work *w = x->w;
    double clk = x->c.clock_MHz;
    memset(c, 0, sizeof *c);
    c->time_s = p->time_s;
    c->launch_s = cost_launch_s(hw, &x->c);
    c->latency_s = hw->dram_latency_ns * 1e-9 + p->fill_s;
    c->compute_s = p->time_s - c->launch_s - c->latency_s;
    c->dram_read_bytes = p->dram_read_bytes;
    c->dram_write_bytes = p->dram_write_bytes;
    c->l2_bytes = p->l2_bytes;
    c->dram_s = roof_dram_s(hw, (double)(p->dram_read_bytes + p->dram_write_bytes));
    c->l2_s = (double)p->l2_bytes / roof_l2_Bps(hw, hw->sm_count, roof_inflight_full(hw), clk);
    c->bound = p->bottleneck_stage >= 0 ? BOUND_COMPUTE
             : !strcmp(p->bottleneck, "dram") ? BOUND_DRAM
                                               : BOUND_L2;
    int64_t ft = 0, fs = 0, sfu = 0;
    int sms = 0;
    dtype cdt = DT_BF16;
    for (int i = p->first_op; i <= p->last_op; i++) {
        ft += w[i].flops_tensor;
        fs += w[i].flops_simt;
        sfu += w[i].sfu_ops;
        if (w[i].flops_tensor > 0)
            cdt = w[i].cdt;
    }
    double tensor_s = 0, simt_s = 0;
    for (int s = 0; s < p->nstages; s++) {
        sms += p->stages[s].ctas;
        if (p->stages[s].tensor)
            tensor_s += p->stages[s].body_s;
        else
            simt_s += p->stages[s].body_s;
    }
    c->tensor_s = tensor_s;
    c->simt_s = simt_s;
    c->flops_tensor = ft;
    c->flops_simt = fs;
    c->flops = ft + fs;
    c->sfu_ops = sfu;
    c->cdt = cdt;
    c->tiles = p->tiles;
    c->waves = 1;
    c->sms = sms < hw->sm_count ? sms : hw->sm_count;
    c->wave_eff = 1;
    roof_util(hw, c->flops, ft > 0, cdt, c->dram_read_bytes + c->dram_write_bytes, c->time_s,
              clk, &c->sm_util, &c->dram_util);
}

/* What re-evaluates a pipeline at another clock: the run's environment, the pipeline and the
 * candidate index of each stage's CTA count. */
typedef struct pipe_reeval_arg {
    const pipe_env *env;
    int first, last, nstages;
    const int *choice;
} pipe_reeval_arg;

/* The pipeline rebuilt at clock f with the same allocation (stage rates, queue rates, L2
 * bandwidth, fill all at f). */
static int pipe_reeval(const void *arg, double clock_MHz, arena *a, cost_result *out)
{
    const pipe_reeval_arg *r = arg;
    pipe_env x = *r->env;
    x.c.clock_MHz = clock_MHz;
    x.rate = arena_calloc(a, (size_t)x.g->nop * (size_t)x.ncand + 1, sizeof *x.rate);
    ks_pipeline p;
    if (!x.rate || pipe_build(&x, r->first, r->last, 0, r->choice, a, &p) || p.nstages != r->nstages)
        return -1;
    pipe_cost(&x, &p, out);
    return 0;
}

/* The kt_item of a pipeline, with its re-evaluation at another clock. 0, or -1 (memory). */
static int pipe_item(ks_ctx *x, const ks_pipeline *p, arena *a, kt_item *it)
{
    if (!x->kept) { /* the run's context lives on the stack; its items outlive it */
        pipe_env *k = arena_calloc(a, 1, sizeof *k);
        if (!k)
            return -1;
        *k = x->env;
        x->kept = k;
    }
    pipe_reeval_arg *r = arena_calloc(a, 1, sizeof *r);
    int *choice = arena_calloc(a, (size_t)p->nstages + 1, sizeof(int));
    if (!r || !choice)
        return -1;
    for (int s = 0; s < p->nstages; s++)
        choice[s] = p->stages[s].choice;
    *r = (pipe_reeval_arg){x->kept, p->first_op, p->last_op, p->nstages, choice};
    pipe_cost(&x->env, p, &it->c);
    it->reeval = pipe_reeval;
    it->reeval_arg = r;
    return 0;
}

/* Full evaluation of a set of segments: ILP per pipeline, the rest via vf or bsp, merged. */
static int eval_set(ks_ctx *x, const sel_seg *seg, int nseg, arena *a, kt_result *r,
                    ks_plan *plan, kt_err *e)
{
    const wl_graph *g = x->env.g;
    const hw_gpu *hw = x->env.hw;
    unsigned char *ex = arena_calloc(a, (size_t)g->nop + 1, 1);
    ks_pipeline *pp = arena_calloc(a, (size_t)(nseg ? nseg : 1), sizeof *pp);
    if (!ex || !pp)
        return err_set(e, KT_EINTERNAL, g->file, NULL, "out of memory");
    int covered = 0, kept = 0;
    for (int s = 0; s < nseg; s++) {
        arena_pos mark = arena_mark(a);
        if (pipe_build(&x->env, seg[s].first, seg[s].last, 1, NULL, a, &pp[kept]))
            return err_set(e, KT_EINTERNAL, g->file, NULL, "out of memory");
        if (worse_than_bsp(x, &pp[kept])) {
            arena_release(a, mark);
            continue;
        }
        for (int i = seg[s].first; i <= seg[s].last; i++)
            ex[i] = 1;
        covered += seg[s].last - seg[s].first + 1;
        kept++;
    }
    nseg = kept;
    kt_result rest;
    memset(&rest, 0, sizeof rest);
    int fb = 0;
    if (!x->o->rest_bsp) {
        kt_err e2;
        err_clear(&e2);
        vf_opts vo = {x->o->vf_policy, x->o->vf_backward};
        if (vf_run_masked(hw, g, x->env.w, &x->env.c, &vo, ex, a, &rest, &e2))
            fb = 1;
    }
    if ((x->o->rest_bsp || fb) && bsp_run_masked(hw, g, x->env.w, &x->env.c, ex, a, &rest, NULL, e))
        return -1;
    memset(r, 0, sizeof *r);
    r->exec_id = EX_KITSUNE;
    r->exec = kt_exec_name(EX_KITSUNE);
    r->clock_MHz = x->env.c.clock_MHz;
    r->items = arena_calloc(a, (size_t)(rest.nitems + nseg + 1), sizeof *r->items);
    int *key = arena_calloc(a, (size_t)(rest.nitems + nseg + 1), sizeof *key);
    if (!r->items || !key)
        return err_set(e, KT_EINTERNAL, g->file, NULL, "out of memory");
    /* merge in topological order: items sorted by their first op */
    int n = 0;
    for (int i = 0; i < rest.nitems; i++) {
        int m = g->nop;
        for (int j = 0; j < rest.items[i].nops; j++)
            if (rest.items[i].ops[j] < m)
                m = rest.items[i].ops[j];
        r->items[n] = rest.items[i];
        key[n++] = m;
    }
    for (int s = 0; s < nseg; s++) {
        kt_item *it = &r->items[n];
        memset(it, 0, sizeof *it);
        ks_pipeline *p = &pp[s];
        char buf[160];
        snprintf(buf, sizeof buf, "pipe%d:%s..%s", s, g->op[p->first_op].name, g->op[p->last_op].name);
        it->name = arena_strdup(a, buf);
        it->type = "pipeline";
        int *ops = arena_calloc(a, (size_t)(p->last_op - p->first_op + 1), sizeof *ops);
        if (!it->name || !ops)
            return err_set(e, KT_EINTERNAL, g->file, NULL, "out of memory");
        for (int i = p->first_op; i <= p->last_op; i++)
            ops[i - p->first_op] = i;
        it->ops = ops;
        it->nops = p->last_op - p->first_op + 1;
        it->pipeline = s;
        snprintf(buf, sizeof buf, "%d stages, %lld tiles, bottleneck %s, ilp %s", p->nstages,
                 (long long)p->tiles, p->bottleneck, p->ilp_status_name);
        it->note = arena_strdup(a, buf);
        if (!it->note || pipe_item(x, p, a, it))
            return err_set(e, KT_EINTERNAL, g->file, NULL, "out of memory");
        key[n++] = p->first_op;
    }
    for (int i = 1; i < n; i++) /* stable insertion sort by first op */
        for (int j = i; j > 0 && key[j - 1] > key[j]; j--) {
            kt_item t = r->items[j];
            r->items[j] = r->items[j - 1];
            r->items[j - 1] = t;
            int kk = key[j];
            key[j] = key[j - 1];
            key[j - 1] = kk;
        }
    r->nitems = n;
    r->ops_total = g->nop;
    r->ops_covered = rest.ops_covered + covered;
    result_sum(r);
    plan->npipelines = nseg;
    plan->p = pp;
    plan->rest = (x->o->rest_bsp || fb) ? "bsp" : "vf";
    plan->rest_fallback = fb;
    plan->scheduler_shared = x->o->scheduler_shared;
    return 0;
}

/* GLPK time limit per pipeline solve (seconds): every shipped pipeline solves in milliseconds;
 * the limit only bounds pathological inputs, which then take the greedy allocation. */
#define KS_ILP_TIME_LIMIT_S 1.0

void ks_opts_default(ks_opts *o)
{
    memset(o, 0, sizeof *o);
    o->select = KS_SELECT_SEARCH;
    o->ilp_time_limit_s = KS_ILP_TIME_LIMIT_S;
}

static int ctx_init(ks_ctx *x, const hw_gpu *hw, const wl_graph *g, const op_work *works,
                    const cost_ctx *c, const ks_opts *o, arena *a, kt_err *e)
{
    memset(x, 0, sizeof *x);
    x->o = o;
    x->a = a;
    if (pipe_env_init(&x->env, hw, g, works, c, o->scheduler_shared, o->ilp_time_limit_s, a))
        return err_set(e, KT_EINTERNAL, g->file, NULL, "out of memory");
    return 0;
}

int ks_eval_segment(const hw_gpu *hw, const wl_graph *g, const op_work *works, const cost_ctx *c,
                    const ks_opts *o, int first, int last, arena *a, ks_pipeline *p, kt_err *e)
{
    ks_ctx x;
    if (first < 0 || last >= g->nop || first > last)
        return err_set(e, KT_EINPUT, g->file, NULL, "segment %d..%d is out of range", first, last);
    if (ctx_init(&x, hw, g, works, c, o, a, e))
        return -1;
    if (pipe_build(&x.env, first, last, 1, NULL, a, p))
        return err_set(e, KT_EINTERNAL, g->file, NULL, "out of memory");
    return 0;
}

int ks_run(const hw_gpu *hw, const wl_graph *g, const op_work *works, const cost_ctx *c,
           const ks_opts *o, arena *a, kt_result *r, kt_err *e)
{
    ks_ctx x;
    if (ctx_init(&x, hw, g, works, c, o, a, e) || bsp_pass(&x, e))
        return -1;
    sel_seg *pat = arena_calloc(a, (size_t)g->nop + 1, sizeof *pat);
    sel_seg *dp = arena_calloc(a, (size_t)g->nop + 1, sizeof *dp);
    ks_plan *plan = arena_calloc(a, 4, sizeof *plan);
    kt_result *res = arena_calloc(a, 3, sizeof *res);
    if (!pat || !dp || !plan || !res)
        return err_set(e, KT_EINTERNAL, g->file, NULL, "out of memory");
    int npat = sel_patterns(g, works, x.bsp_util, x.env.split_k, pat, g->nop);
    double dp_s;
    int ndp = sel_search(g, works, x.bsp_s, SEL_MAX_SEGMENT_OPS, seg_cost, &x, a, dp, g->nop, &dp_s);
    if (ndp < 0)
        return err_set(e, KT_EINTERNAL, g->file, NULL, "out of memory");
    /* 0: patterns, 1: search (DP), 2: none */
    if (eval_set(&x, pat, npat, a, &res[0], &plan[0], e) ||
        eval_set(&x, dp, ndp, a, &res[1], &plan[1], e) ||
        eval_set(&x, NULL, 0, a, &res[2], &plan[2], e))
        return -1;
    int pick;
    const char *chosen;
    if (o->select == KS_SELECT_PATTERNS) {
        pick = 0;
        chosen = "patterns";
    } else {
        /* the search's answer is the best of its DP choice, the patterns and no pipelines (the
         * DP ranks segments with bsp costs for the rest; this final check uses the real rest) */
        pick = 1;
        if (res[0].time_s < res[pick].time_s)
            pick = 0;
        if (res[2].time_s < res[pick].time_s)
            pick = 2;
        chosen = pick == 0 ? "patterns" : pick == 1 ? "search" : "none";
    }
    double search_s = fmin(res[1].time_s, fmin(res[0].time_s, res[2].time_s));
    *r = res[pick];
    ks_plan *pl = &plan[3];
    *pl = plan[pick];
    pl->select = o->select == KS_SELECT_PATTERNS ? "patterns" : "search";
    pl->chosen = chosen;
    pl->search_time_s = search_s;
    pl->patterns_time_s = res[0].time_s;
    pl->none_time_s = res[2].time_s;
    r->extra = pl;
    return 0;
}
