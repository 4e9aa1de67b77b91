/* hw: GPU hardware description - peaks and capacities derived from its per-SM, per-clock
 * fields (io/hw_json.c reads and validates the file). */
#include "hw.h"

#include <string.h>

double hw_tensor_flops_per_sm(const hw_gpu *g, dtype d, double clock_MHz)
{
    return g->tensor_flop_per_clk_per_sm[d] * clock_MHz * 1e6;
}

double hw_simt_flops_per_sm(const hw_gpu *g, double clock_MHz)
{
    return g->simt_fp32_flop_per_clk_per_sm * clock_MHz * 1e6;
}

double hw_l2_bytes(const hw_gpu *g)
{
    return g->l2_capacity_MiB * 1048576.0;
}

double hw_smem_bytes(const hw_gpu *g)
{
    return g->smem_per_sm_KiB * 1024.0;
}

double hw_l2_persist_bytes(const hw_gpu *g)
{
    double l2 = hw_l2_bytes(g), p = g->l2_persisting_max_MiB * 1048576.0;
    return p > 0 && p < l2 ? p : l2;
}

double hw_ring_evicted_frac(const hw_gpu *g, double footprint_bytes, double *read_back_frac)
{
    int n = g->ring_reuse_n;
    *read_back_frac = 0;
    if (n < 1)
        return 0;
    const double *x = g->ring_reuse_footprint_MiB, *wb = g->ring_written_back_frac,
                 *rb = g->ring_read_back_frac;
    double f = footprint_bytes / 1048576.0;
    if (!(f > x[0])) { /* NaN too */
        *read_back_frac = rb[0];
        return wb[0];
    }
    if (f >= x[n - 1]) {
        *read_back_frac = rb[n - 1];
        return wb[n - 1];
    }
    int i = 1;
    while (x[i] < f)
        i++;
    double t = (f - x[i - 1]) / (x[i] - x[i - 1]);
    *read_back_frac = rb[i - 1] + t * (rb[i] - rb[i - 1]);
    return wb[i - 1] + t * (wb[i] - wb[i - 1]);
}

int hw_has_stage_body(const hw_gpu *g)
{
    return g->body_load_GBps > 0;
}

double hw_reg_bytes_per_thread(const hw_gpu *g)
{
    double b = g->registers_per_sm_KiB * 1024.0 / g->max_threads_per_sm;
    return b > HW_MIN_REG_BYTES_PER_THREAD ? b : HW_MIN_REG_BYTES_PER_THREAD;
}

/* h with the fields hw_same_timing ignores cleared (the copy keeps h's padding bytes: zero when h
 * came from hw_from_json or a memcpy of it). */
static void timing_only(const hw_gpu *h, hw_gpu *out)
{
    memcpy(out, h, sizeof *out);
    memset(out->name, 0, sizeof out->name);
    memset(out->description, 0, sizeof out->description);
    out->clock_min_MHz = 0;
    memset(out->tensor_pJ_per_flop, 0, sizeof out->tensor_pJ_per_flop);
    out->simt_fp32_pJ_per_flop = out->dram_pJ_per_byte = out->l2_pJ_per_byte = 0;
    out->smem_pJ_per_byte = out->rf_pJ_per_byte = 0;
    out->idle_W = out->static_W = out->tdp_W = 0;
    out->voltage_min_V = out->voltage_max_V = out->knee_clock_MHz = 0;
    out->measured = out->measured_fields = 0;
    memset(out->measured_date, 0, sizeof out->measured_date);
    memset(out->measured_gpu, 0, sizeof out->measured_gpu);
}

int hw_same_timing(const hw_gpu *a, const hw_gpu *b)
{
    hw_gpu x, y;
    timing_only(a, &x);
    timing_only(b, &y);
    return !memcmp(&x, &y, sizeof x);
}
