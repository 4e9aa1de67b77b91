/* check_bsp: bulk-synchronous totals, L2 reuse between kernels, and issue 2's acceptance numbers
 * (graphs built in code, run on the shipped hw/a100.json). */
#include <stdio.h>
#include <string.h>

#include "../src/model/exec/bsp.h"
#include "../src/model/op.h"
#include "ktest.h"

static hw_gpu HW;
static arena A;
static wl_graph G;

static void setup(void)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/hw/a100.json", KT_ROOT);
    kt_err e;
    err_clear(&e);
    ck_assert_msg(hw_load(path, &HW, &e) == 0, "%s: %s", path, e.msg);
    memset(&A, 0, sizeof A);
    wl_init(&G, "t", &A);
}

static void teardown(void)
{
    arena_free(&A);
}

static int T1(const char *name, dtype dt, wl_kind k, int64_t d0)
{
    kt_err e;
    err_clear(&e);
    int t = wl_add_tensor(&G, name, 1, &d0, dt, k, &e);
    ck_assert_int_ge(t, 0);
    return t;
}

static int T2(const char *name, dtype dt, wl_kind k, int64_t d0, int64_t d1)
{
    int64_t d[2] = {d0, d1};
    kt_err e;
    err_clear(&e);
    int t = wl_add_tensor(&G, name, 2, d, dt, k, &e);
    ck_assert_int_ge(t, 0);
    return t;
}

static void OP(const char *name, int type, const int *in, int nin, int out)
{
    kt_err e;
    err_clear(&e);
    ck_assert_int_ge(wl_add_op(&G, name, type, in, nin, &out, 1, NULL, 0, &e), 0);
}

/* Check the graph and run bsp on the whole a100 (CUDA-graph launches). */
static kt_result run(void)
{
    kt_err e;
    err_clear(&e);
    ck_assert_msg(graph_check(&G, "t.json", &e) == 0, "%s: %s", e.path, e.msg);
    op_work *w = op_works(&G, &A, &e);
    ck_assert_msg(w != NULL, "%s", e.msg);
    cost_ctx c = {.clock_MHz = HW.clock_MHz, .graph_launch = 1};
    kt_result r;
    ck_assert_msg(bsp_run(&HW, &G, w, &c, &A, &r, &e) == 0, "%s", e.msg);
    return r;
}

START_TEST(test_big_matmul_compute_bound)
{
    /* 8192^3 bf16: 2 * 8192^3 FLOPs at the 312 TFLOP/s of the A100 datasheet */
    int in[2] = {T2("a", DT_BF16, TK_INPUT, 8192, 8192), T2("b", DT_BF16, TK_WEIGHT, 8192, 8192)};
    int y = T2("y", DT_BF16, TK_OUTPUT, 8192, 8192);
    OP("mm", OP_MATMUL, in, 2, y);
    kt_result r = run();
    double ideal = 2.0 * 8192.0 * 8192.0 * 8192.0 / 312e12;
    ck_assert_int_eq(r.nitems, 1);
    ck_assert_int_eq(r.items[0].c.bound, BOUND_COMPUTE);
    ck_assert_msg(r.time_s >= 1.0 * ideal && r.time_s <= 1.3 * ideal, "time %g s = %.3f x ideal",
                  r.time_s, r.time_s / ideal);
    ck_assert_int_eq(r.flops, 2LL * 8192 * 8192 * 8192);
}
END_TEST

START_TEST(test_big_add_dram_bound)
{
    /* two 2^29-element bf16 inputs (1 GiB each) and a 1 GiB output through 1555 GB/s */
    int64_t n = 1LL << 29;
    int in[2] = {T1("a", DT_BF16, TK_INPUT, n), T1("b", DT_BF16, TK_INPUT, n)};
    int y = T1("y", DT_BF16, TK_OUTPUT, n);
    OP("add", OP_ADD, in, 2, y);
    kt_result r = run();
    double ideal = 3.0 * (double)(1LL << 30) / 1555e9;
    ck_assert_int_eq(r.items[0].c.bound, BOUND_DRAM);
    ck_assert_msg(r.time_s >= 1.0 * ideal && r.time_s <= 1.4 * ideal, "time %g s = %.3f x ideal",
                  r.time_s, r.time_s / ideal);
    ck_assert_int_eq(r.dram_read_bytes, 1LL << 31); /* both inputs miss: never touched before */
    ck_assert_int_eq(r.dram_write_bytes, 1LL << 30);
}
END_TEST

START_TEST(test_tiny_chain_latency_dominated)
{
    /* 1,000 elementwise ops on 256 fp32 elements each, in a chain */
    enum { N = 1000 };
    int prev = T1("x", DT_FP32, TK_INPUT, 256);
    for (int i = 0; i < N; i++) {
        char name[32];
        snprintf(name, sizeof name, "t%d", i);
        int next = T1(name, DT_FP32, i == N - 1 ? TK_OUTPUT : TK_INTER, 256);
        OP(name, i % 2 ? OP_RELU : OP_NEG, &prev, 1, next);
        prev = next;
    }
    kt_result r = run();
    ck_assert_int_eq(r.nitems, N);
    ck_assert_int_eq(r.kernels, N);
    double fixed = 0;
    for (int i = 0; i < r.nitems; i++) {
        ck_assert_int_eq(r.items[i].c.bound, BOUND_LATENCY);
        fixed += r.items[i].c.launch_s + r.items[i].c.latency_s;
    }
    ck_assert_msg(fixed > 0.5 * r.time_s, "launch+latency %g of %g s", fixed, r.time_s);
    /* only the first op reads from DRAM: every later input was written by the kernel before */
    ck_assert_int_eq(r.dram_read_bytes, 1024);
    ck_assert_int_eq(r.items[1].c.dram_read_bytes, 0);
}
END_TEST

START_TEST(test_totals_are_sums)
{
    /* x -> linear -> h -> gelu -> a -> view -> v -> softmax -> y */
    int x = T2("x", DT_BF16, TK_INPUT, 512, 256), w = T2("w", DT_BF16, TK_WEIGHT, 256, 1024);
    int h = T2("h", DT_BF16, TK_INTER, 512, 1024), a = T2("a", DT_BF16, TK_INTER, 512, 1024);
    int v = T2("v", DT_BF16, TK_INTER, 1024, 512), y = T2("y", DT_BF16, TK_OUTPUT, 1024, 512);
    int in[2] = {x, w};
    OP("fc", OP_LINEAR, in, 2, h);
    OP("act", OP_GELU, &h, 1, a);
    OP("view", OP_VIEW, &a, 1, v);
    OP("sm", OP_SOFTMAX, &v, 1, y);
    kt_result r = run();
    ck_assert_int_eq(r.nitems, 4);
    ck_assert_int_eq(r.kernels, 3); /* the view launches nothing */
    ck_assert_int_eq(r.items[2].c.bound, BOUND_NONE);
    ck_assert_double_eq(r.items[2].c.time_s, 0);
    double t = 0;
    int64_t fl = 0, rd = 0, wr = 0, l2 = 0;
    for (int i = 0; i < r.nitems; i++) {
        t += r.items[i].c.time_s;
        fl += r.items[i].c.flops;
        rd += r.items[i].c.dram_read_bytes;
        wr += r.items[i].c.dram_write_bytes;
        l2 += r.items[i].c.l2_bytes;
    }
    ck_assert_double_eq_tol(r.time_s, t, 1e-15);
    ck_assert_int_eq(r.flops, fl);
    ck_assert_int_eq(r.dram_read_bytes, rd);
    ck_assert_int_eq(r.dram_write_bytes, wr);
    ck_assert_int_eq(r.l2_bytes, l2);
    /* every output is written back: 3 kernels x 1 MiB */
    ck_assert_int_eq(r.dram_write_bytes, 3 * 512 * 1024 * 2);
    /* gelu reads h, written just before (1 MiB << 40 MiB L2): a hit; softmax reads the view of a */
    ck_assert_int_eq(r.items[1].c.dram_read_bytes, 0);
    ck_assert_int_eq(r.items[3].c.dram_read_bytes, 0);
    /* fc reads x and w cold */
    ck_assert_int_eq(r.items[0].c.dram_read_bytes, 512 * 256 * 2 + 256 * 1024 * 2);
    ck_assert_int_eq(r.ops_total, 4);
}
END_TEST

START_TEST(test_masked)
{
    int x = T1("x", DT_FP32, TK_INPUT, 1024), h = T1("h", DT_FP32, TK_INTER, 1024);
    int y = T1("y", DT_FP32, TK_OUTPUT, 1024);
    OP("a", OP_EXP, &x, 1, h);
    OP("b", OP_EXP, &h, 1, y);
    kt_err e;
    err_clear(&e);
    ck_assert_int_eq(graph_check(&G, "t.json", &e), 0);
    op_work *w = op_works(&G, &A, &e);
    cost_ctx c = {.clock_MHz = HW.clock_MHz, .graph_launch = 1};
    kt_result all, rest;
    ck_assert_int_eq(bsp_run(&HW, &G, w, &c, &A, &all, &e), 0);
    unsigned char ex[2] = {1, 0};
    ck_assert_int_eq(bsp_run_masked(&HW, &G, w, &c, ex, &A, &rest, NULL, &e), 0);
    ck_assert_int_eq(rest.nitems, 1);
    ck_assert_str_eq(rest.items[0].name, "b");
    /* the excluded producer still counts as having written h: b's read hits as before */
    ck_assert_double_eq_tol(rest.time_s, all.items[1].c.time_s, 1e-15);
}
END_TEST

static Suite *bsp_suite(void)
{
    Suite *s = suite_create("bsp");
    TCase *t = tcase_create("bsp_run");
    tcase_add_checked_fixture(t, setup, teardown);
    tcase_add_test(t, test_big_matmul_compute_bound);
    tcase_add_test(t, test_big_add_dram_bound);
    tcase_add_test(t, test_tiny_chain_latency_dominated);
    tcase_add_test(t, test_totals_are_sums);
    tcase_add_test(t, test_masked);
    suite_add_tcase(s, t);
    return s;
}

KT_TEST_MAIN(bsp_suite)
