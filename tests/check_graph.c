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

static Suite *graph_suite(void)
{
    Suite *s = suite_create("graph");
    TCase *t = tcase_create("graph");
    tcase_add_test(t, test_storage_and_producer);
    tcase_add_test(t, test_check_order);
    suite_add_tcase(s, t);
    return s;
}

KT_TEST_MAIN(graph_suite)
