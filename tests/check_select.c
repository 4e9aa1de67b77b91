/* check_select: segment validity, the paper's patterns and the DP search against brute force. */
#include <math.h>
#include <stdio.h>

#include "../src/model/exec/bsp.h"
#include "../src/model/exec/select.h"
#include "ktest.h"

/* x -> fc1 -> relu -> fc2 -> (view) -> emb-like gather -> add ; plus an independent op */
typedef struct fixture {
    arena a;
    wl_graph g;
    op_work *w;
} fixture;

static int T(fixture *f, const char *n, int64_t r, int64_t c, dtype d, wl_kind k)
{
    kt_err e;
    int64_t dim[2] = {r, c};
    int t = wl_add_tensor(&f->g, n, 2, dim, d, k, &e);
    ck_assert_int_ge(t, 0);
    return t;
}

static void O(fixture *f, const char *n, int type, int i0, int i1, int out)
{
    kt_err e;
    int in[2] = {i0, i1};
    ck_assert_int_ge(wl_add_op(&f->g, n, type, in, i1 < 0 ? 1 : 2, &out, 1, NULL, 0, &e), 0);
}

static void build(fixture *f)
{
    f->a = (arena){0};
    wl_init(&f->g, "t", &f->a);
    int x = T(f, "x", 1024, 256, DT_BF16, TK_INPUT);
    int w1 = T(f, "w1", 256, 1024, DT_BF16, TK_WEIGHT);
    int w2 = T(f, "w2", 1024, 256, DT_BF16, TK_WEIGHT);
    int h = T(f, "h", 1024, 1024, DT_BF16, TK_INTER);
    int ha = T(f, "ha", 1024, 1024, DT_BF16, TK_INTER);
    int y = T(f, "y", 1024, 256, DT_BF16, TK_INTER);
    int yv = T(f, "yv", 256, 1024, DT_BF16, TK_INTER);
    kt_err e;
    int64_t d16 = 16;
    int idx = wl_add_tensor(&f->g, "idx", 1, &d16, DT_INT64, TK_INPUT, &e);
    int gth = T(f, "g", 256, 16, DT_BF16, TK_INTER);
    int z = T(f, "z", 256, 16, DT_BF16, TK_OUTPUT);
    int x2 = T(f, "x2", 256, 16, DT_BF16, TK_INPUT);
    int z2 = T(f, "z2", 256, 16, DT_BF16, TK_OUTPUT);
    (void)x2;
    O(f, "fc1", OP_LINEAR, x, w1, h);          /* 0 */
    O(f, "relu", OP_RELU, h, -1, ha);          /* 1 */
    O(f, "fc2", OP_LINEAR, ha, w2, y);         /* 2 */
    O(f, "view", OP_VIEW, y, -1, yv);          /* 3 */
    int in[2] = {yv, idx};
    wl_attr ax = {.key = "axis", .type = WA_INT, .ival = 1};
    ck_assert_int_ge(wl_add_op(&f->g, "gather", OP_INDEX_SELECT, in, 2, &gth, 1, &ax, 1, &e), 0); /* 4 */
    O(f, "neg", OP_NEG, gth, -1, z);           /* 5 */
    O(f, "other", OP_NEG, x2, -1, z2);         /* 6 */
    ck_assert_msg(graph_check(&f->g, "t", &e) == 0, "%s", e.msg);
    f->w = op_works(&f->g, &f->a, &e);
    ck_assert_ptr_nonnull(f->w);
}

START_TEST(validity)
{
    fixture f;
    build(&f);
    ck_assert(sel_valid(&f.g, f.w, 0, 1));  /* fc1 -> relu */
    ck_assert(sel_valid(&f.g, f.w, 0, 2));  /* Linear -> elementwise -> Linear */
    ck_assert(!sel_valid(&f.g, f.w, 0, 3)); /* ends on a free view */
    ck_assert(!sel_valid(&f.g, f.w, 2, 4)); /* contains the gather */
    ck_assert(!sel_valid(&f.g, f.w, 5, 6)); /* two unconnected ops */
    ck_assert(!sel_valid(&f.g, f.w, 1, 1)); /* one op */
    ck_assert_int_eq(graph_producer(&f.g, wl_find_tensor(&f.g, "yv")), 2);
    arena_free(&f.a);
}
END_TEST

START_TEST(patterns)
{
    fixture f;
    build(&f);
    sel_seg s[8];
    double util[7] = {0};
    int n = sel_patterns(&f.g, f.w, util, NULL, s, 8);
    ck_assert_int_eq(n, 1);
    ck_assert_int_eq(s[0].first, 0);
    ck_assert_int_eq(s[0].last, 2);
    /* fc2 already bulk-sync friendly: the chain breaks, fc1 -> relu alone holds no pattern */
    util[2] = SEL_BSP_FRIENDLY_SM_UTIL;
    ck_assert_int_eq(sel_patterns(&f.g, f.w, util, NULL, s, 8), 0);
    /* ... unless fc1 is a split-K reduction */
    int sk[7] = {4, 1, 1, 1, 1, 1, 1};
    n = sel_patterns(&f.g, f.w, util, sk, s, 8);
    ck_assert_int_eq(n, 1);
    ck_assert_int_eq(s[0].last, 1);
    arena_free(&f.a);
}
END_TEST

/* Synthetic segment cost for the DP: 0.6 x the sum of the ops' rest times. */
static const double REST[7] = {5, 1, 4, 0, 2, 1, 1};
static double cost(void *ctx, int first, int last, double budget_s)
{
    (void)ctx;
    (void)budget_s;
    double s = 0;
    for (int i = first; i <= last; i++)
        s += REST[i];
    return 0.6 * s + 1.0; /* + one pipeline launch */
}

START_TEST(search_vs_brute_force)
{
    fixture f;
    build(&f);
    /* brute force over every partition into valid segments and single ops */
    double best = INFINITY;
    int n = f.g.nop;
    for (unsigned mask = 0; mask < (1u << (n - 1)); mask++) {
        /* bit i set: a cut after op i */
        double t = 0;
        int start = 0, ok = 1;
        for (int i = 0; i < n && ok; i++) {
            if (i == n - 1 || (mask >> i & 1)) {
                if (i == start)
                    t += REST[i];
                else if (sel_valid(&f.g, f.w, start, i))
                    t += cost(NULL, start, i, 0);
                else
                    ok = 0;
                start = i + 1;
            }
        }
        if (ok && t < best)
            best = t;
    }
    sel_seg s[8];
    double got;
    int k = sel_search(&f.g, f.w, REST, SEL_MAX_SEGMENT_OPS, cost, NULL, NULL, &f.a, s, 8, &got);
    ck_assert_int_ge(k, 1);
    ck_assert_double_eq_tol(got, best, 1e-12);
    /* by hand: fc1..fc2 as one pipeline: 0.6 * 10 + 1 = 7 vs 10 */
    ck_assert_int_eq(s[0].first, 0);
    ck_assert_int_eq(s[0].last, 2);
    arena_free(&f.a);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("select");
    TCase *t = tcase_create("select");
    tcase_add_test(t, validity);
    tcase_add_test(t, patterns);
    tcase_add_test(t, search_vs_brute_force);
    suite_add_tcase(s, t);
    return s;
}

KT_TEST_MAIN(suite)
