/* cost: per-operator roofline with CTA tiles and waves, on k SMs of a GPU. */
#ifndef KT_COST_H
#define KT_COST_H
#include <stdint.h>

#include "hw.h"
#include "op.h"
#include "roof.h"

/** Evaluation context shared by every op of a run. */
typedef struct cost_ctx {
    double clock_MHz;  /* SM clock (DVFS); compute and L2 rates scale with it, DRAM does not */
    int graph_launch;  /* 1: kernels launched from a CUDA graph (launch.graph_overhead_us) */
    int persistent;    /* 1: CTAs loop over tiles (pipeline stages): no per-tile CTA dispatch */
} cost_ctx;

/** CTA tiling of an op on a GPU. */
typedef struct cost_tiling {
    int64_t tiles;       /* CTAs of the kernel */
    int ctas_per_sm;     /* co-resident CTAs per SM (shared memory, threads, CTA limits) */
    int64_t tm, tn;      /* GEMM/attention CTA tile (rows x cols of the output) */
    int64_t split_k;     /* GEMM split-K factor (1 = none) */
    double smem_per_cta_bytes;
    int threads_per_cta;
    double tile_flops_tensor; /* FLOPs one tile executes, padding included */
    double tile_flops_simt, tile_sfu_ops;
    double tile_inst;         /* issued thread-instructions per tile when known (replaces SIMT FLOPs) */
    int64_t l2_bytes;    /* L2 -> SM bytes of the whole kernel, re-reads included */
    int64_t extra_dram_read_bytes; /* operand re-reads that miss L2 (working set > L2) */
    double tile_fixed_clk;    /* SM clocks per tile beyond its FLOPs (alignment-1 GEMM kernels) */
    double tile_kloop_flop_per_clk; /* alignment-1 GEMM kernels: their k-loop rate per SM clock */
    double tail_s;            /* serial work after the parallel body (a column reduction's
                                 partial sums and its fixed cost) */
    int64_t extra_dram_write_bytes; /* DRAM writes beyond the op's outputs (temporaries) */
    int kernels;              /* kernels the op launches (0 = 1): each pays a launch and a
                                 memory round trip (library ops made of several kernels) */
    int64_t chain_rounds;     /* memory round trips one CTA waits for one after another */
    double chain_clk;         /* and its dependent instructions' SM clocks: one CTA's latency
                                 floor; a wave lasts at least that long (latency-bound kernels
                                 whose grid fits one wave) */
} cost_tiling;

typedef struct cost_result {
    double time_s;                 /* launch_s + latency_s + max(compute_s, l2_s, dram_s, chain_s)
                                      + tail_s */
    double compute_s, tensor_s, simt_s, l2_s, dram_s, latency_s, launch_s;
    double dispatch_s;             /* tiles x CTA dispatch time (inside compute_s when larger) */
    double chain_s;                /* waves x one CTA's chain of dependent round trips and
                                      instructions: a lower bound on the body beside compute,
                                      L2 and DRAM (0 when the kernel has none) */
    double tail_s;                 /* serial steps after the body: a GEMM's output write (its
                                      epilogue does not overlap its own mainloop), a column
                                      reduction's partial sums; inside time_s */
    cost_bound bound;
    int64_t flops;                 /* flops_tensor + flops_simt */
    int64_t flops_tensor, flops_simt, sfu_ops;
    dtype cdt;                     /* tensor-core dtype of flops_tensor */
    int tensor_on_simt;            /* 1 when the GPU lacks tensor cores for cdt (SIMT fp32) */
    int64_t dram_read_bytes, dram_write_bytes, l2_bytes;
    int64_t tiles, waves;
    int sms;
    double wave_eff;               /* useful tiles / (waves * slots) */
    double sm_util, dram_util;     /* achieved fraction of peak compute / DRAM bandwidth */
} cost_result;

/** Largest count (FLOPs, bytes) a result reports. Counts are carried in 64 bits: per-op counts
 *  are checked when the graph is built (op.c), kernel terms saturate here (cost.c), and every
 *  sum of counts saturates at INT64_MAX (kt_count_add); a count at or above this limit is
 *  overflow, which kt_run reports as an error instead of printing it (result.h, result_check). */
#define KT_COUNT_LIMIT 9.0e18

/** a + b for counts (>= 0), saturating at INT64_MAX instead of overflowing. */
static inline int64_t kt_count_add(int64_t a, int64_t b)
{
    int64_t s;
    return __builtin_add_overflow(a, b, &s) ? INT64_MAX : s;
}
/** a x b for counts (>= 0), saturating at INT64_MAX. */
static inline int64_t kt_count_mul(int64_t a, int64_t b)
{
    int64_t s;
    return __builtin_mul_overflow(a, b, &s) ? INT64_MAX : s;
}

/** A count computed in double: truncated toward 0 below 2^63, saturating at INT64_MAX beyond
 *  (and for NaN, so that it is reported), 0 when negative. */
static inline int64_t kt_count_of(double v)
{
    return !(v < 9.2e18) ? INT64_MAX : v > 0 ? (int64_t)v : 0;
}

/** Tile an op for the GPU, when it runs on `sms` SMs. */
void cost_tile(const hw_gpu *g, const op_work *w, int sms, cost_tiling *t);
/** Evaluate op work on `sms` SMs. ext_dram_read/ext_dram_write: bytes of the op's own inputs and
 *  outputs that miss L2 (decided by the caller's residency model); the op's internal re-reads are
 *  added here. Pure. */
void cost_eval(const hw_gpu *g, const op_work *w, int sms, const cost_ctx *c, int64_t ext_dram_read,
               int64_t ext_dram_write, cost_result *r);
/** cost_eval's compute_s and l2_bytes alone (a pipeline stage's rate at `sms` CTAs), without
 *  the memory, latency and utilization terms. */
void cost_compute_l2(const hw_gpu *g, const op_work *w, int sms, const cost_ctx *c,
                     double *compute_s, int64_t *l2_bytes);
/** Launch gap in seconds. */
double cost_launch_s(const hw_gpu *g, const cost_ctx *c);

#endif
