/* check_sched: the schedule core - the kernel walk's L2 misses between kernels, free views,
 * skipped ops, and the re-evaluation of a kernel at another clock. */
#include <string.h>

#include "../src/model/op.h"
#include "../src/model/sched.h"
#include "ktest.h"

/* x [R,C] -> relu -> h -> view -> hv -> add(hv, x) -> y, bf16, on the shipped a100 (40 MiB L2). */
typedef struct fx {
    arena a;
    wl_graph g;
    op_work *w;
    hw_gpu hw;
    cost_ctx c;
} fx;

static void build(fx *f, int64_t rows, int64_t cols)
{
    memset(f, 0, sizeof *f);
    f->hw = kt_test_hw("a100");
    wl_init(&f->g, "chain", &f->a);
    kt_err e;
    err_clear(&e);
    int64_t d[2] = {rows, cols}, dv[1] = {rows * cols};
    int x = wl_add_tensor(&f->g, "x", 2, d, DT_BF16, TK_INPUT, &e);
    int h = wl_add_tensor(&f->g, "h", 2, d, DT_BF16, TK_INTER, &e);
    int hv = wl_add_tensor(&f->g, "hv", 1, dv, DT_BF16, TK_INTER, &e);
    int xv = wl_add_tensor(&f->g, "xv", 1, dv, DT_BF16, TK_INTER, &e);
    int y = wl_add_tensor(&f->g, "y", 1, dv, DT_BF16, TK_OUTPUT, &e);
    ck_assert_int_ge(wl_add_op(&f->g, "relu", OP_RELU, &x, 1, &h, 1, NULL, 0, &e), 0);
    ck_assert_int_ge(wl_add_op(&f->g, "view", OP_VIEW, &h, 1, &hv, 1, NULL, 0, &e), 0);
    ck_assert_int_ge(wl_add_op(&f->g, "xview", OP_VIEW, &x, 1, &xv, 1, NULL, 0, &e), 0);
    int in[2] = {hv, xv};
    ck_assert_int_ge(wl_add_op(&f->g, "add", OP_ADD, in, 2, &y, 1, NULL, 0, &e), 0);
    ck_assert_msg(graph_check(&f->g, NULL, &e) == 0, "%s", e.msg);
    ck_assert_ptr_nonnull(f->w = op_works(&f->g, &f->a, &e));
    f->c = (cost_ctx){.clock_MHz = f->hw.clock_MHz, .graph_launch = 1};
}

START_TEST(test_walk_reuse)
{
    fx f;
    build(&f, 1024, 1024); /* 2 MiB tensors: everything fits the 40 MiB L2 */
    sched_walk s;
    ck_assert_int_eq(sched_begin(&s, &f.hw, &f.g, &f.c, &f.a), 0);
    kt_item it[4];
    memset(it, 0, sizeof it);
    int64_t miss[4][2];
    for (int i = 0; i < 4; i++)
        ck_assert_int_eq(sched_op(&s, i, &f.w[i], &it[i], miss[i]), 0);
    /* relu reads x cold (2 MiB from DRAM); add reads h and x through their views: both in L2 */
    ck_assert_int_eq(miss[0][0], 2 << 20);
    ck_assert_int_eq(it[0].c.dram_read_bytes, 2 << 20);
    ck_assert_int_eq(miss[3][0], 0);
    ck_assert_int_eq(miss[3][1], 0);
    ck_assert_int_eq(it[3].c.dram_read_bytes, 0);
    ck_assert_int_eq(it[3].c.dram_write_bytes, 2 << 20); /* every output is written back */
    ck_assert(it[1].c.bound == BOUND_NONE && it[1].c.time_s == 0); /* a view launches nothing */
    arena_free(&f.a);
}
END_TEST

START_TEST(test_walk_evicts)
{
    fx f;
    build(&f, 16384, 2048); /* 64 MiB tensors: larger than L2, LRU thrashes, nothing hits */
    sched_walk s;
    ck_assert_int_eq(sched_begin(&s, &f.hw, &f.g, &f.c, &f.a), 0);
    kt_item it;
    int64_t miss[2];
    sched_skip(&s, 0); /* relu ran elsewhere: h counts as written */
    for (int i = 1; i < 4; i++) {
        memset(&it, 0, sizeof it);
        ck_assert_int_eq(sched_op(&s, i, &f.w[i], &it, miss), 0);
    }
    ck_assert_int_eq(miss[0], (int64_t)64 << 20);
    ck_assert_int_eq(miss[1], (int64_t)64 << 20);
    arena_free(&f.a);
}
END_TEST

START_TEST(test_reeval)
{
    fx f;
    build(&f, 4096, 4096);
    kt_item it;
    memset(&it, 0, sizeof it);
    ck_assert_int_eq(sched_kernel_item(&f.hw, &f.w[0], f.hw.sm_count, &f.c, 123, 456, &f.a, &it), 0);
    ck_assert_ptr_nonnull(it.reeval);
    cost_result at, direct;
    ck_assert_int_eq(it.reeval(it.reeval_arg, 705, &f.a, &at), 0);
    cost_ctx half = f.c;
    half.clock_MHz = 705;
    cost_eval(&f.hw, &f.w[0], f.hw.sm_count, &half, 123, 456, &direct);
    ck_assert(memcmp(&at, &direct, sizeof at) == 0);
    ck_assert(at.compute_s > it.c.compute_s); /* slower clock, more compute time */
    arena_free(&f.a);
}
END_TEST

static Suite *sched_suite(void)
{
    Suite *s = suite_create("sched");
    TCase *t = tcase_create("walk");
    tcase_add_test(t, test_walk_reuse);
    tcase_add_test(t, test_walk_evicts);
    tcase_add_test(t, test_reeval);
    suite_add_tcase(s, t);
    return s;
}

KT_TEST_MAIN(sched_suite)
