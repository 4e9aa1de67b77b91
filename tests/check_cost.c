/* check_cost: the per-op roofline's corner cases on a synthetic GPU with round numbers (and on
 * the shipped a100/v100 where a real file matters). Expected values are derived by hand. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../src/model/cost.h"
#include "../src/model/op.h"
#include "../src/model/wl.h"
#include "ktest.h"

/* Synthetic GPU: 10 SMs at 1000 MHz; bf16 tensor 1000 FLOP/clk/SM = 1e12 FLOP/s per SM; SIMT
 * 100 FLOP/clk/SM = 1e11 FLOP/s per SM; 1000 GB/s DRAM; all efficiencies 1; zero latencies
 * (which switch the Little's-law cap off) and zero launch gaps unless a test sets them. */
static hw_gpu synth(void)
{
    hw_gpu g;
    memset(&g, 0, sizeof g);
    snprintf(g.name, sizeof g.name, "synth");
    g.sm_count = 10;
    g.clock_MHz = 1000;
    g.clock_min_MHz = 100;
    g.tensor_flop_per_clk_per_sm[DT_BF16] = 1000;
    g.tensor_flop_per_clk_per_sm[DT_FP16] = 1000;
    g.simt_fp32_flop_per_clk_per_sm = 100;
    g.smem_per_sm_KiB = 164;
    g.max_ctas_per_sm = 32;
    g.max_threads_per_sm = 2048;
    g.registers_per_sm_KiB = 256; /* 128 bytes per thread: no register limit */
    g.dram_bandwidth_GBps = 1000;
    g.l2_capacity_MiB = 1;
    g.l2_bandwidth_GBps = 4000;
    g.tensor_frac = g.simt_frac = g.dram_frac = g.l2_frac = 1;
    return g;
}

static const cost_ctx CTX = {.clock_MHz = 1000, .graph_launch = 1};

/* An elementwise op over n fp32 elements, one SIMT FLOP each. */
static op_work stream(int64_t n)
{
    op_work w;
    memset(&w, 0, sizeof w);
    w.kind = OPK_STREAM;
    w.cdt = DT_FP32;
    w.elems = n;
    w.flops_simt = n;
    w.nin = 1;
    w.in_bytes[0] = 4 * n;
    w.in_l2_bytes = 4 * n;
    w.out_bytes = 4 * n;
    return w;
}

/* A GEMM C[m,n] = A[m,k] B[k,n] in dtype d. */
static op_work gemm(int64_t m, int64_t n, int64_t k, dtype d)
{
    op_work w;
    memset(&w, 0, sizeof w);
    w.kind = OPK_GEMM;
    w.cdt = d;
    w.m = m;
    w.n = n;
    w.k = k;
    w.batch = 1;
    w.flops_tensor = 2 * m * n * k;
    w.nin = 2;
    w.in_bytes[0] = m * k * 2;
    w.in_bytes[1] = k * n * 2;
    w.in_l2_bytes = w.in_bytes[0] + w.in_bytes[1];
    w.out_bytes = m * n * 2;
    return w;
}

static hw_gpu load_hw(const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/hw/%s.json", KT_ROOT, name);
    hw_gpu g;
    kt_err e;
    err_clear(&e);
    ck_assert_msg(hw_load(path, &g, &e) == 0, "%s: %s", path, e.msg);
    return g;
}

START_TEST(test_tiles_and_waves)
{
    hw_gpu g = synth();
    /* 128 threads x 4 elements = 512 elements per CTA; 2048/128 = 16 CTAs per SM; 160 slots */
    cost_tiling t;
    op_work w = stream(160 * 512);
    cost_tile(&g, &w, 10, &t);
    ck_assert_int_eq(t.tiles, 160);
    ck_assert_int_eq(t.ctas_per_sm, 16);
    cost_result r;
    cost_eval(&g, &w, 10, &CTX, 0, 0, &r);
    ck_assert_int_eq(r.waves, 1);
    ck_assert_double_eq(r.wave_eff, 1.0);
    /* 81920 FLOPs over 10 SMs x 1e11 FLOP/s */
    ck_assert_double_eq_tol(r.compute_s, 81920 / 1e12, 1e-18);
}
END_TEST

/* sm.registers_per_sm_KiB has an effect: a register file holding fewer than 32 registers per
 * resident thread limits the CTAs per SM (it used to change nothing); more changes nothing. */
START_TEST(test_register_file)
{
    hw_gpu g = synth();
    cost_tiling t;
    op_work w = stream(160 * 512);
    cost_tile(&g, &w, 10, &t);
    ck_assert_int_eq(t.ctas_per_sm, 16); /* 2048 threads / 128 */
    g.registers_per_sm_KiB = 64;         /* 64 KiB / 128 B = 512 threads: 4 CTAs of 128 */
    cost_tile(&g, &w, 10, &t);
    ck_assert_int_eq(t.ctas_per_sm, 4);
    cost_result small, big;
    cost_eval(&g, &w, 10, &CTX, 0, 0, &small);
    g.registers_per_sm_KiB = 1024;
    cost_tile(&g, &w, 10, &t);
    ck_assert_int_eq(t.ctas_per_sm, 16);
    cost_eval(&g, &w, 10, &CTX, 0, 0, &big);
    ck_assert_int_eq(small.waves, 4 * big.waves);
    ck_assert_double_eq_tol(hw_reg_bytes_per_thread(&g), 512, 1e-12);
    g.registers_per_sm_KiB = 16;
    ck_assert_double_eq_tol(hw_reg_bytes_per_thread(&g), HW_MIN_REG_BYTES_PER_THREAD, 1e-12);
}
END_TEST

START_TEST(test_wave_quantization)
{
    hw_gpu g = synth();
    cost_result full, plus1;
    op_work w = stream(160 * 512), w1 = stream(161 * 512);
    cost_eval(&g, &w, 10, &CTX, 0, 0, &full);
    cost_eval(&g, &w1, 10, &CTX, 0, 0, &plus1);
    /* tiles = slots + 1: a second wave holding one CTA doubles the compute time */
    ck_assert_int_eq(plus1.tiles, 161);
    ck_assert_int_eq(plus1.waves, 2);
    ck_assert_double_eq_tol(plus1.wave_eff, 161.0 / 320.0, 1e-12);
    ck_assert_double_eq_tol(plus1.compute_s, 2 * full.compute_s, 1e-18);
}
END_TEST

START_TEST(test_gemm_tiles)
{
    hw_gpu g = synth();
    op_work w = gemm(4096, 4096, 4096, DT_BF16);
    cost_tiling t;
    cost_tile(&g, &w, 10, &t);
    ck_assert_int_eq(t.tm, 128);
    ck_assert_int_eq(t.tn, 128);
    ck_assert_int_eq(t.split_k, 1);
    ck_assert_int_eq(t.tiles, 32 * 32);
    /* 4 stages x (128 + 128) x 32 x 2 B = 64 KiB of shared memory: 164/64 -> 2 CTAs per SM */
    ck_assert_double_eq(t.smem_per_cta_bytes, 65536);
    ck_assert_int_eq(t.ctas_per_sm, 2);
    /* every tile reads a 128 x K panel of A and of B: 1024 x 256 x 4096 x 2 B, plus C once */
    ck_assert_int_eq(t.l2_bytes, 1024LL * 256 * 4096 * 2 + 4096LL * 4096 * 2);
    /* A and B (32 MiB each) exceed the 1 MiB L2: a wave of 20 resident tiles is a 5 x 4 block
     * (wn = floor(sqrt(20)) = 4, wm = 20 / 4 = 5), so A's panels come from DRAM ceil(32/4) = 8
     * times and B's ceil(32/5) = 7 times; beyond the unique 2 x 32 MiB: 13 x 32 MiB re-read */
    ck_assert_int_eq(t.extra_dram_read_bytes, 13LL * 32 * 1024 * 1024);
    /* with a 100 MiB L2 the smaller operand stays resident: no re-reads */
    hw_gpu big = g;
    big.l2_capacity_MiB = 100;
    cost_tile(&big, &w, 10, &t);
    ck_assert_int_eq(t.extra_dram_read_bytes, 0);
    cost_result r;
    cost_eval(&g, &w, 10, &CTX, 0, 0, &r);
    /* 1024 tiles on 20 slots: 52 waves of 2 CTAs x 2*128*128*4096 FLOPs at 1e12 FLOP/s */
    ck_assert_int_eq(r.waves, 52);
    ck_assert_double_eq_tol(r.tensor_s, 52.0 * 2 * 2 * 128 * 128 * 4096 / 1e12, 1e-12);
    ck_assert_int_eq(r.bound, BOUND_COMPUTE);
    /* small M and N get smaller power-of-two tiles: 40 -> 64, 10 -> 16 */
    op_work s = gemm(40, 10, 64, DT_BF16);
    cost_tile(&g, &s, 10, &t);
    ck_assert_int_eq(t.tm, 64);
    ck_assert_int_eq(t.tn, 16);
}
END_TEST

/* TMA multicast (kernels.gemm_multicast_ctas = 2): CTA pairs read the larger operand panel of
 * a tile once, so a 128x128 tile costs 128/2 + 128 = 192 rows of K in L2 instead of 256; a
 * single output tile (no pair to share with) and the alignment-1 kernels (no clusters) keep
 * their own panels. */
START_TEST(test_gemm_multicast)
{
    hw_gpu g = synth();
    g.gemm_multicast_ctas = 2;
    op_work w = gemm(4096, 4096, 4096, DT_BF16);
    cost_tiling t;
    cost_tile(&g, &w, 10, &t);
    ck_assert_int_eq(t.tm, 128);
    ck_assert_int_eq(t.tiles, 1024);
    ck_assert_int_eq(t.l2_bytes, 1024LL * 192 * 4096 * 2 + 4096LL * 4096 * 2);
    /* the DRAM re-reads are set by the wave block, not the L2 reads: 13 x 32 MiB as without */
    ck_assert_int_eq(t.extra_dram_read_bytes, 13LL * 32 * 1024 * 1024);
    op_work one = gemm(128, 128, 4096, DT_BF16); /* one tile, K too short to split 10 ways */
    one.k = 64;
    cost_tile(&g, &one, 10, &t);
    ck_assert_int_eq(t.tiles, 1);
    ck_assert_int_eq(t.l2_bytes, 256LL * 64 * 2 + 128LL * 128 * 2);
    op_work a1 = gemm(4096, 4096, 4096, DT_BF16);
    a1.align1 = 1;
    cost_tile(&g, &a1, 10, &t);
    ck_assert_int_eq(t.l2_bytes, (int64_t)t.tiles * (t.tm + t.tn) * 4096 * 2 + 4096LL * 4096 * 2);
}
END_TEST

START_TEST(test_split_k)
{
    hw_gpu g = synth();
    cost_tiling t;
    /* one 128x128 output tile, K = 8192: split K across the SMs, at most K/256 ways */
    op_work w = gemm(128, 128, 8192, DT_BF16);
    cost_tile(&g, &w, 10, &t);
    ck_assert_int_eq(t.split_k, 10);
    ck_assert_int_eq(t.tiles, 10);
    ck_assert_double_eq(t.tile_flops_tensor, 2.0 * 128 * 128 * 820); /* ceil(8192/10) */
    cost_tile(&g, &w, 108, &t);
    ck_assert_int_eq(t.split_k, 32); /* 8192 / 256 */
    /* a short K is not split */
    op_work s = gemm(128, 128, 300, DT_BF16);
    cost_tile(&g, &s, 108, &t);
    ck_assert_int_eq(t.split_k, 1);
    ck_assert_int_eq(t.tiles, 1);
    /* enough output tiles: no split */
    op_work big = gemm(2048, 2048, 8192, DT_BF16);
    cost_tile(&g, &big, 108, &t);
    ck_assert_int_eq(t.split_k, 1);
    /* split-K pays one extra L2 round trip for the reduction (operands fit a 40 MiB L2: no
     * DRAM re-reads, so the first access is an L2 round trip too) */
    g.l2_latency_ns = 100;
    g.l2_capacity_MiB = 40;
    cost_result r;
    cost_eval(&g, &w, 10, &CTX, 0, 0, &r);
    ck_assert_double_eq_tol(r.latency_s, 200e-9, 1e-15);
}
END_TEST

START_TEST(test_littles_law)
{
    hw_gpu g = synth();
    g.dram_latency_ns = 1000;
    /* bytes in flight per SM: 2048 threads x 16 B = 32 KiB; over 1 us: 32.768 GB/s per SM */
    ck_assert_double_eq_tol(roof_dram_Bps(&g, 1, roof_inflight_full(&g)), 2048.0 * 16 / 1e-6, 1);
    ck_assert_double_eq_tol(roof_dram_Bps(&g, 10, roof_inflight_full(&g)), 10 * 2048.0 * 16 / 1e-6, 1);
    ck_assert_double_eq_tol(roof_dram_Bps(&g, 100, roof_inflight_full(&g)), 1e12, 1); /* capped at the peak */
    /* a 1-CTA kernel moving 1 MB from DRAM: 1e6 / 32.768e9 s */
    op_work w = stream(512);
    cost_result r;
    cost_eval(&g, &w, 10, &CTX, 1000000, 0, &r);
    ck_assert_int_eq(r.tiles, 1);
    ck_assert_double_eq_tol(r.dram_s, 1e6 / (2048.0 * 16 / 1e-6), 1e-15);
    ck_assert_int_eq(r.bound, BOUND_DRAM);
    /* zero latency: the plain peak x efficiency */
    g.dram_latency_ns = 0;
    g.dram_frac = 0.5;
    ck_assert_double_eq_tol(roof_dram_Bps(&g, 1, roof_inflight_full(&g)), 0.5e12, 1);
}
END_TEST

START_TEST(test_latency_bound)
{
    hw_gpu g = load_hw("a100");
    cost_ctx c = {.clock_MHz = g.clock_MHz, .graph_launch = 1};
    op_work w = stream(256); /* 1 KiB in, 1 KiB out */
    cost_result r;
    cost_eval(&g, &w, g.sm_count, &c, 1024, 1024, &r);
    ck_assert_int_eq(r.bound, BOUND_LATENCY);
    ck_assert_double_eq_tol(r.launch_s, 1.0e-6, 1e-15); /* CUDA-graph gap of a100.json */
    /* one DRAM round trip + the kernel floor (start, drain of its writes) */
    ck_assert_double_eq_tol(r.latency_s, 409e-9 + g.kernel_floor_us * 1e-6, 1e-15);
    ck_assert_double_eq_tol(g.kernel_floor_us, 0.70, 1e-12);
    double body = fmax(r.compute_s, fmax(r.l2_s, r.dram_s));
    ck_assert_double_eq_tol(r.time_s, r.launch_s + r.latency_s + body, 1e-15);
    ck_assert(r.launch_s + r.latency_s > 0.5 * r.time_s);
    /* no DRAM reads (all hits): the first access waits one L2 round trip instead */
    cost_eval(&g, &w, g.sm_count, &c, 0, 1024, &r);
    ck_assert_double_eq_tol(r.latency_s, 163e-9 + 0.70e-6, 1e-15);
    /* plain launches */
    cost_ctx plain = {.clock_MHz = g.clock_MHz, .graph_launch = 0};
    cost_eval(&g, &w, g.sm_count, &plain, 0, 1024, &r);
    ck_assert_double_eq_tol(r.launch_s, 4.0e-6, 1e-15);
    ck_assert_double_eq_tol(cost_launch_s(&g, &plain), 4.0e-6, 1e-15);
}
END_TEST

START_TEST(test_simt_fallback)
{
    hw_gpu g = synth();
    g.tensor_flop_per_clk_per_sm[DT_BF16] = 0; /* no bf16 tensor cores */
    op_work w = gemm(256, 256, 256, DT_BF16);
    cost_result r;
    cost_eval(&g, &w, 10, &CTX, 0, 0, &r);
    ck_assert_int_eq(r.tensor_on_simt, 1);
    /* 4 tiles < 10 SMs: one tile per busy SM at the SIMT rate 1e11 FLOP/s */
    ck_assert_int_eq(r.tiles, 4);
    ck_assert_double_eq_tol(r.tensor_s, 2.0 * 128 * 128 * 256 / 1e11, 1e-15);
    /* fp16 has tensor cores: 10x faster per tile */
    op_work h = gemm(256, 256, 256, DT_FP16);
    cost_result rh;
    cost_eval(&g, &h, 10, &CTX, 0, 0, &rh);
    ck_assert_int_eq(rh.tensor_on_simt, 0);
    ck_assert_double_eq_tol(rh.tensor_s, 2.0 * 128 * 128 * 256 / 1e12, 1e-15);
    /* the shipped v100 lacks bf16 tensor cores */
    hw_gpu v = load_hw("v100");
    cost_ctx vc = {.clock_MHz = v.clock_MHz, .graph_launch = 1};
    op_work b = gemm(1024, 1024, 1024, DT_BF16);
    cost_eval(&v, &b, v.sm_count, &vc, 0, 0, &r);
    ck_assert_int_eq(r.tensor_on_simt, 1);
    ck_assert_double_eq(roof_tensor_rate(&v, DT_BF16, v.clock_MHz), 0);
    /* at least the FLOPs over all SIMT lanes at peak */
    ck_assert(r.tensor_s >= 2.0 * 1024 * 1024 * 1024 / (v.sm_count * hw_simt_flops_per_sm(&v, v.clock_MHz)));
}
END_TEST

START_TEST(test_rates_and_free)
{
    hw_gpu g = synth();
    g.tensor_frac = 0.5;
    ck_assert_double_eq_tol(roof_tensor_rate(&g, DT_BF16, 1000), 0.5e12, 1);
    ck_assert_double_eq_tol(roof_tensor_rate(&g, DT_BF16, 500), 0.25e12, 1); /* DVFS scales it */
    ck_assert_double_eq_tol(roof_simt_rate(&g, 1000), 1e11, 1);
    ck_assert_double_eq_tol(roof_l2_Bps(&g, 10, roof_inflight_full(&g), 500), 2e12, 1); /* L2 scales with the clock */
    op_work w;
    memset(&w, 0, sizeof w);
    w.kind = OPK_FREE;
    cost_result r;
    cost_eval(&g, &w, 10, &CTX, 0, 0, &r);
    ck_assert_int_eq(r.bound, BOUND_NONE);
    ck_assert_double_eq(r.time_s, 0);
    ck_assert_str_eq(roof_bound_name(BOUND_COMPUTE), "compute");
    ck_assert_str_eq(roof_bound_name(BOUND_L2), "l2");
    ck_assert_str_eq(roof_bound_name(BOUND_DRAM), "dram");
    ck_assert_str_eq(roof_bound_name(BOUND_LATENCY), "latency");
}
END_TEST

START_TEST(test_bounds)
{
    hw_gpu g = synth();
    /* a large elementwise op: 1e8 elements, 8e8 DRAM bytes at 1e12 B/s = 0.8 ms vs
     * 1e8 FLOPs at 1e12 FLOP/s = 0.1 ms: DRAM bound */
    op_work w = stream(100000000);
    cost_result r;
    cost_eval(&g, &w, 10, &CTX, w.in_bytes[0], w.out_bytes, &r);
    ck_assert_int_eq(r.bound, BOUND_DRAM);
    ck_assert_double_eq_tol(r.dram_s, 8e8 / 1e12, 1e-12);
    ck_assert_int_eq(r.dram_read_bytes, 400000000);
    ck_assert_int_eq(r.dram_write_bytes, 400000000);
    /* the same op with every input in L2 and a slow L2: L2 bound */
    g.l2_bandwidth_GBps = 100;
    cost_eval(&g, &w, 10, &CTX, 0, 0, &r);
    ck_assert_int_eq(r.bound, BOUND_L2);
    ck_assert_double_eq_tol(r.l2_s, 8e8 / 1e11, 1e-12);
}
END_TEST


/* The block scheduler starts CTAs at a finite rate: n tiny CTAs cannot take less than
 * n x cta_dispatch_ns, whatever the bandwidth; persistent kernels (pipeline stages) skip it. */
START_TEST(test_cta_dispatch)
{
    hw_gpu g = synth();
    g.cta_dispatch_ns = 2.0;
    op_work w = stream(512 * 100000); /* 512 fp32 per CTA (128 threads x 4): 100,000 CTAs */
    cost_result r;
    cost_eval(&g, &w, g.sm_count, &CTX, 0, 0, &r);
    ck_assert_int_eq(r.tiles, 100000);
    ck_assert_double_eq_tol(r.dispatch_s, 100000 * 2.0e-9, 1e-12);
    ck_assert_double_eq_tol(r.compute_s, 2.0e-4, 1e-12); /* dispatch exceeds the 5.12e-5 s of SIMT work */
    ck_assert_int_eq(r.bound, BOUND_LATENCY);
    cost_ctx p = CTX;
    p.persistent = 1;
    cost_eval(&g, &w, g.sm_count, &p, 0, 0, &r);
    ck_assert(r.dispatch_s == 0);
}
END_TEST


/* Row kernels with measured instruction counts are issue-bound: 4 warp-instructions per clock
 * per SM. 1600 rows of 2048 on 10 SMs, one row per 128-thread CTA, 16 CTAs per SM: 10 waves of
 * 16 CTAs, each 1000 + 2 x 2048 = 5096 thread-instructions at 128 per ns. */
START_TEST(test_row_instructions)
{
    hw_gpu g = synth();
    op_work w;
    memset(&w, 0, sizeof w);
    w.kind = OPK_ROW;
    w.cdt = DT_FP32;
    w.rows = 1600;
    w.row_len = 2048;
    w.elems = 1600 * 2048;
    w.flops_simt = 8 * w.elems; /* a norm, not a plain reduction */
    w.inst_per_elem = 2;
    w.inst_per_cta = 1000;
    w.nin = 1;
    w.in_bytes[0] = w.in_l2_bytes = w.out_bytes = 4 * w.elems;
    cost_result r;
    cost_eval(&g, &w, g.sm_count, &CTX, 0, 0, &r);
    ck_assert_int_eq(r.tiles, 1600);
    ck_assert_int_eq(r.waves, 10);
    ck_assert_double_eq_tol(r.simt_s, 10 * 16 * 5096 / 128e9, 1e-15);
    cost_ctx p = CTX;
    p.persistent = 1; /* the per-CTA part is paid once per resident CTA, not per row */
    cost_eval(&g, &w, g.sm_count, &p, 0, 0, &r);
    ck_assert_double_eq_tol(r.simt_s, 10 * 16 * 4096 / 128e9, 1e-15);
}
END_TEST

/* ATen's sum over dim 0 of a [R, C] bf16 tensor: a column reduction into C outputs */
static op_work col_sum(int64_t R, int64_t C)
{
    op_work w;
    memset(&w, 0, sizeof w);
    w.kind = OPK_ROW;
    w.type = OP_REDUCE;
    w.cdt = DT_BF16;
    w.col_reduce = 1;
    w.rows = C;     /* outputs */
    w.row_len = R;  /* reduced rows */
    w.elems = R * C;
    w.nin = 1;
    w.in_bytes[0] = w.in_l2_bytes = w.elems * 2;
    w.out_bytes = C * 2;
    w.flops_simt = w.elems;
    return w;
}

/* ATen column reduction (sum over dim 0 of [R, C] bf16) on the H200. The grids and blocks are
 * those the PyTorch profiler recorded on the H200 (hw/calibrate/apps short_probe.py and micro
 * 'reduce'; validation/apps/h200-short-probe.csv, h200-micro-holdout.csv): the model must launch
 * the same kernel. With a global reduction the last CTA sums grid.y partials block.y at a time,
 * after a memset (two kernels). */
START_TEST(test_col_reduce)
{
    hw_gpu g = load_hw("h200");
    static const struct {
        int64_t R, C, gx, gy, threads;
    } seen[] = {
        {256, 64, 1, 1, 128},      {256, 4096, 32, 1, 128},   {1024, 64, 1, 1, 128},
        {1024, 128, 1, 16, 128},   {4096, 64, 1, 32, 128},    {4096, 1024, 8, 64, 128},
        {16384, 4096, 32, 66, 128}, {65536, 512, 4, 528, 128}, {65536, 1024, 8, 264, 128},
        {262144, 64, 1, 2048, 128}, {262144, 128, 1, 2112, 128}, {262144, 256, 2, 1056, 128},
        {262144, 3, 2, 64, 512},    {327660, 512, 4, 528, 128},
    };
    for (size_t i = 0; i < sizeof seen / sizeof seen[0]; i++) {
        op_work w = col_sum(seen[i].R, seen[i].C);
        cost_tiling t;
        cost_tile(&g, &w, g.sm_count, &t);
        ck_assert_msg(t.tiles == seen[i].gx * seen[i].gy && t.threads_per_cta == seen[i].threads,
                      "R=%lld C=%lld: %lld CTAs of %d threads", (long long)seen[i].R,
                      (long long)seen[i].C, (long long)t.tiles, t.threads_per_cta);
        ck_assert_int_eq(t.kernels, seen[i].gy > 1 ? 2 : 0);
    }
    /* R = 262144, C = 128: 2112 CTAs of 32 x 4 threads; each thread sums ceil(65536 / 2112) = 32
     * rows, 4 loads in flight: 8 round trips; the last CTA sums 2112 partials 4 at a time */
    op_work w = col_sum(262144, 128);
    cost_tiling t;
    cost_tile(&g, &w, g.sm_count, &t);
    ck_assert_int_eq(t.chain_rounds, 8);
    ck_assert_double_eq_tol(t.tail_s, (g.col_reduce_fixed_ns + 528 * g.col_reduce_partial_ns) * 1e-9,
                            1e-15);
    cost_ctx c = {.clock_MHz = g.clock_MHz, .graph_launch = 1};
    cost_result r;
    cost_eval(&g, &w, g.sm_count, &c, w.in_bytes[0], w.out_bytes, &r);
    ck_assert_double_eq_tol(r.tail_s, t.tail_s, 1e-15);
    ck_assert(r.time_s >= r.tail_s + (double)w.in_bytes[0] / (4800e9 * g.dram_frac));
    /* 256 rows, 64 outputs: one CTA of 16 x 8 threads, 32 rows a thread (8 round trips to DRAM),
     * no partials: the chain sets the body */
    w = col_sum(256, 64);
    cost_tile(&g, &w, g.sm_count, &t);
    ck_assert_int_eq(t.tiles, 1);
    ck_assert_int_eq(t.chain_rounds, 8);
    ck_assert_double_eq_tol(t.tail_s, g.col_reduce_fixed_ns * 1e-9, 1e-15);
    cost_eval(&g, &w, g.sm_count, &c, w.in_bytes[0], w.out_bytes, &r);
    ck_assert_int_eq(r.bound, BOUND_LATENCY);
    ck_assert_double_eq_tol(r.time_s, r.launch_s + r.latency_s + 8 * g.dram_latency_ns * 1e-9 + r.tail_s,
                            1e-15);
    /* few rows (32 < 16 x 4 and < 256): the block's rows take their own outputs */
    w = col_sum(32, 128);
    cost_tile(&g, &w, g.sm_count, &t);
    ck_assert_int_eq(t.tiles, 1);
    ck_assert_int_eq(t.chain_rounds, 8);
}
END_TEST

/* A one-wave norm (rms_norm over 16 rows of 4096 on the H200): each CTA's 8 thread-iterations
 * wait for 16 DRAM round trips and 8 x 47.03 dependent instructions at 4 clocks; that, not the
 * bytes, sets the body. The H200 took 7.2 us (validation/apps/h200-short-probe.csv). Over many
 * waves the bytes set it again. */
START_TEST(test_norm_chain_wave)
{
    hw_gpu g = load_hw("h200");
    op_work w;
    memset(&w, 0, sizeof w);
    w.kind = OPK_ROW;
    w.type = OP_RMSNORM;
    w.cdt = DT_BF16;
    w.rows = 16;
    w.row_len = 4096;
    w.elems = 16 * 4096;
    w.nin = 2;
    w.in_bytes[0] = w.elems * 2;
    w.in_bytes[1] = 4096 * 2;
    w.in_l2_bytes = w.in_bytes[0] + w.in_bytes[1];
    w.out_bytes = w.elems * 2;
    w.chain_rounds = 16;
    w.chain_inst = 8 * 47.03;
    cost_ctx c = {.clock_MHz = g.clock_MHz, .graph_launch = 1};
    cost_result r;
    cost_eval(&g, &w, g.sm_count, &c, w.in_l2_bytes, w.out_bytes, &r);
    double chain = 16 * g.dram_latency_ns * 1e-9 + 8 * 47.03 * 4 / (g.clock_MHz * 1e6);
    ck_assert_int_eq(r.waves, 1);
    ck_assert_int_eq(r.bound, BOUND_LATENCY);
    ck_assert_double_eq_tol(r.time_s, r.launch_s + r.latency_s + chain, 1e-15);
    /* the same rows read from L2: its round trips */
    cost_eval(&g, &w, g.sm_count, &c, 0, w.out_bytes, &r);
    chain = 16 * g.l2_latency_ns * 1e-9 + 8 * 47.03 * 4 / (g.clock_MHz * 1e6);
    ck_assert_double_eq_tol(r.time_s, r.launch_s + r.latency_s + chain, 1e-15);
    /* 65536 rows: 32 waves of 2112 CTAs would take 32 chains, less than DRAM needs */
    w.rows = 65536 * 16;
    w.elems = w.rows * 4096;
    w.in_bytes[0] = w.elems * 2;
    w.in_l2_bytes = w.in_bytes[0] + w.in_bytes[1];
    w.out_bytes = w.elems * 2;
    cost_eval(&g, &w, g.sm_count, &c, w.in_l2_bytes, w.out_bytes, &r);
    ck_assert_int_eq(r.bound, BOUND_DRAM);
}
END_TEST

/* cuBLAS's alignment-1 kernel for M=262144, N=256, K=63 on the H200: 128x128 tiles (4096 >= 132
 * SMs), one CTA per SM, 32 waves of (2*128*128*63 / align1 rate + tile clocks + per-element
 * clocks x 16384) at 1830 MHz. */
START_TEST(test_gemm_align1)
{
    hw_gpu g = load_hw("h200");
    op_work w = gemm(262144, 256, 63, DT_BF16);
    w.align1 = 1;
    cost_ctx c = {.clock_MHz = g.clock_MHz, .graph_launch = 1};
    cost_result r;
    cost_eval(&g, &w, g.sm_count, &c, w.in_bytes[0] + w.in_bytes[1], w.out_bytes, &r);
    double clk = 2.0 * 128 * 128 * 63 / g.gemm_align1_flop_per_clk_per_sm + g.gemm_align1_tile_clk +
                 g.gemm_align1_clk_per_out_elem * 128 * 128;
    ck_assert_int_eq(r.tiles, 4096);
    ck_assert_int_eq(r.waves, 32);
    ck_assert_double_eq_tol(r.tensor_s, 32 * clk / 1830e6, 1e-12);
    ck_assert_double_eq(r.tail_s, 0); /* its epilogue is inside the tile cost */
    /* a 64-wide side takes 64x64 tiles */
    w = gemm(262144, 3, 128, DT_BF16);
    w.align1 = 1;
    cost_tiling t;
    cost_tile(&g, &w, g.sm_count, &t);
    ck_assert(t.tm == 64 && t.tn == 64);
    ck_assert_int_eq(t.tiles, 4096);
}
END_TEST

/* A library GEMM's output write follows its mainloop (tail = write bytes / DRAM bandwidth) and
 * the kernel carries kernels.gemm_fixed_clk inside its latency; persistent pipeline stages
 * carry neither. */
START_TEST(test_gemm_epilogue_and_fixed)
{
    hw_gpu g = load_hw("h200");
    op_work w = gemm(262144, 256, 256, DT_BF16);
    cost_ctx c = {.clock_MHz = g.clock_MHz, .graph_launch = 1};
    cost_result r;
    cost_eval(&g, &w, g.sm_count, &c, w.in_bytes[0] + w.in_bytes[1], w.out_bytes, &r);
    double bw = g.dram_bandwidth_GBps * 1e9 * g.dram_frac;
    ck_assert_double_eq_tol(r.tail_s, 262144.0 * 256 * 2 / bw, 1e-12);
    ck_assert_double_eq_tol(r.latency_s,
                            g.dram_latency_ns * 1e-9 + g.kernel_floor_us * 1e-6 + g.gemm_fixed_clk / 1830e6,
                            1e-15);
    double reads = (double)(w.in_bytes[0] + w.in_bytes[1]) / bw;
    ck_assert_double_eq_tol(r.time_s,
                            r.launch_s + r.latency_s + fmax(r.compute_s, fmax(r.l2_s, reads)) + r.tail_s,
                            1e-12);
    c.persistent = 1;
    cost_eval(&g, &w, g.sm_count, &c, w.in_bytes[0] + w.in_bytes[1], w.out_bytes, &r);
    ck_assert_double_eq(r.tail_s, 0);
    ck_assert_double_eq_tol(r.latency_s, g.dram_latency_ns * 1e-9, 1e-15);
}
END_TEST

/* ATen's element-wise copy of unaligned rows (concat 63 + 256 columns, 262144 rows): issue
 * bound at kernels.unaligned_copy_bytes_per_clk_per_sm. */
START_TEST(test_unaligned_copy)
{
    hw_gpu g = load_hw("h200");
    op_work w = stream(262144LL * 319);
    w.unaligned = 1;
    cost_ctx c = {.clock_MHz = g.clock_MHz, .graph_launch = 1};
    cost_result r;
    cost_eval(&g, &w, g.sm_count, &c, w.in_bytes[0], w.out_bytes, &r);
    double bytes = (double)(w.in_l2_bytes + w.out_bytes);
    double want = bytes / (g.unaligned_copy_bytes_per_clk_per_sm * 1830e6 * 132);
    ck_assert(r.compute_s >= want * 0.99 && r.compute_s <= want * 1.05); /* wave quantization */
    ck_assert_int_eq(r.bound, BOUND_COMPUTE);
}
END_TEST

/* Eager RoPE (HF rotate_half) on Llama 3 8B prefill's q, 8192 x 4096 bf16 (X = 67.1 MB) with
 * cos/sin of 2048 x 128 bf16: five kernels moving 2X + cos, X, 2X, 2X + sin and 3X through L2
 * (10X + cos + sin), issue-bound at the unaligned-copy rate; X is over half the H200's 60 MiB,
 * so the temporaries (3.5X) go to DRAM and back and x's halves are read again (X). k (16.8 MB)
 * keeps its temporaries in L2. Under vf it is one generated kernel: x, cos and sin in, y out. */
START_TEST(test_rope_eager)
{
    hw_gpu g = load_hw("h200");
    int64_t X = 8192LL * 4096 * 2, cs = 2048LL * 128 * 2;
    op_work w = stream(8192LL * 4096);
    w.type = OP_ROPE;
    w.in_bytes[0] = X;
    w.in_bytes[1] = w.in_bytes[2] = cs;
    w.in_l2_bytes = X + 2 * cs;
    w.out_bytes = X;
    cost_tiling t;
    cost_tile(&g, &w, g.sm_count, &t);
    ck_assert_int_eq(t.kernels, 5);
    ck_assert_int_eq(t.l2_bytes, 10 * X + 2 * cs);
    ck_assert_int_eq(t.extra_dram_read_bytes, X * 9 / 2);
    ck_assert_int_eq(t.extra_dram_write_bytes, X * 7 / 2);
    ck_assert_int_eq(t.tiles, 8192LL * 4096 * 9 / 2 / 512);
    cost_ctx c = {.clock_MHz = g.clock_MHz, .graph_launch = 1};
    cost_result r;
    cost_eval(&g, &w, g.sm_count, &c, X + 2 * cs, X, &r);
    double want = (double)(10 * X + 2 * cs) / (g.unaligned_copy_bytes_per_clk_per_sm * 1830e6 * 132);
    ck_assert(r.compute_s >= want * 0.99 && r.compute_s <= want * 1.05); /* wave quantization */
    ck_assert_int_eq(r.dram_read_bytes, X + 2 * cs + X * 9 / 2);
    ck_assert_int_eq(r.dram_write_bytes, X + X * 7 / 2);
    ck_assert_double_eq_tol(r.launch_s, 5 * g.launch_graph_overhead_us * 1e-6, 1e-15);
    /* k: temporaries stay in L2 */
    op_work k = w;
    k.out_bytes = k.in_bytes[0] = X / 4;
    k.in_l2_bytes = X / 4 + 2 * cs;
    k.elems = w.elems / 4;
    cost_tile(&g, &k, g.sm_count, &t);
    ck_assert_int_eq(t.extra_dram_read_bytes, 0);
    ck_assert_int_eq(t.extra_dram_write_bytes, 0);
    /* generated (vf): the op's own bytes, one kernel */
    w.generated = 1;
    cost_tile(&g, &w, g.sm_count, &t);
    ck_assert_int_le(t.kernels, 1);
    ck_assert_int_eq(t.l2_bytes, X + 2 * cs + X);
}
END_TEST

/* cuBLAS's wmma alignment-1 kernel for tiny batched products (DLRM's 27x27 interaction, K=128,
 * 4096 of them): 32x32 tiles, one per batch, one CTA per SM: ceil(4096 / 132) = 32 waves of
 * (2*32*32*128 / 110.3 + 138) clocks (hw/h200.json kernels.gemm_wmma_*, bmm_probe.py). Its
 * gradient [27, 27] x [27, 128]: the output has 27 rows, so the same kernel, 4 tiles a batch,
 * ceil(16384 / 132) = 125 waves of one 32-deep k step (K = 27 runs a whole one). */
START_TEST(test_gemm_align1_wmma)
{
    hw_gpu g = load_hw("h200");
    op_work w = gemm(27, 27, 128, DT_BF16);
    w.batch = 4096;
    w.align1 = 1;
    cost_tiling t;
    cost_tile(&g, &w, g.sm_count, &t);
    ck_assert(t.tm == 32 && t.tn == 32);
    ck_assert_int_eq(t.tiles, 4096);
    cost_ctx c = {.clock_MHz = g.clock_MHz, .graph_launch = 1};
    cost_result r;
    cost_eval(&g, &w, g.sm_count, &c, 0, 0, &r);
    double clk = 2.0 * 32 * 32 * 128 / 110.3 + 138;
    ck_assert_int_eq(r.waves, 32);
    ck_assert_double_eq_tol(r.tensor_s, 32 * clk / 1830e6, 1e-12);
    op_work gw = gemm(27, 128, 27, DT_BF16);
    gw.batch = 4096;
    gw.align1 = 1;
    cost_tile(&g, &gw, g.sm_count, &t);
    ck_assert(t.tm == 32 && t.tn == 32);
    ck_assert_int_eq(t.tiles, 4 * 4096);
    cost_eval(&g, &gw, g.sm_count, &c, 0, 0, &r);
    ck_assert_int_eq(r.waves, 125);
    ck_assert_double_eq_tol(r.tensor_s, 125 * (2.0 * 32 * 32 * 32 / 110.3 + 138) / 1830e6, 1e-12);
    /* 262144 rows of N = 3 (NeRF's rgb_fc2) stay on the 64x64 kernel */
    op_work nw = gemm(262144, 3, 128, DT_BF16);
    nw.align1 = 1;
    cost_tile(&g, &nw, g.sm_count, &t);
    ck_assert(t.tm == 64 && t.tn == 64);
}
END_TEST

/* Generated kernels (inductor): a row op costs its FLOPs, not ATen's instruction counts, with
 * short rows packed 1024 elements to a CTA; a column reduction is a split reduction of one
 * resident wave (132 SMs x 2048 / 128 threads = 2112 CTAs) instead of ATen's grid and partials. */
START_TEST(test_generated_rows)
{
    hw_gpu g = synth();
    op_work w;
    memset(&w, 0, sizeof w);
    w.kind = OPK_ROW;
    w.type = OP_LAYERNORM;
    w.cdt = DT_FP32;
    w.rows = 1600;
    w.row_len = 128;
    w.elems = 1600 * 128;
    w.flops_simt = 8 * w.elems;
    w.inst_per_elem = 2;
    w.inst_per_cta = 1000;
    w.nin = 1;
    w.in_bytes[0] = w.in_l2_bytes = w.out_bytes = 4 * w.elems;
    w.generated = 1;
    cost_tiling t;
    cost_tile(&g, &w, g.sm_count, &t);
    ck_assert_int_eq(t.tiles, 1600 / 8); /* 8 rows of 128 per CTA */
    ck_assert_double_eq(t.tile_inst, 0);
    ck_assert_double_eq_tol(t.tile_flops_simt, 8.0 * 1024, 1e-9);
    hw_gpu h = load_hw("h200");
    w.type = OP_REDUCE;
    w.col_reduce = 1;
    w.rows = 128;
    w.row_len = 393216;
    w.elems = 128LL * 393216;
    cost_tile(&h, &w, h.sm_count, &t);
    ck_assert_int_eq(t.tiles, 132 * 16);
    ck_assert_double_eq(t.tail_s, 0);
}
END_TEST

/* The dense gradient of an embedding table [R=1000, D=128] bf16 from n=4096 rows. ATen: 30
 * kernels (each a launch and a round trip), the zero fill in 2048-byte CTAs plus two CTAs per
 * index; no L2 atomics (it sorts). Inductor: the fp32 table written (2x the bf16 bytes) and read
 * back; 1024-element CTAs for the fill, the atomic adds and the conversion. */
START_TEST(test_embedding_backward)
{
    hw_gpu g = load_hw("h200");
    op_work w;
    memset(&w, 0, sizeof w);
    w.kind = OPK_SCATTER;
    w.type = OP_EMBEDDING_BWD;
    w.cdt = DT_BF16;
    w.rows = 4096;
    w.row_len = 128;
    w.table_rows = 1000;
    w.elems = 4096 * 128;
    w.nin = 2;
    w.in_bytes[0] = 4096 * 128 * 2;
    w.in_bytes[1] = 4096 * 8;
    w.in_l2_bytes = w.in_bytes[0] + w.in_bytes[1];
    w.out_bytes = 1000 * 128 * 2;
    cost_tiling t;
    cost_tile(&g, &w, g.sm_count, &t);
    ck_assert_int_eq(t.kernels, 30);
    ck_assert_int_eq(t.tiles, 256000 / 2048 + 2 * 4096);
    cost_ctx c = {.clock_MHz = g.clock_MHz, .graph_launch = 1};
    cost_result r;
    cost_eval(&g, &w, g.sm_count, &c, w.in_l2_bytes, w.out_bytes, &r);
    ck_assert_double_eq_tol(r.launch_s, 30 * g.launch_graph_overhead_us * 1e-6, 1e-15);
    ck_assert_int_eq(r.dram_write_bytes, 256000);
    /* a strided dy (contig_bytes): ATen copies it contiguous first, one more kernel and a serial
     * pass of 2 x 1 MiB at the unaligned copy rate (B/clk/SM x 132 SMs x the run's clock: h200's
     * 1830 MHz, then half of it) */
    for (int half = 0; half < 2; half++) {
        cost_ctx ch = {.clock_MHz = half ? 915.0 : 1830.0, .graph_launch = 1};
        cost_result r0, r1;
        w.contig_bytes = 0;
        cost_eval(&g, &w, g.sm_count, &ch, w.in_l2_bytes, w.out_bytes, &r0);
        w.contig_bytes = w.in_bytes[0];
        cost_eval(&g, &w, g.sm_count, &ch, w.in_l2_bytes, w.out_bytes, &r1);
        ck_assert_double_eq_tol(r1.tail_s - r0.tail_s,
                                2.0 * 4096 * 128 * 2 /
                                    (g.unaligned_copy_bytes_per_clk_per_sm * 132 * ch.clock_MHz * 1e6),
                                1e-15);
    }
    cost_tile(&g, &w, g.sm_count, &t);
    ck_assert_int_eq(t.kernels, 31);
    w.generated = 1; /* inductor reads the strided dy in its own kernels: no copy */
    cost_tile(&g, &w, g.sm_count, &t);
    ck_assert_int_eq(t.kernels, 3);
    ck_assert_int_eq(t.extra_dram_write_bytes, 512000);
    ck_assert_int_eq(t.extra_dram_read_bytes, 512000);
    ck_assert_int_eq(t.tiles, 2 * 125 + 512);
    cost_eval(&g, &w, g.sm_count, &c, w.in_l2_bytes, w.out_bytes, &r);
    ck_assert_int_eq(r.dram_write_bytes, 256000 + 512000);
    ck_assert_int_eq(r.dram_read_bytes, w.in_l2_bytes + 512000);
}
END_TEST

/* ---- the conv / batchnorm / sort / scan families: op_work from a small graph (op.c) ---- */

static arena GA;
static wl_graph GG;

static void graph_setup(void)
{
    memset(&GA, 0, sizeof GA);
    wl_init(&GG, "t", &GA);
}

static void graph_teardown(void)
{
    arena_free(&GA);
}

static int GT(const char *name, dtype dt, int nd, const int64_t *d)
{
    kt_err e;
    err_clear(&e);
    int t = wl_add_tensor(&GG, name, nd, d, dt, TK_INTER, &e);
    ck_assert_msg(t >= 0, "tensor %s: %s", name, e.msg);
    return t;
}

/* Op of the test graph, checked, and its work. */
static op_work GW(int type, const int *in, int nin, const int *out, int nout, const wl_attr *at, int nat)
{
    kt_err e;
    err_clear(&e);
    char name[16], msg[256] = "", sub[64] = "";
    snprintf(name, sizeof name, "op%d", GG.nop);
    int o = wl_add_op(&GG, name, type, in, nin, out, nout, at, nat, &e);
    ck_assert_int_ge(o, 0);
    ck_assert_msg(op_check(&GG, &GG.op[o], msg, sizeof msg, sub, sizeof sub) == 0, "%s: %s", sub, msg);
    op_work w;
    ck_assert_int_eq(op_work_of(&GG, &GG.op[o], &w, msg, sizeof msg), 0);
    return w;
}

static wl_attr IA(const char *k, int64_t v)
{
    wl_attr a = {.key = k, .type = WA_INT, .ival = v};
    return a;
}

static wl_attr SA(const char *k, const char *v)
{
    wl_attr a = {.key = k, .type = WA_STR, .sval = v};
    return a;
}

/* The implicit GEMM reads its A panels (im2col of the 3x3 window) through L2: 32 x 64 x 56 x 56
 * NHWC bf16 into 64 channels, M = 100,352 pixels = 784 tiles of 128 rows (N = 64 fits one 64-wide
 * tile, 128x256 and 256x128 need N >= 128): the A panels are 784 x 128 x 576 x 2 B =
 * 115,605,504 B = 9 x the input's 12,845,056 B (each input element read once per tap), the B
 * panels 784 x 64 x 576 x 2 B, the output once. */
START_TEST(test_conv_implicit_gemm)
{
    hw_gpu g = synth();
    int64_t xd[4] = {32, 56, 56, 64}, wd[4] = {64, 3, 3, 64};
    int in[2] = {GT("x", DT_BF16, 4, xd), GT("w", DT_BF16, 4, wd)};
    int y = GT("y", DT_BF16, 4, xd);
    wl_attr at[2] = {IA("padding", 1), SA("layout", "nhwc")};
    op_work w = GW(OP_CONV2D, in, 2, &y, 1, at, 2);
    cost_tiling t;
    cost_tile(&g, &w, 10, &t);
    ck_assert_int_eq(t.tm, 128);
    ck_assert_int_eq(t.tn, 64);
    ck_assert_int_eq(t.tiles, 784);
    int64_t a_panels = 784LL * 128 * 576 * 2, x_bytes = 32LL * 56 * 56 * 64 * 2;
    ck_assert_int_eq(a_panels, 9 * x_bytes);
    ck_assert_int_eq(t.l2_bytes, a_panels + 784LL * 64 * 576 * 2 + x_bytes);
    ck_assert_int_le(t.kernels, 1); /* NHWC: no layout transforms */
}
END_TEST

/* NCHW bf16 on the a100: cuDNN's three layout transforms (x 802,816 B, w 147,456 B, y
 * 1,605,632 B = 2,555,904 B) are three more kernels, each streaming its tensor in and out at the
 * achievable DRAM rate after the GEMM (a tail of 2 x 2,555,904 B / DRAM rate), and 2 x those
 * bytes through L2; they fit half of the 40 MiB L2 (no DRAM spill); on a 1 MiB L2 they spill:
 * one more write and read of each. */
START_TEST(test_conv_layout_transforms)
{
    hw_gpu g = load_hw("a100");
    int64_t xd[4] = {2, 64, 56, 56}, wd[4] = {128, 64, 3, 3}, yd[4] = {2, 128, 56, 56};
    int64_t xh[4] = {2, 56, 56, 64}, wh[4] = {128, 3, 3, 64}, yh[4] = {2, 56, 56, 128};
    int in[2] = {GT("x", DT_BF16, 4, xd), GT("w", DT_BF16, 4, wd)}, y = GT("y", DT_BF16, 4, yd);
    int inh[2] = {GT("xh", DT_BF16, 4, xh), GT("wh", DT_BF16, 4, wh)}, yn = GT("yh", DT_BF16, 4, yh);
    wl_attr p1 = IA("padding", 1), ath[2] = {IA("padding", 1), SA("layout", "nhwc")};
    op_work nchw = GW(OP_CONV2D, in, 2, &y, 1, &p1, 1), nhwc = GW(OP_CONV2D, inh, 2, &yn, 1, ath, 2);
    ck_assert_int_eq(nchw.xform_bytes, 2555904);
    cost_tiling a, b;
    cost_tile(&g, &nchw, g.sm_count, &a);
    cost_tile(&g, &nhwc, g.sm_count, &b);
    ck_assert_int_eq(a.kernels, 4);
    ck_assert_int_eq(a.tiles, b.tiles); /* the same GEMM */
    double bw = fmin(g.dram_bandwidth_GBps * 1e9 * g.dram_frac,
                     g.sm_count * g.max_threads_per_sm * 16.0 / (g.dram_latency_ns * 1e-9));
    ck_assert_double_eq_tol(a.tail_s - b.tail_s, 2.0 * 2555904 / bw, 1e-12);
    ck_assert_int_eq(a.l2_bytes - b.l2_bytes, 2 * 2555904);
    ck_assert_int_eq(a.extra_dram_read_bytes, b.extra_dram_read_bytes);
    cost_ctx c = {.clock_MHz = g.clock_MHz, .graph_launch = 1};
    cost_result r;
    cost_eval(&g, &nchw, g.sm_count, &c, 0, 0, &r);
    ck_assert_double_eq_tol(r.launch_s, 4 * g.launch_graph_overhead_us * 1e-6, 1e-15);
    hw_gpu s = synth(); /* 1 MiB of L2 */
    cost_tile(&s, &nchw, 10, &a);
    cost_tile(&s, &nhwc, 10, &b);
    ck_assert_int_eq(a.extra_dram_write_bytes - b.extra_dram_write_bytes, 2555904);
    ck_assert_int_eq(a.extra_dram_read_bytes - b.extra_dram_read_bytes, 2555904);
}
END_TEST

/* A depthwise 3x3 convolution ([32, 256, 56, 56] bf16, 256 groups) has no tensor-core work: 18
 * SIMT FLOPs per output against 2 x 2 bytes moved; on the a100 it is bound by memory, not by
 * compute. */
START_TEST(test_depthwise_memory_bound)
{
    hw_gpu g = load_hw("a100");
    int64_t xd[4] = {32, 256, 56, 56}, wd[4] = {256, 1, 3, 3};
    int in[2] = {GT("x", DT_BF16, 4, xd), GT("w", DT_BF16, 4, wd)}, y = GT("y", DT_BF16, 4, xd);
    wl_attr at[2] = {IA("padding", 1), IA("groups", 256)};
    op_work w = GW(OP_CONV2D, in, 2, &y, 1, at, 2);
    cost_ctx c = {.clock_MHz = g.clock_MHz, .graph_launch = 1};
    cost_result r;
    cost_eval(&g, &w, g.sm_count, &c, w.in_bytes[0] + w.in_bytes[1], w.out_bytes, &r);
    ck_assert_int_eq(r.flops_tensor, 0);
    ck_assert_double_eq(r.tensor_s, 0);
    ck_assert(r.bound == BOUND_DRAM || r.bound == BOUND_L2);
}
END_TEST

/* Training batchnorm of [32, 64, 112, 112] bf16 on the a100: 51,380,224 B of x, more than the
 * 40 MiB L2, so the elementwise pass reads x from DRAM again; 3 kernels. The statistics run on
 * 64 CTAs (one per channel, 512 threads: 8 KiB in flight each), fewer than the 108 SMs: their
 * pass over x streams at min(peak, 64 x 8192 B / 409 ns) instead of the full grid's rate; the
 * difference is the tail. With 256 channels there is none. */
START_TEST(test_batchnorm_training)
{
    hw_gpu g = load_hw("a100");
    int64_t xd[4] = {32, 64, 112, 112}, cd[1] = {64};
    int in[3] = {GT("x", DT_BF16, 4, xd), GT("g", DT_BF16, 1, cd), GT("b", DT_BF16, 1, cd)};
    int y = GT("y", DT_BF16, 4, xd);
    wl_attr tr = IA("training", 1);
    op_work w = GW(OP_BATCHNORM, in, 3, &y, 1, &tr, 1);
    int64_t xb = 32LL * 64 * 112 * 112 * 2;
    ck_assert_int_eq(w.in_bytes[0], xb);
    cost_tiling t;
    cost_tile(&g, &w, g.sm_count, &t);
    ck_assert_int_eq(t.kernels, 3);
    ck_assert_int_eq(t.extra_dram_read_bytes, xb);
    ck_assert_int_eq(t.l2_bytes, (xb + 128 + 128) + xb + xb);
    double peak = g.dram_bandwidth_GBps * 1e9 * g.dram_frac, lat = g.dram_latency_ns * 1e-9;
    double few = fmin(peak, 64 * 512 * 16.0 / lat), full = fmin(peak, 108 * 2048 * 16.0 / lat);
    ck_assert_double_eq_tol(t.tail_s, (double)xb / few - (double)xb / full, 1e-12);
    ck_assert(t.tail_s > 0);
    int64_t x2[4] = {32, 256, 28, 28}, c2[1] = {256};
    int in2[3] = {GT("x2", DT_BF16, 4, x2), GT("g2", DT_BF16, 1, c2), GT("b2", DT_BF16, 1, c2)};
    int y2 = GT("y2", DT_BF16, 4, x2);
    op_work w2 = GW(OP_BATCHNORM, in2, 3, &y2, 1, &tr, 1);
    cost_tile(&g, &w2, g.sm_count, &t);
    ck_assert_double_eq(t.tail_s, 0);
}
END_TEST

/* topk and sort tilings: ATen's single-block topk runs one CTA per row with roundup(L, 32)
 * threads and re-reads each row from L1/L2 (10 passes of 16-bit keys: no DRAM re-reads); the
 * multi-block topk of 4 x 100,000 fp32 (1.6 MB) re-reads the input 4 more times, from DRAM on
 * a 1 MiB L2; the segmented radix sort's temporaries (720,896 B, check_op) spill when its
 * 196,608 B output exceeds half of a 256 KiB L2. */
START_TEST(test_sort_tiles)
{
    hw_gpu g = synth();
    int64_t xd[2] = {64, 4}, vd[2] = {64, 2};
    int x = GT("x", DT_BF16, 2, xd);
    int out[2] = {GT("v", DT_BF16, 2, vd), GT("i", DT_INT64, 2, vd)};
    wl_attr at[2] = {IA("k", 2), IA("axis", 1)};
    op_work w = GW(OP_TOPK, &x, 1, out, 2, at, 2);
    cost_tiling t;
    cost_tile(&g, &w, 10, &t);
    ck_assert_int_eq(t.tiles, 64);
    ck_assert_int_eq(t.threads_per_cta, 32);
    ck_assert_int_eq(t.kernels, 2);
    ck_assert_int_eq(t.extra_dram_read_bytes, 0);
    /* 10 reads of the 512 B input, the 1280 B of results written, then read and rewritten */
    ck_assert_int_eq(t.l2_bytes, 10 * 512 + 1280 + 2 * 1280);
    int64_t ld[2] = {4, 100000}, lo[2] = {4, 10};
    int xl = GT("xl", DT_FP32, 2, ld);
    int outl[2] = {GT("vl", DT_FP32, 2, lo), GT("il", DT_INT64, 2, lo)};
    wl_attr k10 = IA("k", 10);
    op_work m = GW(OP_TOPK, &xl, 1, outl, 2, &k10, 1);
    cost_tile(&g, &m, 10, &t);
    ck_assert_int_eq(t.tiles, 400000 / 512 + 1); /* 128 threads x 4 elements */
    ck_assert_int_eq(t.extra_dram_read_bytes, 4 * 1600000);
    int64_t sd[2] = {2, 8192};
    int xs = GT("xs", DT_FP32, 2, sd);
    int outs[2] = {GT("vs", DT_FP32, 2, sd), GT("is", DT_INT64, 2, sd)};
    op_work s = GW(OP_SORT, &xs, 1, outs, 2, NULL, 0);
    g.l2_capacity_MiB = 0.25;
    cost_tile(&g, &s, 10, &t);
    ck_assert_int_eq(t.extra_dram_write_bytes, 720896);
    /* the 65,536 B of keys, read twice (histogram, first pass), fit: no re-read from DRAM */
    ck_assert_int_eq(t.extra_dram_read_bytes, 720896);
}
END_TEST

/* cumsum grids (ATen's scan kernels): 6400 rows of 10 along the last axis: 32 rows per
 * 512-thread CTA = 200 CTAs; the 6400 columns of [10, 6400] along axis 0: one thread each, 13
 * CTAs of 512; one 1-D line of 100,000 fp32: a device-wide scan, 196 CTAs of 512 elements. */
START_TEST(test_scan_tiles)
{
    hw_gpu g = synth();
    int64_t rd[2] = {6400, 10}, cd[2] = {10, 6400}, ld[1] = {100000};
    int x = GT("x", DT_FP32, 2, rd), xc = GT("xc", DT_FP32, 2, cd), xl = GT("xl", DT_FP32, 1, ld);
    int y = GT("y", DT_FP32, 2, rd), yc = GT("yc", DT_FP32, 2, cd), yl = GT("yl", DT_FP32, 1, ld);
    wl_attr a1 = IA("axis", 1), a0 = IA("axis", 0);
    cost_tiling t;
    op_work w = GW(OP_CUMSUM, &x, 1, &y, 1, &a1, 1);
    cost_tile(&g, &w, 10, &t);
    ck_assert_int_eq(t.tiles, 200);
    ck_assert_int_eq(t.threads_per_cta, 512);
    ck_assert_int_eq(t.l2_bytes, 2 * 256000);
    w = GW(OP_CUMSUM, &xc, 1, &yc, 1, &a0, 1);
    cost_tile(&g, &w, 10, &t);
    ck_assert_int_eq(t.tiles, 13);
    w = GW(OP_CUMSUM, &xl, 1, &yl, 1, NULL, 0);
    cost_tile(&g, &w, 10, &t);
    ck_assert_int_eq(t.tiles, 196);
}
END_TEST

static Suite *cost_suite(void)
{
    Suite *s = suite_create("cost");
    TCase *t = tcase_create("cost_tile");
    tcase_add_test(t, test_tiles_and_waves);
    tcase_add_test(t, test_register_file);
    tcase_add_test(t, test_cta_dispatch);
    tcase_add_test(t, test_row_instructions);
    tcase_add_test(t, test_gemm_tiles);
    tcase_add_test(t, test_gemm_multicast);
    tcase_add_test(t, test_split_k);
    suite_add_tcase(s, t);
    TCase *e = tcase_create("cost_eval");
    tcase_add_test(e, test_wave_quantization);
    tcase_add_test(e, test_littles_law);
    tcase_add_test(e, test_latency_bound);
    tcase_add_test(e, test_simt_fallback);
    tcase_add_test(e, test_rates_and_free);
    tcase_add_test(e, test_bounds);
    tcase_add_test(e, test_col_reduce);
    tcase_add_test(e, test_norm_chain_wave);
    tcase_add_test(e, test_gemm_align1);
    tcase_add_test(e, test_gemm_epilogue_and_fixed);
    tcase_add_test(e, test_unaligned_copy);
    tcase_add_test(e, test_rope_eager);
    tcase_add_test(e, test_gemm_align1_wmma);
    tcase_add_test(e, test_generated_rows);
    tcase_add_test(e, test_embedding_backward);
    suite_add_tcase(s, e);
    TCase *f = tcase_create("families");
    tcase_add_checked_fixture(f, graph_setup, graph_teardown);
    tcase_add_test(f, test_conv_implicit_gemm);
    tcase_add_test(f, test_conv_layout_transforms);
    tcase_add_test(f, test_depthwise_memory_bound);
    tcase_add_test(f, test_batchnorm_training);
    tcase_add_test(f, test_sort_tiles);
    tcase_add_test(f, test_scan_tiles);
    suite_add_tcase(s, f);
    return s;
}

KT_TEST_MAIN(cost_suite)
