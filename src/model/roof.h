/* roof: the roofline rules every execution model shares - achievable rate of each unit and
 * memory level at an SM clock, the Little's-law cap, the bound rule and the utilization rule. */
#ifndef KT_ROOF_H
#define KT_ROOF_H
#include <stdint.h>

#include "dtype.h"
#include "hw.h"

/** What limits a kernel's time. */
typedef enum cost_bound { BOUND_COMPUTE, BOUND_L2, BOUND_DRAM, BOUND_LATENCY, BOUND_NONE } cost_bound;

/** Bytes one thread keeps in flight (one 128-bit load): the Little's-law cap. */
enum { ROOF_INFLIGHT_BYTES_PER_THREAD = 16 };
/** Threads of a warp (every NVIDIA GPU). */
enum { WARP_THREADS = 32 };

/** Achievable per-SM tensor-core FLOP/s for dtype d at an SM clock (0 when unsupported):
 *  tensor_flop_per_clk_per_sm[d] x clock x tensor_frac. */
double roof_tensor_rate(const hw_gpu *g, dtype d, double clock_MHz);
/** Achievable per-SM fp32 SIMT FLOP/s at a clock: simt_fp32_flop_per_clk_per_sm x clock x simt_frac. */
double roof_simt_rate(const hw_gpu *g, double clock_MHz);
/** Achievable per-SM SFU op/s (1/8 of the fp32 lanes, see roof.c) at a clock. */
double roof_sfu_rate(const hw_gpu *g, double clock_MHz);
/** Achievable per-SM issue rate in thread-instructions/s (4 warp-instructions per clock). */
double roof_issue_rate(const hw_gpu *g, double clock_MHz);
/** Whole-GPU peak FLOP/s (no efficiency factor) of the unit that runs the work: the tensor
 *  cores for dtype d when tensor is 1 and the GPU has them, else the SIMT cores. */
double roof_peak_flops(const hw_gpu *g, int tensor, dtype d, double clock_MHz);
/** Bytes per SM in flight when every thread of a full SM has one 16-byte load outstanding. */
double roof_inflight_full(const hw_gpu *g);
/** Little's law: `active_sms` SMs with `inflight` bytes each outstanding over a round trip of
 *  lat_ns move at most active_sms x inflight / latency bytes/s; the lower of that and peak. */
double roof_little(double peak_Bps, double lat_ns, int active_sms, double inflight);
/** Achievable DRAM bandwidth in bytes/s: bandwidth x dram_frac, Little's-law capped. DRAM runs
 *  on its own clock: no SM-clock dependence. */
double roof_dram_Bps(const hw_gpu *g, int active_sms, double inflight);
/** Achievable L2 bandwidth in bytes/s at an SM clock: bandwidth x l2_frac x clock/clock_MHz,
 *  Little's-law capped (the L2 runs in the SM clock domain). */
double roof_l2_Bps(const hw_gpu *g, int active_sms, double inflight, double clock_MHz);
/** Time to move `bytes` through DRAM with every SM streaming (full in-flight depth). */
double roof_dram_s(const hw_gpu *g, double bytes);
/** The bound rule: compute unless L2 time is larger, DRAM unless L2 or compute is as large;
 *  latency when the fixed overhead (launch + first access) exceeds the body, or when the
 *  compute term is really the CTA dispatch rate (dispatch_bound). */
cost_bound roof_bound(double compute_s, double l2_s, double dram_s, double overhead_s,
                      int dispatch_bound);
/** "compute", "l2", "dram", "latency", "none". */
const char *roof_bound_name(cost_bound b);
/** The utilization rule: achieved fraction of the whole GPU's peak compute (of the unit that
 *  ran the FLOPs) and of peak DRAM bandwidth over time_s (Kitsune paper section 2). */
void roof_util(const hw_gpu *g, int64_t flops, int tensor, dtype d, int64_t dram_bytes,
               double time_s, double clock_MHz, double *sm_util, double *dram_util);

#endif
