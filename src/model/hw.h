/* hw: GPU hardware description (units in every field name), loaded from hw/<name>.json. */
#ifndef KT_HW_H
#define KT_HW_H

#include "dtype.h"

/** Most points of the l2.ring_reuse curve. */
enum { HW_RING_REUSE_MAX = 32 };

/** Tensor-core dtypes with a peak (index by dtype; 0 = unsupported). */
typedef struct hw_gpu {
    char name[64];
    char description[160];
    int sm_count;
    double clock_MHz;     /* SM clock at which the peaks hold */
    double clock_min_MHz; /* lowest DVFS clock */
    double tensor_flop_per_clk_per_sm[DT_COUNT];
    double simt_fp32_flop_per_clk_per_sm;
    /* per SM */
    double smem_per_sm_KiB, registers_per_sm_KiB, smem_bandwidth_bytes_per_clk;
    int max_ctas_per_sm, max_threads_per_sm;
    /* memory */
    double dram_capacity_GiB, dram_bandwidth_GBps, dram_latency_ns;
    double l2_capacity_MiB, l2_bandwidth_GBps, l2_latency_ns;
    double l2_persisting_max_MiB; /* L2 a program may set aside for persisting data (queue rings);
                                     0 = no set-aside feature: the whole L2 */
    double l2_atomic_Gops; /* L2 atomic read-modify-write throughput, 0 = not known (no limit) */
    int l2_partitions;     /* L2 halves that each cache what their own SMs read: a line read by SMs
                              of both sides is held twice (1 = one shared L2) */
    /* launch */
    double launch_overhead_us, launch_graph_overhead_us;
    double cta_dispatch_ns; /* GPU-wide time per CTA started by the block scheduler, at clock_MHz */
    double kernel_floor_us; /* duration of a kernel that does nothing but write (start + drain) */
    /* library kernel classes (cuBLAS, ATen) beyond the roofline, each measured by its own
     * microbenchmark (hw/calibrate/apps); see cost.c */
    double gemm_fixed_clk;          /* SM clocks a cuBLAS GEMM kernel takes beyond its terms */
    double gemm_align1_flop_per_clk_per_sm; /* k-loop rate of the alignment-1 kernels */
    double gemm_align1_tile_clk;    /* fixed clocks per alignment-1 CTA tile */
    double gemm_align1_clk_per_out_elem; /* alignment-1 epilogue clocks per output element */
    double gemm_wmma_flop_per_clk_per_sm; /* k-loop rate of the 32x32 wmma alignment-1 kernel */
    double gemm_wmma_tile_clk;      /* its fixed clocks per CTA tile (epilogue included) */
    double col_reduce_partial_ns;   /* ATen column reduction: one serial partial-sum step */
    double col_reduce_fixed_ns;     /* ATen column reduction: the time of its kernel beyond its
                                       rows' round trips, DRAM stream and partial sums */
    double norm_param_grad_ns_per_row; /* ATen's unsplit gamma/beta gradient reduction: per row */
    double unaligned_copy_bytes_per_clk_per_sm; /* element-wise (unvectorized) copies */
    int gemm_multicast_ctas;        /* CTAs of a GEMM cluster that share one operand panel through
                                       TMA multicast (sm_90+ cuBLAS kernels; 1 = none) */
    /* achievable fractions of each peak */
    double tensor_frac, simt_frac, dram_frac, l2_frac;
    /* energy */
    double tensor_pJ_per_flop[DT_COUNT];
    double simt_fp32_pJ_per_flop, dram_pJ_per_byte, l2_pJ_per_byte, smem_pJ_per_byte,
        rf_pJ_per_byte;
    /* power and DVFS */
    double idle_W, static_W, tdp_W;
    double voltage_min_V, voltage_max_V, knee_clock_MHz;
    /* queues (Kitsune ring queues through L2) */
    double queue_atomic_latency_ns, queue_sync_round_trips_per_tile;
    double queue_cta_bytes_per_clk; /* one CTA's queue transfer rate through its SM's L2 port
                                       (0: l2 bandwidth x l2_frac / SMs at clock_MHz) */
    int queue_rings_pinned; /* 1: rings are held in the persisting-L2 set-aside (Kitsune's
                               hardware; beyond it they spill); 0: ordinary L2 lines (a software
                               runtime), evicted as l2.ring_reuse measures */
    /* l2.ring_reuse: how much of a ring queue's lines L2 evicts, by the ring's footprint (the
     * L2 bytes a slot's reuse spans); measured (hw/calibrate/l2_lru.cu ring). 0 points: none */
    int ring_reuse_n;
    double ring_reuse_footprint_MiB[HW_RING_REUSE_MAX]; /* increasing */
    double ring_written_back_frac[HW_RING_REUSE_MAX]; /* evicted dirty before the slot's rewrite */
    double ring_read_back_frac[HW_RING_REUSE_MAX];    /* evicted before a reader half a ring
                                                          behind its writer came */
    /* stage bodies of a real pipeline runtime (optional "stage_body" section; 0 = absent: every
     * stage body reaches its roofline share of the SM, as the bulk-synchronous kernels do). A
     * CTA works on one tile at a time: per tile it pays its queue hand-offs, then loads, gathers,
     * math and stores at these per-SM rates of the runtime's code (pipe.c, stage_body_s) */
    double body_handoff_ns;        /* one queue transfer's synchronization (pop or push) */
    double body_poll_ns;           /* per queue transfer: the spin on its counter that a CTA's
                                      busy time leaves out (the first poll of even a ready
                                      counter is an L2 round trip), paid beside handoff_ns */
    double body_load_GBps;         /* a SIMT stage's loads (queue slots, streamed inputs) */
    double body_operand_GBps;      /* a tensor-core stage's operand loads, staged through shared
                                      memory in K-chunks */
    double body_gather_GBps;       /* rows gathered through an index */
    double body_store_GBps;        /* stores of the stage's outputs */
    double body_tensor_GFLOPps;    /* tensor-core math */
    double body_simt_GFLOPps;      /* SIMT math */
    double body_coresident_slowdown_frac; /* per extra CTA on the same SM: how much longer the
                                             rate-bound part of a tile takes */
    int body_ctas_per_sm;          /* CTAs of the runtime's one kernel per SM (1 = one per SM) */
    double body_staging_bytes_per_row; /* shared memory a CTA stages its streamed operand in, per
                                          tile row (the rest holds its resident weights) */
    /* provenance */
    int measured; /* 1 when a calibration merged measured values */
    char measured_date[32];
    char measured_gpu[64]; /* the GPU the values were measured on */
    int measured_fields;   /* how many fields were measured */
} hw_gpu;

/** Peak FLOP/s of one SM on the tensor cores for dtype d at clock_MHz (0 if unsupported). */
double hw_tensor_flops_per_sm(const hw_gpu *g, dtype d, double clock_MHz);
/** Peak fp32 FLOP/s of one SM on the SIMT (CUDA) cores at clock_MHz. */
double hw_simt_flops_per_sm(const hw_gpu *g, double clock_MHz);
/** L2 capacity in bytes. */
double hw_l2_bytes(const hw_gpu *g);
/** Shared memory per SM in bytes. */
double hw_smem_bytes(const hw_gpu *g);
/** Bytes of L2 queue rings may hold: l2.persisting_max_MiB, or all of L2 where the GPU has no
 *  set-aside (compute capability < 8.0). */
double hw_l2_persist_bytes(const hw_gpu *g);
/** The fraction of a ring's lines written back to DRAM (evicted dirty before their slot is
 *  rewritten) when its slot's reuse spans footprint_bytes of L2, from the l2.ring_reuse curve
 *  (linear between its points, its end values beyond them); *read_back_frac: the fraction
 *  evicted before their reader came. 0 (both) without a curve. */
double hw_ring_evicted_frac(const hw_gpu *g, double footprint_bytes, double *read_back_frac);
/** 1 when the hw describes a pipeline runtime's stage bodies (the "stage_body" section). */
int hw_has_stage_body(const hw_gpu *g);
/** 1 when a and b differ at most in the fields that only energy and power accounting read
 *  (energy.*, power.*, dvfs.*, clock_min_MHz, and the name, description and provenance): runs
 *  on one are then the runs on the other before their energy and limits (run.h,
 *  kt_run_times). Compares the bytes of copies with those fields cleared: 0 may also mean
 *  equal values stored differently (-0.0 and 0.0, or padding bytes of a struct assignment;
 *  hw_from_json clears them), never the reverse. */
int hw_same_timing(const hw_gpu *a, const hw_gpu *b);
/** Least register-file bytes a kernel's thread needs: 32 registers of 4 bytes (what full
 *  occupancy leaves on every NVIDIA GPU since Kepler, 64K registers for 2048 threads; real
 *  kernels use 16-255). A register file smaller than this per resident thread limits
 *  occupancy; the model does not know kernels' own register counts, so a larger one changes
 *  nothing. */
#define HW_MIN_REG_BYTES_PER_THREAD 128.0
/** Register-file bytes each thread gets at full occupancy, at least
 *  HW_MIN_REG_BYTES_PER_THREAD: what a CTA of n threads holds is n times this. */
double hw_reg_bytes_per_thread(const hw_gpu *g);

#endif
