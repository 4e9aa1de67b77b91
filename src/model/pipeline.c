/* pipeline: Kitsune spatial pipelines (Kitsune paper sections 3-5).
 *
 * Design: one stage per kernel op of a selected segment (elementwise neighbours whose other
 * inputs are weights are epilogue-fused into their producer's stage); a ring queue (depth 2) per
 * tensor that crosses stages, one ring per producer CTA, payload = the tensor's bytes per tile
 * clamped to [1 KiB, 1 MiB]; a tensor read by several stages is one multicast queue; a GEMM whose
 * output is not streamed (weight gradient, split-K) reduces its partial sums through a queue tree.
 * The streamed dimension is the rows of the largest activation, in tiles of Q_TILE_ROWS rows.
 *
 * Stage rate at a CTAs: r_i(a) = min(tiles / body_i(a), a / q_i), where body_i(a) is the op's
 * roofline time on a SMs (cost_eval: waves, L2, re-reads) and q_i one CTA's queue time per tile
 * (transfers at one SM's L2 share plus the sync round trips, queue.c).
 * Throughput T = max over integer allocations (ilp.c) of min(r_i(a_i), DRAM and L2 bounds).
 * Time = launch + memory latency + fill (first tile through every stage and hop) + (tiles-1)/T.
 * DRAM bytes: external inputs (missing L2 as in bsp), weights once (re-read per tile when a
 * stage's weight slice stays neither in its shared memory nor in L2), outputs read outside, graph
 * outputs and saved activations, the operands' own re-reads, and spilled queue traffic. */
#include "pipeline.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../opt/ilp.h"
#include "../opt/select.h"
#include "bsp.h"
#include "fusion.h"
#include "l2.h"
#include "queue.h"

enum { KS_MAX_OPS = 4 * SEL_MAX_SEGMENT_OPS, KS_MAX_Q = 2 * KS_MAX_OPS, KS_MAX_CAND = 24 };
/* Accumulator of a reduction tree: fp32 partial sums (as cuBLAS split-K). */
enum { KS_PARTIAL_BYTES = 4 };

typedef struct ks_rate {
    double body_s, compute_s;
    int64_t l2_bytes, extra_dram;
    cost_bound bound;
    int done;
} ks_rate;

typedef struct ks_ctx {
    const hw_gpu *hw;
    const wl_graph *g;
    const op_work *w;
    const cost_ctx *c;
    const kt_opts *o;
    int ncand, cand[KS_MAX_CAND];
    ks_rate *rate;           /* [nop][ncand] */
    double *smem_cta, *regs_cta;
    const int64_t *miss_off, *miss; /* per op input: bytes missing L2 (bsp residency), or NULL */
    int *max_reader;         /* per real tensor: last op reading it */
    unsigned char *must_write; /* per real tensor: graph output or saved activation */
    double *bsp_s, *bsp_util;
    int64_t *bsp_bytes;      /* per op: DRAM bytes of its bsp kernel */
    int *split_k;
} ks_ctx;

/* A pipeline being designed (fixed-size scratch: segments are at most KS_MAX_OPS ops). */
typedef struct ks_work {
    int first, last, nst, nq;
    int st_op[KS_MAX_OPS], st_nmem[KS_MAX_OPS], st_mem[KS_MAX_OPS][KS_MAX_OPS];
    int st_tensor[KS_MAX_OPS], st_red[KS_MAX_OPS];
    int stage_of[KS_MAX_OPS];
    double st_qs[KS_MAX_OPS], st_qbytes[KS_MAX_OPS], st_red_s[KS_MAX_OPS];
    double rate[KS_MAX_OPS][KS_MAX_CAND];
    int q_t[KS_MAX_Q], q_prod[KS_MAX_Q], q_ncons[KS_MAX_Q], q_k[KS_MAX_Q];
    int64_t q_payload[KS_MAX_Q];
    int64_t rows, tiles;
    int64_t ext_read, ext_write, weight_bytes, l2_bytes, flops, queue_traffic;
    int choice[KS_MAX_OPS];
} ks_work;

static int real_tensor(const wl_graph *g, const op_work *w, int t)
{
    int p = g->t[t].producer;
    while (p >= 0 && w[p].kind == OPK_FREE && g->op[p].nin > 0) {
        t = g->op[p].in[0];
        p = g->t[t].producer;
    }
    return t;
}

static int64_t cdiv64(int64_t a, int64_t b)
{
    return b > 0 ? a / b + (a % b != 0) : a;
}

static const ks_rate *rate_at(ks_ctx *x, int op, int ci)
{
    ks_rate *r = &x->rate[(size_t)op * x->ncand + ci];
    if (!r->done) {
        cost_result cr;
        cost_ctx pc = *x->c;
        pc.persistent = 1; /* a stage's CTAs stay resident and loop over tiles */
        cost_eval(x->hw, &x->w[op], x->cand[ci], &pc, 0, 0, &cr);
        r->compute_s = cr.compute_s;
        r->body_s = fmax(cr.compute_s, fmax(cr.l2_s, cr.dram_s));
        r->l2_bytes = cr.l2_bytes;
        r->extra_dram = cr.dram_read_bytes;
        r->bound = cr.bound == BOUND_LATENCY ? BOUND_COMPUTE : cr.bound;
        if (cr.l2_s > cr.compute_s && cr.l2_s >= cr.dram_s)
            r->bound = BOUND_L2;
        else if (cr.dram_s > cr.compute_s && cr.dram_s > cr.l2_s)
            r->bound = BOUND_DRAM;
        else
            r->bound = BOUND_COMPUTE;
        r->done = 1;
    }
    return r;
}

static int64_t op_input_miss(const ks_ctx *x, int op, int j)
{
    if (x->miss)
        return x->miss[x->miss_off[op] + j];
    return x->w[op].in_bytes[j];
}

static int64_t tensor_out_bytes(const ks_ctx *x, int op, int k)
{
    const wl_op *o = &x->g->op[op];
    return o->nout == 1 ? x->w[op].out_bytes : x->g->t[o->out[k]].bytes;
}

static int is_epilogue(const ks_ctx *x, const ks_work *k, int i)
{
    const wl_graph *g = x->g;
    const wl_op *o = &g->op[i];
    if (!(op_info_of(o->type)->flags & OPF_EPILOGUE) || x->w[i].flops_tensor > 0)
        return -1;
    int prod = -1;
    for (int j = 0; j < o->nin; j++) {
        int p = sel_real_producer(g, x->w, o->in[j]);
        if (p >= k->first && p <= k->last) {
            if (prod >= 0 && p != prod)
                return -1;
            prod = p;
        } else if (g->t[real_tensor(g, x->w, o->in[j])].kind != TK_WEIGHT) {
            return -1;
        }
    }
    return prod >= 0 ? k->stage_of[prod - k->first] : -1;
}

/* Stages, queues, tile count and per-candidate stage rates of ops first..last. */
static void design(ks_ctx *x, ks_work *k)
{
    const wl_graph *g = x->g;
    const op_work *w = x->w;
    const hw_gpu *hw = x->hw;
    double clk = x->c->clock_MHz;
    k->nst = k->nq = 0;
    k->rows = 1;
    k->ext_read = k->ext_write = k->weight_bytes = k->l2_bytes = k->flops = k->queue_traffic = 0;
    for (int i = k->first; i <= k->last; i++) {
        k->stage_of[i - k->first] = -1;
        if (w[i].kind == OPK_FREE)
            continue;
        const wl_op *o = &g->op[i];
        k->flops += w[i].flops_tensor + w[i].flops_simt;
        for (int j = 0; j < o->nout; j++) {
            const wl_tensor *t = &g->t[o->out[j]];
            int64_t r = t->ndim > 0 && t->dim[t->ndim - 1] > 0 ? t->elems / t->dim[t->ndim - 1] : 1;
            if (r > k->rows)
                k->rows = r;
        }
        int s = is_epilogue(x, k, i);
        if (s >= 0) {
            k->st_mem[s][k->st_nmem[s]++] = i;
            k->stage_of[i - k->first] = s;
            continue;
        }
        s = k->nst++;
        k->st_op[s] = i;
        k->st_nmem[s] = 1;
        k->st_mem[s][0] = i;
        k->st_tensor[s] = w[i].flops_tensor > 0 && cost_tensor_rate(hw, w[i].cdt, clk) > 0;
        k->st_red[s] = 0;
        k->st_qs[s] = k->st_qbytes[s] = k->st_red_s[s] = 0;
        k->stage_of[i - k->first] = s;
    }
    k->tiles = cdiv64(k->rows, Q_TILE_ROWS);
    if (k->tiles < 1)
        k->tiles = 1;
    /* queues and external inputs */
    int seen[KS_MAX_Q * 2], nseen = 0;
    for (int i = k->first; i <= k->last; i++) {
        if (w[i].kind == OPK_FREE)
            continue;
        const wl_op *o = &g->op[i];
        int si = k->stage_of[i - k->first];
        for (int j = 0; j < o->nin; j++) {
            int rt = real_tensor(g, w, o->in[j]);
            int p = g->t[rt].producer;
            if (p >= k->first && p <= k->last) {
                int sp = k->stage_of[p - k->first];
                if (sp == si)
                    continue; /* epilogue-fused: stays in registers */
                int q = -1;
                for (int m = 0; m < k->nq; m++)
                    if (k->q_t[m] == rt)
                        q = m;
                if (q < 0 && k->nq < KS_MAX_Q) {
                    q = k->nq++;
                    k->q_t[q] = rt;
                    k->q_prod[q] = sp;
                    k->q_ncons[q] = 0;
                    int64_t b = g->t[rt].bytes;
                    k->q_payload[q] = q_payload_bytes(b, k->tiles);
                    k->q_k[q] = (int)cdiv64(cdiv64(b, k->tiles), k->q_payload[q]);
                    if (k->q_k[q] < 1)
                        k->q_k[q] = 1;
                }
                if (q >= 0) {
                    k->q_ncons[q]++;
                    k->st_qs[si] += k->q_k[q] * q_tile_s(hw, (double)k->q_payload[q], clk);
                }
                continue;
            }
            int dup = 0;
            for (int m = 0; m < nseen; m++)
                dup |= seen[m] == rt;
            if (dup || w[i].in_bytes[j] <= 0)
                continue;
            if (nseen < KS_MAX_Q * 2)
                seen[nseen++] = rt;
            k->ext_read += op_input_miss(x, i, j);
            if (g->t[rt].kind == TK_WEIGHT)
                k->weight_bytes += g->t[rt].bytes;
        }
        for (int j = 0; j < o->nout; j++) {
            int t = o->out[j];
            if (x->max_reader[t] > k->last || x->must_write[t])
                k->ext_write += tensor_out_bytes(x, i, j);
        }
    }
    /* producer side of each queue: payload written once, a sync per consumer (multicast) */
    for (int q = 0; q < k->nq; q++) {
        int s = k->q_prod[q];
        double P = (double)k->q_payload[q];
        k->st_qs[s] += k->q_k[q] * (P / q_cta_Bps(hw, clk) + k->q_ncons[q] * q_sync_s(hw));
        k->st_qbytes[s] += (double)Q_DEPTH_DEFAULT * P;
        k->queue_traffic += g->t[k->q_t[q]].bytes * (1 + k->q_ncons[q]);
    }
    /* reduction trees: a Tensor stage whose output rows are not the streamed rows */
    for (int s = 0; s < k->nst; s++) {
        int i = k->st_op[s];
        const wl_tensor *t = &g->t[g->op[i].out[0]];
        int64_t r = t->ndim > 0 && t->dim[t->ndim - 1] > 0 ? t->elems / t->dim[t->ndim - 1] : 1;
        if (op_is_gemm(g->op[i].type) && r * Q_TILE_ROWS < k->rows) {
            k->st_red[s] = 1;
            double part = (double)t->elems * KS_PARTIAL_BYTES;
            int64_t pay = q_payload_bytes((int64_t)part, 1);
            k->st_red_s[s] = ceil(part / (double)pay) * q_tile_s(hw, (double)pay, clk);
        }
    }
    for (int s = 0; s < k->nst; s++) {
        for (int ci = 0; ci < x->ncand; ci++) {
            double body = 0;
            for (int m = 0; m < k->st_nmem[s]; m++) {
                const ks_rate *r = rate_at(x, k->st_mem[s][m], ci);
                body += m == 0 ? r->body_s : r->compute_s;
            }
            double rr = body > 0 ? (double)k->tiles / body : INFINITY;
            if (k->st_qs[s] > 0) {
                double rq = x->cand[ci] / k->st_qs[s];
                if (rq < rr)
                    rr = rq;
            }
            k->rate[s][ci] = isfinite(rr) ? rr : 1e30;
        }
        const ks_rate *full = rate_at(x, k->st_op[s], x->ncand - 1);
        k->l2_bytes += full->l2_bytes;
        if (k->st_red[s]) {
            const wl_tensor *t = &g->t[g->op[k->st_op[s]].out[0]];
            k->l2_bytes += 2 * t->elems * KS_PARTIAL_BYTES;
        }
    }
    k->l2_bytes += k->queue_traffic;
}

/* Allocation, bounds, spills, re-reads and time of a designed pipeline. use_ilp = 0: greedy. */
static void evaluate(ks_ctx *x, ks_work *k, int use_ilp, ks_pipeline *p, ilp_solution *sol)
{
    const hw_gpu *hw = x->hw;
    double clk = x->c->clock_MHz;
    double dram_Bps = cost_dram_Bps(hw, hw->sm_count);
    double l2_Bps = cost_l2_Bps(hw, hw->sm_count, clk);
    double l2cap = hw_l2_bytes(hw);
    /* queues are touched every tile, so LRU keeps them first: they may use all of L2; weights
     * that must stay resident get what the queues leave (l2_room below) */
    double budget = l2cap;
    double N = (double)k->tiles;
    ilp_stage st[KS_MAX_OPS];
    for (int s = 0; s < k->nst; s++) {
        st[s].tensor = k->st_tensor[s];
        st[s].ncand = x->ncand;
        st[s].cand_ctas = x->cand;
        st[s].cand_rate = k->rate[s];
        st[s].smem_per_cta_bytes = x->smem_cta[k->st_op[s]];
        st[s].regs_per_cta_bytes = x->regs_cta[k->st_op[s]];
        st[s].queue_bytes_per_cta = k->st_qbytes[s];
    }
    double base_dram = (double)(k->ext_read + k->ext_write);
    double cap_dram = base_dram > 0 ? dram_Bps * N / base_dram : 0;
    double cap_l2 = k->l2_bytes > 0 ? l2_Bps * N / (double)k->l2_bytes : 0;
    double cap = cap_dram > 0 && (cap_l2 <= 0 || cap_dram < cap_l2) ? cap_dram : cap_l2;
    ilp_problem ip = {k->nst, st, hw->sm_count, x->o->scheduler_shared, hw_smem_bytes(hw),
                      hw->registers_per_sm_KiB * 1024.0, cap, budget, x->o->ilp_time_limit_s};
    /* queue capacity only binds when even one CTA per stage fits; otherwise queues spill */
    double qmin = 0;
    for (int s = 0; s < k->nst; s++)
        qmin += st[s].queue_bytes_per_cta * x->cand[0];
    if (qmin > budget)
        ip.queue_budget_bytes = -1;
    double T;
    if (use_ilp) {
        sol->choice = k->choice;
        ilp_solve(&ip, sol);
        T = sol->objective;
    } else {
        T = ilp_greedy(&ip, k->choice);
    }
    if (T < 0) { /* nothing fits (smem/regs): one CTA each, capacity ignored */
        for (int s = 0; s < k->nst; s++)
            k->choice[s] = 0;
        T = cap > 0 ? cap : INFINITY;
        for (int s = 0; s < k->nst; s++)
            T = fmin(T, k->rate[s][0]);
    }
    /* storage, spill, weight residency at the chosen allocation */
    double storage = 0, spill_bytes = 0, stream_w = 0;
    for (int s = 0; s < k->nst; s++)
        storage += k->st_qbytes[s] * x->cand[k->choice[s]];
    double spill = q_spill_frac(storage, budget);
    if (spill > 0)
        for (int q = 0; q < k->nq; q++)
            spill_bytes += spill * (double)x->g->t[k->q_t[q]].bytes * (1 + k->q_ncons[q]);
    for (int s = 0; s < k->nst; s++) {
        int i = k->st_op[s];
        const wl_op *o = &x->g->op[i];
        double wb = 0;
        for (int j = 0; j < o->nin; j++)
            if (x->g->t[real_tensor(x->g, x->w, o->in[j])].kind == TK_WEIGHT)
                wb += (double)x->w[i].in_bytes[j];
        double room = hw_smem_bytes(hw) - x->smem_cta[i];
        if (wb > 0 && wb / x->cand[k->choice[s]] > room)
            stream_w += wb; /* slice does not stay in shared memory: streamed through L2 */
    }
    double l2_room = l2cap - fmin(storage, l2cap);
    double reread = stream_w > l2_room ? (stream_w - l2_room) * (N - 1) : 0;
    int64_t extra = 0;
    for (int s = 0; s < k->nst; s++)
        extra += rate_at(x, k->st_op[s], k->choice[s])->extra_dram;
    double rd = (double)k->ext_read + (double)extra + reread + spill_bytes / 2;
    double wr = (double)k->ext_write + spill_bytes / 2;
    double dram_cap = rd + wr > 0 ? dram_Bps * N / (rd + wr) : 0;
    int bott = -1;
    const char *bname = "none";
    double Tst = INFINITY;
    for (int s = 0; s < k->nst; s++)
        if (k->rate[s][k->choice[s]] < Tst) {
            Tst = k->rate[s][k->choice[s]];
            bott = s;
        }
    T = Tst;
    if (bott >= 0)
        bname = x->g->op[k->st_op[bott]].name;
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
    for (int s = 0; s < k->nst; s++) {
        double a = x->cand[k->choice[s]];
        fill += 1.0 / k->rate[s][k->choice[s]] + k->st_red_s[s] * ceil(log2(a > 1 ? a : 1));
    }
    for (int q = 0; q < k->nq; q++)
        fill += q_tile_s(hw, (double)k->q_payload[q], clk);
    double launch = cost_launch_s(hw, x->c);
    double time = launch + clk_lat + fill + (N - 1) / T;

    memset(p, 0, sizeof *p);
    p->first_op = k->first;
    p->last_op = k->last;
    p->nstages = k->nst;
    p->nqueues = k->nq;
    p->stream_rows = k->rows;
    p->tiles = k->tiles;
    p->throughput_tiles_per_s = T;
    p->dram_bound_tiles_per_s = dram_cap;
    p->l2_bound_tiles_per_s = cap_l2;
    p->bottleneck_stage = bott;
    p->bottleneck = bname;
    p->fill_s = fill;
    p->time_s = time;
    p->dram_read_bytes = (int64_t)rd;
    p->dram_write_bytes = (int64_t)wr;
    p->l2_bytes = k->l2_bytes;
    p->flops = k->flops;
    p->queue_storage_bytes = (int64_t)storage;
    p->spilled_bytes = (int64_t)spill_bytes;
    p->weight_bytes = k->weight_bytes;
    p->weight_reread_bytes = (int64_t)reread;
    if (use_ilp) {
        p->ilp_status = sol->status;
        p->ilp_fallback = sol->fallback;
        p->ilp_status_name = ilp_status_name(sol->status);
        p->ilp_objective_tiles_per_s = sol->objective;
        p->ilp_bound_tiles_per_s = sol->bound;
        p->ilp_gap = sol->gap;
    } else {
        p->ilp_status = ILP_GREEDY_FAILED;
        p->ilp_fallback = 1;
        p->ilp_status_name = "greedy (search estimate)";
    }
}

/* Copy the stages and queues of a designed pipeline into the arena. */
static int materialize(ks_ctx *x, const ks_work *k, ks_pipeline *p, arena *a)
{
    const hw_gpu *hw = x->hw;
    double clk = x->c->clock_MHz;
    p->stages = arena_calloc(a, (size_t)(k->nst ? k->nst : 1), sizeof *p->stages);
    p->queues = arena_calloc(a, (size_t)(k->nq ? k->nq : 1), sizeof *p->queues);
    if (!p->stages || !p->queues)
        return -1;
    double N = (double)k->tiles;
    double spill = p->queue_storage_bytes > 0 && p->spilled_bytes > 0
                       ? q_spill_frac((double)p->queue_storage_bytes, hw_l2_bytes(hw))
                       : 0;
    for (int s = 0; s < k->nst; s++) {
        ks_stage *st = &p->stages[s];
        int ci = k->choice[s];
        int *mem = arena_calloc(a, (size_t)k->st_nmem[s], sizeof *mem);
        if (!mem)
            return -1;
        memcpy(mem, k->st_mem[s], (size_t)k->st_nmem[s] * sizeof *mem);
        st->op = k->st_op[s];
        st->nmembers = k->st_nmem[s];
        st->members = mem;
        st->tensor = k->st_tensor[s];
        st->ctas = x->cand[ci];
        st->rate_tiles_per_s = k->rate[s][ci];
        st->body_s = 0;
        for (int m = 0; m < k->st_nmem[s]; m++) {
            const ks_rate *r = rate_at(x, k->st_mem[s][m], ci);
            st->body_s += m == 0 ? r->body_s : r->compute_s;
        }
        st->queue_s_per_tile = k->st_qs[s];
        st->bound = rate_at(x, k->st_op[s], ci)->bound;
        st->limit = (k->st_qs[s] > 0 && st->ctas / k->st_qs[s] <= N / st->body_s)
                        ? "queue"
                        : cost_bound_name(st->bound);
        st->latency_s = 1.0 / st->rate_tiles_per_s;
        st->reduction_tree = k->st_red[s];
    }
    for (int q = 0; q < k->nq; q++) {
        ks_queue *u = &p->queues[q];
        u->tensor = k->q_t[q];
        u->producer_stage = k->q_prod[q];
        u->nconsumers = k->q_ncons[q];
        u->payload_bytes = k->q_payload[q];
        u->depth = Q_DEPTH_DEFAULT;
        u->transfers_per_tile = k->q_k[q];
        u->storage_bytes = (int64_t)Q_DEPTH_DEFAULT * k->q_payload[q] * p->stages[k->q_prod[q]].ctas;
        u->spill_frac = spill;
        u->spilled = spill > 0;
        u->eff_bandwidth_GBps = q_eff_Bps(hw, (double)k->q_payload[q], clk) / 1e9;
    }
    return 0;
}

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

static double seg_cost(void *vx, int first, int last)
{
    ks_ctx *x = vx;
    ks_work k;
    ks_pipeline p;
    k.first = first;
    k.last = last;
    design(x, &k);
    evaluate(x, &k, 0, &p, NULL);
    return worse_than_bsp(x, &p) ? -1 : p.time_s;
}

/* Candidate CTA counts: 1, 2, 3, 4, 6, 8, 12, ... (powers of two and three times them) plus the
 * divisors sm/2, sm/3, sm/4 and sm itself, ascending. */
static void candidates(ks_ctx *x, int S)
{
    int v[3 * KS_MAX_CAND], n = 0;
    for (int b = 1; b <= S && n < 2 * KS_MAX_CAND - 4; b *= 2) {
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
    for (int i = 0; i < n && x->ncand < KS_MAX_CAND; i++)
        if (v[i] >= 1 && v[i] <= S && (x->ncand == 0 || x->cand[x->ncand - 1] != v[i]))
            x->cand[x->ncand++] = v[i];
    if (x->cand[x->ncand - 1] != S) /* S must stay the last candidate */
        x->cand[x->ncand - 1] = S;
}

static int ctx_init(ks_ctx *x, const hw_gpu *hw, const wl_graph *g, const op_work *w,
                    const cost_ctx *c, const kt_opts *o, arena *a)
{
    memset(x, 0, sizeof *x);
    x->hw = hw;
    x->g = g;
    x->w = w;
    x->c = c;
    x->o = o;
    candidates(x, hw->sm_count);
    size_t n = (size_t)g->nop;
    x->rate = arena_calloc(a, n * (size_t)x->ncand + 1, sizeof *x->rate);
    x->smem_cta = arena_calloc(a, n + 1, sizeof(double));
    x->regs_cta = arena_calloc(a, n + 1, sizeof(double));
    x->max_reader = arena_calloc(a, (size_t)g->ntensor + 1, sizeof(int));
    x->must_write = arena_calloc(a, (size_t)g->ntensor + 1, 1);
    x->split_k = arena_calloc(a, n + 1, sizeof(int));
    if (!x->rate || !x->smem_cta || !x->regs_cta || !x->max_reader || !x->must_write || !x->split_k)
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
            x->must_write[real_tensor(g, w, t)] = 1;
    for (int i = 0; i < g->nop; i++) {
        if (w[i].kind == OPK_FREE)
            continue;
        for (int j = 0; j < g->op[i].nin; j++) {
            int rt = real_tensor(g, w, g->op[i].in[j]);
            if (i > x->max_reader[rt])
                x->max_reader[rt] = i;
        }
    }
    return 0;
}

/* bsp pass of our own: per op input the bytes that miss L2, per op time and utilization (the
 * same residency rules as bsp_run_masked). */
static int bsp_pass(ks_ctx *x, arena *a)
{
    const wl_graph *g = x->g;
    int64_t *off = arena_calloc(a, (size_t)g->nop + 1, sizeof *off);
    double *last = arena_calloc(a, (size_t)g->ntensor + 1, sizeof *last);
    x->bsp_s = arena_calloc(a, (size_t)g->nop + 1, sizeof(double));
    x->bsp_util = arena_calloc(a, (size_t)g->nop + 1, sizeof(double));
    x->bsp_bytes = arena_calloc(a, (size_t)g->nop + 1, sizeof(int64_t));
    if (!off || !last || !x->bsp_s || !x->bsp_util || !x->bsp_bytes)
        return -1;
    int64_t tot = 0;
    for (int i = 0; i < g->nop; i++) {
        off[i] = tot;
        tot += g->op[i].nin;
    }
    int64_t *miss = arena_calloc(a, (size_t)tot + 1, sizeof *miss);
    if (!miss)
        return -1;
    l2_state l2;
    l2_init(&l2, hw_l2_bytes(x->hw), last, g->ntensor);
    for (int i = 0; i < g->nop; i++) {
        const wl_op *o = &g->op[i];
        const op_work *w = &x->w[i];
        if (w->kind == OPK_FREE) {
            l2_alias(&l2, o->out[0], o->in[0]);
            continue;
        }
        int64_t rd = 0;
        for (int j = 0; j < o->nin; j++)
            if (w->in_bytes[j] > 0) {
                miss[off[i] + j] = l2_read(&l2, o->in[j], w->in_bytes[j]);
                rd += miss[off[i] + j];
            }
        cost_result cr;
        cost_eval(x->hw, w, x->hw->sm_count, x->c, rd, w->out_bytes, &cr);
        x->bsp_s[i] = cr.time_s;
        x->bsp_util[i] = cr.sm_util;
        x->bsp_bytes[i] = cr.dram_read_bytes + cr.dram_write_bytes;
        l2_advance(&l2, (double)cr.dram_read_bytes - (double)rd);
        for (int j = 0; j < o->nout; j++)
            l2_write(&l2, o->out[j], o->nout == 1 ? w->out_bytes : g->t[o->out[j]].bytes);
    }
    x->miss_off = off;
    x->miss = miss;
    return 0;
}

/* The kt_item of a pipeline. */
static void pipe_item(ks_ctx *x, const ks_pipeline *p, kt_item *it)
{
    const hw_gpu *hw = x->hw;
    cost_result *c = &it->c;
    memset(c, 0, sizeof *c);
    c->time_s = p->time_s;
    c->launch_s = cost_launch_s(hw, x->c);
    c->latency_s = hw->dram_latency_ns * 1e-9 + p->fill_s;
    c->compute_s = p->time_s - c->launch_s - c->latency_s;
    c->dram_read_bytes = p->dram_read_bytes;
    c->dram_write_bytes = p->dram_write_bytes;
    c->l2_bytes = p->l2_bytes;
    c->dram_s = (double)(p->dram_read_bytes + p->dram_write_bytes) / cost_dram_Bps(hw, hw->sm_count);
    c->l2_s = (double)p->l2_bytes / cost_l2_Bps(hw, hw->sm_count, x->c->clock_MHz);
    c->bound = p->bottleneck_stage >= 0 ? BOUND_COMPUTE
             : !strcmp(p->bottleneck, "dram") ? BOUND_DRAM
                                               : BOUND_L2;
    int64_t ft = 0, fs = 0, sfu = 0;
    int sms = 0;
    dtype cdt = DT_BF16;
    for (int i = p->first_op; i <= p->last_op; i++) {
        ft += x->w[i].flops_tensor;
        fs += x->w[i].flops_simt;
        sfu += x->w[i].sfu_ops;
        if (x->w[i].flops_tensor > 0)
            cdt = x->w[i].cdt;
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
    double peak = ft > 0 && cost_tensor_rate(hw, cdt, x->c->clock_MHz) > 0
                      ? hw_tensor_flops_per_sm(hw, cdt, x->c->clock_MHz) * hw->sm_count
                      : hw_simt_flops_per_sm(hw, x->c->clock_MHz) * hw->sm_count;
    c->sm_util = c->time_s > 0 ? (double)c->flops / c->time_s / peak : 0;
    c->dram_util = c->time_s > 0 ? (double)(c->dram_read_bytes + c->dram_write_bytes) / c->time_s /
                                       (hw->dram_bandwidth_GBps * 1e9)
                                 : 0;
}

/* Full evaluation of a set of segments: ILP per pipeline, the rest via vf or bsp, merged. */
static int eval_set(ks_ctx *x, const sel_seg *seg, int nseg, arena *a, kt_result *r,
                    ks_plan *plan, kt_err *e)
{
    const wl_graph *g = x->g;
    unsigned char *ex = arena_calloc(a, (size_t)g->nop + 1, 1);
    ks_pipeline *pp = arena_calloc(a, (size_t)(nseg ? nseg : 1), sizeof *pp);
    if (!ex || !pp)
        return err_set(e, KT_EINTERNAL, g->file, NULL, "out of memory");
    int covered = 0, kept = 0;
    for (int s = 0; s < nseg; s++) {
        ks_work k;
        ilp_solution sol;
        k.first = seg[s].first;
        k.last = seg[s].last;
        design(x, &k);
        evaluate(x, &k, 1, &pp[kept], &sol);
        if (worse_than_bsp(x, &pp[kept]))
            continue;
        if (materialize(x, &k, &pp[kept], a))
            return err_set(e, KT_EINTERNAL, g->file, NULL, "out of memory");
        for (int i = k.first; i <= k.last; i++)
            ex[i] = 1;
        covered += k.last - k.first + 1;
        kept++;
    }
    nseg = kept;
    kt_result rest;
    memset(&rest, 0, sizeof rest);
    int fb = 0;
    if (!x->o->rest_bsp) {
        kt_err e2;
        err_clear(&e2);
        if (vf_run_masked(x->hw, g, x->w, x->c, x->o->vf_backward, ex, a, &rest, &e2))
            fb = 1;
    }
    if ((x->o->rest_bsp || fb) && bsp_run_masked(x->hw, g, x->w, x->c, ex, a, &rest, e))
        return -1;
    memset(r, 0, sizeof *r);
    r->exec = "kitsune";
    r->clock_MHz = x->c->clock_MHz;
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
        pipe_item(x, p, it);
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

int ks_eval_segment(const hw_gpu *hw, const wl_graph *g, const op_work *works, const cost_ctx *c,
                    const kt_opts *o, int first, int last, arena *a, ks_pipeline *p, kt_err *e)
{
    ks_ctx x;
    if (first < 0 || last >= g->nop || first > last || last - first + 1 > KS_MAX_OPS)
        return err_set(e, KT_EINPUT, g->file, NULL, "segment %d..%d is out of range", first, last);
    if (ctx_init(&x, hw, g, works, c, o, a))
        return err_set(e, KT_EINTERNAL, g->file, NULL, "out of memory");
    ks_work k;
    ilp_solution sol;
    k.first = first;
    k.last = last;
    design(&x, &k);
    evaluate(&x, &k, 1, p, &sol);
    if (materialize(&x, &k, p, a))
        return err_set(e, KT_EINTERNAL, g->file, NULL, "out of memory");
    return 0;
}

int ks_run(const hw_gpu *hw, const wl_graph *g, const op_work *works, const cost_ctx *c,
           const kt_opts *o, arena *a, kt_result *r, kt_err *e)
{
    ks_ctx x;
    if (ctx_init(&x, hw, g, works, c, o, a) || bsp_pass(&x, a))
        return err_set(e, KT_EINTERNAL, g->file, NULL, "out of memory");
    sel_seg *pat = arena_calloc(a, (size_t)g->nop + 1, sizeof *pat);
    sel_seg *dp = arena_calloc(a, (size_t)g->nop + 1, sizeof *dp);
    ks_plan *plan = arena_calloc(a, 4, sizeof *plan);
    kt_result *res = arena_calloc(a, 3, sizeof *res);
    if (!pat || !dp || !plan || !res)
        return err_set(e, KT_EINTERNAL, g->file, NULL, "out of memory");
    int npat = sel_patterns(g, works, x.bsp_util, x.split_k, pat, g->nop);
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
    if (o->select == SELECT_PATTERNS) {
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
    pl->select = o->select == SELECT_PATTERNS ? "patterns" : "search";
    pl->chosen = chosen;
    pl->search_time_s = search_s;
    pl->patterns_time_s = res[0].time_s;
    pl->none_time_s = res[2].time_s;
    r->extra = pl;
    return 0;
}
