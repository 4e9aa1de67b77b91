/* roof: the roofline rules every execution model shares (the one home of each equation).
 *
 * Compute rates are per SM: peak per clock x clock x the hw file's achievable fraction. Memory
 * rates are whole-GPU: the peak x achievable fraction, capped by Little's law when few SMs keep
 * few bytes in flight. L2 and the SMs share a clock domain; DRAM does not. */
#include "roof.h"

/* SFU throughput relative to FP32 FMA lanes: 16 vs 64 (CC 8.x) and 16 vs 128 (CC 9.0) results
 * per clock per SM (CUDA C++ Programming Guide, arithmetic instructions table); we use
 * simt_fp32_flop_per_clk_per_sm / 8 (= 16 per clk on A100: 128/8). */
enum { SFU_PER_FP32_FLOP_DIV = 8 };
/* Each SM has 4 sub-partitions, each issuing one warp-instruction per clock (CC 7.0-10.0;
 * NVIDIA Volta/Ampere/Hopper tuning guides, "SM" sections); a warp is 32 threads. */
enum { WARP_ISSUE_PER_CLK_PER_SM = 4 };

double roof_tensor_rate(const hw_gpu *g, dtype d, double clock_MHz)
{
    return hw_tensor_flops_per_sm(g, d, clock_MHz) * g->tensor_frac;
}

double roof_simt_rate(const hw_gpu *g, double clock_MHz)
{
    return hw_simt_flops_per_sm(g, clock_MHz) * g->simt_frac;
}

double roof_sfu_rate(const hw_gpu *g, double clock_MHz)
{
    return hw_simt_flops_per_sm(g, clock_MHz) / SFU_PER_FP32_FLOP_DIV * g->simt_frac;
}

double roof_issue_rate(const hw_gpu *g, double clock_MHz)
{
    return WARP_ISSUE_PER_CLK_PER_SM * (double)WARP_THREADS * clock_MHz * 1e6 * g->simt_frac;
}

double roof_peak_flops(const hw_gpu *g, int tensor, dtype d, double clock_MHz)
{
    if (tensor && roof_tensor_rate(g, d, clock_MHz) > 0)
        return hw_tensor_flops_per_sm(g, d, clock_MHz) * g->sm_count;
    return hw_simt_flops_per_sm(g, clock_MHz) * g->sm_count;
}

double roof_inflight_full(const hw_gpu *g)
{
    return (double)g->max_threads_per_sm * ROOF_INFLIGHT_BYTES_PER_THREAD;
}

double roof_little(double peak_Bps, double lat_ns, int active_sms, double inflight)
{
    if (lat_ns <= 0)
        return peak_Bps;
    double little = (double)active_sms * inflight / (lat_ns * 1e-9);
    return little < peak_Bps ? little : peak_Bps;
}

double roof_dram_Bps(const hw_gpu *g, int active_sms, double inflight)
{
    return roof_little(g->dram_bandwidth_GBps * 1e9 * g->dram_frac, g->dram_latency_ns,
                       active_sms, inflight);
}

double roof_l2_Bps(const hw_gpu *g, int active_sms, double inflight, double clock_MHz)
{
    return roof_little(g->l2_bandwidth_GBps * 1e9 * g->l2_frac * (clock_MHz / g->clock_MHz),
                       g->l2_latency_ns, active_sms, inflight);
}

double roof_dram_s(const hw_gpu *g, double bytes)
{
    return bytes / roof_dram_Bps(g, g->sm_count, roof_inflight_full(g));
}

cost_bound roof_bound(double compute_s, double l2_s, double dram_s, double overhead_s,
                      int dispatch_bound)
{
    double body = compute_s;
    cost_bound b = BOUND_COMPUTE;
    if (l2_s > body) {
        body = l2_s;
        b = BOUND_L2;
    }
    if (dram_s > body) {
        body = dram_s;
        b = BOUND_DRAM;
    }
    if (overhead_s > body || (b == BOUND_COMPUTE && dispatch_bound))
        b = BOUND_LATENCY;
    return b;
}

const char *roof_bound_name(cost_bound b)
{
    static const char *const N[] = {"compute", "l2", "dram", "latency", "none"};
    return b >= BOUND_COMPUTE && b <= BOUND_NONE ? N[b] : "none";
}

void roof_util(const hw_gpu *g, int64_t flops, int tensor, dtype d, int64_t dram_bytes,
               double time_s, double clock_MHz, double *sm_util, double *dram_util)
{
    double peak = roof_peak_flops(g, tensor, d, clock_MHz);
    *sm_util = time_s > 0 ? (double)flops / time_s / peak : 0;
    *dram_util = time_s > 0 ? (double)dram_bytes / time_s / (g->dram_bandwidth_GBps * 1e9) : 0;
}
