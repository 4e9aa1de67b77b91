/* check_select: segment validity, the paper's patterns and the DP search against brute force. */
#include <math.h>
#include <stdio.h>

#include "../src/model/autodiff.h"
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

/* The segments sel_search weighs are exactly the valid ones of its window: on every shipped
 * workload (inference and training graphs, with views, index ops and barriers), the (first, last)
 * pairs its cost callback sees equal a brute-force enumeration that asks sel_valid of each
 * segment of the window (lengths 2..16, then growing by a quarter; up to an index or no_pipe op) -
 * the DP's incremental connectivity must give sel_valid's answers. */
typedef struct seen_set {
    int n, cap;
    int (*pair)[2];
} seen_set;

static double record(void *ctx, int first, int last, double budget_s)
{
    (void)budget_s;
    seen_set *s = ctx;
    ck_assert_int_lt(s->n, s->cap);
    s->pair[s->n][0] = first;
    s->pair[s->n][1] = last;
    s->n++;
    return -1; /* never chosen: every segment is weighed */
}

static int grid_len(int len)
{
    if (len <= SEL_SEARCH_DENSE_OPS)
        return 1;
    int l = SEL_SEARCH_DENSE_OPS;
    while (l < len)
        l += l / 4;
    return l == len;
}

START_TEST(search_weighs_valid_segments)
{
    static const char *const WL[] = {"mgn", "graphcast", "nerf", "dlrm", "llama3-8b-ctx"};
    for (int k = 0; k < 10; k++) {
        arena a = {0};
        wl_graph fwd, tg, *g = &fwd;
        char rel[64];
        snprintf(rel, sizeof rel, "workloads/%s.json", WL[k / 2]);
        kt_test_wl(rel, &a, &fwd);
        kt_err e;
        if (k % 2) {
            ck_assert_int_eq(ad_training_graph(&fwd, 0, &a, &tg, &e), 0);
            g = &tg;
        }
        op_work *w = op_works(g, &a, &e);
        ck_assert_ptr_nonnull(w);
        int n = g->nop, max_len = 64;
        double *rest = arena_calloc(&a, (size_t)n + 1, sizeof(double));
        seen_set got = {0, n * max_len + 1, NULL}, want = got;
        got.pair = arena_calloc(&a, (size_t)got.cap, sizeof *got.pair);
        want.pair = arena_calloc(&a, (size_t)want.cap, sizeof *want.pair);
        sel_seg *out = arena_calloc(&a, (size_t)n + 1, sizeof *out);
        ck_assert(rest && got.pair && want.pair && out);
        double best;
        ck_assert_int_ge(sel_search(g, w, rest, max_len, record, NULL, &got, &a, out, n, &best), 0);
        int nvalid = 0;
        for (int end = 0; end < n; end++) {
            int stop = w[end].kind == OPK_FREE || op_is_index(g->op[end].type) || w[end].no_pipe;
            for (int j = end - 1; !stop && j >= 0 && end - j + 1 <= max_len; j--) {
                if (op_is_index(g->op[j].type) || w[j].no_pipe)
                    break;
                if (grid_len(end - j + 1) && sel_valid(g, w, j, end)) {
                    record(&want, j, end, 0);
                    nvalid++;
                }
            }
        }
        ck_assert_int_gt(nvalid, 10);
        ck_assert_int_eq(got.n, want.n);
        for (int i = 0; i < got.n; i++) {
            ck_assert_int_eq(got.pair[i][0], want.pair[i][0]);
            ck_assert_int_eq(got.pair[i][1], want.pair[i][1]);
        }
        arena_free(&a);
    }
}
END_TEST

/* Pipeline barriers (op_work.no_pipe): a 3x3 convolution's window spans neighbouring tile rows;
 * a 1x1, stride-1 NHWC convolution is a GEMM over pixel rows and may stream; a topk along the
 * last axis of a batch of rows is row-local, a sort of a 1-D tensor is not. */
START_TEST(barriers)
{
    arena a = {0};
    wl_graph g;
    wl_init(&g, "t", &a);
    kt_err e;
    int64_t px[4] = {2, 8, 8, 16}, w3[4] = {16, 3, 3, 16}, w1[4] = {16, 1, 1, 16};
    int x = wl_add_tensor(&g, "x", 4, px, DT_BF16, TK_INPUT, &e);
    int k3 = wl_add_tensor(&g, "k3", 4, w3, DT_BF16, TK_WEIGHT, &e);
    int k1 = wl_add_tensor(&g, "k1", 4, w1, DT_BF16, TK_WEIGHT, &e);
    int t[5];
    for (int i = 0; i < 5; i++) {
        char n[16];
        snprintf(n, sizeof n, "t%d", i);
        t[i] = wl_add_tensor(&g, n, 4, px, DT_BF16, i == 4 ? TK_OUTPUT : TK_INTER, &e);
    }
    wl_attr conv3[2] = {{.key = "padding", .type = WA_INT, .ival = 1}, {.key = "layout", .type = WA_STR, .sval = "nhwc"}};
    int in3[2] = {t[0], k3}, in1[2] = {t[2], k1};
    ck_assert_int_ge(wl_add_op(&g, "r0", OP_RELU, &x, 1, &t[0], 1, NULL, 0, &e), 0);         /* 0 */
    ck_assert_int_ge(wl_add_op(&g, "c3", OP_CONV2D, in3, 2, &t[1], 1, conv3, 2, &e), 0);    /* 1 */
    ck_assert_int_ge(wl_add_op(&g, "r1", OP_RELU, &t[1], 1, &t[2], 1, NULL, 0, &e), 0);     /* 2 */
    ck_assert_int_ge(wl_add_op(&g, "c1", OP_CONV2D, in1, 2, &t[3], 1, &conv3[1], 1, &e), 0); /* 3 */
    ck_assert_int_ge(wl_add_op(&g, "r2", OP_RELU, &t[3], 1, &t[4], 1, NULL, 0, &e), 0);     /* 4 */
    int64_t rd[2] = {64, 8}, kd[2] = {64, 2}, ld[1] = {128};
    int s = wl_add_tensor(&g, "s", 2, rd, DT_BF16, TK_INPUT, &e);
    int tv = wl_add_tensor(&g, "tv", 2, kd, DT_BF16, TK_INTER, &e);
    int ti = wl_add_tensor(&g, "ti", 2, kd, DT_INT64, TK_OUTPUT, &e);
    int tr = wl_add_tensor(&g, "tr", 2, kd, DT_BF16, TK_INTER, &e);
    int fl = wl_add_tensor(&g, "fl", 1, ld, DT_BF16, TK_INTER, &e);
    int sv = wl_add_tensor(&g, "sv", 1, ld, DT_BF16, TK_OUTPUT, &e);
    int si = wl_add_tensor(&g, "si", 1, ld, DT_INT64, TK_OUTPUT, &e);
    wl_attr k2 = {.key = "k", .type = WA_INT, .ival = 2};
    int tko[2] = {tv, ti}, so[2] = {sv, si};
    ck_assert_int_ge(wl_add_op(&g, "tk", OP_TOPK, &s, 1, tko, 2, &k2, 1, &e), 0);           /* 5 */
    ck_assert_int_ge(wl_add_op(&g, "rt", OP_RELU, &tv, 1, &tr, 1, NULL, 0, &e), 0);        /* 6 */
    ck_assert_int_ge(wl_add_op(&g, "fv", OP_VIEW, &tr, 1, &fl, 1, NULL, 0, &e), 0);        /* 7 */
    ck_assert_int_ge(wl_add_op(&g, "st", OP_SORT, &fl, 1, so, 2, NULL, 0, &e), 0);          /* 8 */
    ck_assert_msg(graph_check(&g, "t", &e) == 0, "%s", e.msg);
    op_work *w = op_works(&g, &a, &e);
    ck_assert_ptr_nonnull(w);
    ck_assert(!sel_valid(&g, w, 0, 2)); /* through the 3x3 convolution */
    ck_assert(sel_valid(&g, w, 2, 4));  /* relu -> 1x1 NHWC conv -> relu */
    ck_assert(sel_valid(&g, w, 5, 6));  /* topk over rows of 8 -> relu */
    ck_assert(!sel_valid(&g, w, 6, 8)); /* the 1-D sort */
    arena_free(&a);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("select");
    TCase *t = tcase_create("select");
    tcase_add_test(t, validity);
    tcase_add_test(t, patterns);
    tcase_add_test(t, search_vs_brute_force);
    tcase_add_test(t, search_weighs_valid_segments);
    tcase_add_test(t, barriers);
    suite_add_tcase(s, t);
    return s;
}

KT_TEST_MAIN(suite)
