/* select: subgraph selection for Kitsune pipelines - the paper's patterns and a DP search. */
#include "select.h"

#include <math.h>

#include "../graph.h"

/* An op no pipeline may hold: an index op (data-dependent rows: gather, scatter, embedding,
 * index_copy), or an op whose output tile needs neighbouring or all tiles of its input
 * (op_work.no_pipe: windowed convolutions and pooling, batch statistics, sorts and scans across
 * rows; op.c says why for each). */
static int barrier(const wl_graph *g, const op_work *w, int i)
{
    return op_is_index(g->op[i].type) || w[i].no_pipe;
}

static int find(int *parent, int x)
{
    while (parent[x] != x)
        x = parent[x] = parent[parent[x]];
    return x;
}

int sel_valid(const wl_graph *g, const op_work *w, int first, int last)
{
    if (first < 0 || last >= g->nop || last <= first)
        return 0;
    if (w[first].kind == OPK_FREE || w[last].kind == OPK_FREE)
        return 0;
    int len = last - first + 1, kernels = 0;
    if (len > SEL_MAX_VALID_OPS)
        return 0;
    int parent[SEL_MAX_VALID_OPS];
    for (int k = 0; k < len; k++)
        parent[k] = k;
    for (int i = first; i <= last; i++) {
        if (barrier(g, w, i))
            return 0;
        if (w[i].kind == OPK_FREE)
            continue;
        kernels++;
        for (int j = 0; j < g->op[i].nin; j++) {
            int p = graph_producer(g, g->op[i].in[j]);
            if (p >= first && p <= last)
                parent[find(parent, i - first)] = find(parent, p - first);
        }
    }
    if (kernels < 2)
        return 0;
    int root = -1;
    for (int i = first; i <= last; i++) {
        if (w[i].kind == OPK_FREE)
            continue;
        int r = find(parent, i - first);
        if (root < 0)
            root = r;
        else if (r != root)
            return 0;
    }
    return 1;
}

static int is_tensor_op(const wl_graph *g, int i)
{
    return (op_info_of(g->op[i].type)->flags & OPF_TENSOR) != 0;
}

/* A segment holds one of the paper's patterns (section 5). */
static int has_pattern(const wl_graph *g, const op_work *w, const int *split_k, int first, int last)
{
    int tensor_ops = 0;
    for (int i = first; i <= last; i++) {
        if (w[i].kind == OPK_FREE)
            continue;
        const wl_op *o = &g->op[i];
        if (is_tensor_op(g, i))
            tensor_ops++;
        if (w[i].kind == OPK_ATTN)
            return 1;
        if (op_is_gemm(o->type)) {
            if (split_k && split_k[i] > 1)
                return 1;
            int gt = g->t[o->out[0]].grad_of;
            if (o->phase == PH_BWD && gt >= 0 && g->t[gt].kind == TK_WEIGHT)
                return 1;
        }
        /* multicast: an output of i read by two or more kernel ops of the segment */
        for (int k = 0; k < o->nout; k++) {
            int readers = 0;
            for (int j = i + 1; j <= last; j++) {
                if (w[j].kind == OPK_FREE)
                    continue;
                for (int m = 0; m < g->op[j].nin; m++)
                    if (graph_producer(g, g->op[j].in[m]) == i) {
                        readers++;
                        break;
                    }
            }
            if (readers >= 2)
                return 1;
        }
    }
    return tensor_ops >= 2;
}

static int consumes_from(const wl_graph *g, int i, int first, int last)
{
    for (int j = 0; j < g->op[i].nin; j++) {
        int p = graph_producer(g, g->op[i].in[j]);
        if (p >= first && p <= last)
            return 1;
    }
    return 0;
}

static int close_seg(const wl_graph *g, const op_work *w, const int *split_k, int first, int last,
                     sel_seg *out, int n, int max)
{
    while (last > first && w[last].kind == OPK_FREE)
        last--;
    while (first < last && w[first].kind == OPK_FREE)
        first++;
    if (first < 0 || n >= max || !sel_valid(g, w, first, last) ||
        !has_pattern(g, w, split_k, first, last))
        return n;
    out[n].first = first;
    out[n].last = last;
    return n + 1;
}

int sel_patterns(const wl_graph *g, const op_work *w, const double *bsp_sm_util,
                 const int *bsp_split_k, sel_seg *out, int max)
{
    int n = 0, first = -1, last = -1;
    for (int i = 0; i < g->nop; i++) {
        const wl_op *o = &g->op[i];
        if (w[i].kind == OPK_FREE) {
            if (first >= 0 && consumes_from(g, i, first, last) &&
                i - first < SEL_MAX_SEGMENT_OPS)
                last = i;
            else if (first >= 0) {
                n = close_seg(g, w, bsp_split_k, first, last, out, n, max);
                first = -1;
            }
            continue;
        }
        int excluded = barrier(g, w, i) ||
                       (op_is_gemm(o->type) && bsp_sm_util && bsp_sm_util[i] >= SEL_BSP_FRIENDLY_SM_UTIL);
        if (excluded) {
            if (first >= 0)
                n = close_seg(g, w, bsp_split_k, first, last, out, n, max);
            first = -1;
            continue;
        }
        if (first >= 0 && consumes_from(g, i, first, last) && i - first < SEL_MAX_SEGMENT_OPS) {
            last = i;
            continue;
        }
        if (first >= 0)
            n = close_seg(g, w, bsp_split_k, first, last, out, n, max);
        first = last = i;
    }
    if (first >= 0)
        n = close_seg(g, w, bsp_split_k, first, last, out, n, max);
    return n;
}

/* sel_valid of every segment ending at one op, as the start moves back one op at a time: a
 * union-find over the window's ops with, per root, the number of kernel (non-view) ops in its
 * component. Adding op j joins it to its readers in the window (graph_check puts every producer
 * before its readers, so those are all its edges inside the window); the window is valid when
 * its first op is a kernel op, it holds two or more kernel ops and they form one component -
 * sel_valid's answer, in O(edges) per added op instead of O(length) per segment. */
typedef struct valid_win {
    const op_work *w;
    int *rd_start, *rd_op;  /* per op p: the kernel ops reading a tensor whose producer is p */
    int *parent, *kern;     /* union-find over op ids; kernel ops per root */
    int end, comps, kernels;
} valid_win;

static int valid_init(valid_win *v, const wl_graph *g, const op_work *w, arena *a)
{
    int n = g->nop, ne = 0;
    v->w = w;
    for (int i = 0; i < n; i++)
        if (w[i].kind != OPK_FREE)
            ne += g->op[i].nin;
    v->rd_start = arena_calloc(a, (size_t)n + 2, sizeof(int));
    v->rd_op = arena_alloc(a, (size_t)ne + 1, sizeof(int));
    int *prod = arena_alloc(a, (size_t)ne + 1, sizeof(int)); /* each kernel op's inputs' */
    v->parent = arena_alloc(a, (size_t)n + 1, sizeof(int));
    v->kern = arena_alloc(a, (size_t)n + 1, sizeof(int));
    if (!v->rd_start || !v->rd_op || !prod || !v->parent || !v->kern)
        return -1;
    int k = 0;
    for (int i = 0; i < n; i++)
        if (w[i].kind != OPK_FREE)
            for (int j = 0; j < g->op[i].nin; j++) {
                int p = prod[k++] = graph_producer(g, g->op[i].in[j]);
                if (p >= 0)
                    v->rd_start[p + 1]++;
            }
    for (int i = 0; i < n; i++)
        v->rd_start[i + 1] += v->rd_start[i];
    int *fill = v->parent; /* scratch: next free slot per producer */
    for (int i = 0; i < n; i++)
        fill[i] = v->rd_start[i];
    k = 0;
    for (int i = 0; i < n; i++)
        if (w[i].kind != OPK_FREE)
            for (int j = 0; j < g->op[i].nin; j++, k++)
                if (prod[k] >= 0)
                    v->rd_op[fill[prod[k]]++] = i;
    return 0;
}

static void valid_union(valid_win *v, int x, int y)
{
    int rx = find(v->parent, x), ry = find(v->parent, y);
    if (rx == ry)
        return;
    if (v->kern[rx] > 0 && v->kern[ry] > 0)
        v->comps--;
    v->parent[ry] = rx;
    v->kern[rx] += v->kern[ry];
}

/* Add op j to the window ending at v->end (every op j+1..end already in it). */
static void valid_add(valid_win *v, int j)
{
    int kernel = v->w[j].kind != OPK_FREE;
    v->parent[j] = j;
    v->kern[j] = kernel;
    v->comps += kernel;
    v->kernels += kernel;
    for (int q = v->rd_start[j]; q < v->rd_start[j + 1]; q++)
        if (v->rd_op[q] <= v->end) /* readers follow j (graph_check) */
            valid_union(v, v->rd_op[q], j);
}

/* Start a window holding op end alone. */
static void valid_start(valid_win *v, int end)
{
    v->end = end;
    v->comps = v->kernels = 0;
    valid_add(v, end);
}

/* sel_valid of the window's ops first..end (first: the op added last). */
static int valid_now(const valid_win *v, int first)
{
    return v->w[first].kind != OPK_FREE && v->end - first + 1 <= SEL_MAX_VALID_OPS &&
           v->kernels >= 2 && v->comps == 1;
}

int sel_search(const wl_graph *g, const op_work *w, const double *rest_s, int max_len,
               sel_cost_fn cost, sel_cost_fn lb, void *ctx, arena *a, sel_seg *out, int max,
               double *best_s)
{
    int n = g->nop;
    double *best = arena_calloc(a, (size_t)n + 1, sizeof *best);
    int *from = arena_calloc(a, (size_t)n + 1, sizeof *from);
    valid_win v;
    if (!best || !from || valid_init(&v, g, w, a))
        return -1;
    if (max_len > SEL_MAX_VALID_OPS)
        max_len = SEL_MAX_VALID_OPS;
    best[0] = 0;
    for (int i = 1; i <= n; i++) {
        best[i] = best[i - 1] + rest_s[i - 1];
        from[i] = -1;
        int end = i - 1;
        if (w[end].kind == OPK_FREE || barrier(g, w, end))
            continue;
        valid_start(&v, end);
        for (int j = end - 1; j >= 0 && end - j + 1 <= max_len; j--) {
            if (barrier(g, w, j))
                break;
            valid_add(&v, j);
            /* beyond SEL_SEARCH_DENSE_OPS ops, lengths grow geometrically (x 1.25) */
            int len = end - j + 1;
            if (len > SEL_SEARCH_DENSE_OPS) {
                int l = SEL_SEARCH_DENSE_OPS;
                while (l < len)
                    l += l / 4;
                if (l != len)
                    continue;
            }
            if (!valid_now(&v, j)) /* O(1): before the bound, O(length) */
                continue;
            if (lb && best[j] + lb(ctx, j, end, best[i] - best[j]) >= best[i])
                continue;
            double c = cost(ctx, j, end, best[i] - best[j]);
            if (c >= 0 && best[j] + c < best[i]) {
                best[i] = best[j] + c;
                from[i] = j;
            }
        }
    }
    *best_s = best[n];
    int k = 0;
    for (int i = n; i > 0;) {
        if (from[i] < 0) {
            i--;
            continue;
        }
        k++;
        i = from[i];
    }
    if (k > max)
        k = max;
    int m = k;
    for (int i = n; i > 0 && m > 0;) {
        if (from[i] < 0) {
            i--;
            continue;
        }
        m--;
        out[m].first = from[i];
        out[m].last = i - 1;
        i = from[i];
    }
    return k;
}
