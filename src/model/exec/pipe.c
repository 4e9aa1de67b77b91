/* pipe: one Kitsune spatial pipeline (Kitsune paper sections 3-5).
 *
 * Design: one stage per kernel op of a segment (elementwise neighbours whose other inputs are
 * weights are epilogue-fused into their producer's stage); a ring queue (depth 2) per tensor
 * that crosses stages, one ring per producer CTA, payload = the tensor's bytes per tile clamped
 * to [1 KiB, 1 MiB]; a tensor read by several stages is one multicast queue; a GEMM whose output
 * is not streamed (weight gradient, split-K) reduces its partial sums through a queue tree. The
 * streamed dimension is the rows of the largest activation, in tiles of Q_TILE_ROWS rows.
 *
 * Stage rate at a CTAs: r_i(a) = min(tiles / body_i(a), a / q_i), where body_i(a) is the op's
 * roofline time on a SMs (cost_eval: waves, L2, re-reads) and q_i one CTA's queue time per tile
 * (transfers at one SM's L2 share plus the sync round trips, queue.c).
 * Throughput T = max over integer allocations (ilp.c) of min(r_i(a_i), DRAM and L2 bounds).
 * Time = launch + memory latency + fill (first tile through every stage and hop) + (tiles-1)/T.
 * DRAM bytes: external inputs (missing L2 as in bsp), weights once (re-read per tile when a
 * stage's weight slice stays neither in its shared memory nor in L2), outputs read outside, graph
 * outputs and saved activations, the operands' own re-reads, and spilled queue traffic. */
#include "pipe.h"

#include <math.h>
#include <string.h>

#include "../../opt/ilp.h"
#include "../graph.h"
#include "queue.h"

/* Accumulator of a reduction tree: fp32 partial sums (as cuBLAS split-K). */
enum { KS_PARTIAL_BYTES = 4 };

static int64_t cdiv64(int64_t a, int64_t b)
{
    return b > 0 ? a / b + (a % b != 0) : a;
}

/* Rows of a tensor: elements over its last dimension. */
static int64_t rows_of(const wl_tensor *t)
{
    return t->ndim > 0 && t->dim[t->ndim - 1] > 0 ? t->elems / t->dim[t->ndim - 1] : 1;
}

static const pipe_rate *rate_at(pipe_env *x, int op, int ci)
{
    pipe_rate *r = &x->rate[(size_t)op * (size_t)x->ncand + (size_t)ci];
    if (!r->done) {
        cost_result cr;
        cost_ctx pc = x->c;
        pc.persistent = 1; /* a stage's CTAs stay resident and loop over tiles */
        cost_eval(x->hw, &x->w[op], x->cand[ci], &pc, 0, 0, &cr);
        r->compute_s = cr.compute_s;
        r->body_s = fmax(cr.compute_s, fmax(cr.l2_s, cr.dram_s));
        r->l2_bytes = cr.l2_bytes;
        r->extra_dram = cr.dram_read_bytes;
        r->bound = roof_bound(cr.compute_s, cr.l2_s, cr.dram_s, 0, 0); /* persistent: no launch */
        r->done = 1;
    }
    return r;
}

static int64_t op_input_miss(const pipe_env *x, int op, int j)
{
    if (x->miss && x->miss[op])
        return x->miss[op][j];
    return x->w[op].in_bytes[j];
}

static int64_t tensor_out_bytes(const pipe_env *x, int op, int k)
{
    const wl_op *o = &x->g->op[op];
    return o->nout == 1 ? x->w[op].out_bytes : x->g->t[o->out[k]].bytes;
}

/* Stage op i is epilogue-fused into: the stage of its one producer inside the segment when every
 * other input is a weight; -1 when it is a stage of its own. */
static int epilogue_stage(const pipe_env *x, const ks_pipeline *p, const int *stage_of, int i)
{
    const wl_graph *g = x->g;
    const wl_op *o = &g->op[i];
    if (!(op_info_of(o->type)->flags & OPF_EPILOGUE) || x->w[i].flops_tensor > 0)
        return -1;
    int prod = -1;
    for (int j = 0; j < o->nin; j++) {
        int pr = g->t[x->root[o->in[j]]].producer;
        if (pr >= p->first_op && pr <= p->last_op) {
            if (prod >= 0 && pr != prod)
                return -1;
            prod = pr;
        } else if (g->t[x->root[o->in[j]]].kind != TK_WEIGHT) {
            return -1;
        }
    }
    return prod >= 0 ? stage_of[prod - p->first_op] : -1;
}

/* Stages, queues, tile count and per-candidate stage rates of ops first..last. */
static int design(pipe_env *x, ks_pipeline *p, const int *force, arena *a)
{
    const wl_graph *g = x->g;
    const op_work *w = x->w;
    const hw_gpu *hw = x->hw;
    double clk = x->c.clock_MHz;
    int n = p->last_op - p->first_op + 1, nin_total = 0;
    for (int i = p->first_op; i <= p->last_op; i++)
        nin_total += g->op[i].nin;
    int *stage_of = arena_calloc(a, (size_t)n, sizeof(int));
    int *seen = arena_calloc(a, (size_t)nin_total + 1, sizeof(int));
    p->stages = arena_calloc(a, (size_t)n, sizeof *p->stages);
    p->queues = arena_calloc(a, (size_t)nin_total + 1, sizeof *p->queues);
    if (!stage_of || !seen || !p->stages || !p->queues)
        return -1;
    p->nstages = p->nqueues = 0;
    p->stream_rows = 1;
    for (int i = p->first_op; i <= p->last_op; i++) {
        stage_of[i - p->first_op] = -1;
        if (w[i].kind == OPK_FREE)
            continue;
        const wl_op *o = &g->op[i];
        p->flops += w[i].flops_tensor + w[i].flops_simt;
        for (int j = 0; j < o->nout; j++) {
            int64_t r = rows_of(&g->t[o->out[j]]);
            if (r > p->stream_rows)
                p->stream_rows = r;
        }
        int s = epilogue_stage(x, p, stage_of, i);
        if (s >= 0) {
            ks_stage *st = &p->stages[s];
            st->members[st->nmembers++] = i;
            stage_of[i - p->first_op] = s;
            continue;
        }
        s = p->nstages++;
        ks_stage *st = &p->stages[s];
        st->members = arena_calloc(a, (size_t)(p->last_op - i + 1), sizeof(int));
        st->cand_rate = arena_calloc(a, (size_t)x->ncand, sizeof(double));
        if (!st->members || !st->cand_rate)
            return -1;
        st->op = i;
        st->nmembers = 1;
        st->members[0] = i;
        st->tensor = w[i].flops_tensor > 0 && roof_tensor_rate(hw, w[i].cdt, clk) > 0;
        stage_of[i - p->first_op] = s;
    }
    p->tiles = cdiv64(p->stream_rows, Q_TILE_ROWS);
    if (p->tiles < 1)
        p->tiles = 1;
    /* queues and external inputs */
    int nseen = 0;
    for (int i = p->first_op; i <= p->last_op; i++) {
        if (w[i].kind == OPK_FREE)
            continue;
        const wl_op *o = &g->op[i];
        int si = stage_of[i - p->first_op];
        for (int j = 0; j < o->nin; j++) {
            int rt = x->root[o->in[j]];
            int pr = g->t[rt].producer;
            if (pr >= p->first_op && pr <= p->last_op) {
                int sp = stage_of[pr - p->first_op];
                if (sp == si)
                    continue; /* epilogue-fused: stays in registers */
                int q = -1;
                for (int m = 0; m < p->nqueues; m++)
                    if (p->queues[m].tensor == rt)
                        q = m;
                if (q < 0) {
                    q = p->nqueues++;
                    ks_queue *u = &p->queues[q];
                    u->tensor = rt;
                    u->producer_stage = sp;
                    int64_t b = g->t[rt].bytes;
                    u->payload_bytes = q_payload_bytes(b, p->tiles);
                    u->transfers_per_tile = (int)cdiv64(cdiv64(b, p->tiles), u->payload_bytes);
                    if (u->transfers_per_tile < 1)
                        u->transfers_per_tile = 1;
                }
                ks_queue *u = &p->queues[q];
                u->nconsumers++;
                p->stages[si].queue_s_per_tile +=
                    u->transfers_per_tile * q_tile_s(hw, (double)u->payload_bytes, clk);
                continue;
            }
            int dup = 0;
            for (int m = 0; m < nseen; m++)
                dup |= seen[m] == rt;
            if (dup || w[i].in_bytes[j] <= 0)
                continue;
            seen[nseen++] = rt;
            p->ext_read_bytes += op_input_miss(x, i, j);
            if (g->t[rt].kind == TK_WEIGHT)
                p->weight_bytes += g->t[rt].bytes;
        }
        for (int j = 0; j < o->nout; j++) {
            int t = o->out[j];
            if (x->max_reader[t] > p->last_op || x->must_write[t])
                p->ext_write_bytes += tensor_out_bytes(x, i, j);
        }
    }
    /* producer side of each queue: payload written once, a sync per consumer (multicast) */
    for (int q = 0; q < p->nqueues; q++) {
        ks_queue *u = &p->queues[q];
        ks_stage *st = &p->stages[u->producer_stage];
        double P = (double)u->payload_bytes;
        st->queue_s_per_tile +=
            u->transfers_per_tile * (P / q_cta_Bps(hw, clk) + u->nconsumers * q_sync_s(hw));
        st->queue_bytes_per_cta += (double)Q_DEPTH_DEFAULT * P;
        p->queue_traffic_bytes += g->t[u->tensor].bytes * (1 + u->nconsumers);
    }
    /* reduction trees: a Tensor stage whose output rows are not the streamed rows */
    for (int s = 0; s < p->nstages; s++) {
        ks_stage *st = &p->stages[s];
        const wl_tensor *t = &g->t[g->op[st->op].out[0]];
        if (op_is_gemm(g->op[st->op].type) && rows_of(t) * Q_TILE_ROWS < p->stream_rows) {
            st->reduction_tree = 1;
            double part = (double)t->elems * KS_PARTIAL_BYTES;
            int64_t pay = q_payload_bytes((int64_t)part, 1);
            st->reduction_s = ceil(part / (double)pay) * q_tile_s(hw, (double)pay, clk);
        }
    }
    for (int s = 0; s < p->nstages; s++) {
        ks_stage *st = &p->stages[s];
        for (int ci = 0; ci < x->ncand; ci++) {
            if (force && ci != force[s])
                continue; /* an imposed allocation needs its own rate only */
            double body = 0;
            for (int m = 0; m < st->nmembers; m++) {
                const pipe_rate *r = rate_at(x, st->members[m], ci);
                body += m == 0 ? r->body_s : r->compute_s;
            }
            double rr = body > 0 ? (double)p->tiles / body : INFINITY;
            if (st->queue_s_per_tile > 0) {
                double rq = x->cand[ci] / st->queue_s_per_tile;
                if (rq < rr)
                    rr = rq;
            }
            st->cand_rate[ci] = isfinite(rr) ? rr : 1e30;
        }
        const pipe_rate *full = rate_at(x, st->op, x->ncand - 1);
        p->l2_bytes += full->l2_bytes;
        if (st->reduction_tree)
            p->l2_bytes += 2 * g->t[g->op[st->op].out[0]].elems * KS_PARTIAL_BYTES;
    }
    p->l2_bytes += p->queue_traffic_bytes;
    return 0;
}

/* Allocation, bounds, spills, re-reads and time of a designed pipeline. use_ilp = 0: greedy. */
static int map(pipe_env *x, ks_pipeline *p, int use_ilp, const int *force, arena *a)
{
    const hw_gpu *hw = x->hw;
    double clk = x->c.clock_MHz;
    double dram_Bps = roof_dram_Bps(hw, hw->sm_count, roof_inflight_full(hw));
    double l2_Bps = roof_l2_Bps(hw, hw->sm_count, roof_inflight_full(hw), clk);
    double l2cap = hw_l2_bytes(hw);
    /* queues are touched every tile, so LRU keeps them first: they may use all of L2; weights
     * that must stay resident get what the queues leave (l2_room below) */
    double budget = l2cap;
    double N = (double)p->tiles;
    int ns = p->nstages;
    ilp_stage *st = arena_calloc(a, (size_t)ns + 1, sizeof *st);
    int *choice = arena_calloc(a, (size_t)ns + 1, sizeof(int));
    if (!st || !choice)
        return -1;
    for (int s = 0; s < ns; s++) {
        const ks_stage *k = &p->stages[s];
        st[s].tensor = k->tensor;
        st[s].ncand = x->ncand;
        st[s].cand_ctas = x->cand;
        st[s].cand_rate = k->cand_rate;
        st[s].smem_per_cta_bytes = x->smem_cta[k->op];
        st[s].regs_per_cta_bytes = x->regs_cta[k->op];
        st[s].queue_bytes_per_cta = k->queue_bytes_per_cta;
    }
    double base_dram = (double)(p->ext_read_bytes + p->ext_write_bytes);
    double cap_dram = base_dram > 0 ? dram_Bps * N / base_dram : 0;
    double cap_l2 = p->l2_bytes > 0 ? l2_Bps * N / (double)p->l2_bytes : 0;
    double cap = cap_dram > 0 && (cap_l2 <= 0 || cap_dram < cap_l2) ? cap_dram : cap_l2;
    ilp_problem ip = {ns, st, hw->sm_count, x->scheduler_shared, hw_smem_bytes(hw),
                      hw->registers_per_sm_KiB * 1024.0, cap, budget, x->ilp_time_limit_s};
    /* queue capacity only binds when even one CTA per stage fits; otherwise queues spill */
    double qmin = 0;
    for (int s = 0; s < ns; s++)
        qmin += st[s].queue_bytes_per_cta * x->cand[0];
    if (qmin > budget)
        ip.queue_budget_bytes = -1;
    ilp_solution sol;
    memset(&sol, 0, sizeof sol);
    double T;
    if (force) {
        memcpy(choice, force, (size_t)ns * sizeof *choice);
        T = 0;
    } else if (use_ilp) {
        sol.choice = choice;
        ilp_solve(&ip, &sol);
        T = sol.objective;
    } else {
        T = ilp_greedy(&ip, choice);
    }
    if (T < 0) { /* nothing fits (smem/regs): one CTA each, capacity ignored */
        for (int s = 0; s < ns; s++)
            choice[s] = 0;
    }
    for (int s = 0; s < ns; s++)
        p->stages[s].choice = choice[s];
    /* storage, spill, weight residency at the chosen allocation */
    double storage = 0, spill_bytes = 0, stream_w = 0;
    for (int s = 0; s < ns; s++)
        storage += p->stages[s].queue_bytes_per_cta * x->cand[choice[s]];
    double spill = q_spill_frac(storage, budget);
    if (spill > 0)
        for (int q = 0; q < p->nqueues; q++)
            spill_bytes += spill * (double)x->g->t[p->queues[q].tensor].bytes *
                           (1 + p->queues[q].nconsumers);
    for (int s = 0; s < ns; s++) {
        int i = p->stages[s].op;
        const wl_op *o = &x->g->op[i];
        double wb = 0;
        for (int j = 0; j < o->nin; j++)
            if (x->g->t[x->root[o->in[j]]].kind == TK_WEIGHT)
                wb += (double)x->w[i].in_bytes[j];
        double room = hw_smem_bytes(hw) - x->smem_cta[i];
        if (wb > 0 && wb / x->cand[choice[s]] > room)
            stream_w += wb; /* slice does not stay in shared memory: streamed through L2 */
    }
    double l2_room = l2cap - fmin(storage, l2cap);
    double reread = stream_w > l2_room ? (stream_w - l2_room) * (N - 1) : 0;
    int64_t extra = 0;
    for (int s = 0; s < ns; s++)
        extra += rate_at(x, p->stages[s].op, choice[s])->extra_dram;
    double rd = (double)p->ext_read_bytes + (double)extra + reread + spill_bytes / 2;
    double wr = (double)p->ext_write_bytes + spill_bytes / 2;
    double dram_cap = rd + wr > 0 ? dram_Bps * N / (rd + wr) : 0;
    int bott = -1;
    const char *bname = "none";
    double Tst = INFINITY;
    for (int s = 0; s < ns; s++)
        if (p->stages[s].cand_rate[choice[s]] < Tst) {
            Tst = p->stages[s].cand_rate[choice[s]];
            bott = s;
        }
    T = Tst;
    if (bott >= 0)
        bname = x->g->op[p->stages[bott].op].name;
    if (dram_cap > 0 && dram_cap < T) {
        T = dram_cap;
        bott = -1;
        bname = "dram";
    }
    if (cap_l2 > 0 && cap_l2 < T) {
        T = cap_l2;
        bott = -1;
        bname = "l2";
    }
    /* fill: the first tile through every stage (its CTAs share a tile's columns, so one tile
     * takes the stage's period 1 / rate) and every hop; a reduction tree adds log2(CTAs) levels */
    double fill = 0, clk_lat = hw->dram_latency_ns * 1e-9;
    for (int s = 0; s < ns; s++) {
        const ks_stage *k = &p->stages[s];
        double ca = x->cand[choice[s]];
        fill += 1.0 / k->cand_rate[choice[s]] + k->reduction_s * ceil(log2(ca > 1 ? ca : 1));
    }
    for (int q = 0; q < p->nqueues; q++)
        fill += q_tile_s(hw, (double)p->queues[q].payload_bytes, clk);
    double launch = cost_launch_s(hw, &x->c);
    p->throughput_tiles_per_s = T;
    p->dram_bound_tiles_per_s = dram_cap;
    p->l2_bound_tiles_per_s = cap_l2;
    p->bottleneck_stage = bott;
    p->bottleneck = bname;
    p->fill_s = fill;
    p->time_s = launch + clk_lat + fill + (N - 1) / T;
    p->dram_read_bytes = (int64_t)rd;
    p->dram_write_bytes = (int64_t)wr;
    p->queue_storage_bytes = (int64_t)storage;
    p->spilled_bytes = (int64_t)spill_bytes;
    p->weight_reread_bytes = (int64_t)reread;
    if (force) {
        p->ilp_status = ILP_FEASIBLE;
        p->ilp_fallback = 0;
        p->ilp_status_name = "imposed";
    } else if (use_ilp) {
        p->ilp_status = sol.status;
        p->ilp_fallback = sol.fallback;
        p->ilp_status_name = ilp_status_name(sol.status);
        p->ilp_objective_tiles_per_s = sol.objective;
        p->ilp_bound_tiles_per_s = sol.bound;
        p->ilp_gap = sol.gap;
    } else {
        p->ilp_status = ILP_GREEDY_FAILED;
        p->ilp_fallback = 1;
        p->ilp_status_name = "greedy (search estimate)";
    }
    if (!use_ilp && !force)
        return 0; /* a search estimate: its time and bytes are all the selection reads */
    /* per stage and queue at the allocation */
    for (int s = 0; s < ns; s++) {
        ks_stage *k = &p->stages[s];
        int ci = choice[s];
        k->ctas = x->cand[ci];
        k->rate_tiles_per_s = k->cand_rate[ci];
        k->body_s = 0;
        for (int m = 0; m < k->nmembers; m++) {
            const pipe_rate *r = rate_at(x, k->members[m], ci);
            k->body_s += m == 0 ? r->body_s : r->compute_s;
        }
        k->bound = rate_at(x, k->op, ci)->bound;
        k->limit = (k->queue_s_per_tile > 0 && k->ctas / k->queue_s_per_tile <= N / k->body_s)
                       ? "queue"
                       : roof_bound_name(k->bound);
        k->latency_s = 1.0 / k->rate_tiles_per_s;
    }
    double qspill = p->queue_storage_bytes > 0 && p->spilled_bytes > 0
                        ? q_spill_frac((double)p->queue_storage_bytes, l2cap)
                        : 0;
    for (int q = 0; q < p->nqueues; q++) {
        ks_queue *u = &p->queues[q];
        u->depth = Q_DEPTH_DEFAULT;
        u->storage_bytes = (int64_t)Q_DEPTH_DEFAULT * u->payload_bytes * p->stages[u->producer_stage].ctas;
        u->spill_frac = qspill;
        u->spilled = qspill > 0;
        u->eff_bandwidth_GBps = q_eff_Bps(hw, (double)u->payload_bytes, clk) / 1e9;
    }
    return 0;
}

int pipe_build(pipe_env *x, int first, int last, int use_ilp, const int *force, arena *a,
               ks_pipeline *p)
{
    memset(p, 0, sizeof *p);
    p->first_op = first;
    p->last_op = last;
    return design(x, p, force, a) || map(x, p, use_ilp, force, a) ? -1 : 0;
}

/* Candidate CTA counts: 1, 2, 3, 4, 6, 8, 12, ... (powers of two and three times them) plus the
 * divisors sm/2, sm/3, sm/4 and sm itself, ascending. */
static void candidates(pipe_env *x, int S)
{
    int v[3 * PIPE_MAX_CAND], n = 0;
    for (int b = 1; b <= S && n < 2 * PIPE_MAX_CAND - 4; b *= 2) {
        v[n++] = b;
        if (3 * b <= S && b > 0)
            v[n++] = 3 * b;
    }
    v[n++] = S;
    if (S / 2 >= 1)
        v[n++] = S / 2;
    if (S / 3 >= 1)
        v[n++] = S / 3;
    if (S / 4 >= 1)
        v[n++] = S / 4;
    /* sort, dedupe */
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
            int t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
    x->ncand = 0;
    for (int i = 0; i < n && x->ncand < PIPE_MAX_CAND; i++)
        if (v[i] >= 1 && v[i] <= S && (x->ncand == 0 || x->cand[x->ncand - 1] != v[i]))
            x->cand[x->ncand++] = v[i];
    if (x->cand[x->ncand - 1] != S) /* S must stay the last candidate */
        x->cand[x->ncand - 1] = S;
}

int pipe_env_init(pipe_env *x, const hw_gpu *hw, const wl_graph *g, const op_work *w,
                  const cost_ctx *c, int scheduler_shared, double ilp_time_limit_s, arena *a)
{
    memset(x, 0, sizeof *x);
    x->hw = hw;
    x->g = g;
    x->w = w;
    x->c = *c;
    x->scheduler_shared = scheduler_shared;
    x->ilp_time_limit_s = ilp_time_limit_s;
    candidates(x, hw->sm_count);
    size_t n = (size_t)g->nop;
    x->rate = arena_calloc(a, n * (size_t)x->ncand + 1, sizeof *x->rate);
    x->smem_cta = arena_calloc(a, n + 1, sizeof(double));
    x->regs_cta = arena_calloc(a, n + 1, sizeof(double));
    x->max_reader = arena_calloc(a, (size_t)g->ntensor + 1, sizeof(int));
    x->must_write = arena_calloc(a, (size_t)g->ntensor + 1, 1);
    x->split_k = arena_calloc(a, n + 1, sizeof(int));
    x->root = graph_storage_map(g, a);
    if (!x->rate || !x->smem_cta || !x->regs_cta || !x->max_reader || !x->must_write ||
        !x->split_k || !x->root)
        return -1;
    double regs_per_thread = hw->registers_per_sm_KiB * 1024.0 / hw->max_threads_per_sm;
    for (int i = 0; i < g->nop; i++) {
        if (w[i].kind == OPK_FREE)
            continue;
        cost_tiling t;
        cost_tile(hw, &w[i], hw->sm_count, &t);
        x->smem_cta[i] = t.smem_per_cta_bytes;
        /* registers: the kernel is assumed compiled for full occupancy (regs/SM / threads/SM) */
        x->regs_cta[i] = t.threads_per_cta * regs_per_thread;
        x->split_k[i] = (int)t.split_k;
    }
    for (int t = 0; t < g->ntensor; t++)
        x->max_reader[t] = -1;
    for (int t = 0; t < g->ntensor; t++)
        if (g->t[t].kind == TK_OUTPUT || g->t[t].saved)
            x->must_write[x->root[t]] = 1;
    for (int i = 0; i < g->nop; i++) {
        if (w[i].kind == OPK_FREE)
            continue;
        for (int j = 0; j < g->op[i].nin; j++) {
            int rt = x->root[g->op[i].in[j]];
            if (i > x->max_reader[rt])
                x->max_reader[rt] = i;
        }
    }
    return 0;
}
