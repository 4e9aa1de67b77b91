/* check_roof: the roofline rules - rates at a clock, Little's law, the bound and utilization
 * rules - against values worked out by hand on a round-number GPU. */
#include <math.h>
#include <string.h>

#include "../src/model/roof.h"
#include "ktest.h"

/* 100 SMs at 1000 MHz; 1024 bf16 tensor FLOP/clk/SM, 128 fp32 FLOP/clk/SM; 1 TB/s DRAM at
 * 500 ns, 4 TB/s L2 at 200 ns; 2048 threads/SM; every efficiency 0.5. */
static hw_gpu toy(void)
{
    hw_gpu g;
    memset(&g, 0, sizeof g);
    g.sm_count = 100;
    g.clock_MHz = 1000;
    g.tensor_flop_per_clk_per_sm[DT_BF16] = 1024;
    g.simt_fp32_flop_per_clk_per_sm = 128;
    g.dram_bandwidth_GBps = 1000;
    g.dram_latency_ns = 500;
    g.l2_bandwidth_GBps = 4000;
    g.l2_latency_ns = 200;
    g.max_threads_per_sm = 2048;
    g.registers_per_sm_KiB = 256; /* 128 bytes per thread: no register limit */
    g.tensor_frac = g.simt_frac = g.dram_frac = g.l2_frac = 0.5;
    return g;
}

START_TEST(test_compute_rates)
{
    hw_gpu g = toy();
    /* 1024 x 1e9 x 0.5 per SM */
    ck_assert_double_eq_tol(roof_tensor_rate(&g, DT_BF16, 1000), 512e9, 1);
    ck_assert_double_eq_tol(roof_tensor_rate(&g, DT_BF16, 500), 256e9, 1); /* DVFS */
    ck_assert_double_eq(roof_tensor_rate(&g, DT_FP8, 1000), 0);            /* unsupported */
    ck_assert_double_eq_tol(roof_simt_rate(&g, 1000), 64e9, 1);
    ck_assert_double_eq_tol(roof_sfu_rate(&g, 1000), 8e9, 1); /* 128/8 lanes */
    ck_assert_double_eq_tol(roof_issue_rate(&g, 1000), 4 * 32 * 1e9 * 0.5, 1);
    /* whole-GPU peaks carry no efficiency factor; SIMT when the dtype has no tensor cores */
    ck_assert_double_eq_tol(roof_peak_flops(&g, 1, DT_BF16, 1000), 100 * 1024e9, 1);
    ck_assert_double_eq_tol(roof_peak_flops(&g, 1, DT_FP8, 1000), 100 * 128e9, 1);
    ck_assert_double_eq_tol(roof_peak_flops(&g, 0, DT_BF16, 1000), 100 * 128e9, 1);
}
END_TEST

START_TEST(test_memory_rates)
{
    hw_gpu g = toy();
    double full = roof_inflight_full(&g);
    ck_assert_double_eq(full, 2048.0 * 16);
    /* all SMs: 100 x 32 KiB / 500 ns = 6.6 TB/s > 0.5 TB/s achievable: the peak binds */
    ck_assert_double_eq_tol(roof_dram_Bps(&g, 100, full), 0.5e12, 1);
    /* one SM: 32768 B / 500 ns = 65.5 GB/s: Little's law binds */
    ck_assert_double_eq_tol(roof_dram_Bps(&g, 1, full), 32768 / 500e-9, 1);
    ck_assert_double_eq(roof_little(1e12, 0, 1, 1), 1e12); /* no latency: the peak */
    /* L2 scales with the SM clock; DRAM does not */
    ck_assert_double_eq_tol(roof_l2_Bps(&g, 100, full, 1000), 2e12, 1);
    ck_assert_double_eq_tol(roof_l2_Bps(&g, 100, full, 500), 1e12, 1);
    ck_assert_double_eq_tol(roof_dram_s(&g, 1e9), 1e9 / 0.5e12, 1e-15);
}
END_TEST

START_TEST(test_bound_rule)
{
    ck_assert_int_eq(roof_bound(3, 2, 1, 0, 0), BOUND_COMPUTE);
    ck_assert_int_eq(roof_bound(1, 3, 2, 0, 0), BOUND_L2);
    ck_assert_int_eq(roof_bound(1, 2, 3, 0, 0), BOUND_DRAM);
    /* ties: compute before L2 before DRAM */
    ck_assert_int_eq(roof_bound(2, 2, 2, 0, 0), BOUND_COMPUTE);
    ck_assert_int_eq(roof_bound(1, 2, 2, 0, 0), BOUND_L2);
    /* fixed overhead longer than the body, or a dispatch-bound compute term: latency */
    ck_assert_int_eq(roof_bound(1, 1, 1, 2, 0), BOUND_LATENCY);
    ck_assert_int_eq(roof_bound(3, 1, 1, 0, 1), BOUND_LATENCY);
    ck_assert_int_eq(roof_bound(1, 3, 1, 0, 1), BOUND_L2); /* dispatch only matters for compute */
    ck_assert_str_eq(roof_bound_name(BOUND_DRAM), "dram");
    ck_assert_str_eq(roof_bound_name(BOUND_NONE), "none");
}
END_TEST

START_TEST(test_util_rule)
{
    hw_gpu g = toy();
    double sm, dr;
    /* 1.024e14 FLOP/s peak bf16; 5.12e10 FLOP in 1 ms = 50%; 2.5e8 B in 1 ms of 1 TB/s = 25% */
    roof_util(&g, (int64_t)5.12e10, 1, DT_BF16, (int64_t)2.5e8, 1e-3, 1000, &sm, &dr);
    ck_assert_double_eq_tol(sm, 0.5, 1e-12);
    ck_assert_double_eq_tol(dr, 0.25, 1e-12);
    roof_util(&g, 1, 1, DT_BF16, 1, 0, 1000, &sm, &dr); /* no time: 0, not NaN */
    ck_assert(sm == 0 && dr == 0);
}
END_TEST

static Suite *roof_suite(void)
{
    Suite *s = suite_create("roof");
    TCase *t = tcase_create("rates");
    tcase_add_test(t, test_compute_rates);
    tcase_add_test(t, test_memory_rates);
    suite_add_tcase(s, t);
    TCase *b = tcase_create("rules");
    tcase_add_test(b, test_bound_rule);
    tcase_add_test(b, test_util_rule);
    suite_add_tcase(s, b);
    return s;
}

KT_TEST_MAIN(roof_suite)
