/* kmatch: measured kernels against a result's kernels - classes from kernel names and from the
 * op table, and an in-order alignment of the two sequences. */
#include "kmatch.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

const char *km_class_name(int c)
{
    static const char *const N[KC_COUNT] = {"elementwise", "gemm", "attention", "norm",
                                            "softmax",     "reduce", "index",   "copy",
                                            "fill",        "pool",   "optimizer", "generated"};
    return c >= 0 && c < KC_COUNT ? N[c] : NULL;
}

/* Kernel-name rules, first match wins: a class and the substrings (case-sensitive) that pick
 * it. The names are what CUPTI (torch.profiler) and Nsight Compute print: demangled C++ for
 * ATen, cuDNN and CUTLASS kernels, plain names for cuBLAS's nvjet kernels and Triton's. Order
 * matters where names share words: attention before GEMMs (cuDNN's flash attention is a
 * "cudnn_generated" kernel), index kernels before reductions (ATen's index_add is
 * "indexFuncLargeIndex<..., ReduceAdd>"), copies before fills. Sources: the kernel names of
 * validation/apps/h200-apps-kernels.csv (PyTorch 2.11, CUDA 13, H200) and PyTorch's
 * aten/src/ATen/native/cuda kernel names. */
static const struct {
    int cls;
    const char *pat[24];
} RULES[] = {
    {KC_GENERATED, {"triton_", NULL}},
    {KC_ATTENTION, {"flash", "fmha", "sdpa", "attention", "Attention", "cudnn::fusion", NULL}},
    {KC_GEMM, {"gemm", "Gemm", "GEMM", "gemv", "Gemv", "cutlass", "cublas", "nvjet", "xmma",
               "splitKreduce", "convolve", "cudnn", "conv2d", "Conv", NULL}},
    {KC_NORM, {"layer_norm", "rms_norm", "LayerNorm", "RMSNorm", "RmsNorm", "GammaBeta",
               "batch_norm", "BatchNorm", NULL}},
    {KC_SOFTMAX, {"softmax", "Softmax", NULL}},
    {KC_OPTIMIZER, {"multi_tensor_apply", "adam", "Adam", NULL}},
    {KC_INDEX, {"gather", "Gather", "scatter", "Scatter", "index", "Index", "embedding",
                "Embedding", "radix", "Radix", "sort", "Sort", "topk", "TopK", "cub::", "scan",
                "Scan", "segment", "unique", "grad_weight", "moe_", "Moe", NULL}},
    {KC_POOL, {"pool", "Pool", NULL}},
    {KC_REDUCE, {"reduce", "Reduce", NULL}},
    {KC_COPY, {"CatArray", "copy", "Copy", "transpose", "Transpose", "Memcpy", "memcpy", NULL}},
    {KC_FILL, {"Fill", "fill", "Memset", "memset", NULL}},
};

int km_kernel_class(const char *name)
{
    for (size_t r = 0; r < sizeof RULES / sizeof RULES[0]; r++)
        for (int k = 0; RULES[r].pat[k]; k++)
            if (strstr(name, RULES[r].pat[k]))
                return RULES[r].cls;
    return KC_ELEMENTWISE;
}

/* A library call under torch.compile: what inductor leaves to cuBLAS, cuDNN, flash attention
 * ATen's sort and scatter kernels and MoE routing kernels (the vf model's rule, exec/vf.c). */
static int library(const wl_op *o, const op_info *in)
{
    return in->kind == OPK_GEMM || in->kind == OPK_ATTN || in->kind == OPK_SORT || (in->flags & OPF_ROUTE) ||
           (in->kind == OPK_SCATTER && o->type != OP_EMBEDDING_BWD);
}

int km_item_class(const wl_graph *g, const kt_item *it, int compiler)
{
    if (it->c.bound == BOUND_NONE)
        return -1;
    int real = 0, first = -1;
    for (int j = 0; j < it->nops; j++) {
        const wl_op *o = &g->op[it->ops[j]];
        if (op_is_free(g, o))
            continue;
        const op_info *in = op_info_of(o->type);
        if (library(o, in))
            return (int)in->kclass;
        if (first < 0)
            first = it->ops[j];
        real++;
    }
    if (first < 0)
        return -1;
    if (compiler || real >= 2)
        return KC_GENERATED;
    return (int)op_info_of(g->op[first].type)->kclass;
}

/* Eager PyTorch has no RoPE kernel: HF/Meta's apply_rotary_pos_emb runs mul(x, cos), neg(x2),
 * cat, mul(., sin), add (the bsp cost, cost.c rope_eager_tile, prices the five), so one model
 * kernel stands for four element-wise kernels and a concatenation. */
unsigned km_item_absorbs(const wl_graph *g, const kt_item *it, int cls, int eager)
{
    unsigned m = cls >= 0 && cls < KC_COUNT ? 1u << cls : 0;
    int real = 0, rope = 0;
    for (int j = 0; j < it->nops; j++) {
        const wl_op *o = &g->op[it->ops[j]];
        if (op_is_free(g, o))
            continue;
        real++;
        rope += o->type == OP_ROPE;
    }
    if (eager && real == 1 && rope)
        m |= 1u << KC_COPY;
    return m;
}

/* Backtrack codes, one byte per cell: bits 0-1 how D[i][j] was reached; with FROM_E, bits 2-7
 * the length of the run model kernel i-1 owns (1..KM_MAX_RUN). */
enum { FROM_E = 0, SKIP_MEASURED = 1, SKIP_MODEL = 2 };

/* Nanoseconds of a time in seconds, for integer scores (exact and deterministic sums). */
static int64_t ns(double s)
{
    return s > 0 && s < 1e6 ? (int64_t)llround(s * 1e9) : 0;
}

/* The alignment as a dynamic program over (model kernels i, measured kernels j):
 *   D[i][j] = max(D[i][j-1], D[i-1][j],
 *                 max over runs s..j-1 of D[i-1][s] + bonus + min(t_i, t_s + ... + t_{j-1})
 *                                         + absorb * (j-1-s))
 * where a run starts with a kernel of model kernel i-1's class, the others' classes are in
 * mabs[i-1], and it is at most KM_MAX_RUN long: a run explains at most its model kernel's time,
 * so a model kernel of several kernels (eager RoPE: five) takes the run that fills it, and a
 * filled one takes further kernels for KM_ABSORB_NS each. Two rolling rows of scores, one byte
 * per cell to walk back. */
int km_align(const int *mc, const double *mt, const unsigned *mabs, int nm, const int *kc,
             const double *kt, int nk, arena *a, int *item_of, kt_err *e)
{
    if ((long long)(nm + 1) * (nk + 1) > KM_MAX_CELLS)
        return err_set(e, KT_EINPUT, NULL, NULL,
                       "%d measured kernels x %d model kernels are too many to align (at most "
                       "%lld cells); select one step with --range",
                       nk, nm, (long long)KM_MAX_CELLS);
    for (int j = 0; j < nk; j++)
        item_of[j] = -1;
    if (!nm || !nk)
        return 0;
    arena_pos mark = arena_mark(a);
    size_t w = (size_t)nk + 1;
    unsigned char *bt = arena_calloc(a, ((size_t)nm + 1) * w, 1);
    int64_t *d0 = arena_calloc(a, w, sizeof *d0), *d1 = arena_calloc(a, w, sizeof *d1);
    int64_t *kns = arena_calloc(a, w, sizeof *kns);
    if (!bt || !d0 || !d1 || !kns) {
        arena_release(a, mark);
        return err_set(e, KT_EINTERNAL, NULL, NULL, "out of memory");
    }
    for (int j = 0; j < nk; j++)
        kns[j] = ns(kt[j]);
    for (size_t j = 0; j < w; j++) {
        d0[j] = 0;
        bt[j] = SKIP_MEASURED;
    }
    for (int i = 1; i <= nm; i++) {
        int64_t m_ns = ns(mt[i - 1]);
        unsigned takes = mabs ? mabs[i - 1] : 1u << mc[i - 1];
        d1[0] = 0;
        bt[(size_t)i * w] = SKIP_MODEL;
        for (int j = 1; j <= nk; j++) {
            /* on a tie, leave measured kernel j-1 out: walking back from the end, matches then
             * land on the earliest kernels that score as much */
            int64_t best = d1[j - 1];
            int from = SKIP_MEASURED, run = 0;
            int64_t sum = 0;
            for (int len = 1; len <= KM_MAX_RUN && len <= j; len++) {
                int s0 = j - len; /* the run is kernels s0 .. j-1 */
                sum += kns[s0];
                if (kc[s0] == mc[i - 1]) {
                    int64_t v = d0[s0] + KM_MATCH_BONUS_NS + (m_ns < sum ? m_ns : sum) +
                                KM_ABSORB_NS * (len - 1);
                    if (v > best) { /* a tie keeps the shorter run */
                        best = v;
                        from = FROM_E;
                        run = len;
                    }
                }
                /* kernel s0 can only be absorbed, not the start, for a longer run */
                if (kc[s0] < 0 || kc[s0] >= 32 || !(takes >> kc[s0] & 1u))
                    break;
            }
            if (d0[j] > best) {
                best = d0[j];
                from = SKIP_MODEL;
            }
            d1[j] = best;
            bt[(size_t)i * w + (size_t)j] = (unsigned char)(from | (from == FROM_E ? run << 2 : 0));
        }
        int64_t *t = d0;
        d0 = d1;
        d1 = t;
    }
    /* walk back from D[nm][nk] */
    int i = nm, j = nk;
    while (i > 0 && j > 0) {
        unsigned char b = bt[(size_t)i * w + (size_t)j];
        int from = b & 3;
        if (from == FROM_E) {
            int run = b >> 2;
            for (int k = j - run; k < j; k++)
                item_of[k] = i - 1;
            i--;
            j -= run;
        } else if (from == SKIP_MEASURED) {
            j--;
        } else {
            i--;
        }
    }
    arena_release(a, mark);
    return 0;
}
