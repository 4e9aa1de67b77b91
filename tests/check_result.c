/* check_result: execution-model names, result totals from items, and the library's run API
 * (kt_graph, kt_summarize, kt_run's by-model index) on tests/data/tiny.json. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "../src/model/run.h"
#include "ktest.h"

START_TEST(test_exec_names)
{
    for (int x = 0; x < EX_COUNT; x++)
        ck_assert_int_eq(kt_exec_parse(kt_exec_name(x)), x);
    ck_assert_int_eq(kt_exec_parse("gpu"), -1);
    ck_assert_ptr_null(kt_exec_name(EX_COUNT));
    ck_assert_int_eq(EXEC_ALL, EXEC_BSP | EXEC_VF | EXEC_KITSUNE);
}
END_TEST

START_TEST(test_result_sum)
{
    kt_item it[3];
    memset(it, 0, sizeof it);
    it[0].c = (cost_result){.time_s = 1e-3, .flops = 10, .dram_read_bytes = 5, .dram_write_bytes = 7,
                            .l2_bytes = 3, .bound = BOUND_COMPUTE, .sm_util = 0.9, .dram_util = 0.1};
    it[1].c = (cost_result){.time_s = 2e-3, .flops = 1, .dram_read_bytes = 50, .bound = BOUND_DRAM,
                            .sm_util = 0.01, .dram_util = 0.8};
    it[2].c = (cost_result){.bound = BOUND_NONE}; /* a view: no kernel */
    kt_result r;
    memset(&r, 0, sizeof r);
    r.items = it;
    r.nitems = 3;
    result_sum(&r);
    ck_assert_double_eq_tol(r.time_s, 3e-3, 1e-18);
    ck_assert_int_eq(r.flops, 11);
    ck_assert_int_eq(r.dram_read_bytes, 55);
    ck_assert_int_eq(r.dram_write_bytes, 7);
    ck_assert_int_eq(r.kernels, 2);
    ck_assert_double_eq_tol(r.class_time_s[UC_DRAM_LOW], 1e-3, 1e-18); /* SM high, DRAM low */
    ck_assert_double_eq_tol(r.class_time_s[UC_SM_LOW], 2e-3, 1e-18);
}
END_TEST

START_TEST(test_count_sums)
{
    ck_assert_int_eq(kt_count_add(3, 4), 7);
    ck_assert_int_eq(kt_count_add(INT64_MAX - 1, 2), INT64_MAX); /* saturates, no wrap */
    ck_assert_int_eq(kt_count_add(INT64_MAX, INT64_MAX), INT64_MAX);
    ck_assert_int_eq(kt_count_mul(3, 4), 12);
    ck_assert_int_eq(kt_count_mul(INT64_MAX / 2 + 1, 2), INT64_MAX);
    /* three kernels of 4e18 FLOPs each: the old sum wrapped to a negative count */
    kt_item it[3];
    memset(it, 0, sizeof it);
    for (int i = 0; i < 3; i++)
        it[i].c = (cost_result){.time_s = 1, .flops = 4000000000000000000, .bound = BOUND_COMPUTE};
    kt_result r;
    memset(&r, 0, sizeof r);
    r.items = it;
    r.nitems = 3;
    r.clock_MHz = 1000;
    result_sum(&r);
    ck_assert_int_eq(r.flops, INT64_MAX);
    kt_err e;
    err_clear(&e);
    ck_assert_int_eq(result_check(&r, "bsp run", "w.json", &e), -1);
    ck_assert_int_eq(e.code, KT_EINPUT);
    ck_assert_str_eq(e.file, "w.json");
    ck_assert_str_eq(e.msg, "the FLOP count of the bsp run exceeds 9e18, the range of 64-bit "
                            "counters (use smaller parameters)");
    r.nitems = 2;
    result_sum(&r);
    ck_assert_int_eq(r.flops, 8000000000000000000);
    ck_assert_int_eq(result_check(&r, "bsp run", "w.json", &e), 0);
    /* read + write beyond 64 bits although each fits */
    r.dram_read_bytes = r.dram_write_bytes = 5000000000000000000;
    ck_assert_int_eq(result_check(&r, "bsp run", "w.json", &e), -1);
    ck_assert(strstr(e.msg, "the DRAM bytes of the bsp run exceeds") == e.msg);
    r.dram_read_bytes = r.dram_write_bytes = 0;
    /* not finite, or negative: a model error */
    it[1].energy_J = NAN;
    it[1].name = "fc1";
    ck_assert_int_eq(result_check(&r, "vf run", "w.json", &e), -1);
    ck_assert_int_eq(e.code, KT_EINTERNAL);
    ck_assert_str_eq(e.msg, "the energy of kernel \"fc1\" of the vf run is not a finite number "
                            ">= 0 (a model error)");
    it[1].energy_J = 0;
    r.e_tensor_J = -1e-25;
    ck_assert_int_eq(result_check(&r, "vf run", "w.json", &e), -1);
    r.e_tensor_J = 0;
    it[0].c.time_s = INFINITY;
    ck_assert_int_eq(result_check(&r, "vf run", "w.json", &e), -1);
    ck_assert_str_eq(e.msg, "the time of kernel \"?\" of the vf run is not a finite number >= 0 "
                            "(a model error)");
}
END_TEST

START_TEST(test_run_api)
{
    arena a = {0};
    wl_graph g;
    kt_err e;
    err_clear(&e);
    kt_test_wl("tests/data/tiny.json", &a, &g);
    const wl_graph *run_g;
    ck_assert_int_eq(kt_graph(&g, 0, OPTIM_NONE, &a, &run_g, &e), 0);
    ck_assert_ptr_eq(run_g, &g);
    kt_summary s;
    ck_assert_int_eq(kt_summarize(&g, &a, &s, &e), 0);
    /* B=64, D=128, H=512: two GEMMs of 2*64*128*512 FLOP; weights w1, w2 (128x512 bf16), b1 (512),
     * g (128); x and y of 64x128 bf16 */
    ck_assert_int_eq(s.ops, 5);
    ck_assert_int_eq(s.kernels, 5);
    ck_assert_int_eq(s.flops_tensor, 2 * 2 * 64 * 128 * 512);
    ck_assert_int_eq(s.weight_bytes, 2 * 128 * 512 * 2 + 512 * 2 + 128 * 2);
    ck_assert_int_eq(s.min_dram_bytes, s.weight_bytes + 2 * 64 * 128 * 2);
    hw_gpu hw = kt_test_hw("a100");
    kt_opts o;
    kt_opts_default(&o);
    o.exec_mask = EXEC_BSP | EXEC_KITSUNE;
    kt_run_result rr;
    ck_assert_msg(kt_run(&hw, &g, &o, &a, &rr, &e) == 0, "%s", e.msg);
    ck_assert_int_eq(rr.nres, 2);
    ck_assert_ptr_eq(rr.by[EX_BSP], &rr.res[0]);
    ck_assert_ptr_null(rr.by[EX_VF]);
    ck_assert_ptr_eq(rr.by[EX_KITSUNE], &rr.res[1]);
    ck_assert_int_eq(rr.res[1].exec_id, EX_KITSUNE);
    arena_free(&a);
}
END_TEST

static Suite *result_suite(void)
{
    Suite *s = suite_create("result");
    TCase *t = tcase_create("result");
    tcase_add_test(t, test_exec_names);
    tcase_add_test(t, test_result_sum);
    tcase_add_test(t, test_count_sums);
    tcase_add_test(t, test_run_api);
    suite_add_tcase(s, t);
    return s;
}

KT_TEST_MAIN(result_suite)
