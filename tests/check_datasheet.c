/* check_datasheet: a GPU from datasheet numbers - H100 derived from its datasheet over the A100
 * file, compared with hw/h100.json field by field where that file derived the value the same
 * way. */
#include <math.h>
#include <string.h>

#include "../src/io/datasheet.h"
#include "../src/io/hw_json.h"
#include "ktest.h"

/* H100 SXM5: H100-BLOG table (dense, without sparsity), FP32 at the 1980 MHz boost. */
static void h100_sheet(ds_sheet *s)
{
    memset(s, 0, sizeof *s);
    snprintf(s->name, sizeof s->name, "h100");
    snprintf(s->source, sizeof s->source, "H100-BLOG");
    s->sm_count = 132;
    s->clock_MHz = 1830;
    s->tflops[DT_FP16] = s->tflops[DT_BF16] = 989.4;
    s->tflops[DT_TF32] = 494.7;
    s->tflops[DT_FP8] = 1978.9;
    s->tflops_given[DT_FP16] = s->tflops_given[DT_BF16] = 1;
    s->tflops_given[DT_TF32] = s->tflops_given[DT_FP8] = 1;
    s->fp32_tflops = 66.9;
    s->fp32_clock_MHz = 1980;
    s->dram_GBps = 3350;
    s->dram_GB = 80;
    s->l2_MiB = 50;
    s->tdp_W = 700;
}

START_TEST(test_h100_from_datasheet)
{
    ds_sheet s;
    h100_sheet(&s);
    cJSON *base = kt_test_hw_tree("a100");
    kt_err e;
    err_clear(&e);
    cJSON *t = ds_derive(&s, base, "a100", &e);
    ck_assert_msg(t != NULL, "%s: %s", e.path, e.msg);
    hw_gpu g, h = kt_test_hw("h100");
    ck_assert_msg(hw_from_json(t, "new.json", &g, &e) == 0, "%s: %s", e.path, e.msg);
    /* given */
    ck_assert_int_eq(g.sm_count, h.sm_count);
    ck_assert_double_eq(g.clock_MHz, h.clock_MHz);
    ck_assert_double_eq(g.dram_bandwidth_GBps, h.dram_bandwidth_GBps);
    ck_assert_double_eq(g.dram_capacity_GiB, h.dram_capacity_GiB);
    ck_assert_double_eq(g.l2_capacity_MiB, h.l2_capacity_MiB);
    ck_assert_double_eq(g.tdp_W, h.tdp_W);
    /* derived as hw/h100.json derives them: TFLOP/s / (SMs x clock), the L2's 5120 B/clk and
     * the CTA dispatch's 1.21 SM clocks at 1830 MHz */
    for (int d = 0; d < DT_COUNT; d++)
        ck_assert_msg(g.tensor_flop_per_clk_per_sm[d] == h.tensor_flop_per_clk_per_sm[d],
                      "%s: %g, h100.json %g", dt_name((dtype)d), g.tensor_flop_per_clk_per_sm[d],
                      h.tensor_flop_per_clk_per_sm[d]);
    ck_assert_double_eq(g.simt_fp32_flop_per_clk_per_sm, h.simt_fp32_flop_per_clk_per_sm);
    ck_assert_double_eq(g.l2_bandwidth_GBps, h.l2_bandwidth_GBps);
    ck_assert_double_eq(g.cta_dispatch_ns, h.cta_dispatch_ns);
    /* the base's, and not calibrated */
    ck_assert_double_eq(g.smem_per_sm_KiB, 164);
    ck_assert_int_eq(g.measured, 0);
    /* every numeric field has a sources entry saying what it is */
    const cJSON *src = cJSON_GetObjectItemCaseSensitive(t, "sources");
    const cJSON *bf = cJSON_GetObjectItemCaseSensitive(src, "tensor_flop_per_clk_per_sm.bf16");
    ck_assert(cJSON_IsString(bf));
    ck_assert_str_eq(bf->valuestring, "D, derived: 989.4 TFLOP/s / (132 SMs x 1830 MHz) = 4095.88 "
                                      "-> 4096 FLOP/clk/SM (H100-BLOG)");
    const cJSON *sm = cJSON_GetObjectItemCaseSensitive(src, "sm.smem_per_sm_KiB");
    ck_assert(cJSON_IsString(sm) && !strncmp(sm->valuestring, "E: as a100 (a100: ", 18));
    cJSON_Delete(t);
    cJSON_Delete(base);
}
END_TEST

/* A dtype without a figure gets no tensor cores; a missing figure is an error naming it. */
START_TEST(test_missing_figures)
{
    ds_sheet s;
    h100_sheet(&s);
    s.tflops_given[DT_FP8] = 0;
    cJSON *base = kt_test_hw_tree("a100");
    kt_err e;
    err_clear(&e);
    cJSON *t = ds_derive(&s, base, "a100", &e);
    hw_gpu g;
    ck_assert(t != NULL && hw_from_json(t, "new.json", &g, &e) == 0);
    ck_assert_double_eq(g.tensor_flop_per_clk_per_sm[DT_FP8], 0);
    cJSON_Delete(t);
    s.tdp_W = 0;
    ck_assert_ptr_null(ds_derive(&s, base, "a100", &e));
    ck_assert_str_eq(e.path, "--tdp-W");
    h100_sheet(&s);
    s.name[0] = 0;
    ck_assert_ptr_null(ds_derive(&s, base, "a100", &e));
    ck_assert_str_eq(e.path, "--name");
    cJSON_Delete(base);
}
END_TEST

static Suite *datasheet_suite(void)
{
    Suite *s = suite_create("datasheet");
    TCase *t = tcase_create("ds_derive");
    tcase_add_test(t, test_h100_from_datasheet);
    tcase_add_test(t, test_missing_figures);
    suite_add_tcase(s, t);
    return s;
}

KT_TEST_MAIN(datasheet_suite)
