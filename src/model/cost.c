/* cost: per-operator roofline with CTA tiles and waves.
 *
 * time = launch gap + first-access latency + max(compute, L2, DRAM), where
 *   compute = waves * ctas_per_sm * (tile tensor FLOPs / tensor rate + tile SIMT FLOPs / SIMT rate
 *             + tile SFU ops / SFU rate)   (tensor and SIMT work of one CTA run one after the other:
 *             the temporal multiplexing the Kitsune paper describes, section 2)
 *   L2      = L2->SM bytes (operand re-reads per tile) / achievable L2 bandwidth
 *   DRAM    = DRAM bytes / achievable DRAM bandwidth
 * Rates are peak x the hw file's achievable fraction; a kernel with few CTAs is also limited by
 * Little's law (bytes in flight per SM / latency). */
#include "cost.h"

#include <math.h>
#include <string.h>

/* CUTLASS/cuBLAS-style GEMM CTA tile for large problems (CUTLASS default 128x128 threadblock
 * tile, K step 32, 4-stage cp.async pipeline on sm80+; NVIDIA CUTLASS docs, "efficient GEMM"). */
enum { GEMM_TILE_MAX = 128, GEMM_TILE_MIN = 16, GEMM_TILE_K = 32, GEMM_STAGES = 4,
       GEMM_THREADS = 256 };
/* cuBLAS's legacy wmma alignment-1 kernel: 32x32 output tiles, 32-deep k steps */
enum { WMMA_TILE = 32, WMMA_MAX_SIDE = 256 };
/* Split-K only when K is long enough that each split keeps this many K per CTA. */
enum { GEMM_SPLITK_MIN_K = 256 };
/* ATen elementwise kernels: 128 threads, each moving 16 bytes of elements (PyTorch >= 2.3,
 * ATen/native/cuda/thread_constants.h: elems_per_thread by io size: 8 for 2-byte types, 4 for
 * 4-byte types); STREAM_ELEMS_PER_THREAD is the fallback for index kernels. */
enum { STREAM_THREADS = 128, STREAM_ELEMS_PER_THREAD = 4, STREAM_BYTES_PER_THREAD = 16,
       GATHER_MAX_THREADS = 256 };
/* Row kernels (softmax/norms/reductions) as ATen launches them: 128-thread CTAs; plain
 * reductions pack short rows until a CTA holds ROW_MIN_ELEMS_PER_CTA elements, and softmax
 * switches from a warp per row to a block per row above that length. */
enum { ROW_MIN_ELEMS_PER_CTA = 1024, ROW_THREADS_ATEN = 128 };
/* ATen's column reductions (aten/src/ATen/native/cuda/Reduce.cuh, setReduceConfig and
 * ReduceConfig::set_block_dimension, PyTorch 2.x): at most 512 threads a CTA over the output
 * vector width (4 outputs a thread where C allows), at most a warp's width across the outputs;
 * the reduced rows are split across the block's rows when each thread keeps at least 16 of them
 * (or 256), and across CTAs (a global reduction) when a thread would still sum 256 or more: as
 * many CTAs as fill the GPU, but no fewer than leave 256 and no more than leave 16 rows a thread.
 * A thread keeps vt0 = 4 loads in flight. The H200's grids of 32 shapes (R = 256..262144,
 * C = 64..4096; validation/apps/h200-short-probe.csv) are all reproduced. */
enum { COL_REDUCE_MAX_THREADS = 512, COL_REDUCE_OUT_VEC = 4, COL_REDUCE_MIN_PER_THREAD = 16,
       COL_REDUCE_MAX_PER_THREAD = 256, COL_REDUCE_VT0 = 4 };
/* Dependent issue latency of FP32 arithmetic: 4 SM clocks from one instruction to the next that
 * reads its result (Volta: Jia et al. 2018, "Dissecting the NVIDIA Volta GPU architecture via
 * microbenchmarking", FFMA; unchanged through Hopper: Luo et al. 2024). A CTA that is alone on
 * its SM scheduler issues its dependent instructions at this pace. */
enum { DEP_ISSUE_CLK = 4 };
/* Inductor's split of an outer (column) reduction (torch/_inductor/ir.py Reduction.num_splits,
 * PyTorch 2.x): it is split into two kernels, partial sums over slices of the reduced rows and
 * a second kernel that sums the partials, unless the outputs alone fill the GPU (at least
 * 2 x 32 per SM) or the reduced rows fit one split: outer_reduction_splits gives
 * ceil(R / (rvals_per_thread 4 x split_size)) splits, split_size at least
 * min_elements_per_thread 32, so one split up to 128 rows. The H200 traces
 * show the pair after every generated bias gradient (triton_red_fused_sum_N, then
 * triton_per/red_fused_sum_N+1, 1.2-2.5 us; validation/apps/h200-apps-kernels.csv). */
enum { INDUCTOR_SPLIT_OUTPUTS_PER_SM = 64, INDUCTOR_SPLIT_MIN_REDUCED = 4 * 32 };
/* FlashAttention-2 forward: 128 query rows x 64 keys per step, 4 warps (Dao 2023, section 3.3);
 * decode (few query rows) splits the KV sequence into chunks (flash-decoding). */
enum { ATTN_BR = 128, ATTN_BC = 64, ATTN_THREADS = 128, ATTN_DECODE_CHUNK = 256 };
double cost_launch_s(const hw_gpu *g, const cost_ctx *c)
{
    return (c->graph_launch ? g->launch_graph_overhead_us : g->launch_overhead_us) * 1e-6;
}

static int64_t cdiv(int64_t a, int64_t b)
{
    return a / b + (a % b != 0);
}

static int64_t pow2_tile(int64_t x)
{
    int64_t t = GEMM_TILE_MIN;
    while (t < x && t < GEMM_TILE_MAX)
        t *= 2;
    return t;
}

static int occupancy(const hw_gpu *g, double smem_bytes, int threads)
{
    /* the register file holds at most this many threads (>= the thread limit on every
     * shipped GPU; a smaller register file limits occupancy here) */
    double reg_threads = g->registers_per_sm_KiB * 1024.0 / hw_reg_bytes_per_thread(g);
    int by_threads = (int)fmin((double)g->max_threads_per_sm, reg_threads) / threads;
    int by_smem = smem_bytes > 0 ? (int)(hw_smem_bytes(g) / smem_bytes) : g->max_ctas_per_sm;
    int c = by_threads < by_smem ? by_threads : by_smem;
    if (c > g->max_ctas_per_sm)
        c = g->max_ctas_per_sm;
    return c < 1 ? 1 : c;
}

static double sat_mul(double a, double b)
{
    double r = a * b;
    return !(r <= 9.0e18) ? 9.0e18 : r; /* NaN too */
}

/* Wave-quantized tensor work of a tm x tn tiling on `sms` SMs (split-K as in cost_tile). */
static double gemm_tile_work(const hw_gpu *g, const op_work *w, int sms, int esz, int64_t tm,
                             int64_t tn)
{
    int64_t base = cdiv(w->m, tm) * cdiv(w->n, tn) * w->batch, sk = 1;
    if (base < sms && w->k >= 2 * GEMM_SPLITK_MIN_K) {
        int64_t s = sms / base, kmax = w->k / GEMM_SPLITK_MIN_K;
        sk = s < kmax ? s : kmax;
        if (sk < 1)
            sk = 1;
    }
    int64_t tiles = base * sk;
    double smem = (double)GEMM_STAGES * (double)(tm + tn) * GEMM_TILE_K * esz;
    int cps = occupancy(g, smem, GEMM_THREADS);
    int64_t slots = (int64_t)sms * cps;
    int64_t waves = tiles / slots + (tiles % slots != 0);
    return (double)waves * cps * (double)tm * (double)tn * (double)cdiv(w->k, sk);
}

static void gemm_pick_tile(const hw_gpu *g, const op_work *w, int sms, int esz, int64_t *tm,
                           int64_t *tn)
{
    int64_t cand[3][2] = {{pow2_tile(w->m), pow2_tile(w->n)}, {128, 256}, {256, 128}};
    *tm = cand[0][0];
    *tn = cand[0][1];
    double best = gemm_tile_work(g, w, sms, esz, *tm, *tn);
    for (int i = 1; i < 3; i++) {
        if (w->m < cand[i][0] || w->n < cand[i][1])
            continue;
        if ((double)GEMM_STAGES * (double)(cand[i][0] + cand[i][1]) * GEMM_TILE_K * esz > hw_smem_bytes(g))
            continue;
        double work = gemm_tile_work(g, w, sms, esz, cand[i][0], cand[i][1]);
        if (work < best) {
            best = work;
            *tm = cand[i][0];
            *tn = cand[i][1];
        }
    }
}

/* The dense gradient of an embedding table (PyTorch's embedding_dense_backward), kernels read in
 * the H200 traces of DLRM training (validation/apps/h200-apps-kernels.csv):
 * - ATen (embedding_dense_backward_cuda): cub's radix sort of the int64 indices (8 one-sweep
 *   passes with their histogram and memsets), a zero fill of the whole table (16 bytes per
 *   thread), seven segment-bookkeeping kernels, then compute_grad_weight (one CTA per partial
 *   segment, about one per index) and sum_and_scatter (one CTA per index): EMB_BWD_ATEN_KERNELS
 *   kernels, the two per-index kernels bound by CTA dispatch;
 * - generated (inductor's decomposition): a zero fill of an fp32 table, atomic fp32 adds of the
 *   rows (index_put with accumulate), a conversion to the table's dtype: the fp32 table is
 *   written, read back and converted (EMB_BWD_GEN_KERNELS kernels). */
/* Elements per CTA of Triton's generated pointwise kernels (inductor's XBLOCK for large 1-D
 * pointwise loops; the H200 traces show 1024-element CTAs, e.g. 325000 CTAs for 332.8 M). */
enum { TRITON_XBLOCK = 1024 };
enum { EMB_BWD_ATEN_KERNELS = 30, EMB_BWD_ATEN_PER_INDEX_KERNELS = 2, EMB_BWD_GEN_KERNELS = 3,
       EMB_BWD_ACC_BYTES = 4 };

static void embedding_bwd_tile(const hw_gpu *g, const op_work *w, cost_tiling *t)
{
    int64_t table = w->out_bytes; /* the dense gradient, every row written */
    int64_t rows = w->rows > 0 ? w->rows : 1;
    t->threads_per_cta = STREAM_THREADS;
    t->ctas_per_sm = occupancy(g, 0, STREAM_THREADS);
    int64_t vec = STREAM_THREADS * STREAM_BYTES_PER_THREAD;
    if (!w->generated) {
        t->kernels = EMB_BWD_ATEN_KERNELS;
        t->tiles = cdiv(table, vec) + EMB_BWD_ATEN_PER_INDEX_KERNELS * rows;
        /* dy rows read twice (partial sums, then the scatter), the table written */
        t->l2_bytes = (int64_t)fmin(2.0 * (double)w->in_l2_bytes + (double)table, 9.0e18);
        if (w->contig_bytes > 0) { /* a strided dy copied contiguous first (cost_eval) */
            t->kernels += 1;
            t->l2_bytes = (int64_t)fmin((double)t->l2_bytes + 2.0 * (double)w->contig_bytes, 9.0e18);
        }
    } else {
        int64_t esz = table / (w->table_rows > 0 && w->row_len > 0 ? w->table_rows * w->row_len : 1);
        double acc = (double)table / (double)(esz > 0 ? esz : 1) * EMB_BWD_ACC_BYTES;
        int64_t acc_elems = (int64_t)(acc / EMB_BWD_ACC_BYTES);
        t->kernels = EMB_BWD_GEN_KERNELS;
        t->tiles = 2 * cdiv(acc_elems, TRITON_XBLOCK) + cdiv(w->elems ? w->elems : 1, TRITON_XBLOCK);
        t->extra_dram_write_bytes = (int64_t)fmin(acc, KT_COUNT_LIMIT); /* the fp32 zero fill */
        t->extra_dram_read_bytes = t->extra_dram_write_bytes; /* read back by the conversion */
        t->l2_bytes = (int64_t)fmin(3.0 * acc + (double)w->in_l2_bytes + (double)table, 9.0e18);
    }
    t->tile_flops_simt = (double)w->flops_simt / (double)t->tiles;
}

/* The parameter gradients of a norm backward (dgamma, dbeta: sums over the rows of dy and
 * dy * x_hat) are a second kernel after the dx kernel (ATen's GammaBetaBackwardCUDAKernel, read
 * in the H200 traces, validation/apps/h200-apps-kernels.csv):
 * - up to NORM_PARAM_GRAD_SPLIT_ROWS rows, ceil(D / 32) CTAs of 32 x 32 threads, each walking all
 *   the rows of its 32 columns: rows x kernels.norm_param_grad_ns_per_row, serial (MGN: 65536
 *   rows of 128 in 241 us, 4 CTAs);
 * - above, the rows are split across CTAs and the pass streams dy and x once more from memory
 *   (GraphCast: 327660 rows of 512 in 208 us).
 * Generated kernels (inductor) reduce the parameters in a split reduction, like the second case.
 * Added to the row kernel's tiling as a second kernel and a serial tail. */
#define NORM_PARAM_GRAD_SPLIT_ROWS 65536 /* 65536 rows unsplit, 81900 split on the H200 */
enum { NORM_PARAM_GRAD_COLS_PER_CTA = 32 };

static void norm_param_grad_tile(const hw_gpu *g, const op_work *w, cost_tiling *t)
{
    t->kernels = 2;
    double pass = 0;
    if (w->generated || w->rows > NORM_PARAM_GRAD_SPLIT_ROWS) {
        /* dy and x once more; from DRAM when they do not fit L2 together */
        double bytes = (double)w->in_bytes[0] + (double)w->in_bytes[1];
        pass = bytes / (g->dram_bandwidth_GBps * 1e9 * g->dram_frac);
        if (bytes > hw_l2_bytes(g))
            t->extra_dram_read_bytes =
                kt_count_add(t->extra_dram_read_bytes, (int64_t)fmin(bytes, KT_COUNT_LIMIT));
    } else {
        int64_t ctas = cdiv(w->row_len, NORM_PARAM_GRAD_COLS_PER_CTA);
        pass = (double)cdiv(ctas, g->sm_count) * (double)w->rows * g->norm_param_grad_ns_per_row * 1e-9;
    }
    t->tail_s += pass;
}

/* A temporary an op writes and reads back (a layout copy, sort buffers) stays in L2 when it
 * fits in this fraction of it (the rest holds the operands streaming through); larger ones are
 * written to DRAM and read back. */
#define L2_TEMP_FRAC 0.5
/* cuDNN's NCHW -> NHWC transforms of the input and the filter and the NHWC -> NCHW transform of
 * the output around a tensor-core convolution kernel (op.c, conv_needs_xform) */
enum { CONV_XFORM_KERNELS = 3 };

/* The layout transforms of an NCHW convolution (op_work.xform_bytes: the tensors transformed):
 * three extra kernels, each streaming its tensor in and out once at the achievable DRAM rate,
 * serial with the GEMM (a tail); 2 x the bytes cross L2; their NHWC copies spill to DRAM (one
 * write, one read back) when they do not fit in L2_TEMP_FRAC of it. */
static void conv_xform_tile(const hw_gpu *g, const op_work *w, int sms, cost_tiling *t)
{
    double xb = (double)w->xform_bytes;
    t->kernels = 1 + CONV_XFORM_KERNELS;
    t->tail_s += 2.0 * xb / roof_dram_Bps(g, sms, roof_inflight_full(g));
    t->l2_bytes = (int64_t)fmin((double)t->l2_bytes + 2.0 * xb, 9.0e18);
    if (xb > hw_l2_bytes(g) * L2_TEMP_FRAC) {
        t->extra_dram_read_bytes = kt_count_add(t->extra_dram_read_bytes, w->xform_bytes);
        t->extra_dram_write_bytes = kt_count_add(t->extra_dram_write_bytes, w->xform_bytes);
    }
}

/* RoPE in eager PyTorch. ATen has no RoPE kernel; models apply HF/Meta's apply_rotary_pos_emb,
 * x cos + rotate_half(x) sin with rotate_half(x) = cat(-x2, x1), as five kernels: mul(x, cos),
 * neg(x2), cat, mul(., sin), add. Their operands are broadcast (cos, sin), sliced (x1, x2) or
 * strided (q and k are transposed views), so ATen runs its generic elementwise path
 * (elementwise_kernel<128, 4>: 128 threads, 4 elements each) and CatArrayBatchedCopy, element by
 * element: issue-bound at kernels.unaligned_copy_bytes_per_clk_per_sm, like unaligned copies
 * (the H200 traces of Llama, validation/apps/h200-apps-kernels.csv: the five kernels move
 * their bytes at 0.84-1.58 TB/s; that rate is 1.43 TB/s). Bytes through L2, with X the bytes
 * of x: mul 2X + cos, neg X, cat 2X, mul 2X + sin, add 3X. Temporaries (3.5X) are written and
 * read back, x's halves read again (X): from DRAM when X exceeds L2_TEMP_FRAC of L2. Under vf
 * the generated code is one pointwise kernel (the op's own bytes). */
enum { ROPE_EAGER_KERNELS = 5, ATEN_GENERIC_ELEMS_PER_CTA = 128 * 4 };
#define ROPE_EAGER_PASSES 4.5 /* elements processed, in units of x's: 1 + 0.5 + 1 + 1 + 1 */

static void rope_eager_tile(const hw_gpu *g, const op_work *w, cost_tiling *t)
{
    double X = (double)w->out_bytes;
    t->kernels = ROPE_EAGER_KERNELS;
    t->threads_per_cta = STREAM_THREADS;
    t->tiles = cdiv((int64_t)fmin(ROPE_EAGER_PASSES * (double)(w->elems > 0 ? w->elems : 1), 9.0e18),
                    ATEN_GENERIC_ELEMS_PER_CTA);
    t->l2_bytes = (int64_t)fmin(9.0 * X + (double)w->in_l2_bytes, 9.0e18);
    if (X > hw_l2_bytes(g) * L2_TEMP_FRAC) {
        t->extra_dram_read_bytes =
            kt_count_add(t->extra_dram_read_bytes, (int64_t)fmin(4.5 * X, KT_COUNT_LIMIT));
        t->extra_dram_write_bytes =
            kt_count_add(t->extra_dram_write_bytes, (int64_t)fmin(3.5 * X, KT_COUNT_LIMIT));
    }
}

/* Batchnorm with batch statistics and its backward (op.c bn_work): ATen's per-channel reduction
 * kernel (one CTA of BN_STATS_THREADS threads per channel: batch_norm_collect_statistics_kernel,
 * batch_norm_backward_reduce_kernel), then an elementwise kernel over every element (128
 * threads, 16 bytes each, like every ATen elementwise kernel): two passes over x (backward: dy
 * and, in training, x), the second from L2 when they fit it, else from DRAM again. The body
 * runs both passes at the full grid's rates; with fewer channels than SMs the reduction pass
 * can only stream at the rate its CTAs keep in flight (Little's law), and the difference is a
 * serial tail. Kernels: the reduction, (forward) the running-statistics update, the
 * elementwise pass. */
enum { BN_STATS_THREADS = 512, BN_FWD_KERNELS = 3, BN_BWD_KERNELS = 2 };

static void bn_tile(const hw_gpu *g, const op_work *w, int sms, cost_tiling *t)
{
    int bwd = w->type == OP_BATCHNORM_BWD;
    int64_t elems = w->elems > 0 ? w->elems : 1, esz_out = w->out_bytes / elems;
    int64_t per_thread = esz_out >= 1 && esz_out <= STREAM_BYTES_PER_THREAD ? STREAM_BYTES_PER_THREAD / esz_out
                                                                           : STREAM_ELEMS_PER_THREAD;
    t->tiles = cdiv(elems, STREAM_THREADS * per_thread) + w->rows;
    t->threads_per_cta = STREAM_THREADS;
    t->ctas_per_sm = occupancy(g, 0, STREAM_THREADS);
    t->kernels = bwd ? BN_BWD_KERNELS : BN_FWD_KERNELS;
    t->tile_flops_simt = (double)w->flops_simt / (double)t->tiles;
    t->tile_sfu_ops = (double)w->sfu_ops / (double)t->tiles;
    /* the first pass reads x (backward: dy and x), the second x (backward: dy, and x in
     * training) */
    double first = bwd ? (double)w->in_bytes[0] + (double)w->in_bytes[1] : (double)w->in_bytes[0];
    double second = bwd ? (double)w->in_bytes[0] + (w->bn_train ? (double)w->in_bytes[1] : 0.0)
                        : (double)w->in_bytes[0];
    t->l2_bytes = (int64_t)fmin((double)w->in_l2_bytes + second + (double)w->out_bytes, 9.0e18);
    if (second > hw_l2_bytes(g))
        t->extra_dram_read_bytes = (int64_t)fmin(second, KT_COUNT_LIMIT);
    int active = (int)(w->rows < sms ? w->rows : sms);
    if (active < 1)
        active = 1;
    double full = roof_dram_Bps(g, sms, roof_inflight_full(g));
    double few = roof_dram_Bps(g, active, (double)BN_STATS_THREADS * ROOF_INFLIGHT_BYTES_PER_THREAD);
    t->tail_s = fmax(0.0, first / few - first / full);
}

/* cumsum (ATen's scan kernels, aten/src/ATen/native/cuda/ScanUtils.cuh): along the last axis
 * tensor_kernel_scan_innermost_dim, CTAs of 16 x 32 threads, SCAN_INNER_LINES_PER_CTA lines per
 * CTA; along an outer axis tensor_kernel_scan_outer_dim, one thread per line (a column) in CTAs
 * of up to SCAN_OUTER_THREADS; a single line (1-D) cub::DeviceScan's one-pass scan with
 * decoupled look-back over the whole GPU (Merrill & Garland, 2016). Each reads and writes the
 * data once. */
enum { SCAN_INNER_THREADS = 512, SCAN_INNER_LINES_PER_CTA = 32, SCAN_OUTER_THREADS = 512 };

static int64_t last_pow2(int64_t x)
{
    int64_t r = 1;
    while (r <= x / 2)
        r *= 2;
    return r;
}

/* ATen's column reduction of R rows into C outputs (COL_REDUCE_* above): the CTA shape, the
 * grid, the rows each thread sums, and with a global reduction the last CTA's serial sum of
 * the partials, COL_REDUCE block rows at a time (kernels.col_reduce_partial_ns a step) */
static void col_reduce_tile(const hw_gpu *g, const op_work *w, cost_tiling *t)
{
    int64_t C = w->rows > 0 ? w->rows : 1, R = w->row_len > 0 ? w->row_len : 1;
    int64_t vec = C % COL_REDUCE_OUT_VEC == 0 ? COL_REDUCE_OUT_VEC : C % 2 == 0 ? 2 : 1;
    int64_t dim0 = C / vec, mnt = COL_REDUCE_MAX_THREADS / vec;
    int64_t d0 = dim0 < mnt ? last_pow2(dim0) : mnt, d1 = R < mnt ? last_pow2(R) : mnt;
    int64_t bw = d0 < WARP_THREADS ? d0 : WARP_THREADS;
    int64_t bh = d1 < mnt / bw ? d1 : mnt / bw;
    bw = d0 < mnt / bh ? d0 : mnt / bh;
    int64_t gx = cdiv(dim0, bw), per_thread = R, ctas = 1;
    int split_rows = R >= bh * COL_REDUCE_MIN_PER_THREAD || R >= COL_REDUCE_MAX_PER_THREAD;
    if (split_rows)
        per_thread = cdiv(R, bh);
    else /* few rows: each row of the block takes its own outputs */
        gx = cdiv(dim0, bw * bh);
    int64_t fill = (int64_t)g->sm_count * (g->max_threads_per_sm / (bw * bh));
    if (split_rows && per_thread >= COL_REDUCE_MAX_PER_THREAD && gx <= fill) {
        int64_t c1 = cdiv(fill, gx), c2 = cdiv(per_thread, COL_REDUCE_MIN_PER_THREAD);
        int64_t c3 = cdiv(per_thread, COL_REDUCE_MAX_PER_THREAD);
        ctas = c1 < c2 ? c1 : c2;
        if (ctas < c3)
            ctas = c3;
        per_thread = cdiv(per_thread, ctas);
    }
    t->tiles = gx * ctas;
    t->threads_per_cta = (int)(bw * bh);
    t->ctas_per_sm = occupancy(g, 0, t->threads_per_cta);
    t->tile_flops_simt = (double)w->flops_simt / (double)t->tiles;
    t->l2_bytes = (int64_t)fmin((double)w->in_l2_bytes + (double)w->out_bytes, 9.0e18);
    t->chain_rounds = cdiv(per_thread, COL_REDUCE_VT0);
    t->tail_s = g->col_reduce_fixed_ns * 1e-9;
    if (ctas > 1) { /* and a memset of the CTAs' semaphores before the kernel */
        t->tail_s += (double)cdiv(ctas, bh) * g->col_reduce_partial_ns * 1e-9;
        t->kernels = 2;
    }
}

static void scan_tile(const hw_gpu *g, const op_work *w, cost_tiling *t)
{
    int64_t lines = w->rows > 0 ? w->rows : 1;
    if (lines == 1) {
        t->threads_per_cta = STREAM_THREADS;
        t->tiles = cdiv(w->elems > 0 ? w->elems : 1, STREAM_THREADS * STREAM_ELEMS_PER_THREAD);
    } else if (!w->col_reduce) {
        t->threads_per_cta = SCAN_INNER_THREADS;
        t->tiles = cdiv(lines, SCAN_INNER_LINES_PER_CTA);
    } else {
        t->threads_per_cta = SCAN_OUTER_THREADS;
        t->tiles = cdiv(lines, SCAN_OUTER_THREADS);
    }
    t->ctas_per_sm = occupancy(g, 0, t->threads_per_cta);
    t->tile_flops_simt = (double)w->flops_simt / (double)t->tiles;
    t->l2_bytes = (int64_t)fmin((double)w->in_l2_bytes + (double)w->out_bytes, 9.0e18);
}

/* topk and sort (op.c sort_work: the passes, kernels and temporaries of ATen's algorithms):
 * one CTA per row (min(roundup(L, 32), SORT_MAX_THREADS) threads) for ATen's single-block
 * paths, whose repeated passes over a row hit L1/L2; else a device-wide grid of 128-thread CTAs
 * whose passes re-read the whole input, from DRAM when it does not fit in L2_TEMP_FRAC of L2.
 * Temporaries (sorted copies, index buffers) cross L2 twice and spill when the output does not
 * fit there. */
enum { SORT_MAX_THREADS = 1024, WARP_LANES = 32 };

static void sort_tile(const hw_gpu *g, const op_work *w, cost_tiling *t)
{
    double l2cap = hw_l2_bytes(g);
    int passes = w->passes > 0 ? w->passes : 1;
    if (w->row_ctas) {
        int64_t thr = cdiv(w->row_len > 0 ? w->row_len : 1, WARP_LANES) * WARP_LANES;
        t->threads_per_cta = (int)(thr < SORT_MAX_THREADS ? thr : SORT_MAX_THREADS);
        t->tiles = w->rows > 0 ? w->rows : 1;
    } else {
        t->threads_per_cta = STREAM_THREADS;
        t->tiles = cdiv(w->elems > 0 ? w->elems : 1, STREAM_THREADS * STREAM_ELEMS_PER_THREAD);
        if ((double)w->in_bytes[0] > l2cap * L2_TEMP_FRAC)
            t->extra_dram_read_bytes = kt_count_mul(w->in_bytes[0], passes - 1);
    }
    t->ctas_per_sm = occupancy(g, 0, t->threads_per_cta);
    t->kernels = w->kernels;
    t->tile_flops_simt = (double)w->flops_simt / (double)t->tiles;
    double l2 = (double)w->in_l2_bytes + (double)w->in_bytes[0] * (passes - 1) +
                (double)w->out_bytes + 2.0 * (double)w->temp_bytes;
    t->l2_bytes = (int64_t)fmin(l2, 9.0e18);
    if (w->temp_bytes > 0 && (double)w->out_bytes > l2cap * L2_TEMP_FRAC) {
        t->extra_dram_read_bytes = kt_count_add(t->extra_dram_read_bytes, w->temp_bytes);
        t->extra_dram_write_bytes = kt_count_add(t->extra_dram_write_bytes, w->temp_bytes);
    }
}

void cost_tile(const hw_gpu *g, const op_work *w, int sms, cost_tiling *t)
{
    memset(t, 0, sizeof *t);
    t->split_k = 1;
    int esz = dt_bytes(w->cdt);
    double l2cap = hw_l2_bytes(g);
    switch (w->kind) {
    case OPK_GEMM: {
        /* CTA tile: cuBLAS/CUTLASS pick among kernels by expected efficiency; we take the
         * candidate tile (128x128, or 128x256 / 256x128 when the problem is that large and the
         * 4-stage pipeline fits shared memory) with the least wave-quantized tensor work.
         * Alignment-1 problems get cuBLAS's legacy sm75 kernels (hw/calibrate/apps: ncu names
         * cutlass_75_tensorop_bf16_s1688gemm_*_align1): 128x128 tiles, or 64x64 when a side is
         * at most 64 or 128x128 tiles would not fill the SMs, 32x32 (the wmma kernel
         * cutlass_75_wmma_tensorop_bf16_s161616gemm_bf16_32x32_32x1_{tn,nt,nn}_align1) for
         * batched small products: one side at most 32, the other at most WMMA_MAX_SIDE (DLRM's
         * interaction, forward and both gradients: hw/calibrate/apps bmm_probe.py, 27 x N for
         * N = 16..256 and K = 8..512, 4096 and 16384 of them; longer sides were not measured
         * and keep the 64x64 kernel; unbatched, NeRF's 262144 x 3 runs
         * 64x64 and its 3 x 128 weight gradient over K = 262144 64x64 with split-K); one CTA
         * per SM */
        if (w->align1) {
            int64_t big = cdiv(w->m, 128) * cdiv(w->n, 128) * w->batch;
            int64_t lo = w->m < w->n ? w->m : w->n, hi = w->m < w->n ? w->n : w->m;
            t->tm = t->tn = (lo <= WMMA_TILE && hi <= WMMA_MAX_SIDE && w->batch > 1) ? WMMA_TILE
                            : (w->m <= 64 || w->n <= 64 || big < sms) ? 64
                                                                      : 128;
        } else {
            gemm_pick_tile(g, w, sms, esz, &t->tm, &t->tn);
        }
        int64_t mt = cdiv(w->m, t->tm), nt = cdiv(w->n, t->tn);
        int64_t base = mt * nt * w->batch;
        /* split-K when the output tiles cannot fill the SMs (cuBLAS does this for skinny GEMMs) */
        if (base < sms && w->k >= 2 * GEMM_SPLITK_MIN_K) {
            int64_t s = sms / base, kmax = w->k / GEMM_SPLITK_MIN_K;
            t->split_k = s < kmax ? s : kmax;
            if (t->split_k < 1)
                t->split_k = 1;
        }
        t->tiles = base * t->split_k;
        int64_t kt = cdiv(w->k, t->split_k);
        t->threads_per_cta = GEMM_THREADS;
        t->smem_per_cta_bytes = (double)GEMM_STAGES * (double)(t->tm + t->tn) * GEMM_TILE_K * esz;
        t->ctas_per_sm = w->align1 ? 1 : occupancy(g, t->smem_per_cta_bytes, t->threads_per_cta);
        t->tile_flops_tensor = 2.0 * (double)t->tm * (double)t->tn * (double)kt;
        if (w->align1 && t->tm == WMMA_TILE) {
            /* the wmma kernel: its own k-loop rate and per-tile cost (hw kernels.gemm_wmma_*),
             * at least one 32-deep k step */
            t->tile_flops_tensor = 2.0 * WMMA_TILE * WMMA_TILE * (double)(kt > WMMA_TILE ? kt : WMMA_TILE);
            t->tile_fixed_clk = g->gemm_wmma_tile_clk;
            t->tile_kloop_flop_per_clk = g->gemm_wmma_flop_per_clk_per_sm;
        } else if (w->align1) { /* per-tile prologue and a scalar epilogue (kernels.gemm_align1_*) */
            t->tile_fixed_clk = g->gemm_align1_tile_clk +
                                g->gemm_align1_clk_per_out_elem * (double)t->tm * (double)t->tn;
            t->tile_kloop_flop_per_clk = g->gemm_align1_flop_per_clk_per_sm;
        }
        t->tile_flops_simt = (double)w->flops_simt / (double)t->tiles;
        t->tile_sfu_ops = (double)w->sfu_ops / (double)t->tiles; /* fused epilogues (vf) */
        /* every tile reads an A panel tm x kt and a B panel kt x tn through L2 (for a
         * convolution the A panel is gathered from the input window: im2col on the fly) */
        double panels = (double)(t->tm + t->tn);
        int mc = g->gemm_multicast_ctas;
        if (mc > 1 && !w->align1 && op_is_gemm(w->type) && base >= mc) {
            /* TMA multicast (sm_90+): cuBLAS's kernels run clusters of mc CTAs along one side of
             * the output (nvjet kernel names "_1x2_" / "_2x1_" in the H200 traces,
             * validation/apps/h200-apps-kernels.csv: 256x128 tiles in 1x2 clusters, 128x256 in
             * 2x1) whose CTAs receive the larger operand panel from one L2 read (CUTLASS's
             * SM90 TMA warp-specialized kernels, ClusterShape): it crosses L2 once per cluster */
            double big = (double)(t->tm > t->tn ? t->tm : t->tn), sm2 = panels - big;
            panels = big / (double)mc + sm2;
        }
        double l2 = (double)t->tiles * panels * (double)kt * esz + (double)w->out_bytes;
        if (w->type == OP_MATMUL && w->nin == 3)
            l2 += (double)w->in_bytes[2]; /* C, read in the epilogue */
        if (t->split_k > 1) /* fp32 partials written and read back for the reduction */
            l2 += 2.0 * (double)t->split_k * (double)w->m * (double)w->n * (double)w->batch * 4.0;
        t->l2_bytes = (int64_t)fmin(l2, 9.0e18);
        /* operand re-reads from DRAM: none while the smaller operand stays in L2 as the larger
         * one streams (row-panel rasterization); otherwise the resident CTAs of one wave
         * (sms x ctas_per_sm tiles, rasterized as a ~square block of wm x wn output tiles) walk K
         * in near lockstep and share their A row panels and B column panels through L2, so each
         * panel comes from DRAM once per wave block: A is read ceil(nt / wn) times, B
         * ceil(mt / wm) times (the unique a + b is the caller's); capped by the L2->SM excess */
        double a = (double)w->in_bytes[0], b = (double)w->in_bytes[1];
        double small = a < b ? a : b, ws = a + b;
        if (small > l2cap / 2 && ws > 0) {
            double excess = fmax(0.0, l2 - ws - (double)w->out_bytes);
            double slots = (double)sms * t->ctas_per_sm;
            double wn = fmin((double)nt, fmax(1.0, floor(sqrt(slots))));
            double wm = fmin((double)mt, fmax(1.0, floor(slots / wn)));
            double rereads = a * ceil((double)nt / wn) + b * ceil((double)mt / wm) - ws;
            t->extra_dram_read_bytes = (int64_t)fmin(excess, fmax(0.0, rereads));
        }
        if (w->xform_bytes > 0)
            conv_xform_tile(g, w, sms, t);
        break;
    }
    case OPK_ATTN: {
        int64_t group = w->heads / (w->kv_heads ? w->kv_heads : 1);
        double keys_per_row = w->causal ? (double)w->l - (double)(w->s - 1) / 2.0 : (double)w->l;
        double dd = (double)w->d + (double)w->dv; /* key + value width of a row */
        t->threads_per_cta = ATTN_THREADS;
        if (w->s * group <= ATTN_BR / 2) {
            /* decode: one CTA per (batch, kv head, KV chunk), the group's queries packed as rows */
            int64_t rows = pow2_tile(w->s * group);
            int64_t chunks = cdiv(w->l, ATTN_DECODE_CHUNK);
            t->tiles = w->batch * w->kv_heads * chunks;
            t->tm = rows;
            t->tn = ATTN_DECODE_CHUNK;
            t->tile_flops_tensor = 2.0 * (double)rows * (double)ATTN_DECODE_CHUNK * dd;
            t->l2_bytes = (int64_t)sat_mul((double)t->tiles, (double)ATTN_DECODE_CHUNK * dd * esz +
                                                                 (double)rows * dd * esz);
        } else {
            int64_t qt = cdiv(w->s, ATTN_BR);
            t->tiles = w->batch * w->heads * qt;
            t->tm = ATTN_BR;
            t->tn = ATTN_BC;
            t->tile_flops_tensor = (double)w->flops_tensor / (double)t->tiles;
            /* each query tile streams the keys it attends through L2 */
            t->l2_bytes = (int64_t)sat_mul((double)t->tiles, keys_per_row * dd * esz +
                                                                 (double)ATTN_BR * dd * esz);
        }
        if (w->is_backward)
            t->l2_bytes = kt_count_mul(t->l2_bytes, 2); /* dK/dV accumulation re-reads Q, dO */
        /* one mask element per score */
        t->l2_bytes = kt_count_add(t->l2_bytes, kt_count_add(w->out_bytes, w->mask_l2_bytes));
        t->smem_per_cta_bytes = ((double)t->tm * (double)w->d + 2.0 * 2 * ATTN_BC * dd) * esz;
        t->ctas_per_sm = occupancy(g, t->smem_per_cta_bytes, t->threads_per_cta);
        t->tile_flops_simt = (double)w->flops_simt / (double)t->tiles;
        t->tile_sfu_ops = (double)w->sfu_ops / (double)t->tiles;
        break;
    }
    case OPK_ROW: {
        /* ATen's grids: layer_norm/rms_norm and block softmax run one row per CTA of 128
         * threads (launch_vectorized_layer_norm_kernel: blocks(M), num_threads() = 128);
         * softmax over rows of <= 1024 elements runs one warp per row, 4 rows per CTA
         * (persistent warp softmax); reductions pack rows until a CTA holds 1024 elements */
        if (w->type == OP_CUMSUM) {
            scan_tile(g, w, t);
            break;
        }
        if ((w->type == OP_BATCHNORM || w->type == OP_BATCHNORM_BWD) && !w->generated) {
            bn_tile(g, w, sms, t);
            break;
        }
        if (w->col_reduce && w->generated) {
            /* Inductor's split reduction (triton_red_*): the reduced rows are cut into enough
             * CTAs to fill the GPU, each streaming its slice once, like an element-wise kernel
             * over the input (H200: 393216 x 128 bf16 bias gradients in 24 us, DRAM speed,
             * against ATen's 186 us; validation/apps/h200-apps-kernels.csv) */
            int64_t fill = (int64_t)g->sm_count * (g->max_threads_per_sm / STREAM_THREADS);
            if (fill < g->sm_count) /* fewer threads per SM than a CTA has: one CTA an SM */
                fill = g->sm_count;
            t->tiles = cdiv(w->elems ? w->elems : 1, STREAM_THREADS * STREAM_ELEMS_PER_THREAD);
            if (t->tiles > fill) /* each CTA loops over its slice: one resident wave (2048 on
                                    the H200 for the bias gradients above) */
                t->tiles = fill;
            t->threads_per_cta = STREAM_THREADS;
            t->ctas_per_sm = occupancy(g, 0, STREAM_THREADS);
            t->tile_flops_simt = (double)w->flops_simt / (double)t->tiles;
            t->tile_sfu_ops = (double)w->sfu_ops / (double)t->tiles;
            t->l2_bytes = (int64_t)fmin((double)w->in_l2_bytes + (double)w->out_bytes, 9.0e18);
            if (w->rows < (int64_t)INDUCTOR_SPLIT_OUTPUTS_PER_SM * g->sm_count &&
                w->row_len > INDUCTOR_SPLIT_MIN_REDUCED)
                t->kernels = 2; /* the partials' sum: a second, tiny kernel */
            break;
        }
        /* ATen's column-reduction kernel; with one output its TensorIterator sees a contiguous
         * reduction, a row (Inductor still splits it like a column: the branch above) */
        if (w->col_reduce && w->rows > 1) {
            col_reduce_tile(g, w, t);
            break;
        }
        if (w->type == OP_NORM_BWD && w->param_grads > 0)
            norm_param_grad_tile(g, w, t);
        int64_t rows_per_cta = 1;
        op_rowgrid grid = op_info_of(w->type)->rowgrid;
        if (w->generated) /* Triton's persistent reductions: short rows packed like ours */
            grid = ROWGRID_PACK;
        if (grid == ROWGRID_PACK && w->row_len < ROW_MIN_ELEMS_PER_CTA)
            rows_per_cta = ROW_MIN_ELEMS_PER_CTA / w->row_len;
        else if (grid == ROWGRID_WARP && w->row_len <= ROW_MIN_ELEMS_PER_CTA)
            rows_per_cta = ROW_THREADS_ATEN / 32; /* a warp per row */
        t->tiles = cdiv(w->rows ? w->rows : 1, rows_per_cta);
        t->threads_per_cta = ROW_THREADS_ATEN;
        t->ctas_per_sm = occupancy(g, 0, ROW_THREADS_ATEN);
        t->tile_flops_simt = (double)w->flops_simt / (double)t->tiles;
        t->tile_sfu_ops = (double)w->sfu_ops / (double)t->tiles;
        if (!w->generated && (w->inst_per_elem > 0 || w->inst_per_cta > 0))
            t->tile_inst = w->inst_per_cta + w->inst_per_elem * (double)w->elems / (double)t->tiles;
        if (!w->generated && rows_per_cta == 1) { /* a CTA's serial chain (ATen's norms) */
            t->chain_rounds = w->chain_rounds;
            t->chain_clk = w->chain_inst * DEP_ISSUE_CLK;
        }
        t->l2_bytes = (int64_t)fmin((double)w->in_l2_bytes + (double)w->out_bytes, 9.0e18);
        break;
    }
    case OPK_SCATTER: {
        if (w->type == OP_EMBEDDING_BWD) {
            embedding_bwd_tile(g, w, t);
            break;
        }
        t->tiles = cdiv(w->elems ? w->elems : 1, STREAM_THREADS * STREAM_ELEMS_PER_THREAD);
        t->threads_per_cta = STREAM_THREADS;
        t->ctas_per_sm = occupancy(g, 0, STREAM_THREADS);
        t->tile_flops_simt = (double)w->flops_simt / (double)t->tiles;
        /* each element is an atomic read-modify-write at L2: read + write of the destination */
        t->l2_bytes = (int64_t)fmin((double)w->in_l2_bytes + 2.0 * (double)w->out_bytes, 9.0e18);
        double out = (double)w->out_bytes, src = (double)w->in_bytes[w->nin == 3 ? 2 : 0];
        if (out > l2cap) /* destination rows evicted between updates: RMW misses go to DRAM */
            t->extra_dram_read_bytes = (int64_t)(src * (1.0 - l2cap / out));
        break;
    }
    case OPK_SORT:
        sort_tile(g, w, t);
        break;
    case OPK_GATHER:
    case OPK_STREAM:
    default: {
        int64_t per_thread = STREAM_ELEMS_PER_THREAD;
        /* ATen's element-wise kernels and generated ones (Triton: XBLOCK 1024 bf16 elements per
         * CTA of 128 threads, gathers too: gather_probe.py's kernels) move 16 bytes a thread */
        if ((w->kind == OPK_STREAM || (w->kind == OPK_GATHER && w->generated)) && w->elems > 0 &&
            w->out_bytes > 0) {
            int64_t esz_out = w->out_bytes / w->elems; /* bytes per output element */
            if (esz_out >= 1 && esz_out <= STREAM_BYTES_PER_THREAD)
                per_thread = STREAM_BYTES_PER_THREAD / esz_out;
        }
        t->tiles = cdiv(w->elems ? w->elems : 1, STREAM_THREADS * per_thread);
        t->threads_per_cta = STREAM_THREADS;
        if (w->kind == OPK_GATHER && !w->generated && w->rows > 0 && w->out_bytes > 0) {
            /* ATen's vectorized_gather_kernel<16>: one 16-byte vector per thread, a CTA of
             * whole warps (at most GATHER_MAX_THREADS) per gathered row, as many CTAs per row
             * as the row needs (ncu on the H200: 256-byte rows -> 32-thread CTAs, one per
             * index; 8 KiB rows -> 2 CTAs of 256 threads) */
            int64_t vecs = cdiv(w->out_bytes / w->rows, STREAM_BYTES_PER_THREAD);
            int64_t thr = cdiv(vecs, 32) * 32;
            if (thr > GATHER_MAX_THREADS)
                thr = GATHER_MAX_THREADS;
            t->threads_per_cta = (int)thr;
            t->tiles = w->rows * cdiv(vecs, thr);
        }
        t->l2_bytes = (int64_t)fmin((double)w->in_l2_bytes + (double)w->out_bytes, 9.0e18);
        if (w->kernels > 0) /* library ops of several kernels (moe_dispatch's position pass) */
            t->kernels = w->kernels;
        if (w->type == OP_ROPE && !w->generated)
            rope_eager_tile(g, w, t);
        t->ctas_per_sm = occupancy(g, 0, t->threads_per_cta);
        t->tile_flops_simt = (double)w->flops_simt / (double)t->tiles;
        t->tile_sfu_ops = (double)w->sfu_ops / (double)t->tiles;
        if (w->generated)
            t->extra_dram_read_bytes = w->refetch_bytes;
        else if (w->kind == OPK_GATHER) {
            /* distinct rows that do not stay in L2 are fetched again on later lookups */
            double distinct = (double)w->in_bytes[0], all = (double)w->in_l2_bytes;
            if (distinct > l2cap && all > distinct)
                t->extra_dram_read_bytes = (int64_t)((all - distinct) * (1.0 - l2cap / distinct));
        }
        break;
    }
    }
    if (t->tiles < 1)
        t->tiles = 1;
}

/* The compute side of cost_eval on a tiling t: tiles, waves, wave efficiency, Tensor and SIMT
 * time, CTA dispatch, compute_s (the larger of the math and the dispatch); *tr the Tensor rate
 * (<= 0: no tensor cores for the dtype). */
static void cost_compute(const hw_gpu *g, const op_work *w, int sms, const cost_ctx *c,
                         const cost_tiling *t, cost_result *r, double *tr_out)
{
    int64_t slots = (int64_t)sms * t->ctas_per_sm;
    r->tiles = t->tiles;
    r->waves = t->tiles / slots + (t->tiles % slots != 0);
    r->wave_eff = (double)t->tiles / ((double)r->waves * (double)slots);

    double tr = roof_tensor_rate(g, w->cdt, c->clock_MHz);
    double tile_tensor_s;
    if (t->tile_flops_tensor > 0 && tr <= 0) /* no tensor cores for this dtype: SIMT fp32 */
        tile_tensor_s = t->tile_flops_tensor / roof_simt_rate(g, c->clock_MHz);
    else if (w->align1) /* cuBLAS's alignment-1 kernels: their own k-loop rate and tile cost */
        tile_tensor_s = (t->tile_flops_tensor / t->tile_kloop_flop_per_clk + t->tile_fixed_clk) /
                        (c->clock_MHz * 1e6);
    else
        tile_tensor_s = t->tile_flops_tensor > 0 ? t->tile_flops_tensor / tr : 0;
    double tile_simt_s = t->tile_flops_simt / roof_simt_rate(g, c->clock_MHz) +
                         t->tile_sfu_ops / roof_sfu_rate(g, c->clock_MHz);
    if ((w->unaligned || w->type == OP_ROPE) && !w->generated) {
        /* ATen copies unaligned rows element by element (and runs eager RoPE's kernels so):
         * issue-bound at a measured rate of bytes moved (read + written) per SM clock
         * (kernels.unaligned_copy_bytes_per_clk_per_sm) */
        double bytes = (double)t->l2_bytes / (double)t->tiles;
        tile_simt_s = fmax(tile_simt_s, bytes / (g->unaligned_copy_bytes_per_clk_per_sm *
                                                 c->clock_MHz * 1e6));
    }
    if (t->tile_inst > 0) {
        /* measured instruction counts: issue-bound time (they include the math); a persistent
         * stage kernel keeps its CTAs and pays ATen's per-CTA prologue and block-reduction
         * setup once, not once per row */
        double inst = t->tile_inst - (c->persistent ? w->inst_per_cta : 0.0);
        if (inst < 0)
            inst = 0;
        tile_simt_s = inst / roof_issue_rate(g, c->clock_MHz);
    }
    /* each SM runs ctas_per_sm tiles at once, sharing its units */
    double per_wave = (double)t->ctas_per_sm;
    r->tensor_s = (double)r->waves * per_wave * tile_tensor_s;
    r->simt_s = (double)r->waves * per_wave * tile_simt_s;
    if (t->tiles < slots) { /* a partial single wave: SMs with fewer CTAs finish sooner */
        double per_sm = ceil((double)t->tiles / (double)sms);
        r->tensor_s = per_sm * tile_tensor_s;
        r->simt_s = per_sm * tile_simt_s;
    }
    r->compute_s = r->tensor_s + r->simt_s;
    /* the block scheduler starts CTAs at a finite GPU-wide rate (hw launch.cta_dispatch_ns,
     * measured on the H200 with empty CTAs: hw/calibrate/cta_rate.cu); a kernel of many tiny
     * CTAs cannot finish sooner; it runs in the SM clock domain */
    r->dispatch_s = c->persistent ? 0
                                  : (double)t->tiles * g->cta_dispatch_ns * 1e-9 * (g->clock_MHz / c->clock_MHz);
    if (r->dispatch_s > r->compute_s)
        r->compute_s = r->dispatch_s;
    *tr_out = tr;
}

void cost_compute_l2(const hw_gpu *g, const op_work *w, int sms, const cost_ctx *c,
                     double *compute_s, int64_t *l2_bytes)
{
    *compute_s = 0;
    *l2_bytes = 0;
    if (w->kind == OPK_FREE)
        return;
    cost_tiling t;
    cost_result r;
    double tr;
    cost_tile(g, w, sms, &t);
    cost_compute(g, w, sms, c, &t, &r, &tr);
    *compute_s = r.compute_s;
    *l2_bytes = t.l2_bytes;
}

void cost_eval(const hw_gpu *g, const op_work *w, int sms, const cost_ctx *c, int64_t ext_dram_read,
               int64_t ext_dram_write, cost_result *r)
{
    memset(r, 0, sizeof *r);
    r->sms = sms;
    r->bound = BOUND_NONE;
    if (w->kind == OPK_FREE)
        return;
    cost_tiling t;
    cost_tile(g, w, sms, &t);
    double tr;
    cost_compute(g, w, sms, c, &t, r, &tr);
    int active = (int)(t.tiles < sms ? t.tiles : sms);
    int dispatch_bound = r->dispatch_s > r->tensor_s + r->simt_s;

    r->l2_bytes = t.l2_bytes;
    r->dram_read_bytes = kt_count_add(ext_dram_read, t.extra_dram_read_bytes);
    r->dram_write_bytes = kt_count_add(ext_dram_write, t.extra_dram_write_bytes);
    /* bytes in flight per SM: cp.async pipelines (GEMM, attention) and vectorized kernels keep
     * one 16-byte load per thread of a full SM outstanding; other kernels are limited by their
     * resident threads (16-byte vector loads, as ATen's kernels issue them) and by the bytes a
     * CTA has to move at all */
    double inflight = roof_inflight_full(g);
    if (w->kind != OPK_GEMM && w->kind != OPK_ATTN) {
        double threads = (double)t.ctas_per_sm * t.threads_per_cta;
        if (threads > g->max_threads_per_sm)
            threads = g->max_threads_per_sm;
        double per_cta_bytes = ((double)w->in_l2_bytes + (double)w->out_bytes +
                                (double)t.extra_dram_read_bytes + (double)t.extra_dram_write_bytes) /
                               (double)t.tiles;
        double per_cta = fmin(threads / t.ctas_per_sm * ROOF_INFLIGHT_BYTES_PER_THREAD, per_cta_bytes);
        inflight = fmax(1.0, fmin(inflight, per_cta * t.ctas_per_sm));
    }
    r->l2_s = (double)r->l2_bytes / roof_l2_Bps(g, active, inflight, c->clock_MHz);
    if (w->kind == OPK_SCATTER && g->l2_atomic_Gops > 0 &&
        !(w->type == OP_EMBEDDING_BWD && !w->generated)) {
        /* every element is one atomic read-modify-write executed at L2 (ATen's embedding
         * backward sorts instead) */
        double atomic_s = (double)w->elems / (g->l2_atomic_Gops * 1e9 * (c->clock_MHz / g->clock_MHz));
        if (atomic_s > r->l2_s)
            r->l2_s = atomic_s;
    }
    int64_t dram_bytes = kt_count_add(r->dram_read_bytes, r->dram_write_bytes);
    r->dram_s = (double)dram_bytes / roof_dram_Bps(g, active, inflight);
    double overlapped_dram_s = r->dram_s;
    r->tail_s = t.tail_s;
    if (w->type == OP_EMBEDDING_BWD && !w->generated && w->contig_bytes > 0 &&
        g->unaligned_copy_bytes_per_clk_per_sm > 0) {
        /* ATen's dense embedding backward first copies a strided dy contiguous: a kernel of its
         * own before the sort, element by element like unaligned copies (read + written at
         * kernels.unaligned_copy_bytes_per_clk_per_sm per SM clock); DLRM's [B, 26, 128] slice
         * of the interaction gradient: 33.5 us at B = 4096 on the H200
         * (validation/apps/h200-apps-kernels.csv) */
        r->tail_s += 2.0 * (double)w->contig_bytes /
                     (g->unaligned_copy_bytes_per_clk_per_sm * sms * c->clock_MHz * 1e6);
    }
    if (w->kind == OPK_GEMM && !w->align1 && !c->persistent) {
        /* a library GEMM writes its output tile after its mainloop (the epilogue): the
         * writes follow the reads and the math instead of overlapping them (measured on the
         * H200: short-K GEMMs whose output dominates take about reads + writes, not their max,
         * hw/calibrate/apps shortk) */
        double bw = roof_dram_Bps(g, active, inflight);
        overlapped_dram_s = (double)r->dram_read_bytes / bw;
        r->tail_s += (double)r->dram_write_bytes / bw;
    }
    double kernels = t.kernels > 1 ? (double)t.kernels : 1.0;
    r->launch_s = kernels * cost_launch_s(g, c);
    /* the first tile waits one memory round trip before it can compute (pipeline fill), and a
     * launched kernel takes launch.kernel_floor_us to start and drain its writes (persistent
     * pipeline stages are started once); an op of several kernels pays both once per kernel */
    r->latency_s = kernels * ((r->dram_read_bytes > 0 ? g->dram_latency_ns : g->l2_latency_ns) * 1e-9 +
                              (c->persistent ? 0.0 : g->kernel_floor_us * 1e-6));
    if (w->kind == OPK_GEMM && !w->align1 && !c->persistent) /* set-up, fill, drain */
        r->latency_s += g->gemm_fixed_clk / (c->clock_MHz * 1e6);
    if (t.split_k > 1)
        r->latency_s += g->l2_latency_ns * 1e-9; /* partial-sum reduction round trip */
    r->flops = kt_count_add(w->flops_tensor, w->flops_simt);
    r->flops_tensor = w->flops_tensor;
    r->flops_simt = w->flops_simt;
    r->sfu_ops = w->sfu_ops;
    r->cdt = w->cdt;
    r->tensor_on_simt = t.tile_flops_tensor > 0 && tr <= 0;

    double body = fmax(r->compute_s, fmax(r->l2_s, overlapped_dram_s));
    r->bound = roof_bound(r->compute_s, r->l2_s, overlapped_dram_s + r->tail_s,
                          r->launch_s + r->latency_s, dispatch_bound);
    if (t.tail_s > body) /* the serial partial sums dominate */
        r->bound = BOUND_LATENCY;
    if (!c->persistent && (t.chain_rounds > 0 || t.chain_clk > 0)) {
        /* every wave lasts at least one CTA's chain of dependent round trips (to DRAM when the
         * op reads from it) and instructions */
        double lat_ns = r->dram_read_bytes > 0 ? g->dram_latency_ns : g->l2_latency_ns;
        r->chain_s = (double)r->waves * ((double)t.chain_rounds * lat_ns * 1e-9 +
                                         t.chain_clk / (c->clock_MHz * 1e6));
        if (r->chain_s > body) {
            body = r->chain_s;
            r->bound = BOUND_LATENCY;
        }
    }
    r->time_s = r->launch_s + r->latency_s + body + r->tail_s;
    roof_util(g, r->flops, w->flops_tensor > 0, w->cdt, dram_bytes, r->time_s, c->clock_MHz,
              &r->sm_util, &r->dram_util);
}
