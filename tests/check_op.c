/* check_op: each op type's FLOPs and bytes (op_work_of) against hand-computed values. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../src/model/op.h"
#include "../src/model/wl.h"
#include "ktest.h"

static arena A;
static wl_graph G;

static void setup(void)
{
    memset(&A, 0, sizeof A);
    wl_init(&G, "t", &A);
}

static void teardown(void)
{
    arena_free(&A);
}

/* Add a tensor with nd dims given as varargs (long long). */
static int T(const char *name, dtype dt, wl_kind kind, int nd, ...)
{
    int64_t d[WL_MAXDIM];
    va_list ap;
    va_start(ap, nd);
    for (int i = 0; i < nd; i++)
        d[i] = va_arg(ap, long long);
    va_end(ap);
    kt_err e;
    err_clear(&e);
    int t = wl_add_tensor(&G, name, nd, d, dt, kind, &e);
    ck_assert_msg(t >= 0, "tensor %s: %s", name, e.msg);
    return t;
}

static wl_attr IATTR(const char *k, int64_t v)
{
    wl_attr a = {.key = k, .type = WA_INT, .ival = v};
    return a;
}

/* Add op (inputs `in`, one output), check it and compute its work. */
static op_work W(int type, const int *in, int nin, int out, const wl_attr *at, int nat)
{
    kt_err e;
    err_clear(&e);
    char name[16];
    snprintf(name, sizeof name, "op%d", G.nop);
    int o = wl_add_op(&G, name, type, in, nin, &out, 1, at, nat, &e);
    ck_assert_int_ge(o, 0);
    char msg[256] = "", sub[64] = "";
    ck_assert_msg(op_check(&G, &G.op[o], msg, sizeof msg, sub, sizeof sub) == 0, "op_check %s: %s: %s",
                  op_name(type), sub, msg);
    op_work w;
    ck_assert_msg(op_work_of(&G, &G.op[o], &w, msg, sizeof msg) == 0, "op_work_of: %s", msg);
    return w;
}

/* The same, expecting op_check to fail with `want` in its message. */
static void W_bad(int type, const int *in, int nin, int out, const wl_attr *at, int nat,
                  const char *want_sub, const char *want)
{
    kt_err e;
    err_clear(&e);
    int o = wl_add_op(&G, "bad", type, in, nin, &out, 1, at, nat, &e);
    char msg[256] = "", sub[64] = "";
    ck_assert_int_eq(op_check(&G, &G.op[o], msg, sizeof msg, sub, sizeof sub), -1);
    ck_assert_str_eq(sub, want_sub);
    ck_assert_msg(strstr(msg, want), "message \"%s\" lacks \"%s\"", msg, want);
}

START_TEST(test_table)
{
    ck_assert_int_eq(op_parse("matmul"), OP_MATMUL);
    ck_assert_int_eq(op_parse("index_select"), OP_INDEX_SELECT);
    ck_assert_int_eq(op_parse("nope"), -1);
    for (int i = 0; i < OP_COUNT; i++)
        ck_assert_int_eq(op_parse(op_name(i)), i); /* names are unique and round-trip */
    ck_assert(op_is_gemm(OP_LINEAR) && !op_is_gemm(OP_ADD));
    ck_assert(op_is_elementwise(OP_GELU) && !op_is_elementwise(OP_SOFTMAX));
    ck_assert(op_is_index(OP_EMBEDDING) && op_is_index(OP_SCATTER_ADD) && !op_is_index(OP_CONCAT));
    /* attribute names are whole entries of the type's list: "axis" of slice, not "xis" or
     * "axis,start"; nothing for an empty name */
    ck_assert(op_attr_known(OP_SLICE, "axis") && op_attr_known(OP_SLICE, "end"));
    ck_assert(!op_attr_known(OP_SLICE, "xis") && !op_attr_known(OP_SLICE, "axi"));
    ck_assert(!op_attr_known(OP_SLICE, "axis,start") && !op_attr_known(OP_SLICE, ""));
    ck_assert(!op_attr_known(OP_RELU, "inplace") && op_attr_known(OP_MOE_DISPATCH, "imbalance_pct"));
}
END_TEST

START_TEST(test_matmul_batch_broadcast)
{
    /* A [2,3,64,32] x B [32,16] -> [2,3,64,16]: batch 6, M 64, K 32, N 16 */
    int in[2] = {T("a", DT_BF16, TK_INPUT, 4, 2LL, 3LL, 64LL, 32LL), T("b", DT_BF16, TK_WEIGHT, 2, 32LL, 16LL)};
    int y = T("y", DT_BF16, TK_OUTPUT, 4, 2LL, 3LL, 64LL, 16LL);
    op_work w = W(OP_MATMUL, in, 2, y, NULL, 0);
    ck_assert_int_eq(w.kind, OPK_GEMM);
    ck_assert_int_eq(w.batch, 6);
    ck_assert_int_eq(w.m, 64);
    ck_assert_int_eq(w.n, 16);
    ck_assert_int_eq(w.k, 32);
    ck_assert_int_eq(w.flops_tensor, 2LL * 6 * 64 * 16 * 32); /* 393216 */
    ck_assert_int_eq(w.flops_simt, 0);
    ck_assert_int_eq(w.in_bytes[0], 2 * 3 * 64 * 32 * 2);
    ck_assert_int_eq(w.in_bytes[1], 32 * 16 * 2);
    ck_assert_int_eq(w.out_bytes, 6 * 64 * 16 * 2);
    ck_assert_int_eq(w.in_l2_bytes, w.in_bytes[0] + w.in_bytes[1]);
    ck_assert_int_eq(w.cdt, DT_BF16);
}
END_TEST

START_TEST(test_matmul_transpose)
{
    /* A^T with A [K=32, M=64]; B^T with B [N=16, K=32] -> [64,16] */
    int in[2] = {T("a", DT_FP16, TK_INPUT, 2, 32LL, 64LL), T("b", DT_FP16, TK_WEIGHT, 2, 16LL, 32LL)};
    int y = T("y", DT_FP16, TK_OUTPUT, 2, 64LL, 16LL);
    wl_attr at[2] = {IATTR("transpose_a", 1), IATTR("transpose_b", 1)};
    op_work w = W(OP_MATMUL, in, 2, y, at, 2);
    ck_assert_int_eq(w.m, 64);
    ck_assert_int_eq(w.n, 16);
    ck_assert_int_eq(w.k, 32);
    ck_assert_int_eq(w.flops_tensor, 2 * 64 * 16 * 32);
    /* without transposes the inner dims (64 vs 16) differ */
    int y2 = T("y2", DT_FP16, TK_OUTPUT, 2, 32LL, 32LL);
    W_bad(OP_MATMUL, in, 2, y2, NULL, 0, "inputs[1]", "inner dimensions differ (64 vs 16)");
}
END_TEST

START_TEST(test_linear_bias)
{
    /* x [8,4,64] . W^T with W [32,64] (PyTorch layout) + bias [32] -> [8,4,32]: M = 32 rows */
    int in[3] = {T("x", DT_BF16, TK_INPUT, 3, 8LL, 4LL, 64LL), T("w", DT_BF16, TK_WEIGHT, 2, 32LL, 64LL),
                 T("bias", DT_BF16, TK_WEIGHT, 1, 32LL)};
    int y = T("y", DT_BF16, TK_OUTPUT, 3, 8LL, 4LL, 32LL);
    wl_attr at[1] = {IATTR("transpose_b", 1)};
    op_work w = W(OP_LINEAR, in, 3, y, at, 1);
    ck_assert_int_eq(w.m, 32);
    ck_assert_int_eq(w.n, 32);
    ck_assert_int_eq(w.k, 64);
    ck_assert_int_eq(w.flops_tensor, 2 * 32 * 32 * 64);
    ck_assert_int_eq(w.flops_simt, 32 * 32); /* one bias add per output element */
    ck_assert_int_eq(w.in_bytes[2], 64);
    ck_assert_int_eq(w.out_bytes, 8 * 4 * 32 * 2);
    /* without bias: no SIMT FLOPs */
    int y2 = T("y2", DT_BF16, TK_OUTPUT, 3, 8LL, 4LL, 32LL);
    op_work w2 = W(OP_LINEAR, in, 2, y2, at, 1);
    ck_assert_int_eq(w2.flops_simt, 0);
    /* a wrong bias length */
    int b2 = T("b2", DT_BF16, TK_WEIGHT, 1, 31LL);
    int in3[3] = {in[0], in[1], b2};
    int y3 = T("y3", DT_BF16, TK_OUTPUT, 3, 8LL, 4LL, 32LL);
    W_bad(OP_LINEAR, in3, 3, y3, at, 1, "inputs[2]", "bias must be [32]");
}
END_TEST

START_TEST(test_unary)
{
    int x = T("x", DT_FP32, TK_INPUT, 2, 10LL, 100LL);
    int y = T("y", DT_FP32, TK_OUTPUT, 2, 10LL, 100LL);
    op_work w = W(OP_RELU, &x, 1, y, NULL, 0);
    ck_assert_int_eq(w.kind, OPK_STREAM);
    ck_assert_int_eq(w.elems, 1000);
    ck_assert_int_eq(w.in_bytes[0], 4000);
    ck_assert_int_eq(w.out_bytes, 4000);
    ck_assert_int_eq(w.in_l2_bytes, 4000);
    ck_assert_int_eq(w.flops_simt, 1000); /* one max per element */
    ck_assert_int_eq(w.sfu_ops, 0);
    ck_assert_int_eq(w.flops_tensor, 0);
    int y2 = T("y2", DT_FP32, TK_OUTPUT, 2, 10LL, 100LL);
    op_work e = W(OP_EXP, &x, 1, y2, NULL, 0);
    ck_assert_int_eq(e.sfu_ops, 1000); /* one transcendental per element */
    /* the torch.nn activations beyond the basic ones: FLOPs and SFU ops per element counted
     * from each formula (op.c): leaky_relu mul + select; elu exp, sub, mul, select; softplus
     * exp, log, add, compare, select; mish exp, log, tanh, add, mul, select; hardtanh max, min;
     * hardsigmoid add, max, min, mul; hardswish one mul more */
    static const struct { int t; int64_t fl, sfu; } ACT[] = {
        {OP_LEAKY_RELU, 2, 0}, {OP_ELU, 3, 1},         {OP_SOFTPLUS, 3, 2}, {OP_MISH, 3, 3},
        {OP_HARDTANH, 2, 0},   {OP_HARDSIGMOID, 4, 0}, {OP_HARDSWISH, 5, 0}};
    for (size_t i = 0; i < sizeof ACT / sizeof ACT[0]; i++) {
        char nm[16];
        snprintf(nm, sizeof nm, "ya%zu", i);
        int ya = T(nm, DT_FP32, TK_OUTPUT, 2, 10LL, 100LL);
        op_work a = W(ACT[i].t, &x, 1, ya, NULL, 0);
        ck_assert_int_eq(a.kind, OPK_STREAM);
        ck_assert_int_eq(a.flops_simt, 1000 * ACT[i].fl);
        ck_assert_int_eq(a.sfu_ops, 1000 * ACT[i].sfu);
        ck_assert_int_eq(a.in_bytes[0] + a.out_bytes, 8000);
    }
    /* cast fp32 -> bf16: reads 4 bytes, writes 2 per element */
    int y3 = T("y3", DT_BF16, TK_OUTPUT, 2, 10LL, 100LL);
    op_work c = W(OP_CAST, &x, 1, y3, NULL, 0);
    ck_assert_int_eq(c.in_bytes[0], 4000);
    ck_assert_int_eq(c.out_bytes, 2000);
}
END_TEST

START_TEST(test_binary_broadcast)
{
    /* a [4,1,8] + b [3,1] -> [4,3,8] (numpy rules, right-aligned) */
    int in[2] = {T("a", DT_FP16, TK_INPUT, 3, 4LL, 1LL, 8LL), T("b", DT_FP16, TK_INPUT, 2, 3LL, 1LL)};
    int y = T("y", DT_FP16, TK_OUTPUT, 3, 4LL, 3LL, 8LL);
    op_work w = W(OP_ADD, in, 2, y, NULL, 0);
    ck_assert_int_eq(w.elems, 96);
    ck_assert_int_eq(w.in_bytes[0], 64);
    ck_assert_int_eq(w.in_bytes[1], 6);
    ck_assert_int_eq(w.out_bytes, 192);
    ck_assert_int_eq(w.flops_simt, 96);
    /* [4,2] + [3] does not broadcast */
    int in2[2] = {T("c", DT_FP16, TK_INPUT, 2, 4LL, 2LL), T("d", DT_FP16, TK_INPUT, 1, 3LL)};
    int y2 = T("y2", DT_FP16, TK_OUTPUT, 2, 4LL, 3LL);
    W_bad(OP_MUL, in2, 2, y2, NULL, 0, "inputs[1]", "shapes do not broadcast");
}
END_TEST

START_TEST(test_reduce)
{
    int x = T("x", DT_FP32, TK_INPUT, 2, 6LL, 10LL);
    int y = T("y", DT_FP32, TK_OUTPUT, 1, 6LL);
    int64_t ax1[1] = {-1};
    wl_attr at[1] = {{.key = "axes", .type = WA_LIST, .list = ax1, .nlist = 1}};
    op_work w = W(OP_REDUCE, &x, 1, y, at, 1);
    ck_assert_int_eq(w.kind, OPK_ROW);
    ck_assert_int_eq(w.rows, 6);
    ck_assert_int_eq(w.row_len, 10);
    ck_assert_int_eq(w.flops_simt, 60);
    ck_assert_int_eq(w.in_bytes[0], 240);
    ck_assert_int_eq(w.out_bytes, 24);
    /* over axis 0 with keepdim: [1,10] */
    int64_t ax0[1] = {0};
    wl_attr at0[2] = {{.key = "axes", .type = WA_LIST, .list = ax0, .nlist = 1}, IATTR("keepdim", 1)};
    int y0 = T("y0", DT_FP32, TK_OUTPUT, 2, 1LL, 10LL);
    op_work w0 = W(OP_REDUCE, &x, 1, y0, at0, 2);
    ck_assert_int_eq(w0.rows, 10);
    ck_assert_int_eq(w0.row_len, 6);
    int64_t ax5[1] = {5};
    wl_attr at5[1] = {{.key = "axes", .type = WA_LIST, .list = ax5, .nlist = 1}};
    W_bad(OP_REDUCE, &x, 1, y, at5, 1, "attrs.axes", "axis 5 out of range for 2 dimensions");
}
END_TEST

START_TEST(test_softmax_norms)
{
    int x = T("x", DT_FP32, TK_INPUT, 2, 16LL, 256LL);
    int y = T("y", DT_FP32, TK_OUTPUT, 2, 16LL, 256LL);
    op_work s = W(OP_SOFTMAX, &x, 1, y, NULL, 0);
    ck_assert_int_eq(s.rows, 16);
    ck_assert_int_eq(s.row_len, 256);
    ck_assert_int_eq(s.sfu_ops, 4096); /* one exp per element */
    ck_assert_int_eq(s.in_bytes[0], 16384);
    ck_assert_int_eq(s.out_bytes, 16384);
    /* softmax over axis 0: rows of 16 */
    wl_attr a0[1] = {IATTR("axis", 0)};
    int y0 = T("y0", DT_FP32, TK_OUTPUT, 2, 16LL, 256LL);
    op_work s0 = W(OP_SOFTMAX, &x, 1, y0, a0, 1);
    ck_assert_int_eq(s0.row_len, 16);
    ck_assert_int_eq(s0.rows, 256);
    /* layernorm with gamma and beta: rows 16 of 256; one rsqrt per row */
    int in[3] = {x, T("g", DT_FP32, TK_WEIGHT, 1, 256LL), T("b", DT_FP32, TK_WEIGHT, 1, 256LL)};
    int y1 = T("y1", DT_FP32, TK_OUTPUT, 2, 16LL, 256LL);
    op_work l = W(OP_LAYERNORM, in, 3, y1, NULL, 0);
    ck_assert_int_eq(l.rows, 16);
    ck_assert_int_eq(l.row_len, 256);
    ck_assert_int_eq(l.sfu_ops, 16);
    ck_assert_int_eq(l.in_bytes[1], 1024);
    ck_assert_int_eq(l.in_bytes[2], 1024);
    ck_assert_int_eq(l.in_l2_bytes, 16384 + 2048);
    int y2 = T("y2", DT_FP32, TK_OUTPUT, 2, 16LL, 256LL);
    op_work r = W(OP_RMSNORM, in, 2, y2, NULL, 0);
    ck_assert_int_eq(r.rows, 16);
    ck_assert_int_eq(r.sfu_ops, 16);
    ck_assert_int_lt(r.flops_simt, l.flops_simt); /* no mean subtraction */
    int bad = T("bad", DT_FP32, TK_WEIGHT, 1, 255LL);
    int inb[2] = {x, bad};
    int y3 = T("y3", DT_FP32, TK_OUTPUT, 2, 16LL, 256LL);
    W_bad(OP_RMSNORM, inb, 2, y3, NULL, 0, "inputs[1]", "norm parameters must be [256]");
}
END_TEST

/* An element-wise op with an operand that is a transposed view (PyTorch's TransposeBackward
 * gradient) runs ATen's generic element-by-element kernel: flagged unaligned (cost.c). A
 * transpose that keeps the last axis, or a copying one, leaves it vectorized. */
START_TEST(test_strided_elementwise)
{
    int x = T("x", DT_BF16, TK_INPUT, 3, 4LL, 27LL, 128LL);
    int k = T("k", DT_BF16, TK_INPUT, 3, 4LL, 128LL, 27LL);
    int kt = T("kt", DT_BF16, TK_INTER, 3, 4LL, 27LL, 128LL);
    wl_attr nc[1] = {IATTR("copy", 0)};
    W(OP_TRANSPOSE, &k, 1, kt, nc, 1); /* default perm: the last two axes swap */
    int in[2] = {x, kt};
    int y = T("y", DT_BF16, TK_OUTPUT, 3, 4LL, 27LL, 128LL);
    op_work w = W(OP_ADD, in, 2, y, NULL, 0);
    ck_assert_int_eq(w.unaligned, 1);
    int in2[2] = {x, x};
    int y2 = T("y2", DT_BF16, TK_OUTPUT, 3, 4LL, 27LL, 128LL);
    ck_assert_int_eq(W(OP_ADD, in2, 2, y2, NULL, 0).unaligned, 0);
    /* a copying transpose writes a contiguous tensor */
    int kc = T("kc", DT_BF16, TK_INTER, 3, 4LL, 27LL, 128LL);
    W(OP_TRANSPOSE, &k, 1, kc, NULL, 0);
    int in3[2] = {x, kc};
    int y3 = T("y3", DT_BF16, TK_OUTPUT, 3, 4LL, 27LL, 128LL);
    ck_assert_int_eq(W(OP_ADD, in3, 2, y3, NULL, 0).unaligned, 0);
}
END_TEST

/* A norm of `type` over [rows, d] bf16 with a weight; names from prefix and i (unique per test) */
static op_work norm_work(int type, const char *prefix, size_t i, long long rows, long long d)
{
    char nx[24], ng[24], ny[24];
    snprintf(nx, sizeof nx, "%sx%zu", prefix, i);
    snprintf(ng, sizeof ng, "%sg%zu", prefix, i);
    snprintf(ny, sizeof ny, "%sy%zu", prefix, i);
    int in[2] = {T(nx, DT_BF16, TK_INPUT, 2, rows, d), T(ng, DT_BF16, TK_WEIGHT, 1, d)};
    int y = T(ny, DT_BF16, TK_OUTPUT, 2, rows, d);
    return W(type, in, 2, y, NULL, 0);
}

/* ATen's vectorized layer/RMS norm kernel: warp-instructions per row against ncu on the H200
 * (hw/calibrate/apps/results/raw-norm-probe/ncu.csv, smsp__inst_executed / rows) at the row
 * lengths the instruction model was not fitted on (it was fitted at D = 64, 256, 1024, 3072);
 * within 1.5% each */
START_TEST(test_norm_instructions)
{
    static const struct {
        int type;
        long long d;
        double warp_inst;
    } M[] = {{OP_LAYERNORM, 128, 920},  {OP_LAYERNORM, 192, 1178}, {OP_LAYERNORM, 384, 1401},
             {OP_LAYERNORM, 512, 1631}, {OP_LAYERNORM, 768, 1867}, {OP_LAYERNORM, 1536, 2575},
             {OP_LAYERNORM, 2048, 3047}, {OP_LAYERNORM, 4096, 4935}, {OP_RMSNORM, 128, 491},
             {OP_RMSNORM, 192, 558},    {OP_RMSNORM, 384, 621},    {OP_RMSNORM, 512, 686},
             {OP_RMSNORM, 768, 780},    {OP_RMSNORM, 1536, 1062},  {OP_RMSNORM, 2048, 1250},
             {OP_RMSNORM, 4096, 2002}};
    for (size_t i = 0; i < sizeof M / sizeof M[0]; i++) {
        op_work w = norm_work(M[i].type, "", i, 1024, M[i].d);
        double per_row = (w.inst_per_cta + w.inst_per_elem * (double)w.row_len) / 32.0;
        ck_assert_msg(fabs(per_row / M[i].warp_inst - 1.0) < 0.015, "%s D=%lld: %.1f vs %.0f",
                      op_name(M[i].type), M[i].d, per_row, M[i].warp_inst);
    }
}
END_TEST

/* The norm kernel's serial chain: a (32, 4) block of 4-element vectors walks a D-element row in
 * ceil(D / 512) iterations a thread, two dependent round trips each (the statistics' load, then
 * x and the weights for the output) and the per-warp-iteration instructions (rmsnorm 47.03);
 * ATen's layer_norm_kernel.cu, vec_size 4. */
START_TEST(test_norm_chain)
{
    static const struct {
        long long d, iters;
    } M[] = {{64, 1}, {512, 1}, {513, 2}, {4096, 8}, {8192, 16}};
    for (size_t i = 0; i < sizeof M / sizeof M[0]; i++) {
        op_work w = norm_work(OP_RMSNORM, "c", i, 16, M[i].d);
        ck_assert_int_eq(w.chain_rounds, 2 * M[i].iters);
        ck_assert_double_eq_tol(w.chain_inst, 47.03 * (double)M[i].iters, 1e-9);
    }
}
END_TEST

/* Brute-force count of kept scores of causal attention, bottom-right aligned: query i of S sees
 * keys 0 .. L-S+i. */
static int64_t kept_brute(int64_t s, int64_t l)
{
    int64_t n = 0;
    for (int64_t i = 0; i < s; i++)
        for (int64_t j = 0; j < l; j++)
            n += j <= l - s + i;
    return n;
}

START_TEST(test_attention)
{
    /* GQA: 8 query heads over 2 kv heads; S = 128 queries, L = 256 keys, D = Dv = 64 */
    int in[3] = {T("q", DT_BF16, TK_INPUT, 4, 2LL, 8LL, 128LL, 64LL), T("k", DT_BF16, TK_INPUT, 4, 2LL, 2LL, 256LL, 64LL),
                 T("v", DT_BF16, TK_INPUT, 4, 2LL, 2LL, 256LL, 64LL)};
    int y = T("y", DT_BF16, TK_OUTPUT, 4, 2LL, 8LL, 128LL, 64LL);
    op_work full = W(OP_ATTENTION, in, 3, y, NULL, 0);
    ck_assert_int_eq(full.kind, OPK_ATTN);
    ck_assert_int_eq(full.heads, 8);
    ck_assert_int_eq(full.kv_heads, 2);
    /* QK^T and PV: 2*S*L*D + 2*S*L*Dv per (batch, query head) */
    ck_assert_int_eq(full.flops_tensor, 2LL * 8 * (2 * 128 * 256 * 64 + 2 * 128 * 256 * 64));
    ck_assert_int_eq(full.sfu_ops, 2LL * 8 * 128 * 256); /* one exp per score */
    /* K and V are read once per kv head, not per query head */
    ck_assert_int_eq(full.in_bytes[1], 2 * 2 * 256 * 64 * 2);
    wl_attr c[1] = {IATTR("causal", 1)};
    int y2 = T("y2", DT_BF16, TK_OUTPUT, 4, 2LL, 8LL, 128LL, 64LL);
    op_work cz = W(OP_ATTENTION, in, 3, y2, c, 1);
    int64_t kept = kept_brute(128, 256);
    ck_assert_int_eq(kept, 128 * 256 - 128 * 127 / 2); /* 24640 */
    ck_assert_int_eq(cz.flops_tensor, 2LL * 8 * kept * 2 * (64 + 64));
    ck_assert_int_eq(cz.sfu_ops, 2LL * 8 * kept);
    /* S == L: the usual lower triangle S(S+1)/2 */
    ck_assert_int_eq(kept_brute(64, 64), 64 * 65 / 2);
    /* 8 query heads over 3 kv heads is not GQA */
    int k3 = T("k3", DT_BF16, TK_INPUT, 4, 2LL, 3LL, 256LL, 64LL);
    int v3 = T("v3", DT_BF16, TK_INPUT, 4, 2LL, 3LL, 256LL, 64LL);
    int in3[3] = {in[0], k3, v3};
    int y3 = T("y3", DT_BF16, TK_OUTPUT, 4, 2LL, 8LL, 128LL, 64LL);
    W_bad(OP_ATTENTION, in3, 3, y3, NULL, 0, "inputs", "query heads (8) must be a multiple of kv heads (3)");
}
END_TEST

START_TEST(test_embedding_distinct_rows)
{
    /* table [1000, 64] bf16, 500 int64 lookups: expected distinct rows r(1-(1-1/r)^n) */
    int in[2] = {T("tab", DT_BF16, TK_WEIGHT, 2, 1000LL, 64LL), T("idx", DT_INT64, TK_INPUT, 1, 500LL)};
    int y = T("y", DT_BF16, TK_OUTPUT, 2, 500LL, 64LL);
    op_work w = W(OP_EMBEDDING, in, 2, y, NULL, 0);
    double distinct = 1000.0 * (1.0 - pow(1.0 - 1.0 / 1000.0, 500.0)); /* 393.6 */
    ck_assert_double_eq_tol(distinct, 393.6, 0.1);
    ck_assert_int_eq(w.kind, OPK_GATHER);
    ck_assert_int_eq(w.rows, 500);
    ck_assert_int_eq(w.row_len, 64);
    ck_assert_int_eq(w.table_rows, 1000);
    ck_assert_int_eq(w.in_bytes[0], (int64_t)ceil(distinct) * 128); /* 394 rows x 128 B */
    ck_assert_int_eq(w.in_l2_bytes, 500 * 128 + 500 * 8); /* every lookup + the indices */
    ck_assert_int_eq(w.out_bytes, 500 * 128);
    /* one lookup touches one row; many lookups into a tiny table touch all of it */
    int in2[2] = {T("tab2", DT_FP32, TK_WEIGHT, 2, 4LL, 2LL), T("i2", DT_INT32, TK_INPUT, 1, 1000LL)};
    int y2 = T("y2", DT_FP32, TK_OUTPUT, 2, 1000LL, 2LL);
    op_work w2 = W(OP_EMBEDDING, in2, 2, y2, NULL, 0);
    ck_assert_int_eq(w2.in_bytes[0], 4 * 8);
}
END_TEST

START_TEST(test_gather_scatter)
{
    /* index_select x [100, 8] fp32 by 20 int32 indices on axis 0 -> [20, 8] */
    int in[2] = {T("x", DT_FP32, TK_INPUT, 2, 100LL, 8LL), T("i", DT_INT32, TK_INPUT, 1, 20LL)};
    int y = T("y", DT_FP32, TK_OUTPUT, 2, 20LL, 8LL);
    op_work g = W(OP_GATHER, in, 2, y, NULL, 0);
    double distinct = 100.0 * (1.0 - pow(0.99, 20.0)); /* 18.2 */
    ck_assert_int_eq(g.table_rows, 100);
    ck_assert_int_eq(g.rows, 20);
    ck_assert_int_eq(g.in_bytes[0], (int64_t)ceil(distinct) * 32);
    ck_assert_int_eq(g.in_l2_bytes, 20 * 32 + 80);
    /* gather along axis 1: x [100, 8] by 5 indices -> [100, 5]; a "row" is a column of 100 */
    int i5 = T("i5", DT_INT64, TK_INPUT, 1, 5LL);
    int in1[2] = {in[0], i5};
    int y1 = T("y1", DT_FP32, TK_OUTPUT, 2, 100LL, 5LL);
    wl_attr a1[1] = {IATTR("axis", 1)};
    op_work g1 = W(OP_INDEX_SELECT, in1, 2, y1, a1, 1);
    ck_assert_int_eq(g1.table_rows, 8);
    ck_assert_int_eq(g1.row_len, 100);
    /* scatter_add src [20, 8] into a zeroed [100, 8]: one atomic add per source element */
    int sin[2] = {T("src", DT_FP32, TK_INPUT, 2, 20LL, 8LL), T("si", DT_INT64, TK_INPUT, 1, 20LL)};
    int dst = T("dst", DT_FP32, TK_OUTPUT, 2, 100LL, 8LL);
    op_work s = W(OP_SCATTER_ADD, sin, 2, dst, NULL, 0);
    ck_assert_int_eq(s.kind, OPK_SCATTER);
    ck_assert_int_eq(s.rows, 20);
    ck_assert_int_eq(s.row_len, 8);
    ck_assert_int_eq(s.table_rows, 100);
    ck_assert_int_eq(s.flops_simt, 160);
    ck_assert_int_eq(s.in_bytes[0], 640);
    ck_assert_int_eq(s.in_bytes[1], 160);
    ck_assert_int_eq(s.out_bytes, 3200);
    /* index_copy dst [100, 8] <- src [20, 8]: in place, only the 20 rows are written */
    int cin[3] = {T("d0", DT_FP32, TK_INPUT, 2, 100LL, 8LL), sin[1], sin[0]};
    int cy = T("cy", DT_FP32, TK_OUTPUT, 2, 100LL, 8LL);
    op_work c = W(OP_INDEX_COPY, cin, 3, cy, NULL, 0);
    ck_assert_int_eq(c.in_bytes[0], 0);
    ck_assert_int_eq(c.in_bytes[2], 640);
    ck_assert_int_eq(c.out_bytes, 640);
    ck_assert_int_eq(c.elems, 160);
}
END_TEST

START_TEST(test_concat_slice)
{
    int in[2] = {T("a", DT_FP32, TK_INPUT, 2, 4LL, 3LL), T("b", DT_FP32, TK_INPUT, 2, 4LL, 5LL)};
    int y = T("y", DT_FP32, TK_OUTPUT, 2, 4LL, 8LL);
    wl_attr a1[1] = {IATTR("axis", 1)};
    op_work c = W(OP_CONCAT, in, 2, y, a1, 1);
    ck_assert_int_eq(c.elems, 32);
    ck_assert_int_eq(c.in_bytes[0], 48);
    ck_assert_int_eq(c.in_bytes[1], 80);
    ck_assert_int_eq(c.out_bytes, 128);
    ck_assert_int_eq(c.flops_simt, 0);
    int y0 = T("y0", DT_FP32, TK_OUTPUT, 2, 8LL, 3LL);
    W_bad(OP_CONCAT, in, 2, y0, NULL, 0, "inputs", "input 1 differs from input 0 in dimension 1");
    /* slice rows [2, 5) of x [10, 6]: reads only the 3 rows it keeps */
    int x = T("x", DT_FP32, TK_INPUT, 2, 10LL, 6LL);
    int s = T("s", DT_FP32, TK_OUTPUT, 2, 3LL, 6LL);
    wl_attr sa[3] = {IATTR("axis", 0), IATTR("start", 2), IATTR("end", 5)};
    op_work w = W(OP_SLICE, &x, 1, s, sa, 3);
    ck_assert_int_eq(w.in_bytes[0], 72);
    ck_assert_int_eq(w.out_bytes, 72);
    ck_assert_int_eq(w.elems, 18);
}
END_TEST

START_TEST(test_transpose_reshape_rope)
{
    int x = T("x", DT_FP32, TK_INPUT, 2, 4LL, 6LL);
    int y = T("y", DT_FP32, TK_OUTPUT, 2, 6LL, 4LL);
    op_work c = W(OP_TRANSPOSE, &x, 1, y, NULL, 0); /* a copy by default */
    ck_assert_int_eq(c.kind, OPK_STREAM);
    ck_assert_int_eq(c.in_bytes[0], 96);
    ck_assert_int_eq(c.out_bytes, 96);
    int y2 = T("y2", DT_FP32, TK_OUTPUT, 2, 6LL, 4LL);
    wl_attr nc[1] = {IATTR("copy", 0)};
    op_work v = W(OP_TRANSPOSE, &x, 1, y2, nc, 1); /* a view: free */
    ck_assert_int_eq(v.kind, OPK_FREE);
    ck_assert_int_eq(v.in_bytes[0], 0);
    ck_assert_int_eq(v.out_bytes, 0);
    ck_assert(op_is_free(&G, &G.op[G.nop - 1]));
    int r = T("r", DT_FP32, TK_OUTPUT, 1, 24LL);
    op_work rs = W(OP_RESHAPE, &x, 1, r, NULL, 0); /* free by default */
    ck_assert_int_eq(rs.kind, OPK_FREE);
    ck_assert_int_eq(rs.out_bytes, 0);
    int r2 = T("r2", DT_FP32, TK_OUTPUT, 3, 2LL, 3LL, 4LL);
    wl_attr cp[1] = {IATTR("copy", 1)};
    op_work rc = W(OP_RESHAPE, &x, 1, r2, cp, 1);
    ck_assert_int_eq(rc.kind, OPK_STREAM);
    ck_assert_int_eq(rc.in_bytes[0], 96);
    ck_assert_int_eq(rc.out_bytes, 96);
    int r3 = T("r3", DT_FP32, TK_OUTPUT, 1, 25LL);
    W_bad(OP_VIEW, &x, 1, r3, NULL, 0, "outputs[0]", "element counts differ (24 vs 25)");
    /* rope: x [2, 16, 64] with cos/sin [16, 64] broadcast over the batch */
    int in[3] = {T("q", DT_BF16, TK_INPUT, 3, 2LL, 16LL, 64LL), T("cos", DT_BF16, TK_INPUT, 2, 16LL, 64LL),
                 T("sin", DT_BF16, TK_INPUT, 2, 16LL, 64LL)};
    int qy = T("qy", DT_BF16, TK_OUTPUT, 3, 2LL, 16LL, 64LL);
    op_work rp = W(OP_ROPE, in, 3, qy, NULL, 0);
    ck_assert_int_eq(rp.elems, 2048);
    ck_assert_int_eq(rp.in_bytes[1], 2048);
    ck_assert_int_eq(rp.in_l2_bytes, 4096 + 2048 + 2048);
    ck_assert_int_eq(rp.out_bytes, 4096);
}
END_TEST

START_TEST(test_flop_overflow)
{
    /* [2^31, 2^20] x [2^20, 2^31] -> [2^31, 2^31] fp8 (2^62 bytes: representable), but
     * 2 * 2^31 * 2^31 * 2^20 FLOPs = 2^83 overflows 64 bits: an error, never a wraparound */
    int in[2] = {T("a", DT_FP8, TK_INPUT, 2, 1LL << 31, 1LL << 20), T("b", DT_FP8, TK_INPUT, 2, 1LL << 20, 1LL << 31)};
    int y = T("y", DT_FP8, TK_OUTPUT, 2, 1LL << 31, 1LL << 31);
    kt_err e;
    err_clear(&e);
    int o = wl_add_op(&G, "mm", OP_MATMUL, in, 2, &y, 1, NULL, 0, &e);
    op_work w;
    char msg[128] = "";
    ck_assert_int_eq(op_work_of(&G, &G.op[o], &w, msg, sizeof msg), -1);
    ck_assert_str_eq(msg, "work overflows 64 bits");
}
END_TEST

/* Kernel classes chosen from shapes: cuBLAS alignment-1 GEMMs (a leading dimension not a
 * multiple of 16 bytes; vectors excluded), ATen column reductions, unaligned copies. */
START_TEST(test_kernel_classes)
{
    wl_attr tb = IATTR("transpose_b", 1), ta = IATTR("transpose_a", 1);
    int x63 = T("x63", DT_BF16, TK_INPUT, 2, 4096LL, 63LL), w63 = T("w63", DT_BF16, TK_WEIGHT, 2, 256LL, 63LL);
    int y = T("y", DT_BF16, TK_INTER, 2, 4096LL, 256LL);
    int in[2] = {x63, w63};
    ck_assert_int_eq(W(OP_LINEAR, in, 2, y, &tb, 1).align1, 1); /* K = 63: lda 126 bytes */
    int x64 = T("x64", DT_BF16, TK_INPUT, 2, 4096LL, 64LL), w64 = T("w64", DT_BF16, TK_WEIGHT, 2, 256LL, 64LL);
    int y2 = T("y2", DT_BF16, TK_INTER, 2, 4096LL, 256LL);
    int in2[2] = {x64, w64};
    ck_assert_int_eq(W(OP_LINEAR, in2, 2, y2, &tb, 1).align1, 0);
    int w1 = T("w1", DT_BF16, TK_WEIGHT, 2, 3LL, 64LL), y3 = T("y3", DT_BF16, TK_INTER, 2, 4096LL, 3LL);
    int in3[2] = {x64, w1};
    ck_assert_int_eq(W(OP_LINEAR, in3, 2, y3, &tb, 1).align1, 1); /* N = 3: ldc 6 bytes */
    int wv = T("wv", DT_BF16, TK_WEIGHT, 2, 1LL, 64LL), yv = T("yv", DT_BF16, TK_INTER, 2, 4096LL, 1LL);
    int in4[2] = {x64, wv};
    ck_assert_int_eq(W(OP_LINEAR, in4, 2, yv, &tb, 1).align1, 0); /* a vector: GEMV path */
    /* weight gradient x^T dy with x [4096, 63] stored untransposed: lda = 63 */
    int dy = T("dy", DT_BF16, TK_INPUT, 2, 4096LL, 256LL), dw = T("dw", DT_BF16, TK_INTER, 2, 63LL, 256LL);
    int in5[2] = {x63, dy};
    ck_assert_int_eq(W(OP_MATMUL, in5, 2, dw, &ta, 1).align1, 1);
    /* a GEMM reading a strided view (a copy: false slice along the last axis, as autodiff's
     * concat gradients are): its leading dimension is the viewed tensor's row. 256 columns of a
     * 283-wide tensor: 566-byte rows, alignment-1; of a 288-wide one from column 0: 576 bytes,
     * aligned; from column 4: an 8-byte offset, alignment-1 */
    const int64_t widths[3] = {283, 288, 288}, starts[3] = {0, 0, 4};
    const int want[3] = {1, 0, 1};
    for (int k = 0; k < 3; k++) {
        char nm[4][16];
        snprintf(nm[0], sizeof nm[0], "src%d", k);
        snprintf(nm[1], sizeof nm[1], "view%d", k);
        snprintf(nm[2], sizeof nm[2], "yv%d", k);
        snprintf(nm[3], sizeof nm[3], "wk%d", k);
        int src = T(nm[0], DT_BF16, TK_INPUT, 2, 4096LL, widths[k]);
        int v = T(nm[1], DT_BF16, TK_INTER, 2, 4096LL, 256LL);
        wl_attr sa[4] = {IATTR("axis", 1), IATTR("start", starts[k]), IATTR("end", starts[k] + 256),
                         IATTR("copy", 0)};
        ck_assert_int_eq(W(OP_SLICE, &src, 1, v, sa, 4).kind, OPK_FREE);
        int yk = T(nm[2], DT_BF16, TK_INTER, 2, 4096LL, 256LL);
        int ink[2] = {v, T(nm[3], DT_BF16, TK_WEIGHT, 2, 256LL, 256LL)};
        ck_assert_int_eq(W(OP_LINEAR, ink, 2, yk, &tb, 1).align1, want[k]);
    }
    /* embedding backward on a strided dy (a slice along axis 1 of [64, 27, 8], viewed as
     * [1664, 8], as DLRM's interaction gradient): ATen's dense backward copies it contiguous
     * (contig_bytes = its 1664 x 8 x 2 bytes); a slice of leading rows (axis 0) is contiguous */
    for (int k = 0; k < 2; k++) {
        char nm[5][16];
        const char *pre[5] = {"edy", "edv", "ed2", "eix", "egw"};
        for (int q = 0; q < 5; q++)
            snprintf(nm[q], sizeof nm[q], "%s%d", pre[q], k);
        int full = k == 0 ? T(nm[0], DT_BF16, TK_INPUT, 3, 64LL, 27LL, 8LL)
                          : T(nm[0], DT_BF16, TK_INPUT, 3, 65LL, 26LL, 8LL);
        int v = T(nm[1], DT_BF16, TK_INTER, 3, 64LL, 26LL, 8LL);
        wl_attr sa[4] = {IATTR("axis", k == 0 ? 1 : 0), IATTR("start", 0),
                         IATTR("end", k == 0 ? 26 : 64), IATTR("copy", 0)};
        ck_assert_int_eq(W(OP_SLICE, &full, 1, v, sa, 4).kind, OPK_FREE);
        int v2 = T(nm[2], DT_BF16, TK_INTER, 2, 64LL * 26, 8LL);
        ck_assert_int_eq(W(OP_VIEW, &v, 1, v2, NULL, 0).kind, OPK_FREE);
        int ein[2] = {v2, T(nm[3], DT_INT64, TK_INPUT, 1, 64LL * 26)};
        int gw = T(nm[4], DT_BF16, TK_INTER, 2, 100LL, 8LL);
        ck_assert_int_eq(W(OP_EMBEDDING_BWD, ein, 2, gw, NULL, 0).contig_bytes,
                         k == 0 ? 64LL * 26 * 8 * 2 : 0);
    }
    /* column reduction: sum over rows of [4096, 256] */
    int64_t ax0[1] = {0}, ax1[1] = {1};
    wl_attr a0 = {.key = "axes", .type = WA_LIST, .list = ax0, .nlist = 1}, a1 = {.key = "axes", .type = WA_LIST, .list = ax1, .nlist = 1};
    int cs = T("cs", DT_BF16, TK_INTER, 1, 256LL), rs = T("rs", DT_BF16, TK_INTER, 1, 4096LL);
    ck_assert_int_eq(W(OP_REDUCE, &dy, 1, cs, &a0, 1).col_reduce, 1);
    ck_assert_int_eq(W(OP_REDUCE, &dy, 1, rs, &a1, 1).col_reduce, 0);
    /* concat of 63 + 256 columns: element by element; 64 + 256: vectorized */
    wl_attr c1 = IATTR("axis", 1);
    int cat1 = T("cat1", DT_BF16, TK_INTER, 2, 4096LL, 319LL), cat2 = T("cat2", DT_BF16, TK_INTER, 2, 4096LL, 320LL);
    int ci1[2] = {x63, dy}, ci2[2] = {x64, dy};
    ck_assert_int_eq(W(OP_CONCAT, ci1, 2, cat1, &c1, 1).unaligned, 1);
    ck_assert_int_eq(W(OP_CONCAT, ci2, 2, cat2, &c1, 1).unaligned, 0);
}
END_TEST

static wl_attr LATTR(const char *k, int64_t *v, int n)
{
    wl_attr a = {.key = k, .type = WA_LIST, .list = v, .nlist = n};
    return a;
}

static wl_attr SATTR(const char *k, const char *v)
{
    wl_attr a = {.key = k, .type = WA_STR, .sval = v};
    return a;
}

/* Add op with several outputs, check it and compute its work. */
static op_work WN(int type, const int *in, int nin, const int *out, int nout, const wl_attr *at, int nat)
{
    kt_err e;
    err_clear(&e);
    char name[16];
    snprintf(name, sizeof name, "op%d", G.nop);
    int o = wl_add_op(&G, name, type, in, nin, out, nout, at, nat, &e);
    ck_assert_int_ge(o, 0);
    char msg[256] = "", sub[64] = "";
    ck_assert_msg(op_check(&G, &G.op[o], msg, sizeof msg, sub, sizeof sub) == 0, "op_check %s: %s: %s",
                  op_name(type), sub, msg);
    op_work w;
    ck_assert_msg(op_work_of(&G, &G.op[o], &w, msg, sizeof msg) == 0, "op_work_of: %s", msg);
    return w;
}

static void WN_bad(int type, const int *in, int nin, const int *out, int nout, const wl_attr *at,
                   int nat, const char *want_sub, const char *want)
{
    kt_err e;
    err_clear(&e);
    int o = wl_add_op(&G, "bad", type, in, nin, out, nout, at, nat, &e);
    char msg[256] = "", sub[64] = "";
    ck_assert_int_eq(op_check(&G, &G.op[o], msg, sizeof msg, sub, sizeof sub), -1);
    ck_assert_str_eq(sub, want_sub);
    ck_assert_msg(strstr(msg, want), "message \"%s\" lacks \"%s\"", msg, want);
}

/* conv2d as an implicit GEMM: x [2, 64, 56, 56] * w [128, 64, 3, 3], padding 1 ->
 * y [2, 128, 56, 56]: M = N*Ho*Wo = 2*56*56 = 6272, N = Cout = 128, K = C*KH*KW = 576,
 * FLOPs = 2 M N K = 924,844,032; NCHW bf16: cuDNN transforms x (802,816 B), w (147,456 B) and
 * y (1,605,632 B) = 2,555,904 B. */
START_TEST(test_conv2d)
{
    int in[3] = {T("x", DT_BF16, TK_INPUT, 4, 2LL, 64LL, 56LL, 56LL),
                 T("w", DT_BF16, TK_WEIGHT, 4, 128LL, 64LL, 3LL, 3LL), T("b", DT_BF16, TK_WEIGHT, 1, 128LL)};
    int y = T("y", DT_BF16, TK_OUTPUT, 4, 2LL, 128LL, 56LL, 56LL);
    wl_attr p1 = IATTR("padding", 1);
    op_work c = W(OP_CONV2D, in, 2, y, &p1, 1);
    ck_assert_int_eq(c.kind, OPK_GEMM);
    ck_assert_int_eq(c.m, 6272);
    ck_assert_int_eq(c.n, 128);
    ck_assert_int_eq(c.k, 576);
    ck_assert_int_eq(c.batch, 1);
    ck_assert_int_eq(c.flops_tensor, 924844032LL);
    ck_assert_int_eq(c.flops_simt, 0);
    ck_assert_int_eq(c.in_bytes[0], 802816);
    ck_assert_int_eq(c.in_bytes[1], 147456);
    ck_assert_int_eq(c.out_bytes, 1605632);
    ck_assert_int_eq(c.xform_bytes, 802816 + 147456 + 1605632);
    ck_assert_int_eq(c.cdt, DT_BF16);
    ck_assert_int_eq(c.no_pipe, 1); /* a 3x3 window spans tile rows */
    /* with the bias: one add per output element */
    int yb = T("yb", DT_BF16, TK_OUTPUT, 4, 2LL, 128LL, 56LL, 56LL);
    ck_assert_int_eq(W(OP_CONV2D, in, 3, yb, &p1, 1).flops_simt, 2 * 128 * 56 * 56);
    /* stride 2: Ho = floor((56 + 2 - 3) / 2) + 1 = 28, M = 2*28*28 = 1568 */
    int64_t s2[2] = {2, 2};
    wl_attr at2[2] = {IATTR("padding", 1), LATTR("stride", s2, 2)};
    int y2 = T("y2", DT_BF16, TK_OUTPUT, 4, 2LL, 128LL, 28LL, 28LL);
    op_work c2 = W(OP_CONV2D, in, 2, y2, at2, 2);
    ck_assert_int_eq(c2.m, 1568);
    ck_assert_int_eq(c2.flops_tensor, 2LL * 1568 * 128 * 576);
    /* fp32 runs on TF32 tensor cores (cuDNN allow_tf32) */
    int inf[2] = {T("xf", DT_FP32, TK_INPUT, 4, 1LL, 8LL, 8LL, 8LL), T("wf", DT_FP32, TK_WEIGHT, 4, 8LL, 8LL, 1LL, 1LL)};
    int yf = T("yf", DT_FP32, TK_OUTPUT, 4, 1LL, 8LL, 8LL, 8LL);
    op_work cf = W(OP_CONV2D, inf, 2, yf, NULL, 0);
    ck_assert_int_eq(cf.cdt, DT_TF32);
    ck_assert_int_eq(cf.xform_bytes, 0); /* only 16-bit NCHW is transformed */
    /* NHWC 1x1 stride 1: a GEMM over pixel rows, no transform, pipelinable */
    int inh[2] = {T("xh", DT_BF16, TK_INPUT, 4, 2LL, 56LL, 56LL, 64LL), T("wh", DT_BF16, TK_WEIGHT, 4, 128LL, 1LL, 1LL, 64LL)};
    int yh = T("yh", DT_BF16, TK_OUTPUT, 4, 2LL, 56LL, 56LL, 128LL);
    wl_attr nhwc = SATTR("layout", "nhwc");
    op_work ch = W(OP_CONV2D, inh, 2, yh, &nhwc, 1);
    ck_assert_int_eq(ch.m, 6272);
    ck_assert_int_eq(ch.k, 64);
    ck_assert_int_eq(ch.xform_bytes, 0);
    ck_assert_int_eq(ch.no_pipe, 0);
    /* grouped: 4 groups of 16 -> 8 channels, 3x3, padding 1 on [1, 64, 8, 8]: per group
     * M = 64, N = 8, K = 144; FLOPs 2 * 64 * 8 * 144 * 4 = 589,824 */
    int ing[2] = {T("xg", DT_BF16, TK_INPUT, 4, 1LL, 64LL, 8LL, 8LL), T("wg", DT_BF16, TK_WEIGHT, 4, 32LL, 16LL, 3LL, 3LL)};
    int yg = T("yg", DT_BF16, TK_OUTPUT, 4, 1LL, 32LL, 8LL, 8LL);
    wl_attr atg[2] = {IATTR("padding", 1), IATTR("groups", 4)};
    op_work cg = W(OP_CONV2D, ing, 2, yg, atg, 2);
    ck_assert_int_eq(cg.batch, 4);
    ck_assert_int_eq(cg.m, 64);
    ck_assert_int_eq(cg.n, 8);
    ck_assert_int_eq(cg.k, 144);
    ck_assert_int_eq(cg.flops_tensor, 589824);
    /* depthwise 3x3 on [1, 32, 16, 16] bf16: a direct SIMT kernel, 2 x 9 FLOPs per output
     * (147,456), L2 reads: KH x SW = 3 input elements per output = 8192 x 3 x 2 B = 49,152 B,
     * plus the 576 B of weights */
    int ind[2] = {T("xd", DT_BF16, TK_INPUT, 4, 1LL, 32LL, 16LL, 16LL), T("wd", DT_BF16, TK_WEIGHT, 4, 32LL, 1LL, 3LL, 3LL)};
    int yd = T("yd", DT_BF16, TK_OUTPUT, 4, 1LL, 32LL, 16LL, 16LL);
    wl_attr atd[2] = {IATTR("padding", 1), IATTR("groups", 32)};
    op_work cd = W(OP_CONV2D, ind, 2, yd, atd, 2);
    ck_assert_int_eq(cd.kind, OPK_STREAM);
    ck_assert_int_eq(cd.flops_tensor, 0);
    ck_assert_int_eq(cd.flops_simt, 147456);
    ck_assert_int_eq(cd.elems, 8192);
    ck_assert_int_eq(cd.in_l2_bytes, 49152 + 576);
    /* shape errors */
    int wbad = T("wbad", DT_BF16, TK_WEIGHT, 4, 128LL, 32LL, 3LL, 3LL);
    int inb[2] = {in[0], wbad};
    int y3 = T("y3", DT_BF16, TK_OUTPUT, 4, 2LL, 128LL, 56LL, 56LL);
    W_bad(OP_CONV2D, inb, 2, y3, &p1, 1, "inputs[1]",
          "weight has 32 input channels per group, the input 64 / 1 groups = 64");
    int y4 = T("y4", DT_BF16, TK_OUTPUT, 4, 2LL, 128LL, 54LL, 54LL);
    W_bad(OP_CONV2D, in, 2, y4, &p1, 1, "outputs[0]", "output must be [2, 128, 56, 56]");
    wl_attr g3 = IATTR("groups", 3);
    W_bad(OP_CONV2D, in, 2, y4, &g3, 1, "attrs.groups", "groups (3) must divide");
    wl_attr bad_layout = SATTR("layout", "nhcw");
    W_bad(OP_CONV2D, in, 2, y4, &bad_layout, 1, "attrs.layout", "must be \"nchw\" or \"nhwc\"");
    int64_t three[3] = {1, 1, 1};
    wl_attr bad_stride = LATTR("stride", three, 3);
    W_bad(OP_CONV2D, in, 2, y4, &bad_stride, 1, "attrs.stride", "must be an integer or a list of 2");
}
END_TEST

/* dgrad and wgrad of the stride-2 conv above: x [2, 64, 56, 56], y [2, 128, 28, 28], 3x3.
 * The forward's multiply-adds: 2*28*28 * 128 * 64 * 9 = 115,605,504. dgrad: M = N*H*W = 6272,
 * N = C = 64, K = 115,605,504 / (6272 * 64) = 288 (= 128 * 9 / 4: no work on inserted zeros);
 * wgrad: M = Cout = 128, N = C*KH*KW = 576, K = N*Ho*Wo = 1568. */
START_TEST(test_conv2d_backward)
{
    int dy = T("dy", DT_BF16, TK_INPUT, 4, 2LL, 128LL, 28LL, 28LL);
    int w = T("w", DT_BF16, TK_WEIGHT, 4, 128LL, 64LL, 3LL, 3LL);
    int x = T("x", DT_BF16, TK_INPUT, 4, 2LL, 64LL, 56LL, 56LL);
    int64_t s2[2] = {2, 2};
    wl_attr at[2] = {IATTR("padding", 1), LATTR("stride", s2, 2)};
    int dx = T("dx", DT_BF16, TK_OUTPUT, 4, 2LL, 64LL, 56LL, 56LL);
    int din[2] = {dy, w};
    op_work d = W(OP_CONV2D_DGRAD, din, 2, dx, at, 2);
    ck_assert_int_eq(d.kind, OPK_GEMM);
    ck_assert_int_eq(d.m, 6272);
    ck_assert_int_eq(d.n, 64);
    ck_assert_int_eq(d.k, 288);
    ck_assert_int_eq(d.flops_tensor, 2LL * 115605504);
    ck_assert_int_eq(d.xform_bytes, 2 * 128 * 28 * 28 * 2 + 128 * 64 * 9 * 2 + 2 * 64 * 56 * 56 * 2);
    int dw = T("dw", DT_BF16, TK_OUTPUT, 4, 128LL, 64LL, 3LL, 3LL);
    int win[2] = {dy, x};
    op_work g = W(OP_CONV2D_WGRAD, win, 2, dw, at, 2);
    ck_assert_int_eq(g.m, 128);
    ck_assert_int_eq(g.n, 576);
    ck_assert_int_eq(g.k, 1568);
    ck_assert_int_eq(g.flops_tensor, 2LL * 115605504);
    ck_assert_int_eq(g.no_pipe, 1);
    /* a gradient of the wrong shape */
    int dy2 = T("dy2", DT_BF16, TK_INPUT, 4, 2LL, 128LL, 56LL, 56LL);
    int din2[2] = {dy2, w};
    int dx2 = T("dx2", DT_BF16, TK_OUTPUT, 4, 2LL, 64LL, 56LL, 56LL);
    W_bad(OP_CONV2D_DGRAD, din2, 2, dx2, at, 2, "inputs[0]", "gradient of the output must be [2, 128, 28, 28]");
}
END_TEST

/* batchnorm on x [2, 8, 4, 4] fp32 (256 elements, 8 channels of 32): inference 4 FLOPs per
 * element; training a row op of 8 rows with 6 (Welford) + 4 FLOPs per element and an rsqrt per
 * channel; backward 3 + 7 (training) or 3 + 2 (running statistics). */
START_TEST(test_batchnorm)
{
    int in[3] = {T("x", DT_FP32, TK_INPUT, 4, 2LL, 8LL, 4LL, 4LL), T("g", DT_FP32, TK_WEIGHT, 1, 8LL),
                 T("b", DT_FP32, TK_WEIGHT, 1, 8LL)};
    int y = T("y", DT_FP32, TK_OUTPUT, 4, 2LL, 8LL, 4LL, 4LL);
    op_work i = W(OP_BATCHNORM, in, 3, y, NULL, 0);
    ck_assert_int_eq(i.kind, OPK_STREAM);
    ck_assert_int_eq(i.flops_simt, 4 * 256);
    ck_assert_int_eq(i.in_bytes[1], 32);
    ck_assert_int_eq(i.in_l2_bytes, 1024 + 32 + 32);
    ck_assert_int_eq(i.no_pipe, 0);
    wl_attr tr = IATTR("training", 1);
    int y2 = T("y2", DT_FP32, TK_OUTPUT, 4, 2LL, 8LL, 4LL, 4LL);
    op_work t = W(OP_BATCHNORM, in, 3, y2, &tr, 1);
    ck_assert_int_eq(t.kind, OPK_ROW);
    ck_assert_int_eq(t.rows, 8);
    ck_assert_int_eq(t.row_len, 32);
    ck_assert_int_eq(t.flops_simt, 10 * 256);
    ck_assert_int_eq(t.sfu_ops, 8);
    ck_assert_int_eq(t.bn_train, 1);
    ck_assert_int_eq(t.no_pipe, 1);
    /* backward (dy, x, gamma) -> dx, dgamma, dbeta */
    int dy = T("dy", DT_FP32, TK_INPUT, 4, 2LL, 8LL, 4LL, 4LL);
    int bin[3] = {dy, in[0], in[1]};
    int bout[3] = {T("dx", DT_FP32, TK_OUTPUT, 4, 2LL, 8LL, 4LL, 4LL), T("dg", DT_FP32, TK_OUTPUT, 1, 8LL),
                   T("db", DT_FP32, TK_OUTPUT, 1, 8LL)};
    op_work bt = WN(OP_BATCHNORM_BWD, bin, 3, bout, 3, &tr, 1);
    ck_assert_int_eq(bt.rows, 8);
    ck_assert_int_eq(bt.flops_simt, 10 * 256);
    ck_assert_int_eq(bt.out_bytes, 1024 + 32 + 32);
    int bout2[3] = {T("dx2", DT_FP32, TK_OUTPUT, 4, 2LL, 8LL, 4LL, 4LL), T("dg2", DT_FP32, TK_OUTPUT, 1, 8LL),
                    T("db2", DT_FP32, TK_OUTPUT, 1, 8LL)};
    ck_assert_int_eq(WN(OP_BATCHNORM_BWD, bin, 3, bout2, 3, NULL, 0).flops_simt, 5 * 256);
    /* channels along axis 3 (NHWC): gamma must have x.dim[3] = 4 entries */
    wl_attr ax3 = IATTR("axis", 3);
    int y3 = T("y3", DT_FP32, TK_OUTPUT, 4, 2LL, 8LL, 4LL, 4LL);
    W_bad(OP_BATCHNORM, in, 3, y3, &ax3, 1, "inputs[1]", "batchnorm parameters must be [4] (the channels along axis 3)");
    wl_attr tr2 = IATTR("training", 2);
    W_bad(OP_BATCHNORM, in, 3, y3, &tr2, 1, "attrs.training", "must be 0 or 1");
}
END_TEST

/* max pooling 3x3, stride 2, padding 1 on [1, 4, 8, 8] bf16: Ho = floor((8 + 2 - 3) / 2) + 1 = 4,
 * 64 outputs of 9 compares; L2 reads KH x SW = 6 inputs per output (768 B, more than the 512 B
 * input); writes 128 B of values and 512 B of int64 indices, declared or not. */
START_TEST(test_pool2d)
{
    int x = T("x", DT_BF16, TK_INPUT, 4, 1LL, 4LL, 8LL, 8LL);
    int y = T("y", DT_BF16, TK_OUTPUT, 4, 1LL, 4LL, 4LL, 4LL);
    int64_t k3[2] = {3, 3};
    wl_attr at[4] = {SATTR("op", "max"), LATTR("kernel", k3, 2), IATTR("stride", 2), IATTR("padding", 1)};
    op_work m = W(OP_POOL2D, &x, 1, y, at, 4);
    ck_assert_int_eq(m.kind, OPK_STREAM);
    ck_assert_int_eq(m.elems, 64);
    ck_assert_int_eq(m.flops_simt, 576);
    ck_assert_int_eq(m.in_l2_bytes, 768);
    ck_assert_int_eq(m.out_bytes, 128 + 512);
    ck_assert_int_eq(m.no_pipe, 1);
    int out2[2] = {T("y2", DT_BF16, TK_OUTPUT, 4, 1LL, 4LL, 4LL, 4LL), T("i2", DT_INT64, TK_OUTPUT, 4, 1LL, 4LL, 4LL, 4LL)};
    ck_assert_int_eq(WN(OP_POOL2D, &x, 1, out2, 2, at, 4).out_bytes, 128 + 512);
    /* average 2x2 (stride = kernel): 4 adds and a divide per output; no indices */
    wl_attr av[2] = {SATTR("op", "avg"), IATTR("kernel", 2)};
    int ya = T("ya", DT_BF16, TK_OUTPUT, 4, 1LL, 4LL, 4LL, 4LL);
    op_work a = W(OP_POOL2D, &x, 1, ya, av, 2);
    ck_assert_int_eq(a.flops_simt, 64 * 5);
    ck_assert_int_eq(a.out_bytes, 128);
    /* ceil_mode shapes: 7 -> 3 (floor) or 4 (ceil) for kernel 2, stride 2 */
    int x7 = T("x7", DT_BF16, TK_INPUT, 4, 1LL, 4LL, 7LL, 7LL);
    int yc = T("yc", DT_BF16, TK_OUTPUT, 4, 1LL, 4LL, 4LL, 4LL), yf = T("yf", DT_BF16, TK_OUTPUT, 4, 1LL, 4LL, 3LL, 3LL);
    W(OP_POOL2D, &x7, 1, yc, av, 2);
    W(OP_POOL2D, &x7, 1, yf, av, 2);
    /* backward of the max pooling: per input element ceil(3/2)^2 = 4 candidate outputs (a
     * compare and an add each); dy (128 B) and indices (512 B) re-read ceil(3/2) = 2 times */
    int bin[2] = {T("dy", DT_BF16, TK_INPUT, 4, 1LL, 4LL, 4LL, 4LL), T("ix", DT_INT64, TK_INPUT, 4, 1LL, 4LL, 4LL, 4LL)};
    int dx = T("dx", DT_BF16, TK_OUTPUT, 4, 1LL, 4LL, 8LL, 8LL);
    op_work b = W(OP_POOL2D_BWD, bin, 2, dx, at, 4);
    ck_assert_int_eq(b.elems, 256);
    ck_assert_int_eq(b.flops_simt, 256 * 8);
    ck_assert_int_eq(b.in_l2_bytes, (128 + 512) * 2);
    /* errors */
    /* 5 is the ceil_mode length ((8 + 2 - 3) / 2 rounded up, + 1), 6 neither */
    int y5 = T("y5", DT_BF16, TK_OUTPUT, 4, 1LL, 4LL, 5LL, 5LL);
    W(OP_POOL2D, &x, 1, y5, at, 4);
    int yw = T("yw", DT_BF16, TK_OUTPUT, 4, 1LL, 4LL, 6LL, 6LL);
    W_bad(OP_POOL2D, &x, 1, yw, at, 4, "outputs[0]", "output must be [1, 4, 4, 4]");
    wl_attr bp[3] = {SATTR("op", "max"), IATTR("kernel", 2), IATTR("padding", 2)};
    W_bad(OP_POOL2D, &x, 1, yw, bp, 3, "attrs.padding", "padding 2 is more than half the kernel 2");
    int out3[2] = {T("y3", DT_BF16, TK_OUTPUT, 4, 1LL, 4LL, 4LL, 4LL), T("i3", DT_INT64, TK_OUTPUT, 4, 1LL, 4LL, 4LL, 4LL)};
    WN_bad(OP_POOL2D, &x, 1, out3, 2, av, 2, "outputs[1]", "only max pooling has indices");
    W_bad(OP_POOL2D, &x, 1, yw, &at[1], 3, "attrs.op", "must be \"max\" or \"avg\"");
}
END_TEST

/* topk and sort, ATen's algorithms (op.c sort_work). */
START_TEST(test_topk_sort)
{
    /* topk k=2 over [64, 4] bf16 rows: single-block (64 rows of 4); 16-bit keys in 2-bit digits:
     * 8 counting passes + 2 gather passes; FLOPs 256 x (8 x 26 + 2 x 10) = 58,368, plus the sort
     * of the 128 results: 4 digit passes of 20 = 10,240; the results (256 + 1024 B) are a
     * temporary of that sort; 2 kernels; rows along the last axis: pipelinable */
    int x = T("x", DT_BF16, TK_INPUT, 2, 64LL, 4LL);
    int out[2] = {T("v", DT_BF16, TK_OUTPUT, 2, 64LL, 2LL), T("i", DT_INT64, TK_OUTPUT, 2, 64LL, 2LL)};
    wl_attr at[2] = {IATTR("k", 2), IATTR("axis", 1)};
    op_work t = WN(OP_TOPK, &x, 1, out, 2, at, 2);
    ck_assert_int_eq(t.kind, OPK_SORT);
    ck_assert_int_eq(t.rows, 64);
    ck_assert_int_eq(t.row_len, 4);
    ck_assert_int_eq(t.row_ctas, 1);
    ck_assert_int_eq(t.passes, 10);
    ck_assert_int_eq(t.kernels, 2);
    ck_assert_int_eq(t.flops_simt, 58368 + 10240);
    ck_assert_int_eq(t.out_bytes, 256 + 1024);
    ck_assert_int_eq(t.temp_bytes, 1280);
    ck_assert_int_eq(t.no_pipe, 0);
    /* 4 rows of 100,000 fp32 (<= 20 rows, >= 20000 long): ATen's multi-block path, 32-bit keys in
     * 8-bit digits: 4 passes + the gather = 5 reads; 3 kernels a pass + 4 + the sort = 17 */
    int xl = T("xl", DT_FP32, TK_INPUT, 2, 4LL, 100000LL);
    int outl[2] = {T("vl", DT_FP32, TK_OUTPUT, 2, 4LL, 10LL), T("il", DT_INT64, TK_OUTPUT, 2, 4LL, 10LL)};
    wl_attr atl[1] = {IATTR("k", 10)};
    op_work tl = WN(OP_TOPK, &xl, 1, outl, 2, atl, 1);
    ck_assert_int_eq(tl.row_ctas, 0);
    ck_assert_int_eq(tl.passes, 5);
    ck_assert_int_eq(tl.kernels, 17);
    ck_assert_int_eq(tl.no_pipe, 1);
    /* sort of 128 int64 (1-D): the small path (one CTA, 64-bit keys in 4-bit digits: 16 passes
     * of 20 per element = 40,960), 3 kernels, the values and indices (2048 B) a temporary; a
     * 1-D sort needs the whole tensor: not in a pipeline */
    int xs = T("xs", DT_INT64, TK_INPUT, 1, 128LL);
    int outs[2] = {T("vs", DT_INT64, TK_OUTPUT, 1, 128LL), T("is", DT_INT64, TK_OUTPUT, 1, 128LL)};
    wl_attr a0 = IATTR("axis", 0);
    op_work s = WN(OP_SORT, &xs, 1, outs, 2, &a0, 1);
    ck_assert_int_eq(s.kernels, 3);
    ck_assert_int_eq(s.row_ctas, 1);
    ck_assert_int_eq(s.flops_simt, 40960);
    ck_assert_int_eq(s.temp_bytes, 2048);
    ck_assert_int_eq(s.no_pipe, 1);
    /* rows of 8192 fp32 (> 4096): the segmented radix sort, 4 digit passes + the histogram, 6
     * kernels; temporaries: 3 intermediate (key, index) buffers of 16384 x 12 B plus the filled
     * indices (131,072 B) = 720,896 B; 16384 x (4 x 20 + 8) = 1,441,792 FLOPs */
    int xb = T("xb", DT_FP32, TK_INPUT, 2, 2LL, 8192LL);
    int outb[2] = {T("vb", DT_FP32, TK_OUTPUT, 2, 2LL, 8192LL), T("ib", DT_INT64, TK_OUTPUT, 2, 2LL, 8192LL)};
    op_work sb = WN(OP_SORT, &xb, 1, outb, 2, NULL, 0);
    ck_assert_int_eq(sb.kernels, 6);
    ck_assert_int_eq(sb.passes, 2);
    ck_assert_int_eq(sb.temp_bytes, 720896);
    ck_assert_int_eq(sb.flops_simt, 1441792);
    /* errors */
    wl_attr k5 = IATTR("k", 5);
    int outk[2] = {T("vk", DT_BF16, TK_OUTPUT, 2, 64LL, 5LL), T("ik", DT_INT64, TK_OUTPUT, 2, 64LL, 5LL)};
    WN_bad(OP_TOPK, &x, 1, outk, 2, &k5, 1, "attrs.k", "k = 5 must be in [1, 4]");
    int outf[2] = {T("vf", DT_BF16, TK_OUTPUT, 2, 64LL, 2LL), T("if", DT_FP32, TK_OUTPUT, 2, 64LL, 2LL)};
    WN_bad(OP_TOPK, &x, 1, outf, 2, at, 2, "outputs[1]", "indices must be an integer tensor");
    WN_bad(OP_SORT, &xs, 1, outs, 1, &a0, 1, "outputs", "needs 2 outputs, got 1");
}
END_TEST

/* Brute-force reference for op_moe_kept_slots: T = 12 tokens, k = 2 of E = 4 experts, written
 * out token by token so that expert 0 gets 9 slots (imbalance 1.5 = 9 / the mean 6) and experts
 * 1-3 five each; each expert keeps its first C slots in arrival order. */
static int moe_brute_kept(int cap)
{
    int pick[12][2], load[4] = {0}, kept = 0;
    for (int t = 0; t < 9; t++) { /* expert 0 and one of 1..3 */
        pick[t][0] = 0;
        pick[t][1] = 1 + t % 3;
    }
    int pairs[3][2] = {{1, 2}, {2, 3}, {1, 3}};
    for (int t = 9; t < 12; t++) {
        pick[t][0] = pairs[t - 9][0];
        pick[t][1] = pairs[t - 9][1];
    }
    for (int t = 0; t < 12; t++)
        for (int j = 0; j < 2; j++)
            if (load[pick[t][j]]++ < cap)
                kept++;
    return kept;
}

/* Mixture-of-experts routing (op.c moe_work). */
START_TEST(test_moe_routing)
{
    /* the load model against the brute-force assignment, at every capacity */
    for (int c = 1; c <= 10; c++)
        ck_assert_double_eq_tol(op_moe_kept_slots(12, 2, 4, c, 1.5), moe_brute_kept(c), 1e-9);
    /* T = 1024, k = 2, E = 8 (mean load 256), capacity 320 (factor 1.25): balanced keeps all
     * 2048 slots; imbalance 1.5 gives the busiest expert 384 (64 dropped) and the other seven
     * (2048 - 384) / 7 = 237.7 each (none dropped): 1984; at E/k = 4 the busiest gets all 1024
     * tokens (keeps 320) and the others 146.3 each: 320 + 1024 = 1344 */
    ck_assert_double_eq_tol(op_moe_kept_slots(1024, 2, 8, 320, 1.0), 2048.0, 1e-9);
    ck_assert_double_eq_tol(op_moe_kept_slots(1024, 2, 8, 320, 1.5), 1984.0, 1e-9);
    ck_assert_double_eq_tol(op_moe_kept_slots(1024, 2, 8, 320, 4.0), 1344.0, 1e-9);
    int x = T("x", DT_BF16, TK_INPUT, 2, 1024LL, 64LL);
    int ids = T("ids", DT_INT64, TK_INPUT, 2, 1024LL, 2LL);
    int gate = T("gate", DT_BF16, TK_INPUT, 2, 1024LL, 2LL);
    int buf = T("buf", DT_BF16, TK_OUTPUT, 3, 8LL, 320LL, 64LL);
    wl_attr imb = IATTR("imbalance_pct", 150);
    /* dispatch at 150%: 2560 buffer rows of 128 B written (327,680 B, zeros included); the 1984
     * kept slots read through L2 (253,952 B) and the ids twice (2 x 16,384 B); 1/32 of the slots
     * dropped, so 1024 x (1 - (1/32)^2) = 1023 distinct tokens read (130,944 B); 8 instructions
     * per slot for the positions; 2 kernels; not pipelinable */
    int din[2] = {x, ids};
    op_work d = W(OP_MOE_DISPATCH, din, 2, buf, &imb, 1);
    ck_assert_int_eq(d.kind, OPK_GATHER);
    ck_assert_int_eq(d.rows, 2560);
    ck_assert_int_eq(d.row_len, 64);
    ck_assert_int_eq(d.table_rows, 1024);
    ck_assert_int_eq(d.out_bytes, 327680);
    ck_assert_int_eq(d.in_l2_bytes, 253952 + 2 * 16384);
    ck_assert_int_eq(d.in_bytes[0], 130944);
    ck_assert_int_eq(d.flops_simt, 2048 * 8);
    ck_assert_int_eq(d.kernels, 2);
    ck_assert_int_eq(d.no_pipe, 1);
    /* combine with the gate: 1024 output rows (131,072 B), the 1984 kept rows read once
     * (253,952 B) with the ids (16,384 B) and the gate (4,096 B); a multiply and an add per
     * kept element: 1984 x 64 x 2 */
    int eo = T("eo", DT_BF16, TK_INPUT, 3, 8LL, 320LL, 64LL);
    int y = T("y", DT_BF16, TK_OUTPUT, 2, 1024LL, 64LL);
    int cin[3] = {eo, ids, gate};
    op_work c = W(OP_MOE_COMBINE, cin, 3, y, &imb, 1);
    ck_assert_int_eq(c.kind, OPK_GATHER);
    ck_assert_int_eq(c.rows, 1024);
    ck_assert_int_eq(c.table_rows, 2560);
    ck_assert_int_eq(c.out_bytes, 131072);
    ck_assert_int_eq(c.in_bytes[0], 253952);
    ck_assert_int_eq(c.in_l2_bytes, 253952 + 16384 + 4096);
    ck_assert_int_eq(c.flops_simt, 1984 * 64 * 2);
    ck_assert_int_eq(c.no_pipe, 1);
    /* gate gradient: 2048 dot products of 64 (a row op), dy once (131,072 B) and the kept rows */
    int dy = T("dy", DT_BF16, TK_INPUT, 2, 1024LL, 64LL), dg = T("dg", DT_BF16, TK_OUTPUT, 2, 1024LL, 2LL);
    int gin[3] = {dy, eo, ids};
    op_work gb = W(OP_MOE_GATE_BWD, gin, 3, dg, &imb, 1);
    ck_assert_int_eq(gb.kind, OPK_ROW);
    ck_assert_int_eq(gb.rows, 2048);
    ck_assert_int_eq(gb.row_len, 64);
    ck_assert_int_eq(gb.in_l2_bytes, 131072 + 253952 + 16384);
    ck_assert_int_eq(gb.flops_simt, 2 * 1984 * 64);
    /* errors */
    wl_attr big = IATTR("imbalance_pct", 401), low = IATTR("imbalance_pct", 99);
    W_bad(OP_MOE_DISPATCH, din, 2, buf, &big, 1, "attrs.imbalance_pct", "must be in [100, 400]");
    W_bad(OP_MOE_DISPATCH, din, 2, buf, &low, 1, "attrs.imbalance_pct", "must be in [100, 400]");
    int fids = T("fids", DT_FP32, TK_INPUT, 2, 1024LL, 2LL);
    int fin[2] = {x, fids};
    W_bad(OP_MOE_DISPATCH, fin, 2, buf, NULL, 0, "inputs[1]", "expert ids must be a 2-D integer");
    int ids9 = T("ids9", DT_INT64, TK_INPUT, 2, 1024LL, 9LL);
    int nin9[2] = {x, ids9};
    W_bad(OP_MOE_DISPATCH, nin9, 2, buf, NULL, 0, "inputs[1]", "k = 9 distinct experts but there are only 8");
    int bufd = T("bufd", DT_BF16, TK_OUTPUT, 3, 8LL, 320LL, 32LL);
    W_bad(OP_MOE_DISPATCH, din, 2, bufd, NULL, 0, "outputs[0]", "expert buffer must be [experts, capacity, 64]");
    int gbad = T("gbad", DT_BF16, TK_INPUT, 2, 1024LL, 3LL);
    int cbad[3] = {eo, ids, gbad};
    W_bad(OP_MOE_COMBINE, cbad, 3, y, NULL, 0, "inputs[2]", "gate weights must be");
    int y2 = T("y2", DT_BF16, TK_OUTPUT, 2, 512LL, 64LL);
    W_bad(OP_MOE_COMBINE, cin, 3, y2, NULL, 0, "outputs[0]", "tokens must be a floating-point [1024, D]");
}
END_TEST

START_TEST(test_argmax_cumsum_dropout)
{
    /* argmax over the rows of [6, 10]: 6 reduction lines of 10, a compare and a select each */
    int x = T("x", DT_FP32, TK_INPUT, 2, 6LL, 10LL);
    int y = T("y", DT_INT64, TK_OUTPUT, 1, 6LL);
    wl_attr a1 = IATTR("axis", 1), a0 = IATTR("axis", 0);
    op_work m = W(OP_ARGMAX, &x, 1, y, &a1, 1);
    ck_assert_int_eq(m.kind, OPK_ROW);
    ck_assert_int_eq(m.rows, 6);
    ck_assert_int_eq(m.row_len, 10);
    ck_assert_int_eq(m.flops_simt, 120);
    ck_assert_int_eq(m.col_reduce, 0);
    ck_assert_int_eq(m.no_pipe, 0);
    int y0 = T("y0", DT_INT64, TK_OUTPUT, 1, 10LL), yk = T("yk", DT_INT64, TK_OUTPUT, 2, 6LL, 1LL);
    op_work m0 = W(OP_ARGMAX, &x, 1, y0, &a0, 1); /* columns */
    ck_assert_int_eq(m0.rows, 10);
    ck_assert_int_eq(m0.col_reduce, 1);
    ck_assert_int_eq(m0.no_pipe, 1);
    W(OP_ARGMAX, &x, 1, yk, &a1, 1); /* keepdim shape */
    int yb = T("yb", DT_FP32, TK_OUTPUT, 1, 6LL);
    W_bad(OP_ARGMAX, &x, 1, yb, &a1, 1, "outputs[0]", "indices must be an integer tensor");
    /* cumsum along the rows: one add per element; 1-D: one line, not in a pipeline */
    int c = T("c", DT_FP32, TK_OUTPUT, 2, 6LL, 10LL);
    op_work s = W(OP_CUMSUM, &x, 1, c, &a1, 1);
    ck_assert_int_eq(s.rows, 6);
    ck_assert_int_eq(s.row_len, 10);
    ck_assert_int_eq(s.flops_simt, 60);
    ck_assert_int_eq(s.in_bytes[0], 240);
    ck_assert_int_eq(s.out_bytes, 240);
    ck_assert_int_eq(s.no_pipe, 0);
    int x1 = T("x1", DT_FP32, TK_INPUT, 1, 100LL), c1 = T("c1", DT_FP32, TK_OUTPUT, 1, 100LL);
    ck_assert_int_eq(W(OP_CUMSUM, &x1, 1, c1, NULL, 0).no_pipe, 1);
    /* dropout on [10, 100] bf16: y (2000 B) and a bool mask (1000 B); Philox 25 + 7 per element */
    int xd = T("xd", DT_BF16, TK_INPUT, 2, 10LL, 100LL);
    int out[2] = {T("yd", DT_BF16, TK_OUTPUT, 2, 10LL, 100LL), T("md", DT_BOOL, TK_OUTPUT, 2, 10LL, 100LL)};
    wl_attr p = IATTR("p_permille", 250);
    op_work d = WN(OP_DROPOUT, &xd, 1, out, 2, &p, 1);
    ck_assert_int_eq(d.kind, OPK_STREAM);
    ck_assert_int_eq(d.elems, 1000);
    ck_assert_int_eq(d.flops_simt, 32000);
    ck_assert_int_eq(d.out_bytes, 3000);
    int outb[2] = {T("yd2", DT_BF16, TK_OUTPUT, 2, 10LL, 100LL), T("md2", DT_BF16, TK_OUTPUT, 2, 10LL, 100LL)};
    WN_bad(OP_DROPOUT, &xd, 1, outb, 2, &p, 1, "outputs[1]", "mask must be a bool tensor");
    wl_attr p2 = IATTR("p_permille", 1500);
    WN_bad(OP_DROPOUT, &xd, 1, out, 2, &p2, 1, "attrs.p_permille", "must be in [0, 1000]");
}
END_TEST

/* Free views: a slice or an expand with "copy": false launches nothing; a consumer of a free
 * expand reads only the stored elements (stride-0 repeats). */
START_TEST(test_free_views)
{
    int x = T("x", DT_FP32, TK_INPUT, 2, 10LL, 6LL);
    int s = T("s", DT_FP32, TK_INTER, 2, 3LL, 6LL);
    wl_attr sa[4] = {IATTR("axis", 0), IATTR("start", 2), IATTR("end", 5), IATTR("copy", 0)};
    op_work v = W(OP_SLICE, &x, 1, s, sa, 4);
    ck_assert_int_eq(v.kind, OPK_FREE);
    ck_assert(op_is_free(&G, &G.op[G.nop - 1]));
    int r = T("r", DT_FP32, TK_OUTPUT, 2, 3LL, 6LL);
    ck_assert_int_eq(W(OP_RELU, &s, 1, r, NULL, 0).in_bytes[0], 72); /* the slice's 3 rows */
    int b = T("b", DT_FP32, TK_INPUT, 2, 1LL, 64LL);
    int e = T("e", DT_FP32, TK_INTER, 2, 32LL, 64LL);
    wl_attr nc = IATTR("copy", 0);
    ck_assert_int_eq(W(OP_EXPAND, &b, 1, e, &nc, 1).kind, OPK_FREE);
    int in[2] = {e, T("z", DT_FP32, TK_INPUT, 2, 32LL, 64LL)};
    int o = T("o", DT_FP32, TK_OUTPUT, 2, 32LL, 64LL);
    op_work a = W(OP_ADD, in, 2, o, NULL, 0);
    ck_assert_int_eq(a.in_bytes[0], 256); /* b's 64 floats, not 32 x 64 */
    ck_assert_int_eq(a.in_bytes[1], 8192);
    /* a copying expand writes every element */
    int e2 = T("e2", DT_FP32, TK_INTER, 2, 32LL, 64LL);
    op_work c = W(OP_EXPAND, &b, 1, e2, NULL, 0);
    ck_assert_int_eq(c.kind, OPK_STREAM);
    ck_assert_int_eq(c.out_bytes, 8192);
}
END_TEST

/* index_add into a destination dst [100, 8] fp32 of src [20, 8] rows: in place, the atomics
 * touch the ceil(100 (1 - 0.99^20)) = 19 expected distinct rows of 32 B (608 B read and
 * written); L2 reads: the index (160 B) and src (640 B). scatter (topk's backward) writes only
 * src's elements. matmul with C; attention with a mask. */
START_TEST(test_destinations_and_extras)
{
    int in[3] = {T("dst", DT_FP32, TK_INPUT, 2, 100LL, 8LL), T("i", DT_INT64, TK_INPUT, 1, 20LL),
                 T("src", DT_FP32, TK_INPUT, 2, 20LL, 8LL)};
    int y = T("y", DT_FP32, TK_OUTPUT, 2, 100LL, 8LL);
    op_work a = W(OP_INDEX_ADD, in, 3, y, NULL, 0);
    ck_assert_int_eq(a.kind, OPK_SCATTER);
    ck_assert_int_eq(a.rows, 20);
    ck_assert_int_eq(a.table_rows, 100);
    ck_assert_int_eq(a.in_bytes[0], 19 * 32);
    ck_assert_int_eq(a.out_bytes, 19 * 32);
    ck_assert_int_eq(a.in_l2_bytes, 160 + 640);
    ck_assert_int_eq(a.flops_simt, 160);
    int src9 = T("src9", DT_FP32, TK_INPUT, 2, 20LL, 9LL);
    int in9[3] = {in[0], in[1], src9};
    int y9 = T("y9", DT_FP32, TK_OUTPUT, 2, 100LL, 8LL);
    W_bad(OP_SCATTER_ADD, in9, 3, y9, NULL, 0, "outputs[0]", "destination and source differ outside the axis");
    /* scatter dst [4, 6] fp32 <- src [4, 2] at index [4, 2] along axis 1: 8 elements written */
    int sin[3] = {T("d2", DT_FP32, TK_INPUT, 2, 4LL, 6LL), T("i2", DT_INT64, TK_INPUT, 2, 4LL, 2LL),
                  T("s2", DT_FP32, TK_INPUT, 2, 4LL, 2LL)};
    int sy = T("sy", DT_FP32, TK_OUTPUT, 2, 4LL, 6LL);
    wl_attr a1 = IATTR("axis", 1);
    op_work s = W(OP_SCATTER, sin, 3, sy, &a1, 1);
    ck_assert_int_eq(s.in_bytes[0], 0);
    ck_assert_int_eq(s.elems, 8);
    ck_assert_int_eq(s.out_bytes, 32);
    /* matmul [64, 32] x [32, 16] + C [16]: C added in the epilogue, one FLOP per output */
    int mm[3] = {T("ma", DT_BF16, TK_INPUT, 2, 64LL, 32LL), T("mb", DT_BF16, TK_WEIGHT, 2, 32LL, 16LL),
                 T("mc", DT_BF16, TK_WEIGHT, 1, 16LL)};
    int my = T("my", DT_BF16, TK_OUTPUT, 2, 64LL, 16LL);
    op_work g = W(OP_MATMUL, mm, 3, my, NULL, 0);
    ck_assert_int_eq(g.flops_tensor, 2 * 64 * 16 * 32);
    ck_assert_int_eq(g.flops_simt, 64 * 16);
    ck_assert_int_eq(g.in_bytes[2], 32);
    int mbad[3] = {mm[0], mm[1], T("mc2", DT_BF16, TK_WEIGHT, 1, 15LL)};
    int my2 = T("my2", DT_BF16, TK_OUTPUT, 2, 64LL, 16LL);
    W_bad(OP_MATMUL, mbad, 3, my2, NULL, 0, "inputs[2]", "C must be floating point and broadcast");
    /* attention [2, 8, 128, 64] x 256 keys with a bf16 mask [128, 256]: one mask element and one
     * add per score: 2 x 8 x 128 x 256 = 524,288 scores */
    int at[4] = {T("q", DT_BF16, TK_INPUT, 4, 2LL, 8LL, 128LL, 64LL), T("k", DT_BF16, TK_INPUT, 4, 2LL, 8LL, 256LL, 64LL),
                 T("v", DT_BF16, TK_INPUT, 4, 2LL, 8LL, 256LL, 64LL), T("mask", DT_BF16, TK_INPUT, 2, 128LL, 256LL)};
    int ay = T("ay", DT_BF16, TK_OUTPUT, 4, 2LL, 8LL, 128LL, 64LL), ay0 = T("ay0", DT_BF16, TK_OUTPUT, 4, 2LL, 8LL, 128LL, 64LL);
    op_work am = W(OP_ATTENTION, at, 4, ay, NULL, 0), a0 = W(OP_ATTENTION, at, 3, ay0, NULL, 0);
    ck_assert_int_eq(am.mask_l2_bytes, 524288 * 2);
    ck_assert_int_eq(am.flops_simt - a0.flops_simt, 524288);
    ck_assert_int_eq(am.in_bytes[3], 128 * 256 * 2);
    int at2[4] = {at[0], at[1], at[2], T("mask2", DT_BF16, TK_INPUT, 2, 128LL, 255LL)};
    int ay2 = T("ay2", DT_BF16, TK_OUTPUT, 4, 2LL, 8LL, 128LL, 64LL);
    W_bad(OP_ATTENTION, at2, 4, ay2, NULL, 0, "inputs[3]", "mask must broadcast to the scores [2, 8, 128, 256]");
}
END_TEST

static Suite *op_suite(void)
{
    Suite *s = suite_create("op");
    TCase *t = tcase_create("op_work_of");
    tcase_add_checked_fixture(t, setup, teardown);
    tcase_add_test(t, test_table);
    tcase_add_test(t, test_kernel_classes);
    tcase_add_test(t, test_matmul_batch_broadcast);
    tcase_add_test(t, test_matmul_transpose);
    tcase_add_test(t, test_linear_bias);
    tcase_add_test(t, test_unary);
    tcase_add_test(t, test_binary_broadcast);
    tcase_add_test(t, test_reduce);
    tcase_add_test(t, test_softmax_norms);
    tcase_add_test(t, test_norm_instructions);
    tcase_add_test(t, test_norm_chain);
    tcase_add_test(t, test_strided_elementwise);
    tcase_add_test(t, test_attention);
    tcase_add_test(t, test_embedding_distinct_rows);
    tcase_add_test(t, test_gather_scatter);
    tcase_add_test(t, test_concat_slice);
    tcase_add_test(t, test_transpose_reshape_rope);
    tcase_add_test(t, test_flop_overflow);
    tcase_add_test(t, test_conv2d);
    tcase_add_test(t, test_conv2d_backward);
    tcase_add_test(t, test_batchnorm);
    tcase_add_test(t, test_pool2d);
    tcase_add_test(t, test_topk_sort);
    tcase_add_test(t, test_moe_routing);
    tcase_add_test(t, test_argmax_cumsum_dropout);
    tcase_add_test(t, test_free_views);
    tcase_add_test(t, test_destinations_and_extras);
    suite_add_tcase(s, t);
    return s;
}

KT_TEST_MAIN(op_suite)
