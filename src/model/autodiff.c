/* autodiff: the training graph (forward + backward [+ optimizer]) derived from a forward graph.
 *
 * Reverse-mode differentiation at the granularity of PyTorch eager autograd: one backward node
 * per forward op, each launching the kernels its ATen derivative formula launches
 * (tools/autograd/derivatives.yaml), so op counts and bytes are those of a real training step.
 *
 * - loss = sum of the graph outputs: backward starts with one `fill` (ones) per output that
 *   depends on a weight (sum's backward expands a ones gradient).
 * - A tensor requires a gradient iff it is a floating-point weight, an input declared
 *   "requires_grad" (the latent inputs of a block inside a stack), or a float output of an op
 *   with such an input (other inputs and integer tensors never do). Only gradients of such
 *   tensors are computed, so e.g. the first layer of an MLP has no dx GEMM.
 * - Forward ops are visited in reverse order; contributions to a tensor consumed by several ops
 *   are summed with `add` ops as they arrive (PyTorch's InputBuffer accumulates in the order its
 *   consumers' backward nodes run: reverse creation order).
 * - Every weight's (and requires_grad input's) final gradient is a graph output (TK_OUTPUT:
 *   its DRAM write is counted).
 * - Forward-written tensors read by backward ops are marked `saved` (through free views to the
 *   tensor that owns the storage).
 * The rules per op type are documented in docs/training.md. */
#include "autodiff.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "graph.h"
#include "op.h"

/* Longest generated name (op or tensor name plus a suffix such as ".grad_acc12"); a longer one
 * is an error, never cut: two cut names could collide. */
enum { AD_NAME_MAX = 1024 };

/* Value of the `fill` that seeds the backward pass: d(sum y)/dy = 1 (PyTorch: ones_like). */
#define AD_SEED_VALUE 1
/* Value of the zero tensors of padding gradients (slice / index_copy backward). */
#define AD_ZERO_VALUE 0

typedef struct ad_ctx {
    const wl_graph *f;   /* forward graph */
    wl_graph *g;         /* graph being built; tensor i < nft is forward tensor i */
    kt_err *e;
    int nft;             /* forward tensors */
    int *grad;           /* [nft] current (accumulated) gradient tensor, -1 none */
    int *nacc;           /* [nft] accumulation adds so far */
    unsigned char *rg;   /* [nft] requires a gradient */
    int *sparse_idx;     /* [nft] a table with a sparse gradient (embedding sparse_grad 1): the
                            gradient's 1-D row indices; -1 for a dense gradient */
    int *sparse_op;      /* [nft] the embedding that made it (forward op index) */
    int cur;             /* forward op being differentiated */
    wl_phase phase;
    int name_cut;        /* a generated name did not fit AD_NAME_MAX */
} ad_ctx;

static const wl_tensor *FT(const ad_ctx *c, int t)
{
    return &c->f->t[t];
}

static wl_attr attr_int(const char *key, int64_t v)
{
    wl_attr a = {.key = key, .type = WA_INT, .ival = v};
    return a;
}

static wl_attr attr_str(const char *key, const char *v)
{
    wl_attr a = {.key = key, .type = WA_STR, .sval = v};
    return a;
}

static wl_attr attr_list(const char *key, int64_t *list, int n)
{
    wl_attr a = {.key = key, .type = WA_LIST, .list = list, .nlist = n};
    return a;
}

static int same_dims(int na, const int64_t *a, int nb, const int64_t *b)
{
    return na == nb && !memcmp(a, b, (size_t)na * sizeof(int64_t));
}

/* The tensor owning the storage of t: free views (view/reshape/transpose without copy) alias
 * their input, so saving a view saves its base. */
static int storage_of(const wl_graph *f, int t)
{
    for (;;) {
        int p = f->t[t].producer;
        if (p < 0 || p >= f->nop || !op_is_free(f, &f->op[p]))
            return t;
        t = f->op[p].in[0];
    }
}

/* Format a generated name into buf (AD_NAME_MAX bytes); one that does not fit is remembered
 * and the tensor or op it names fails (name_ok). */
__attribute__((format(printf, 3, 4))) static void ad_name(ad_ctx *c, char *buf, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (vsnprintf(buf, AD_NAME_MAX, fmt, ap) >= AD_NAME_MAX)
        c->name_cut = 1;
    va_end(ap);
}

static int name_ok(ad_ctx *c)
{
    if (!c->name_cut)
        return 0;
    return err_set(c->e, KT_EINPUT, c->f->file, NULL,
                   "a training-graph name would exceed %d bytes (shorten the op and tensor names)",
                   AD_NAME_MAX - 1);
}

static int new_tensor(ad_ctx *c, const char *name, int ndim, const int64_t *dim, dtype dt,
                      int grad_of)
{
    if (name_ok(c))
        return -1;
    int t = wl_add_tensor(c->g, name, ndim, dim, dt, TK_INTER, c->e);
    if (t >= 0)
        c->g->t[t].grad_of = grad_of;
    return t;
}

/* A tensor shaped like forward tensor `like`; grad_of = like (it is like's gradient). */
static int grad_tensor(ad_ctx *c, const char *name, int like)
{
    const wl_tensor *l = FT(c, like);
    return new_tensor(c, name, l->ndim, l->dim, l->dt, like);
}

/* Append an op of the current phase deriving from forward op c->cur; forward-written tensors
 * it reads become saved activations. */
static int emit(ad_ctx *c, const char *name, int type, const int *in, int nin, const int *out,
                int nout, const wl_attr *at, int nat)
{
    if (name_ok(c))
        return -1;
    int i = wl_add_op(c->g, name, type, in, nin, out, nout, at, nat, c->e);
    if (i < 0)
        return -1;
    c->g->op[i].phase = c->phase;
    c->g->op[i].fwd = c->cur;
    c->g->op[i].block = c->cur >= 0 ? c->g->op[c->cur].block : -1;
    for (int j = 0; j < nin; j++)
        if (in[j] < c->nft) {
            int s = storage_of(c->f, in[j]);
            if (c->f->t[s].producer >= 0)
                c->g->t[s].saved = 1;
        }
    return 0;
}

static int unsupported(ad_ctx *c, const wl_op *o, const char *what)
{
    char p[64];
    snprintf(p, sizeof p, "ops[%d]", c->cur);
    return err_set(c->e, KT_EINPUT, c->f->file, p, "training: no gradient rule for %s of \"%s\"",
                   what, op_name(o->type));
}

/* "<fwd op>.<sfx>" */
static void op_name_of(ad_ctx *c, const char *sfx, char *buf)
{
    ad_name(c, buf, "%s.%s", c->f->op[c->cur].name, sfx);
}

/* One op with one new output (named like the op) of the given shape; returns the output or -1. */
static int op1(ad_ctx *c, const char *sfx, int type, const int *in, int nin, int ndim,
               const int64_t *dim, dtype dt, int grad_of, const wl_attr *at, int nat)
{
    char nm[AD_NAME_MAX];
    op_name_of(c, sfx, nm);
    int t = new_tensor(c, nm, ndim, dim, dt, grad_of);
    if (t < 0 || emit(c, nm, type, in, nin, &t, 1, at, nat))
        return -1;
    return t;
}

/* op1 whose output is shaped like forward tensor `like` and is its gradient. */
static int op1_like(ad_ctx *c, const char *sfx, int type, const int *in, int nin, int like,
                    const wl_attr *at, int nat)
{
    const wl_tensor *l = FT(c, like);
    return op1(c, sfx, type, in, nin, l->ndim, l->dim, l->dt, like, at, nat);
}

/* A free view of tensor t (any graph tensor) to dims; t itself when the shape already matches. */
static int view_to(ad_ctx *c, const char *sfx, int t, int ndim, const int64_t *dim, int grad_of)
{
    const wl_tensor *x = &c->g->t[t];
    if (same_dims(x->ndim, x->dim, ndim, dim))
        return t;
    dtype dt = x->dt;
    return op1(c, sfx, OP_VIEW, &t, 1, ndim, dim, dt, grad_of, NULL, 0);
}

/* Add contribution `contrib` to the gradient of forward tensor t. */
static int accumulate(ad_ctx *c, int t, int contrib)
{
    if (contrib < 0)
        return -1;
    if (c->grad[t] < 0) {
        c->grad[t] = contrib;
        return 0;
    }
    char nm[AD_NAME_MAX];
    ad_name(c, nm, "%s.grad_acc%d", FT(c, t)->name, ++c->nacc[t]);
    int o = grad_tensor(c, nm, t);
    int in[2] = {c->grad[t], contrib};
    if (o < 0 || emit(c, nm, OP_ADD, in, 2, &o, 1, NULL, 0))
        return -1;
    c->grad[t] = o;
    return 0;
}

/* Sum a broadcast-shaped gradient gt down to forward tensor target's shape (numpy broadcasting
 * in reverse: ATen's sum_to_size): one `reduce` over the broadcast axes, plus a free view when
 * rank differs. Returns gt itself when no reduction is needed. */
static int sum_to(ad_ctx *c, const char *sfx, int gt, int target)
{
    const wl_tensor *x = &c->g->t[gt], *tt = FT(c, target);
    if (same_dims(x->ndim, x->dim, tt->ndim, tt->dim))
        return gt;
    int n = x->ndim, lead = n - tt->ndim, inner = 0, nax = 0;
    int64_t axes[WL_MAXDIM], kd[WL_MAXDIM];
    for (int i = 0; i < n; i++) {
        kd[i] = x->dim[i];
        if (i < lead || (tt->dim[i - lead] == 1 && x->dim[i] != 1)) {
            axes[nax++] = i;
            kd[i] = 1;
            inner += i >= lead;
        }
    }
    char s2[AD_NAME_MAX];
    ad_name(c, s2, "%s.sum", sfx);
    wl_attr at[3] = {attr_str("op", "sum"), attr_list("axes", axes, nax), attr_int("keepdim", 1)};
    if (!inner) /* only leading axes: keepdim 0 gives the target shape exactly */
        return op1_like(c, s2, OP_REDUCE, &gt, 1, target, at, 2);
    int r = op1(c, s2, OP_REDUCE, &gt, 1, n, kd, x->dt, lead ? -1 : target, at, 3);
    if (r < 0)
        return -1;
    ad_name(c, s2, "%s.view", sfx);
    return view_to(c, s2, r, tt->ndim, tt->dim, target);
}

/* Output dims of matmul(a, b, ta, tb) (batch dims broadcast; shapes already checked). */
static int matmul_dims(const wl_tensor *a, const wl_tensor *b, int ta, int tb, int64_t *dim)
{
    int na = a->ndim - 2, nb = b->ndim - 2, n = na > nb ? na : nb;
    for (int i = 0; i < n; i++) {
        int64_t x = i < n - na ? 1 : a->dim[i - (n - na)];
        int64_t y = i < n - nb ? 1 : b->dim[i - (n - nb)];
        dim[i] = x > y ? x : y;
    }
    dim[n] = ta ? a->dim[a->ndim - 1] : a->dim[a->ndim - 2];
    dim[n + 1] = tb ? b->dim[b->ndim - 2] : b->dim[b->ndim - 1];
    return n + 2;
}

/* GEMM with operands given by graph tensor index; output shaped by matmul_dims. */
static int gemm(ad_ctx *c, const char *sfx, int a, int b, int ta, int tb, int grad_of)
{
    int64_t dim[WL_MAXDIM + 2];
    const wl_tensor *ta_ = &c->g->t[a], *tb_ = &c->g->t[b];
    int nd = matmul_dims(ta_, tb_, ta, tb, dim);
    if (nd > WL_MAXDIM)
        return err_set(c->e, KT_EINPUT, c->f->file, NULL, "matmul gradient has too many dimensions");
    wl_attr at[2] = {attr_int("transpose_a", ta), attr_int("transpose_b", tb)};
    int in[2] = {a, b};
    const wl_tensor *gt = grad_of >= 0 ? FT(c, grad_of) : NULL;
    int gof = gt && same_dims(gt->ndim, gt->dim, nd, dim) ? grad_of : -1;
    return op1(c, sfx, OP_MATMUL, in, 2, nd, dim, ta_->dt, gof, at, 2);
}

/* matmul C = op(A) op(B): dA = dC op(B)^T, dB = op(A)^T dC, as GEMMs with transpose flags on the
 * stored operands (no transpose kernels, as cuBLAS does), then summed over broadcast batch dims. */
static int rule_matmul(ad_ctx *c, const wl_op *o, int dy)
{
    int ta = (int)wl_attr_int(o, "transpose_a", 0), tb = (int)wl_attr_int(o, "transpose_b", 0);
    int A = o->in[0], B = o->in[1];
    if (c->rg[A]) {
        /* A stored [M,K]: dC B^T; stored [K,M]: B dC^T */
        int r = ta ? gemm(c, "grad_a", B, dy, tb, 1, A) : gemm(c, "grad_a", dy, B, 0, !tb, A);
        if (r < 0 || accumulate(c, A, sum_to(c, "grad_a", r, A)))
            return -1;
    }
    if (c->rg[B]) {
        /* B stored [K,N]: A^T dC. Stored [N,K] (b.transpose(-1, -2) in PyTorch): autograd takes
         * the gradient of the [K,N] view, A^T dC, and returns its transpose, a strided view of
         * B's shape (TransposeBackward), not a contiguous tensor */
        int r = -1;
        const wl_tensor *bt = FT(c, B);
        int64_t kn[WL_MAXDIM + 2];
        int nd = tb ? matmul_dims(&c->g->t[A], &c->g->t[dy], !ta, 0, kn) : 0;
        if (tb && nd == bt->ndim && nd >= 2 && kn[nd - 2] == bt->dim[nd - 1] &&
            kn[nd - 1] == bt->dim[nd - 2] && same_dims(nd - 2, kn, nd - 2, bt->dim)) {
            int64_t perm[WL_MAXDIM];
            for (int i = 0; i < nd; i++)
                perm[i] = i;
            perm[nd - 2] = nd - 1;
            perm[nd - 1] = nd - 2;
            wl_attr at[2] = {attr_list("perm", perm, nd), attr_int("copy", 0)};
            int kt = gemm(c, "grad_bt", A, dy, !ta, 0, -1);
            r = kt < 0 ? -1 : op1_like(c, "grad_b", OP_TRANSPOSE, &kt, 1, B, at, 2);
        } else {
            r = tb ? gemm(c, "grad_b", dy, A, 1, ta, B) : gemm(c, "grad_b", A, dy, !ta, 0, B);
            r = r < 0 ? -1 : sum_to(c, "grad_b", r, B);
        }
        if (accumulate(c, B, r))
            return -1;
    }
    /* C (addmm/baddbmm): the gradient passes through, summed over its broadcast axes */
    if (o->nin == 3 && c->rg[o->in[2]] && accumulate(c, o->in[2], sum_to(c, "grad_c", dy, o->in[2])))
        return -1;
    return 0;
}

/* linear y = x W (+ b): dx = linear(dy, W) with the layout flag flipped; dW = x^T dy as one GEMM
 * over the flattened rows (free views to 2-D); db = sum of dy over the rows. */
static int rule_linear(ad_ctx *c, const wl_op *o, int dy)
{
    int tb = (int)wl_attr_int(o, "transpose_b", 0);
    int x = o->in[0], w = o->in[1];
    const wl_tensor *xt = FT(c, x), *yt = FT(c, o->out[0]);
    if (c->rg[x]) {
        wl_attr at = attr_int("transpose_b", !tb);
        int in[2] = {dy, w};
        if (accumulate(c, x, op1_like(c, "grad_x", OP_LINEAR, in, 2, x, &at, 1)))
            return -1;
    }
    int64_t k = xt->dim[xt->ndim - 1], n = yt->dim[yt->ndim - 1];
    int64_t m = xt->elems / k;
    if (c->rg[w]) {
        int64_t dx2[2] = {m, k}, dd2[2] = {m, n};
        int x2 = view_to(c, "grad_w.x2d", x, 2, dx2, -1);
        int y2 = view_to(c, "grad_w.dy2d", dy, 2, dd2, -1);
        if (x2 < 0 || y2 < 0)
            return -1;
        int r = tb ? gemm(c, "grad_w", y2, x2, 1, 0, w) : gemm(c, "grad_w", x2, y2, 1, 0, w);
        if (accumulate(c, w, r))
            return -1;
    }
    if (o->nin == 3 && c->rg[o->in[2]]) {
        int b = o->in[2];
        int64_t axes[WL_MAXDIM];
        int nax = 0;
        for (int i = 0; i < yt->ndim - 1; i++)
            axes[nax++] = i;
        int r = dy;
        if (nax) {
            wl_attr at[2] = {attr_str("op", "sum"), attr_list("axes", axes, nax)};
            r = op1_like(c, "grad_b", OP_REDUCE, &dy, 1, b, at, 2);
        }
        if (accumulate(c, b, r))
            return -1;
    }
    return 0;
}

/* Elementwise unary ops. GR_SELF (neg, copy, cast, scale): the same op, with its attributes, on
 * the gradient. GR_ACT: act_backward(grad, saved) where saved is what ATen's formula reads: the
 * output for relu (threshold_backward on the result), sigmoid, tanh, exp, sqrt, rsqrt; the input
 * for gelu, silu, log, abs, square (op table: grad_saves_out). */
static int rule_unary(ad_ctx *c, const wl_op *o, int dy)
{
    int x = o->in[0];
    if (!c->rg[x])
        return 0;
    const op_info *inf = op_info_of(o->type);
    int r;
    if (inf->grad == GR_SELF) {
        r = op1_like(c, "grad_x", o->type, &dy, 1, x, o->attr, o->nattr);
    } else {
        int in[2] = {dy, inf->grad_saves_out ? o->out[0] : x};
        wl_attr at = attr_str("op", op_name(o->type));
        r = op1_like(c, "grad_x", OP_ACT_BWD, in, 2, x, &at, 1);
    }
    return accumulate(c, x, r);
}

/* add/sub: the gradient passes through (sub: negated for b); mul: dy*b, dy*a; div: dy/b and
 * -(dy*y)/b. Each is summed down to its operand's shape when that operand was broadcast. */
static int rule_binary(ad_ctx *c, const wl_op *o, int dy)
{
    int a = o->in[0], b = o->in[1], y = o->out[0];
    op_grad rule = op_info_of(o->type)->grad;
    const wl_tensor *yt = FT(c, y);
    dtype dt = yt->dt;
    if (c->rg[a]) {
        int r = dy;
        if (rule == GR_MUL || rule == GR_DIV) {
            int in[2] = {dy, b};
            r = op1(c, "grad_a", o->type, in, 2, yt->ndim, yt->dim, dt,
                    same_dims(yt->ndim, yt->dim, FT(c, a)->ndim, FT(c, a)->dim) ? a : -1, NULL, 0);
        }
        if (r < 0 || accumulate(c, a, sum_to(c, "grad_a", r, a)))
            return -1;
    }
    if (c->rg[b]) {
        int gof = same_dims(yt->ndim, yt->dim, FT(c, b)->ndim, FT(c, b)->dim) ? b : -1;
        int r = dy;
        if (rule == GR_SUB) {
            r = op1(c, "grad_b", OP_NEG, &dy, 1, yt->ndim, yt->dim, dt, gof, NULL, 0);
        } else if (rule == GR_MUL) {
            int in[2] = {dy, a};
            r = op1(c, "grad_b", OP_MUL, in, 2, yt->ndim, yt->dim, dt, gof, NULL, 0);
        } else if (rule == GR_DIV) {
            int in[2] = {dy, y};
            int t1 = op1(c, "grad_b.mul", OP_MUL, in, 2, yt->ndim, yt->dim, dt, -1, NULL, 0);
            int in2[2] = {t1, b};
            int t2 = t1 < 0 ? -1 : op1(c, "grad_b.div", OP_DIV, in2, 2, yt->ndim, yt->dim, dt, -1, NULL, 0);
            r = t2 < 0 ? -1 : op1(c, "grad_b", OP_NEG, &t2, 1, yt->ndim, yt->dim, dt, gof, NULL, 0);
        }
        if (r < 0 || accumulate(c, b, sum_to(c, "grad_b", r, b)))
            return -1;
    }
    return 0;
}

/* A normalization's backward: one op `type`(dy, x, [gamma]) -> dx, [dgamma, [dbeta]] with the
 * given attributes, each gradient accumulated into its input's. */
static int norm_like_backward(ad_ctx *c, const wl_op *o, int dy, op_type type, const wl_attr *at,
                              int nat)
{
    int need = 0;
    for (int i = 0; i < o->nin; i++)
        need |= c->rg[o->in[i]];
    if (!need)
        return 0;
    char nm[AD_NAME_MAX], tn[AD_NAME_MAX];
    static const char *const SFX[3] = {"grad_x", "grad_w", "grad_b"};
    int in[3] = {dy, o->in[0], o->nin > 1 ? o->in[1] : -1};
    int out[3];
    for (int i = 0; i < o->nin; i++) {
        op_name_of(c, SFX[i], tn);
        if ((out[i] = grad_tensor(c, tn, o->in[i])) < 0)
            return -1;
    }
    op_name_of(c, "grad", nm);
    if (emit(c, nm, (int)type, in, o->nin > 1 ? 3 : 2, out, o->nin, at, nat))
        return -1;
    for (int i = 0; i < o->nin; i++)
        if (c->rg[o->in[i]] && accumulate(c, o->in[i], out[i]))
            return -1;
    return 0;
}

/* layernorm/rmsnorm: one norm_backward(dy, x, [gamma]) -> dx, [dgamma, [dbeta]] (the fused ATen
 * kernels; the per-row mean/rstd they also read are [rows]-sized and not modelled). */
static int rule_norm(ad_ctx *c, const wl_op *o, int dy)
{
    wl_attr at = attr_str("op", op_name(o->type));
    return norm_like_backward(c, o, dy, OP_NORM_BWD, &at, 1);
}

/* attention: one flash-style attention_backward(dO, q, k, v, O) -> dq, dk, dv. */
static int rule_attention(ad_ctx *c, const wl_op *o, int dy)
{
    if (!c->rg[o->in[0]] && !c->rg[o->in[1]] && !c->rg[o->in[2]])
        return 0;
    if (o->nin == 4 && c->rg[o->in[3]])
        return unsupported(c, o, "the mask");
    char nm[AD_NAME_MAX], tn[AD_NAME_MAX];
    static const char *const SFX[3] = {"grad_q", "grad_k", "grad_v"};
    /* the backward re-reads the mask as it recomputes the scores */
    int in[6] = {dy, o->in[0], o->in[1], o->in[2], o->out[0], o->nin == 4 ? o->in[3] : -1};
    int out[3];
    for (int i = 0; i < 3; i++) {
        op_name_of(c, SFX[i], tn);
        if ((out[i] = grad_tensor(c, tn, o->in[i])) < 0)
            return -1;
    }
    op_name_of(c, "grad", nm);
    const wl_attr *ca = wl_attr_get(o, "causal");
    if (emit(c, nm, OP_ATTN_BWD, in, o->nin == 4 ? 6 : 5, out, 3, ca, ca ? 1 : 0))
        return -1;
    for (int i = 0; i < 3; i++)
        if (c->rg[o->in[i]] && accumulate(c, o->in[i], out[i]))
            return -1;
    return 0;
}

static int norm_axis(int64_t axis, int ndim)
{
    return (int)(axis < 0 ? axis + ndim : axis);
}

/* concat: the gradient of input i is the slice of dy at its offset along the axis, a strided
 * view (copy: false) as PyTorch's CatBackward returns it (narrow): no kernel; its consumers read
 * dy's rows in place (a GEMM reading a view along the last axis sees dy's row as its leading
 * dimension: op.c row_stride). */
static int rule_concat(ad_ctx *c, const wl_op *o, int dy)
{
    int64_t axis = norm_axis(wl_attr_int(o, "axis", 0), FT(c, o->in[0])->ndim), off = 0;
    for (int i = 0; i < o->nin; i++) {
        int x = o->in[i];
        int64_t len = FT(c, x)->dim[axis];
        if (c->rg[x]) {
            char sfx[32];
            snprintf(sfx, sizeof sfx, "grad_in%d", i);
            wl_attr at[4] = {attr_int("axis", axis), attr_int("start", off), attr_int("end", off + len),
                             attr_int("copy", 0)};
            if (accumulate(c, x, op1_like(c, sfx, OP_SLICE, &dy, 1, x, at, 4)))
                return -1;
        }
        off += len;
    }
    return 0;
}

/* slice: the gradient is dy padded with zeros back to x's shape, modelled as concat(fill, dy,
 * fill) along the axis (the fills write only the padding; ATen's slice_backward writes zeros over
 * all of x then copies dy in: the same kernels count, slightly fewer bytes). */
static int rule_slice(ad_ctx *c, const wl_op *o, int dy)
{
    int x = o->in[0];
    if (!c->rg[x])
        return 0;
    const wl_tensor *xt = FT(c, x);
    int axis = norm_axis(wl_attr_int(o, "axis", 0), xt->ndim);
    int64_t s = wl_attr_int(o, "start", 0), en = wl_attr_int(o, "end", xt->dim[axis]);
    if (s == 0 && en == xt->dim[axis])
        return accumulate(c, x, dy);
    int in[3], nin = 0;
    int64_t dim[WL_MAXDIM];
    memcpy(dim, xt->dim, sizeof dim);
    wl_attr zero = attr_int("value", AD_ZERO_VALUE);
    if (s > 0) {
        dim[axis] = s;
        if ((in[nin++] = op1(c, "grad_x.pad_lo", OP_FILL, NULL, 0, xt->ndim, dim, xt->dt, -1, &zero, 1)) < 0)
            return -1;
    }
    in[nin++] = dy;
    if (en < xt->dim[axis]) {
        dim[axis] = xt->dim[axis] - en;
        if ((in[nin++] = op1(c, "grad_x.pad_hi", OP_FILL, NULL, 0, xt->ndim, dim, xt->dt, -1, &zero, 1)) < 0)
            return -1;
    }
    wl_attr at = attr_int("axis", axis);
    return accumulate(c, x, op1_like(c, "grad_x", OP_CONCAT, in, nin, x, &at, 1));
}

/* transpose: the inverse permutation, with the forward op's copy flag. */
static int rule_transpose(ad_ctx *c, const wl_op *o, int dy)
{
    int x = o->in[0];
    if (!c->rg[x])
        return 0;
    wl_attr at[2];
    int nat = 0;
    int64_t inv[WL_MAXDIM];
    const wl_attr *p = wl_attr_get(o, "perm"), *cp = wl_attr_get(o, "copy");
    if (p) {
        int nd = FT(c, x)->ndim;
        for (int i = 0; i < p->nlist; i++)
            inv[norm_axis(p->list[i], nd)] = i;
        at[nat++] = attr_list("perm", inv, p->nlist);
    }
    if (cp)
        at[nat++] = *cp;
    return accumulate(c, x, op1_like(c, "grad_x", OP_TRANSPOSE, &dy, 1, x, at, nat));
}

/* reduce: dy broadcast back to x's shape by one kernel (`expand`; mean's 1/n folds into it);
 * max additionally masks with the saved input (act_backward "reduce_max"). */
static int rule_reduce(ad_ctx *c, const wl_op *o, int dy)
{
    int x = o->in[0];
    if (!c->rg[x])
        return 0;
    const wl_tensor *xt = FT(c, x);
    const wl_attr *ax = wl_attr_get(o, "axes");
    int64_t kd[WL_MAXDIM];
    memcpy(kd, xt->dim, sizeof kd);
    for (int i = 0; ax && i < ax->nlist; i++)
        kd[norm_axis(ax->list[i], xt->ndim)] = 1;
    int k = view_to(c, "grad_x.keepdim", dy, xt->ndim, kd, -1);
    if (k < 0)
        return -1;
    int max = !strcmp(wl_attr_str(o, "op", "sum"), "max");
    int r = op1(c, max ? "grad_x.expand" : "grad_x", OP_EXPAND, &k, 1, xt->ndim, xt->dim, xt->dt,
                max ? -1 : x, NULL, 0);
    if (r >= 0 && max) {
        int in[2] = {r, x};
        wl_attr at = attr_str("op", "reduce_max");
        r = op1_like(c, "grad_x", OP_ACT_BWD, in, 2, x, &at, 1);
    }
    return accumulate(c, x, r);
}

/* Index ops: gather/index_select -> scatter_add/index_add of dy into x's shape; embedding ->
 * embedding_backward of the flattened dy rows into the dense [R, D] table gradient (PyTorch's
 * dense embedding backward: sort-based in ATen, zero-fill + atomic adds under inductor), or with
 * sparse_grad a sparse one (below); scatter_add/index_add -> gather/index_select of dy;
 * index_copy -> src: index_select of dy, dst: dy with src's rows replaced by zeros. */
static int rule_index(ad_ctx *c, const wl_op *o, int dy)
{
    const wl_attr *ax = wl_attr_get(o, "axis");
    int nax = ax ? 1 : 0;
    int x = o->in[0], idx = o->in[1];
    const op_info *inf = op_info_of(o->type);
    if (inf->grad == GR_EMBEDDING) {
        if (!c->rg[x])
            return 0;
        const wl_tensor *it = FT(c, idx);
        int64_t d2[2] = {it->elems, FT(c, x)->dim[1]}, i1[1] = {it->elems};
        if (wl_attr_int(o, "sparse_grad", 0)) {
            /* nn.Embedding(sparse=True), as dlrm_s_pytorch.py's EmbeddingBag: ATen's
             * embedding_sparse_backward returns a COO tensor of the lookup indices and dy's rows
             * (grad.reshape(-1, D): a view of a contiguous dy, a copy of a strided one); no
             * table-sized tensor is written. The values are the table's gradient (its rows only,
             * [I, D]); the indices are the lookup's own. */
            if (c->grad[x] >= 0 || c->sparse_idx[x] >= 0)
                return unsupported(c, o, "a table with a sparse gradient read by another op");
            int v = dy;
            const wl_tensor *dt = &c->g->t[dy];
            if (!op_contiguous(c->g, dy) &&
                (v = op1(c, "grad_w.contig", OP_COPY, &dy, 1, dt->ndim, dt->dim, dt->dt, -1, NULL,
                         0)) < 0)
                return -1;
            int gv = op1(c, "grad_w.values", OP_VIEW, &v, 1, 2, d2, c->g->t[v].dt, x, NULL, 0);
            int i2 = gv < 0 ? -1 : view_to(c, "grad_w.indices", idx, 1, i1, -1);
            if (i2 < 0)
                return -1;
            c->grad[x] = gv;
            c->sparse_idx[x] = i2;
            c->sparse_op[x] = c->cur;
            return 0;
        }
        int g2 = view_to(c, "grad_w.dy2d", dy, 2, d2, -1);
        int i2 = g2 < 0 ? -1 : view_to(c, "grad_w.idx1d", idx, 1, i1, -1);
        if (i2 < 0)
            return -1;
        int in[2] = {g2, i2};
        return accumulate(c, x, op1_like(c, "grad_w", OP_EMBEDDING_BWD, in, 2, x, NULL, 0));
    }
    if (inf->grad == GR_DUAL && o->nin == 3) {
        /* index_add/scatter_add into a destination: out = dst + (src rows added at index): dst's
         * gradient is dy itself, src's the dual gather of dy */
        int src = o->in[2];
        if (c->rg[x] && accumulate(c, x, dy))
            return -1;
        if (c->rg[src]) {
            int in[2] = {dy, idx};
            if (accumulate(c, src, op1_like(c, "grad_src", inf->grad_dual, in, 2, src, ax, nax)))
                return -1;
        }
        return 0;
    }
    if (inf->grad == GR_DUAL) { /* gather <-> scatter_add, index_select <-> index_add */
        if (!c->rg[x])
            return 0;
        int in[2] = {dy, idx};
        return accumulate(c, x, op1_like(c, "grad_x", inf->grad_dual, in, 2, x, ax, nax));
    }
    /* GR_INDEX_COPY */
    int src = o->in[2];
    if (c->rg[src]) {
        int in[2] = {dy, idx};
        if (accumulate(c, src, op1_like(c, "grad_src", OP_INDEX_SELECT, in, 2, src, ax, nax)))
            return -1;
    }
    if (c->rg[x]) {
        const wl_tensor *st = FT(c, src);
        wl_attr zero = attr_int("value", AD_ZERO_VALUE);
        int z = op1(c, "grad_dst.zeros", OP_FILL, NULL, 0, st->ndim, st->dim, FT(c, x)->dt, -1,
                    &zero, 1);
        int in[3] = {dy, idx, z};
        if (z < 0 || accumulate(c, x, op1_like(c, "grad_dst", OP_INDEX_COPY, in, 3, x, ax, nax)))
            return -1;
    }
    return 0;
}

/* The gradients of a convolution-like op o of inputs x, w with o's attributes: dx = dx_type(dy,
 * w); dw = conv2d_wgrad(wg_dy, wg_x) (the weight gradient of the convolution, given what plays
 * its output gradient and its input). */
static int conv_grads(ad_ctx *c, const wl_op *o, int dy, int dx_type, int wg_dy, int wg_x)
{
    int x = o->in[0], w = o->in[1];
    if (c->rg[x]) {
        int in[2] = {dy, w};
        if (accumulate(c, x, op1_like(c, "grad_x", dx_type, in, 2, x, o->attr, o->nattr)))
            return -1;
    }
    if (c->rg[w]) {
        int in[2] = {wg_dy, wg_x};
        if (accumulate(c, w, op1_like(c, "grad_w", OP_CONV2D_WGRAD, in, 2, w, o->attr, o->nattr)))
            return -1;
    }
    return 0;
}

/* conv2d (cuDNN's backward, as PyTorch's convolution_backward launches it): dx = conv2d_dgrad(dy,
 * w) (an implicit GEMM over the input pixels: a transposed convolution), dw = conv2d_wgrad(dy, x)
 * (an implicit GEMM reducing over every output pixel), db = dy summed over the batch and spatial
 * axes (one `reduce`); dgrad and wgrad take the forward's attributes. x is saved for wgrad. */
static int rule_conv(ad_ctx *c, const wl_op *o, int dy)
{
    if (conv_grads(c, o, dy, OP_CONV2D_DGRAD, dy, o->in[0]))
        return -1;
    if (o->nin == 3 && c->rg[o->in[2]]) {
        int nhwc = !strcmp(wl_attr_str(o, "layout", "nchw"), "nhwc");
        int64_t axes[3] = {0, nhwc ? 1 : 2, nhwc ? 2 : 3};
        wl_attr at[2] = {attr_str("op", "sum"), attr_list("axes", axes, 3)};
        if (accumulate(c, o->in[2], op1_like(c, "grad_b", OP_REDUCE, &dy, 1, o->in[2], at, 2)))
            return -1;
    }
    return 0;
}

/* A transposed convolution y = conv2d_dgrad(x, w) (x in the place of an output gradient): it is
 * linear in x and w, its adjoint in x is the convolution it inverts, dx = conv2d(dy, w), and in
 * w the weight gradient of that convolution with x as its output gradient and dy as its input,
 * dw = conv2d_wgrad(x, dy); both with the forward's attributes. */
static int rule_conv_t(ad_ctx *c, const wl_op *o, int dy)
{
    return conv_grads(c, o, dy, OP_CONV2D, o->in[0], dy);
}

/* batchnorm: one batchnorm_backward(dy, x, [gamma]) -> dx, [dgamma, [dbeta]] with the forward's
 * attributes (ATen's batch_norm_backward: a per-channel reduction, then the elementwise dx). */
static int rule_batchnorm(ad_ctx *c, const wl_op *o, int dy)
{
    return norm_like_backward(c, o, dy, OP_BATCHNORM_BWD, o->attr, o->nattr);
}

/* pool2d: pool2d_backward(dy) -> dx for average pooling; max pooling also reads the argmax
 * indices its forward kernel wrote (the training graph declares them as the forward's second
 * output, copy_forward), a saved activation. */
static int rule_pool(ad_ctx *c, const wl_op *o, int dy)
{
    int x = o->in[0];
    if (!c->rg[x])
        return 0;
    const wl_op *fo = &c->g->op[c->cur]; /* the forward op as copied: its indices output */
    int in[2] = {dy, fo->nout > 1 ? fo->out[1] : -1};
    int nin = fo->nout > 1 ? 2 : 1;
    if (nin == 2)
        c->g->t[storage_of(c->g, in[1])].saved = 1;
    return accumulate(c, x, op1_like(c, "grad_x", OP_POOL2D_BWD, in, nin, x, o->attr, o->nattr));
}

/* topk / sort: ATen's value_selecting_reduction_backward: zeros of x's shape, dy scattered into
 * them at the saved indices along the axis (a `fill` and a `scatter`). */
static int rule_select(ad_ctx *c, const wl_op *o, int dy)
{
    int x = o->in[0];
    if (!c->rg[x])
        return 0;
    const wl_tensor *xt = FT(c, x);
    int64_t axis = norm_axis(wl_attr_int(o, "axis", -1), xt->ndim);
    wl_attr zero = attr_int("value", AD_ZERO_VALUE), at = attr_int("axis", axis);
    int z = op1(c, "grad_x.zeros", OP_FILL, NULL, 0, xt->ndim, xt->dim, xt->dt, -1, &zero, 1);
    int in[3] = {z, o->out[1], dy};
    return z < 0 ? -1 : accumulate(c, x, op1_like(c, "grad_x", OP_SCATTER, in, 3, x, &at, 1));
}

/* Mixture-of-experts routing: dispatch and combine are each other's transposes. dispatch (x,
 * ids, [gate]) -> buffer: dx = moe_combine(dbuf, ids, [gate]) (a token's kept slots summed back),
 * dgate = moe_gate_backward(x, dbuf, ids) (<x_t, dbuf_slot> per slot); combine (y, ids, [gate])
 * -> out: dy = moe_dispatch(dout, ids, [gate]) (each kept slot gets its token's gradient, dropped
 * and padding rows zero), dgate = moe_gate_backward(dout, y, ids). The integer expert ids take no
 * gradient; x (dispatch) or y (combine) is saved when the gate needs its gradient. */
static int rule_moe(ad_ctx *c, const wl_op *o, int dy)
{
    int src = o->in[0], ids = o->in[1], gate = o->nin == 3 ? o->in[2] : -1;
    int disp = o->type == OP_MOE_DISPATCH;
    if (c->rg[src]) {
        int in[3] = {dy, ids, gate};
        if (accumulate(c, src, op1_like(c, "grad_x", disp ? OP_MOE_COMBINE : OP_MOE_DISPATCH, in,
                                        o->nin, src, o->attr, o->nattr)))
            return -1;
    }
    if (gate >= 0 && c->rg[gate]) {
        int in[3] = {disp ? src : dy, disp ? dy : src, ids};
        if (accumulate(c, gate, op1_like(c, "grad_gate", OP_MOE_GATE_BWD, in, 3, gate, o->attr,
                                         o->nattr)))
            return -1;
    }
    return 0;
}

/* cumsum: the reverse cumulative sum, as ATen's cumsum_backward computes it:
 * dy.flip(axis).cumsum(axis).flip(axis) (two flip copies around a cumsum); a length-1 axis
 * passes dy through. */
static int rule_cumsum(ad_ctx *c, const wl_op *o, int dy)
{
    int x = o->in[0];
    if (!c->rg[x])
        return 0;
    const wl_tensor *xt = FT(c, x), *gt = &c->g->t[dy];
    int64_t axis = norm_axis(wl_attr_int(o, "axis", -1), xt->ndim);
    if (xt->dim[axis] == 1)
        return accumulate(c, x, dy);
    wl_attr at = attr_int("axis", axis);
    int f = op1(c, "grad_x.flip", OP_COPY, &dy, 1, gt->ndim, gt->dim, gt->dt, -1, NULL, 0);
    int s2 = f < 0 ? -1 : op1(c, "grad_x.cumsum", OP_CUMSUM, &f, 1, gt->ndim, gt->dim, gt->dt, -1, &at, 1);
    return s2 < 0 ? -1 : accumulate(c, x, op1_like(c, "grad_x", OP_COPY, &s2, 1, x, NULL, 0));
}

/* Differentiate forward op c->cur whose output gradient is dy: the op table's gradient rule. */
static int backward_op(ad_ctx *c, const wl_op *o, int dy)
{
    switch (op_info_of(o->type)->grad) {
    case GR_MATMUL:
        return rule_matmul(c, o, dy);
    case GR_LINEAR:
        return rule_linear(c, o, dy);
    case GR_SELF:
    case GR_ACT:
        return rule_unary(c, o, dy);
    case GR_ADD:
    case GR_SUB:
    case GR_MUL:
    case GR_DIV:
        return rule_binary(c, o, dy);
    case GR_SOFTMAX: {
        int x = o->in[0];
        if (!c->rg[x])
            return 0;
        int in[2] = {dy, o->out[0]};
        const wl_attr *ax = wl_attr_get(o, "axis");
        return accumulate(c, x, op1_like(c, "grad_x", OP_SOFTMAX_BWD, in, 2, x, ax, ax ? 1 : 0));
    }
    case GR_NORM:
        return rule_norm(c, o, dy);
    case GR_ATTENTION:
        return rule_attention(c, o, dy);
    case GR_ROPE: {
        /* the inverse rotation: a rope with the same cos/sin (sin negated in the kernel) */
        for (int i = 1; i < o->nin; i++)
            if (c->rg[o->in[i]])
                return unsupported(c, o, "cos/sin");
        int x = o->in[0], in[3] = {dy, o->nin > 1 ? o->in[1] : -1, o->nin > 2 ? o->in[2] : -1};
        if (!c->rg[x])
            return 0;
        return accumulate(c, x, op1_like(c, "grad_x", OP_ROPE, in, o->nin, x, NULL, 0));
    }
    case GR_EMBEDDING:
    case GR_DUAL:
    case GR_INDEX_COPY:
        return rule_index(c, o, dy);
    case GR_CONCAT:
        return rule_concat(c, o, dy);
    case GR_SLICE:
        return rule_slice(c, o, dy);
    case GR_TRANSPOSE:
        return rule_transpose(c, o, dy);
    case GR_VIEW: {
        int x = o->in[0];
        if (!c->rg[x])
            return 0;
        const wl_attr *cp = wl_attr_get(o, "copy");
        return accumulate(c, x, op1_like(c, "grad_x", o->type, &dy, 1, x, cp, cp ? 1 : 0));
    }
    case GR_REDUCE:
        return rule_reduce(c, o, dy);
    case GR_EXPAND: {
        int x = o->in[0];
        return c->rg[x] ? accumulate(c, x, sum_to(c, "grad_x", dy, x)) : 0;
    }
    case GR_CONV:
        return rule_conv(c, o, dy);
    case GR_CONV_T:
        return rule_conv_t(c, o, dy);
    case GR_BATCHNORM:
        return rule_batchnorm(c, o, dy);
    case GR_POOL:
        return rule_pool(c, o, dy);
    case GR_SELECT:
        return rule_select(c, o, dy);
    case GR_CUMSUM:
        return rule_cumsum(c, o, dy);
    case GR_MOE_DISPATCH:
    case GR_MOE_COMBINE:
        return rule_moe(c, o, dy);
    case GR_DROPOUT: {
        /* ATen's native_dropout_backward: dy * mask * 1/(1-p), one kernel (the scale is the
         * mul's constant) */
        int x = o->in[0], in[2] = {dy, o->out[1]};
        return c->rg[x] ? accumulate(c, x, op1_like(c, "grad_x", OP_MUL, in, 2, x, NULL, 0)) : 0;
    }
    case GR_NONE:
        return 0;
    case GR_UNSUPPORTED:
    default:
        return unsupported(c, o, "the inputs");
    }
}

/* Copy the forward graph into g (same tensor and op indices), phase PH_FWD. */
static int copy_forward(ad_ctx *c)
{
    const wl_graph *f = c->f;
    wl_graph *g = c->g;
    g->source = arena_strdup(g->a, f->source);
    g->file = arena_strdup(g->a, f->file);
    g->paper_ops[0] = f->paper_ops[0];
    g->paper_ops[1] = f->paper_ops[1];
    g->nparam = f->nparam;
    g->param = arena_calloc(g->a, (size_t)(f->nparam + 1), sizeof *g->param);
    if (!g->param || !g->source || !g->file)
        return err_set(c->e, KT_EINTERNAL, f->file, NULL, "out of memory");
    for (int i = 0; i < f->nparam; i++) {
        g->param[i] = f->param[i];
        g->param[i].name = arena_strdup(g->a, f->param[i].name);
    }
    for (int i = 0; i < f->ntensor; i++) {
        const wl_tensor *t = &f->t[i];
        int k = wl_add_tensor(g, t->name, t->ndim, t->dim, t->dt, t->kind, c->e);
        if (k < 0)
            return -1;
        g->t[k].requires_grad = t->requires_grad;
    }
    for (int i = 0; i < f->nop; i++) {
        const wl_op *o = &f->op[i];
        wl_attr at[WL_MAXDIM * 2];
        int nat = o->nattr < WL_MAXDIM * 2 ? o->nattr : WL_MAXDIM * 2;
        for (int j = 0; j < nat; j++) {
            at[j] = o->attr[j];
            at[j].key = arena_strdup(g->a, o->attr[j].key);
            if (o->attr[j].sval)
                at[j].sval = arena_strdup(g->a, o->attr[j].sval);
        }
        int out[2], nout = o->nout;
        const int *outs = o->out;
        if (o->type == OP_POOL2D && o->nout == 1 && !strcmp(wl_attr_str(o, "op", ""), "max")) {
            /* CUDA's max pooling writes its argmax indices anyway (op.c pool_work); the
             * backward reads them, so the training graph declares them */
            const wl_tensor *y = &f->t[o->out[0]];
            char tn[AD_NAME_MAX];
            ad_name(c, tn, "%s.indices", y->name);
            if (name_ok(c))
                return -1;
            out[0] = o->out[0];
            out[1] = wl_add_tensor(g, tn, y->ndim, y->dim, DT_INT64, TK_INTER, c->e);
            if (out[1] < 0)
                return -1;
            outs = out;
            nout = 2;
        }
        int k = wl_add_op(g, o->name, o->type, o->in, o->nin, outs, nout, at, nat, c->e);
        if (k < 0)
            return -1;
        g->op[k].phase = PH_FWD;
        g->op[k].fwd = -1;
        g->op[k].block = o->block;
    }
    if (f->nblock) { /* a composed model: its blocks (backward ops join their forward op's) */
        g->block = arena_calloc(g->a, (size_t)f->nblock, sizeof *g->block);
        if (!g->block)
            return err_set(c->e, KT_EINTERNAL, f->file, NULL, "out of memory");
        for (int i = 0; i < f->nblock; i++) {
            g->block[i] = f->block[i];
            g->block[i].name = arena_strdup(g->a, f->block[i].name);
            g->block[i].repeat = f->block[i].repeat ? arena_strdup(g->a, f->block[i].repeat) : NULL;
            if (!g->block[i].name || (f->block[i].repeat && !g->block[i].repeat))
                return err_set(c->e, KT_EINTERNAL, f->file, NULL, "out of memory");
        }
        g->nblock = g->cap_block = f->nblock;
    }
    return 0;
}

/* Optimizer step per weight with a gradient, in declaration order (PyTorch parameter order).
 * SGD (torch.optim.SGD, foreach, no momentum): _foreach_add_(params, grads, alpha=-lr) is one
 * fused read-grad/read-param/write-param pass, modelled as `sub` p - lr*g (lr folded in); a
 * sparse gradient is added in place at its rows (ATen's add_ of a COO tensor into a dense one:
 * index_add_ of the values), an `index_add`. Adam: one fused adam_update(p, g, m, v) -> p', m',
 * v' with fp32 moments (torch fused Adam), which takes no sparse gradient (torch.optim.Adam
 * raises; SparseAdam is another optimizer). */
static int optimizer_step(ad_ctx *c, int optimizer, const int *first_use)
{
    c->phase = PH_OPT;
    for (int w = 0; w < c->nft; w++) {
        const wl_tensor *wt = FT(c, w);
        if (wt->kind != TK_WEIGHT || c->grad[w] < 0)
            continue;
        c->cur = first_use[w];
        if (c->sparse_idx[w] >= 0 && optimizer != OPTIM_SGD) {
            char p[64];
            snprintf(p, sizeof p, "ops[%d].attrs.sparse_grad", c->sparse_op[w]);
            return err_set(c->e, KT_EINPUT, c->f->file, p,
                           "training with adam: table \"%s\" has a sparse gradient, which "
                           "torch.optim.Adam does not take (use --optimizer sgd or none, or "
                           "sparse_grad 0)",
                           wt->name);
        }
        char nm[AD_NAME_MAX], tn[AD_NAME_MAX];
        ad_name(c, tn, "%s.new", wt->name);
        int pn = new_tensor(c, tn, wt->ndim, wt->dim, wt->dt, -1);
        if (pn < 0)
            return -1;
        c->g->t[pn].kind = TK_OUTPUT;
        if (optimizer == OPTIM_SGD) {
            ad_name(c, nm, "%s.sgd", wt->name);
            if (c->sparse_idx[w] >= 0) {
                int in[3] = {w, c->sparse_idx[w], c->grad[w]};
                if (emit(c, nm, OP_INDEX_ADD, in, 3, &pn, 1, NULL, 0))
                    return -1;
                continue;
            }
            int in[2] = {w, c->grad[w]};
            if (emit(c, nm, OP_SUB, in, 2, &pn, 1, NULL, 0))
                return -1;
            continue;
        }
        int in[4] = {w, c->grad[w], -1, -1}, out[3] = {pn, -1, -1};
        static const char *const MOM[2] = {"adam_m", "adam_v"};
        for (int i = 0; i < 2; i++) {
            ad_name(c, tn, "%s.%s", wt->name, MOM[i]);
            in[2 + i] = name_ok(c) ? -1
                                   : wl_add_tensor(c->g, tn, wt->ndim, wt->dim, DT_FP32, TK_WEIGHT, c->e);
            ad_name(c, tn, "%s.%s.new", wt->name, MOM[i]);
            out[1 + i] = new_tensor(c, tn, wt->ndim, wt->dim, DT_FP32, -1);
            if (in[2 + i] < 0 || out[1 + i] < 0)
                return -1;
            c->g->t[out[1 + i]].kind = TK_OUTPUT;
        }
        ad_name(c, nm, "%s.adam", wt->name);
        if (emit(c, nm, OP_ADAM, in, 4, out, 3, NULL, 0))
            return -1;
    }
    return 0;
}

/* Initial capacities: a training graph has about 3-4x the forward's tensors and ops. */
enum { AD_GROWTH = 6, AD_SLACK = 64 };

int ad_training_graph(const wl_graph *fwd, int optimizer, arena *a, wl_graph *out, kt_err *e)
{
    if (optimizer != OPTIM_NONE && optimizer != OPTIM_SGD && optimizer != OPTIM_ADAM)
        return err_set(e, KT_EINPUT, fwd->file, NULL, "unknown optimizer %d", optimizer);
    wl_init(out, fwd->name, a);
    ad_ctx c = {fwd, out, e, fwd->ntensor, NULL, NULL, NULL, NULL, NULL, -1, PH_BWD, 0};
    int nt = fwd->ntensor;
    c.grad = arena_calloc(a, (size_t)nt + 1, sizeof(int));
    c.sparse_idx = arena_calloc(a, (size_t)nt + 1, sizeof(int));
    c.sparse_op = arena_calloc(a, (size_t)nt + 1, sizeof(int));
    c.nacc = arena_calloc(a, (size_t)nt + 1, sizeof(int));
    c.rg = arena_calloc(a, (size_t)nt + 1, 1);
    int *first_use = arena_calloc(a, (size_t)nt + 1, sizeof(int));
    out->t = arena_calloc(a, (size_t)nt * AD_GROWTH + AD_SLACK, sizeof *out->t);
    out->op = arena_calloc(a, (size_t)fwd->nop * AD_GROWTH + AD_SLACK, sizeof *out->op);
    if (!c.grad || !c.nacc || !c.rg || !c.sparse_idx || !c.sparse_op || !first_use || !out->t ||
        !out->op || !out->name)
        return err_set(e, KT_EINTERNAL, fwd->file, NULL, "out of memory");
    out->cap_tensor = nt * AD_GROWTH + AD_SLACK;
    out->cap_op = fwd->nop * AD_GROWTH + AD_SLACK;
    if (copy_forward(&c))
        return -1;
    for (int i = 0; i < nt; i++) {
        c.grad[i] = c.sparse_idx[i] = -1;
        first_use[i] = -1;
        c.rg[i] = (fwd->t[i].kind == TK_WEIGHT || fwd->t[i].requires_grad) &&
                  dt_is_float(fwd->t[i].dt);
    }
    /* requires-grad: forward propagation from the weights */
    for (int i = 0; i < fwd->nop; i++) {
        const wl_op *o = &fwd->op[i];
        int any = 0;
        for (int j = 0; j < o->nin; j++) {
            any |= c.rg[o->in[j]];
            if (first_use[o->in[j]] < 0)
                first_use[o->in[j]] = i;
        }
        for (int j = 0; j < o->nout; j++)
            c.rg[o->out[j]] = any && dt_is_float(fwd->t[o->out[j]].dt);
    }
    /* seeds: loss = sum of the outputs, d loss / d y = ones */
    for (int i = 0; i < nt; i++) {
        if (fwd->t[i].kind != TK_OUTPUT || !c.rg[i])
            continue;
        char nm[AD_NAME_MAX];
        ad_name(&c, nm, "%s.grad_ones", fwd->t[i].name);
        c.cur = fwd->t[i].producer;
        int s = grad_tensor(&c, nm, i);
        wl_attr one = attr_int("value", AD_SEED_VALUE);
        if (s < 0 || emit(&c, nm, OP_FILL, NULL, 0, &s, 1, &one, 1))
            return -1;
        c.grad[i] = s;
    }
    for (int i = fwd->nop - 1; i >= 0; i--) {
        const wl_op *o = &fwd->op[i];
        if (o->nout < 1 || c.grad[o->out[0]] < 0)
            continue;
        int need = 0;
        for (int j = 0; j < o->nin; j++)
            need |= c.rg[o->in[j]];
        if (!need)
            continue;
        c.cur = i;
        /* ops with more outputs (topk, sort: indices; dropout: mask; max pooling: indices)
         * differentiate their first; the others are integer or bool and never need gradients */
        for (int j = 1; j < o->nout; j++)
            if (c.grad[o->out[j]] >= 0)
                return unsupported(&c, o, "a second output");
        if (backward_op(&c, o, c.grad[o->out[0]]))
            return -1;
    }
    /* weight gradients are graph outputs; a gradient shared with another tensor (passed through
     * an add) is copied first, as AccumulateGrad clones a gradient it does not own */
    for (int w = 0; w < nt; w++) {
        if ((fwd->t[w].kind != TK_WEIGHT && !fwd->t[w].requires_grad) || c.grad[w] < 0)
            continue;
        if (out->t[c.grad[w]].grad_of != w) {
            char nm[AD_NAME_MAX];
            ad_name(&c, nm, "%s.grad_copy", fwd->t[w].name);
            c.cur = first_use[w];
            int t = grad_tensor(&c, nm, w);
            if (t < 0 || emit(&c, nm, OP_COPY, &c.grad[w], 1, &t, 1, NULL, 0))
                return -1;
            c.grad[w] = t;
        }
        out->t[c.grad[w]].kind = TK_OUTPUT;
    }
    if (optimizer != OPTIM_NONE && optimizer_step(&c, optimizer, first_use))
        return -1;
    return graph_check(out, fwd->file, e);
}
