/* vf: the vertical-fusion baseline - fusion planner and cost of fused groups.
 *
 * Planner: one pass over the topological order, the way TensorRT, Inductor, AStitch and Welder
 * group a graph. Every op either joins the group of one of its producers (the one that feeds it
 * the most bytes first) or starts a group. An op may join group G through edge tensor t when
 *   - epilogue: G is led by a GEMM and the op is pointwise (elementwise, cast, rope, copy-like,
 *     concat written in place) on the GEMM's output tile: bias, activation, residual add, cast;
 *   - row epilogue: a row op (norm, softmax, reduce) over the rows of a GEMM output, when one
 *     CTA can own whole rows: tm (the GEMM's CTA rows) x N x dtype bytes <= smem per SM (rows of
 *     128 always fit: that is the GEMM's own 128x128 tile);
 *   - stitch (AStitch): G is a pointwise/row group and a row op's row fits on chip:
 *     row bytes <= shared memory per SM (164 KiB on A100: 83968 bf16 elements);
 *   - gemm-chain (Welder): a GEMM reading, as its A operand with a weight B, a tile of a GEMM
 *     epilogue in G, when the intermediate tile of one CTA fits shared memory:
 *     tm (the producing GEMM's CTA rows, 128 for large M) x K x dtype bytes <= smem per SM;
 *   - never across index ops (gather, embedding, scatter, index_copy): they neither take a
 *     prologue nor an epilogue (TensorRT and the paper's baseline do not fuse them; Inductor
 *     fuses index_select into pointwise consumers, but the consumers here are GEMMs or concats
 *     feeding GEMMs); never into attention (a library flash-attention kernel) or before a GEMM
 *     (no prologue fusion into GEMMs);
 *   - forward ops only unless fuse_backward (then backward ops fuse among themselves);
 *     optimizer updates never;
 *   - the groups stay convex and their quotient graph acyclic: an op does not join G if one of
 *     its other inputs comes from a group that depends on G (no edge leaves and re-enters);
 *   - free ops (views) join their producer's group.
 * Intermediates only ever stay inside a group when they fit on chip, so there are no spills.
 *
 * Cost of a group: one kernel. DRAM bytes: its external inputs (read by a member, produced
 * outside; weights included; each once) and external outputs (read outside the group, graph
 * outputs, saved activations, or unread) only. Time: cost_eval on a synthetic op_work with the
 * kind, geometry and tile shape of the main op (the first GEMM, else the largest row op, else the
 * op with the most bytes) and FLOPs/SFU ops summed over the members; for GEMM-led groups whose
 * tensor FLOPs exceed the main GEMM's (chains), K grows so that the tile FLOPs equal the group's
 * (K_eff = tensor FLOPs / (2 M N batch)). cost.c adds tensor and SIMT time one after the other,
 * the temporal multiplexing of fused kernels (tensor_s / simt_s of each item). L2 residency
 * between groups uses l2.h exactly as bsp.c does between ops; intermediates of a group never
 * touch L2. */
#include "vf.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../l2.h"
#include "../op.h"
#include "../sched.h"

/* Bytes per KiB / MiB for the notes. */
#define KIB_BYTES 1024.0
#define MIB_BYTES (1024.0 * 1024.0)
/* Capacity of the per-group note parts (characters). */
enum { WHY_CHARS = 160, RULES_CHARS = 200, NOTE_CHARS = 400 };
/* Pad kernels inductor may put before one GEMM (A, B, bias). */
enum { VF_MAX_PADS = 3 };

typedef enum gkind {
    GK_FREE,   /* only views so far: no kernel, nothing joins */
    GK_GEMM,   /* led by a GEMM: epilogues, row epilogues, chains */
    GK_STITCH, /* pointwise and row ops stitched together */
    GK_CLOSED, /* attention, index ops, unfused phases: nothing joins */
    GK_EXCL,   /* an op run elsewhere (vf_run_masked): no item */
    GK_DEAD    /* merged into another group (inductor): no members, no item */
} gkind;

typedef struct vf_group {
    gkind kind;
    wl_phase phase;
    int first, last;      /* member ops, in order, linked through plan.next */
    int nmem, nreal;      /* members; members that are not views */
    int why_prod;         /* producer op of the recorded end reason, -1 none */
    const char *closed;   /* GK_CLOSED: why nothing joins */
    /* in the planner's scratch, "" when none (a group is tens of bytes, not hundreds: a graph
     * has one per op) */
    const char *why;      /* why the group ended (a consumer that did not join), at most
                             WHY_CHARS - 1 characters */
    const char *rules;    /* thresholds of the rules that fused it, "; "-separated, at most
                             RULES_CHARS - 1 characters (append_rule drops what would not fit) */
} vf_group;

/* The group graph (an edge h -> x when a member of x reads a tensor a member of h writes), for
 * the convexity queries of the planner: "does x depend on h?". A transitive closure (a bitset
 * per group) answers in O(1) but costs O(groups^2) memory and O(groups) per edge; here each
 * group keeps its predecessor and successor edges, and a topological order of the groups is
 * maintained as edges arrive (an edge against the order re-sorts only the groups between its
 * ends). A query searches backwards from x over groups after h in that order only, so it costs
 * what lies between the two groups, O(1) for the local edges of real graphs; memory is linear.
 * Merged groups (inductor) splice their edge lists into the surviving group and point to it. */
typedef struct vf_dag {
    int *ord;            /* per group: its position in the topological order */
    int *at;             /* per position: the group there, -1 for a merged one */
    int *alias;          /* per group: itself, or the group it was merged into */
    int *phead, *ptail, *shead, *stail; /* per group: predecessor / successor edge lists */
    int *enext, *eto;    /* per edge entry: next entry of its list, the group at the other end */
    int nent, cap;
    int *seen;           /* per group: the stamp of the last search that visited it */
    int stamp;
    int *stack, *cnt, *win, *pos; /* scratch of searches and re-sorts */
    int npos;            /* positions handed out */
} vf_dag;

typedef struct vf_plan {
    const hw_gpu *hw;
    const wl_graph *g;
    const op_work *w;
    int policy, fuse_backward;
    const unsigned char *exclude;
    int *grp, *ctx, *next, *root;
    int *rd_start, *rd_op;  /* per root tensor: the non-view ops reading it (CSR) */
    unsigned char *pinned;  /* per root: a graph output or saved activation aliases it */
    vf_group *gr;
    int ng;
    vf_dag d;
    arena *tmp;             /* the planner's scratch: the groups' why and rules strings */
    int oom;                /* 1: a string could not be kept (reported at the end) */
} vf_plan;

static int oom(const wl_graph *g, kt_err *e)
{
    return err_set(e, KT_EINTERNAL, g->file, NULL, "out of memory");
}

static int is_free(const vf_plan *p, int i)
{
    return p->w[i].kind == OPK_FREE;
}

/* Room for n groups and `edges` edges (each op input adds at most one). 0 or -1. */
static int dag_init(vf_dag *d, int n, int edges, arena *a)
{
    size_t N = (size_t)n + 1, E = (size_t)edges + 1;
    memset(d, 0, sizeof *d);
    int **v[] = {&d->ord, &d->at, &d->alias, &d->phead, &d->ptail, &d->shead, &d->stail,
                 &d->seen, &d->stack, &d->cnt, &d->win, &d->pos};
    for (size_t k = 0; k < sizeof v / sizeof *v; k++)
        if (!(*v[k] = arena_calloc(a, N, sizeof(int))))
            return -1;
    d->enext = arena_calloc(a, 2 * E, sizeof(int));
    d->eto = arena_calloc(a, 2 * E, sizeof(int));
    d->cap = (int)(2 * E);
    return d->enext && d->eto ? 0 : -1;
}

/* A new group: last in the order, no edges. */
static void dag_add(vf_dag *d, int id)
{
    d->ord[id] = d->npos;
    d->at[d->npos++] = id;
    d->alias[id] = id;
    d->phead[id] = d->ptail[id] = d->shead[id] = d->stail[id] = -1;
    d->seen[id] = 0;
}

static int dag_find(vf_dag *d, int x)
{
    while (d->alias[x] != x)
        x = d->alias[x] = d->alias[d->alias[x]];
    return x;
}

static void list_push(vf_dag *d, int *head, int *tail, int to)
{
    int k = d->nent++;
    d->eto[k] = to;
    d->enext[k] = -1;
    if (*tail >= 0)
        d->enext[*tail] = k;
    else
        *head = k;
    *tail = k;
}

/* Re-sort the groups at positions lo..hi topologically (by their edges among themselves) into
 * the same positions; every edge with an end outside already agrees with the order (see
 * dag_edge and dag_merge). */
static void dag_resort(vf_dag *d, int lo, int hi)
{
    int n = 0, s = ++d->stamp;
    for (int q = lo; q <= hi; q++)
        if (d->at[q] >= 0) {
            d->seen[d->at[q]] = s;
            d->pos[n] = q;
            d->win[n++] = d->at[q];
        }
    int nq = 0;
    for (int k = 0; k < n; k++) {
        int v = d->win[k], c = 0;
        for (int e = d->phead[v]; e >= 0; e = d->enext[e]) {
            int u = dag_find(d, d->eto[e]);
            c += u != v && d->seen[u] == s;
        }
        d->cnt[v] = c;
        if (!c)
            d->stack[nq++] = v;
    }
    for (int k = 0; k < nq; k++) { /* Kahn's algorithm, the stack as its queue */
        int v = d->stack[k];
        for (int e = d->shead[v]; e >= 0; e = d->enext[e]) {
            int w = dag_find(d, d->eto[e]);
            if (w != v && d->seen[w] == s && --d->cnt[w] == 0)
                d->stack[nq++] = w;
        }
    }
    for (int k = 0; k < nq; k++) {
        d->ord[d->stack[k]] = d->pos[k];
        d->at[d->pos[k]] = d->stack[k];
    }
}

/* Edge h -> x. */
static void dag_edge(vf_dag *d, int h, int x)
{
    h = dag_find(d, h);
    x = dag_find(d, x);
    if (h == x || (d->ptail[x] >= 0 && dag_find(d, d->eto[d->ptail[x]]) == h))
        return; /* a repeat of the last edge into x */
    list_push(d, &d->phead[x], &d->ptail[x], h);
    list_push(d, &d->shead[h], &d->stail[h], x);
    if (d->ord[h] > d->ord[x])
        dag_resort(d, d->ord[x], d->ord[h]);
}

/* 1 when x depends on h: a path h -> ... -> x. Groups before h in the order cannot lie on it. */
static int dag_reach(vf_dag *d, int h, int x)
{
    h = dag_find(d, h);
    x = dag_find(d, x);
    if (h == x || d->ord[h] > d->ord[x])
        return 0;
    int s = ++d->stamp, n = 0;
    d->seen[x] = s;
    d->stack[n++] = x;
    while (n) {
        int v = d->stack[--n];
        for (int e = d->phead[v]; e >= 0; e = d->enext[e]) {
            int u = dag_find(d, d->eto[e]);
            if (u == h)
                return 1;
            if (d->seen[u] != s && d->ord[u] > d->ord[h]) {
                d->seen[u] = s;
                d->stack[n++] = u;
            }
        }
    }
    return 0;
}

/* Group `from` merges into `into` (no path between them either way): `into` takes its edges.
 * Only edges of `from` can disagree with the order, and both their ends lie between the two
 * groups' positions: re-sort those. */
static void dag_merge(vf_dag *d, int into, int from)
{
    into = dag_find(d, into);
    from = dag_find(d, from);
    int lo = d->ord[into] < d->ord[from] ? d->ord[into] : d->ord[from];
    int hi = d->ord[into] < d->ord[from] ? d->ord[from] : d->ord[into];
    int bad = 0;
    for (int e = d->phead[from]; e >= 0 && !bad; e = d->enext[e])
        bad = d->ord[dag_find(d, d->eto[e])] > d->ord[into];
    for (int e = d->shead[from]; e >= 0 && !bad; e = d->enext[e])
        bad = d->ord[dag_find(d, d->eto[e])] < d->ord[into];
    int *lists[2][2] = {{&d->phead[into], &d->ptail[into]}, {&d->shead[into], &d->stail[into]}};
    int from_l[2][2] = {{d->phead[from], d->ptail[from]}, {d->shead[from], d->stail[from]}};
    for (int k = 0; k < 2; k++) {
        if (from_l[k][0] < 0)
            continue;
        if (*lists[k][1] >= 0)
            d->enext[*lists[k][1]] = from_l[k][0];
        else
            *lists[k][0] = from_l[k][0];
        *lists[k][1] = from_l[k][1];
    }
    d->phead[from] = d->ptail[from] = d->shead[from] = d->stail[from] = -1;
    d->at[d->ord[from]] = -1;
    d->alias[from] = into;
    if (bad)
        dag_resort(d, lo, hi);
}

static void fmt_bytes(char *b, size_t n, double bytes)
{
    if (bytes >= MIB_BYTES)
        snprintf(b, n, "%.4g MiB", bytes / MIB_BYTES);
    else
        snprintf(b, n, "%.4g KiB", bytes / KIB_BYTES);
}

static void append_rule(vf_plan *p, vf_group *G, const char *rule)
{
    if (!rule[0] || strstr(G->rules, rule))
        return;
    size_t len = strlen(G->rules), n = strlen(rule);
    if (len + n + 3 >= RULES_CHARS)
        return;
    char *r = arena_alloc(p->tmp, len + n + 3, 1);
    if (!r) {
        p->oom = 1;
        return;
    }
    memcpy(r, G->rules, len);
    if (len) {
        memcpy(r + len, "; ", 2);
        len += 2;
    }
    memcpy(r + len, rule, n + 1);
    G->rules = r;
}

static int new_group(vf_plan *p, int i, gkind k, const char *closed)
{
    int id = p->ng++;
    vf_group *G = &p->gr[id];
    memset(G, 0, sizeof *G);
    G->kind = k;
    G->phase = p->g->op[i].phase;
    G->first = G->last = i;
    G->nmem = 1;
    G->nreal = is_free(p, i) ? 0 : 1;
    G->why_prod = -1;
    G->closed = closed;
    G->why = G->rules = "";
    p->grp[i] = id;
    p->next[i] = -1;
    dag_add(&p->d, id);
    return id;
}

static void join_group(vf_plan *p, int id, int i)
{
    vf_group *G = &p->gr[id];
    p->next[G->last] = i;
    p->next[i] = -1;
    G->last = i;
    G->nmem++;
    if (!is_free(p, i))
        G->nreal++;
    p->grp[i] = id;
}

static void record_why(vf_plan *p, int id, int prod, const char *why)
{
    vf_group *G = &p->gr[id];
    if (prod > G->why_prod) {
        size_t n = 0;
        while (n < WHY_CHARS - 1 && why[n])
            n++;
        char *w = arena_alloc(p->tmp, n + 1, 1);
        if (!w) {
            p->oom = 1;
            return;
        }
        memcpy(w, why, n);
        w[n] = 0;
        G->why_prod = prod;
        G->why = w;
    }
}

/* Merge group `from` into group `into` (inductor: a consumer fuses all its generated
 * producers). Members stay in op order; everything that depended on `from` now depends on
 * `into`, and `into` on what `from` depended on. */
static void merge_group(vf_plan *p, int into, int from)
{
    vf_group *A = &p->gr[into], *B = &p->gr[from];
    int head = -1, tail = -1, x = A->first, y = B->first;
    while (x >= 0 || y >= 0) {
        int take;
        if (y < 0 || (x >= 0 && x < y)) {
            take = x;
            x = p->next[x];
        } else {
            take = y;
            y = p->next[y];
        }
        if (tail < 0)
            head = take;
        else
            p->next[tail] = take;
        tail = take;
        p->grp[take] = into;
    }
    p->next[tail] = -1;
    A->first = head;
    A->last = tail;
    A->nmem += B->nmem;
    A->nreal += B->nreal;
    append_rule(p, A, B->rules);
    dag_merge(&p->d, into, from);
    B->kind = GK_DEAD;
    B->nmem = B->nreal = 0;
    B->first = B->last = -1;
}

static int fusable_phase(const vf_plan *p, const wl_op *o)
{
    return o->phase == PH_FWD || (p->fuse_backward && o->phase == PH_BWD);
}

/* Bytes of fp32 accumulators a CTA may hold in registers: half the register file of an SM
 * (the other half for operands, addresses and the pipeline; CUTLASS sizes its warp tiles so). */
#define VF_ACC_RF_SHARE 0.5
enum { VF_ACC_BYTES = 4 };

const char *vf_policy_name(int policy)
{
    static const char *const N[VF_NPOLICIES] = {"inductor", "paper", "rules"};
    return policy >= 0 && policy < VF_NPOLICIES ? N[policy] : "?";
}

int vf_policy_parse(const char *s)
{
    for (int i = 0; i < VF_NPOLICIES; i++)
        if (!strcmp(s, vf_policy_name(i)))
            return i;
    return -1;
}

/* Why inductor leaves an op to its library: matmuls to cuBLAS, convolutions to cuDNN
 * (aten.convolution is an extern kernel of torch.compile; its pointwise neighbours become
 * generated kernels of their own). */
static const char *library_why(int type)
{
    return op_is_conv(type) ? "inductor: convolutions stay library calls (no fusion into cuDNN)"
                            : "inductor: matmuls stay library calls (no fusion into cuBLAS)";
}

static int is_pointwise(const vf_plan *p, int i)
{
    op_fuse fc = op_info_of(p->g->op[i].type)->fuse;
    return p->w[i].kind == OPK_STREAM && (fc == FUSE_POINTWISE || fc == FUSE_INPLACE);
}

/* The fusion rules' one capacity test: `bytes` of on-chip tiles (described by `what`, e.g.
 * "rows 128x128 bf16") must fit one SM's shared memory. The test and its threshold go into rule
 * ("<label>: <what> = B <= smem S") when it fits, into why (">") when not. 0 or -1. */
static int smem_fits(const vf_plan *p, const char *label, const char *what, double bytes, char *why,
                     size_t nwhy, char *rule, size_t nrule)
{
    double smem = hw_smem_bytes(p->hw);
    char sm[32], b[32];
    fmt_bytes(sm, sizeof sm, smem);
    fmt_bytes(b, sizeof b, bytes);
    int fits = bytes <= smem;
    snprintf(fits ? rule : why, fits ? nrule : nwhy, "%s: %s = %s %s smem %s", label, what, b,
             fits ? "<=" : ">", sm);
    return fits ? 0 : -1;
}

/* "RxC dt" (or "C dt" for one row) and its bytes. */
static double tile_desc(char *buf, size_t n, int64_t rows, int64_t cols, dtype dt)
{
    if (rows)
        snprintf(buf, n, "%lldx%lld %s", (long long)rows, (long long)cols, dt_name(dt));
    else
        snprintf(buf, n, "%lld %s", (long long)cols, dt_name(dt));
    return (double)(rows ? rows : 1) * (double)cols * dt_bytes(dt);
}

/* Under inductor a gather is an indexed load inside a generated kernel; MoE routing's permutes
 * stay library (custom-op) kernels. */
static int indexed_load(const wl_op *o, const op_work *w)
{
    return w->kind == OPK_GATHER && !op_is_route(o->type);
}

/* Is tensor t stored by its producer whatever op i does: read by another op, a graph output
 * or saved for the backward? (Inductor inlines a pointwise producer into its one consumer.) */
static int realized(const vf_plan *p, int t, int i)
{
    int r = p->root[t];
    if (p->pinned[r])
        return 1;
    for (int k = p->rd_start[r]; k < p->rd_start[r + 1]; k++)
        if (p->rd_op[k] != i)
            return 1;
    return 0;
}

/* May op i join group id through tensor t (produced by op prod in the group)? 0 and *ctx_out
 * (the GEMM whose tile i works on, -1 for stitched ops) with the threshold text in rule, or -1
 * with the reason in why. */
static int rule_check(const vf_plan *p, int id, int i, int t, int prod, int *ctx_out, char *why,
                      size_t nwhy, char *rule, size_t nrule)
{
    const wl_graph *g = p->g;
    const wl_op *o = &g->op[i];
    const op_work *w = &p->w[i];
    const vf_group *G = &p->gr[id];
    rule[0] = 0;
    if (G->kind == GK_CLOSED) {
        snprintf(why, nwhy, "%s", G->closed);
        return -1;
    }
    if (G->kind == GK_FREE) {
        snprintf(why, nwhy, "view of a tensor from outside");
        return -1;
    }
    int inductor = p->policy == VF_INDUCTOR;
    if (op_is_index(o->type) && !(inductor && indexed_load(o, w))) {
        snprintf(why, nwhy, "next op is %s (%s)",
                 op_is_route(o->type) ? "mixture-of-experts routing" : w->kind == OPK_GATHER ? "a gather"
                 : w->kind == OPK_SCATTER ? "a scatter" : "an index op",
                 op_name(o->type));
        return -1;
    }
    if (w->kind == OPK_ATTN) {
        snprintf(why, nwhy, "next op is attention (a library kernel)");
        return -1;
    }
    if (o->phase != G->phase) {
        snprintf(why, nwhy, "phase boundary (%s op)", o->phase == PH_BWD ? "backward" : "forward");
        return -1;
    }
    int gemm = p->ctx[prod];
    const wl_tensor *tt = &g->t[t];
    if (inductor && (G->kind == GK_GEMM || w->kind == OPK_GEMM || op_is_conv(o->type))) {
        snprintf(why, nwhy, "%s", library_why(o->type));
        return -1;
    }
    if (inductor && w->kind == OPK_ROW && w->col_reduce && w->rows > 1 && realized(p, t, i)) {
        /* the reduction walks its input column by column (outputs x reduced rows) while the
         * producer wrote it row by row: Inductor's scheduler fuses a pointwise producer into
         * a reduction only when both index the buffer alike (torch/_inductor scheduler
         * can_fuse), so a producer output that is stored anyway (read by a GEMM, saved) is
         * read back by a kernel of its own (H200 traces: every bias gradient of MGN,
         * GraphCast and NeRF is a triton_*_fused_sum kernel after the pointwise kernel) */
        snprintf(why, nwhy, "inductor: a column reduction of a stored tensor is its own kernel");
        return -1;
    }
    if (w->kind == OPK_GATHER) { /* inductor: a gather is an indexed load of a generated kernel */
        *ctx_out = -1;
        return 0;
    }
    if (w->kind == OPK_GEMM) {
        if (G->kind != GK_GEMM || gemm < 0) {
            snprintf(why, nwhy, "next op is a gemm (no prologue fusion into gemms)");
            return -1;
        }
        if (op_is_conv(o->type) || op_is_conv(g->op[gemm].type)) {
            /* a convolution's input tile is a window over neighbouring output rows of its
             * producer, and an NCHW output tile is not a row panel of the next GEMM: cuDNN's
             * runtime fusion chains pointwise epilogues only */
            snprintf(why, nwhy, "gemm-chain: convolutions are not chained (epilogues only)");
            return -1;
        }
        if (o->in[0] != t) {
            snprintf(why, nwhy, "gemm-chain: intermediate is the next gemm's B operand");
            return -1;
        }
        if (g->t[o->in[1]].kind != TK_WEIGHT) {
            snprintf(why, nwhy, "gemm-chain: next gemm's B operand is an activation");
            return -1;
        }
        const op_work *pw = &p->w[gemm];
        if (w->m != pw->m || w->batch != pw->batch) {
            snprintf(why, nwhy, "gemm-chain: row tiling differs (%lld vs %lld rows)",
                     (long long)(w->m * w->batch), (long long)(pw->m * pw->batch));
            return -1;
        }
        cost_tiling ct, nt;
        cost_tile(p->hw, pw, p->hw->sm_count, &ct);
        cost_tile(p->hw, w, p->hw->sm_count, &nt);
        /* every resource of the chained kernel: the intermediate tile and the next GEMM's whole
         * weight panel (K x its tile columns) in shared memory, the next GEMM's accumulators in
         * registers */
        double acc = (double)ct.tm * (double)nt.tn * VF_ACC_BYTES;
        double rf = p->hw->registers_per_sm_KiB * 1024.0 * VF_ACC_RF_SHARE;
        if (acc > rf) {
            snprintf(why, nwhy, "gemm-chain: accumulators %lldx%lld fp32 = %.4g KiB > %.4g KiB of "
                     "registers", (long long)ct.tm, (long long)nt.tn, acc / 1024, rf / 1024);
            return -1;
        }
        /* ... and, in shared memory at once: the intermediate tile, the next weight panel and
         * the producing GEMM's own multi-stage operand buffers (its mainloop still runs) */
        char d1[48], d2[48], d[160];
        double bytes = tile_desc(d1, sizeof d1, ct.tm, w->k, tt->dt) +
                       tile_desc(d2, sizeof d2, w->k, nt.tn, tt->dt) + ct.smem_per_cta_bytes;
        snprintf(d, sizeof d, "intermediate %s + weight panel %s + operand stages %.4g KiB", d1, d2,
                 ct.smem_per_cta_bytes / KIB_BYTES);
        if (smem_fits(p, "gemm-chain", d, bytes, why, nwhy, rule, nrule))
            return -1;
        *ctx_out = i;
        return 0;
    }
    if (w->kind == OPK_ROW) {
        const wl_tensor *x = &g->t[o->in[op_info_of(o->type)->row_input]];
        if (G->kind == GK_GEMM && gemm >= 0) {
            const op_work *pw = &p->w[gemm];
            cost_tiling ct;
            cost_tile(p->hw, pw, p->hw->sm_count, &ct);
            if (w->row_len != pw->n || w->rows != pw->m * pw->batch) {
                snprintf(why, nwhy, "row epilogue: row of %lld is not a row of the gemm output",
                         (long long)w->row_len);
                return -1;
            }
            char d[64], dd[80];
            double bytes = tile_desc(d, sizeof d, ct.tm, w->row_len, x->dt);
            snprintf(dd, sizeof dd, "rows %s", d);
            if (smem_fits(p, "row epilogue", dd, bytes, why, nwhy, rule, nrule))
                return -1;
            *ctx_out = gemm;
            return 0;
        }
        char d[64], dd[80];
        double bytes = tile_desc(d, sizeof d, 0, w->row_len, x->dt);
        snprintf(dd, sizeof dd, "row %s", d);
        if (smem_fits(p, "stitch", dd, bytes, why, nwhy, rule, nrule))
            return -1;
        *ctx_out = -1;
        return 0;
    }
    if (is_pointwise(p, i)) {
        if (G->kind == GK_GEMM && gemm >= 0 && op_info_of(o->type)->fuse != FUSE_INPLACE &&
            g->t[o->out[0]].elems > tt->elems) {
            snprintf(why, nwhy, "%s broadcasts beyond the gemm tile", op_name(o->type));
            return -1;
        }
        *ctx_out = G->kind == GK_GEMM ? gemm : -1;
        return 0;
    }
    snprintf(why, nwhy, "next op (%s) does not fuse", op_name(o->type));
    return -1;
}

/* Kind of the group an op starts. */
static gkind start_kind(const vf_plan *p, int i, const char **closed)
{
    const wl_op *o = &p->g->op[i];
    const op_work *w = &p->w[i];
    *closed = NULL;
    if (w->kind == OPK_FREE)
        return GK_FREE;
    if (!fusable_phase(p, o)) {
        *closed = o->phase == PH_OPT ? "optimizer update not fused" : "backward not fused";
        return GK_CLOSED;
    }
    const op_info *inf = op_info_of(o->type);
    if ((inf->fuse == FUSE_GEMM || op_is_conv(o->type)) && p->policy == VF_INDUCTOR) {
        *closed = library_why(o->type);
        return GK_CLOSED;
    }
    if (inf->fuse == FUSE_GEMM)
        return GK_GEMM;
    if (p->policy == VF_INDUCTOR && indexed_load(o, w))
        return GK_STITCH;
    if (inf->fuse == FUSE_NONE) {
        *closed = inf->fuse_why;
        return GK_CLOSED;
    }
    if (w->kind == OPK_ROW || is_pointwise(p, i))
        return GK_STITCH;
    *closed = "op does not fuse";
    return GK_CLOSED;
}

/* Place op i: join a producer's group or start one; then record the group-graph edges. */
static void place(vf_plan *p, int i)
{
    const wl_graph *g = p->g;
    const wl_op *o = &g->op[i];
    int joined = -1;
    if (p->exclude && p->exclude[i]) {
        new_group(p, i, GK_EXCL, NULL);
    } else if (is_free(p, i)) {
        int prod = o->nin ? g->t[o->in[0]].producer : -1;
        if (prod >= 0 && p->gr[p->grp[prod]].kind != GK_EXCL) {
            join_group(p, p->grp[prod], i);
            p->ctx[i] = p->ctx[prod];
        } else {
            new_group(p, i, GK_FREE, NULL);
            p->ctx[i] = -1;
        }
    } else {
        /* candidate producer groups, the edge with the most bytes first */
        int cand[OP_MAXIN], edge[OP_MAXIN], nc = 0;
        for (int j = 0; j < o->nin && nc < OP_MAXIN; j++) {
            int t = o->in[j], prod = g->t[t].producer;
            if (prod < 0 || p->gr[p->grp[prod]].kind == GK_EXCL)
                continue;
            int dup = 0;
            for (int k = 0; k < nc; k++)
                if (p->grp[g->t[edge[k]].producer] == p->grp[prod]) {
                    dup = 1;
                    if (g->t[t].bytes > g->t[edge[k]].bytes)
                        edge[k] = t;
                }
            if (!dup) {
                cand[nc] = p->grp[prod];
                edge[nc++] = t;
            }
        }
        for (int a = 1; a < nc; a++) /* insertion sort, stable, bytes descending */
            for (int b = a; b > 0 && g->t[edge[b]].bytes > g->t[edge[b - 1]].bytes; b--) {
                int tc = cand[b], te = edge[b];
                cand[b] = cand[b - 1];
                edge[b] = edge[b - 1];
                cand[b - 1] = tc;
                edge[b - 1] = te;
            }
        char why[WHY_CHARS], rule[RULES_CHARS];
        int fus = fusable_phase(p, o);
        for (int k = 0; k < nc; k++) {
            int id = cand[k], prod = g->t[edge[k]].producer, cx = -1;
            if (joined >= 0) {
                snprintf(why, sizeof why, "next op %s joined another group", o->name);
                record_why(p, id, prod, why);
                continue;
            }
            if (!fus) {
                snprintf(why, sizeof why, "next op is %s (not fused)",
                         o->phase == PH_OPT ? "an optimizer update" : "backward");
                record_why(p, id, prod, why);
                continue;
            }
            if (rule_check(p, id, i, edge[k], prod, &cx, why, sizeof why, rule, sizeof rule)) {
                record_why(p, id, prod, why);
                continue;
            }
            /* convexity: no other input may come from a group that depends on this one */
            int cyc = -1;
            for (int j = 0; j < o->nin && cyc < 0; j++) {
                int q = g->t[o->in[j]].producer;
                if (q >= 0 && p->grp[q] != id && dag_reach(&p->d, id, p->grp[q]))
                    cyc = q;
            }
            if (cyc >= 0) {
                snprintf(why, sizeof why, "fusing %s would re-enter the group through %s", o->name,
                         g->op[cyc].name);
                record_why(p, id, prod, why);
                continue;
            }
            join_group(p, id, i);
            p->ctx[i] = cx;
            append_rule(p, &p->gr[id], rule);
            joined = id;
        }
        /* inductor: the consumer's kernel also computes its other generated producers
         * (horizontal + vertical fusion), when that keeps the group graph acyclic */
        if (joined >= 0 && p->policy == VF_INDUCTOR && p->gr[joined].kind == GK_STITCH)
            for (int k = 0; k < nc; k++) {
                int id = cand[k], prod = g->t[edge[k]].producer, cx = -1;
                if (id == joined || p->gr[id].kind != GK_STITCH ||
                    p->gr[id].phase != p->gr[joined].phase || dag_reach(&p->d, joined, id) ||
                    dag_reach(&p->d, id, joined) ||
                    rule_check(p, id, i, edge[k], prod, &cx, why, sizeof why, rule, sizeof rule))
                    continue;
                int cyc = 0;
                for (int j = 0; j < o->nin && !cyc; j++) {
                    int q = g->t[o->in[j]].producer;
                    int gq = q >= 0 ? p->grp[q] : -1;
                    cyc = gq >= 0 && gq != id && gq != joined &&
                          (dag_reach(&p->d, id, gq) || dag_reach(&p->d, joined, gq));
                }
                if (cyc)
                    continue;
                merge_group(p, joined, id);
                append_rule(p, &p->gr[joined], rule);
            }
        if (joined < 0) {
            const char *closed;
            gkind k = start_kind(p, i, &closed);
            new_group(p, i, k, closed);
            p->ctx[i] = k == GK_GEMM ? i : -1;
        }
    }
    int me = p->grp[i];
    for (int j = 0; j < o->nin; j++) {
        int q = g->t[o->in[j]].producer;
        if (q >= 0 && p->grp[q] != me)
            dag_edge(&p->d, p->grp[q], me);
    }
}

/* Storage roots (through views), readers of each root, pinned roots. */
static int index_tensors(vf_plan *p, arena *a, kt_err *e)
{
    const wl_graph *g = p->g;
    int nt = g->ntensor;
    p->root = arena_calloc(a, (size_t)nt, sizeof(int));
    p->rd_start = arena_calloc(a, (size_t)nt + 1, sizeof(int));
    p->pinned = arena_calloc(a, (size_t)nt, 1);
    if (!p->root || !p->rd_start || !p->pinned)
        return oom(g, e);
    for (int t = 0; t < nt; t++)
        p->root[t] = t;
    for (int i = 0; i < g->nop; i++)
        if (is_free(p, i) && g->op[i].nin && g->op[i].nout)
            p->root[g->op[i].out[0]] = p->root[g->op[i].in[0]];
    for (int t = 0; t < nt; t++)
        if (g->t[t].kind == TK_OUTPUT || g->t[t].saved)
            p->pinned[p->root[t]] = 1;
    int nrd = 0;
    for (int i = 0; i < g->nop; i++)
        if (!is_free(p, i))
            for (int j = 0; j < g->op[i].nin; j++) {
                p->rd_start[p->root[g->op[i].in[j]] + 1]++;
                nrd++;
            }
    for (int t = 0; t < nt; t++)
        p->rd_start[t + 1] += p->rd_start[t];
    p->rd_op = arena_calloc(a, (size_t)(nrd ? nrd : 1), sizeof(int));
    int *fill = arena_calloc(a, (size_t)nt, sizeof(int));
    if (!p->rd_op || !fill)
        return oom(g, e);
    for (int i = 0; i < g->nop; i++)
        if (!is_free(p, i))
            for (int j = 0; j < g->op[i].nin; j++) {
                int r = p->root[g->op[i].in[j]];
                p->rd_op[p->rd_start[r] + fill[r]++] = i;
            }
    return 0;
}

/* Kernel order: topological order of the group graph, earliest first member first (Kahn's
 * algorithm with the ready groups in a heap by first member: O((groups + edges) log groups)).
 * Returns the number of live (not merged) groups listed in order, or -1. */
static int group_order(const vf_plan *p, int *order, arena *a, kt_err *e)
{
    const wl_graph *g = p->g;
    int ng = p->ng;
    int *indeg = arena_calloc(a, (size_t)ng + 1, sizeof(int));
    int *out_start = arena_calloc(a, (size_t)ng + 2, sizeof(int));
    int *heap = arena_calloc(a, (size_t)ng + 1, sizeof(int));
    if (!indeg || !out_start || !heap)
        return oom(g, e);
    /* the group edges, one per op input read across groups, by source group (CSR) */
    int nedge = 0;
    for (int i = 0; i < g->nop; i++)
        for (int j = 0; j < g->op[i].nin; j++) {
            int q = g->t[g->op[i].in[j]].producer;
            if (q >= 0 && p->grp[q] != p->grp[i]) {
                indeg[p->grp[i]]++;
                out_start[p->grp[q] + 1]++;
                nedge++;
            }
        }
    for (int x = 0; x < ng; x++)
        out_start[x + 1] += out_start[x];
    int *out_to = arena_calloc(a, (size_t)nedge + 1, sizeof(int));
    int *fill = arena_calloc(a, (size_t)ng + 1, sizeof(int));
    if (!out_to || !fill)
        return oom(g, e);
    for (int i = 0; i < g->nop; i++)
        for (int j = 0; j < g->op[i].nin; j++) {
            int q = g->t[g->op[i].in[j]].producer;
            if (q >= 0 && p->grp[q] != p->grp[i])
                out_to[out_start[p->grp[q]] + fill[p->grp[q]]++] = p->grp[i];
        }
    int live = 0, nh = 0;
    for (int x = 0; x < ng; x++) {
        if (p->gr[x].kind == GK_DEAD)
            continue;
        live++;
        if (!indeg[x]) {
            heap[nh++] = x;
            for (int c = nh - 1; c > 0 && p->gr[heap[(c - 1) / 2]].first > p->gr[heap[c]].first;
                 c = (c - 1) / 2) {
                int t = heap[c];
                heap[c] = heap[(c - 1) / 2];
                heap[(c - 1) / 2] = t;
            }
        }
    }
    for (int n = 0; n < live; n++) {
        if (!nh)
            return err_set(e, KT_EINTERNAL, g->file, NULL, "fusion groups form a cycle");
        int best = heap[0];
        heap[0] = heap[--nh];
        for (int c = 0;;) { /* sift down */
            int l = 2 * c + 1, m = c;
            if (l < nh && p->gr[heap[l]].first < p->gr[heap[m]].first)
                m = l;
            if (l + 1 < nh && p->gr[heap[l + 1]].first < p->gr[heap[m]].first)
                m = l + 1;
            if (m == c)
                break;
            int t = heap[c];
            heap[c] = heap[m];
            heap[m] = t;
            c = m;
        }
        order[n] = best;
        /* release the edges leaving best */
        for (int k = out_start[best]; k < out_start[best + 1]; k++) {
            int x = out_to[k];
            if (--indeg[x] == 0) {
                heap[nh++] = x;
                for (int c = nh - 1;
                     c > 0 && p->gr[heap[(c - 1) / 2]].first > p->gr[heap[c]].first;
                     c = (c - 1) / 2) {
                    int t = heap[c];
                    heap[c] = heap[(c - 1) / 2];
                    heap[(c - 1) / 2] = t;
                }
            }
        }
    }
    return live;
}

/* Scratch for one group's external tensors. */
typedef struct vf_scratch {
    int *mark;      /* per tensor: group id + 1 when listed for the current group */
    int64_t *bytes; /* per tensor: bytes of the external read/write */
    int *xin, *xout;
    int nin, nout;
} vf_scratch;

static int is_member(const vf_plan *p, int id, int op)
{
    return op >= 0 && p->grp[op] == id;
}

/* An output root of group id is external when something outside reads it, it is pinned
 * (graph output, saved activation) or nothing reads it at all. */
static int external_out(const vf_plan *p, int id, int r)
{
    if (p->pinned[r] || p->rd_start[r] == p->rd_start[r + 1])
        return 1;
    for (int k = p->rd_start[r]; k < p->rd_start[r + 1]; k++)
        if (!is_member(p, id, p->rd_op[k]))
            return 1;
    return 0;
}

/* Main op of a group: first GEMM, else the row op with the most bytes, else the op with the
 * most bytes (unique bytes of the op alone). */
static int main_op(const vf_plan *p, int id)
{
    int gemm = -1, row = -1, any = -1;
    int64_t rowb = -1, anyb = -1;
    for (int i = p->gr[id].first; i >= 0; i = p->next[i]) {
        const op_work *w = &p->w[i];
        if (w->kind == OPK_FREE)
            continue;
        if (w->kind == OPK_GEMM && gemm < 0)
            gemm = i;
        int64_t b = w->out_bytes;
        for (int j = 0; j < w->nin; j++)
            b = kt_count_add(b, w->in_bytes[j]);
        if (w->kind == OPK_ROW && b > rowb) {
            row = i;
            rowb = b;
        }
        if (b > anyb) {
            any = i;
            anyb = b;
        }
    }
    return gemm >= 0 ? gemm : row >= 0 ? row : any >= 0 ? any : p->gr[id].first;
}

/* List the group's external inputs and outputs (roots, with bytes) into s. */
static void externals(const vf_plan *p, int id, vf_scratch *s)
{
    const wl_graph *g = p->g;
    s->nin = s->nout = 0;
    for (int i = p->gr[id].first; i >= 0; i = p->next[i]) {
        if (is_free(p, i))
            continue;
        const wl_op *o = &g->op[i];
        const op_work *w = &p->w[i];
        for (int j = 0; j < o->nin; j++) {
            int r = p->root[o->in[j]];
            if (w->in_bytes[j] <= 0 || is_member(p, id, g->t[r].producer))
                continue;
            if (s->mark[r] != id + 1) {
                s->mark[r] = id + 1;
                s->bytes[r] = 0;
                s->xin[s->nin++] = r;
            }
            if (w->in_bytes[j] > s->bytes[r])
                s->bytes[r] = w->in_bytes[j];
        }
    }
    for (int i = p->gr[id].first; i >= 0; i = p->next[i]) {
        if (is_free(p, i))
            continue;
        const wl_op *o = &g->op[i];
        for (int j = 0; j < o->nout; j++) {
            int r = o->out[j];
            if (!external_out(p, id, r))
                continue;
            s->mark[r] = id + 1;
            s->bytes[r] = o->nout == 1 ? p->w[i].out_bytes : g->t[r].bytes;
            s->xout[s->nout++] = r;
        }
    }
}

/* DRAM bytes a generated kernel's gathers read beyond each table's one first read: the rows
 * miss L2 as LRU shared with the kernel's other DRAM traffic (`traffic` less the table) lets
 * them, in each L2 half (l2.c l2_gather_dram_bytes, the model of the pipelines' gathered
 * tables). Gathers of one table in the group share it. (H200, hw/calibrate/apps
 * gather_probe.py: Inductor's cat(x[src], x[dst], e) re-reads 38% of MGN's gathered rows from
 * DRAM with a 16.8 MB table and 68% of GraphCast's with 42 MB; validation/apps
 * h200-gather-probe.csv.) */
static int64_t gather_refetch(const vf_plan *p, int id, double traffic)
{
    const wl_graph *g = p->g;
    int parts = p->hw->l2_partitions > 0 ? p->hw->l2_partitions : 1;
    double cap = hw_l2_bytes(p->hw) / parts, refetch = 0;
    for (int i = p->gr[id].first; i >= 0; i = p->next[i]) {
        if (p->w[i].kind != OPK_GATHER)
            continue;
        int r = p->root[g->op[i].in[0]], seen = 0;
        for (int j = p->gr[id].first; j != i && !seen; j = p->next[j])
            seen = p->w[j].kind == OPK_GATHER && p->root[g->op[j].in[0]] == r;
        if (seen) /* counted with the table's first gather */
            continue;
        double table = 0, gathered = 0;
        for (int j = i; j >= 0; j = p->next[j])
            if (p->w[j].kind == OPK_GATHER && p->root[g->op[j].in[0]] == r) {
                table = fmax(table, (double)p->w[j].in_bytes[0]);
                gathered += (double)p->w[j].in_l2_bytes - (double)p->w[j].in_bytes[1];
            }
        double dram = l2_gather_dram_bytes(cap, parts, fmax(0.0, traffic - table), table, table,
                                           gathered);
        refetch += fmax(0.0, dram - table);
    }
    return (int64_t)fmin(refetch, KT_COUNT_LIMIT);
}

/* Synthetic work of a group (see the file comment). 0 or -1 on overflow. */
static int group_work(const vf_plan *p, int id, const vf_scratch *s, op_work *gw)
{
    const wl_graph *g = p->g;
    int m = main_op(p, id);
    *gw = p->w[m];
    if (gw->kind == OPK_FREE)
        return 0;
    int64_t ft = 0, fs = 0, sfu = 0, inb = 0, outb = 0;
    for (int i = p->gr[id].first; i >= 0; i = p->next[i])
        if (wl_add(ft, p->w[i].flops_tensor, &ft) || wl_add(fs, p->w[i].flops_simt, &fs) ||
            wl_add(sfu, p->w[i].sfu_ops, &sfu))
            return -1;
    for (int k = 0; k < s->nin; k++)
        if (wl_add(inb, s->bytes[s->xin[k]], &inb))
            return -1;
    for (int k = 0; k < s->nout; k++)
        if (wl_add(outb, s->bytes[s->xout[k]], &outb))
            return -1;
    const wl_op *mo = &g->op[m];
    for (int j = 0; j < mo->nin; j++)
        if (is_member(p, id, g->t[p->root[mo->in[j]]].producer))
            gw->in_bytes[j] = 0;
    /* generated code (Triton under inductor, else a hand-fused kernel): every non-library
     * kernel under inductor (gathers become indexed loads), multi-op groups otherwise */
    int lib = gw->kind == OPK_GEMM || gw->kind == OPK_ATTN || op_is_conv(gw->type) ||
              gw->kind == OPK_SORT || /* topk and sort stay ATen calls under inductor */
              op_is_route(gw->type) || /* MoE permute/unpermute: library (custom-op) kernels */
              (gw->kind == OPK_SCATTER && gw->type != OP_EMBEDDING_BWD); /* inductor falls back
              to ATen's index_add/scatter_add but decomposes the embedding backward */
    if (!lib && (p->policy == VF_INDUCTOR || p->gr[id].nreal >= 2)) {
        gw->generated = 1;
        gw->refetch_bytes = gather_refetch(p, id, (double)inb + (double)outb);
    }
    if (gw->kind == OPK_GEMM && ft > p->w[m].flops_tensor) {
        gw->align1 = 0; /* a fused chain kernel pads its operands: no cuBLAS alignment class */
        double mnb2 = 2.0 * (double)gw->m * (double)gw->n * (double)gw->batch;
        if (mnb2 > 0) {
            double k = (double)ft / mnb2;
            int64_t ki = (int64_t)k;
            gw->k = ki + ((double)ki < k);
        }
    }
    gw->flops_tensor = ft;
    gw->flops_simt = fs;
    gw->sfu_ops = sfu;
    gw->in_l2_bytes = inb;
    gw->out_bytes = outb;
    return 0;
}

/* Inductor's pad_mm (torch/_inductor/fx_passes/pad_mm.py, PyTorch 2.x): an alignment-1 GEMM
 * with an unaligned K or N gets zero-padded copies of the operands that carry it (one generated
 * copy kernel each: A and B for K, B and the bias for N) and runs cuBLAS's aligned kernels, when
 * the benchmark inductor runs at compile time finds the padded version faster by
 * VF_INDUCTOR_PAD_MARGIN. The model's times stand in for the GPU side of that benchmark. */
#define VF_INDUCTOR_PAD_MARGIN 1.1 /* pad_mm's shape_padding_multiplier */
/* The padded variant is benchmarked as an eager Python function (the pad copies, addmm, the
 * slices: a few ATen dispatches per call), and its time is bound by that host side: measured on
 * the H200 with torch 2.11 (hw/calibrate/apps/pad_probe.py, results/raw-pad-probe: 82 compile-time
 * benchmarks of 24 GEMMs of NeRF and DLRM, fresh caches), 0.076-0.29 ms, median 0.145 ms, whatever
 * the GEMM's size (16384 to 262144 rows); the unpadded variant is one kernel and is timed as such.
 * So a GEMM pads only when its unpadded kernel takes more than 1.1 x max(padded GPU time, this
 * floor): NeRF's 262144 x 319 x 256 layer (0.46 ms) always padded, its 65536 x 319 x 256 (0.12 ms)
 * never; GEMMs within ~1.5x of 0.16 ms flip between runs with the host's timing noise (fc1 at
 * 262144 rows, 0.16 ms, padded in 2 of 4 compiles). pad_mm's compute-bound pre-filter
 * (is_mm_compute_bound) let every GEMM through on that machine, DLRM's 27 x 128 x 27 products
 * too: the model applies none. */
#define VF_INDUCTOR_PAD_BENCH_FLOOR_S 145e-6

/* A copy kernel reading in_bytes and writing out_bytes of dtype dt: generated (Triton) or
 * ATen's (element by element when `unaligned`). */
static void copy_work(dtype dt, int64_t in_bytes, int64_t out_bytes, int generated, int unaligned,
                      op_work *pw)
{
    memset(pw, 0, sizeof *pw);
    pw->type = OP_COPY;
    pw->kind = OPK_STREAM;
    pw->cdt = dt;
    pw->nin = 1;
    pw->in_bytes[0] = in_bytes;
    pw->in_l2_bytes = in_bytes;
    pw->out_bytes = out_bytes;
    pw->elems = out_bytes / (dt_bytes(dt) > 0 ? dt_bytes(dt) : 1);
    pw->generated = generated;
    pw->unaligned = unaligned;
}

/* pad_mm's copy of tensor t into its zero-padded buffer of pad_bytes */
static void pad_work(const wl_tensor *t, int64_t pad_bytes, op_work *pw)
{
    copy_work(t->dt, t->bytes, pad_bytes, 1, 0, pw);
}

/* Decide pad_mm for GEMM op mo with work gw: the number of padded inputs written to which[]
 * and their bytes to pad[] (0: no padding). */
static int inductor_pads(const vf_plan *p, int mo, const op_work *gw, const cost_ctx *c,
                         int64_t inb, int64_t outb, int which[VF_MAX_PADS], int64_t pad[VF_MAX_PADS])
{
    const wl_graph *g = p->g;
    const hw_gpu *hw = p->hw;
    int64_t pb[3];
    /* batched products are left unpadded (pad_bmm is not modelled): DLRM's 27 x 128 x 27
     * interaction takes 0.03-0.05 ms unpadded, far below the benchmark floor, and never padded */
    if (!gw->align1 || gw->batch > 1 || op_gemm_pad_bytes(g, &g->op[mo], pb))
        return 0;
    cost_result orig, r;
    cost_eval(hw, gw, hw->sm_count, c, inb, outb, &orig);
    op_work al = *gw;
    al.align1 = 0;
    cost_eval(hw, &al, hw->sm_count, c, inb, outb, &r);
    double t = r.time_s;
    int n = 0;
    for (int j = 0; j < 3 && j < g->op[mo].nin; j++) {
        if (!pb[j])
            continue;
        const wl_tensor *x = &g->t[g->op[mo].in[j]];
        which[n] = j;
        pad[n++] = pb[j];
        /* the benchmark leaves out the copy of an operand whose producer inductor hopes to plan
         * padded (should_exclude_padding_time: produced inside the graph, not by a library
         * kernel); the copy kernel still runs (it is costed as its own item) */
        int pr = x->producer;
        if (pr >= 0 && p->w[pr].kind != OPK_GEMM && p->w[pr].kind != OPK_ATTN &&
            !op_is_conv(p->w[pr].type))
            continue;
        op_work pw;
        pad_work(x, pb[j], &pw);
        cost_eval(hw, &pw, hw->sm_count, c, x->bytes, pb[j], &r);
        t += r.time_s;
    }
    return n > 0 && orig.time_s > fmax(t, VF_INDUCTOR_PAD_BENCH_FLOOR_S) * VF_INDUCTOR_PAD_MARGIN
               ? n
               : 0;
}

/* Inductor's ConcatKernel (torch/_inductor/lowering.py cat, ir.ConcatKernel): a concat whose
 * users are not all pointwise is not generated as one kernel when a library kernel's output is
 * among its inputs: that output (an extern mm/addmm, flexible layout) is written in place into
 * its slice of the concat's buffer, and a generated kernel copies only the other inputs. (A
 * padded consumer GEMM is a pointwise use, through its pad: the concat is generated whole.) Along
 * the last axis the GEMM's output rows then start every concat-width elements: when that width
 * or the slice's column offset is not a 16-byte multiple, cuBLAS runs its alignment-1 kernel,
 * and addmm first broadcasts the bias into the strided output (ATen's element-by-element copy)
 * and accumulates onto it: NeRF's feat_fc into the 283-wide concat at 65536 rows took 28 us +
 * 135 us against 25 us aligned (validation/apps/h200-apps-kernels.csv). The concat op GEMM mo
 * writes into (-1: none); *unal: its slice is unaligned. pads: per op, its pad_mm decision
 * (NULL: none pads). */
static int inductor_cat_into(const vf_plan *p, int mo, const int *pads, int *unal)
{
    const wl_graph *g = p->g;
    const wl_op *o = &g->op[mo];
    *unal = 0;
    if (o->nout != 1 || p->w[mo].batch > 1)
        return -1;
    int r = o->out[0];
    for (int j = p->rd_start[r]; j < p->rd_start[r + 1]; j++) {
        int cc = p->rd_op[j];
        const wl_op *c = &g->op[cc];
        const vf_group *G = &p->gr[p->grp[cc]];
        if (c->type != OP_CONCAT || G->kind == GK_EXCL || G->nreal != 1)
            continue;
        int rc = p->root[c->out[0]];
        for (int k = p->rd_start[rc]; k < p->rd_start[rc + 1]; k++)
            if (pads && pads[p->rd_op[k]])
                return -1;
        const wl_tensor *y = &g->t[c->out[0]];
        int64_t a = wl_attr_int(c, "axis", 0);
        if (a < 0)
            a += y->ndim;
        if (a == y->ndim - 1) {
            int64_t off = 0;
            for (int i = 0; i < c->nin && p->root[c->in[i]] != r; i++)
                off += g->t[c->in[i]].dim[a];
            *unal = op_unaligned(y->dim[a], y->dt) || op_unaligned(off, y->dt);
        }
        return cc;
    }
    return -1;
}

static const char *group_note(const vf_plan *p, int id, const vf_scratch *s, arena *a)
{
    const vf_group *G = &p->gr[id];
    char end[WHY_CHARS + 8];
    if (G->closed)
        snprintf(end, sizeof end, "%s", G->closed);
    else if (G->why[0])
        snprintf(end, sizeof end, "%s", G->why);
    else {
        int outside = 0;
        for (int k = 0; k < s->nout && !outside; k++) {
            int r = s->xout[k];
            for (int j = p->rd_start[r]; j < p->rd_start[r + 1]; j++)
                if (!is_member(p, id, p->rd_op[j]))
                    outside = 1;
        }
        snprintf(end, sizeof end, "%s", outside ? "consumers fused elsewhere" : "end of graph");
    }
    char note[NOTE_CHARS];
    if (G->nreal >= 2)
        snprintf(note, sizeof note, "%s%s%s; ends: %s", G->kind == GK_GEMM ? "epilogue" : "stitch",
                 G->rules[0] ? "; " : "", G->rules, end);
    else
        snprintf(note, sizeof note, "%s", end);
    return arena_strdup(a, note);
}

/* vf_run_masked with the planner's scratch (groups, their graph, orders, marks: per op and per
 * tensor, hundreds of bytes an op) in tmp, the result in a. */
static int vf_plan_run(const hw_gpu *hw, const wl_graph *g, const op_work *works, const cost_ctx *c,
                       const vf_opts *vo, const unsigned char *exclude, arena *a, arena *tmp,
                       kt_result *r, kt_err *e)
{
    memset(r, 0, sizeof *r);
    r->exec_id = EX_VF;
    r->exec = kt_exec_name(EX_VF);
    r->clock_MHz = c->clock_MHz;
    vf_plan p;
    memset(&p, 0, sizeof p);
    p.hw = hw;
    p.g = g;
    p.w = works;
    p.policy = vo->policy;
    /* inductor compiles the backward graph too; the paper's baseline fuses forward ops only */
    p.fuse_backward = vo->policy == VF_INDUCTOR || (vo->policy == VF_RULES && vo->fuse_backward);
    p.exclude = exclude;
    p.tmp = tmp;
    int n = g->nop > 0 ? g->nop : 1;
    p.grp = arena_calloc(tmp, (size_t)n, sizeof(int));
    p.ctx = arena_calloc(tmp, (size_t)n, sizeof(int));
    p.next = arena_calloc(tmp, (size_t)n, sizeof(int));
    p.gr = arena_calloc(tmp, (size_t)n, sizeof *p.gr);
    int nin_total = 0;
    for (int i = 0; i < g->nop; i++)
        nin_total += g->op[i].nin;
    int *order = arena_calloc(tmp, (size_t)n, sizeof(int));
    int nt = g->ntensor > 0 ? g->ntensor : 1;
    vf_scratch s = {arena_calloc(tmp, (size_t)nt, sizeof(int)), arena_calloc(tmp, (size_t)nt, sizeof(int64_t)),
                    arena_calloc(tmp, (size_t)nt, sizeof(int)), arena_calloc(tmp, (size_t)nt, sizeof(int)), 0, 0};
    sched_walk walk;
    if (!p.grp || !p.ctx || !p.next || !p.gr || dag_init(&p.d, n, nin_total, tmp) || !order || !s.mark ||
        !s.bytes || !s.xin || !s.xout || sched_begin(&walk, hw, g, c, a))
        return oom(g, e);
    if (index_tensors(&p, tmp, e))
        return -1;
    for (int i = 0; i < g->nop; i++)
        place(&p, i);
    int live = group_order(&p, order, tmp, e);
    if (live < 0)
        return -1;
    if (p.oom)
        return oom(g, e);
    /* a group is one item; inductor may add up to three pad kernels before a lone GEMM */
    /* and a bias copy before a GEMM writing into an unaligned concat slice (pads only when the
     * graph has an alignment-1 GEMM, copies only when it has a concat) */
    int any_a1 = 0, any_cat = 0;
    for (int i = 0; i < g->nop && p.policy == VF_INDUCTOR; i++) {
        any_cat |= g->op[i].type == OP_CONCAT;
        any_a1 |= works[i].kind == OPK_GEMM && works[i].align1;
    }
    size_t nitems = (size_t)live + 1;
    for (int k = 0; k < live && (any_a1 || any_cat); k++) {
        const vf_group *G = &p.gr[order[k]];
        if (G->kind != GK_EXCL && G->nreal == 1 && works[main_op(&p, order[k])].kind == OPK_GEMM)
            nitems += (size_t)((any_a1 ? VF_MAX_PADS : 0) + (any_cat ? 1 : 0));
    }
    r->items = arena_calloc(a, nitems, sizeof *r->items);
    if (!r->items)
        return oom(g, e);
    /* inductor decides pad_mm for every GEMM before lowering; then which GEMM outputs are
     * written in place into a concat: into[op] = 2 x concat op + 1 when the slice is unaligned */
    int *pads = NULL, *into = NULL;
    if (p.policy == VF_INDUCTOR) {
        if (any_a1 && !(pads = arena_calloc(tmp, (size_t)n, sizeof(int))))
            return oom(g, e);
        if (any_cat && !(into = arena_alloc(tmp, (size_t)n, sizeof(int))))
            return oom(g, e);
        for (int k = 0; k < live && pads; k++) {
            const vf_group *G = &p.gr[order[k]];
            int mo = main_op(&p, order[k]);
            if (G->kind == GK_EXCL || G->nreal != 1 || works[mo].kind != OPK_GEMM ||
                !works[mo].align1)
                continue;
            op_work gw;
            externals(&p, order[k], &s);
            if (group_work(&p, order[k], &s, &gw))
                continue; /* the costing loop reports it */
            int64_t inb = 0, wr = 0;
            for (int j = 0; j < s.nout; j++)
                wr = kt_count_add(wr, s.bytes[s.xout[j]]);
            for (int j = 0; j < s.nin; j++)
                inb = kt_count_add(inb, s.bytes[s.xin[j]]);
            int which[VF_MAX_PADS];
            int64_t pad[VF_MAX_PADS];
            pads[mo] = inductor_pads(&p, mo, &gw, c, inb, wr, which, pad);
        }
        if (pads)
            memset(s.mark, 0, (size_t)nt * sizeof(int)); /* externals marks groups it has seen */
        for (int i = 0; into && i < n; i++)
            into[i] = -1;
        for (int k = 0; k < live && into; k++) {
            const vf_group *G = &p.gr[order[k]];
            int mo = main_op(&p, order[k]), unal;
            if (G->kind == GK_EXCL || G->nreal != 1 || works[mo].kind != OPK_GEMM ||
                (pads && pads[mo]))
                continue;
            int cc = inductor_cat_into(&p, mo, pads, &unal);
            if (cc >= 0)
                into[mo] = 2 * cc + unal;
        }
    }

    for (int k = 0; k < live; k++) {
        int id = order[k];
        const vf_group *G = &p.gr[id];
        if (G->kind == GK_EXCL) {
            sched_skip(&walk, G->first);
            continue;
        }
        kt_item *it = &r->items[r->nitems++];
        int *idx = arena_calloc(a, (size_t)G->nmem, sizeof(int));
        if (!idx)
            return oom(g, e);
        int m = 0;
        for (int i = G->first; i >= 0; i = p.next[i])
            idx[m++] = i;
        it->ops = idx;
        it->nops = G->nmem;
        it->pipeline = -1;
        if (G->nmem > 1) {
            char nm[256];
            snprintf(nm, sizeof nm, "%s..%s", g->op[G->first].name, g->op[G->last].name);
            it->name = arena_strdup(a, nm);
        } else {
            it->name = g->op[G->first].name;
        }
        int mo = main_op(&p, id);
        it->type = G->nreal >= 2 ? "group" : op_name(g->op[mo].type);
        if (G->nreal >= 2)
            r->ops_covered += G->nmem;
        externals(&p, id, &s);
        /* the item's re-evaluation keeps its work: the op's own when the group's is the same
         * (a library call on its own: no copy of hundreds of bytes), else a copy in a */
        op_work gwl;
        memset(&gwl, 0, sizeof gwl);
        op_work *gw = &gwl;
        if (group_work(&p, id, &s, gw)) {
            char path[64];
            snprintf(path, sizeof path, "ops[%d]", G->first);
            return err_set(e, KT_EINPUT, g->file, path, "fused work overflows 64 bits");
        }
        it->note = group_note(&p, id, &s, a);
        if (!it->name || !it->note)
            return oom(g, e);
        if (gw->kind == OPK_FREE) {
            cost_eval(hw, gw, hw->sm_count, c, 0, 0, &it->c);
            continue;
        }
        /* a concat with GEMM outputs written into it in place copies only the rest */
        int64_t inplace = 0;
        if (into && g->op[mo].type == OP_CONCAT && G->nreal == 1) {
            for (int j = 0; j < s.nin; j++) {
                int q = g->t[s.xin[j]].producer;
                if (q >= 0 && into[q] >= 0 && into[q] / 2 == mo) {
                    inplace = kt_count_add(inplace, s.bytes[s.xin[j]]);
                    s.bytes[s.xin[j]] = 0;
                }
            }
            if (inplace > 0 && gw->out_bytes > 0) {
                int64_t keep = gw->out_bytes > inplace ? gw->out_bytes - inplace : 0;
                gw->elems = (int64_t)((double)gw->elems * (double)keep / (double)gw->out_bytes);
                gw->in_l2_bytes = gw->in_l2_bytes > inplace ? gw->in_l2_bytes - inplace : 0;
                gw->out_bytes = keep;
                for (int j = 0; j < g->op[mo].nin; j++) {
                    int q = g->t[p.root[g->op[mo].in[j]]].producer;
                    if (q >= 0 && into[q] >= 0 && into[q] / 2 == mo)
                        gw->in_bytes[j] = 0;
                }
            }
        }
        int64_t rd = 0, wr = 0, inb = 0;
        for (int j = 0; j < s.nout; j++)
            wr = kt_count_add(wr, s.bytes[s.xout[j]]);
        wr = wr > inplace ? wr - inplace : 0;
        for (int j = 0; j < s.nin; j++)
            inb = kt_count_add(inb, s.bytes[s.xin[j]]);
        int which[VF_MAX_PADS];
        int64_t pad[VF_MAX_PADS];
        /* (the decision is pads[mo]'s; recomputed here for the operands it pads) */
        int npad = pads && G->nreal == 1 && gw->kind == OPK_GEMM && pads[mo]
                       ? inductor_pads(&p, mo, gw, c, inb, wr, which, pad)
                       : 0;
        if (npad) {
            /* the pad kernels run first, as their own items; the GEMM reads their copies */
            kt_item gemm_item = *it;
            for (int q = 0; q < npad; q++, it++) {
                int tin = g->op[mo].in[which[q]];
                const wl_tensor *x = &g->t[tin];
                op_work *pw = arena_calloc(a, 1, sizeof *pw);
                char nm[256], note[NOTE_CHARS];
                snprintf(nm, sizeof nm, "%s.pad_%s", g->op[mo].name, x->name);
                snprintf(note, sizeof note, "inductor pad_mm: %s zero-padded to 16-byte rows for %s",
                         x->name, g->op[mo].name);
                memset(it, 0, sizeof *it);
                it->name = arena_strdup(a, nm);
                it->note = arena_strdup(a, note);
                if (!pw || !it->name || !it->note)
                    return oom(g, e);
                pad_work(x, pad[q], pw);
                it->type = "pad";
                it->ops = gemm_item.ops;
                it->nops = 1;
                it->pipeline = -1;
                int64_t miss = sched_read(&walk, tin, x->bytes);
                if (sched_kernel(&walk, pw, hw->sm_count, miss, pad[q], it))
                    return oom(g, e);
                sched_write(&walk, tin, pad[q]);
                r->nitems++;
            }
            *it = gemm_item;
            gw->align1 = 0;
            char note[NOTE_CHARS];
            snprintf(note, sizeof note, "%s; inductor pad_mm: aligned kernel on padded operands",
                     gemm_item.note);
            it->note = arena_strdup(a, note);
            if (!it->note)
                return oom(g, e);
        }
        if (!npad && into && gw->kind == OPK_GEMM && G->nreal == 1 && into[mo] >= 0 &&
            into[mo] % 2) {
            /* its output rows land in an unaligned concat slice: cuBLAS's alignment-1 kernel,
             * after ATen broadcast the bias into the slice (the GEMM accumulates onto it) */
            gw->align1 = 1;
            const wl_op *go = &g->op[mo];
            const wl_tensor *y = &g->t[go->out[0]];
            if (go->nin > 2) {
                kt_item gemm_item = *it;
                const wl_tensor *bias = &g->t[go->in[2]];
                op_work *bw = arena_calloc(a, 1, sizeof *bw);
                char nm[256], note[NOTE_CHARS];
                snprintf(nm, sizeof nm, "%s.bias_copy", go->name);
                snprintf(note, sizeof note,
                         "addmm into the unaligned slice of %s: bias broadcast first (ATen copy)",
                         g->op[into[mo] / 2].name);
                memset(it, 0, sizeof *it);
                it->name = arena_strdup(a, nm);
                it->note = arena_strdup(a, note);
                if (!bw || !it->name || !it->note)
                    return oom(g, e);
                copy_work(y->dt, bias->bytes, y->bytes, 0, 1, bw);
                it->type = "copy";
                it->ops = gemm_item.ops;
                it->nops = 1;
                it->pipeline = -1;
                int64_t miss = sched_read(&walk, go->in[2], bias->bytes);
                if (sched_kernel(&walk, bw, hw->sm_count, miss, y->bytes, it))
                    return oom(g, e);
                r->nitems++;
                it++;
                *it = gemm_item;
                gw->in_l2_bytes = kt_count_add(gw->in_l2_bytes, y->bytes); /* beta = 1 */
            }
            char note[NOTE_CHARS];
            snprintf(note, sizeof note, "%s; inductor: output written into an unaligned slice of %s",
                     it->note, g->op[into[mo] / 2].name);
            it->note = arena_strdup(a, note);
            if (!it->note)
                return oom(g, e);
        }
        for (int j = 0; j < s.nin; j++)
            rd = kt_count_add(rd, sched_read(&walk, s.xin[j], s.bytes[s.xin[j]]));
        const op_work *kw = &works[mo];
        if (memcmp(gw, kw, sizeof *gw)) {
            op_work *cw = arena_alloc(a, 1, sizeof *cw);
            if (!cw)
                return oom(g, e);
            *cw = *gw;
            kw = cw;
        }
        if (sched_kernel(&walk, kw, hw->sm_count, rd, wr, it))
            return oom(g, e);
        for (int j = 0; j < s.nout; j++)
            sched_write(&walk, s.xout[j], s.bytes[s.xout[j]]);
    }
    r->ops_total = g->nop;
    result_sum(r);
    return 0;
}

int vf_run_masked(const hw_gpu *hw, const wl_graph *g, const op_work *works, const cost_ctx *c,
                  const vf_opts *vo, const unsigned char *exclude, arena *a, kt_result *r,
                  kt_err *e)
{
    arena tmp = {0};
    int rc = vf_plan_run(hw, g, works, c, vo, exclude, a, &tmp, r, e);
    arena_free(&tmp);
    return rc;
}

int vf_run_scratch(const hw_gpu *hw, const wl_graph *g, const op_work *works, const cost_ctx *c,
                   const vf_opts *vo, const unsigned char *exclude, arena *a, arena *scratch,
                   kt_result *r, kt_err *e)
{
    arena_pos mark = arena_mark(scratch);
    int rc = vf_plan_run(hw, g, works, c, vo, exclude, a, scratch, r, e);
    arena_release(scratch, mark);
    return rc;
}

int vf_run(const hw_gpu *hw, const wl_graph *g, const op_work *works, const cost_ctx *c,
           const vf_opts *vo, arena *a, kt_result *r, kt_err *e)
{
    return vf_run_masked(hw, g, works, c, vo, NULL, a, r, e);
}
