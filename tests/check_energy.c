/* check_energy: energy accounting identities and the power-cap (DVFS) model. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ktest.h"
#include "../src/model/cost.h"
#include "../src/model/energy.h"
#include "../src/model/run.h"
#include "../src/model/sched.h"

/* A hand-made GPU with round numbers so the expected energies follow by hand. */
static hw_gpu toy_hw(void)
{
    hw_gpu g;
    memset(&g, 0, sizeof g);
    snprintf(g.name, sizeof g.name, "toy");
    g.sm_count = 100;
    g.clock_MHz = 1000;
    g.clock_min_MHz = 200;
    g.tensor_flop_per_clk_per_sm[DT_BF16] = 1024;
    g.simt_fp32_flop_per_clk_per_sm = 128;
    g.tensor_pJ_per_flop[DT_BF16] = 1.0;
    g.simt_fp32_pJ_per_flop = 5.0;
    g.dram_pJ_per_byte = 30.0;
    g.l2_pJ_per_byte = 10.0;
    g.smem_pJ_per_byte = 1.5;
    g.rf_pJ_per_byte = 0.5;
    g.idle_W = 40;
    g.static_W = 50;
    g.tdp_W = 400;
    g.voltage_min_V = 0.7;
    g.voltage_max_V = 1.0;
    g.knee_clock_MHz = 500;
    return g;
}

/* Pure compute at 1000 MHz taking time_s: at clock f it takes time_s x 1000 / f (the closed
 * form the cap test solves); the item's re-evaluation. */
static int compute_reeval(const void *arg, double clock_MHz, arena *a, cost_result *out)
{
    (void)a;
    const kt_item *base = arg;
    *out = base->c;
    out->tensor_s = out->compute_s = out->time_s = base->c.time_s * 1000.0 / clock_MHz;
    return 0;
}

/* An item that is pure tensor work, compute-bound, with no launch or latency. */
static kt_item compute_item(double flops, double time_s)
{
    kt_item it;
    memset(&it, 0, sizeof it);
    it.name = "gemm";
    it.type = "matmul";
    it.pipeline = -1;
    it.c.flops_tensor = (int64_t)flops;
    it.c.flops = it.c.flops_tensor;
    it.c.cdt = DT_BF16;
    it.c.tensor_s = it.c.compute_s = it.c.time_s = time_s;
    it.c.bound = BOUND_COMPUTE;
    it.reeval = compute_reeval;
    return it;
}

static kt_result one_item_result(kt_item *it)
{
    kt_result r;
    memset(&r, 0, sizeof r);
    r.exec = "bsp";
    r.items = it;
    r.nitems = 1;
    r.clock_MHz = 0;
    result_sum(&r);
    return r;
}

/* ---------------------------------------------------------------------------------- voltage */
START_TEST(test_voltage_curve)
{
    hw_gpu g = toy_hw();
    ck_assert_double_eq_tol(en_voltage_V(&g, 200), 0.7, 1e-12);  /* below knee: floor */
    ck_assert_double_eq_tol(en_voltage_V(&g, 500), 0.7, 1e-12);  /* at the knee */
    ck_assert_double_eq_tol(en_voltage_V(&g, 750), 0.85, 1e-12); /* halfway: 0.7 + 0.3/2 */
    ck_assert_double_eq_tol(en_voltage_V(&g, 1000), 1.0, 1e-12); /* max at clock_MHz */
    g.knee_clock_MHz = 2000; /* knee above the clock: the floor everywhere */
    ck_assert_double_eq_tol(en_voltage_V(&g, 1000), 0.7, 1e-12);
}
END_TEST

/* ---------------------------------------------------------------------------------- en_item */
START_TEST(test_item_by_hand)
{
    hw_gpu g = toy_hw();
    kt_item it;
    memset(&it, 0, sizeof it);
    it.c.flops_tensor = 1000000000000LL; /* 1e12 */
    it.c.flops_simt = 10000000000LL;     /* 1e10 */
    it.c.sfu_ops = 1000000000LL;         /* 1e9 */
    it.c.cdt = DT_BF16;
    it.c.l2_bytes = 1000000000LL;        /* 1e9 */
    it.c.dram_read_bytes = 2000000000LL;
    it.c.dram_write_bytes = 1000000000LL;
    it.c.time_s = 0.01;
    en_item(&g, &it);
    /* all-in matrix 1e12 x 1 pJ = 1 J; smem carve 3 x 1e9 x 1.5 pJ = 0.0045 J;
     * RF carve 1e12 x 1792/4096 B x 0.5 pJ = 0.21875 J */
    ck_assert_double_eq_tol(it.e_smem_J, 0.0045, 1e-12);
    ck_assert_double_eq_tol(it.e_tensor_J, 1.0 - 0.0045 - 0.21875, 1e-12);
    /* SIMT all-in (1e10 + 4 x 1e9) x 5 pJ = 0.07 J; RF carve (8 x 1e10 + 8 x 1e9) x 0.5 pJ */
    ck_assert_double_eq_tol(it.e_simt_J, 0.07 - 0.044, 1e-12);
    ck_assert_double_eq_tol(it.e_rf_J, 0.21875 + 0.044, 1e-12);
    ck_assert_double_eq_tol(it.e_l2_J, 0.01, 1e-12);   /* 1e9 x 10 pJ */
    ck_assert_double_eq_tol(it.e_dram_J, 0.09, 1e-12); /* 3e9 x 30 pJ */
    ck_assert_double_eq_tol(it.e_static_J, 0.5, 1e-12); /* 50 W x 10 ms */
    /* total = the all-in figures + L2 + DRAM + static: carving never adds energy */
    ck_assert_double_eq_tol(it.energy_J, 1.0 + 0.07 + 0.01 + 0.09 + 0.5, 1e-12);
    ck_assert_double_eq_tol(it.avg_power_W, 167.0, 1e-9);
    ck_assert(it.clock_MHz == 1000);
    /* DRAM energy is exactly bytes x pJ/byte */
    ck_assert(it.e_dram_J == (double)(it.c.dram_read_bytes + it.c.dram_write_bytes) *
                                 g.dram_pJ_per_byte * 1e-12);
}
END_TEST

START_TEST(test_item_carve_clamped)
{
    hw_gpu g = toy_hw();
    g.rf_pJ_per_byte = 100; /* absurd RF energy: the carve cannot exceed the all-in figure */
    kt_item it = compute_item(1e12, 0.01);
    it.c.flops_simt = 1000000;
    it.c.l2_bytes = 1000000000LL;
    en_item(&g, &it);
    ck_assert(it.e_tensor_J >= 0 && it.e_simt_J >= 0);
    ck_assert_double_eq_tol(it.e_tensor_J + it.e_simt_J + it.e_smem_J + it.e_rf_J,
                            1e12 * 1e-12 + 1e6 * 5e-12, 1e-12);
}
END_TEST

/* A GEMM so small that the SMEM + RF carve is all of its tensor energy: the rest used to come
 * out as -9.3e-25 J by rounding (mm.json with B=1 on a100), now 0 and kt_run accepts it. */
START_TEST(test_item_carve_rounding)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/data/tools/mm.json", KT_ROOT);
    arena a = {0};
    wl_graph g;
    kt_err e;
    err_clear(&e);
    wl_set b1 = {"B", 1};
    ck_assert_msg(wl_load(path, &b1, 1, 0, &a, &g, &e) == 0, "%s", e.msg);
    hw_gpu hw = kt_test_hw("a100");
    kt_opts o;
    kt_opts_default(&o);
    kt_run_result rr;
    ck_assert_msg(kt_run(&hw, &g, &o, &a, &rr, &e) == 0, "%s", e.msg);
    for (int i = 0; i < rr.nres; i++)
        ck_assert(rr.res[i].e_tensor_J >= 0);
    arena_free(&a);
}
END_TEST

START_TEST(test_item_tensor_on_simt)
{
    hw_gpu g = toy_hw();
    kt_item it = compute_item(1e10, 0.01);
    it.c.cdt = DT_FP8; /* no fp8 energy figure on the toy GPU: SIMT fp32 rate and energy */
    it.c.tensor_on_simt = 1;
    en_item(&g, &it);
    ck_assert(it.e_tensor_J == 0);
    ck_assert_double_eq_tol(it.e_simt_J + it.e_rf_J + it.e_smem_J, 1e10 * 5e-12, 1e-14);
}
END_TEST

/* ------------------------------------------------------------------------------- en_account */
START_TEST(test_account_totals)
{
    hw_gpu g = toy_hw();
    kt_item items[3];
    items[0] = compute_item(2e11, 1e-3);
    items[0].c.l2_bytes = 123456789;
    items[0].c.dram_read_bytes = 555555555;
    items[1] = compute_item(0, 2e-4);
    items[1].c.flops_simt = 7777777;
    items[1].c.sfu_ops = 3333;
    items[1].c.dram_write_bytes = 99999999;
    items[2] = compute_item(0, 0); /* a free view: no time, no energy */
    items[2].c.bound = BOUND_NONE;
    kt_result r = one_item_result(items);
    r.nitems = 3;
    result_sum(&r);
    en_account(&g, &r);
    double sum = 0, dram = 0, st = 0;
    for (int i = 0; i < 3; i++) {
        const kt_item *it = &items[i];
        double parts = it->e_tensor_J + it->e_simt_J + it->e_dram_J + it->e_l2_J + it->e_smem_J +
                       it->e_rf_J + it->e_static_J;
        ck_assert_double_eq_tol(it->energy_J, parts, 1e-15 * (1 + parts));
        sum += it->energy_J;
        dram += (double)(it->c.dram_read_bytes + it->c.dram_write_bytes) * 30e-12;
        st += 50.0 * it->c.time_s;
    }
    ck_assert(items[2].energy_J == 0);
    ck_assert_double_eq_tol(r.energy_J, sum, 1e-14);
    ck_assert_double_eq_tol(r.energy_J, r.e_tensor_J + r.e_simt_J + r.e_dram_J + r.e_l2_J +
                                            r.e_smem_J + r.e_rf_J + r.e_static_J,
                            1e-14);
    ck_assert_double_eq_tol(r.e_dram_J, dram, 1e-15);
    ck_assert_double_eq_tol(r.e_static_J, st, 1e-15);
    ck_assert_double_eq_tol(r.avg_power_W, r.energy_J / 1.2e-3, 1e-9);
    ck_assert(r.clock_MHz == 1000);
}
END_TEST

/* ----------------------------------------------------------------------------- en_power_cap */

/* P(f) of a pure compute item with dyn energy E at 1000 MHz and time T: E V(f)^2 f / (T 1000)
 * + 50 W. Below the 500 MHz knee V = 0.7, so P = cap at f = (cap - 50) T 1000 / (E 0.49). */
START_TEST(test_cap_closed_form)
{
    hw_gpu g = toy_hw();
    kt_item it = compute_item(3e11, 1e-3); /* 0.3 J in 1 ms: 350 W */
    kt_item base = it;
    it.reeval_arg = &base;
    kt_result r = one_item_result(&it);
    en_account(&g, &r);
    ck_assert_double_eq_tol(r.avg_power_W, 350, 1e-9);
    arena a = {0};
    kt_result out;
    ck_assert_int_eq(en_power_cap(&g, &r, 100, &a, &out), 0);
    double f = 50.0 * 1e-3 * 1000 / (0.3 * 0.49);
    ck_assert_double_eq_tol(out.items[0].clock_MHz, f, 0.01);
    ck_assert_double_eq_tol(out.items[0].c.time_s, 1e-3 * 1000 / f, 1e-7);
    ck_assert(out.items[0].avg_power_W <= 100);
    ck_assert_double_eq_tol(out.items[0].avg_power_W, 100, 0.01);
    ck_assert_double_eq_tol(out.clock_MHz, f, 0.01);
    ck_assert(out.power_cap_W == 100);
    /* a changed item is written to a copy: the input stays at its clock */
    ck_assert(out.items != r.items);
    ck_assert(r.items[0].clock_MHz == 1000 && r.items[0].c.time_s == 1e-3);

    /* above the knee: brute-force scan of the closed form for the highest clock under 250 W */
    double best = 0;
    for (double x = 200; x <= 1000; x += 0.01) {
        double v = 0.7 + 0.3 * (x - 500) / 500;
        if (x < 500)
            v = 0.7;
        if (0.3 * v * v * x / 1000 / 1e-3 + 50 <= 250)
            best = x;
    }
    ck_assert_int_eq(en_power_cap(&g, &r, 250, &a, &out), 0);
    ck_assert_double_eq_tol(out.items[0].clock_MHz, best, 0.02);
    ck_assert_int_eq(out.over_cap_items, 0);

    /* a cap below static power cannot be met: clock_min and flagged */
    ck_assert_int_eq(en_power_cap(&g, &r, 40, &a, &out), 0);
    ck_assert(out.items[0].clock_MHz == 200);
    ck_assert_int_eq(out.items[0].over_cap, 1);
    ck_assert_int_eq(out.over_cap_items, 1);
    ck_assert_double_eq_tol(out.time_s, 5e-3, 1e-15);

    ck_assert_int_eq(en_power_cap(&g, &r, 0, &a, &out), -1);
    ck_assert_int_eq(en_power_cap(&g, &r, NAN, &a, &out), -1);
    arena_free(&a);
}
END_TEST

/* GEMM and elementwise add built with op_work + cost_eval on hw/a100.json. */
static int load_a100(hw_gpu *g)
{
    char path[512];
    kt_err e;
    snprintf(path, sizeof path, "%s/hw/a100.json", KT_ROOT);
    return hw_load(path, g, &e);
}

static void gemm_item(const hw_gpu *g, int64_t n, arena *a, kt_item *it)
{
    op_work *wp = arena_calloc(a, 1, sizeof *wp), w; /* the item keeps a pointer to its work */
    memset(&w, 0, sizeof w);
    w.kind = OPK_GEMM;
    w.cdt = DT_BF16;
    w.m = w.n = w.k = n;
    w.batch = 1;
    w.flops_tensor = 2 * n * n * n;
    w.nin = 2;
    w.in_bytes[0] = w.in_bytes[1] = n * n * 2;
    w.in_l2_bytes = 2 * n * n * 2;
    w.out_bytes = n * n * 2;
    cost_ctx c = {.clock_MHz = g->clock_MHz, .graph_launch = 1};
    memset(it, 0, sizeof *it);
    it->name = "gemm";
    it->type = "matmul";
    it->pipeline = -1;
    *wp = w;
    ck_assert_int_eq(sched_kernel_item(g, wp, g->sm_count, &c, w.in_bytes[0] + w.in_bytes[1],
                                       w.out_bytes, a, it), 0);
}

static void add_item(const hw_gpu *g, int64_t elems, arena *a, kt_item *it)
{
    op_work *wp = arena_calloc(a, 1, sizeof *wp), w;
    memset(&w, 0, sizeof w);
    w.kind = OPK_STREAM;
    w.cdt = DT_BF16;
    w.elems = elems;
    w.flops_simt = elems;
    w.nin = 2;
    w.in_bytes[0] = w.in_bytes[1] = elems * 2;
    w.in_l2_bytes = elems * 4;
    w.out_bytes = elems * 2;
    cost_ctx c = {.clock_MHz = g->clock_MHz, .graph_launch = 1};
    memset(it, 0, sizeof *it);
    it->name = "add";
    it->type = "add";
    it->pipeline = -1;
    *wp = w;
    ck_assert_int_eq(sched_kernel_item(g, wp, g->sm_count, &c, w.in_bytes[0] + w.in_bytes[1],
                                       w.out_bytes, a, it), 0);
}

/* bsp-like result on the A100: a compute-bound GEMM, a memory-bound add, a tiny add. */
static kt_result a100_result(const hw_gpu *g, kt_item items[3], arena *a)
{
    gemm_item(g, 3072, a, &items[0]);
    add_item(g, (int64_t)1 << 28, a, &items[1]);
    add_item(g, 1024, a, &items[2]);
    kt_result r;
    memset(&r, 0, sizeof r);
    r.exec = "bsp";
    r.items = items;
    r.nitems = 3;
    r.clock_MHz = g->clock_MHz;
    result_sum(&r);
    en_account(g, &r);
    return r;
}

START_TEST(test_cap_above_changes_nothing)
{
    hw_gpu g;
    ck_assert_int_eq(load_a100(&g), 0);
    kt_item items[3];
    arena a = {0};
    kt_result r = a100_result(&g, items, &a);
    ck_assert(r.items[0].c.bound == BOUND_COMPUTE && r.items[1].c.bound == BOUND_DRAM);
    double pmax = 0;
    for (int i = 0; i < 3; i++)
        pmax = fmax(pmax, items[i].avg_power_W);
    kt_result out;
    ck_assert_int_eq(en_power_cap(&g, &r, pmax * 1.0001, &a, &out), 0);
    ck_assert(out.time_s == r.time_s);
    ck_assert(out.energy_J == r.energy_J);
    ck_assert(out.clock_MHz == r.clock_MHz);
    ck_assert(out.items == r.items); /* nothing changed: the items are shared, not copied */
    for (int i = 0; i < 3; i++) {
        ck_assert(out.items[i].c.time_s == items[i].c.time_s);
        ck_assert(out.items[i].energy_J == items[i].energy_J);
        ck_assert(out.items[i].clock_MHz == g.clock_MHz);
    }
    arena_free(&a);
}
END_TEST

START_TEST(test_cap_monotone_sweep)
{
    hw_gpu g;
    ck_assert_int_eq(load_a100(&g), 0);
    kt_item items[3];
    arena a = {0};
    kt_result r = a100_result(&g, items, &a);
    double prev_t[3] = {0, 0, 0}, prev_f[3] = {1e9, 1e9, 1e9}, prev_total = 0;
    for (double cap = 500; cap >= 20; cap -= 5) {
        kt_result out;
        ck_assert_int_eq(en_power_cap(&g, &r, cap, &a, &out), 0);
        ck_assert(out.time_s >= prev_total);
        ck_assert(out.time_s >= r.time_s);
        prev_total = out.time_s;
        for (int i = 0; i < 3; i++) {
            const kt_item *it = &out.items[i];
            ck_assert(it->c.time_s >= prev_t[i]);
            ck_assert(it->clock_MHz <= prev_f[i]);
            ck_assert(it->clock_MHz >= g.clock_min_MHz && it->clock_MHz <= g.clock_MHz);
            if (it->clock_MHz > g.clock_min_MHz)
                ck_assert(it->avg_power_W <= cap);
            if (it->over_cap)
                ck_assert(it->clock_MHz == g.clock_min_MHz && it->avg_power_W > cap);
            prev_t[i] = it->c.time_s;
            prev_f[i] = it->clock_MHz;
        }
    }
    arena_free(&a);
}
END_TEST

START_TEST(test_cap_memory_bound_slows_less)
{
    hw_gpu g;
    ck_assert_int_eq(load_a100(&g), 0);
    kt_item items[3];
    arena a = {0};
    kt_result r = a100_result(&g, items, &a);
    const double caps_W[] = {250, 150, 110};
    for (int k = 0; k < 3; k++) {
        kt_result out;
        ck_assert_int_eq(en_power_cap(&g, &r, caps_W[k], &a, &out), 0);
        double slow_gemm = out.items[0].c.time_s / items[0].c.time_s;
        double slow_add = out.items[1].c.time_s / items[1].c.time_s;
        ck_assert(slow_gemm > 1.0);
        ck_assert(slow_add < slow_gemm);
        /* a compute-bound GEMM: everything in the SM clock domain (its math and the cuBLAS
         * kernel's fixed clocks) stretches by exactly f0/f; the launch gap, the DRAM round trip,
         * the kernel floor (its start and drain) and the output write (DRAM, after the
         * mainloop) do not */
        double f_ratio = g.clock_MHz / out.items[0].clock_MHz;
        const cost_result *c0 = &items[0].c, *c1 = &out.items[0].c;
        double fixed = c0->launch_s + g.dram_latency_ns * 1e-9 + g.kernel_floor_us * 1e-6 + c0->tail_s;
        ck_assert(slow_gemm <= f_ratio + 1e-12);
        ck_assert_double_eq_tol(c1->time_s - fixed, (c0->time_s - fixed) * f_ratio,
                                1e-9 * c0->time_s);
    }
    arena_free(&a);
}
END_TEST

static Suite *energy_suite(void)
{
    Suite *s = suite_create("energy");
    TCase *tv = tcase_create("en_voltage_V");
    tcase_add_test(tv, test_voltage_curve);
    suite_add_tcase(s, tv);
    TCase *ti = tcase_create("en_item");
    tcase_add_test(ti, test_item_by_hand);
    tcase_add_test(ti, test_item_carve_clamped);
    tcase_add_test(ti, test_item_carve_rounding);
    tcase_add_test(ti, test_item_tensor_on_simt);
    suite_add_tcase(s, ti);
    TCase *ta = tcase_create("en_account");
    tcase_add_test(ta, test_account_totals);
    suite_add_tcase(s, ta);
    TCase *tc = tcase_create("en_power_cap");
    tcase_add_test(tc, test_cap_closed_form);
    tcase_add_test(tc, test_cap_above_changes_nothing);
    tcase_add_test(tc, test_cap_monotone_sweep);
    tcase_add_test(tc, test_cap_memory_bound_slows_less);
    suite_add_tcase(s, tc);
    return s;
}

KT_TEST_MAIN(energy_suite)
