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
    double *flops_pre;       /* prefix sums: [2][nop + 1] tensor and SIMT FLOPs of ops 0..i-1 */
    double *bsp_s, *bsp_util;
    int64_t *bsp_bytes;      /* per op: DRAM bytes of its bsp kernel */
    double bsp_time_s;       /* the bsp run's time (every op a kernel, in op order) */
    const pipe_env *kept;    /* the environment copied into the arena for re-evaluations */
    arena scratch;           /* the memo's pipelines are built here, then copied */
    struct ks_memo **memo;   /* per first op: the exact-search builds of its segments */
    arena memo_arena;        /* what they hold; freed with the run's context */
    int refine;              /* seg_cost: a segment the exact search built costs its time */
    struct seg_memo *cm;     /* seg_cost's answers by (first, last): the second pass reuses them */
    int cm_cap, cm_n;        /* its slots (a power of two) and those in use */
} ks_ctx;

/* One seg_cost answer. */
typedef struct seg_memo {
    int first, last; /* first -1: a free slot */
    double t;
} seg_memo;

/* One segment built by the exact search (pipe_build, PIPE_EXACT): deterministic in (first,
 * last) within a run, and asked for by the neighbour merge (its time), every candidate set and
 * the explanations (its pipeline), so it is built once. The pipeline's stages, members, queues
 * and infeasibility reason live in the memo's arena (copy_pipeline: no per-candidate terms). */
typedef struct ks_memo {
    struct ks_memo *next;
    int last;
    double est_s;      /* seg_estimate's answer */
    ks_pipeline p;
} ks_memo;

/* A pipeline that would move more DRAM bytes than the same ops bulk-synchronously (weights
 * re-read per tile, spilled queues) defeats Kitsune's purpose (paper section 3: only inputs,
 * outputs and weights touch DRAM); selection rejects it. */
static int worse_than_bsp(const ks_ctx *x, const ks_pipeline *p)
{
    if (!x->bsp_bytes)
        return 0;
    int64_t b = 0;
    for (int i = p->first_op; i <= p->last_op; i++)
        b = kt_count_add(b, x->bsp_bytes[i]);
    return kt_count_add(p->dram_read_bytes, p->dram_write_bytes) > b;
}

/* The slot of seg_cost's memo (x->cm, at least one slot free) that holds ops first..last, or the
 * free slot where they would go (linear probing). */
static seg_memo *cm_slot(const ks_ctx *x, int first, int last)
{
    unsigned h = ((unsigned)first * 2654435761u) ^ ((unsigned)last * 40503u);
    for (unsigned i = h & (unsigned)(x->cm_cap - 1);; i = (i + 1) & (unsigned)(x->cm_cap - 1))
        if (x->cm[i].first < 0 || (x->cm[i].first == first && x->cm[i].last == last))
            return &x->cm[i];
}

/* seg_cost's memo holds at most this many answers (2 MiB of slots, 4 MiB with the smaller
 * tables its growth leaves in the arena; the applications' DPs ask for a few thousand): a graph
 * whose DP asks for more has its later ones computed again by the second pass */
enum { CM_MAX = 1 << 16 };

/* Keep seg_cost's answer t for ops first..last (in the memo's arena; nothing kept when it runs
 * out of memory or holds CM_MAX answers). */
static void cm_put(ks_ctx *x, int first, int last, double t)
{
    if (x->cm_n >= CM_MAX)
        return;
    if (2 * (x->cm_n + 1) > x->cm_cap) { /* grow to twice the slots (64 at first), rehashed */
        int cap = x->cm_cap ? 2 * x->cm_cap : 64;
        seg_memo *old = x->cm, *nw = arena_alloc(&x->memo_arena, (size_t)cap, sizeof *nw);
        if (!nw)
            return;
        int ocap = x->cm_cap;
        for (int i = 0; i < cap; i++)
            nw[i].first = -1;
        x->cm = nw;
        x->cm_cap = cap;
        for (int i = 0; i < ocap; i++)
            if (old[i].first >= 0)
                *cm_slot(x, old[i].first, old[i].last) = old[i];
    }
    seg_memo *m = cm_slot(x, first, last);
    if (m->first < 0)
        x->cm_n++;
    *m = (seg_memo){first, last, t};
}

/* The exact search's build of ops first..last when the memo has it, else NULL. */
static const ks_memo *memo_peek(const ks_ctx *x, int first, int last)
{
    const ks_memo *m = x->memo ? x->memo[first] : NULL;
    while (m && m->last != last)
        m = m->next;
    return m;
}

/* Selection cost of ops first..last as one pipeline: its time with the greedy allocation, or -1
 * when it moves more DRAM bytes than bsp (x->refine: the exact search's time of a segment it
 * has built). Scratch memory is released after each evaluation. */
static double seg_cost(void *vx, int first, int last, double budget_s)
{
    (void)budget_s;
    ks_ctx *x = vx;
    const ks_memo *m = x->refine ? memo_peek(x, first, last) : NULL;
    if (m)
        return m->est_s;
    const seg_memo *c = x->refine && x->cm ? cm_slot(x, first, last) : NULL;
    if (c && c->first >= 0)
        return c->t; /* the first pass's answer */
    arena_pos mark = arena_mark(x->a);
    double t = -1;
    int64_t dram = 0;
    int ns = 0;
    if (pipe_estimate(&x->env, first, last, x->a, &t, &dram, &ns) == 0) {
        int64_t b = 0;
        for (int i = first; i <= last && x->bsp_bytes; i++)
            b = kt_count_add(b, x->bsp_bytes[i]);
        if (t < 0 || ns < 2 || (x->bsp_bytes && dram > b)) /* t < 0: nothing fits */
            t = -1;
    } else {
        t = -1;
    }
    arena_release(x->a, mark);
    cm_put(x, first, last, t);
    return t;
}

/* A lower bound on any pipeline of ops first..last: its tensor (or SIMT) FLOPs on every SM at
 * the achievable rate, or pipe_estimate_lb, whichever is larger (the search skips segments that
 * cannot win even so). */
static double seg_lb(void *vx, int first, int last, double budget_s)
{
    ks_ctx *x = vx;
    const hw_gpu *hw = x->env.hw;
    int n = x->env.g->nop;
    double ft = x->flops_pre[last + 1] - x->flops_pre[first];
    double fs = x->flops_pre[n + 1 + last + 1] - x->flops_pre[n + 1 + first];
    double tr = roof_tensor_rate(hw, DT_BF16, x->env.c.clock_MHz);
    double sr = roof_simt_rate(hw, x->env.c.clock_MHz);
    double t = 0;
    if (tr > 0)
        t = ft / (tr * hw->sm_count);
    if (sr > 0 && fs / (sr * hw->sm_count) > t)
        t = fs / (sr * hw->sm_count);
    return fmax(t, pipe_estimate_lb(&x->env, first, last, budget_s, x->a));
}

/* bsp pass over the whole graph: per op input the bytes that miss L2, per op time, utilization
 * and DRAM bytes (the references the pipelines are judged against). */
static int bsp_pass(ks_ctx *x, kt_err *e)
{
    const wl_graph *g = x->env.g;
    kt_result r;
    arena_pos mark = arena_mark(&x->scratch);
    x->bsp_s = arena_calloc(x->a, (size_t)g->nop + 1, sizeof(double));
    x->bsp_util = arena_calloc(x->a, (size_t)g->nop + 1, sizeof(double));
    x->bsp_bytes = arena_calloc(x->a, (size_t)g->nop + 1, sizeof(int64_t));
    if (!x->bsp_s || !x->bsp_util || !x->bsp_bytes)
        return err_set(e, KT_EINTERNAL, g->file, NULL, "out of memory");
    if (x->o->bsp && x->o->bsp_miss) { /* the caller's bsp run */
        r = *x->o->bsp;
        x->env.miss = x->o->bsp_miss;
    } else {
        /* the run itself (its items: hundreds of bytes an op) in the scratch arena; what is
         * kept, the per-op numbers and misses, in the result's */
        int64_t **miss;
        if (bsp_run_masked(x->env.hw, g, x->env.w, &x->env.c, NULL, &x->scratch, &r, &miss, e))
            return -1;
        x->env.miss = arena_calloc(x->a, (size_t)g->nop + 1, sizeof *x->env.miss);
        if (!x->env.miss)
            return err_set(e, KT_EINTERNAL, g->file, NULL, "out of memory");
        for (int i = 0; i < g->nop; i++) {
            if (!miss[i])
                continue;
            size_t n = (size_t)g->op[i].nin + 1;
            if (!(x->env.miss[i] = arena_alloc(x->a, n, sizeof(int64_t))))
                return err_set(e, KT_EINTERNAL, g->file, NULL, "out of memory");
            memcpy(x->env.miss[i], miss[i], n * sizeof(int64_t));
        }
    }
    for (int k = 0; k < r.nitems; k++) {
        int i = r.items[k].ops[0];
        const cost_result *c = &r.items[k].c;
        if (x->env.w[i].kind == OPK_FREE)
            continue;
        x->bsp_s[i] = c->time_s;
        x->bsp_util[i] = c->sm_util;
        x->bsp_bytes[i] = kt_count_add(c->dram_read_bytes, c->dram_write_bytes);
    }
    x->bsp_time_s = r.time_s;
    arena_release(&x->scratch, mark);
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
    c->latency_s = hw->dram_latency_ns * 1e-9 + p->fill_s + p->setup_s;
    c->compute_s = fmax(0.0, p->time_s - c->launch_s - c->latency_s); /* 0, not -1e-22, at 1 tile */
    c->dram_read_bytes = p->dram_read_bytes;
    c->dram_write_bytes = p->dram_write_bytes;
    c->l2_bytes = p->l2_bytes;
    int64_t dram_bytes = kt_count_add(p->dram_read_bytes, p->dram_write_bytes);
    c->dram_s = roof_dram_s(hw, (double)dram_bytes);
    c->l2_s = (double)p->l2_bytes / roof_l2_Bps(hw, hw->sm_count, roof_inflight_full(hw), clk);
    c->bound = p->bottleneck_stage >= 0 ? BOUND_COMPUTE
             : !strcmp(p->bottleneck, "dram") ? BOUND_DRAM
                                               : BOUND_L2;
    int64_t ft = 0, fs = 0, sfu = 0;
    int sms[2] = {0, 0};
    dtype cdt = DT_BF16;
    for (int i = p->first_op; i <= p->last_op; i++) {
        ft = kt_count_add(ft, w[i].flops_tensor);
        fs = kt_count_add(fs, w[i].flops_simt);
        sfu = kt_count_add(sfu, w[i].sfu_ops);
        if (w[i].flops_tensor > 0)
            cdt = w[i].cdt;
    }
    /* busy time of the stages' math over the stream (tensor and SIMT stages run side by side) */
    double tensor_s = 0, simt_s = 0;
    for (int s = 0; s < p->nstages; s++) {
        const ks_stage *st = &p->stages[s];
        sms[st->tensor] += st->ctas;
        double busy = st->compute_s * (double)p->tiles;
        if (st->tensor)
            tensor_s = fmax(tensor_s, busy);
        else
            simt_s = fmax(simt_s, busy);
    }
    c->tensor_s = tensor_s;
    c->simt_s = simt_s;
    c->flops_tensor = ft;
    c->flops_simt = fs;
    c->flops = kt_count_add(ft, fs);
    c->sfu_ops = sfu;
    c->cdt = cdt;
    c->tiles = p->tiles;
    c->waves = 1;
    int used = sms[0] > sms[1] ? sms[0] : sms[1];
    c->sms = used < hw->sm_count ? used : hw->sm_count;
    c->wave_eff = 1;
    roof_util(hw, c->flops, ft > 0, cdt, dram_bytes, c->time_s, clk, &c->sm_util, &c->dram_util);
}

/* What re-evaluates a pipeline at another clock: the run's environment, the pipeline, its tile
 * height and each stage's CTA count. */
typedef struct pipe_reeval_arg {
    const pipe_env *env;
    int first, last, nstages;
    int64_t tile_rows;
    const int *ctas;
    int64_t hidden_cols; /* a hidden-dimension pipeline: its chunk width (0: rows stream) */
} pipe_reeval_arg;

/* The pipeline rebuilt at clock f with the same allocation and tiles (stage rates, queue rates,
 * L2 bandwidth, fill all at f). */
static int pipe_reeval(const void *arg, double clock_MHz, arena *a, cost_result *out)
{
    const pipe_reeval_arg *r = arg;
    pipe_env x = *r->env;
    x.c.clock_MHz = clock_MHz;
    /* a rate table for this pipeline's ops only */
    x.rate = arena_calloc(a, (size_t)(r->last - r->first + 1) + 1, sizeof *x.rate);
    x.rate_first_op = r->first;
    x.rate_arena = a;
    x.force_hidden_cols = r->hidden_cols;
    ks_pipeline p;
    if (!x.rate || pipe_build(&x, r->first, r->last, 0, r->ctas, r->tile_rows, a, &p) ||
        p.nstages != r->nstages)
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
        k->cache = NULL; /* the cache dies with the run; re-evaluations run uncached */
        k->exact_memo = NULL;
        memset(&k->cache_arena, 0, sizeof k->cache_arena);
        x->kept = k;
    }
    pipe_reeval_arg *r = arena_calloc(a, 1, sizeof *r);
    int *ctas = arena_calloc(a, (size_t)p->nstages + 1, sizeof(int));
    if (!r || !ctas)
        return -1;
    for (int s = 0; s < p->nstages; s++)
        ctas[s] = p->stages[s].ctas;
    *r = (pipe_reeval_arg){x->kept, p->first_op, p->last_op, p->nstages, p->tile_rows, ctas,
                           p->hidden_acc_in_l2 ? -p->hidden_cols : p->hidden_cols};
    pipe_cost(&x->env, p, &it->c);
    it->reeval = pipe_reeval;
    it->reeval_arg = r;
    return 0;
}

/* Move pipeline p's stages, members and queues into a (the rest of p stays where it was built):
 * what assemble and the estimates read. The per-candidate terms are left out (NULL). 0 or -1. */
static int copy_pipeline(ks_pipeline *p, arena *a)
{
    ks_stage *st = arena_alloc(a, (size_t)p->nstages + 1, sizeof *st);
    ks_queue *q = arena_alloc(a, (size_t)p->nqueues + 1, sizeof *q);
    if (!st || !q)
        return -1;
    memcpy(st, p->stages, (size_t)p->nstages * sizeof *st);
    memcpy(q, p->queues, (size_t)p->nqueues * sizeof *q);
    for (int s = 0; s < p->nstages; s++) {
        int *m = arena_alloc(a, (size_t)st[s].nmembers + 1, sizeof *m);
        if (!m)
            return -1;
        memcpy(m, st[s].members, (size_t)st[s].nmembers * sizeof *m);
        st[s].members = m;
    }
    p->stages = st;
    p->queues = q;
    return 0;
}

/* The exact search's pipeline for ops first..last and its memo entry (est_s): built on first
 * use, then from the memo (its memory lives as long as the run's context). NULL when memory runs
 * out. */
static const ks_memo *exact_build(ks_ctx *x, int first, int last)
{
    const wl_graph *g = x->env.g;
    if (!x->memo && !(x->memo = arena_calloc(&x->memo_arena, (size_t)g->nop + 1, sizeof *x->memo)))
        return NULL;
    ks_memo *m = x->memo[first];
    while (m && m->last != last)
        m = m->next;
    if (m)
        return m;
    /* linked only once built: a failed build leaves no entry behind */
    if (!(m = arena_calloc(&x->memo_arena, 1, sizeof *m)))
        return NULL;
    arena_pos mark = arena_mark(&x->scratch);
    x->env.search_budget_s = 0;
    ks_pipeline p;
    int rc = pipe_build(&x->env, first, last, PIPE_EXACT, NULL, 0, &x->scratch, &p);
    if (!rc) {
        m->est_s = worse_than_bsp(x, &p) || p.nstages < 2 ? -1 : p.time_s;
        /* kept even when only the time was asked for: the candidate sets ask for most
         * estimated segments' pipelines next, and a copy costs far less than a build */
        rc = copy_pipeline(&p, &x->memo_arena) ||
             (p.infeasible && !(p.infeasible = arena_strdup(&x->memo_arena, p.infeasible)));
        m->p = p;
    }
    arena_release(&x->scratch, mark);
    if (rc)
        return NULL;
    m->last = last;
    m->next = x->memo[first];
    x->memo[first] = m;
    return m;
}

/* The pipelines of a set of segments (pp, np): mapped by the MILP (use_ilp 1), or the exact
 * search's estimates (PIPE_EXACT, from the memo). A segment no allocation of SMs can map is
 * listed in the plan as rejected (its ops run as the rest); one that moves more DRAM bytes than
 * bsp or has a single stage (an epilogue group: a vf kernel, not a pipeline) is dropped. */
static int build_set(ks_ctx *x, const sel_seg *seg, int nseg, int use_ilp, arena *a,
                     ks_pipeline **out, int *nout, ks_plan *plan, kt_err *e)
{
    const wl_graph *g = x->env.g;
    ks_pipeline *pp = arena_calloc(a, (size_t)(nseg ? nseg : 1), sizeof *pp);
    ks_rejected *rej = arena_calloc(a, (size_t)(nseg ? nseg : 1), sizeof *rej);
    if (!pp || !rej)
        return err_set(e, KT_EINTERNAL, g->file, NULL, "out of memory");
    int kept = 0, nrej = 0;
    for (int s = 0; s < nseg; s++) {
        arena_pos mark = arena_mark(a);
        if (use_ilp == PIPE_EXACT) { /* estimates: shared with the memo, which outlives them */
            const ks_memo *m = exact_build(x, seg[s].first, seg[s].last);
            if (!m)
                return err_set(e, KT_EINTERNAL, g->file, NULL, "out of memory");
            pp[kept] = m->p;
        } else if (pipe_build(&x->env, seg[s].first, seg[s].last, use_ilp, NULL, 0, a, &pp[kept])) {
            return err_set(e, KT_EINTERNAL, g->file, NULL, "out of memory");
        }
        if (pp[kept].infeasible) { /* no SM allocation runs it, not even one CTA per stage */
            rej[nrej++] = (ks_rejected){seg[s].first, seg[s].last, pp[kept].infeasible};
            continue;
        }
        if (worse_than_bsp(x, &pp[kept]) || pp[kept].nstages < 2) {
            arena_release(a, mark); /* a mapped one's memory */
            continue;
        }
        kept++;
    }
    *out = pp;
    *nout = kept;
    plan->nrejected = nrej;
    plan->rejected = rej;
    return 0;
}

/* The run with pipelines pp, the other ops as vf or bsp (rest_bsp), merged in op order. */
static int assemble(ks_ctx *x, ks_pipeline *pp, int nseg, int rest_bsp, arena *a, kt_result *r,
                    ks_plan *plan, kt_err *e)
{
    const wl_graph *g = x->env.g;
    const hw_gpu *hw = x->env.hw;
    unsigned char *ex = arena_calloc(a, (size_t)g->nop + 1, 1);
    if (!ex)
        return err_set(e, KT_EINTERNAL, g->file, NULL, "out of memory");
    int covered = 0;
    for (int s = 0; s < nseg; s++) {
        for (int i = pp[s].first_op; i <= pp[s].last_op; i++)
            ex[i] = 1;
        covered += pp[s].last_op - pp[s].first_op + 1;
    }
    kt_result rest;
    memset(&rest, 0, sizeof rest);
    int fb = 0;
    if (!rest_bsp && !nseg && x->o->vf) {
        /* every op runs as the caller's vf run ran it (the same planner over the same graph,
         * no op excluded): its items, copied (they are sorted here) */
        rest = *x->o->vf;
        rest.items = arena_alloc(a, (size_t)rest.nitems + 1, sizeof *rest.items);
        if (!rest.items)
            return err_set(e, KT_EINTERNAL, g->file, NULL, "out of memory");
        memcpy(rest.items, x->o->vf->items, (size_t)rest.nitems * sizeof *rest.items);
    } else if (!rest_bsp) {
        kt_err e2;
        err_clear(&e2);
        vf_opts vo = {x->o->vf_policy, x->o->vf_backward};
        if (vf_run_scratch(hw, g, x->env.w, &x->env.c, &vo, ex, a, &x->scratch, &rest, &e2))
            fb = 1;
    }
    if ((rest_bsp || fb) && bsp_run_masked(hw, g, x->env.w, &x->env.c, ex, a, &rest, NULL, e))
        return -1;
    memset(r, 0, sizeof *r);
    r->exec_id = EX_KITSUNE;
    r->exec = kt_exec_name(EX_KITSUNE);
    r->clock_MHz = x->env.c.clock_MHz;
    /* without pipelines the rest's items are the run's, sorted in place (a copy of hundreds of
     * bytes an item would be left behind in a) */
    r->items = nseg ? arena_calloc(a, (size_t)(rest.nitems + nseg + 1), sizeof *r->items)
                    : rest.items;
    int *key = arena_calloc(a, (size_t)(rest.nitems + nseg + 1), sizeof *key);
    if ((!r->items && rest.nitems + nseg > 0) || !key)
        return err_set(e, KT_EINTERNAL, g->file, NULL, "out of memory");
    /* merge in topological order: items sorted by their first op */
    int n = 0;
    for (int i = 0; i < rest.nitems; i++) {
        int m = g->nop;
        for (int j = 0; j < rest.items[i].nops; j++)
            if (rest.items[i].ops[j] < m)
                m = rest.items[i].ops[j];
        if (nseg)
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
    int nrej = plan->nrejected; /* build_set's, kept */
    const ks_rejected *rej = plan->rejected;
    memset(plan, 0, sizeof *plan);
    plan->nrejected = nrej;
    plan->rejected = rej;
    plan->npipelines = nseg;
    plan->p = pp;
    plan->rest = (rest_bsp || fb) ? "bsp" : "vf";
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

/* Per-op time of the ops as vf runs them (the DP's rest costs): each kernel's time of v (the run
 * without pipelines, rest as vf) shared among its ops in proportion to their bsp times (equally
 * when those are zero). */
static int rest_costs(ks_ctx *x, const kt_result *v, arena *a, double **out, kt_err *e)
{
    const wl_graph *g = x->env.g;
    double *s = arena_calloc(a, (size_t)g->nop + 1, sizeof *s);
    if (!s)
        return err_set(e, KT_EINTERNAL, g->file, NULL, "out of memory");
    for (int k = 0; k < v->nitems; k++) {
        const kt_item *it = &v->items[k];
        double sum = 0;
        int n = 0;
        for (int j = 0; j < it->nops; j++) {
            sum += x->bsp_s[it->ops[j]];
            n += x->env.w[it->ops[j]].kind != OPK_FREE;
        }
        for (int j = 0; j < it->nops; j++) {
            int i = it->ops[j];
            if (x->env.w[i].kind == OPK_FREE)
                continue;
            s[i] += it->c.time_s * (sum > 0 ? x->bsp_s[i] / sum : 1.0 / (n ? n : 1));
        }
    }
    *out = s;
    return 0;
}

static double gap_time(ks_ctx *x, int first, int last);

/* Why segment c was or was not pipelined: built as a pipeline (exact search), compared with
 * bsp's DRAM bytes and with the rest's time for the same ops. */
static void explain(ks_ctx *x, ks_candidate *c, const ks_pipeline *chosen, int nchosen)
{
    const wl_graph *g = x->env.g;
    c->rest_s = gap_time(x, c->first, c->last);
    c->pipeline_s = -1;
    c->pipelined = 0;
    c->pipeline = -1;
    for (int k = 0; k < nchosen; k++)
        if (chosen[k].first_op == c->first && chosen[k].last_op == c->last) {
            c->pipelined = 1;
            c->pipeline = k;
        }
    const ks_memo *m = exact_build(x, c->first, c->last);
    if (!m) {
        snprintf(c->reason, sizeof c->reason, "out of memory");
        return;
    }
    ks_pipeline p = m->p;
    c->nstages = p.nstages;
    c->pipeline_s = p.time_s;
    int64_t b = 0;
    for (int i = c->first; i <= c->last; i++)
        b += x->bsp_bytes[i];
    const char *rest = x->o->rest_bsp ? "bsp" : "vf";
    if (p.nstages < 2)
        snprintf(c->reason, sizeof c->reason, "one stage: an epilogue group, which %s fuses too",
                 rest);
    else if (p.ilp_status == 7 /* ILP_INFEASIBLE */)
        snprintf(c->reason, sizeof c->reason,
                 "does not fit: one CTA per stage exceeds shared memory or registers");
    else if (worse_than_bsp(x, &p))
        snprintf(c->reason, sizeof c->reason,
                 "moves more DRAM than bsp: %.1f MB vs %.1f MB (weights re-read %.1f MB, rings "
                 "spilled %.1f MB)",
                 (double)(p.dram_read_bytes + p.dram_write_bytes) / 1e6, (double)b / 1e6,
                 (double)p.weight_reread_bytes / 1e6, (double)p.spilled_bytes / 1e6);
    else if (c->rest_s >= 0 && p.time_s >= c->rest_s)
        snprintf(c->reason, sizeof c->reason,
                 "%.0f%% slower than %s: %s bound (%s per tile, fill %.1f us)",
                 100 * (p.time_s / c->rest_s - 1), rest,
                 p.bottleneck_stage >= 0 ? g->op[p.stages[p.bottleneck_stage].op].name
                                         : p.bottleneck,
                 p.bottleneck_stage >= 0 ? ks_limit_name(p.stages[p.bottleneck_stage].limit)
                                         : "bandwidth",
                 p.fill_s * 1e6);
    else if (c->pipelined)
        snprintf(c->reason, sizeof c->reason, "pipelined (pipe%d): %.0f%% faster than %s",
                 c->pipeline, c->rest_s > 0 ? 100 * (1 - p.time_s / c->rest_s) : 0, rest);
    else
        snprintf(c->reason, sizeof c->reason,
                 "%.0f%% faster than %s alone, but the chosen set of pipelines is faster",
                 c->rest_s > 0 ? 100 * (1 - p.time_s / c->rest_s) : 0, rest);
}

/* The longest runs of pipelinable ops: from each op, the longest valid segment starting there
 * (no index op inside, connected), one after the other. Returns the count (into out). */
static int longest_runs(const wl_graph *g, const op_work *w, sel_seg *out)
{
    int n = 0;
    for (int i = 0; i < g->nop;) {
        int best = -1;
        int lim = i + SEL_MAX_VALID_OPS - 1 < g->nop - 1 ? i + SEL_MAX_VALID_OPS - 1 : g->nop - 1;
        for (int j = i + 1; j <= lim && !op_is_index(g->op[j].type); j++)
            if (sel_valid(g, w, i, j))
                best = j;
        if (best < 0) {
            i++;
            continue;
        }
        out[n].first = i;
        out[n].last = best;
        n++;
        i = best + 1;
    }
    return n;
}

/* Segments seg (n, in op order) each grown over the ops next to it that no segment holds, as
 * far as it stays a valid segment (sel_valid): first to the right, then to the left. The DP's
 * fluid estimate can leave a few ops at a segment's end outside it (a weight gradient's tail)
 * where the exact search finds them worth taking. Into out; returns 1 when any grew. */
static int extend_segments(const wl_graph *g, const op_work *w, const sel_seg *seg, int n,
                           sel_seg *out)
{
    int grew = 0;
    for (int k = 0; k < n; k++) {
        int lo = k ? out[k - 1].last + 1 : 0;
        int hi = k + 1 < n ? seg[k + 1].first - 1 : g->nop - 1;
        int first = seg[k].first, last = seg[k].last;
        for (int j = last + 1; j <= hi && j - first + 1 <= SEL_MAX_VALID_OPS; j++)
            if (sel_valid(g, w, first, j))
                last = j;
        for (int i = first - 1; i >= lo && last - i + 1 <= SEL_MAX_VALID_OPS; i--)
            if (sel_valid(g, w, i, last))
                first = i;
        grew |= first != seg[k].first || last != seg[k].last;
        out[k].first = first;
        out[k].last = last;
    }
    return grew;
}

/* The exact search's time for ops first..last as a pipeline (every CTA count, no MILP), or -1
 * when it is not one (fewer than two stages, more DRAM bytes than bsp). */
static double seg_estimate(ks_ctx *x, int first, int last)
{
    const ks_memo *m = exact_build(x, first, last);
    return m ? m->est_s : -1;
}

/* The search's segments refined with the exact search, which the DP's fluid estimate only
 * approximates: a run of up to MERGE_RUN neighbouring segments (and the ops between them)
 * becomes one when that is faster. Returns the new count. */
enum { MERGE_RUN = 4 };

/* The time of ops first..last as the rest runs them on their own (vf or bsp, the other ops
 * excluded): what a merge of the segments around them saves. */
static double gap_time(ks_ctx *x, int first, int last)
{
    const wl_graph *g = x->env.g;
    if (first > last)
        return 0;
    arena_pos mark = arena_mark(x->a);
    unsigned char *ex = arena_calloc(x->a, (size_t)g->nop + 1, 1);
    double t = -1;
    if (ex) {
        for (int i = 0; i < g->nop; i++)
            ex[i] = i < first || i > last;
        kt_result r;
        kt_err e;
        err_clear(&e);
        vf_opts vo = {x->o->vf_policy, x->o->vf_backward};
        if (!x->o->rest_bsp && vf_run_scratch(x->env.hw, g, x->env.w, &x->env.c, &vo, ex, x->a, &x->scratch, &r, &e) == 0)
            t = r.time_s;
        else if (bsp_run_masked(x->env.hw, g, x->env.w, &x->env.c, ex, x->a, &r, NULL, &e) == 0)
            t = r.time_s;
    }
    arena_release(x->a, mark);
    return t;
}

static int merge_neighbours(ks_ctx *x, const double *rest_s, sel_seg *seg, int n)
{
    const wl_graph *g = x->env.g;
    (void)rest_s;
    double *t = arena_calloc(x->a, (size_t)n + 1, sizeof *t);
    if (!t)
        return n;
    for (int k = 0; k < n; k++)
        t[k] = seg_estimate(x, seg[k].first, seg[k].last);
    for (int k = 0; k + 1 < n;) {
        int best_j = -1;
        double best_gain = 0, best_m = 0;
        double sum = t[k];
        for (int j = k + 1; j < n && j <= k + MERGE_RUN - 1; j++) {
            double gt = gap_time(x, seg[j - 1].last + 1, seg[j].first - 1);
            if (gt < 0)
                break;
            sum += gt + t[j];
            if (t[k] < 0 || t[j] < 0 || !sel_valid(g, x->env.w, seg[k].first, seg[j].last))
                break;
            double m = seg_estimate(x, seg[k].first, seg[j].last);
            if (m >= 0 && sum - m > best_gain) {
                best_gain = sum - m;
                best_j = j;
                best_m = m;
            }
        }
        if (best_j < 0) {
            k++;
            continue;
        }
        seg[k].last = seg[best_j].last;
        t[k] = best_m;
        int drop = best_j - k;
        memmove(&seg[k + 1], &seg[best_j + 1], (size_t)(n - best_j - 1) * sizeof *seg);
        memmove(&t[k + 1], &t[best_j + 1], (size_t)(n - best_j - 1) * sizeof *t);
        n -= drop;
    }
    return n;
}

int ks_eval_segment(const hw_gpu *hw, const wl_graph *g, const op_work *works, const cost_ctx *c,
                    const ks_opts *o, int first, int last, arena *a, ks_pipeline *p, kt_err *e)
{
    ks_ctx x;
    if (first < 0 || last >= g->nop || first > last)
        return err_set(e, KT_EINPUT, g->file, NULL, "segment %d..%d is out of range", first, last);
    int rc = ctx_init(&x, hw, g, works, c, o, a, e);
    if (!rc && pipe_build(&x.env, first, last, 1, NULL, 0, a, p))
        rc = err_set(e, KT_EINTERNAL, g->file, NULL, "out of memory");
    pipe_env_release(&x.env);
    return rc;
}

static int run_ctx(ks_ctx *xp, const hw_gpu *hw, const wl_graph *g, const op_work *works,
                   const cost_ctx *c, const ks_opts *o, arena *a, kt_result *r, kt_err *e);

/* The graph op named name[0..len), or -1. */
static int op_named(const wl_graph *g, const char *name, size_t len)
{
    for (int i = 0; i < g->nop; i++)
        if (strlen(g->op[i].name) == len && !strncmp(g->op[i].name, name, len))
            return i;
    return -1;
}

/* Resolve an imposed pipeline's names: its ops first..last and, with f->stages, every op's stage
 * (stage_of, per graph op, -1 outside a stage) and the stage count. */
static int force_resolve(const wl_graph *g, const op_work *w, const ks_force_spec *f, arena *a,
                         int *first, int *last, int **stage_of, int *nstages, kt_err *e)
{
    *stage_of = NULL;
    *nstages = 0;
    if (f->ops && f->stages)
        return err_set(e, KT_EINPUT, NULL, "--ops", "give --ops or --stages, not both");
    if (!f->ops && !f->stages)
        return err_set(e, KT_EINPUT, NULL, "--alloc",
                       "needs the pipeline: --ops FIRST..LAST or --stages A+B,C,...");
    if (f->ops) {
        const char *dots = strstr(f->ops, "..");
        if (!dots)
            return err_set(e, KT_EINPUT, NULL, "--ops", "expected FIRST..LAST, got \"%s\"", f->ops);
        *first = op_named(g, f->ops, (size_t)(dots - f->ops));
        *last = op_named(g, dots + 2, strlen(dots + 2));
        if (*first < 0 || *last < 0)
            return err_set(e, KT_EINPUT, NULL, "--ops", "no op named \"%.*s\" in %s",
                           *first < 0 ? (int)(dots - f->ops) : (int)strlen(dots + 2),
                           *first < 0 ? f->ops : dots + 2, g->name);
        if (*first > *last)
            return err_set(e, KT_EINPUT, NULL, "--ops", "\"%s\" comes after \"%s\" in %s",
                           g->op[*first].name, g->op[*last].name, g->name);
        return 0;
    }
    int *so = arena_calloc(a, (size_t)g->nop + 1, sizeof(int));
    if (!so)
        return err_set(e, KT_EINTERNAL, g->file, NULL, "out of memory");
    for (int i = 0; i < g->nop; i++)
        so[i] = -1;
    *first = g->nop;
    *last = -1;
    int s = 0;
    for (const char *p = f->stages;; s++) {
        const char *end = p + strcspn(p, ",");
        if (end == p)
            return err_set(e, KT_EINPUT, NULL, "--stages", "stage %d is empty", s);
        for (const char *q = p; q < end;) {
            const char *qe = q + strcspn(q, "+,");
            if (qe > end)
                qe = end;
            int i = op_named(g, q, (size_t)(qe - q));
            if (i < 0)
                return err_set(e, KT_EINPUT, NULL, "--stages", "no op named \"%.*s\" in %s",
                               (int)(qe - q), q, g->name);
            if (so[i] >= 0)
                return err_set(e, KT_EINPUT, NULL, "--stages", "op \"%s\" is in stages %d and %d",
                               g->op[i].name, so[i], s);
            so[i] = s;
            *first = i < *first ? i : *first;
            *last = i > *last ? i : *last;
            q = *qe == '+' ? qe + 1 : qe;
        }
        if (!*end)
            break;
        p = end + 1;
    }
    for (int i = *first; i <= *last; i++)
        if (so[i] < 0 && w[i].kind != OPK_FREE)
            return err_set(e, KT_EINPUT, NULL, "--stages",
                           "op \"%s\" (between \"%s\" and \"%s\") is in no stage", g->op[i].name,
                           g->op[*first].name, g->op[*last].name);
    for (int k = 0; k <= s; k++) {
        int any = 0;
        for (int i = *first; i <= *last; i++)
            any |= so[i] == k && w[i].kind != OPK_FREE;
        if (!any)
            return err_set(e, KT_EINPUT, NULL, "--stages", "stage %d holds only views", k);
    }
    *stage_of = so;
    *nstages = s + 1;
    return 0;
}

/* ks_run with an imposed pipeline (o->force): that pipeline, the rest as vf or bsp. */
static int run_forced(ks_ctx *x, const hw_gpu *hw, const wl_graph *g, const op_work *works,
                      const cost_ctx *c, const ks_opts *o, arena *a, kt_result *r, kt_err *e)
{
    const ks_force_spec *f = o->force;
    if (f->ctas_per_sm > 1 && !hw_has_stage_body(hw))
        return err_set(e, KT_EINPUT, NULL, "--ctas-per-sm",
                       "needs a hw with a stage_body (a runtime's kernel; %s has none)", hw->name);
    hw_gpu *hc = arena_calloc(a, 1, sizeof *hc);
    if (!hc)
        return err_set(e, KT_EINTERNAL, g->file, NULL, "out of memory");
    *hc = *hw;
    if (f->ctas_per_sm > 0)
        hc->body_ctas_per_sm = f->ctas_per_sm;
    int first = 0, last = 0, *stage_of, nst;
    if (force_resolve(g, works, f, a, &first, &last, &stage_of, &nst, e) ||
        ctx_init(x, hc, g, works, c, o, a, e) || bsp_pass(x, e))
        return -1;
    x->env.force_stage_of = stage_of;
    if (f->stage_cta_tile_s) { /* measured stage times: for the stages and tile they were taken at */
        const char *opt = "--stage-cta-tile-us";
        if (!hw_has_stage_body(hc))
            return err_set(e, KT_EINPUT, NULL, opt,
                           "needs a hw with a stage_body (the times of a runtime's stages; %s "
                           "has none)", hw->name);
        if (!stage_of)
            return err_set(e, KT_EINPUT, NULL, opt, "needs --stages (the stages it times)");
        if (f->tile_rows <= 0)
            return err_set(e, KT_EINPUT, NULL, opt, "needs --tile (the tile height it was timed at)");
        if (f->nstage_times != nst)
            return err_set(e, KT_EINPUT, NULL, opt, "gives %d stage times; --stages gives %d stages",
                           f->nstage_times, nst);
        x->env.force_cta_tile_s = f->stage_cta_tile_s;
    }
    ks_pipeline *pp = arena_calloc(a, 1, sizeof *pp);
    ks_plan *pl = arena_calloc(a, 2, sizeof *pl);
    if (!pp || !pl)
        return err_set(e, KT_EINTERNAL, g->file, NULL, "out of memory");
    if (f->ctas) {
        if (!stage_of) { /* the model's stages: how many there are */
            arena_pos mark = arena_mark(a);
            if (pipe_build(&x->env, first, last, 0, NULL, f->tile_rows, a, pp))
                return err_set(e, KT_EINTERNAL, g->file, NULL, "out of memory");
            nst = pp->nstages;
            arena_release(a, mark);
        }
        if (f->nctas != nst)
            return err_set(e, KT_EINPUT, NULL, "--alloc",
                           "gives %d CTA counts; the pipeline %s..%s has %d stages", f->nctas,
                           g->op[first].name, g->op[last].name, nst);
    }
    if (pipe_build(&x->env, first, last, 1, f->ctas, f->tile_rows, a, pp))
        return err_set(e, KT_EINTERNAL, g->file, NULL, "out of memory");
    if (pp->nstages < 1)
        return err_set(e, KT_EINPUT, NULL, f->ops ? "--ops" : "--stages",
                       "%s..%s has no op that is not a view", g->op[first].name, g->op[last].name);
    if (pp->infeasible)
        return err_set(e, KT_EINPUT, NULL, f->ops ? "--ops" : "--stages",
                       "no SM allocation fits %s..%s (%s)", g->op[first].name, g->op[last].name,
                       pp->infeasible);
    if (f->ctas) { /* the SM pools the allocation draws on */
        int kps = hw_has_stage_body(hc) ? hc->body_ctas_per_sm : 1;
        int pool[2] = {0, 0}, shared = x->env.scheduler_shared || hw_has_stage_body(hc);
        for (int s = 0; s < pp->nstages; s++)
            pool[shared ? 0 : pp->stages[s].tensor] += pp->stages[s].ctas;
        for (int k = 0; k < 2; k++)
            if (pool[k] > kps * hc->sm_count)
                return err_set(e, KT_EINPUT, NULL, "--alloc",
                               "%d %sCTAs; %s holds %d (%d SMs x %d)", pool[k],
                               shared ? "" : k ? "Tensor-core " : "SIMT ", hc->name,
                               kps * hc->sm_count, hc->sm_count, kps);
    }
    kt_result none;
    if (assemble(x, NULL, 0, o->rest_bsp, a, &none, &pl[1], e) ||
        assemble(x, pp, 1, o->rest_bsp, a, r, &pl[0], e))
        return -1;
    pl[0].measured_stage_times = f->stage_cta_tile_s != NULL;
    pl[0].select = "imposed";
    pl[0].chosen = "imposed";
    pl[0].search_time_s = r->time_s;
    pl[0].patterns_time_s = r->time_s;
    pl[0].none_time_s = none.time_s;
    pl[0].rest_bsp_time_s = r->time_s;
    r->extra = &pl[0];
    return 0;
}

/* The end-to-end time of segments seg (n) with the exact search's pipelines, the rest as
 * rest_bsp says; none_s when it keeps no pipeline. */
static int set_time(ks_ctx *x, const sel_seg *seg, int n, int rest_bsp, double none_s, arena *a,
                    double *t, kt_err *e)
{
    ks_pipeline *pp;
    int np;
    kt_result rk;
    ks_plan pk;
    memset(&pk, 0, sizeof pk);
    arena_pos mark = arena_mark(a);
    if (build_set(x, seg, n, PIPE_EXACT, a, &pp, &np, &pk, e))
        return -1;
    if (!np)
        *t = none_s;
    else if (assemble(x, pp, np, rest_bsp, a, &rk, &pk, e))
        return -1;
    else
        *t = rk.time_s;
    arena_release(a, mark);
    x->kept = NULL; /* released with the estimate's items */
    return 0;
}

/* Rounds of refine_search at most: a bound on its time. Over the shipped workloads on a100,
 * a100-80gb, b200, h100, h200, h200-ktpipe and v100 (77 runs, both modes) every run ends within
 * 12 rounds, with a choice whose estimated segments all held up or a repeated choice. */
enum { REFINE_ROUNDS = 16 };

/* run_ctx's set 5: the DP again on the exact times of the segments built so far, from its first
 * answer (seg, n), while a segment it chose on the fluid estimate turns out slower; into out,
 * nout and t the best answer found (none: 0 segments, t infinite). */
static int refine_search(ks_ctx *x, const double *rest_s, const sel_seg *seg, int n, int rest_bsp,
                         arena *a, const sel_seg **out, int *nout, double *t, double none_s,
                         kt_err *e)
{
    const wl_graph *g = x->env.g;
    const op_work *works = x->env.w;
    *out = NULL;
    *nout = 0;
    *t = INFINITY;
    /* per segment of the current choice: 1 when the DP that chose it had its exact time */
    unsigned char *exact = arena_calloc(a, (size_t)g->nop + 1, 1);
    if (!exact)
        return err_set(e, KT_EINTERNAL, g->file, NULL, "out of memory");
    for (int round = 0; round < REFINE_ROUNDS; round++) {
        int optimistic = 0;
        for (int k = 0; k < n && !optimistic; k++) {
            const ks_memo *m = exact_build(x, seg[k].first, seg[k].last);
            if (!m)
                return err_set(e, KT_EINTERNAL, g->file, NULL, "out of memory");
            if (exact[k])
                continue;
            double est = seg_cost(x, seg[k].first, seg[k].last, 0);
            optimistic = est >= 0 && (m->est_s < 0 || m->est_s > est * (1 + 1e-9));
        }
        if (!optimistic)
            break;
        sel_seg *nx = arena_calloc(a, (size_t)g->nop + 1, sizeof *nx);
        unsigned char *nex = arena_calloc(a, (size_t)g->nop + 1, 1);
        if (!nx || !nex)
            return err_set(e, KT_EINTERNAL, g->file, NULL, "out of memory");
        double dp_s;
        x->refine = 1;
        int nn = sel_search(g, works, rest_s, g->nop, seg_cost, seg_lb, x, a, nx, g->nop, &dp_s);
        x->refine = 0;
        if (nn < 0)
            return err_set(e, KT_EINTERNAL, g->file, NULL, "out of memory");
        for (int k = 0; k < nn; k++)
            nex[k] = memo_peek(x, nx[k].first, nx[k].last) != NULL;
        int same = nn == n;
        for (int k = 0; k < nn && same; k++)
            same = nx[k].first == seg[k].first && nx[k].last == seg[k].last;
        if (same)
            break;
        double tk;
        if (set_time(x, nx, nn, rest_bsp, none_s, a, &tk, e))
            return -1;
        if (tk < *t) {
            *t = tk;
            *out = nx;
            *nout = nn;
        }
        seg = nx;
        n = nn;
        exact = nex;
    }
    return 0;
}

int ks_run(const hw_gpu *hw, const wl_graph *g, const op_work *works, const cost_ctx *c,
           const ks_opts *o, arena *a, kt_result *r, kt_err *e)
{
    ks_ctx x;
    memset(&x, 0, sizeof x);
    int rc = run_ctx(&x, hw, g, works, c, o, a, r, e);
    pipe_env_release(&x.env);
    arena_free(&x.scratch);
    arena_free(&x.memo_arena);
    return rc;
}

/* ks_run on a context whose stage cache the caller frees. */
static int run_ctx(ks_ctx *xp, const hw_gpu *hw, const wl_graph *g, const op_work *works,
                   const cost_ctx *c, const ks_opts *o, arena *a, kt_result *r, kt_err *e)
{
    ks_ctx *x = xp;
    if (o->force)
        return run_forced(x, hw, g, works, c, o, a, r, e);
    if (ctx_init(x, hw, g, works, c, o, a, e) || bsp_pass(x, e))
        return -1;
    sel_seg *pat = arena_calloc(a, (size_t)g->nop + 1, sizeof *pat);
    sel_seg *dp = arena_calloc(a, (size_t)g->nop + 1, sizeof *dp);
    ks_plan *plan = arena_calloc(a, 4, sizeof *plan);
    kt_result *res = arena_calloc(a, 3, sizeof *res);
    if (!pat || !dp || !plan || !res)
        return err_set(e, KT_EINTERNAL, g->file, NULL, "out of memory");
    int npat = sel_patterns(g, works, x->bsp_util, x->env.split_k, pat, g->nop);
    /* the run without pipelines (kept in full: the choice is checked against it); the DP weighs
     * a segment as a pipeline against the same ops as the rest runs them there (vf: their
     * items' times, bsp: their own) */
    ks_pipeline *none_pp;
    int none_np;
    memset(&plan[2], 0, sizeof plan[2]);
    if (build_set(x, NULL, 0, PIPE_EXACT, a, &none_pp, &none_np, &plan[2], e) ||
        assemble(x, none_pp, none_np, o->rest_bsp, a, &res[2], &plan[2], e))
        return -1;
    double *rest_s = x->bsp_s;
    if (!o->rest_bsp && !plan[2].rest_fallback && rest_costs(x, &res[2], a, &rest_s, e))
        return -1;
    double dp_s;
    x->flops_pre = arena_calloc(a, 2 * ((size_t)g->nop + 1), sizeof(double));
    if (!x->flops_pre)
        return err_set(e, KT_EINTERNAL, g->file, NULL, "out of memory");
    for (int i = 0; i < g->nop; i++) {
        /* tensor FLOPs at the fastest dtype the GPU has bound the time from below */
        x->flops_pre[i + 1] = x->flops_pre[i] + (double)works[i].flops_tensor;
        x->flops_pre[g->nop + 1 + i + 1] = x->flops_pre[g->nop + 1 + i] + (double)works[i].flops_simt;
    }
    int ndp = sel_search(g, works, rest_s, g->nop, seg_cost, seg_lb, x, a, dp, g->nop, &dp_s);
    if (ndp < 0)
        return err_set(e, KT_EINTERNAL, g->file, NULL, "out of memory");
    /* candidate sets: 0 patterns, 1 the DP's segments merged, 2 none, 3 the DP's own, 4 the
     * longest runs of pipelinable ops, 5 the DP's own on exact times (refine_search), 6 set 1
     * with each segment grown over its free neighbours (extend_segments); each estimated end to
     * end (exact search per pipeline) */
    sel_seg *raw = arena_calloc(a, (size_t)g->nop + 1, sizeof *raw);
    sel_seg *run = arena_calloc(a, (size_t)g->nop + 1, sizeof *run);
    sel_seg *ext = arena_calloc(a, (size_t)g->nop + 1, sizeof *ext);
    if (!raw || !run || !ext)
        return err_set(e, KT_EINTERNAL, g->file, NULL, "out of memory");
    memcpy(raw, dp, (size_t)ndp * sizeof *dp);
    int nraw = ndp;
    ndp = merge_neighbours(x, rest_s, dp, ndp);
    int nrun = longest_runs(g, works, run);
    int grew = extend_segments(g, works, dp, ndp, ext);
    enum { NSETS = 7 };
    const sel_seg *sets[NSETS] = {pat, dp, NULL, raw, run, NULL, ext};
    int nsets[NSETS] = {npat, ndp, 0, nraw, nrun, 0, ndp};
    double est[NSETS];
    est[2] = res[2].time_s;
    est[5] = INFINITY;
    /* only the time is kept (the winner is rebuilt below); a set that keeps no pipeline runs as
     * the run without pipelines; set 6, when no segment grew, is set 1 */
    for (int k = 0; k < NSETS; k++)
        if (k != 2 && k != 5 && (k != 6 || grew) &&
            set_time(x, sets[k], nsets[k], o->rest_bsp, res[2].time_s, a, &est[k], e))
            return -1;
    if (!grew)
        est[6] = est[1];
    /* The DP priced its segments with the fluid estimate. Where the exact search finds one of
     * the segments it chose slower than that, the DP runs again with the exact time of every
     * segment built so far (and builds what it then chooses), until it chooses segments whose
     * exact times are no worse than their estimates, repeats itself, or REFINE_ROUNDS pass; the
     * best of its answers is set 5. A choice made on optimistic estimates is otherwise final,
     * and more hardware could make kitsune slower through it. */
    if (refine_search(x, rest_s, raw, nraw, o->rest_bsp, a, &sets[5], &nsets[5], &est[5],
                      res[2].time_s, e))
        return -1;
    if (!o->why) { /* only the explanations ask the memo again */
        arena_free(&x->memo_arena);
        x->memo = NULL;
        x->cm = NULL;
        x->cm_cap = x->cm_n = 0;
    }
    static const char *const NAME[NSETS] = {"patterns", "search", "none", "search", "search",
                                            "search", "search"};
    int pick = 0;
    if (o->select != KS_SELECT_PATTERNS) {
        /* the search's answer is the best of every set */
        for (int k = 1; k < NSETS; k++)
            if (est[k] < est[pick])
                pick = k;
    } else if (est[2] < est[0]) { /* the paper's patterns unless no pipelines is faster */
        pick = 2;
    }
    const sel_seg *win = sets[pick];
    int nwin = nsets[pick];

    /* the chosen set mapped by the MILP; and, for the report, its pipelines with the rest bsp */
    kt_result fin, alt;
    ks_plan pfin, palt;
    memset(&pfin, 0, sizeof pfin);
    memset(&palt, 0, sizeof palt);
    ks_pipeline *pp;
    int np;
    if (build_set(x, win, nwin, 1, a, &pp, &np, &pfin, e))
        return -1;
    if (!np) { /* no pipeline kept: the run without pipelines, as assembled above (its rejected
                  segments are this plan's) */
        int nrej = pfin.nrejected;
        const ks_rejected *rej = pfin.rejected;
        fin = res[2];
        pfin = plan[2];
        pfin.nrejected = nrej;
        pfin.rejected = rej;
    } else if (assemble(x, pp, np, o->rest_bsp, a, &fin, &pfin, e)) {
        return -1;
    }
    /* of the bsp-rest variant only its time is kept; without pipelines it is the bsp pass's
     * (the same kernels, summed in the same order) */
    double alt_s = x->bsp_time_s;
    if (np) {
        arena_pos amark = arena_mark(a);
        if (assemble(x, pp, np, 1, a, &alt, &palt, e))
            return -1;
        alt_s = alt.time_s;
        arena_release(a, amark);
    }
    if (pick != 2 && est[2] < fin.time_s) { /* mapped, the pipelines lost to none */
        pick = 2;
        fin = res[2];
        pfin = plan[2];
    }
    est[pick] = fin.time_s;
    *r = fin;
    ks_plan *pl = &plan[3];
    *pl = pfin;
    pl->select = o->select == KS_SELECT_PATTERNS ? "patterns" : "search";
    pl->chosen = NAME[pick];
    double best_search = est[1];
    for (int k = 0; k < NSETS; k++)
        best_search = fmin(best_search, est[k]);
    pl->search_time_s = best_search;
    pl->patterns_time_s = est[0];
    pl->none_time_s = est[2];
    pl->rest_bsp_time_s = alt_s;
    pl->none = &res[2];
    pl->none_plan = &plan[2];
    if (o->why) { /* every candidate of the patterns, the search and the longest runs */
        const sel_seg *src[4] = {pat, dp, run, sets[5]};
        const int nsrc[4] = {npat, ndp, nrun, nsets[5]};
        static const char *const SRC[4] = {"patterns", "search", "longest run", "search"};
        int total = npat + ndp + nrun + nsets[5];
        pl->cands = arena_calloc(a, (size_t)total + 1, sizeof *pl->cands);
        if (!pl->cands)
            return err_set(e, KT_EINTERNAL, g->file, NULL, "out of memory");
        pl->ncands = 0;
        for (int k = 0; k < 4; k++)
            for (int i = 0; i < nsrc[k]; i++) {
                int dup = 0;
                for (int j = 0; j < pl->ncands; j++)
                    dup |= pl->cands[j].first == src[k][i].first && pl->cands[j].last == src[k][i].last;
                if (dup)
                    continue;
                ks_candidate *cd = &pl->cands[pl->ncands++];
                cd->first = src[k][i].first;
                cd->last = src[k][i].last;
                cd->source = SRC[k];
                explain(x, cd, pfin.p, pfin.npipelines);
            }
        for (int i = 1; i < pl->ncands; i++) /* by first op, longer first */
            for (int j = i; j > 0 && (pl->cands[j - 1].first > pl->cands[j].first ||
                                      (pl->cands[j - 1].first == pl->cands[j].first &&
                                       pl->cands[j - 1].last < pl->cands[j].last));
                 j--) {
                ks_candidate t = pl->cands[j];
                pl->cands[j] = pl->cands[j - 1];
                pl->cands[j - 1] = t;
            }
    }
    r->extra = pl;
    return 0;
}

int ks_without_pipelines(const kt_result *r, const kt_result *limited, arena *a, kt_result *out)
{
    const ks_plan *from = r->extra;
    ks_plan *pl = arena_calloc(a, 1, sizeof *pl);
    if (!pl)
        return -1;
    *pl = *from->none_plan;
    pl->select = from->select;
    pl->chosen = "none";
    pl->search_time_s = from->search_time_s;
    pl->patterns_time_s = from->patterns_time_s;
    pl->none_time_s = from->none_time_s;
    pl->rest_bsp_time_s = from->none_time_s;
    pl->none = from->none;
    pl->none_plan = from->none_plan;
    *out = *limited;
    out->extra = pl;
    return 0;
}
