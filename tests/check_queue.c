/* check_queue: ring-queue bandwidth model against closed forms and the paper's A100 curve. */
#include <stdio.h>

#include "../src/model/hw.h"
#include "../src/model/exec/queue.h"
#include "ktest.h"

static hw_gpu a100(void)
{
    return kt_test_hw("a100");
}

START_TEST(closed_form)
{
    hw_gpu g = a100();
    /* by hand: B_cta = 7219e9 * 0.665 / 108 = 44.45e9 B/s (queue.cta_bytes_per_clk 31.5250 at
     * 1410 MHz); t_sync = 2 * 163 ns = 326 ns */
    double B = 7219e9 * 0.665 / 108, ts = 2 * 163e-9;
    ck_assert_double_eq_tol(q_cta_Bps(&g, g.clock_MHz), B, B * 1e-5);
    B = q_cta_Bps(&g, g.clock_MHz);
    /* a per-SM port: twice the SMs leave one queue's bandwidth as it is */
    hw_gpu big = g;
    big.sm_count *= 2;
    ck_assert_double_eq(q_cta_Bps(&big, g.clock_MHz), B);
    ck_assert_double_eq_tol(q_sync_s(&g), ts, 1e-15);
    double P = 65536;
    ck_assert_double_eq_tol(q_eff_Bps(&g, P, g.clock_MHz), P / (P / B + ts), 1);
    ck_assert_double_eq_tol(q_overhead_frac(&g, P, g.clock_MHz), ts * B / P, 1e-12);
    ck_assert_double_eq_tol(q_loss_factor(&g, P, g.clock_MHz), 1 + ts * B / P, 1e-12);
    /* half the clock halves the transfer rate */
    ck_assert_double_eq_tol(q_cta_Bps(&g, g.clock_MHz / 2), B / 2, B * 1e-9);
}
END_TEST

START_TEST(paper_curve)
{
    hw_gpu g = a100();
    double f = g.clock_MHz;
    /* Kitsune paper: ~12x loss at 1 KB payloads, < 63% overhead at >= 64 KB */
    double loss1k = q_loss_factor(&g, 1024, f);
    ck_assert_msg(loss1k >= 6 && loss1k <= 24, "loss at 1 KiB %g", loss1k);
    ck_assert_msg(q_overhead_frac(&g, 65536, f) < 0.63, "overhead at 64 KiB %g",
                  q_overhead_frac(&g, 65536, f));
    /* ~2 TB/s aggregate for 54 queues at 128-256 KB: accept 1.5-2.5 TB/s */
    for (double P = 131072; P <= 262144; P *= 2) {
        double agg = q_aggregate_Bps(&g, 54, P, Q_DEPTH_DEFAULT, f);
        ck_assert_msg(agg > 1.5e12 && agg < 2.5e12, "aggregate at %g B: %g", P, agg);
    }
    /* effective bandwidth grows with the payload */
    ck_assert(q_eff_Bps(&g, 4096, f) > q_eff_Bps(&g, 1024, f));
}
END_TEST

START_TEST(spill_and_payload)
{
    ck_assert_double_eq(q_spill_frac(10, 20), 0);
    ck_assert_double_eq_tol(q_spill_frac(40, 10), 0.75, 1e-12);
    ck_assert_double_eq(q_spill_frac(40, 0), 1);
    /* 64 MiB over 32 tiles = 2 MiB -> clamped to 1 MiB; 4 KiB over 32 tiles -> 1 KiB floor */
    ck_assert_int_eq(q_payload_bytes(64 << 20, 32), 1 << 20);
    ck_assert_int_eq(q_payload_bytes(4096, 32), 1024);
    ck_assert_int_eq(q_payload_bytes(512, 4), 512); /* a tensor smaller than the floor */
    ck_assert_int_eq(q_payload_bytes(4 << 20, 32), 131072);
    /* spilled storage: aggregate falls toward DRAM speed */
    hw_gpu g = a100();
    double in_l2 = q_aggregate_Bps(&g, 54, 262144, 2, g.clock_MHz);
    double spilled = q_aggregate_Bps(&g, 54, 1048576, 2, g.clock_MHz); /* 108 MiB > 40 MiB */
    ck_assert(spilled < 54 * q_eff_Bps(&g, 1048576, g.clock_MHz));
    ck_assert(in_l2 > 0 && spilled > 0);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("queue");
    TCase *t = tcase_create("queue");
    tcase_add_test(t, closed_form);
    tcase_add_test(t, paper_curve);
    tcase_add_test(t, spill_and_payload);
    suite_add_tcase(s, t);
    return s;
}

KT_TEST_MAIN(suite)
