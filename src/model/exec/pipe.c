/* pipe: one Kitsune spatial pipeline (Kitsune paper sections 3-5).
 *
 * Stages. One per kernel op of the segment; an elementwise op whose other inputs are weights is
 * epilogue-fused into its producer's stage.
 *
 * Streaming. The rows of the largest activation (M) stream through in tiles of tm rows
 * (PIPE_TILE_ROWS_MIN..MAX, the fastest wins), N = ceil(M / tm) tiles. Every tensor an op reads
 * is one of:
 *   queue     row-aligned, produced by another stage: one tile at a time through L2 rings;
 *   stream    row-aligned, produced outside the pipeline: read tile by tile (DRAM as in bsp);
 *   broadcast not row-aligned (a weight, a bias, a norm's gamma, attention's K and V): every tile
 *             needs all of it. Produced inside the pipeline, it is a barrier: its consumers wait
 *             until it is complete, so the pipeline streams once per barrier.
 *
 * Work split of a stage with c CTAs in g row groups of c/g column slices (pipe.h ks_split): a
 * tile goes to one group; each CTA of the group computes its column slice of the tile's output
 * from the whole input tile (multicast: the group reads the input tile c/g times) and its slice of
 * the broadcast operand. A CTA keeps its broadcast slice in shared memory when it fits beside its
 * operand stages (resident: loaded once); otherwise the group reads the broadcast operand once per
 * tile, from L2 when it fits the L2 left beside the queue budget, else from DRAM. The stage picks g
 * at each c for the least bandwidth time per tile. A stage whose output is not row-aligned (weight
 * and bias gradients, norm parameter gradients) is a reduction: each CTA owns a slice of the
 * output, accumulated in fp32 over all tiles on chip (registers + shared memory) or spilled to
 * L2 every tile when it does not fit; the finished output is written once.
 *
 * Per tile at c CTAs: compute = the members' math on c persistent SMs (cost_eval, its wave
 * quantization included) / N; L2 bytes = what the stage's CTAs read and write through L2 (each
 * tensor's tile written once by its producer, read once per consumer CTA group and column slice);
 * port = L2 bytes / (c x queue.cta_bytes_per_clk x clock), the SM ports the stage's traffic flows
 * through; queue sync = the ring handshakes (sync_round_trips_per_tile atomic round trips per
 * transfer) its CTAs pay, spread over its c CTAs. period_s(c) = max(compute, port, sync).
 * Pipeline period = max(slowest stage, L2 bytes per tile / L2 bandwidth, DRAM bytes per tile /
 * DRAM bandwidth). Queue storage: depth x tile share x producer CTAs per queue, within the
 * GPU's persisting-L2 limit (l2.persisting_max_MiB); beyond it the rings spill (their excess
 * traffic goes to DRAM, written and read back). Gathered tables: their rows miss L2 as LRU
 * shared with the streamed traffic lets them, in each L2 half (l2_gather_dram_bytes).
 * Fill: the first tile through every stage (one group's latency, g x its period) and every hop.
 * Time = launch + DRAM latency + setup (resident slices loaded) + fill + (barriers + 1) x (N - 1)
 * x period. Traffic is counted per tensor, once: each L2 byte by the stage that moves it, each
 * DRAM byte by the tensor that needs it (tests/check_pipe.c recounts it independently).
 * Mapping: ilp.c (exact period search; GLPK MILP with fill and traffic in the objective). */
#include "pipe.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "../../opt/ilp.h"
#include "../graph.h"
#include "../l2.h"
#include "queue.h"

/* Accumulators of reductions and of split-K partial sums: fp32 (as cuBLAS). */
enum { KS_PARTIAL_BYTES = 4 };
/* On-chip bytes a CTA may give its accumulators: half its register file (the other half holds
 * operands and addresses; CUTLASS sizes warp tiles so) plus the shared memory its operand stages
 * leave. */
#define PIPE_ACC_RF_SHARE 0.5
/* A column slice narrower than this many output columns leaves the tensor cores' MMA tiles
 * empty (m16n8k16: 8 columns, two per warp of a 4-warp CTA). */
enum { PIPE_MIN_SLICE_COLS = 16 };
/* Selection estimates refine the tile height only for segments within this factor of the time
 * they must beat (a tile height changes a pipeline's time by tens of percent at most). */
#define PIPE_SEARCH_SLACK 1.5
/* Memory the stage cache and the rate rows may take before they start over: a bound on memory
 * for any graph size (a 100,000-op graph meets about 2.5 GB of distinct stage evaluations);
 * the DP's window of segments (SEL_MAX_VALID_OPS ops) needs far less. */
#define PIPE_CACHE_BYTES ((size_t)64 << 20)

const char *ks_split_name(ks_split s)
{
    static const char *const N[] = {"row", "column", "row x column", "reduction", "hidden"};
    return s <= KS_SPLIT_HIDDEN ? N[s] : "?";
}

const char *ks_limit_name(ks_limit l)
{
    static const char *const N[] = {"compute", "l2 port", "queue sync", "stage body"};
    return l <= KS_LIMIT_BODY ? N[l] : "?";
}

static int64_t cdiv64(int64_t a, int64_t b)
{
    return b > 0 ? a / b + (a % b != 0) : a;
}

/* Rows of a tensor: elements over its last dimension. */
static int64_t rows_of(const wl_tensor *t)
{
    return t->ndim > 0 && t->dim[t->ndim - 1] > 0 ? t->elems / t->dim[t->ndim - 1] : 1;
}

/* Op op's math on ctas persistent CTAs, as a pipeline stage body: the pipeline compiler's own
 * kernel (Kitsune paper section 5), not ATen's or cuBLAS's - operands padded to aligned tiles,
 * copies vectorized, rows packed and costed by their FLOPs (op_work.generated). Cached. */
static void rate_eval(const pipe_env *x, int op, int ctas, pipe_rate *r);

static const pipe_rate *rate_fill(pipe_env *x, int op, int ctas);
static void stage_work(const op_work *w, op_work *sw);
static void rate_of_work(const pipe_env *x, const op_work *sw, int ctas, pipe_rate *r);

/* The cached rate (the stage evaluations' hot path, inlined), else rate_fill. */
static inline const pipe_rate *rate_at(pipe_env *x, int op, int ctas)
{
    if (ctas > x->hw->sm_count) /* several CTAs per SM (a stage_body runtime): the SMs they use */
        ctas = x->hw->sm_count;
    int k = x->wclass[op] >= x->rate_first_op ? x->wclass[op] : op;
    const pipe_rate_row *row = &x->rate[k - x->rate_first_op];
    if (row->by_ctas && !isnan(row->by_ctas[ctas - 1].compute_s))
        return &row->by_ctas[ctas - 1];
    return rate_fill(x, op, ctas);
}

/* rate_at's slow path: the row allocated on first use, the rate computed and kept. */
static const pipe_rate *rate_fill(pipe_env *x, int op, int ctas)
{
    int k = x->wclass[op] >= x->rate_first_op ? x->wclass[op] : op;
    pipe_rate_row *row = &x->rate[k - x->rate_first_op];
    int S = x->hw->sm_count;
    if (!row->by_ctas && x->rate_arena &&
        (row->by_ctas = arena_alloc(x->rate_arena, (size_t)S, sizeof *row->by_ctas)) &&
        (row->work = arena_alloc(x->rate_arena, 1, sizeof *row->work))) {
        for (int c = 0; c < S; c++)
            row->by_ctas[c].compute_s = NAN;
        stage_work(&x->w[op], row->work);
        if (x->rate_arena == &x->cache_arena)
            x->cache_bytes += (size_t)S * sizeof *row->by_ctas + sizeof *row->work;
    } else if (!row->work) {
        row->by_ctas = NULL; /* out of memory: computed each time, not kept */
    }
    if (!row->by_ctas) {
        rate_eval(x, op, ctas, &x->rate_spare);
        return &x->rate_spare;
    }
    pipe_rate *r = &row->by_ctas[ctas - 1];
    if (isnan(r->compute_s))
        rate_of_work(x, row->work, ctas, r);
    return r;
}

/* An op's work as a pipeline stage body runs it: the pipeline compiler's own kernel, operands
 * padded (no alignment-1 or unaligned-copy classes), ops other than GEMMs and attention costed
 * as generated code. */
static void stage_work(const op_work *w, op_work *sw)
{
    *sw = *w;
    sw->align1 = 0;
    sw->unaligned = 0;
    if (sw->kind != OPK_GEMM && sw->kind != OPK_ATTN)
        sw->generated = 1;
}

/* The rate of stage work sw on ctas persistent CTAs. */
static void rate_of_work(const pipe_env *x, const op_work *sw, int ctas, pipe_rate *r)
{
    cost_ctx pc = x->c;
    pc.persistent = 1; /* a stage's CTAs stay resident and loop over tiles */
    int64_t l2;
    cost_compute_l2(x->hw, sw, ctas, &pc, &r->compute_s, &l2);
    r->l2_bytes = (double)l2;
}

/* rate_at's value, computed and not kept. */
static void rate_eval(const pipe_env *x, int op, int ctas, pipe_rate *r)
{
    op_work sw;
    stage_work(&x->w[op], &sw);
    rate_of_work(x, &sw, ctas, r);
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

/* 1 when op i reduces the streamed rows away: a GEMM contracting over its A operand's rows
 * (transpose_a: weight gradients X^T dY), a column reduction (bias gradients). */
static int reduces_stream(const pipe_env *x, int i)
{
    const wl_op *o = &x->g->op[i];
    if (x->w[i].kind == OPK_GEMM)
        return o->type == OP_MATMUL && wl_attr_int(o, "transpose_a", 0);
    return x->w[i].kind == OPK_ROW && x->w[i].col_reduce;
}

/* 1 when tensor t streams with rows M: an activation (not a weight) of at least a tile of rows
 * whose row count is a multiple or a divisor of M (views regroup rows: [B*S, H*D] and
 * [B, S, H, D] stream together), not produced by an op that reduces the rows away. */
static int streams(const pipe_env *x, int t)
{
    const wl_tensor *u = &x->g->t[t];
    return u->kind != TK_WEIGHT && rows_of(u) >= PIPE_TILE_ROWS_MIN &&
           !(u->producer >= 0 && reduces_stream(x, u->producer));
}

static int row_aligned(const pipe_env *x, int t, int64_t M)
{
    int64_t r = x->rows[t];
    /* r == M first: most tensors of a segment, and a 64-bit division costs tens of cycles */
    return x->streams[t] && M >= 1 && (r == M || !(r % M && M % r));
}

/* The streamed rows of a segment: those of the first stage's first activation input, or of its
 * largest output when it reads none. */
static int64_t stream_rows(const pipe_env *x, int first, int last)
{
    const wl_graph *g = x->g;
    for (int i = first; i <= last; i++) {
        if (x->w[i].kind == OPK_FREE)
            continue;
        const wl_op *o = &g->op[i];
        if (x->w[i].kind == OPK_GATHER) /* a gather streams its index: rows of its output */
            return rows_of(&g->t[o->out[0]]);
        for (int j = 0; j < o->nin; j++) {
            const wl_tensor *t = &g->t[x->root[o->in[j]]];
            if (t->kind != TK_WEIGHT && rows_of(t) >= PIPE_TILE_ROWS_MIN)
                return rows_of(t);
        }
        int64_t best = 1;
        for (int k = 0; k < o->nout; k++)
            if (rows_of(&g->t[o->out[k]]) > best)
                best = rows_of(&g->t[o->out[k]]);
        return best;
    }
    return 1;
}

/* What a stage reads and writes, independent of the tile height and the CTA count. */
typedef struct stage_io {
    int gemm;             /* main op is a GEMM with a broadcast operand: column slices possible */
    int reduce;           /* an output that is not row-aligned: a reduction stage */
    int attn;             /* attention: its own K/V traffic per query tile (cost.c) */
    double a_bytes;       /* the GEMM's streamed operand (A), whole tensor */
    double stream_bytes;  /* other streamed inputs (queue or external), whole tensors */
    double bcast_bytes;   /* broadcast operands */
    double bcast_dram;    /* of which come from DRAM (outside the pipeline, missing L2) */
    double out_bytes;     /* row-aligned outputs (queue or external), whole tensors */
    double reduce_bytes;  /* non-aligned outputs */
    double reduce_elems;
    int in_transfers;     /* queue transfers received per tile by one CTA of a group */
    int out_transfers;    /* ring transfers sent per tile (one per consumer of each output) */
    int64_t out_cols;     /* GEMM: output columns (N) */
    double smem_stage;    /* operand staging of the op's kernel (cost_tile) */
    double gather_bytes;  /* rows gathered through a streamed index (a gather's output), whole */
    double gather_dram;   /* of the gathered tables: bytes missing L2 (read once when they fit) */
    double gather_table_bytes; /* the gathered tables' sizes */
    double flops_tensor, flops_simt; /* the members' math, whole stream */
    double span_bytes;    /* deep rings passing through (a later stage than this one reads
                             them): whole tensors; each of this stage's groups holds a slot */
} stage_io;

typedef struct design {
    stage_io *io;
    double ext_read;      /* DRAM bytes of streamed external inputs (misses) */
    double ext_write;     /* DRAM bytes of row-aligned outputs leaving the pipeline */
    double reduce_write;  /* DRAM bytes of reduction outputs leaving the pipeline */
    double queue_tile_bytes_total; /* sum over queues of tensor bytes (one tile: / N) */
    double gather_bytes, gather_dram, gather_tables; /* all stages' gathers (stage_io) */
    /* streamed external inputs read by a later stage again: (first stage, later stage, bytes);
     * the later read hits L2 only when what passes through L2 between the two reads fits */
    int nreread;
    int *rr_first, *rr_stage;
    double *rr_bytes;
    int *groups;          /* per stage: its row groups at the allocation being evaluated
                             (scratch of finish and the estimate, for the rings' slots) */
} design;

/* The storage tensors one design has met (external inputs counted once, in-pipeline tensors
 * with their queue): open addressing over twice the segment's inputs, O(1) per lookup. */
typedef struct tensor_set {
    unsigned mask;
    int *key;   /* tensor + 1, 0: empty */
    int *val;   /* its queue, -1: an external input */
    int *stage; /* an external input: the stage that first read it streamed, -1: not streamed */
} tensor_set;

static int tset_init(tensor_set *ts, int n, arena *a)
{
    unsigned cap = 16;
    while (cap < 2u * (unsigned)n)
        cap *= 2;
    ts->mask = cap - 1;
    ts->key = arena_calloc(a, cap, sizeof(int));
    ts->val = arena_alloc(a, cap, sizeof(int)); /* read only where key is set */
    ts->stage = arena_alloc(a, cap, sizeof(int));
    return ts->key && ts->val && ts->stage ? 0 : -1;
}

/* The slot of tensor t: its own, or the empty one it would take. */
static unsigned tset_slot(const tensor_set *ts, int t)
{
    unsigned k = ((unsigned)t * 2654435761u) & ts->mask; /* Knuth's multiplicative hash */
    while (ts->key[k] && ts->key[k] != t + 1)
        k = (k + 1) & ts->mask;
    return k;
}

/* External tensor rt read by a stage: -1 the first time (then recorded with the stage that reads
 * it streamed, -1 for tables and broadcast operands), else its slot (ts->stage[slot]: the stage
 * of its first record). */
static int first_sight(tensor_set *ts, int rt, int stage)
{
    unsigned k = tset_slot(ts, rt);
    if (ts->key[k])
        return (int)k;
    ts->key[k] = rt + 1;
    ts->val[k] = -1;
    ts->stage[k] = stage;
    return -1;
}

/* Stages, queues and per-stage I/O of ops first..last. 0 or -1 (memory). Memory and time are
 * linear in the segment's ops and inputs (and in the re-read pairs it records). */
/* A deep ring: read by a stage beyond the next, so it holds every tile in flight until that
 * reader pops it (Little's law: the tiles between producer and last reader, a slot per group of
 * every stage in between). The H200 runtime sizes its rings so (validation/pipeline/ring.md).
 * Pinned rings (Kitsune's hardware) are sized the same: the paper does not say how a skip
 * connection's queue is sized, and a two-slot ring there would stall its producer every tile
 * until the last reader pops, which the period does not model. */
static int ring_deep(const ks_queue *u)
{
    return u->last_stage > u->producer_stage + 1;
}

static int design_stages(pipe_env *x, ks_pipeline *p, design *d, arena *a)
{
    const wl_graph *g = x->g;
    const op_work *w = x->w;
    const hw_gpu *hw = x->hw;
    int n = p->last_op - p->first_op + 1, nin_total = 0, nreal = 0;
    for (int i = p->first_op; i <= p->last_op; i++)
        nin_total += g->op[i].nin;
    /* zeroed as they are used (a segment's design is on the selection's hot path) */
    int *stage_of = arena_alloc(a, (size_t)n, sizeof(int));
    tensor_set seen;
    d->rr_first = arena_alloc(a, (size_t)nin_total + 1, sizeof(int));
    d->rr_stage = arena_alloc(a, (size_t)nin_total + 1, sizeof(int));
    d->rr_bytes = arena_alloc(a, (size_t)nin_total + 1, sizeof(double));
    if (!d->rr_first || !d->rr_stage || !d->rr_bytes)
        return -1;
    /* stages and their I/O: at most one per op, zeroed here in one block each (padding too:
     * stage-cache keys compare stage_io bytes); a memset per stage as it was created cost more
     * in start-up than the bytes it cleared */
    p->stages = arena_calloc(a, (size_t)n, sizeof *p->stages);
    p->queues = arena_alloc(a, (size_t)nin_total + 1, sizeof *p->queues);
    d->io = arena_calloc(a, (size_t)n, sizeof *d->io);
    d->groups = arena_alloc(a, (size_t)n, sizeof *d->groups);
    if (!stage_of || tset_init(&seen, nin_total, a) || !p->stages || !p->queues || !d->io ||
        !d->groups)
        return -1;
    p->stream_rows = stream_rows(x, p->first_op, p->last_op);
    /* the stages and their member counts, then the members from one pool, in op order */
    if (x->force_stage_of) { /* an imposed design: its members; the stage's op is its first
                                tensor-core op (the GEMM it is built around), else its first */
        for (int i = p->first_op; i <= p->last_op; i++) {
            int s = x->force_stage_of[i];
            stage_of[i - p->first_op] = -1;
            if (w[i].kind == OPK_FREE)
                continue;
            if (s < 0)
                return -1; /* the caller puts every op that is not a view in a stage */
            stage_of[i - p->first_op] = s;
            p->flops = kt_count_add(p->flops, kt_count_add(w[i].flops_tensor, w[i].flops_simt));
            if (s >= n)
                return -1;
            nreal++;
            for (; p->nstages <= s; p->nstages++)
                p->stages[p->nstages].op = -1;
            ks_stage *st = &p->stages[s];
            if (st->op < 0)
                st->op = i;
            st->nmembers++;
            if (w[i].flops_tensor > 0 && w[st->op].flops_tensor <= 0)
                st->op = i;
        }
        for (int s = 0; s < p->nstages; s++) {
            ks_stage *st = &p->stages[s];
            if (!st->nmembers)
                return -1; /* a stage without ops: the caller numbers stages 0..S-1 */
            st->tensor = (w[st->op].flops_tensor > 0 &&
                          roof_tensor_rate(hw, w[st->op].cdt, x->c.clock_MHz) > 0) ||
                         w[st->op].kind == OPK_ATTN;
        }
    }
    for (int i = p->first_op; i <= p->last_op && !x->force_stage_of; i++) {
        stage_of[i - p->first_op] = -1;
        if (w[i].kind == OPK_FREE)
            continue;
        nreal++;
        p->flops = kt_count_add(p->flops, kt_count_add(w[i].flops_tensor, w[i].flops_simt));
        int s = epilogue_stage(x, p, stage_of, i);
        if (s >= 0) {
            p->stages[s].nmembers++;
            stage_of[i - p->first_op] = s;
            continue;
        }
        s = p->nstages;
        ks_stage *st = &p->stages[p->nstages];
        p->nstages++;
        st->op = i;
        st->nmembers = 1;
        st->tensor = (w[i].flops_tensor > 0 && roof_tensor_rate(hw, w[i].cdt, x->c.clock_MHz) > 0) ||
                     w[i].kind == OPK_ATTN;
        stage_of[i - p->first_op] = s;
    }
    int *pool = arena_calloc(a, (size_t)nreal + 1, sizeof(int));
    if (!pool)
        return -1;
    for (int s = 0; s < p->nstages; s++) {
        p->stages[s].members = pool;
        pool += p->stages[s].nmembers;
        p->stages[s].nmembers = 0;
    }
    for (int i = p->first_op; i <= p->last_op; i++)
        if (stage_of[i - p->first_op] >= 0) {
            ks_stage *st = &p->stages[stage_of[i - p->first_op]];
            st->members[st->nmembers++] = i;
        }
    int64_t M = p->stream_rows;
    for (int i = p->first_op; i <= p->last_op; i++) {
        if (w[i].kind == OPK_FREE)
            continue;
        const wl_op *o = &g->op[i];
        int si = stage_of[i - p->first_op];
        ks_stage *st = &p->stages[si];
        stage_io *io = &d->io[si];
        io->flops_tensor += (double)w[i].flops_tensor;
        io->flops_simt += (double)w[i].flops_simt;
        if (i == st->op) {
            io->gemm = w[i].kind == OPK_GEMM;
            io->attn = w[i].kind == OPK_ATTN;
            io->out_cols = w[i].n;
            io->smem_stage = x->smem_cta[i]; /* cost_tile's operand staging */
        }
        for (int j = 0; j < o->nin; j++) {
            int rt = x->root[o->in[j]];
            const wl_tensor *t = &g->t[rt];
            int pr = t->producer;
            int inside = pr >= p->first_op && pr <= p->last_op;
            double b = (double)w[i].in_bytes[j];
            if (b <= 0)
                continue;
            if (inside && stage_of[pr - p->first_op] == si)
                continue; /* epilogue-fused: stays in registers */
            if (w[i].kind == OPK_GATHER && j == 0) {
                /* a gather's table: each tile reads only its rows (the op's output bytes), from
                 * L2 when the table fits there; produced inside, consumers wait (a barrier) */
                io->gather_bytes += (double)w[i].out_bytes;
                if (inside) {
                    p->barriers++;
                } else if (first_sight(&seen, rt, -1) < 0) {
                    io->gather_dram += (double)op_input_miss(x, i, j);
                    io->gather_table_bytes += (double)t->bytes;
                }
                continue;
            }
            /* non-causal attention needs every key of its sequence before any query tile
             * finishes; causal attention only the keys up to the tile, streamed before it */
            int aligned = (row_aligned(x, rt, M) ||
                           (w[i].kind == OPK_GATHER && j == 1 && t->elems % M == 0)) &&
                          !(w[i].kind == OPK_ATTN && j > 0 && !wl_attr_int(o, "causal", 0));
            if (!aligned) {
                io->bcast_bytes += b;
                if (inside) {
                    p->barriers++;
                } else if (first_sight(&seen, rt, -1) < 0) {
                    io->bcast_dram += (double)op_input_miss(x, i, j);
                    if (t->kind == TK_WEIGHT)
                        p->weight_bytes = kt_count_add(p->weight_bytes, t->bytes);
                }
                continue;
            }
            if (io->gemm && i == st->op && j == 0)
                io->a_bytes += b;
            else
                io->stream_bytes += b;
            if (inside) {
                int sp = stage_of[pr - p->first_op];
                unsigned k = tset_slot(&seen, rt);
                int q = seen.key[k] ? seen.val[k] : -1;
                if (q < 0) {
                    q = p->nqueues++;
                    seen.key[k] = rt + 1;
                    seen.val[k] = q;
                    ks_queue *u = &p->queues[q];
                    memset(u, 0, sizeof *u);
                    u->tensor = rt;
                    u->producer_stage = sp;
                    u->last_stage = sp;
                    u->depth = Q_DEPTH_DEFAULT;
                    d->queue_tile_bytes_total += (double)t->bytes;
                }
                p->queues[q].nconsumers++;
                if (si > p->queues[q].last_stage)
                    p->queues[q].last_stage = si;
                io->in_transfers++;
                d->io[sp].out_transfers++;
            } else {
                int dup = first_sight(&seen, rt, si);
                if (dup < 0) {
                    d->ext_read += (double)op_input_miss(x, i, j);
                } else if (seen.stage[dup] >= 0 && seen.stage[dup] != si) {
                    int known = 0;
                    for (int r = 0; r < d->nreread; r++)
                        known |= d->rr_first[r] == seen.stage[dup] && d->rr_stage[r] == si &&
                                 d->rr_bytes[r] == (double)op_input_miss(x, i, j);
                    if (!known) {
                        d->rr_first[d->nreread] = seen.stage[dup];
                        d->rr_stage[d->nreread] = si;
                        d->rr_bytes[d->nreread++] = (double)op_input_miss(x, i, j);
                    }
                }
            }
        }
        for (int k = 0; k < o->nout; k++) {
            int t = x->root[o->out[k]];
            double b = (double)tensor_out_bytes(x, i, k);
            int leaves = x->max_reader[t] > p->last_op || x->must_write[t] || x->max_reader[t] < 0;
            int read_inside = 0; /* (only asked when the tensor does not leave) */
            for (int k2 = x->rd_start[t]; !leaves && k2 < x->rd_start[t + 1] && !read_inside; k2++) {
                int m = x->rd_op[k2];
                read_inside = m > i && m <= p->last_op && stage_of[m - p->first_op] != si;
            }
            if (!leaves && !read_inside)
                continue; /* consumed inside the stage (epilogue) */
            if (!row_aligned(x, t, M)) {
                io->reduce = 1;
                io->reduce_bytes += b;
                io->reduce_elems += (double)g->t[t].elems;
                if (leaves)
                    d->reduce_write += b;
                continue;
            }
            io->out_bytes += b;
            if (leaves)
                d->ext_write += b;
        }
    }
    /* a deep ring holds a slot per group of each stage through its last reader (ring_slots) */
    for (int q = 0; q < p->nqueues; q++)
        for (int s = p->queues[q].producer_stage + 1; ring_deep(&p->queues[q]) &&
                                                      s <= p->queues[q].last_stage; s++)
            d->io[s].span_bytes += (double)g->t[p->queues[q].tensor].bytes;
    for (int s = 0; s < p->nstages; s++) {
        d->gather_bytes += d->io[s].gather_bytes;
        d->gather_dram += d->io[s].gather_dram;
        d->gather_tables += d->io[s].gather_table_bytes;
    }
    return 0;
}

/* A stage at c CTAs and tile height tm: its split, period, traffic, fill and ring storage. */
typedef struct stage_eval {
    int groups;
    ks_split split;
    double period_s, compute_s, port_s, queue_s, body_s, fill_s;
    double body_cta_s;           /* one CTA's time for one tile (its share), stage_body */
    double b_xfers, b_load, b_gather, b_store, b_ft, b_fs; /* stage-body work per tile */
    ks_limit limit;
    double l2_tile, dram_tile;   /* per tile */
    double l2_once, dram_once;   /* before the stream: resident slices, finished reductions */
    double queue_bytes;          /* ring storage it produces into */
    double acc_per_cta;
    int resident, in_l2, spills;
} stage_eval;

/* L2 room for broadcast operands that are not resident: what the queue budget leaves. */
static double l2_bcast_room(const hw_gpu *hw)
{
    return hw_l2_bytes(hw) - hw_l2_persist_bytes(hw);
}

static double port_Bps(const hw_gpu *hw, double clock_MHz)
{
    return q_cta_Bps(hw, clock_MHz);
}

/* What stage_at needs of stage s at tile height tm that does not depend on its CTA count: worked
 * out once per stage and height (plan_tiles evaluates every count 1..#SMs). */
typedef struct stage_pre {
    const ks_stage *st;
    const stage_io *io;
    int body;                    /* a stage_body runtime */
    double meas_cta_tile_s;      /* > 0: the stage's measured seconds per tile and CTA */
    double N, out_tile, room, acc_cap, tsync;
    double l2_Bps, dram_Bps, port, bcast_room;
    int sm_count;
} stage_pre;

static void stage_prep(const pipe_env *x, const ks_pipeline *p, const design *d, int s, int64_t tm,
                       stage_pre *q)
{
    const hw_gpu *hw = x->hw;
    const stage_io *io = &d->io[s];
    double clk = x->c.clock_MHz;
    q->st = &p->stages[s];
    q->io = io;
    q->N = (double)cdiv64(p->stream_rows, tm);
    /* a stage_body runtime's kernel holds ctas_per_sm CTAs per SM: each gets its share */
    q->body = hw_has_stage_body(hw);
    q->meas_cta_tile_s = q->body && x->force_stage_of && x->force_cta_tile_s ? x->force_cta_tile_s[s]
                                                                             : 0.0;
    double kps = q->body ? (double)x->body_ctas_per_sm : 1.0;
    double staging = q->body ? hw->body_staging_bytes_per_row * (double)tm : io->smem_stage;
    q->room = hw_smem_bytes(hw) / kps - staging;
    q->acc_cap = hw->registers_per_sm_KiB * 1024.0 * PIPE_ACC_RF_SHARE + (q->room > 0 ? q->room : 0);
    q->tsync = q_sync_s(hw);
    q->out_tile = io->out_bytes / q->N;
    double inflight = roof_inflight_full(hw);
    q->l2_Bps = roof_l2_Bps(hw, hw->sm_count, inflight, clk);
    q->dram_Bps = roof_dram_Bps(hw, hw->sm_count, inflight);
    q->port = port_Bps(hw, clk);
    q->bcast_room = l2_bcast_room(hw);
    q->sm_count = hw->sm_count;
}

/* fmax without the libm call on the stage evaluation's hot path (GCC keeps fmax a call unless
 * NaNs are ruled out): the same value whenever a or b is the larger, else fmax's. */
static inline double max2(double a, double b)
{
    return a > b ? a : b > a ? b : fmax(a, b);
}

/* A split's traffic per tile: L2 bytes (the streamed operand read mc times, the other streamed
 * inputs mo times, the outputs, attention's K/V re-reads beyond them (attn_l2: its kernel's L2
 * bytes, cost.c's count), gathered rows (their DRAM side: finish), broadcast operands that are
 * not resident in the CTAs' shared memory at cols column slices) and DRAM bytes (broadcast
 * operands that fit neither there nor in L2, re-read every tile). */
static inline void split_traffic(const stage_pre *q, double mc, double mo, double attn_l2,
                                 int cols, double *l2_tile, double *dram_tile, int *resident,
                                 int *in_l2)
{
    const stage_io *io = q->io;
    double N = q->N;
    double l2 = (mc * io->a_bytes + mo * io->stream_bytes) / N + q->out_tile;
    if (io->attn)
        l2 += fmax(0.0, attn_l2 / N - l2);
    l2 += io->gather_bytes / N;
    double dram = 0;
    *resident = *in_l2 = 0;
    if (io->bcast_bytes > 0) {
        *resident = !io->attn && io->bcast_bytes / cols <= q->room;
        if (!*resident) {
            l2 += io->bcast_bytes;
            *in_l2 = io->bcast_bytes <= q->bcast_room;
            if (!*in_l2)
                dram += io->bcast_dram > 0 ? io->bcast_bytes : 0;
        }
    }
    *l2_tile = l2;
    *dram_tile = dram;
}

/* A split's period: the slowest of its compute, stage body (0 without a stage_body runtime), L2
 * port and queue hand-off times per tile. */
static inline double split_period(double comp_s, double body_s, double port_s, double queue_s)
{
    return max2(max2(comp_s, body_s), max2(port_s, queue_s));
}

/* A split's port time per tile (its L2 bytes through the ports of its CTAs' SMs) and queue
 * time: each CTA of the tile's group pays a handshake per received transfer (its column slice
 * reads the whole multicast tile) and per ring it writes. */
static inline void split_times(const stage_pre *q, double l2_tile, int c, int cols,
                               double *port_s, double *queue_s)
{
    const stage_io *io = q->io;
    double ports = (double)(c < q->sm_count ? c : q->sm_count);
    *port_s = l2_tile / (ports * q->port);
    *queue_s = q->tsync * ((double)cols * (io->in_transfers + io->out_transfers)) / c;
}

/* Stage q at c CTAs in g groups of c / g column slices each: its terms into *t (every field
 * written). */
static void stage_split(pipe_env *x, const stage_pre *q, double comp, int c, int g, stage_eval *t)
{
    const hw_gpu *hw = x->hw;
    const stage_io *io = q->io;
    double N = q->N, out_tile = q->out_tile;
    int body = q->body;
    int cols = c / g;
    t->groups = g;
    t->acc_per_cta = 0;
    t->spills = 0;
    t->resident = 0;
    t->in_l2 = 0;
    t->l2_once = t->dram_once = t->dram_tile = 0;
    double mc = io->gemm ? (double)cols : 1.0; /* multicast of the streamed operand */
    if (io->reduce) {
        /* C = X^T dY: the output split over a sqrt(c) x sqrt(c) grid, each input tile
         * read by one row (or column) of it; row reductions read each tile once */
        mc = io->gemm ? ceil(sqrt((double)c)) : 1.0;
        t->acc_per_cta = io->reduce_elems * KS_PARTIAL_BYTES / c;
        t->spills = t->acc_per_cta > q->acc_cap;
    }
    /* a reduction's 2-D output grid multicasts both operands (X^T dY) */
    double mo = io->reduce && io->gemm ? mc : 1.0;
    double attn_l2 = io->attn ? rate_at(x, q->st->op, c)->l2_bytes : 0.0;
    split_traffic(q, mc, mo, attn_l2, cols, &t->l2_tile, &t->dram_tile, &t->resident, &t->in_l2);
    double slice = io->bcast_bytes / cols;
    if (io->bcast_bytes > 0) { /* where the broadcast operands stay: their one-time traffic */
        if (t->resident) {
            t->l2_once += g * io->bcast_bytes;
            t->dram_once += io->bcast_dram;
        } else if (t->in_l2) {
            t->dram_once += io->bcast_dram;
        }
    }
    if (io->reduce) {
        double acc = io->reduce_elems * KS_PARTIAL_BYTES;
        if (t->spills) { /* partial sums read and written back every tile */
            t->l2_tile += 2 * acc;
            if (acc > q->bcast_room)
                t->dram_tile += 2 * acc;
        }
        t->l2_once += io->reduce_bytes;
    }
    t->compute_s = comp;
    split_times(q, t->l2_tile, c, cols, &t->port_s, &t->queue_s);
    double xfers = (double)cols * (io->in_transfers + io->out_transfers);
    /* the stage body's work per tile: loads (the streamed operand once per column
     * slice, other streamed inputs, broadcast re-reads), gathered rows, stores (spilled
     * partial sums read and written), math */
    t->b_xfers = xfers;
    t->b_load = (mc * io->a_bytes + mo * io->stream_bytes) / N +
                (io->bcast_bytes > 0 && !t->resident ? io->bcast_bytes : 0.0);
    t->b_gather = io->gather_bytes / N;
    t->b_store = out_tile + (t->spills ? 2 * io->reduce_elems * KS_PARTIAL_BYTES : 0.0);
    t->b_ft = io->flops_tensor / N;
    /* a tensor-core stage's SIMT math is its GEMM's epilogue (bias, activation) on the
     * accumulators in registers: not charged beside the MMA */
    t->b_fs = io->flops_tensor > 0 ? 0.0 : io->flops_simt / N;
    t->body_s = t->body_cta_s = 0;
    if (body) {
        /* one tile at a time per CTA: its hand-offs, then its share of the loads, gathers,
         * stores and math at the runtime's per-SM rates, slower by the CTAs sharing
         * its SM; the c CTAs of the stage run side by side */
        double ld = io->flops_tensor > 0 ? hw->body_operand_GBps : hw->body_load_GBps;
        double rate = t->b_load / (ld * 1e9) +
                      t->b_gather / (hw->body_gather_GBps * 1e9) +
                      t->b_store / (hw->body_store_GBps * 1e9) +
                      t->b_ft / (hw->body_tensor_GFLOPps * 1e9) +
                      t->b_fs / (hw->body_simt_GFLOPps * 1e9);
        double slow = 1.0 + (x->body_sharing - 1.0) * hw->body_coresident_slowdown_frac;
        double hand = (hw->body_handoff_ns + hw->body_poll_ns) * 1e-9;
        /* a measured stage time replaces the hand-offs and the work (busy time, what the rates
         * are fitted on); the spin on the queue counters (poll) is outside it */
        t->body_s = q->meas_cta_tile_s > 0
                  ? (q->meas_cta_tile_s + hw->body_poll_ns * 1e-9 * xfers) / c
                  : (hand * xfers + rate * slow) / c;
        t->body_cta_s = t->body_s * (double)g;
    }
    t->period_s = split_period(comp, t->body_s, t->port_s, t->queue_s);
    t->limit = t->period_s == t->body_s && body ? KS_LIMIT_BODY
             : t->period_s == comp              ? KS_LIMIT_COMPUTE
             : t->period_s == t->port_s         ? KS_LIMIT_PORT
                                                : KS_LIMIT_QUEUE;
    /* a tile is worked on by one group: its latency is g periods; resident slices load
     * through the CTAs' ports before the first tile */
    t->fill_s = t->period_s * (io->reduce ? 1.0 : (double)g) +
                (t->resident ? slice / q->port : 0.0) +
                t->l2_once / q->l2_Bps;
    /* rings: each producing CTA double-buffers its share of a tile */
    t->queue_bytes = (double)Q_DEPTH_DEFAULT *
                     (out_tile * (io->reduce ? 1.0 : (double)g) + io->span_bytes / N * (double)g);
    t->split = io->reduce ? KS_SPLIT_REDUCE
             : g == c     ? KS_SPLIT_ROW
             : g == 1     ? KS_SPLIT_COL
                          : KS_SPLIT_2D;
}

/* What a split costs the choice among a stage's splits: its L2 and DRAM time per tile beside its
 * period. */
static inline double split_cost(const stage_pre *q, double l2_tile, double dram_tile,
                                double period_s)
{
    return l2_tile / q->l2_Bps + dram_tile / q->dram_Bps + period_s;
}

/* split_cost of stage_split(x, q, comp, c, g) for a GEMM stage that is neither a reduction nor a
 * stage_body runtime's (the only stages with several splits): the same split_traffic and
 * split_times, without the fields the choice does not read. attn_l2: rate_at(...)->l2_bytes for
 * an attention stage. */
static inline double gemm_split_cost(const stage_pre *q, double comp, double attn_l2, int c, int g)
{
    int cols = c / g, resident, in_l2;
    double l2_tile, dram_tile, port_s, queue_s;
    split_traffic(q, (double)cols, 1.0, attn_l2, cols, &l2_tile, &dram_tile, &resident, &in_l2);
    split_times(q, l2_tile, c, cols, &port_s, &queue_s);
    return split_cost(q, l2_tile, dram_tile, split_period(comp, 0.0, port_s, queue_s));
}

/* A stage at c CTAs, with its count-independent terms q: the cheapest of its splits. */
static void stage_at_pre(pipe_env *x, const stage_pre *q, int c, stage_eval *e)
{
    const ks_stage *st = q->st;
    const stage_io *io = q->io;
    double comp = 0;
    for (int m = 0; m < st->nmembers; m++)
        comp += rate_at(x, st->members[m], c)->compute_s;
    comp /= q->N;
    /* candidate group counts: the divisors of c (each group takes c / g column slices); stages
     * other than GEMMs take whole tiles (g = c); so do reductions (one CTA per output slice)
     * and a stage_body runtime's CTAs (row split) */
    if (!(io->gemm && !io->reduce && !q->body)) {
        stage_split(x, q, comp, c, c, e);
        if (!(split_cost(q, e->l2_tile, e->dram_tile, e->period_s) < INFINITY))
            memset(e, 0, sizeof *e); /* no finite cost: as when no split qualifies */
        return;
    }
    double attn_l2 = io->attn ? rate_at(x, st->op, c)->l2_bytes : 0.0;
    double best_cost = INFINITY;
    int best_g = 0;
    for (int k = 1; k * k <= c; k++) {
        if (c % k)
            continue;
        /* k, then c / k: the order of the divisor list this replaced (ties keep the first) */
        for (int twice = 0; twice < (k * k != c ? 2 : 1); twice++) {
            int g = twice ? c / k : k;
            int cols = c / g;
            if (cols > 1 && io->out_cols / cols < PIPE_MIN_SLICE_COLS)
                continue; /* slices too narrow for the MMA tiles */
            double cost = gemm_split_cost(q, comp, attn_l2, c, g);
            if (cost < best_cost * (1 - 1e-12)) {
                best_cost = cost;
                best_g = g;
            }
        }
    }
    if (best_g)
        stage_split(x, q, comp, c, best_g, e);
    else
        memset(e, 0, sizeof *e);
}

static void stage_at(pipe_env *x, const ks_pipeline *p, const design *d, int s, int c, int64_t tm,
                     stage_eval *e)
{
    stage_pre q;
    stage_prep(x, p, d, s, tm, &q);
    stage_at_pre(x, &q, c, e);
}

/* A stage's per-candidate terms for one (I/O, members, rows, tile height, clock, candidates):
 * everything stage_at reads, so a hit returns exactly what stage_at would. */
typedef struct pipe_cache_entry {
    struct pipe_cache_entry *next;
    uint64_t io_hash; /* hash_bytes of io: most entries of a chain differ from a probe there */
    stage_io io;
    int nmembers;
    int *members;
    int64_t M, tm;
    double clock_MHz;
    const int *cand;
    int ncand;
    double *vals; /* period, l2, dram, fill, queue bytes (its running maximum): 5 x ncand */
    struct pipe_at *at; /* the estimate's evaluations at other CTA counts (stage_at_cached) */
} pipe_cache_entry;

/* One stage_at result the selection's estimate needs, at c CTAs. */
typedef struct pipe_at {
    struct pipe_at *next;
    int c, groups;
    double period_s, l2_tile, dram_tile, dram_once, fill_s, queue_bytes;
} pipe_at;

/* n bytes at p hashed eight at a time (FNV-1a's offset basis and prime, over 64-bit words, the
 * tail by bytes): the keys of the stage cache's
 * pre-check (stage_io, whose padding design_stages zeroes) and of the work classes (op_work:
 * 832 bytes, which a byte at a time took 2% of a prediction to hash). */
static uint64_t hash_bytes(const void *p, size_t n)
{
    const unsigned char *b = p;
    uint64_t h = 14695981039346656037u, v;
    size_t k = 0;
    for (; k + sizeof v <= n; k += sizeof v) {
        memcpy(&v, b + k, sizeof v);
        h = (h ^ v) * 1099511628211u;
    }
    for (; k < n; k++)
        h = (h ^ b[k]) * 1099511628211u;
    return h;
}

static pipe_cache_entry *cache_find(const pipe_env *x, const ks_stage *st, const stage_io *io,
                                    uint64_t hash, int64_t M, int64_t tm, const int *cand,
                                    int ncand)
{
    if (!x->cache)
        return NULL;
    for (pipe_cache_entry *c = x->cache[x->wclass[st->op]]; c; c = c->next)
        if (c->io_hash == hash && c->M == M && c->tm == tm && c->cand == cand &&
            c->ncand == ncand && c->clock_MHz == x->c.clock_MHz && c->nmembers == st->nmembers &&
            !memcmp(&c->io, io, sizeof *io)) {
            int m = 0;
            while (m < st->nmembers && c->members[m] == x->wclass[st->members[m]])
                m++;
            if (m == st->nmembers)
                return c;
        }
    return NULL;
}

/* One design at tile height tm: per-candidate stage terms into the stages, and the mapper's
 * problem. cand/ncand: the CTA counts to consider. */
typedef struct tile_plan {
    int64_t tm;
    double N;
    ilp_stage *ist;
    pipe_cache_entry **ent; /* per stage: its cache entry (NULL: none) */
    ilp_problem ip;
} tile_plan;

static int plan_tiles(pipe_env *x, ks_pipeline *p, const design *d, int64_t tm, const int *cand0,
                      int ncand0, const int *force, arena *a, tile_plan *tp)
{
    const hw_gpu *hw = x->hw;
    double clk = x->c.clock_MHz;
    int ns = p->nstages;
    tp->tm = tm;
    tp->N = (double)cdiv64(p->stream_rows, tm);
    /* every field below is written (no zeroing on the selection's hot path) */
    tp->ist = arena_alloc(a, (size_t)ns + 1, sizeof *tp->ist);
    tp->ent = arena_alloc(a, (size_t)ns + 1, sizeof *tp->ent);
    if (!tp->ist || !tp->ent)
        return -1;
    for (int s = 0; s < ns; s++) {
        ks_stage *st = &p->stages[s];
        /* an imposed allocation: each stage's one CTA count */
        const int *cand = force ? &force[s] : cand0;
        int ncand = force ? 1 : ncand0;
        ilp_stage *is = &tp->ist[s];
        is->tensor = st->tensor;
        is->ncand = ncand;
        is->cand_ctas = cand;
        /* a hit's terms are read in place (the cache is trimmed only between builds, and the
         * mapper's arrays are not read after the build) */
        int uncached = force || x->force_cta_tile_s; /* measured stage times: never kept */
        uint64_t hash = uncached || !x->cache ? 0 : hash_bytes(&d->io[s], sizeof d->io[s]);
        pipe_cache_entry *c =
            uncached ? NULL : cache_find(x, st, &d->io[s], hash, p->stream_rows, tm, cand, ncand);
        double *buf;
        if (c) {
            buf = c->vals;
        } else {
            if (x->cache && !uncached) { /* kept for the next segments with this stage */
                arena *ca = &x->cache_arena;
                c = arena_calloc(ca, 1, sizeof *c);
                int *mem = arena_alloc(ca, (size_t)st->nmembers, sizeof(int));
                double *v = arena_alloc(ca, (size_t)ncand * 5, sizeof(double));
                x->cache_bytes += sizeof *c + (size_t)st->nmembers * sizeof(int) +
                                  (size_t)ncand * 5 * sizeof(double);
                if (c && mem && v) {
                    c->io_hash = hash;
                    memcpy(&c->io, &d->io[s], sizeof c->io);
                    c->nmembers = st->nmembers;
                    for (int m = 0; m < st->nmembers; m++)
                        mem[m] = x->wclass[st->members[m]];
                    c->members = mem;
                    c->M = p->stream_rows;
                    c->tm = tm;
                    c->clock_MHz = x->c.clock_MHz;
                    c->cand = cand;
                    c->ncand = ncand;
                    c->vals = v;
                } else {
                    c = NULL;
                }
            }
            buf = c ? c->vals : arena_alloc(a, (size_t)ncand * 5, sizeof(double));
            if (!buf)
                return -1;
            double *period = buf, *l2 = buf + ncand, *dram = buf + 2 * ncand,
                   *fill = buf + 3 * ncand, *qb = buf + 4 * ncand;
            stage_pre q;
            stage_prep(x, p, d, s, tm, &q);
            for (int k = 0; k < ncand; k++) {
                stage_eval e;
                stage_at_pre(x, &q, cand[k], &e);
                period[k] = e.period_s;
                l2[k] = e.l2_tile;
                dram[k] = e.dram_tile;
                fill[k] = e.fill_s;
                qb[k] = e.queue_bytes;
            }
            /* the mapper takes every resource to grow with the CTA count; a stage's ring
             * storage follows its group count, which need not: take the running maximum
             * (conservative) */
            for (int k = 1; k < ncand; k++)
                if (qb[k] < qb[k - 1])
                    qb[k] = qb[k - 1];
            if (c) {
                c->next = x->cache[x->wclass[st->op]];
                x->cache[x->wclass[st->op]] = c;
            }
        }
        tp->ent[s] = c;
        is->period_s = buf;
        is->l2_bytes = buf + ncand;
        is->dram_bytes = buf + 2 * ncand;
        is->fill_s = buf + 3 * ncand;
        is->queue_bytes = buf + 4 * ncand;
        is->smem_per_cta_bytes = x->smem_cta[st->op];
        is->regs_per_cta_bytes = x->regs_cta[st->op];
    }
    double inflight = roof_inflight_full(hw);
    /* a stage_body runtime's one kernel: one pool of ctas_per_sm CTAs on every SM, each with its
     * share of the SM's shared memory and registers */
    int kps = hw_has_stage_body(hw) ? x->body_ctas_per_sm : 1;
    ilp_problem ip = {ns,
                      tp->ist,
                      hw->sm_count * kps,
                      x->scheduler_shared,
                      hw_smem_bytes(hw) / kps,
                      hw->registers_per_sm_KiB * 1024.0 / kps,
                      /* each barrier streams the tiles once more: (barriers + 1)(N - 1) periods */
                      1.0 + (double)(p->barriers + 1) * (tp->N - 1.0),
                      roof_l2_Bps(hw, hw->sm_count, inflight, clk),
                      roof_dram_Bps(hw, hw->sm_count, inflight),
                      0.0,
                      (d->ext_read + d->ext_write) / tp->N,
                      hw_l2_persist_bytes(hw),
                      x->ilp_time_limit_s,
                      0};
    /* rings that cannot fit even at one CTA per stage spill: no storage constraint then */
    double qmin = 0;
    for (int s = 0; s < ns; s++)
        qmin += tp->ist[s].queue_bytes[0];
    if (qmin > ip.queue_budget_bytes)
        ip.queue_budget_bytes = -1;
    tp->ip = ip;
    return 0;
}

/* DRAM bytes of the gathered tables' rows over the whole run, and (resident) the table bytes
 * L2 keeps meanwhile. Each L2 half holds the rings (their producers and consumers sit on both
 * sides: `rings` bytes of them stay) and what its own SMs read; the table competes there with
 * `stream_bytes` of streamed DRAM traffic (l2_gather_dram_bytes). */
static double gather_dram_bytes(const hw_gpu *hw, const design *d, double rings,
                                double stream_bytes, double *resident)
{
    *resident = 0;
    if (d->gather_bytes <= 0)
        return 0;
    int parts = hw->l2_partitions > 0 ? hw->l2_partitions : 1;
    double cap = hw_l2_bytes(hw) / parts - rings;
    *resident = d->gather_tables * l2_gather_resident_frac(cap, parts, stream_bytes,
                                                           d->gather_tables, d->gather_bytes);
    return l2_gather_dram_bytes(cap, parts, stream_bytes, d->gather_tables, d->gather_dram,
                                d->gather_bytes);
}

/* Tiles queue q's ring holds: depth x the producer's groups (one slot each; a reduction's
 * output one), and for a deep ring (ring_deep) a slot per group of every stage up to its last
 * reader. */
static double ring_slots(const ks_pipeline *p, const design *d, int q)
{
    const ks_queue *u = &p->queues[q];
    double slots = d->io[u->producer_stage].reduce ? 1.0 : (double)d->groups[u->producer_stage];
    for (int s = u->producer_stage + 1; ring_deep(u) && s <= u->last_stage; s++)
        slots += d->groups[s];
    return (double)u->depth * slots;
}

/* The fractions of a ring's bytes L2 writes back (returned) and reads back (*back) when, while
 * a slot waits for its rewrite, L2 takes in `l2_bytes` of lines that SMs of both halves use
 * (rings, table rows) and `stream_bytes` of streamed DRAM traffic. A streamed line is used by
 * one half's SMs, so it weighs 1/partitions of a ring line (hw/calibrate/l2_lru.cu ring measures
 * the curve and this weight); the L2's ring curve (l2.ring_reuse) gives the fractions at that
 * footprint. */
static double ring_evicted(const hw_gpu *hw, double l2_bytes, double stream_bytes, double *back)
{
    double parts = hw->l2_partitions > 0 ? hw->l2_partitions : 1;
    return hw_ring_evicted_frac(hw, l2_bytes + stream_bytes / parts, back);
}

/* Rings that are ordinary L2 lines (queue.rings_pinned 0, a software runtime): the DRAM bytes
 * they are read back (*rd) and written back (*wr) over the run, and (final) each queue's
 * fractions; returns the ring bytes L2 keeps. A slot of queue q is rewritten after slots_q
 * tiles have passed through it; meanwhile L2 takes in q's ring, every other ring (at most its
 * storage), the gathered-table bytes L2 keeps (held) and slots_q tiles of streamed DRAM traffic
 * (stream_tile): ring_evicted at that footprint. */
static double ring_lru_dram(const pipe_env *x, ks_pipeline *p, const design *d, double N,
                            double stream_tile, double held, double *rd, double *wr, int final)
{
    double kept = 0;
    *rd = *wr = 0;
    for (int q = 0; q < p->nqueues; q++) {
        double bytes = (double)x->g->t[p->queues[q].tensor].bytes;
        double slots = ring_slots(p, d, q), lines = held;
        for (int r = 0; r < p->nqueues; r++) {
            double tile_r = (double)x->g->t[p->queues[r].tensor].bytes / N;
            lines += r == q ? slots * tile_r : fmin(ring_slots(p, d, r), slots) * tile_r;
        }
        double back, out = ring_evicted(x->hw, lines, slots * stream_tile, &back);
        *wr += out * bytes;
        *rd += back * bytes;
        kept += (1.0 - out) * slots * (bytes / N);
        if (final) {
            p->queues[q].written_back_frac = out;
            p->queues[q].read_back_frac = back;
        }
    }
    return kept;
}

/* The DRAM bytes per tile that L2's sharing adds to dram_tile (the pipeline's other DRAM
 * traffic): ring spills or evictions (*ring_rd, *ring_wr over the run) and the gathered tables'
 * misses (*gather_tile per tile; *held: the table bytes L2 keeps). Pinned rings (queue.
 * rings_pinned) beyond the persisting-L2 budget spill, their excess written to and read back
 * from DRAM, and the tables share what is left of each L2 half. Rings not pinned are evicted as
 * the L2's ring curve says at their footprint (ring_lru_dram, with the table bytes L2 keeps
 * beside the rings at their full storage), and the tables then share each half with the ring
 * bytes that stay. */
static double l2_shared_dram(const pipe_env *x, ks_pipeline *p, const design *d, double N,
                             double storage, double dram_tile, int final, double *ring_rd,
                             double *ring_wr, double *gather_tile, double *held)
{
    const hw_gpu *hw = x->hw;
    double budget = hw_l2_persist_bytes(hw), rings = fmin(storage, budget), add = 0;
    if (hw->queue_rings_pinned) {
        double spill = q_spill_frac(storage, budget);
        *ring_rd = *ring_wr = spill * d->queue_tile_bytes_total;
        add = (*ring_rd + *ring_wr) / N;
        *gather_tile = gather_dram_bytes(hw, d, rings, (dram_tile + add) * N, held) / N;
        return add + *gather_tile;
    }
    double first = gather_dram_bytes(hw, d, rings, dram_tile * N, held) / N;
    rings = ring_lru_dram(x, p, d, N, dram_tile + first, *held, ring_rd, ring_wr, final);
    add = (*ring_rd + *ring_wr) / N;
    *gather_tile = gather_dram_bytes(hw, d, rings, (dram_tile + add) * N, held) / N;
    return add + *gather_tile;
}

/* The time of an allocation at a tile plan with everything the mapper leaves out: setup, queue
 * hops, barriers, ring spills. Fills p's totals and per-stage fields when `final`. */
static double finish(pipe_env *x, ks_pipeline *p, const design *d, const tile_plan *tp,
                     const int *choice, int final)
{
    const hw_gpu *hw = x->hw;
    double clk = x->c.clock_MHz;
    double N = tp->N, inflight = roof_inflight_full(hw);
    double l2_Bps = roof_l2_Bps(hw, hw->sm_count, inflight, clk);
    double dram_Bps = roof_dram_Bps(hw, hw->sm_count, inflight);
    double fill = 0, l2_once = 0, dram_once = 0, storage = 0, period = 0;
    double l2_tile = 0, dram_tile = (d->ext_read + d->ext_write) / N;
    int bott = -1;
    for (int s = 0; s < p->nstages; s++) {
        stage_eval e;
        int c = tp->ist[s].cand_ctas[choice[s]];
        stage_at(x, p, d, s, c, tp->tm, &e);
        fill += e.fill_s;
        l2_once += e.l2_once;
        dram_once += e.dram_once;
        l2_tile += e.l2_tile;
        dram_tile += e.dram_tile;
        storage += e.queue_bytes;
        d->groups[s] = e.groups;
        if (e.period_s > period) {
            period = e.period_s;
            bott = s;
        }
        if (final) {
            ks_stage *st = &p->stages[s];
            st->choice = choice[s];
            st->ctas = c;
            st->groups = e.groups;
            st->split = e.split;
            st->period_s = e.period_s;
            st->compute_s = e.compute_s;
            st->port_s = e.port_s;
            st->queue_s = e.queue_s;
            st->body_s = e.body_s;
            st->body_cta_tile_s = e.body_cta_s;
            st->body_handoffs = e.b_xfers;
            st->body_load_bytes = e.b_load;
            st->body_gather_bytes = e.b_gather;
            st->body_store_bytes = e.b_store;
            st->body_tensor_flops = e.b_ft;
            st->body_simt_flops = e.b_fs;
            st->fill_s = e.fill_s;
            st->limit = e.limit;
            st->l2_bytes_per_tile = e.l2_tile;
            st->dram_bytes_per_tile = e.dram_tile;
            st->bcast_bytes = d->io[s].bcast_bytes;
            st->bcast_resident = e.resident;
            st->bcast_in_l2 = e.in_l2;
            st->acc_bytes_per_cta = e.acc_per_cta;
            st->acc_spills = e.spills;
        }
    }
    /* rings and gathered tables in L2 (l2_shared_dram) */
    double budget = hw_l2_persist_bytes(hw);
    double spill = hw->queue_rings_pinned ? q_spill_frac(storage, budget) : 0.0;
    double ring_rd, ring_wr, gather_tile, gather_held;
    dram_tile += l2_shared_dram(x, p, d, N, storage, dram_tile, final, &ring_rd, &ring_wr,
                                &gather_tile, &gather_held);
    /* a streamed input read again by a later stage: between the two reads of a tile, the tiles
     * in flight in between bring their DRAM bytes into L2, beside the rings, gathered tables and
     * broadcast operands L2 keeps; when that exceeds the L2, LRU has evicted the tile and the
     * later stage reads it from DRAM. Tiles in flight (Little's law at the pipeline's period P):
     * a stage holds g x its period / P tiles; the rings of stages upstream of the slowest stage
     * are full (depth x producer groups), those downstream empty */
    double reread_tile = 0;
    int slowest = bott;
    for (int r = 0; r < d->nreread && period > 0; r++) {
        double tiles = 0, held = storage + gather_held;
        for (int s = d->rr_first[r]; s < d->rr_stage[r]; s++) {
            stage_eval e;
            stage_at(x, p, d, s, tp->ist[s].cand_ctas[choice[s]], tp->tm, &e);
            tiles += e.groups * e.period_s / period;
            if (!e.resident && e.in_l2)
                held += d->io[s].bcast_bytes;
            for (int q = 0; q < p->nqueues && s < slowest; q++)
                if (p->queues[q].producer_stage == s)
                    tiles += (double)p->queues[q].depth * e.groups;
        }
        if (tiles * dram_tile + held > hw_l2_bytes(hw))
            reread_tile += d->rr_bytes[r] / N;
    }
    dram_tile += reread_tile;
    const char *bname = bott >= 0 ? x->g->op[p->stages[bott].op].name : "none";
    if (l2_tile / l2_Bps > period) {
        period = l2_tile / l2_Bps;
        bott = -1;
        bname = "l2";
    }
    if (dram_tile / dram_Bps > period) {
        period = dram_tile / dram_Bps;
        bott = -1;
        bname = "dram";
    }
    double hops = 0;
    for (int q = 0; q < p->nqueues; q++) {
        double tile = (double)x->g->t[p->queues[q].tensor].bytes / N;
        hops += q_tile_s(hw, fmin(tile, Q_PAYLOAD_MAX_BYTES), clk);
    }
    /* one-time loads: their L2 side is in the stages' fill (the mapper weighs it); the DRAM
     * side here */
    double setup = dram_once / dram_Bps;
    double launch = cost_launch_s(hw, &x->c);
    double lat = hw->dram_latency_ns * 1e-9;
    double time = launch + lat + setup + fill + hops + (double)(p->barriers + 1) * (N - 1) * period;
    if (final) {
        p->tile_rows = tp->tm;
        p->tiles = (int64_t)N;
        p->period_s = period;
        p->throughput_tiles_per_s = period > 0 ? 1.0 / period : 0;
        p->bottleneck_stage = bott;
        p->bottleneck = bname;
        p->fill_s = fill + hops;
        p->setup_s = setup;
        p->time_s = time;
        p->l2_bytes_per_tile = l2_tile;
        p->dram_bytes_per_tile = dram_tile;
        p->l2_bytes = kt_count_of(l2_tile * N + l2_once);
        double weights_rd = 0;
        for (int s = 0; s < p->nstages; s++)
            weights_rd += p->stages[s].dram_bytes_per_tile * N;
        p->weight_reread_bytes = kt_count_of(fmax(0.0, weights_rd - (double)p->weight_bytes));
        p->gather_dram_bytes = kt_count_of(gather_tile * N);
        p->dram_read_bytes = kt_count_of(d->ext_read + dram_once + weights_rd + gather_tile * N +
                                          reread_tile * N + ring_rd);
        p->dram_write_bytes = kt_count_of(d->ext_write + d->reduce_write + ring_wr);
        p->queue_storage_bytes = kt_count_of(storage);
        p->queue_budget_bytes = kt_count_of(budget);
        p->spilled_bytes = kt_count_of(ring_rd + ring_wr);
        p->ext_read_bytes = kt_count_of(d->ext_read);
        p->ext_write_bytes = kt_count_of(d->ext_write + d->reduce_write);
        p->queue_traffic_bytes = kt_count_of(d->queue_tile_bytes_total);
        for (int q = 0; q < p->nqueues; q++) {
            ks_queue *u = &p->queues[q];
            const ks_stage *ps = &p->stages[u->producer_stage];
            int cols = (ps->ctas + ps->groups - 1) / ps->groups;
            u->tile_bytes = kt_count_of((double)x->g->t[u->tensor].bytes / N);
            double share = ps->split == KS_SPLIT_REDUCE ? (double)u->tile_bytes
                                                        : (double)u->tile_bytes / cols;
            u->payload_bytes = (int64_t)fmax(1.0, fmin(share, Q_PAYLOAD_MAX_BYTES));
            u->storage_bytes = kt_count_of((double)u->tile_bytes * ring_slots(p, d, q));
            u->spill_frac = spill;
            if (hw->queue_rings_pinned)
                u->written_back_frac = u->read_back_frac = spill;
            u->eff_bandwidth_GBps = q_eff_Bps(hw, (double)u->payload_bytes, clk) / 1e9;
        }
    }
    return time;
}

/* No allocation fits, not even one CTA per stage (the exact search and the MILP both failed):
 * say why (ilp_explain on that allocation), so the pipeline is rejected, never run with its
 * capacities ignored. 0, or -1 when memory runs out. */
static int mark_infeasible(ks_pipeline *p, const ilp_problem *ip, const int *choice, arena *a)
{
    char why[160];
    ilp_explain(ip, choice, why, sizeof why);
    p->infeasible = arena_strdup(a, why[0] ? why : "no allocation fits");
    return p->infeasible ? 0 : -1;
}

/* The stage cache and the rate rows start over when they hold more than PIPE_CACHE_BYTES (at
 * the entry of pipe_build and pipe_estimate, where nothing points into them). */
static void cache_trim(pipe_env *x)
{
    if (!x->cache || x->cache_bytes <= PIPE_CACHE_BYTES)
        return;
    size_t n = (size_t)x->g->nop + 1;
    arena_free(&x->cache_arena);
    memset(x->cache, 0, n * sizeof *x->cache);
    x->exact_memo = NULL;
    if (x->rate_arena == &x->cache_arena)
        memset(x->rate, 0, n * sizeof *x->rate);
    x->cache_bytes = 0;
}

/* ilp_exact's answer for a plan whose every stage is a stage-cache entry. An entry's terms never
 * change until cache_trim (which drops these too), so the same entries in the same order, the
 * same per-stage pool, shared memory and registers, and the same problem scalars are the same
 * problem: the answer is kept (chains and repeated layers meet the same pipelines many times). */
typedef struct exact_memo {
    struct exact_memo *next;
    int solve;                 /* 0: ilp_exact's answer, 1: ilp_solve's (sol, rc) */
    ilp_problem ip;            /* st not kept */
    const ilp_stage *st;       /* per stage: tensor, smem and registers (terms: the entries') */
    pipe_cache_entry **ent;
    int *choice;
    double time_s;
    ilp_solution sol;          /* ilp_solve: its solution (choice: the array above) */
    int rc;
} exact_memo;

enum { EXACT_MEMO_BUCKETS = 4096 };

static int same_problem(const ilp_problem *a, const ilp_problem *b)
{
    return a->nstages == b->nstages && a->sm_count == b->sm_count &&
           a->shared_pool == b->shared_pool && a->smem_per_sm_bytes == b->smem_per_sm_bytes &&
           a->regs_per_sm_bytes == b->regs_per_sm_bytes && a->tiles == b->tiles &&
           a->l2_Bps == b->l2_Bps && a->dram_Bps == b->dram_Bps &&
           a->l2_fixed_bytes == b->l2_fixed_bytes && a->dram_fixed_bytes == b->dram_fixed_bytes &&
           a->queue_budget_bytes == b->queue_budget_bytes && a->time_limit_s == b->time_limit_s;
}

/* The memo's bucket for a plan (NULL: not memoizable - a stage outside the cache - or no
 * memory), and its kept answer of that kind when it has one (*hit). */
static exact_memo **memo_find(pipe_env *x, pipe_cache_entry *const *ent, const ilp_problem *ip,
                              int solve, const exact_memo **hit)
{
    int ns = ip->nstages;
    *hit = NULL;
    uint64_t h = 1469598103934665603u;
    for (int s = 0; s < ns; s++) {
        if (!ent[s] || !x->cache)
            return NULL;
        h = (h ^ (uint64_t)(uintptr_t)ent[s]) * 1099511628211u;
    }
    h ^= (uint64_t)ns * 0x9e3779b97f4a7c15u;
    if (!x->exact_memo) {
        x->exact_memo = arena_calloc(&x->cache_arena, EXACT_MEMO_BUCKETS, sizeof *x->exact_memo);
        x->cache_bytes += EXACT_MEMO_BUCKETS * sizeof *x->exact_memo;
        if (!x->exact_memo)
            return NULL;
    }
    exact_memo **bucket = &x->exact_memo[(h >> 20) % EXACT_MEMO_BUCKETS];
    for (const exact_memo *m = *bucket; m && !*hit; m = m->next) {
        if (m->solve != solve || !same_problem(&m->ip, ip))
            continue;
        int s = 0;
        while (s < ns && m->ent[s] == ent[s] && m->st[s].tensor == ip->st[s].tensor &&
               m->st[s].smem_per_cta_bytes == ip->st[s].smem_per_cta_bytes &&
               m->st[s].regs_per_cta_bytes == ip->st[s].regs_per_cta_bytes)
            s++;
        if (s == ns)
            *hit = m;
    }
    return bucket;
}

/* Keep an answer (choice of ns stages) in bucket; when memory runs out it is not kept. */
static exact_memo *memo_keep(pipe_env *x, exact_memo **bucket, pipe_cache_entry *const *ent,
                             const ilp_problem *ip, int solve, const int *choice)
{
    int ns = ip->nstages;
    arena *ca = &x->cache_arena;
    exact_memo *m = arena_calloc(ca, 1, sizeof *m);
    pipe_cache_entry **e = arena_alloc(ca, (size_t)ns, sizeof *e);
    ilp_stage *st = arena_alloc(ca, (size_t)ns, sizeof *st);
    int *c = arena_alloc(ca, (size_t)ns, sizeof *c);
    x->cache_bytes += sizeof *m + (size_t)ns * (sizeof *e + sizeof *st + sizeof *c);
    if (!m || !e || !st || !c)
        return NULL;
    memcpy(e, ent, (size_t)ns * sizeof *e);
    memcpy(st, ip->st, (size_t)ns * sizeof *st);
    memcpy(c, choice, (size_t)ns * sizeof *c);
    m->solve = solve;
    m->ip = *ip;
    m->ip.st = NULL;
    m->st = st;
    m->ent = e;
    m->choice = c;
    m->next = *bucket;
    *bucket = m;
    return m;
}

static double exact_memo_solve(pipe_env *x, pipe_cache_entry *const *ent, const ilp_problem *ip,
                               int *choice)
{
    const exact_memo *hit;
    exact_memo **bucket = memo_find(x, ent, ip, 0, &hit);
    if (hit) {
        memcpy(choice, hit->choice, (size_t)ip->nstages * sizeof *choice);
        return hit->time_s;
    }
    double t = ilp_exact(ip, choice);
    exact_memo *m = bucket ? memo_keep(x, bucket, ent, ip, 0, choice) : NULL;
    if (m)
        m->time_s = t;
    return t;
}

/* ilp_solve through the same memo (the MILP of a repeated layer's pipeline is solved once). */
static int solve_memo(pipe_env *x, pipe_cache_entry *const *ent, const ilp_problem *ip,
                      ilp_solution *sol)
{
    const exact_memo *hit;
    exact_memo **bucket = memo_find(x, ent, ip, 1, &hit);
    int *choice = sol->choice;
    if (hit) {
        *sol = hit->sol;
        sol->choice = choice;
        memcpy(choice, hit->choice, (size_t)ip->nstages * sizeof *choice);
        return hit->rc;
    }
    int rc = ilp_solve(ip, sol);
    exact_memo *m = bucket ? memo_keep(x, bucket, ent, ip, 1, sol->choice) : NULL;
    if (m) {
        m->sol = *sol;
        m->sol.choice = NULL;
        m->rc = rc;
    }
    return rc;
}

/* ---- Hidden-dimension streaming (Kitsune paper section 4: "Linear -> elementwise -> Linear with
 * a large hidden dimension", capacity "solved by splitting hidden dimensions spatially", split-K
 * partial sums reduced on the way) ----
 * A segment G1.. -> E.. -> G2 -> T..: the G1 GEMMs (one, or several such as gate and up) read one
 * activation X [M, D] from outside the segment and weights [D, F]; the element-wise ops E combine
 * their [M, F] outputs; G2 contracts the result over F with a weight [F, D']; the element-wise
 * tail T (a residual add) finishes the [M, D'] output. Rows stream in sub-blocks of tm rows and
 * the hidden dimension in chunks of f columns; a tile is one (sub-block, chunk).
 * - Stage A (the G1 GEMMs, E as their epilogue) computes a tile from the sub-block's X rows and
 *   the chunk's weight columns, and queues its [tm, f] result.
 * - Stage B (G2 with T as its epilogue) multiplies the tile by the chunk's rows of W2 and adds the
 *   [tm, D'] partial product into fp32 accumulators: the split-K partial sums are reduced where
 *   they live, not sent through a tree of queues (a tree would move tm x D' x 4 bytes per tile
 *   through L2; a multicast of the [tm, f] tile to the accumulating CTAs moves cj x tm x f x 2).
 *   B's CTAs form row groups of cj column slices, cj the fewest that hold a sub-block's
 *   tm x D' accumulators on chip (half the register file and the shared memory the GEMM's
 *   operand stages leave, as for reductions); each tile goes to the cj CTAs of its group. The
 *   groups hold R = tm x groups rows of accumulators at once: a row block. Or (the search tries
 *   both, and with fewer CTAs than cj only this) the accumulators live in L2, read and written
 *   back every tile, in the persisting set-aside beside the rings: a row block is what that
 *   holds of them (at least one sub-block; beyond it, through DRAM).
 * - DRAM: X once; every weight chunk once per row block (once in all when the weights fit the L2
 *   left beside the rings and the row block's X), shared by the block's sub-blocks through L2;
 *   the output and the tail's other inputs once; an [M, F] tensor only when something outside
 *   the segment reads it.
 * Per tile at (cA, cB) CTAs: compute = each stage's members on its CTAs over all tiles (rate_at)
 * / N; L2 bytes: A reads the sub-block's X rows and its chunk of every G1 weight and writes the
 * tile; B reads the tile once per column slice and the chunk of W2; port and queue sync as for
 * row stages. The pipeline period is the slowest stage, L2 or DRAM, as for row pipelines. The
 * search tries every split cA + cB = #SMs of the tensor pool, chunks of HID_CHUNK_* columns and
 * both homes of the partial sums. Considered only when the weights exceed the shared memory of
 * all SMs (hid_build): otherwise a row pipeline keeps them resident. */
enum { HID_CHUNK_MIN = 128, HID_CHUNK_MAX = 2048 };
/* Widest output tile of a CTA's GEMM (cost.c's largest tile side): a wider chunk is computed in
 * passes, each reading the sub-block's X rows again from L2. */
enum { HID_PASS_COLS = 256 };
/* Designs this close to the fastest count as fast (the DRAM bytes decide among them). */
#define HID_TIME_SLACK 0.01
/* Relative margin of hid_build's lower bound on a design's time against the rounding of the
 * design's own sums (a few ulps): a design is skipped only when its bound clears the slack by
 * more than this. */
#define HID_BOUND_TOL 1e-9

typedef struct hid_pat {
    int na, nb;          /* members of stage A (G1s, E) and B (G2, T), in op order */
    int *ma, *mb;
    int g2, x_root, h_root;
    int64_t M, D, F, Dout;
    double esz;          /* bytes per element of the queued [M, F] tensor */
    double x_bytes, x_dram;            /* X, and its bytes missing L2 */
    double w1_bytes, w1_dram, w2_bytes, w2_dram; /* weights (and biases) of stage A, of B */
    double tail_bytes, tail_dram;      /* the tail's row-aligned inputs from outside */
    double tail_x_bytes;               /* the tail's reads of X (from L2 with its row block) */
    double out_write, mid_write;       /* written to DRAM: B's outputs and A's [M, F] tensors
                                          that are read after the segment or kept */
} hid_pat;

/* Whether ops first..last form the hidden-dimension pattern; 1 (h filled), 0, or -1 (memory). */
static int hid_match(const pipe_env *x, int first, int last, hid_pat *h, arena *a)
{
    const wl_graph *g = x->g;
    const op_work *w = x->w;
    memset(h, 0, sizeof *h);
    h->g2 = h->x_root = h->h_root = -1;
    int64_t F = -1;
    for (int i = first; i <= last; i++) { /* fail fast: most segments are not this pattern */
        if (w[i].kind == OPK_FREE)
            continue;
        const wl_op *o = &g->op[i];
        if (o->nout != 1)
            return 0;
        if (w[i].kind == OPK_GEMM) {
            if (w[i].batch != 1 || o->nin < 2 || reduces_stream(x, i) || op_is_conv(o->type) ||
                g->t[x->root[o->in[1]]].kind != TK_WEIGHT ||
                (o->nin == 3 && g->t[x->root[o->in[2]]].kind != TK_WEIGHT))
                return 0;
            int pr = g->t[x->root[o->in[0]]].producer;
            if (pr < first || pr > last) { /* a G1: reads X from outside */
                if (h->g2 >= 0 || (h->x_root >= 0 && h->x_root != x->root[o->in[0]]) ||
                    (F >= 0 && (w[i].n != F || w[i].m != h->M || w[i].k != h->D)))
                    return 0;
                h->x_root = x->root[o->in[0]];
                F = w[i].n;
                h->M = w[i].m;
                h->D = w[i].k;
            } else if (h->g2 >= 0 || F < 0 || w[i].k != F || w[i].m != h->M) {
                return 0;
            } else {
                h->g2 = i;
                h->h_root = x->root[o->in[0]];
                h->Dout = w[i].n;
            }
            continue;
        }
        if (!(op_info_of(o->type)->flags & OPF_ELEMENTWISE) || w[i].flops_tensor > 0 || F < 0)
            return 0;
        const wl_tensor *y = &g->t[o->out[0]];
        int64_t cols = y->ndim > 0 ? y->dim[y->ndim - 1] : 1;
        if (rows_of(y) != h->M || cols != (h->g2 < 0 ? F : h->Dout))
            return 0;
        for (int j = 0; j < o->nin; j++) {
            const wl_tensor *t = &g->t[x->root[o->in[j]]];
            int pr = t->producer;
            if (pr >= first && pr <= last) {
                if (h->g2 >= 0 && pr < h->g2)
                    return 0; /* the tail reads what G2 and the tail produce */
            } else if (t->kind != TK_WEIGHT && (h->g2 < 0 || rows_of(t) != h->M)) {
                return 0; /* before G2 only weights (biases) come from outside */
            }
        }
    }
    if (h->g2 < 0 || h->M < Q_TILE_ROWS || F < 2 * HID_CHUNK_MIN)
        return 0;
    int n = last - first + 1;
    h->ma = arena_alloc(a, (size_t)n + 1, sizeof(int));
    h->mb = arena_alloc(a, (size_t)n + 1, sizeof(int));
    if (!h->ma || !h->mb)
        return -1;
    h->F = F;
    h->esz = (double)dt_bytes(g->t[h->h_root].dt);
    h->x_bytes = (double)g->t[h->x_root].bytes;
    int x_seen = 0;
    for (int i = first; i <= last; i++) {
        if (w[i].kind == OPK_FREE)
            continue;
        const wl_op *o = &g->op[i];
        int in_b = i >= h->g2;
        if (in_b)
            h->mb[h->nb++] = i;
        else
            h->ma[h->na++] = i;
        for (int j = 0; j < o->nin; j++) {
            const wl_tensor *t = &g->t[x->root[o->in[j]]];
            int pr = t->producer;
            if (pr >= first && pr <= last)
                continue;
            double b = (double)w[i].in_bytes[j], miss = (double)op_input_miss(x, i, j);
            if (x->root[o->in[j]] == h->x_root) {
                if (!x_seen)
                    h->x_dram = miss;
                x_seen = 1;
                if (in_b) /* the tail reads X again (a residual): its sub-block is still in L2 */
                    h->tail_x_bytes += b;
            } else if (t->kind == TK_WEIGHT) {
                h->w1_bytes += in_b ? 0 : b;
                h->w1_dram += in_b ? 0 : miss;
                h->w2_bytes += in_b ? b : 0;
                h->w2_dram += in_b ? miss : 0;
            } else {
                h->tail_bytes += b;
                h->tail_dram += miss;
            }
        }
        int r = x->root[o->out[0]];
        if (x->max_reader[r] > last || x->must_write[r]) {
            if (in_b)
                h->out_write += (double)w[i].out_bytes;
            else
                h->mid_write += (double)w[i].out_bytes;
        }
    }
    return 1;
}

/* One hidden-dimension design: chunk f, cA and cB CTAs. */
typedef struct hid_eval {
    double time_s, period_s, fill_s, N, nsub, nch;
    double comp[2], port[2], sync[2], per[2], l2[2], dram_tile[2];
    int lim[2];
    int cj, groups, spill;
    int64_t R;
    double acc_per_cta, storage, spill_frac, l2_tile, dram_tile_all, dram_rd, dram_wr, w_rd;
    double ring_rd, ring_wr; /* ring bytes read back and written back from DRAM */
    double tile_bytes;
    const char *bott;    /* NULL: a stage (bott_stage) */
    int bott_stage;
} hid_eval;

/* What hid_eval_at needs of the GPU and the pattern that no design changes: worked out once per
 * hid_build (its search evaluates every chunk and split of the SMs). */
typedef struct hid_hw {
    double acc_cap;  /* B's accumulator room per SM: registers' share and shared memory left */
    double l2_room, persist_bytes, tsync_s, port_Bps, l2_Bps, dram_Bps;
    double start_s;  /* launch and the first DRAM latency */
} hid_hw;

static void hid_hw_of(const pipe_env *x, const hid_pat *h, hid_hw *k)
{
    const hw_gpu *hw = x->hw;
    double clk = x->c.clock_MHz;
    double room = hw_smem_bytes(hw) - x->smem_cta[h->g2];
    k->acc_cap = hw->registers_per_sm_KiB * 1024.0 * PIPE_ACC_RF_SHARE + (room > 0 ? room : 0);
    k->l2_room = l2_bcast_room(hw);
    k->persist_bytes = hw_l2_persist_bytes(hw);
    k->tsync_s = q_sync_s(hw);
    k->port_Bps = port_Bps(hw, clk);
    double inflight = roof_inflight_full(hw);
    k->l2_Bps = roof_l2_Bps(hw, hw->sm_count, inflight, clk);
    k->dram_Bps = roof_dram_Bps(hw, hw->sm_count, inflight);
    k->start_s = cost_launch_s(hw, &x->c) + hw->dram_latency_ns * 1e-9;
}

static void hid_eval_at(pipe_env *x, const hid_pat *h, const hid_hw *k, int64_t f, int cA, int cB,
                        int in_l2, hid_eval *e)
{
    const hw_gpu *hw = x->hw;
    double clk = x->c.clock_MHz, tm = (double)Q_TILE_ROWS;
    memset(e, 0, sizeof *e);
    e->nsub = (double)cdiv64(h->M, Q_TILE_ROWS);
    e->nch = (double)cdiv64(h->F, f);
    double N = e->nsub * e->nch;
    e->N = N;
    int c[2] = {cA, cB};
    for (int s = 0; s < 2; s++)
        for (int m = 0; m < (s ? h->nb : h->na); m++)
            e->comp[s] += rate_at(x, s ? h->mb[m] : h->ma[m], c[s])->compute_s;
    /* B's accumulators: a sub-block's tm x D' fp32 partial sums over cj column slices */
    double acc_sub = tm * (double)h->Dout * KS_PARTIAL_BYTES;
    int cj = (int)ceil(acc_sub / k->acc_cap);
    cj = cj < 1 ? 1 : cj;
    e->cj = cj;
    e->groups = cB / cj;
    e->spill = in_l2 || e->groups < 1;
    double l2_room = k->l2_room;
    double tile = tm * (double)f * h->esz;
    /* rings: each A CTA double-buffers its tile */
    e->storage = (double)Q_DEPTH_DEFAULT * tile * cA;
    /* accumulators in L2 share the persisting set-aside with the rings; beyond it, DRAM */
    double acc_room = k->persist_bytes - e->storage;
    int64_t rb = e->spill ? (int64_t)floor(acc_room / acc_sub) : e->groups;
    int acc_dram = e->spill && rb < 1;
    rb = rb < 1 ? 1 : rb;
    e->R = rb * Q_TILE_ROWS < h->M ? rb * Q_TILE_ROWS : h->M;
    if (e->spill) {
        e->groups = cB;
        e->cj = 1;
        e->acc_per_cta = 0;
    } else {
        e->acc_per_cta = acc_sub / cj;
    }
    e->tile_bytes = tile;
    /* L2 per tile: A reads the sub-block's X rows, its chunk of the G1 weights, writes the tile
     * (and A's tensors read outside, on their way to DRAM); B reads the tile per column slice,
     * its chunk of W2, spilled partial sums twice, and per sub-block the output written and the
     * tail's inputs read */
    double passes = (double)cdiv64(f, HID_PASS_COLS);
    e->l2[0] = h->x_bytes / e->nsub * passes + h->w1_bytes / e->nch + tile + h->mid_write / N;
    e->l2[1] = tile * e->cj + h->w2_bytes / e->nch + (e->spill ? 2 * acc_sub : 0) +
               (h->out_write + h->tail_bytes + h->tail_x_bytes) / N;
    /* DRAM: X once (again per chunk when a row block's X does not stay in L2), weights once per
     * row block unless they fit beside it, outputs once */
    double blocks = (double)cdiv64(h->M, e->R);
    double xblock = (double)e->R * (double)h->D * h->esz;
    double wall = h->w1_bytes + h->w2_bytes;
    e->w_rd = h->w1_dram + h->w2_dram;
    if (blocks > 1 && wall + xblock > l2_room)
        e->w_rd += (blocks - 1) * wall;
    double x_rd = h->x_dram + (xblock > l2_room ? (e->nch - 1) * h->x_bytes + h->tail_x_bytes : 0);
    double acc_spill = acc_dram ? acc_sub * N : 0; /* partial sums through DRAM, each way */
    double ring_bytes = (double)h->M * (double)h->F * h->esz, ring_rd, ring_wr;
    e->dram_rd = x_rd + e->w_rd + h->tail_dram + acc_spill;
    e->dram_wr = h->out_write + h->mid_write + acc_spill;
    if (hw->queue_rings_pinned) {
        e->spill_frac = q_spill_frac(e->storage, k->persist_bytes);
        ring_rd = ring_wr = e->spill_frac * ring_bytes;
    } else { /* one ring, as ring_lru_dram: its slots' tiles of streamed DRAM traffic beside it */
        double slots = (double)Q_DEPTH_DEFAULT * cA, back;
        ring_wr = ring_evicted(hw, e->storage, slots * (e->dram_rd + e->dram_wr) / N, &back) *
                  ring_bytes;
        ring_rd = back * ring_bytes;
    }
    e->ring_rd = ring_rd;
    e->ring_wr = ring_wr;
    e->dram_rd += ring_rd;
    e->dram_wr += ring_wr;
    e->dram_tile[0] = (x_rd + e->w_rd * h->w1_bytes / (wall > 0 ? wall : 1)) / N;
    e->dram_tile[1] = e->w_rd * h->w2_bytes / (wall > 0 ? wall : 1) / N;
    double tsync = k->tsync_s;
    double xfers[2] = {1.0, (double)e->cj}; /* A writes one ring per tile; B's slices read it */
    double P = 0;
    e->bott_stage = 0;
    for (int s = 0; s < 2; s++) {
        double ports = (double)(c[s] < hw->sm_count ? c[s] : hw->sm_count);
        e->port[s] = e->l2[s] / (ports * k->port_Bps);
        e->sync[s] = tsync * xfers[s] / c[s];
        double comp = e->comp[s] / N;
        e->per[s] = fmax(comp, fmax(e->port[s], e->sync[s]));
        e->lim[s] = e->per[s] == comp ? KS_LIMIT_COMPUTE : e->per[s] == e->port[s] ? KS_LIMIT_PORT
                                                                                  : KS_LIMIT_QUEUE;
        if (e->per[s] > P) {
            P = e->per[s];
            e->bott_stage = s;
        }
    }
    e->l2_tile = e->l2[0] + e->l2[1];
    e->dram_tile_all = (e->dram_rd + e->dram_wr) / N;
    e->bott = NULL;
    if (e->l2_tile / k->l2_Bps > P) {
        P = e->l2_tile / k->l2_Bps;
        e->bott = "l2";
    }
    if (e->dram_tile_all / k->dram_Bps > P) {
        P = e->dram_tile_all / k->dram_Bps;
        e->bott = "dram";
    }
    e->period_s = P;
    e->fill_s = e->per[0] + e->per[1] + q_tile_s(hw, fmin(tile, Q_PAYLOAD_MAX_BYTES), clk);
    e->time_s = k->start_s + e->fill_s + (N - 1) * P;
}

/* hid_match, and the pattern's reason to exist: weights that the row design cannot keep on chip
 * even spread over every SM's shared memory (a 256-wide MLP streams rows with its weights
 * resident). 1 when hid_build designs ops first..last, 0 when not, -1 (memory). */
static int hid_applies(const pipe_env *x, int first, int last, hid_pat *h, arena *a)
{
    int m = hid_match(x, first, last, h, a);
    if (m <= 0)
        return m;
    const hw_gpu *hw = x->hw;
    int S = hw->sm_count;
    return !(S < 2 || hw_has_stage_body(hw) ||
             h->w1_bytes + h->w2_bytes <= (double)S * hw_smem_bytes(hw));
}

/* The hidden-dimension pipeline of ops first..last: the fastest (chunk, cA, cB) over every split
 * of the tensor pool, or the imposed one (force: the two CTA counts, chunk force_cols). 1 (p
 * built), 0 (not the pattern, or no split of the SMs: fewer than two), -1 (memory). */
static int hid_build(pipe_env *x, int first, int last, const int *force, int64_t force_cols,
                     arena *a, ks_pipeline *p)
{
    hid_pat h;
    int m = hid_applies(x, first, last, &h, a);
    if (m <= 0)
        return m;
    const hw_gpu *hw = x->hw;
    int S = hw->sm_count;
    hid_hw hh;
    hid_hw_of(x, &h, &hh);
    hid_eval best, e; /* best: the chosen design, evaluated once it is known */
    int64_t best_f = 0;
    int cA = 0, cB = 0, best_l2m = 0;
    int force_in_l2 = force_cols < 0; /* an imposed design with its accumulators in L2 */
    if (force_cols < 0)
        force_cols = -force_cols;
    /* the fastest design; among those within HID_TIME_SLACK of it, the fewest DRAM bytes (a
     * compute-bound pipeline is as fast with its weights read once as with them read per block) */
    double tmin = INFINITY, best_dram = INFINITY;
    /* every design's time and DRAM bytes, evaluated once: the second pass reads them */
    int nf = 0;
    for (int64_t f = HID_CHUNK_MIN; f <= HID_CHUNK_MAX && f <= 2 * h.F; f *= 2)
        nf++;
    int na = force && force[0] >= S ? force[0] + 1 : S; /* a0's range */
    arena_pos mark = arena_mark(a);
    double *tt = arena_alloc(a, (size_t)nf * (size_t)na * 2, sizeof *tt);
    double *dd = arena_alloc(a, (size_t)nf * (size_t)na * 2, sizeof *dd);
    /* each stage's compute time at c CTAs, summed as hid_eval_at sums it: a design's time is at
     * least its launch, both stages' compute per sub-block (the fill) and the slower stage's
     * compute per sub-block for each further one (the period); a design whose bound is above
     * the fastest found so far by more than HID_TIME_SLACK is neither the fastest nor within
     * the slack of it, and is not evaluated (the search's answer is unchanged) */
    double *cmp[2] = {arena_alloc(a, (size_t)S + 1, sizeof(double)),
                      arena_alloc(a, (size_t)S + 1, sizeof(double))};
    if (!tt || !dd || !cmp[0] || !cmp[1])
        return -1;
    for (int s = 0; s < 2 && !force; s++)
        for (int c = 1; c < S; c++) {
            double v = 0;
            for (int j = 0; j < (s ? h.nb : h.na); j++)
                v += rate_at(x, s ? h.mb[j] : h.ma[j], c)->compute_s;
            cmp[s][c] = v;
        }
    double nsub = (double)cdiv64(h.M, Q_TILE_ROWS);
    if (!force) /* a first bound to prune with: per chunk, the split that balances the stages */
        for (int64_t f = HID_CHUNK_MIN; f <= HID_CHUNK_MAX && f <= 2 * h.F; f *= 2) {
            int bal = 1;
            for (int a0 = 2; a0 < S; a0++)
                if (fmax(cmp[0][a0], cmp[1][S - a0]) < fmax(cmp[0][bal], cmp[1][S - bal]))
                    bal = a0;
            for (int l2m = 0; l2m <= 1; l2m++) {
                hid_eval_at(x, &h, &hh, f, bal, S - bal, l2m, &e);
                tmin = fmin(tmin, e.time_s);
            }
        }
    for (int pass = 0; pass < 2; pass++) {
        int fi = 0;
        for (int64_t f = HID_CHUNK_MIN; f <= HID_CHUNK_MAX && f <= 2 * h.F; f *= 2, fi++) {
            if (force && f != force_cols)
                continue;
            for (int a0 = force ? force[0] : 1; a0 <= (force ? force[0] : S - 1); a0++) {
                int b0 = force ? force[1] : S - a0;
                if (a0 < 1 || b0 < 1)
                    continue;
                int pruned = 0;
                if (pass == 0 && !force) {
                    double N = nsub * (double)cdiv64(h.F, f);
                    double lb = hh.start_s + (cmp[0][a0] + cmp[1][b0]) / N +
                                (N - 1) * fmax(cmp[0][a0], cmp[1][b0]) / N;
                    pruned = lb * (1 - HID_BOUND_TOL) > tmin * (1 + HID_TIME_SLACK);
                }
                for (int l2m = 0; l2m <= 1; l2m++) { /* accumulators on chip, or in L2 */
                    if (force && l2m != force_in_l2)
                        continue;
                    size_t k = ((size_t)fi * (size_t)na + (size_t)a0) * 2 + (size_t)l2m;
                    if (pass == 0 && pruned) {
                        tt[k] = dd[k] = INFINITY;
                    } else if (pass == 0) {
                        hid_eval_at(x, &h, &hh, f, a0, b0, l2m, &e);
                        tt[k] = e.time_s;
                        dd[k] = e.dram_rd + e.dram_wr;
                        tmin = fmin(tmin, e.time_s);
                    } else if (tt[k] <= tmin * (1 + HID_TIME_SLACK) &&
                               dd[k] < best_dram * (1 - 1e-12)) {
                        best_dram = dd[k];
                        best_f = f;
                        best_l2m = l2m;
                        cA = a0;
                        cB = b0;
                    }
                }
            }
        }
    }
    arena_release(a, mark);
    if (!best_f)
        return 0;
    hid_eval_at(x, &h, &hh, best_f, cA, cB, best_l2m, &best); /* the chosen design in full */
    memset(p, 0, sizeof *p);
    p->first_op = first;
    p->last_op = last;
    p->nstages = 2;
    p->stages = arena_calloc(a, 2, sizeof *p->stages);
    p->queues = arena_calloc(a, 1, sizeof *p->queues);
    if (!p->stages || !p->queues)
        return -1;
    const op_work *w = x->w;
    for (int s = 0; s < 2; s++) {
        ks_stage *st = &p->stages[s];
        st->members = s ? h.mb : h.ma;
        st->nmembers = s ? h.nb : h.na;
        st->op = s ? h.g2 : h.ma[0];
        st->tensor = 1;
        st->ctas = s ? cB : cA;
        st->groups = s ? best.groups : cA;
        st->split = KS_SPLIT_HIDDEN;
        st->period_s = best.per[s];
        st->compute_s = best.comp[s] / best.N;
        st->port_s = best.port[s];
        st->queue_s = best.sync[s];
        st->fill_s = best.per[s];
        st->limit = (ks_limit)best.lim[s];
        st->l2_bytes_per_tile = best.l2[s];
        st->dram_bytes_per_tile = best.dram_tile[s];
        st->bcast_bytes = s ? h.w2_bytes : h.w1_bytes;
        st->bcast_in_l2 = 1;
        st->acc_bytes_per_cta = s ? best.acc_per_cta : 0;
        st->acc_spills = s ? best.spill : 0;
        for (int k = 0; k < st->nmembers; k++)
            p->flops = kt_count_add(p->flops, kt_count_add(w[st->members[k]].flops_tensor,
                                                            w[st->members[k]].flops_simt));
    }
    p->nqueues = 1;
    ks_queue *u = &p->queues[0];
    u->tensor = h.h_root;
    u->producer_stage = 0;
    u->nconsumers = 1;
    u->depth = Q_DEPTH_DEFAULT;
    u->tile_bytes = kt_count_of(best.tile_bytes);
    u->payload_bytes = (int64_t)fmax(1.0, fmin(best.tile_bytes, Q_PAYLOAD_MAX_BYTES));
    u->storage_bytes = kt_count_of(best.storage);
    u->spill_frac = best.spill_frac;
    u->written_back_frac = best.ring_wr / ((double)h.M * (double)h.F * h.esz);
    u->read_back_frac = best.ring_rd / ((double)h.M * (double)h.F * h.esz);
    u->eff_bandwidth_GBps = q_eff_Bps(hw, (double)u->payload_bytes, x->c.clock_MHz) / 1e9;
    p->stream_rows = h.M;
    p->tile_rows = Q_TILE_ROWS;
    p->hidden_cols = best_f;
    p->hidden_acc_in_l2 = best_l2m;
    p->hidden_dim = h.F;
    p->row_block_rows = best.R;
    p->tiles = (int64_t)best.N;
    p->period_s = best.period_s;
    p->throughput_tiles_per_s = best.period_s > 0 ? 1.0 / best.period_s : 0;
    p->bottleneck_stage = best.bott ? -1 : best.bott_stage;
    p->bottleneck = best.bott ? best.bott : x->g->op[p->stages[best.bott_stage].op].name;
    p->fill_s = best.fill_s;
    p->time_s = best.time_s;
    p->l2_bytes_per_tile = best.l2_tile;
    p->dram_bytes_per_tile = best.dram_tile_all;
    p->l2_bytes = kt_count_of(best.l2_tile * best.N);
    p->dram_read_bytes = kt_count_of(best.dram_rd);
    p->dram_write_bytes = kt_count_of(best.dram_wr);
    p->queue_storage_bytes = kt_count_of(best.storage);
    p->queue_budget_bytes = kt_count_of(hw_l2_persist_bytes(hw));
    p->spilled_bytes = kt_count_of(best.ring_rd + best.ring_wr);
    p->weight_bytes = kt_count_of(h.w1_bytes + h.w2_bytes);
    p->weight_reread_bytes = kt_count_of(fmax(0.0, best.w_rd - h.w1_dram - h.w2_dram));
    p->ilp_status = ILP_EXACT;
    p->ilp_status_name = force ? "imposed" : "exact search (hidden-dimension streaming)";
    p->ilp_objective_s = p->ilp_bound_s = best.time_s;
    p->ext_read_bytes = kt_count_of(h.x_dram + h.tail_dram);
    p->ext_write_bytes = kt_count_of(h.out_write + h.mid_write);
    p->queue_traffic_bytes = kt_count_of((double)h.M * (double)h.F * h.esz);
    return 1;
}

static int pipe_build_rows(pipe_env *x, int first, int last, int use_ilp, const int *force,
                           int64_t force_tile_rows, arena *a, ks_pipeline *p)
{
    cache_trim(x);
    memset(p, 0, sizeof *p);
    p->first_op = first;
    p->last_op = last;
    design d;
    memset(&d, 0, sizeof d);
    if (design_stages(x, p, &d, a))
        return -1;
    int ns = p->nstages;
    /* CTAs sharing an SM: an imposed allocation's, else a full kernel's (stage_body) */
    x->body_sharing = x->body_ctas_per_sm > 1 ? (double)x->body_ctas_per_sm : 1.0;
    if (force && x->body_ctas_per_sm > 1) {
        double total = 0;
        for (int s = 0; s < ns; s++)
            total += force[s];
        x->body_sharing = fmin((double)x->body_ctas_per_sm, fmax(1.0, total / x->hw->sm_count));
    }
    /* the tile height is picked on the coarser grid; the MILP then maps that height over every
     * CTA count */
    const int *cand = force ? x->cand : x->search_cand;
    int ncand = force ? x->ncand : x->search_ncand;
    int *choice = arena_calloc(a, (size_t)ns + 1, sizeof(int));
    int *best_choice = arena_calloc(a, (size_t)ns + 1, sizeof(int));
    if (!choice || !best_choice)
        return -1;
    /* tile heights: the exact search picks the fastest; the ILP then maps that one */
    tile_plan best;
    memset(&best, 0, sizeof best);
    double best_t = INFINITY;
    /* the default height first; an estimate far from its budget tries no other */
    int64_t order[3] = {Q_TILE_ROWS, PIPE_TILE_ROWS_MIN, PIPE_TILE_ROWS_MAX};
    for (int oi = 0; oi < 3; oi++) {
        int64_t tm = order[oi];
        if (force_tile_rows > 0 && tm != force_tile_rows)
            continue;
        if (oi > 0 && !use_ilp && !force && x->search_budget_s > 0 &&
            best_t > PIPE_SEARCH_SLACK * x->search_budget_s)
            break;
        if (tm > PIPE_TILE_ROWS_MIN && cdiv64(p->stream_rows, tm / 2) == 1)
            continue; /* one tile already at half the height */
        tile_plan tp;
        if (plan_tiles(x, p, &d, tm, cand, ncand, force, a, &tp))
            return -1;
        double t;
        if (force) {
            memset(choice, 0, (size_t)ns * sizeof *choice);
            t = finish(x, p, &d, &tp, choice, 0);
        } else {
            if ((use_ilp ? exact_memo_solve(x, tp.ent, &tp.ip, choice)
                         : ilp_estimate(&tp.ip, choice)) < 0)
                continue;
            t = finish(x, p, &d, &tp, choice, 0);
        }
        if (t < best_t) {
            best_t = t;
            best = tp;
            memcpy(best_choice, choice, (size_t)ns * sizeof *choice);
        }
    }
    if (!isfinite(best_t)) { /* nothing fits (smem, registers): one CTA each at the first height */
        tile_plan tp;
        if (plan_tiles(x, p, &d, force_tile_rows > 0 ? force_tile_rows : Q_TILE_ROWS, cand, ncand,
                       force, a, &tp))
            return -1;
        best = tp;
        memset(best_choice, 0, (size_t)ns * sizeof *best_choice);
        p->ilp_status = ILP_INFEASIBLE;
        p->ilp_fallback = 1;
        p->ilp_status_name = "infeasible (one CTA per stage)";
        finish(x, p, &d, &best, best_choice, 1);
        return mark_infeasible(p, &best.ip, best_choice, a);
    }
    if (use_ilp && !force) { /* the chosen height over every CTA count 1..#SMs */
        tile_plan tp;
        if (plan_tiles(x, p, &d, best.tm, x->cand, x->ncand, NULL, a, &tp))
            return -1;
        best = tp; /* ilp_solve below starts from the exact search on these candidates */
        best_t = INFINITY;
        if (use_ilp == PIPE_EXACT) { /* the exact search alone, no MILP */
            if (exact_memo_solve(x, best.ent, &best.ip, best_choice) < 0) {
                memset(best_choice, 0, (size_t)ns * sizeof *best_choice);
                if (mark_infeasible(p, &best.ip, best_choice, a))
                    return -1;
            }
            use_ilp = 0;
        }
    }
    if (force) {
        p->ilp_status = ILP_EXACT;
        p->ilp_fallback = 0;
        p->ilp_status_name = "imposed";
    } else if (use_ilp) {
        ilp_solution sol;
        memset(&sol, 0, sizeof sol);
        sol.choice = choice;
        int solved = solve_memo(x, best.ent, &best.ip, &sol) == 0;
        if (solved) {
            /* the MILP's objective leaves out what finish adds (setup, hops, ring spills): keep
             * the exact search's allocation when that is faster end to end */
            memcpy(best_choice, choice, (size_t)ns * sizeof *choice);
            int *ex = arena_calloc(a, (size_t)ns + 1, sizeof(int));
            if (ex && exact_memo_solve(x, best.ent, &best.ip, ex) >= 0 &&
                finish(x, p, &d, &best, ex, 0) < finish(x, p, &d, &best, best_choice, 0))
                memcpy(best_choice, ex, (size_t)ns * sizeof *ex);
        } else { /* nothing fits on the full candidates: one CTA per stage */
            memset(best_choice, 0, (size_t)ns * sizeof *best_choice);
            if (mark_infeasible(p, &best.ip, best_choice, a))
                return -1;
        }
        p->ilp_status = sol.status;
        p->ilp_fallback = sol.fallback;
        p->ilp_status_name = ilp_status_name(sol.status);
        p->ilp_objective_s = sol.time_s;
        p->ilp_bound_s = sol.bound_s;
        p->ilp_gap = sol.gap;
    } else {
        p->ilp_status = ILP_EXACT;
        p->ilp_fallback = 1;
        p->ilp_status_name = "exact search (selection estimate)";
    }
    finish(x, p, &d, &best, best_choice, 1);
    return 0;
}

int pipe_build(pipe_env *x, int first, int last, int use_ilp, const int *force,
               int64_t force_tile_rows, arena *a, ks_pipeline *p)
{
    if (force && x->force_hidden_cols != 0 && !x->force_stage_of) {
        int r = hid_build(x, first, last, force, x->force_hidden_cols, a, p);
        return r > 0 ? 0 : -1;
    }
    if (pipe_build_rows(x, first, last, use_ilp, force, force_tile_rows, a, p))
        return -1;
    if (force || force_tile_rows > 0 || x->force_stage_of)
        return 0;
    /* the hidden-dimension design of the same ops, when they form its pattern: the faster one */
    ks_pipeline hp;
    int r = hid_build(x, first, last, NULL, 0, a, &hp);
    if (r < 0)
        return -1;
    if (r > 0 && (p->infeasible || hp.time_s < p->time_s))
        *p = hp;
    return 0;
}

/* stage_at of stage s at c CTAs, kept in its cache entry ent (the estimate meets the same
 * stage at the same count in many segments); without an entry, computed into scratch from a.
 * NULL when memory runs out. */
static const pipe_at *stage_at_cached(pipe_env *x, const ks_pipeline *p, const design *d, int s,
                                      int c, int64_t tm, pipe_cache_entry *ent, arena *a)
{
    for (const pipe_at *n = ent ? ent->at : NULL; n; n = n->next)
        if (n->c == c)
            return n;
    pipe_at *n = arena_calloc(ent ? &x->cache_arena : a, 1, sizeof *n);
    if (!n)
        return NULL;
    if (ent)
        x->cache_bytes += sizeof *n;
    stage_eval e;
    stage_at(x, p, d, s, c, tm, &e);
    n->c = c;
    n->period_s = e.period_s;
    n->l2_tile = e.l2_tile;
    n->dram_tile = e.dram_tile;
    n->dram_once = e.dram_once;
    n->fill_s = e.fill_s;
    n->queue_bytes = e.queue_bytes;
    n->groups = e.groups;
    if (ent) {
        n->next = ent->at;
        ent->at = n;
    }
    return n;
}

static int pipe_estimate_rows(pipe_env *x, int first, int last, arena *a, double *time_s,
                              int64_t *dram_bytes, int *nstages)
{
    cache_trim(x);
    const hw_gpu *hw = x->hw;
    ks_pipeline p;
    memset(&p, 0, sizeof p);
    p.first_op = first;
    p.last_op = last;
    design d;
    memset(&d, 0, sizeof d);
    if (design_stages(x, &p, &d, a))
        return -1;
    *nstages = p.nstages;
    int ns = p.nstages;
    int64_t tm = Q_TILE_ROWS;
    double N = (double)cdiv64(p.stream_rows, tm), clk = x->c.clock_MHz;
    int S = x->est_cand[1]; /* the pool: #SMs, or ctas_per_sm x #SMs (stage_body) */
    double *wk = arena_calloc(a, (size_t)ns + 1, sizeof(double));
    if (!wk)
        return -1;
    /* pass 1: each stage's CTA-seconds per tile - the cheaper of one CTA and all SMs (spilled
     * accumulators or non-resident slices at one CTA vanish with more) */
    double work[2] = {0, 0};
    tile_plan ends; /* every stage at 1 and at #SMs CTAs, through the stage cache */
    if (plan_tiles(x, &p, &d, tm, x->est_cand, 2, NULL, a, &ends))
        return -1;
    int *one = arena_calloc(a, (size_t)ns + 1, sizeof(int)); /* one CTA per stage */
    if (!one)
        return -1;
    if (ilp_eval(&ends.ip, one, NULL) < 0) { /* not even that fits: no pipeline */
        *time_s = -1;
        *dram_bytes = 0;
        return 0;
    }
    for (int s = 0; s < ns; s++) {
        const double *per = ends.ist[s].period_s;
        wk[s] = fmin(per[0], per[1] * S);
        work[x->scheduler_shared ? 0 : p.stages[s].tensor] += wk[s];
    }
    /* pass 2: each stage at its share of its pool, as a balanced allocation gives it */
    double floor_s = 0, l2 = 0, dram = (d.ext_read + d.ext_write) / N, fill = 0, dram_once = 0;
    double storage = 0;
    for (int s = 0; s < ns; s++) {
        double pool = work[x->scheduler_shared ? 0 : p.stages[s].tensor];
        int c = pool > 0 ? (int)lround(S * wk[s] / pool) : 1;
        c = c < 1 ? 1 : c > S ? S : c;
        const pipe_at *e = stage_at_cached(x, &p, &d, s, c, tm, ends.ent[s], a);
        if (!e)
            return -1;
        if (e->period_s > floor_s)
            floor_s = e->period_s;
        l2 += e->l2_tile;
        dram += e->dram_tile;
        dram_once += e->dram_once;
        fill += e->fill_s;
        storage += e->queue_bytes;
        d.groups[s] = e->groups;
    }
    double inflight = roof_inflight_full(hw);
    double P = fmax(floor_s, fmax(work[0], work[1]) / S);
    P = fmax(P, l2 / roof_l2_Bps(hw, hw->sm_count, inflight, clk));
    double ring_rd, ring_wr, gather_tile, gather_held;
    dram += l2_shared_dram(x, &p, &d, N, storage, dram, 0, &ring_rd, &ring_wr, &gather_tile,
                           &gather_held);
    P = fmax(P, dram / roof_dram_Bps(hw, hw->sm_count, inflight));
    *time_s = cost_launch_s(hw, &x->c) + hw->dram_latency_ns * 1e-9 + fill +
              (double)(p.barriers + 1) * (N - 1) * P;
    *dram_bytes = kt_count_of(dram * N + dram_once + d.reduce_write);
    return 0;
}

int pipe_estimate(pipe_env *x, int first, int last, arena *a, double *time_s, int64_t *dram_bytes,
                  int *nstages)
{
    if (pipe_estimate_rows(x, first, last, a, time_s, dram_bytes, nstages))
        return -1;
    if (x->force_stage_of)
        return 0;
    ks_pipeline hp;
    int r = hid_build(x, first, last, NULL, 0, a, &hp);
    if (r < 0)
        return -1;
    if (r > 0 && (*time_s < 0 || hp.time_s < *time_s)) {
        *time_s = hp.time_s;
        *dram_bytes = kt_count_add(hp.dram_read_bytes, hp.dram_write_bytes);
        *nstages = hp.nstages;
    }
    return 0;
}

/* Relative and absolute (of the whole graph's sum) slack of pipe_estimate_lb against rounding:
 * its sums run in another order than pipe_estimate's (about 1e-16 relative per term). */
#define PIPE_LB_REL_SLACK 1e-9
#define PIPE_LB_ABS_SLACK 1e-9

/* What pipe_estimate_rows's stages move through L2 at least, whatever their CTA counts and
 * splits, with the model's own stages (design_stages's rule: a stage per op that epilogue_stage
 * does not fuse into its producer's). Per stage, per stream: the head's row-aligned streamed
 * inputs (a GEMM head's first operand apart) and gathered rows, and the row-aligned outputs that
 * leave the stage (an epilogue member reads its producer's registers; a broadcast operand may be
 * resident: neither is counted). stage_at's l2_tile holds all of them per tile (multicast >= 1),
 * so *l2 (their sum) over N tiles bounds each period's L2 bytes. Its fill is a period per group
 * of CTAs (one for a reduction), and a period is at least the L2 port time of the CTAs' bytes:
 * a row split (g = c groups) fills in at least a tile's bytes over one port, a GEMM split into
 * cols <= out_cols / PIPE_MIN_SLICE_COLS column slices (each reading the whole first operand) in
 * its first operand's bytes plus the rest over cols ports, a reduction in its bytes over every
 * SM's port: *fill_bytes sums those port-equivalent bytes per stream. 0, or -1 (memory). */
static int lb_stream_bytes(const pipe_env *x, int first, int last, int64_t M, arena *a,
                           double *l2, double *fill_bytes)
{
    const wl_graph *g = x->g;
    const op_work *w = x->w;
    int n = last - first + 1, ns = 0;
    int *stage_of = arena_alloc(a, (size_t)n, sizeof(int));
    double *acc = arena_alloc(a, 4 * (size_t)n, sizeof(double)); /* A, B, O, reduce per stage */
    int *head = arena_alloc(a, (size_t)n, sizeof(int));
    if (!stage_of || !acc || !head)
        return -1;
    *l2 = *fill_bytes = 0;
    for (int i = first; i <= last; i++) {
        stage_of[i - first] = -1;
        if (w[i].kind == OPK_FREE)
            continue;
        int s;
        if (x->ep_lo[i] <= first && first <= x->ep_hi[i]) { /* epilogue_stage's rule */
            s = stage_of[x->ep_prod[i] - first];
        } else {
            s = ns++;
            head[s] = i;
            acc[4 * (size_t)s] = acc[4 * (size_t)s + 1] = acc[4 * (size_t)s + 2] =
                acc[4 * (size_t)s + 3] = 0;
        }
        stage_of[i - first] = s;
    }
    for (int i = first; i <= last; i++) {
        int s = stage_of[i - first];
        if (s < 0)
            continue;
        const wl_op *o = &g->op[i];
        double *v = acc + 4 * (size_t)s;
        for (int j = 0; j < o->nin && head[s] == i; j++) {
            int rt = x->root[o->in[j]];
            double b = (double)w[i].in_bytes[j];
            if (b <= 0)
                continue;
            if (w[i].kind == OPK_GATHER && j == 0) {
                v[1] += (double)w[i].out_bytes; /* the table's rows the tiles read */
                continue;
            }
            int aligned = (row_aligned(x, rt, M) ||
                           (w[i].kind == OPK_GATHER && j == 1 && g->t[rt].elems % M == 0)) &&
                          !(w[i].kind == OPK_ATTN && j > 0 && !wl_attr_int(o, "causal", 0));
            if (aligned)
                v[w[i].kind == OPK_GEMM && j == 0 ? 0 : 1] += b;
        }
        for (int k = 0; k < o->nout; k++) {
            int t = x->root[o->out[k]];
            int leaves = x->max_reader[t] > last || x->must_write[t] || x->max_reader[t] < 0;
            int read_inside = 0; /* (only asked when the tensor does not leave) */
            for (int k2 = x->rd_start[t]; !leaves && k2 < x->rd_start[t + 1] && !read_inside; k2++) {
                int m = x->rd_op[k2];
                read_inside = m > i && m <= last && stage_of[m - first] != s;
            }
            if (!leaves && !read_inside)
                continue;
            if (row_aligned(x, t, M))
                v[2] += (double)tensor_out_bytes(x, i, k);
            else
                v[3] = 1;
        }
    }
    int body = hw_has_stage_body(x->hw);
    for (int s = 0; s < ns; s++) {
        const double *v = acc + 4 * (size_t)s;
        const op_work *hd = &w[head[s]];
        *l2 += v[0] + v[1] + v[2];
        if (v[3] != 0) {
            *fill_bytes += (v[0] + v[1] + v[2]) / x->hw->sm_count;
        } else if (hd->kind == OPK_GEMM && !body) {
            int64_t cols = hd->n / PIPE_MIN_SLICE_COLS;
            *fill_bytes += v[0] + (v[1] + v[2]) / (double)(cols > 1 ? cols : 1);
        } else {
            *fill_bytes += v[0] + v[1] + v[2];
        }
    }
    return 0;
}

double pipe_estimate_lb(const pipe_env *x, int first, int last, double budget_s, arena *a)
{
    const hw_gpu *hw = x->hw;
    int n = x->g->nop;
    int S = x->est_cand[1]; /* pipe_estimate's pool */
    int64_t M = stream_rows(x, first, last);
    double N = (double)cdiv64(M, Q_TILE_ROWS);
    double w[3];
    for (int k = 0; k < 3; k++) {
        const double *pre = x->lb_work + (size_t)k * ((size_t)n + 1);
        w[k] = (pre[last + 1] - pre[first]) * (1 - PIPE_LB_REL_SLACK) - PIPE_LB_ABS_SLACK * pre[n];
        w[k] = w[k] > 0 ? w[k] : 0;
    }
    double busy = x->scheduler_shared ? w[0] + w[1] + w[2]
                                      : fmax(fmax(w[0], w[1]), 0.5 * (w[0] + w[1] + w[2]));
    double t = (N - 1) / N * busy / S * (1 - PIPE_LB_REL_SLACK);
    double base = cost_launch_s(hw, &x->c) + hw->dram_latency_ns * 1e-9;
    double lb = base + (t > 0 ? t : 0);
    /* already decisive, an imposed design (other heads), or a hidden-dimension design possible
     * (it streams the hidden tensor through L2 differently): the math bound alone */
    if (lb >= budget_s || x->force_stage_of)
        return lb;
    arena_pos mark = arena_mark(a);
    hid_pat h;
    int hid = hid_applies(x, first, last, &h, a);
    arena_release(a, mark);
    if (hid != 0)
        return lb;
    /* the stages' fill at their CTAs' L2 ports, and N - 1 periods of at least the pipeline's L2
     * bytes per tile over the L2's bandwidth */
    double l2, fill;
    mark = arena_mark(a);
    int rc = lb_stream_bytes(x, first, last, M, a, &l2, &fill);
    arena_release(a, mark);
    if (rc)
        return lb;
    double l2_Bps = roof_l2_Bps(hw, hw->sm_count, roof_inflight_full(hw), x->c.clock_MHz);
    double tl2 = (N - 1) / N * l2 / l2_Bps * (1 - PIPE_LB_REL_SLACK);
    double tfill = fill / N / port_Bps(hw, x->c.clock_MHz) * (1 - PIPE_LB_REL_SLACK);
    return base + tfill + (tl2 > t ? tl2 : (t > 0 ? t : 0));
}

/* Per op, the least CTA-seconds of its math per stream (one CTA, or all SMs x #SMs), by the
 * pool its stage draws from (its own, or either for a possible epilogue member): the prefix
 * sums of pipe_estimate_lb. 0 or -1. */
static int lb_init(pipe_env *x, arena *a)
{
    const wl_graph *g = x->g;
    size_t n1 = (size_t)g->nop + 1;
    int S = x->est_cand[1];
    x->lb_work = arena_calloc(a, 3 * n1, sizeof(double));
    x->ep_prod = arena_alloc(a, n1, sizeof(int));
    x->ep_lo = arena_alloc(a, n1, sizeof(int));
    x->ep_hi = arena_alloc(a, n1, sizeof(int));
    if (!x->lb_work || !x->ep_prod || !x->ep_lo || !x->ep_hi)
        return -1;
    /* epilogue_stage's answer for every segment at once: op i joins the stage of its latest
     * producer p1 when every other producer of its inputs lies before the segment's first op
     * (so p1 is its one producer inside) and so does no non-weight input's (those must come from
     * inside): first in (second latest producer, min(p1, earliest non-weight producer)] */
    for (int i = 0; i < g->nop; i++) {
        const wl_op *o = &g->op[i];
        int p1 = -1, p2 = -1, nw = INT_MAX;
        for (int j = 0; j < o->nin; j++) {
            const wl_tensor *t = &g->t[x->root[o->in[j]]];
            int pr = t->producer;
            if (pr > p1) {
                p2 = p1;
                p1 = pr;
            } else if (pr < p1 && pr > p2) {
                p2 = pr;
            }
            if (t->kind != TK_WEIGHT && pr < nw)
                nw = pr;
        }
        int ok = (op_info_of(o->type)->flags & OPF_EPILOGUE) && x->w[i].flops_tensor <= 0 &&
                 p1 >= 0 && x->w[p1].kind != OPK_FREE;
        x->ep_prod[i] = p1;
        x->ep_lo[i] = p2 + 1;
        x->ep_hi[i] = ok ? (p1 < nw ? p1 : nw) : -1;
    }
    for (int i = 0; i < g->nop; i++) {
        const op_work *w = &x->w[i];
        double v = 0;
        int pool = 2;
        if (w->kind != OPK_FREE) {
            /* computed, not kept: rate rows are allocated for the ops the search meets */
            pipe_rate r1, rs;
            rate_eval(x, i, 1, &r1);
            rate_eval(x, i, S < x->hw->sm_count ? S : x->hw->sm_count, &rs);
            v = fmin(r1.compute_s, rs.compute_s * S);
            if (!(op_info_of(g->op[i].type)->flags & OPF_EPILOGUE) || w->flops_tensor > 0)
                pool = x->scheduler_shared
                           ? 0
                           : (w->flops_tensor > 0 && roof_tensor_rate(x->hw, w->cdt, x->c.clock_MHz) > 0) ||
                                 w->kind == OPK_ATTN;
        }
        for (int k = 0; k < 3; k++)
            x->lb_work[(size_t)k * n1 + (size_t)i + 1] =
                x->lb_work[(size_t)k * n1 + (size_t)i] + (k == pool ? v : 0);
    }
    return 0;
}

/* The selection search's coarser grid: 1, 2, 3, 4, 6, 8, 12, ... (powers of two and three times
 * them) plus sm/4, sm/3, sm/2 and sm itself, ascending. */
static void search_candidates(pipe_env *x, int S)
{
    int v[3 * 64], n = 0;
    for (int b = 1; b <= S && n < 120; b *= 2) {
        v[n++] = b;
        if (3 * b <= S)
            v[n++] = 3 * b;
    }
    v[n++] = S;
    if (S / 2 >= 1)
        v[n++] = S / 2;
    if (S / 3 >= 1)
        v[n++] = S / 3;
    if (S / 4 >= 1)
        v[n++] = S / 4;
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
            int t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
    x->search_ncand = 0;
    for (int i = 0; i < n; i++)
        if (v[i] >= 1 && v[i] <= S &&
            (x->search_ncand == 0 || x->search_cand[x->search_ncand - 1] != v[i]))
            x->search_cand[x->search_ncand++] = v[i];
}

/* Per op, the first op whose op_work is byte-identical: its work class. An op's rates and the
 * evaluations of a stage depend on its ops only through their work (and the stage's I/O), so
 * the ops of repeated layers share them (the rate rows and the stage cache are kept per class).
 * Works that differ only in padding bytes fall in two classes: fewer hits, the same values. */
static int *work_classes(const op_work *w, int n, arena *a)
{
    size_t cap = 16;
    while (cap < 2 * (size_t)n)
        cap *= 2;
    int *cls = arena_alloc(a, (size_t)n + 1, sizeof(int));
    int *slot = arena_alloc(a, cap, sizeof(int));
    if (!cls || !slot)
        return NULL;
    for (size_t k = 0; k < cap; k++)
        slot[k] = -1;
    for (int i = 0; i < n; i++) {
        size_t k = (size_t)hash_bytes(&w[i], sizeof w[i]) & (cap - 1);
        while (slot[k] >= 0 && memcmp(&w[slot[k]], &w[i], sizeof w[i]))
            k = (k + 1) & (cap - 1);
        if (slot[k] < 0)
            slot[k] = i;
        cls[i] = slot[k];
    }
    return cls;
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
    /* a stage_body runtime: one kernel of ctas_per_sm CTAs per SM (hw stage_body) */
    x->body_ctas_per_sm = hw_has_stage_body(hw) ? hw->body_ctas_per_sm : 1;
    if (x->body_ctas_per_sm < 1)
        x->body_ctas_per_sm = 1;
    x->body_sharing = x->body_ctas_per_sm;
    if (hw_has_stage_body(hw)) /* one kernel: every stage draws from the same CTA slots */
        x->scheduler_shared = 1;
    int S = hw->sm_count * x->body_ctas_per_sm;
    if (S > PIPE_MAX_CAND) /* GPUs beyond the table size: every count up to it, then the grid */
        S = PIPE_MAX_CAND;
    x->ncand = 0;
    for (int k = 1; k <= S; k++)
        x->cand[x->ncand++] = k;
    x->est_cand[0] = 1;
    x->est_cand[1] = S;
    search_candidates(x, S);
    size_t n = (size_t)g->nop;
    x->rate = arena_calloc(a, n + 1, sizeof *x->rate);
    x->rate_arena = &x->cache_arena;
    x->smem_cta = arena_calloc(a, n + 1, sizeof(double));
    x->regs_cta = arena_calloc(a, n + 1, sizeof(double));
    x->max_reader = arena_calloc(a, (size_t)g->ntensor + 1, sizeof(int));
    x->must_write = arena_calloc(a, (size_t)g->ntensor + 1, 1);
    x->split_k = arena_calloc(a, n + 1, sizeof(int));
    x->root = graph_storage_map(g, a);
    x->cache = arena_calloc(a, n + 1, sizeof *x->cache);
    x->rows = arena_alloc(a, (size_t)g->ntensor + 1, sizeof(int64_t));
    x->streams = arena_alloc(a, (size_t)g->ntensor + 1, 1);
    x->wclass = work_classes(w, g->nop, a);
    if (!x->rate || !x->smem_cta || !x->regs_cta || !x->max_reader || !x->must_write ||
        !x->split_k || !x->root || !x->cache || !x->rows || !x->streams || !x->wclass)
        return -1;
    for (int t = 0; t < g->ntensor; t++) {
        x->rows[t] = rows_of(&g->t[t]);
        x->streams[t] = (unsigned char)streams(x, t);
    }
    double regs_per_thread = hw_reg_bytes_per_thread(hw);
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
    if (lb_init(x, a))
        return -1;
    /* readers of every storage tensor, ascending (an op reading it twice listed twice) */
    x->rd_start = arena_calloc(a, (size_t)g->ntensor + 2, sizeof(int));
    if (!x->rd_start)
        return -1;
    int nrd = 0;
    for (int i = 0; i < g->nop; i++)
        if (w[i].kind != OPK_FREE)
            for (int j = 0; j < g->op[i].nin; j++) {
                x->rd_start[x->root[g->op[i].in[j]] + 1]++;
                nrd++;
            }
    for (int t = 0; t < g->ntensor; t++)
        x->rd_start[t + 1] += x->rd_start[t];
    x->rd_op = arena_calloc(a, (size_t)nrd + 1, sizeof(int));
    int *fillp = arena_calloc(a, (size_t)g->ntensor + 1, sizeof(int));
    if (!x->rd_op || !fillp)
        return -1;
    for (int i = 0; i < g->nop; i++)
        if (w[i].kind != OPK_FREE)
            for (int j = 0; j < g->op[i].nin; j++) {
                int rt = x->root[g->op[i].in[j]];
                x->rd_op[x->rd_start[rt] + fillp[rt]++] = i;
            }
    return 0;
}

void pipe_env_release(pipe_env *x)
{
    arena_free(&x->cache_arena);
    x->cache = NULL;
}
