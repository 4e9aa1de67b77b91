/* check_lint: the warnings - plausible hw ranges, dtypes without tensor cores, memory footprint. */
#include <string.h>

#include "../src/model/lint.h"
#include "../src/model/op.h"
#include "ktest.h"

/* No shipped GPU is outside the plausible ranges: a warning there would be noise. */
START_TEST(test_shipped_hw_is_plausible)
{
    static const char *const GPUS[] = {"a100", "a100-80gb", "v100", "h100", "h200",
                                       "h200-datasheet", "b200"};
    for (size_t i = 0; i < sizeof GPUS / sizeof GPUS[0]; i++) {
        hw_gpu g = kt_test_hw(GPUS[i]);
        lint_list l = {0};
        lint_hw(&g, &l);
        ck_assert_msg(l.n == 0, "%s: %s", GPUS[i], l.msg[0]);
    }
}
END_TEST

/* A value in the wrong unit (GHz for MHz, TB/s for GB/s) and an L2 slower than DRAM. */
START_TEST(test_unit_slips)
{
    hw_gpu g = kt_test_hw("a100");
    g.clock_MHz = 1.41;
    g.tensor_flop_per_clk_per_sm[DT_BF16] = 2;
    lint_list l = {0};
    lint_hw(&g, &l);
    ck_assert_int_eq(l.n, 2);
    ck_assert_str_eq(l.msg[0], "a100: clock_MHz = 1.41 is outside the plausible range [300, 4000] "
                               "(check its unit)");
    ck_assert(strstr(l.msg[1], "tensor_flop_per_clk_per_sm.bf16 = 2 is outside") != NULL);
    g = kt_test_hw("a100");
    g.l2_bandwidth_GBps = 1000;
    l.n = 0;
    lint_hw(&g, &l);
    ck_assert_int_eq(l.n, 1);
    ck_assert(strstr(l.msg[0], "l2.bandwidth_GBps = 1000 is below dram.bandwidth_GBps = 1555") != NULL);
    /* duplicates are kept once */
    ck_assert_int_eq(lint_add(&l, "%s", l.msg[0]), 0);
    ck_assert_int_eq(l.n, 1);
}
END_TEST

/* bf16 GEMMs on the V100 (fp16 tensor cores only) run on SIMT; fp16 or an A100 do not. */
START_TEST(test_dtype)
{
    arena a = {0};
    wl_graph g;
    kt_err e;
    err_clear(&e);
    kt_test_wl("tests/data/tiny.json", &a, &g);
    hw_gpu v100 = kt_test_hw("v100"), a100 = kt_test_hw("a100");
    op_work *w = op_works(&g, &a, &e);
    ck_assert(w != NULL);
    lint_list l = {0};
    lint_dtype(&v100, &g, w, &l);
    ck_assert_int_eq(l.n, 1);
    /* per clock and SM: 1024 fp16 tensor FLOP against 128 FP32 SIMT FLOP */
    ck_assert_str_eq(l.msg[0], "v100 has no bf16 tensor cores: bf16 GEMM and attention ops run on "
                               "its FP32 SIMT units, 8x below its fp16 tensor-core peak (--dtype "
                               "fp16 uses them)");
    l.n = 0;
    lint_dtype(&a100, &g, w, &l);
    ck_assert_int_eq(l.n, 0);
    /* --dtype fp16 converts every float tensor (bf16 and fp16 are both 2 bytes) */
    ck_assert_int_eq(wl_set_float_dtype(&g, DT_FP16, &e), 0);
    ck_assert_int_eq(g.t[0].dt, DT_FP16);
    w = op_works(&g, &a, &e);
    lint_dtype(&v100, &g, w, &l);
    ck_assert_int_eq(l.n, 0);
    /* fp32 runs on SIMT natively: no warning; its tensors double in size */
    int64_t b = g.t[0].bytes;
    ck_assert_int_eq(wl_set_float_dtype(&g, DT_FP32, &e), 0);
    ck_assert_int_eq(g.t[0].bytes, 2 * b);
    w = op_works(&g, &a, &e);
    lint_dtype(&v100, &g, w, &l);
    ck_assert_int_eq(l.n, 0);
    arena_free(&a);
}
END_TEST

/* MoE capacity: 1024 tokens x k = 2 over 8 experts, mean load 256, capacity 320. At 150% the
 * busiest expert gets 384 slots and keeps 320: 64 of the 2048 slots (3.125%) are dropped (the
 * other seven get (2048 - 384) / 7 = 237.7 < 320 each); at 125% it gets exactly 320: no
 * warning. */
START_TEST(test_moe_drops)
{
    arena a = {0};
    wl_graph g;
    kt_test_wl("tests/data/moe-route.json", &a, &g);
    lint_list l = {0};
    lint_moe(&g, &l);
    ck_assert_int_eq(l.n, 1);
    ck_assert_str_eq(l.msg[0], "moe_dispatch 'dispatch' drops 3.1% of the token slots: expert "
                               "capacity 320 is below the busiest expert's load 384 "
                               "(imbalance_pct); 1 dispatch drops slots");
    arena_free(&a);
    char path[1024];
    kt_err e;
    err_clear(&e);
    snprintf(path, sizeof path, "%s/tests/data/moe-route.json", KT_ROOT);
    wl_set at125 = {"IMB_PCT", 125};
    ck_assert_msg(wl_load(path, &at125, 1, 0, &a, &g, &e) == 0, "%s", e.msg);
    l.n = 0;
    lint_moe(&g, &l);
    ck_assert_int_eq(l.n, 0);
    arena_free(&a);
}
END_TEST

/* Footprint against capacity (GiB): equal fits, one byte more does not. */
START_TEST(test_memory)
{
    hw_gpu g = kt_test_hw("a100");
    lint_list l = {0};
    int64_t cap = 40LL << 30;
    lint_memory(&g, 1000, cap - 1000, "x, inference", &l);
    ck_assert_int_eq(l.n, 0);
    lint_memory(&g, 1000, cap - 999, "x, inference", &l);
    ck_assert_int_eq(l.n, 1);
    ck_assert_str_eq(l.msg[0], "x, inference needs 42.9 GB of memory (weights 0.0 GB + peak live "
                               "activations 42.9 GB), more than a100's 40 GiB (42.9 GB): the real "
                               "run would not fit");
}
END_TEST

static Suite *lint_suite(void)
{
    Suite *s = suite_create("lint");
    TCase *h = tcase_create("lint_hw");
    tcase_add_test(h, test_shipped_hw_is_plausible);
    tcase_add_test(h, test_unit_slips);
    suite_add_tcase(s, h);
    TCase *d = tcase_create("lint_dtype");
    tcase_add_test(d, test_dtype);
    tcase_add_test(d, test_moe_drops);
    suite_add_tcase(s, d);
    TCase *m = tcase_create("lint_memory");
    tcase_add_test(m, test_memory);
    suite_add_tcase(s, m);
    return s;
}

KT_TEST_MAIN(lint_suite)
