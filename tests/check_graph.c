/* check_graph: storage through free views, real producers, and the graph check's ordering rules. */
#include <string.h>

#include "../src/model/op.h"
#include "ktest.h"

START_TEST(test_storage_and_producer)
{
    arena a = {0};
    wl_graph g;
    wl_init(&g, "v", &a);
    kt_err e;
    err_clear(&e);
    int64_t d[2] = {4, 8}, d1[1] = {32}, dt[2] = {8, 4};
    int x = wl_add_tensor(&g, "x", 2, d, DT_BF16, TK_INPUT, &e);
    int h = wl_add_tensor(&g, "h", 2, d, DT_BF16, TK_INTER, &e);
    int v = wl_add_tensor(&g, "v", 1, d1, DT_BF16, TK_INTER, &e);
    int t = wl_add_tensor(&g, "t", 2, dt, DT_BF16, TK_INTER, &e);
    int c = wl_add_tensor(&g, "c", 2, dt, DT_BF16, TK_OUTPUT, &e);
    wl_attr nocopy = {.key = "copy", .type = WA_INT, .ival = 0}, copy = {.key = "copy", .type = WA_INT, .ival = 1};
    wl_add_op(&g, "relu", OP_RELU, &x, 1, &h, 1, NULL, 0, &e);
    wl_add_op(&g, "flat", OP_VIEW, &h, 1, &v, 1, NULL, 0, &e);
    wl_add_op(&g, "tr", OP_RESHAPE, &v, 1, &t, 1, &nocopy, 1, &e);
    wl_add_op(&g, "cp", OP_RESHAPE, &t, 1, &c, 1, &copy, 1, &e);
    ck_assert_msg(graph_check(&g, NULL, &e) == 0, "%s", e.msg);
    ck_assert_int_eq(graph_storage(&g, t), h); /* view of a view of h */
    ck_assert_int_eq(graph_producer(&g, t), 0);
    ck_assert_int_eq(graph_storage(&g, c), c); /* a copying reshape owns its storage */
    ck_assert_int_eq(graph_producer(&g, c), 3);
    ck_assert_int_eq(graph_storage(&g, x), x);
    ck_assert_int_eq(graph_producer(&g, x), -1);
    arena_free(&a);
}
END_TEST

START_TEST(test_check_order)
{
    arena a = {0};
    wl_graph g;
    wl_init(&g, "o", &a);
    kt_err e;
    err_clear(&e);
    int64_t d[1] = {8};
    int x = wl_add_tensor(&g, "x", 1, d, DT_BF16, TK_INPUT, &e);
    int h = wl_add_tensor(&g, "h", 1, d, DT_BF16, TK_INTER, &e);
    int y = wl_add_tensor(&g, "y", 1, d, DT_BF16, TK_OUTPUT, &e);
    wl_add_op(&g, "b", OP_RELU, &h, 1, &y, 1, NULL, 0, &e); /* reads h before anything makes it */
    wl_add_op(&g, "a", OP_RELU, &x, 1, &h, 1, NULL, 0, &e);
    ck_assert_int_eq(graph_check(&g, "o.json", &e), -1);
    ck_assert_str_eq(e.path, "ops[0].inputs[0]");
    ck_assert_str_eq(e.msg, "tensor \"h\" is neither an input/weight nor produced by an earlier op");
    arena_free(&a);
}
END_TEST

/* Liveness by hand on tests/data/tiny.json (B=64, D=128, H=512, bf16): x, o, r, y are 16 KiB,
 * h and a 64 KiB. Op 1 (gelu) holds x (read again by op 3), h (its input) and a (its output):
 * 16384 + 65536 + 65536 = 147456, the peak. Weights: 2 x 128 x 512 x 2 + 512 x 2 + 128 x 2. */
START_TEST(test_memory_by_hand)
{
    arena a = {0};
    wl_graph g;
    kt_err e;
    err_clear(&e);
    kt_test_wl("tests/data/tiny.json", &a, &g);
    graph_mem m;
    ck_assert_int_eq(graph_memory(&g, &a, &m, &e), 0);
    ck_assert_int_eq(m.weight_bytes, 2 * 128 * 512 * 2 + 512 * 2 + 128 * 2);
    ck_assert_int_eq(m.peak_act_bytes, 16384 + 65536 + 65536);
    arena_free(&a);
}
END_TEST

/* Views take no storage but extend their base's life; optimizer outputs are in place. */
START_TEST(test_memory_views)
{
    arena a = {0};
    wl_graph g;
    wl_init(&g, "v", &a);
    kt_err e;
    err_clear(&e);
    int64_t d[2] = {4, 8}, d1[1] = {32};
    int x = wl_add_tensor(&g, "x", 2, d, DT_FP32, TK_INPUT, &e);   /* 128 bytes */
    int h = wl_add_tensor(&g, "h", 2, d, DT_FP32, TK_INTER, &e);   /* 128 */
    int v = wl_add_tensor(&g, "v", 1, d1, DT_FP32, TK_INTER, &e);  /* view of h */
    int u = wl_add_tensor(&g, "u", 2, d, DT_FP32, TK_INTER, &e);   /* 128 */
    int y = wl_add_tensor(&g, "y", 1, d1, DT_FP32, TK_OUTPUT, &e); /* 128 */
    wl_add_op(&g, "relu", OP_RELU, &x, 1, &h, 1, NULL, 0, &e);     /* 0: x h */
    wl_add_op(&g, "flat", OP_VIEW, &h, 1, &v, 1, NULL, 0, &e);     /* 1: x h */
    wl_add_op(&g, "exp", OP_EXP, &x, 1, &u, 1, NULL, 0, &e);       /* 2: x h u */
    int in[2] = {v, v};
    wl_add_op(&g, "sq", OP_MUL, in, 2, &y, 1, NULL, 0, &e);        /* 3: h y */
    ck_assert_msg(graph_check(&g, NULL, &e) == 0, "%s", e.msg);
    graph_mem m;
    ck_assert_int_eq(graph_memory(&g, &a, &m, &e), 0);
    ck_assert_int_eq(m.weight_bytes, 0);
    /* op 2 holds x, h (alive through its view, read at op 3) and u (written, never read) */
    ck_assert_int_eq(m.peak_act_bytes, 3 * 128);
    arena_free(&a);
}
END_TEST

static Suite *graph_suite(void)
{
    Suite *s = suite_create("graph");
    TCase *t = tcase_create("graph");
    tcase_add_test(t, test_storage_and_producer);
    tcase_add_test(t, test_check_order);
    TCase *m = tcase_create("graph_memory");
    tcase_add_test(m, test_memory_by_hand);
    tcase_add_test(m, test_memory_views);
    suite_add_tcase(s, m);
    suite_add_tcase(s, t);
    return s;
}

KT_TEST_MAIN(graph_suite)
