/* op: the table of operator types - shape rules, FLOPs, bytes, execution unit and tiling.
 *
 * FLOPs count 2 per multiply-add. Elementwise costs per element are instruction counts of the
 * usual CUDA implementations (PyTorch's ATen kernels): a transcendental (exp, tanh, erf, rsqrt)
 * is one SFU op plus the FP32 arithmetic around it. Bytes are unique bytes: each input read once,
 * each output written once; re-reads are the cost model's business (cost.c). */
#include "op.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Per-element costs (simt_flops_per_elem, sfu_per_elem) are instruction counts of the usual
 * CUDA implementations (PyTorch's ATen kernels): a transcendental (exp, tanh, erf, rsqrt) is one
 * SFU op plus the FP32 arithmetic around it; elementwise costs count per output element, row
 * costs per input element.
 * Row kernels (inst_per_elem, inst_per_cta): issued thread-instructions of ATen's kernels
 * (PyTorch 2.11, bf16, sm_90), from ncu's smsp__inst_executed on the H200
 * (hw/calibrate/ncu_kernels.py, results/raw/ncu_kernels.csv): a per-CTA part (block reductions,
 * Welford merges, prologue) and a per-element part, fitted through two row lengths (128 and
 * 4096) where two were measured. These kernels are instruction-issue bound (ncu: 77-88% of SM
 * throughput), so their time follows these counts, not their FLOPs. Reductions (one measured
 * shape cannot separate per-row from per-element cost) and backward kernels keep the FLOP
 * estimate. layernorm: 920 / 4935 warp-instructions per CTA at D = 128 / 4096; rmsnorm: 491 /
 * 2002; softmax: the warp-per-row kernel (rows <= 1024; SOFTMAX_BLOCK_INST_PER_ELEM above). */
#define EW(fl, sfu) .simt_flops_per_elem = fl, .sfu_per_elem = sfu
#define ARITY(lo, hi) .min_in = lo, .max_in = hi, .max_out = 1
#define UNARY_ACT(nm, fl, sfu, out) \
    {.name = nm, .kind = OPK_STREAM, ARITY(1, 1), .attrs = "", \
     .flags = OPF_ELEMENTWISE | OPF_EPILOGUE, EW(fl, sfu), .fuse = FUSE_POINTWISE, .grad = GR_ACT, \
     .grad_saves_out = out}
#define BINARY(nm, rule) \
    {.name = nm, .kind = OPK_STREAM, ARITY(2, 2), .attrs = "", \
     .flags = OPF_ELEMENTWISE | OPF_EPILOGUE, EW(1, 0), .fuse = FUSE_POINTWISE, .grad = rule}
#define INDEX_OP(nm, k, dual) \
    {.name = nm, .kind = k, ARITY(2, 2), .attrs = "axis,", .flags = OPF_INDEX, .fuse = FUSE_NONE, \
     .fuse_why = INDEX_WHY, .grad = GR_DUAL, .grad_dual = dual}
static const char INDEX_WHY[] = "index op: no fusion across gathers/scatters";

static const op_info OP_TABLE[OP_COUNT] = {
    [OP_MATMUL] = {.name = "matmul", .kind = OPK_GEMM, ARITY(2, 2), .attrs = "transpose_a,transpose_b,",
                   .flags = OPF_GEMM | OPF_TENSOR, .fuse = FUSE_GEMM, .grad = GR_MATMUL},
    [OP_LINEAR] = {.name = "linear", .kind = OPK_GEMM, ARITY(2, 3), .attrs = "transpose_b,",
                   .flags = OPF_GEMM | OPF_TENSOR, .fuse = FUSE_GEMM, .grad = GR_LINEAR},
    [OP_RELU] = UNARY_ACT("relu", 1, 0, 1),
    [OP_GELU] = {.name = "gelu", .kind = OPK_STREAM, ARITY(1, 1), .attrs = "approximate,",
                 .flags = OPF_ELEMENTWISE | OPF_EPILOGUE, EW(8, 1), .fuse = FUSE_POINTWISE,
                 .grad = GR_ACT},
    [OP_SILU] = UNARY_ACT("silu", 4, 1, 0),
    [OP_SIGMOID] = UNARY_ACT("sigmoid", 3, 1, 1),
    [OP_TANH] = UNARY_ACT("tanh", 1, 1, 1),
    [OP_EXP] = UNARY_ACT("exp", 1, 1, 1),
    [OP_LOG] = UNARY_ACT("log", 1, 1, 0),
    [OP_NEG] = {.name = "neg", .kind = OPK_STREAM, ARITY(1, 1), .attrs = "",
                .flags = OPF_ELEMENTWISE | OPF_EPILOGUE, EW(1, 0), .fuse = FUSE_POINTWISE, .grad = GR_SELF},
    [OP_ABS] = UNARY_ACT("abs", 1, 0, 0),
    [OP_SQRT] = UNARY_ACT("sqrt", 0, 1, 1),
    [OP_RSQRT] = UNARY_ACT("rsqrt", 0, 1, 1),
    [OP_SQUARE] = UNARY_ACT("square", 1, 0, 0),
    [OP_SCALE] = {.name = "scale", .kind = OPK_STREAM, ARITY(1, 1), .attrs = "value,",
                  .flags = OPF_ELEMENTWISE | OPF_EPILOGUE, EW(1, 0), .fuse = FUSE_POINTWISE, .grad = GR_SELF},
    [OP_COPY] = {.name = "copy", .kind = OPK_STREAM, ARITY(1, 1), .attrs = "",
                 .flags = OPF_ELEMENTWISE | OPF_EPILOGUE, .fuse = FUSE_POINTWISE, .grad = GR_SELF},
    [OP_CAST] = {.name = "cast", .kind = OPK_STREAM, ARITY(1, 1), .attrs = "",
                 .flags = OPF_ELEMENTWISE | OPF_EPILOGUE, .fuse = FUSE_POINTWISE, .grad = GR_SELF},
    [OP_FILL] = {.name = "fill", .kind = OPK_STREAM, ARITY(0, 0), .attrs = "value,",
                 .flags = OPF_ELEMENTWISE, .fuse = FUSE_POINTWISE, .grad = GR_NONE},
    [OP_ADD] = BINARY("add", GR_ADD),
    [OP_SUB] = BINARY("sub", GR_SUB),
    [OP_MUL] = BINARY("mul", GR_MUL),
    [OP_DIV] = BINARY("div", GR_DIV),
    [OP_ACT_BWD] = {.name = "act_backward", .kind = OPK_STREAM, ARITY(2, 2), .attrs = "op,",
                    .flags = OPF_ELEMENTWISE | OPF_EPILOGUE | OPF_TRAIN_ONLY, EW(6, 1),
                    .fuse = FUSE_POINTWISE, .grad = GR_UNSUPPORTED},
    [OP_ADAM] = {.name = "adam_update", .kind = OPK_STREAM, .min_in = 4, .max_in = 4, .max_out = 3,
                 .attrs = "", .flags = OPF_TRAIN_ONLY, EW(12, 1), .fuse = FUSE_NONE,
                 .fuse_why = "op does not fuse", .grad = GR_UNSUPPORTED},
    [OP_REDUCE] = {.name = "reduce", .kind = OPK_ROW, ARITY(1, 1), .attrs = "op,axes,keepdim,",
                   EW(1, 0), .rowgrid = ROWGRID_PACK, .fuse = FUSE_ROW, .grad = GR_REDUCE},
    [OP_SOFTMAX] = {.name = "softmax", .kind = OPK_ROW, ARITY(1, 1), .attrs = "axis,", EW(4, 1),
                    .inst_per_elem = 48.5, .rowgrid = ROWGRID_WARP, .fuse = FUSE_ROW,
                    .grad = GR_SOFTMAX},
    [OP_SOFTMAX_BWD] = {.name = "softmax_backward", .kind = OPK_ROW, ARITY(2, 2), .attrs = "axis,",
                        .flags = OPF_TRAIN_ONLY, EW(4, 0), .rowgrid = ROWGRID_WARP,
                        .fuse = FUSE_ROW, .grad = GR_UNSUPPORTED},
    [OP_LAYERNORM] = {.name = "layernorm", .kind = OPK_ROW, ARITY(1, 3), .attrs = "eps,", EW(8, 0),
                      .inst_per_elem = 32.4, .inst_per_cta = 25280, .sfu_per_row = 1, .fuse = FUSE_ROW,
                      .grad = GR_NORM},
    [OP_RMSNORM] = {.name = "rmsnorm", .kind = OPK_ROW, ARITY(1, 2), .attrs = "eps,", EW(5, 0),
                    .inst_per_elem = 12.2, .inst_per_cta = 14144, .sfu_per_row = 1, .fuse = FUSE_ROW,
                    .grad = GR_NORM},
    [OP_NORM_BWD] = {.name = "norm_backward", .kind = OPK_ROW, .min_in = 2, .max_in = 4, .max_out = 3,
                     .attrs = "op,", .flags = OPF_TRAIN_ONLY, EW(12, 0), .sfu_per_row = 1, .row_input = 1,
                     .fuse = FUSE_ROW, .grad = GR_UNSUPPORTED},
    [OP_ATTENTION] = {.name = "attention", .kind = OPK_ATTN, ARITY(3, 3), .attrs = "causal,",
                      .flags = OPF_TENSOR, .fuse = FUSE_NONE,
                      .fuse_why = "attention kernel takes no epilogue", .grad = GR_ATTENTION},
    [OP_ATTN_BWD] = {.name = "attention_backward", .kind = OPK_ATTN, .min_in = 5, .max_in = 5,
                     .max_out = 3, .attrs = "causal,", .flags = OPF_TENSOR | OPF_TRAIN_ONLY,
                     .fuse = FUSE_NONE, .fuse_why = "attention kernel takes no epilogue",
                     .grad = GR_UNSUPPORTED},
    [OP_EMBEDDING] = {.name = "embedding", .kind = OPK_GATHER, ARITY(2, 2), .attrs = "",
                      .flags = OPF_INDEX, .fuse = FUSE_NONE, .fuse_why = INDEX_WHY,
                      .grad = GR_EMBEDDING},
    [OP_GATHER] = INDEX_OP("gather", OPK_GATHER, OP_SCATTER_ADD),
    [OP_INDEX_SELECT] = INDEX_OP("index_select", OPK_GATHER, OP_INDEX_ADD),
    [OP_SCATTER_ADD] = INDEX_OP("scatter_add", OPK_SCATTER, OP_GATHER),
    [OP_INDEX_ADD] = INDEX_OP("index_add", OPK_SCATTER, OP_INDEX_SELECT),
    [OP_EMBEDDING_BWD] = {.name = "embedding_backward", .kind = OPK_SCATTER, ARITY(2, 2), .attrs = "",
                          .flags = OPF_INDEX | OPF_TRAIN_ONLY, .fuse = FUSE_NONE,
                          .fuse_why = INDEX_WHY, .grad = GR_UNSUPPORTED},
    [OP_INDEX_COPY] = {.name = "index_copy", .kind = OPK_STREAM, ARITY(3, 3), .attrs = "axis,",
                       .flags = OPF_INDEX, .fuse = FUSE_NONE, .fuse_why = INDEX_WHY,
                       .grad = GR_INDEX_COPY},
    [OP_CONCAT] = {.name = "concat", .kind = OPK_STREAM, ARITY(1, -1), .attrs = "axis,",
                   .fuse = FUSE_INPLACE, .grad = GR_CONCAT},
    [OP_SLICE] = {.name = "slice", .kind = OPK_STREAM, ARITY(1, 1), .attrs = "axis,start,end,",
                  .fuse = FUSE_POINTWISE, .grad = GR_SLICE},
    [OP_TRANSPOSE] = {.name = "transpose", .kind = OPK_STREAM, ARITY(1, 1), .attrs = "perm,copy,",
                      .fuse = FUSE_POINTWISE, .grad = GR_TRANSPOSE},
    [OP_RESHAPE] = {.name = "reshape", .kind = OPK_FREE, ARITY(1, 1), .attrs = "copy,",
                    .fuse = FUSE_POINTWISE, .grad = GR_VIEW},
    [OP_VIEW] = {.name = "view", .kind = OPK_FREE, ARITY(1, 1), .attrs = "copy,",
                 .fuse = FUSE_POINTWISE, .grad = GR_VIEW},
    [OP_ROPE] = {.name = "rope", .kind = OPK_STREAM, ARITY(1, 3), .attrs = "",
                 .flags = OPF_ELEMENTWISE | OPF_EPILOGUE, EW(3, 0), .fuse = FUSE_POINTWISE,
                 .grad = GR_ROPE},
    /* broadcast copy (reduce backward): a store per output element */
    [OP_EXPAND] = {.name = "expand", .kind = OPK_STREAM, ARITY(1, 1), .attrs = "",
                   .fuse = FUSE_POINTWISE, .grad = GR_EXPAND},
};
#undef EW
#undef ARITY
#undef UNARY_ACT
#undef BINARY
#undef INDEX_OP

/* cunn_SoftMaxForwardReg (rows > 1024, one 1024-thread CTA per row): 10173 warp-instructions
 * per row of 4096 */
#define SOFTMAX_BLOCK_INST_PER_ELEM 79.5
/* Rows of at most this many elements run one warp per row (ROWGRID_WARP) */
enum { ROW_WARP_MAX_ELEMS = 1024 };

const op_info *op_info_of(int type)
{
    return &OP_TABLE[type];
}

const char *op_name(int type)
{
    return type >= 0 && type < OP_COUNT ? OP_TABLE[type].name : "?";
}

int op_parse(const char *name)
{
    for (int i = 0; i < OP_COUNT; i++)
        if (!strcmp(OP_TABLE[i].name, name))
            return i;
    return -1;
}

op_kind op_type_kind(int type)
{
    return OP_TABLE[type].kind;
}

int op_is_elementwise(int type)
{
    return (OP_TABLE[type].flags & OPF_ELEMENTWISE) != 0;
}

int op_is_index(int type)
{
    return (OP_TABLE[type].flags & OPF_INDEX) != 0;
}

int op_is_gemm(int type)
{
    return (OP_TABLE[type].flags & OPF_GEMM) != 0;
}

static const wl_tensor *IN(const wl_graph *g, const wl_op *o, int i)
{
    return &g->t[o->in[i]];
}
static const wl_tensor *OUT(const wl_graph *g, const wl_op *o, int i)
{
    return &g->t[o->out[i]];
}

static int fail(char *msg, unsigned long n, char *sub, unsigned long sn, const char *where,
                const char *fmt, const char *a, long long x, long long y)
{
    snprintf(sub, sn, "%s", where ? where : "");
    char f[256];
    snprintf(f, sizeof f, fmt, a ? a : "", x, y);
    snprintf(msg, n, "%s", f);
    return -1;
}
#define FAIL(where, fmt) return fail(msg, msglen, sub, sublen, where, fmt "%.0s", "", 0, 0)
#define FAILX(where, fmt, a, x, y) return fail(msg, msglen, sub, sublen, where, fmt, a, x, y)

static int same_shape(const wl_tensor *a, const wl_tensor *b)
{
    if (a->ndim != b->ndim)
        return 0;
    for (int i = 0; i < a->ndim; i++)
        if (a->dim[i] != b->dim[i])
            return 0;
    return 1;
}

/* numpy broadcasting of a and b into out (dims right-aligned); 0 ok, -1 incompatible. */
static int broadcast(const int64_t *a, int na, const int64_t *b, int nb, int64_t *out, int *nout)
{
    int n = na > nb ? na : nb;
    for (int i = 0; i < n; i++) {
        int64_t x = i < n - na ? 1 : a[i - (n - na)];
        int64_t y = i < n - nb ? 1 : b[i - (n - nb)];
        if (x != y && x != 1 && y != 1)
            return -1;
        out[i] = x > y ? x : y;
    }
    *nout = n;
    return 0;
}

static int norm_axis(int64_t axis, int ndim, int *out)
{
    if (axis < 0)
        axis += ndim;
    if (axis < 0 || axis >= ndim)
        return -1;
    *out = (int)axis;
    return 0;
}

static int check_attrs(const wl_op *o, char *msg, unsigned long msglen, char *sub, unsigned long sublen)
{
    const char *keys = OP_TABLE[o->type].attrs;
    for (int i = 0; i < o->nattr; i++) {
        char k[80];
        snprintf(k, sizeof k, "%s,", o->attr[i].key);
        if (!strstr(keys, k) || (strstr(keys, k) != keys && strstr(keys, k)[-1] != ',')) {
            char where[96];
            snprintf(where, sizeof where, "attrs.%s", o->attr[i].key);
            FAILX(where, "unknown attribute \"%s\"%.0lld%.0lld", o->attr[i].key, 0LL, 0LL);
        }
    }
    return 0;
}

/* GEMM geometry of matmul/linear: M, N, K, batch dims of the output. */
typedef struct gemm_geo {
    int64_t m, n, k, batch;
    int64_t bdim[WL_MAXDIM];
    int nb;
} gemm_geo;

static int gemm_geometry(const wl_graph *g, const wl_op *o, gemm_geo *gg, char *msg,
                         unsigned long msglen, char *sub, unsigned long sublen)
{
    const wl_tensor *a = IN(g, o, 0), *b = IN(g, o, 1);
    memset(gg, 0, sizeof *gg);
    if (o->type == OP_LINEAR) {
        if (a->ndim < 1)
            FAIL("inputs[0]", "input must have at least 1 dimension");
        if (b->ndim != 2)
            FAIL("inputs[1]", "weight must be 2-D");
        int tb = (int)wl_attr_int(o, "transpose_b", 0);
        gg->k = a->dim[a->ndim - 1];
        int64_t wk = tb ? b->dim[1] : b->dim[0];
        gg->n = tb ? b->dim[0] : b->dim[1];
        if (wk != gg->k)
            FAILX("inputs[1]", "inner dimensions differ (x has %s%lld, weight has %lld)", "",
                  (long long)gg->k, (long long)wk);
        gg->m = 1;
        for (int i = 0; i < a->ndim - 1; i++)
            if (wl_mul(gg->m, a->dim[i], &gg->m))
                FAIL(NULL, "size overflows 64 bits");
        gg->batch = 1;
        gg->nb = 0;
        if (o->nin == 3) {
            const wl_tensor *bias = IN(g, o, 2);
            if (bias->ndim != 1 || bias->dim[0] != gg->n)
                FAILX("inputs[2]", "bias must be [%s%lld]%.0lld", "", (long long)gg->n, 0LL);
        }
        return 0;
    }
    if (a->ndim < 2 || b->ndim < 2)
        FAIL(a->ndim < 2 ? "inputs[0]" : "inputs[1]", "matmul operands must be at least 2-D");
    int ta = (int)wl_attr_int(o, "transpose_a", 0), tb = (int)wl_attr_int(o, "transpose_b", 0);
    int64_t am = a->dim[a->ndim - 2], ak = a->dim[a->ndim - 1];
    if (ta) {
        int64_t t = am;
        am = ak;
        ak = t;
    }
    int64_t bk = b->dim[b->ndim - 2], bn = b->dim[b->ndim - 1];
    if (tb) {
        int64_t t = bk;
        bk = bn;
        bn = t;
    }
    if (ak != bk)
        FAILX("inputs[1]", "inner dimensions differ (%s%lld vs %lld)", "", (long long)ak, (long long)bk);
    if (broadcast(a->dim, a->ndim - 2, b->dim, b->ndim - 2, gg->bdim, &gg->nb))
        FAIL("inputs[1]", "batch dimensions do not broadcast");
    gg->m = am;
    gg->n = bn;
    gg->k = ak;
    gg->batch = 1;
    for (int i = 0; i < gg->nb; i++)
        if (wl_mul(gg->batch, gg->bdim[i], &gg->batch))
            FAIL(NULL, "size overflows 64 bits");
    return 0;
}

int op_check(const wl_graph *g, const wl_op *o, char *msg, unsigned long msglen, char *sub,
             unsigned long sublen)
{
    const op_info *inf = &OP_TABLE[o->type];
    sub[0] = 0;
    if (o->nin < inf->min_in || (inf->max_in >= 0 && o->nin > inf->max_in)) {
        if (inf->max_in < 0)
            FAILX("inputs", "needs at least %s%lld inputs, got %lld", "", (long long)inf->min_in,
                  (long long)o->nin);
        FAILX("inputs", "needs %s%lld..%lld inputs", "", (long long)inf->min_in, (long long)inf->max_in);
    }
    int max_out = inf->max_out;
    if (o->nout < 1 || o->nout > max_out)
        FAILX("outputs", "needs 1..%s%lld outputs, got %lld", "", (long long)max_out, (long long)o->nout);
    if (check_attrs(o, msg, msglen, sub, sublen))
        return -1;
    const wl_tensor *y = OUT(g, o, 0);
    switch (o->type) {
    case OP_MATMUL:
    case OP_LINEAR: {
        gemm_geo gg;
        if (gemm_geometry(g, o, &gg, msg, msglen, sub, sublen))
            return -1;
        if (!dt_is_float(IN(g, o, 0)->dt) || !dt_is_float(IN(g, o, 1)->dt))
            FAIL("inputs", "operands must be floating point");
        if (IN(g, o, 0)->dt != IN(g, o, 1)->dt)
            FAIL("inputs[1]", "operands must have the same dtype");
        int64_t want[WL_MAXDIM];
        int nd = 0;
        if (o->type == OP_LINEAR) {
            const wl_tensor *x = IN(g, o, 0);
            for (int i = 0; i < x->ndim - 1; i++)
                want[nd++] = x->dim[i];
        } else {
            for (int i = 0; i < gg.nb; i++)
                want[nd++] = gg.bdim[i];
            want[nd++] = gg.m;
        }
        want[nd++] = gg.n;
        if (y->ndim != nd || memcmp(want, y->dim, (size_t)nd * sizeof(int64_t)))
            FAIL("outputs[0]", "output shape does not match the product's shape");
        return 0;
    }
    case OP_ADD: case OP_SUB: case OP_MUL: case OP_DIV: {
        int64_t bd[WL_MAXDIM];
        int nb;
        const wl_tensor *a = IN(g, o, 0), *b = IN(g, o, 1);
        if (broadcast(a->dim, a->ndim, b->dim, b->ndim, bd, &nb))
            FAIL("inputs[1]", "shapes do not broadcast");
        if (y->ndim != nb || memcmp(bd, y->dim, (size_t)nb * sizeof(int64_t)))
            FAIL("outputs[0]", "output shape is not the broadcast shape of the inputs");
        return 0;
    }
    case OP_FILL:
        return 0;
    case OP_ADAM:
        for (int i = 1; i < 4; i++)
            if (!same_shape(IN(g, o, i), IN(g, o, 0)))
                FAILX("inputs", "param, grad, m and v must have the same shape%s%.0lld%.0lld", "", 0LL, 0LL);
        for (int i = 0; i < o->nout; i++)
            if (!same_shape(OUT(g, o, i), IN(g, o, 0)))
                FAIL("outputs", "outputs must have the parameter's shape");
        return 0;
    case OP_ROPE: {
        const wl_tensor *x = IN(g, o, 0);
        for (int i = 1; i < o->nin; i++) {
            int64_t bd[WL_MAXDIM];
            int nb;
            const wl_tensor *c = IN(g, o, i);
            if (broadcast(x->dim, x->ndim, c->dim, c->ndim, bd, &nb) || nb != x->ndim ||
                memcmp(bd, x->dim, (size_t)nb * sizeof(int64_t)))
                FAILX(i == 1 ? "inputs[1]" : "inputs[2]", "cos/sin must broadcast to x%s%.0lld%.0lld", "", 0LL, 0LL);
        }
        if (!same_shape(x, y))
            FAIL("outputs[0]", "output shape must equal the input shape");
        return 0;
    }
    case OP_EXPAND: {
        /* numpy broadcast of x to the output shape (reduce backward writes the input-shaped grad) */
        int64_t bd[WL_MAXDIM];
        int nb;
        const wl_tensor *x = IN(g, o, 0);
        if (broadcast(x->dim, x->ndim, y->dim, y->ndim, bd, &nb) || nb != y->ndim ||
            memcmp(bd, y->dim, (size_t)nb * sizeof(int64_t)))
            FAIL("outputs[0]", "input must broadcast to the output shape");
        return 0;
    }
    case OP_CAST:
        if (y->elems != IN(g, o, 0)->elems || !same_shape(y, IN(g, o, 0)))
            FAIL("outputs[0]", "output shape must equal the input shape");
        return 0;
    case OP_ACT_BWD:
        if (!same_shape(IN(g, o, 0), y) || IN(g, o, 1)->elems != y->elems)
            FAIL("outputs[0]", "gradient shapes must match");
        return 0;
    case OP_REDUCE: {
        const wl_tensor *x = IN(g, o, 0);
        const wl_attr *ax = wl_attr_get(o, "axes");
        const char *rop = wl_attr_str(o, "op", "sum");
        if (strcmp(rop, "sum") && strcmp(rop, "mean") && strcmp(rop, "max"))
            FAILX("attrs.op", "unknown reduction \"%s\" (sum, mean or max)%.0lld%.0lld", rop, 0LL, 0LL);
        int red[WL_MAXDIM] = {0};
        if (!ax || ax->type != WA_LIST || ax->nlist == 0)
            FAIL("attrs.axes", "needs a non-empty list of axes");
        for (int i = 0; i < ax->nlist; i++) {
            int a = 0;
            if (norm_axis(ax->list[i], x->ndim, &a))
                FAILX("attrs.axes", "axis %s%lld out of range for %lld dimensions", "",
                      (long long)ax->list[i], (long long)x->ndim);
            red[a] = 1;
        }
        int keep = (int)wl_attr_int(o, "keepdim", 0);
        int64_t want[WL_MAXDIM];
        int nd = 0;
        for (int i = 0; i < x->ndim; i++)
            if (!red[i])
                want[nd++] = x->dim[i];
            else if (keep)
                want[nd++] = 1;
        if (y->ndim != nd || memcmp(want, y->dim, (size_t)nd * sizeof(int64_t)))
            FAIL("outputs[0]", "output shape does not match the reduction");
        return 0;
    }
    case OP_SOFTMAX:
    case OP_SOFTMAX_BWD: {
        int a = 0;
        if (norm_axis(wl_attr_int(o, "axis", -1), IN(g, o, 0)->ndim, &a))
            FAIL("attrs.axis", "axis out of range");
        for (int i = 0; i < o->nin; i++)
            if (!same_shape(IN(g, o, i), y))
                FAIL("outputs[0]", "shapes of inputs and output must be equal");
        return 0;
    }
    case OP_LAYERNORM:
    case OP_RMSNORM:
    case OP_NORM_BWD: {
        const wl_tensor *x = IN(g, o, o->type == OP_NORM_BWD ? 1 : 0);
        if (x->ndim < 1)
            FAIL("inputs[0]", "needs at least 1 dimension");
        int64_t d = x->dim[x->ndim - 1];
        int first_param = o->type == OP_NORM_BWD ? 2 : 1;
        for (int i = first_param; i < o->nin; i++) {
            const wl_tensor *p = IN(g, o, i);
            if (p->ndim != 1 || p->dim[0] != d)
                FAILX(i == 1 ? "inputs[1]" : i == 2 ? "inputs[2]" : "inputs[3]",
                      "norm parameters must be [%s%lld] (the last dimension)%.0lld", "", (long long)d, 0LL);
        }
        if (!same_shape(x, y))
            FAIL("outputs[0]", "output shape must equal the input shape");
        if (o->type == OP_NORM_BWD) {
            if (!same_shape(IN(g, o, 0), x))
                FAIL("inputs[0]", "gradient must have the input's shape");
            for (int i = 1; i < o->nout; i++)
                if (OUT(g, o, i)->ndim != 1 || OUT(g, o, i)->dim[0] != d)
                    FAIL("outputs", "parameter gradients must be [D]");
        }
        return 0;
    }
    case OP_ATTENTION:
    case OP_ATTN_BWD: {
        int base = o->type == OP_ATTN_BWD ? 1 : 0;
        const wl_tensor *q = IN(g, o, base), *k = IN(g, o, base + 1), *v = IN(g, o, base + 2);
        if (q->ndim != 4 || k->ndim != 4 || v->ndim != 4)
            FAIL("inputs", "q, k, v must be 4-D [B, heads, seq, head_dim]");
        if (k->dim[0] != q->dim[0] || v->dim[0] != q->dim[0])
            FAIL("inputs", "batch sizes of q, k, v differ");
        if (k->dim[1] != v->dim[1] || q->dim[1] % k->dim[1])
            FAILX("inputs", "query heads (%s%lld) must be a multiple of kv heads (%lld)", "",
                  (long long)q->dim[1], (long long)k->dim[1]);
        if (k->dim[2] != v->dim[2])
            FAIL("inputs", "k and v lengths differ");
        if (k->dim[3] != q->dim[3])
            FAIL("inputs", "q and k head dims differ");
        if (wl_attr_int(o, "causal", 0) && k->dim[2] < q->dim[2])
            FAIL("attrs.causal", "causal attention needs kv length >= query length");
        if (o->type == OP_ATTENTION) {
            if (y->ndim != 4 || y->dim[0] != q->dim[0] || y->dim[1] != q->dim[1] ||
                y->dim[2] != q->dim[2] || y->dim[3] != v->dim[3])
                FAIL("outputs[0]", "output must be [B, Hq, S, Dv]");
        } else {
            for (int i = 0; i < o->nout; i++)
                if (!same_shape(OUT(g, o, i), IN(g, o, base + i)))
                    FAIL("outputs", "gradients must have the shapes of q, k, v");
        }
        return 0;
    }
    case OP_EMBEDDING: {
        const wl_tensor *tab = IN(g, o, 0), *idx = IN(g, o, 1);
        if (tab->ndim != 2)
            FAIL("inputs[0]", "embedding table must be 2-D [rows, dim]");
        if (dt_is_float(idx->dt))
            FAIL("inputs[1]", "indices must be an integer dtype");
        if (y->ndim != idx->ndim + 1 || memcmp(y->dim, idx->dim, (size_t)idx->ndim * sizeof(int64_t)) ||
            y->dim[y->ndim - 1] != tab->dim[1])
            FAIL("outputs[0]", "output must be [indices..., dim]");
        return 0;
    }
    case OP_GATHER:
    case OP_INDEX_SELECT:
    case OP_SCATTER_ADD:
    case OP_INDEX_ADD:
    case OP_EMBEDDING_BWD:
    case OP_INDEX_COPY: {
        int is_copy = o->type == OP_INDEX_COPY;
        const wl_tensor *x = IN(g, o, 0), *idx = IN(g, o, 1);
        const wl_tensor *src = is_copy ? IN(g, o, 2) : x;
        int a = 0;
        if (norm_axis(wl_attr_int(o, "axis", 0), x->ndim, &a))
            FAIL("attrs.axis", "axis out of range");
        if (dt_is_float(idx->dt) || idx->ndim != 1)
            FAIL("inputs[1]", "index must be a 1-D integer tensor");
        int scatter = o->type == OP_SCATTER_ADD || o->type == OP_INDEX_ADD || o->type == OP_EMBEDDING_BWD;
        if (scatter || is_copy) {
            if (src->dim[a] != idx->dim[0])
                FAILX(is_copy ? "inputs[2]" : "inputs[0]",
                      "source has %s%lld rows along the axis but the index has %lld", "",
                      (long long)src->dim[a], (long long)idx->dim[0]);
            const wl_tensor *ref = is_copy ? x : y;
            if (ref->ndim != src->ndim)
                FAIL("outputs[0]", "destination and source ranks differ");
            for (int i = 0; i < src->ndim; i++)
                if (i != a && ref->dim[i] != src->dim[i])
                    FAIL("outputs[0]", "destination and source differ outside the axis");
            if (is_copy && !same_shape(x, y))
                FAIL("outputs[0]", "output must have the destination's shape");
        } else {
            if (y->ndim != x->ndim)
                FAIL("outputs[0]", "output rank must equal the input rank");
            for (int i = 0; i < x->ndim; i++)
                if (y->dim[i] != (i == a ? idx->dim[0] : x->dim[i]))
                    FAIL("outputs[0]", "output must be the input with the axis resized to the index length");
        }
        return 0;
    }
    case OP_CONCAT: {
        int a = 0;
        const wl_tensor *x0 = IN(g, o, 0);
        if (norm_axis(wl_attr_int(o, "axis", 0), x0->ndim, &a))
            FAIL("attrs.axis", "axis out of range");
        int64_t sum = 0;
        for (int i = 0; i < o->nin; i++) {
            const wl_tensor *x = IN(g, o, i);
            if (x->ndim != x0->ndim)
                FAIL("inputs", "inputs have different ranks");
            for (int d = 0; d < x->ndim; d++)
                if (d != a && x->dim[d] != x0->dim[d])
                    FAILX("inputs", "input %s%lld differs from input 0 in dimension %lld", "",
                          (long long)i, (long long)d);
            sum += x->dim[a];
        }
        if (y->ndim != x0->ndim || y->dim[a] != sum)
            FAILX("outputs[0]", "output must have %s%lld along the concat axis%.0lld", "", (long long)sum, 0LL);
        for (int d = 0; d < y->ndim; d++)
            if (d != a && y->dim[d] != x0->dim[d])
                FAIL("outputs[0]", "output differs from the inputs outside the concat axis");
        return 0;
    }
    case OP_SLICE: {
        int a = 0;
        const wl_tensor *x = IN(g, o, 0);
        if (norm_axis(wl_attr_int(o, "axis", 0), x->ndim, &a))
            FAIL("attrs.axis", "axis out of range");
        int64_t s = wl_attr_int(o, "start", 0), en = wl_attr_int(o, "end", x->dim[a]);
        if (s < 0 || en > x->dim[a] || s >= en)
            FAILX("attrs", "slice [%s%lld, %lld) is empty or out of range", "", (long long)s, (long long)en);
        for (int d = 0; d < x->ndim; d++)
            if (y->ndim != x->ndim || y->dim[d] != (d == a ? en - s : x->dim[d]))
                FAIL("outputs[0]", "output shape does not match the slice");
        return 0;
    }
    case OP_TRANSPOSE: {
        const wl_tensor *x = IN(g, o, 0);
        const wl_attr *p = wl_attr_get(o, "perm");
        int perm[WL_MAXDIM], seen[WL_MAXDIM] = {0};
        if (x->ndim < 2 && !p)
            FAIL("inputs[0]", "needs at least 2 dimensions");
        for (int i = 0; i < x->ndim; i++)
            perm[i] = i;
        if (!p && x->ndim >= 2) {
            perm[x->ndim - 1] = x->ndim - 2;
            perm[x->ndim - 2] = x->ndim - 1;
        }
        if (p) {
            if (p->type != WA_LIST || p->nlist != x->ndim)
                FAIL("attrs.perm", "must list every dimension once");
            for (int i = 0; i < x->ndim; i++) {
                int a = 0;
                if (norm_axis(p->list[i], x->ndim, &a) || seen[a]++)
                    FAIL("attrs.perm", "must be a permutation of the dimensions");
                perm[i] = a;
            }
        }
        for (int d = 0; d < x->ndim; d++)
            if (y->ndim != x->ndim || y->dim[d] != x->dim[perm[d]])
                FAIL("outputs[0]", "output shape is not the permuted input shape");
        return 0;
    }
    case OP_RESHAPE:
    case OP_VIEW:
        if (y->elems != IN(g, o, 0)->elems)
            FAILX("outputs[0]", "element counts differ (%s%lld vs %lld)", "", (long long)IN(g, o, 0)->elems,
                  (long long)y->elems);
        return 0;
    default:
        /* unary elementwise */
        if (!same_shape(IN(g, o, 0), y))
            FAIL("outputs[0]", "output shape must equal the input shape");
        return 0;
    }
}

int op_is_free(const wl_graph *g, const wl_op *o)
{
    (void)g;
    if (o->type == OP_RESHAPE || o->type == OP_VIEW)
        return !wl_attr_int(o, "copy", 0);
    if (o->type == OP_TRANSPOSE)
        return !wl_attr_int(o, "copy", 1);
    return 0;
}

/* Bytes that make a leading dimension or a row "aligned": one 128-bit vector (cuBLAS picks its
 * alignment-8 bf16 kernels and ATen its vectorized copies only at 16-byte strides). */
enum { VECTOR_BYTES = 16 };

static int unaligned(int64_t elems, dtype d)
{
    return (elems * dt_bytes(d)) % VECTOR_BYTES != 0;
}

/* cuBLAS's operand alignment for C[M,N] = op(A) op(B), row-major storage: the leading dimension
 * of A (K, or M when stored transposed), of B (N, or K when stored transposed) and of C (N). A
 * vector operand (M or N of 1) goes to cuBLAS's GEMV-like path instead. */
static int gemm_align1(const wl_graph *g, const wl_op *o, const gemm_geo *gg)
{
    if (gg->m == 1 || gg->n == 1)
        return 0;
    dtype d = IN(g, o, 0)->dt;
    int ta = o->type == OP_MATMUL && wl_attr_int(o, "transpose_a", 0);
    int tb = (int)wl_attr_int(o, "transpose_b", 0);
    int64_t lda = ta ? gg->m : gg->k, ldb = tb ? gg->k : gg->n;
    return unaligned(lda, d) || unaligned(ldb, d) || unaligned(gg->n, d);
}

/* Elements of t with the flagged dimensions rounded up to a 16-byte multiple. */
static int64_t padded_elems(const wl_tensor *t, const int *flag)
{
    int64_t v = VECTOR_BYTES / (dt_bytes(t->dt) > 0 ? dt_bytes(t->dt) : 1), n = 1;
    for (int i = 0; i < t->ndim; i++) {
        int64_t d = t->dim[i];
        if (flag[i] && v > 0 && d % v)
            d += v - d % v;
        if (wl_mul(n, d, &n))
            return -1;
    }
    return n;
}

int op_gemm_pad_bytes(const wl_graph *g, const wl_op *o, int64_t pad[3])
{
    pad[0] = pad[1] = pad[2] = 0;
    gemm_geo gg;
    char msg[8], sub[8];
    if (op_type_kind(o->type) != OPK_GEMM || gemm_geometry(g, o, &gg, msg, sizeof msg, sub, sizeof sub))
        return 0;
    const wl_tensor *a = IN(g, o, 0), *b = IN(g, o, 1);
    int lin = o->type == OP_LINEAR, ta = !lin && wl_attr_int(o, "transpose_a", 0);
    int tb = (int)wl_attr_int(o, "transpose_b", 0);
    int padk = unaligned(gg.k, a->dt), padn = unaligned(gg.n, a->dt);
    /* pad_mm pads K and N only: an A stored transposed with an unaligned M stays unaligned */
    if ((!padk && !padn) || (ta && unaligned(gg.m, a->dt)))
        return 0;
    int fa[WL_MAXDIM] = {0}, fb[WL_MAXDIM] = {0}, fc[WL_MAXDIM] = {0};
    int ak = ta ? a->ndim - 2 : a->ndim - 1;
    int bk = lin ? (tb ? 1 : 0) : (tb ? b->ndim - 1 : b->ndim - 2);
    int bn = lin ? (tb ? 0 : 1) : (tb ? b->ndim - 2 : b->ndim - 1);
    fa[ak] = padk;
    fb[bk] = padk;
    fb[bn] = padn;
    fc[0] = padn;
    const int *flags[3] = {fa, fb, fc};
    int need[3] = {padk, padk || padn, padn && o->nin > 2};
    for (int j = 0; j < 3 && j < o->nin; j++) {
        if (!need[j])
            continue;
        const wl_tensor *t = IN(g, o, j);
        int64_t n = padded_elems(t, flags[j]), bytes;
        if (n < 0 || wl_mul(n, (int64_t)dt_bytes(t->dt), &bytes))
            return -1;
        pad[j] = bytes;
    }
    return 0;
}

/* Expected distinct rows touched by n uniform random lookups into r rows:
 * r * (1 - (1 - 1/r)^n) (balls into bins). */
static double expected_distinct(double r, double n)
{
    if (r <= 0)
        return 0;
    return r * -expm1(n * log1p(-1.0 / r));
}

#define CHK(x)                                                   \
    do {                                                         \
        if (x) {                                                 \
            snprintf(msg, msglen, "work overflows 64 bits");     \
            return -1;                                           \
        }                                                        \
    } while (0)

static dtype compute_dtype(dtype d)
{
    return dt_is_float(d) ? d : DT_FP32;
}

int op_work_of(const wl_graph *g, const wl_op *o, op_work *w, char *msg, unsigned long msglen)
{
    memset(w, 0, sizeof *w);
    w->type = o->type;
    w->kind = op_is_free(g, o) ? OPK_FREE : OP_TABLE[o->type].kind;
    if ((o->type == OP_RESHAPE || o->type == OP_VIEW) && !op_is_free(g, o)) /* "copy": true */
        w->kind = OPK_STREAM;
    w->nin = o->nin;
    const wl_tensor *y = OUT(g, o, 0);
    w->cdt = compute_dtype(o->nin ? IN(g, o, 0)->dt : y->dt);
    for (int i = 0; i < o->nout; i++)
        CHK(wl_add(w->out_bytes, OUT(g, o, i)->bytes, &w->out_bytes));
    for (int i = 0; i < o->nin; i++)
        w->in_bytes[i] = IN(g, o, i)->bytes;
    if (w->kind == OPK_FREE) {
        memset(w->in_bytes, 0, sizeof w->in_bytes);
        w->out_bytes = 0;
        return 0;
    }
    const op_info *inf = &OP_TABLE[o->type];
    int fl = inf->simt_flops_per_elem, sfu = inf->sfu_per_elem;
    switch (w->kind) {
    case OPK_GEMM: {
        gemm_geo gg;
        char sub[64];
        if (gemm_geometry(g, o, &gg, msg, msglen, sub, sizeof sub))
            return -1;
        w->m = gg.m;
        w->n = gg.n;
        w->k = gg.k;
        w->batch = gg.batch;
        int64_t mn, mnk;
        CHK(wl_mul(gg.m, gg.n, &mn));
        CHK(wl_mul(mn, gg.batch, &mn));
        CHK(wl_mul(mn, gg.k, &mnk));
        CHK(wl_mul(mnk, 2, &w->flops_tensor));
        if (o->type == OP_LINEAR && o->nin == 3)
            w->flops_simt = mn; /* bias add in the epilogue */
        w->align1 = gemm_align1(g, o, &gg);
        break;
    }
    case OPK_STREAM: {
        w->elems = y->elems;
        if (o->type == OP_SLICE || o->type == OP_TRANSPOSE || o->type == OP_RESHAPE || o->type == OP_VIEW)
            w->in_bytes[0] = y->bytes; /* a slice reads only what it keeps */
        if (o->type == OP_CONCAT || o->type == OP_SLICE) {
            /* along the last axis, a piece whose width (or offset) is not a 16-byte multiple
             * makes ATen copy element by element */
            const wl_tensor *x0 = IN(g, o, 0);
            int a = 0;
            norm_axis(wl_attr_int(o, "axis", 0), x0->ndim, &a);
            if (a == x0->ndim - 1) {
                for (int i = 0; i < o->nin; i++)
                    w->unaligned |= unaligned(IN(g, o, i)->dim[a], x0->dt);
                if (o->type == OP_SLICE)
                    w->unaligned |= unaligned(y->dim[a], x0->dt) ||
                                    unaligned(wl_attr_int(o, "start", 0), x0->dt);
            }
        }
        if (o->type == OP_INDEX_COPY) {
            /* in place: the destination is not read; only the source rows are written */
            w->in_bytes[0] = 0;
            w->out_bytes = IN(g, o, 2)->bytes;
            w->elems = IN(g, o, 2)->elems;
        }
        CHK(wl_mul(w->elems, fl, &w->flops_simt));
        CHK(wl_mul(w->elems, sfu, &w->sfu_ops));
        break;
    }
    case OPK_ROW: {
        const wl_tensor *x = IN(g, o, inf->row_input);
        w->elems = x->elems;
        if (o->type == OP_REDUCE) {
            w->rows = y->elems;
            w->row_len = x->elems / (y->elems ? y->elems : 1);
            /* the innermost axis kept and some outer axis reduced: a column reduction */
            const wl_attr *ax = wl_attr_get(o, "axes");
            int inner = 0, outer = 0;
            for (int i = 0; ax && i < ax->nlist; i++) {
                int a = 0;
                norm_axis(ax->list[i], x->ndim, &a);
                inner |= a == x->ndim - 1;
                outer |= a < x->ndim - 1;
            }
            w->col_reduce = outer && !inner;
        } else if (o->type == OP_SOFTMAX || o->type == OP_SOFTMAX_BWD) {
            int a = 0;
            norm_axis(wl_attr_int(o, "axis", -1), x->ndim, &a);
            w->row_len = x->dim[a];
            w->rows = x->elems / w->row_len;
        } else {
            w->row_len = x->dim[x->ndim - 1];
            w->rows = x->elems / w->row_len;
        }
        if (o->type == OP_NORM_BWD)
            w->param_grads = o->nout - 1;
        CHK(wl_mul(w->elems, fl, &w->flops_simt));
        CHK(wl_mul(w->elems, sfu, &w->sfu_ops));
        if (inf->sfu_per_row) /* norms: one rsqrt per row */
            CHK(wl_add(w->sfu_ops, w->rows, &w->sfu_ops));
        w->inst_per_elem = inf->inst_per_elem;
        w->inst_per_cta = inf->inst_per_cta;
        if (inf->rowgrid == ROWGRID_WARP && inf->inst_per_elem > 0 && w->row_len > ROW_WARP_MAX_ELEMS)
            w->inst_per_elem = SOFTMAX_BLOCK_INST_PER_ELEM;
        break;
    }
    case OPK_ATTN: {
        int base = o->type == OP_ATTN_BWD ? 1 : 0;
        const wl_tensor *q = IN(g, o, base), *k = IN(g, o, base + 1), *v = IN(g, o, base + 2);
        w->batch = q->dim[0];
        w->heads = q->dim[1];
        w->kv_heads = k->dim[1];
        w->s = q->dim[2];
        w->l = k->dim[2];
        w->d = q->dim[3];
        w->dv = v->dim[3];
        w->causal = (int)wl_attr_int(o, "causal", 0);
        w->is_backward = base;
        /* score elements kept: causal masks are aligned bottom-right (query i sees keys
         * 0 .. L-S+i), so kept = S*L - S*(S-1)/2 */
        int64_t kept, t;
        CHK(wl_mul(w->s, w->l, &kept));
        if (w->causal)
            kept -= w->s * (w->s - 1) / 2;
        CHK(wl_mul(kept, w->batch, &kept));
        CHK(wl_mul(kept, w->heads, &kept));
        CHK(wl_mul(kept, 2 * (w->d + w->dv), &t)); /* QK^T and PV */
        /* backward recomputes QK^T and does dV, dP, dQ, dK: 5 GEMMs against the forward's 2
         * (FlashAttention-2, Dao 2023, section 3.2) */
        w->flops_tensor = base ? t / 2 * 5 : t;
        CHK(wl_mul(kept, base ? 8 : 4, &w->flops_simt)); /* scale, max, sub, sum (+dS) */
        w->sfu_ops = kept;                               /* one exp per score */
        break;
    }
    case OPK_GATHER: {
        const wl_tensor *tab = IN(g, o, 0), *idx = IN(g, o, 1);
        int64_t lookups = idx->elems, rowb;
        if (o->type == OP_EMBEDDING) {
            w->row_len = tab->dim[1];
            w->table_rows = tab->dim[0];
        } else {
            int a = 0;
            norm_axis(wl_attr_int(o, "axis", 0), tab->ndim, &a);
            w->table_rows = tab->dim[a];
            w->row_len = tab->elems / tab->dim[a];
        }
        w->rows = lookups;
        CHK(wl_mul(w->row_len, dt_bytes(tab->dt), &rowb));
        double distinct = expected_distinct((double)w->table_rows, (double)lookups);
        w->in_bytes[0] = (int64_t)ceil(distinct) * rowb;
        CHK(wl_mul(lookups, rowb, &w->in_l2_bytes));
        CHK(wl_add(w->in_l2_bytes, idx->bytes, &w->in_l2_bytes));
        w->elems = y->elems;
        break;
    }
    case OPK_SCATTER: {
        const wl_tensor *src = IN(g, o, 0);
        int a = 0;
        norm_axis(wl_attr_int(o, "axis", 0), src->ndim, &a);
        w->rows = src->dim[a];
        w->row_len = src->elems / src->dim[a];
        w->table_rows = y->dim[a];
        w->elems = src->elems;
        w->flops_simt = src->elems; /* one add per element, as an L2 atomic */
        break;
    }
    case OPK_FREE:
        break;
    }
    if (w->kind != OPK_GATHER)
        for (int i = 0; i < o->nin; i++)
            CHK(wl_add(w->in_l2_bytes, w->in_bytes[i], &w->in_l2_bytes));
    return 0;
}

op_work *op_works(const wl_graph *g, arena *a, kt_err *e)
{
    op_work *w = arena_calloc(a, (size_t)g->nop + 1, sizeof *w);
    if (!w) {
        err_set(e, KT_EINTERNAL, g->file, NULL, "out of memory");
        return NULL;
    }
    for (int i = 0; i < g->nop; i++) {
        char msg[128], p[64];
        if (op_work_of(g, &g->op[i], &w[i], msg, sizeof msg)) {
            err_path(p, sizeof p, "ops", NULL, i);
            err_set(e, KT_EINPUT, g->file, p, "%s", msg);
            return NULL;
        }
    }
    return w;
}
