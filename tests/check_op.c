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
    tcase_add_test(t, test_attention);
    tcase_add_test(t, test_embedding_distinct_rows);
    tcase_add_test(t, test_gather_scatter);
    tcase_add_test(t, test_concat_slice);
    tcase_add_test(t, test_transpose_reshape_rope);
    tcase_add_test(t, test_flop_overflow);
    suite_add_tcase(s, t);
    return s;
}

KT_TEST_MAIN(op_suite)
