/* energy: energy and power of an execution, and power-capped execution by DVFS.
 *
 * Energy of one kernel (op, fused group or pipeline) at SM clock f, with v2 = (V(f)/V(f_hw))^2
 * (the hw file's pJ figures hold at clock_MHz; switching energy per operation scales as CV^2):
 *   matrix  = flops_tensor x tensor_pJ_per_flop[cdt]               (simt_fp32_pJ_per_flop when
 *             the GPU runs that dtype on the SIMT cores)            all-in: includes RF + SMEM
 *   simt    = (flops_simt + SFU_FP32_FLOP_EQUIV x sfu_ops) x simt_fp32_pJ_per_flop   all-in:
 *             includes the register-file operand traffic
 *   l2      = l2_bytes x l2_pJ_per_byte
 *   dram    = (dram_read_bytes + dram_write_bytes) x dram_pJ_per_byte      (memory clock fixed)
 *   static  = static_W x time_s   (time_s includes the launch gap: idle time between kernels
 *             is counted once, at static power)
 * gpu-params.md s2.2 derives the tensor pJ/FLOP from a power-limited GEMM, so it already holds
 * the RF and shared-memory operand staging of that GEMM; the SIMT figure is likewise dominated
 * by instruction and RF overhead. To report SMEM and RF without counting them twice they are
 * carved out of those all-in figures, never added to them:
 *   smem_bytes = SMEM_ACCESSES_PER_STAGED_BYTE x l2_bytes   (items with matrix FLOPs: every
 *                L2->SM byte is written into shared memory once and read by the MMA warps)
 *   rf_bytes   = RF_BYTES_PER_MMA_FLOP x flops_tensor (RF_BYTES_PER_SIMT_FLOP on SIMT)
 *              + RF_BYTES_PER_SIMT_FLOP x flops_simt + RF_BYTES_PER_SFU_OP x sfu_ops
 *   e_tensor = matrix - e_smem - e_rf(matrix),  e_simt = simt - e_rf(simt)
 * (a carve larger than its all-in figure is scaled down to it). So the total energy does not
 * depend on smem_pJ_per_byte or rf_pJ_per_byte; those set only the breakdown.
 *
 * Power cap: a kernel over the cap runs at the highest clock f whose average power fits. At f
 * the item is evaluated again by its own cost model (kt_item.reeval: cost_eval at clock f for a
 * kernel - compute, dispatch and L2 rates scale with f, DRAM and latency do not, Little's-law
 * caps stay - or the pipeline rebuilt with the same CTA allocation); its dynamic energy parts
 * (tensor, simt, l2, smem, rf) scale with V(f)^2, DRAM energy and static power do not. Average
 * power is nondecreasing in f for these models, so the clock is found by bisection. */
#include "energy.h"

#include <math.h>
#include <string.h>

/* Picojoules to joules. */
#define PJ_TO_J 1e-12
/* FP32-FLOP equivalents of one SFU transcendental (MUFU.EX2/RSQ/SIN...): a table lookup plus a
 * quadratic interpolation c0 + c1 x + c2 x^2, about two multiply-adds = 4 FLOP (Oberman and
 * Siu, "A high-performance area-efficient multifunction interpolator", ARITH-17, 2005, the
 * design of NVIDIA's SFU). Estimate. */
#define SFU_FP32_FLOP_EQUIV 4.0
/* Shared-memory accesses per operand byte a tensor-core kernel stages: one write (cp.async
 * L2 -> smem) and two reads (CUTLASS sm80 default 128x128 CTA tile of 2x2 warps with 64x64 warp
 * tiles: each A row panel is read by the 2 warps of its row, each B column panel by 2 warps). */
#define SMEM_ACCESSES_PER_STAGED_BYTE 3.0
/* Register-file bytes per tensor-core FLOP: PTX ISA mma.sync.m16n8k16 with 16-bit inputs reads
 * A (16x16x2 B = 512 B) and B (16x8x2 B = 256 B) fragments and the fp32 accumulator C
 * (16x8x4 B = 512 B) and writes D (512 B): 1792 B per 2x16x8x16 = 4096 FLOP. */
#define RF_BYTES_PER_MMA_FLOP (1792.0 / 4096.0)
/* Register-file bytes per SIMT fp32 FLOP: an FFMA reads 3 registers and writes 1, 4 B each,
 * = 16 B per 2 FLOP (SASS operand format). */
#define RF_BYTES_PER_SIMT_FLOP 8.0
/* Register-file bytes per SFU op: MUFU reads 1 register and writes 1, 4 B each. */
#define RF_BYTES_PER_SFU_OP 8.0
/* Bisection stops when the clock bracket is narrower than this; far below the ~15 MHz steps of
 * NVIDIA's supported graphics clocks (nvidia-smi -q -d SUPPORTED_CLOCKS). */
#define CLOCK_TOL_MHz 1e-3
/* Upper bound on bisection steps (the bracket halves each step: 2^-64 of any clock range). */
enum { BISECT_MAX_STEPS = 64 };

double en_voltage_V(const hw_gpu *hw, double clock_MHz)
{
    double vmin = hw->voltage_min_V, vmax = hw->voltage_max_V;
    double span = hw->clock_MHz - hw->knee_clock_MHz;
    if (clock_MHz <= hw->knee_clock_MHz || span <= 0)
        return vmin;
    double v = vmin + (vmax - vmin) * (clock_MHz - hw->knee_clock_MHz) / span;
    return v > vmin ? v : vmin;
}

/* (V(f) / V(clock_MHz))^2: energy per switching operation relative to the hw file's figures. */
static double volt2_ratio(const hw_gpu *hw, double clock_MHz)
{
    double v0 = en_voltage_V(hw, hw->clock_MHz);
    if (v0 <= 0)
        return 1.0;
    double r = en_voltage_V(hw, clock_MHz) / v0;
    return r * r;
}

/* Scale a carve-out pair (a, b) down so that a + b <= cap. */
static void fit_carve(double *a, double *b, double cap)
{
    double sum = *a + *b;
    if (sum > cap && sum > 0) {
        double k = cap / sum;
        *a *= k;
        *b *= k;
    }
}

void en_item(const hw_gpu *hw, kt_item *it)
{
    const cost_result *c = &it->c;
    if (it->clock_MHz <= 0)
        it->clock_MHz = hw->clock_MHz;
    double v2 = volt2_ratio(hw, it->clock_MHz);
    double simt_pJ = hw->simt_fp32_pJ_per_flop;
    double ft = (double)c->flops_tensor, fs = (double)c->flops_simt, sfu = (double)c->sfu_ops;
    /* matrix FLOPs on the SIMT cores when the GPU has no tensor peak or no energy figure */
    int mm_on_simt = c->tensor_on_simt || hw->tensor_pJ_per_flop[c->cdt] <= 0;
    double mm_pJ = mm_on_simt ? simt_pJ : hw->tensor_pJ_per_flop[c->cdt];

    double mm_J = ft * mm_pJ * PJ_TO_J;
    double smem_J = ft > 0 ? SMEM_ACCESSES_PER_STAGED_BYTE * (double)c->l2_bytes *
                                 hw->smem_pJ_per_byte * PJ_TO_J
                           : 0;
    double rf_mm_J = ft * (mm_on_simt ? RF_BYTES_PER_SIMT_FLOP : RF_BYTES_PER_MMA_FLOP) *
                     hw->rf_pJ_per_byte * PJ_TO_J;
    fit_carve(&smem_J, &rf_mm_J, mm_J);

    double simt_J = (fs + SFU_FP32_FLOP_EQUIV * sfu) * simt_pJ * PJ_TO_J;
    double rf_simt_J = (RF_BYTES_PER_SIMT_FLOP * fs + RF_BYTES_PER_SFU_OP * sfu) *
                       hw->rf_pJ_per_byte * PJ_TO_J;
    if (rf_simt_J > simt_J)
        rf_simt_J = simt_J;

    double mm_rest_J = fmax(0.0, mm_J - smem_J - rf_mm_J); /* rounding when the carve is all of it */
    it->e_tensor_J = (mm_on_simt ? 0 : mm_rest_J) * v2;
    it->e_simt_J = (simt_J - rf_simt_J + (mm_on_simt ? mm_rest_J : 0)) * v2;
    it->e_smem_J = smem_J * v2;
    it->e_rf_J = (rf_mm_J + rf_simt_J) * v2;
    it->e_l2_J = (double)c->l2_bytes * hw->l2_pJ_per_byte * PJ_TO_J * v2;
    it->e_dram_J = (double)kt_count_add(c->dram_read_bytes, c->dram_write_bytes) *
                   hw->dram_pJ_per_byte * PJ_TO_J;
    it->e_static_J = hw->static_W * c->time_s;
    it->energy_J = it->e_tensor_J + it->e_simt_J + it->e_dram_J + it->e_l2_J + it->e_smem_J +
                   it->e_rf_J + it->e_static_J;
    it->avg_power_W = c->time_s > 0 ? it->energy_J / c->time_s : 0;
}

/* Energy totals of a result: sums over its items. */
static void sum_energy(kt_result *r)
{
    r->energy_J = r->e_tensor_J = r->e_simt_J = r->e_dram_J = r->e_l2_J = r->e_smem_J =
        r->e_rf_J = r->e_static_J = 0;
    for (int i = 0; i < r->nitems; i++) {
        const kt_item *it = &r->items[i];
        r->energy_J += it->energy_J;
        r->e_tensor_J += it->e_tensor_J;
        r->e_simt_J += it->e_simt_J;
        r->e_dram_J += it->e_dram_J;
        r->e_l2_J += it->e_l2_J;
        r->e_smem_J += it->e_smem_J;
        r->e_rf_J += it->e_rf_J;
        r->e_static_J += it->e_static_J;
    }
    r->avg_power_W = r->time_s > 0 ? r->energy_J / r->time_s : 0;
}

void en_account(const hw_gpu *hw, kt_result *r)
{
    if (r->clock_MHz <= 0)
        r->clock_MHz = hw->clock_MHz;
    for (int i = 0; i < r->nitems; i++) {
        kt_item *it = &r->items[i];
        if (it->clock_MHz <= 0)
            it->clock_MHz = r->clock_MHz;
        en_item(hw, it);
    }
    sum_energy(r);
}

/* Item src (accounted at its clock f0) evaluated again at clock f <= f0 through its own cost
 * model (kt_item.reeval: cost_eval of the kernel, or the pipeline rebuilt with its allocation);
 * an item without one keeps its clock. -1 when the re-evaluation fails. */
static int item_at(const hw_gpu *hw, const kt_item *src, double f, arena *a, kt_item *dst)
{
    *dst = *src;
    if (f >= src->clock_MHz || !src->reeval)
        return 0;
    arena_pos mark = arena_mark(a);
    int rc = src->reeval(src->reeval_arg, f, a, &dst->c);
    arena_release(a, mark);
    if (rc)
        return -1;
    dst->clock_MHz = f;
    en_item(hw, dst);
    return 0;
}

/* The item under the cap: highest clock in [clock_min, f0] whose average power fits. */
static int cap_item(const hw_gpu *hw, const kt_item *src, double cap_W, arena *a, kt_item *dst)
{
    double f0 = src->clock_MHz;
    *dst = *src;
    dst->over_cap = 0;
    if (src->c.time_s <= 0 || src->avg_power_W <= cap_W)
        return 0;
    double fmin = hw->clock_min_MHz < f0 ? hw->clock_min_MHz : f0;
    kt_item t;
    if (item_at(hw, src, fmin, a, &t))
        return -1;
    if (t.avg_power_W > cap_W) {
        *dst = t;
        dst->over_cap = 1;
        return 0;
    }
    double lo = fmin, hi = f0; /* P(lo) <= cap < P(hi) */
    *dst = t;
    for (int k = 0; k < BISECT_MAX_STEPS && hi - lo > CLOCK_TOL_MHz; k++) {
        double mid = 0.5 * (lo + hi);
        if (item_at(hw, src, mid, a, &t))
            return -1;
        if (t.avg_power_W <= cap_W) {
            lo = mid;
            *dst = t;
        } else {
            hi = mid;
        }
    }
    dst->over_cap = 0;
    return 0;
}

/* 1 when two items are the same kernel at the same clock: the same re-evaluation, ops and cost
 * (their re-evaluation arguments then describe the same work). */
static int same_kernel(const kt_item *x, const kt_item *y)
{
    const cost_result *a = &x->c, *b = &y->c;
    return x->reeval == y->reeval && x->nops == y->nops && x->clock_MHz == y->clock_MHz &&
           a->time_s == b->time_s && a->compute_s == b->compute_s && a->l2_s == b->l2_s &&
           a->dram_s == b->dram_s && a->flops == b->flops && a->tiles == b->tiles &&
           a->dram_read_bytes == b->dram_read_bytes && a->dram_write_bytes == b->dram_write_bytes &&
           a->l2_bytes == b->l2_bytes && a->sms == b->sms && a->bound == b->bound &&
           !memcmp(x->ops, y->ops, (size_t)x->nops * sizeof *x->ops);
}

/* cap_item through the memo: a kernel over the cap that was re-clocked before is copied (its
 * evaluation only: the item keeps its own name, ops and pipeline index). */
static int cap_item_memo(const hw_gpu *hw, const kt_item *src, double cap_W, en_memo *m, arena *a,
                         kt_item *dst)
{
    if (!m || src->c.time_s <= 0 || src->avg_power_W <= cap_W) /* cheap: no re-evaluation */
        return cap_item(hw, src, cap_W, a, dst);
    for (int i = 0; i < m->n; i++)
        if (same_kernel(&m->in[i], src)) {
            *dst = m->out[i]; /* its evaluation under the cap, with this item's own identity */
            dst->name = src->name;
            dst->type = src->type;
            dst->ops = src->ops;
            dst->note = src->note;
            dst->pipeline = src->pipeline;
            dst->reeval_arg = src->reeval_arg;
            return 0;
        }
    if (cap_item(hw, src, cap_W, a, dst))
        return -1;
    if (m->n == m->cap) {
        int nc = m->cap ? 2 * m->cap : 16;
        kt_item *in = arena_calloc(a, (size_t)nc, sizeof *in), *out = arena_calloc(a, (size_t)nc, sizeof *out);
        if (!in || !out)
            return 0; /* no room to remember: the result stands, uncached */
        if (m->n) {
            memcpy(in, m->in, (size_t)m->n * sizeof *in);
            memcpy(out, m->out, (size_t)m->n * sizeof *out);
        }
        m->in = in;
        m->out = out;
        m->cap = nc;
    }
    m->in[m->n] = *src;
    m->out[m->n++] = *dst;
    return 0;
}

double en_memo_slowdown(const hw_gpu *hw, const kt_result *in, double cap_W, const en_memo *m)
{
    double r_clock = in->clock_MHz > 0 ? in->clock_MHz : hw->clock_MHz, d = 0;
    for (int i = 0; m->n && i < in->nitems; i++) {
        kt_item src = in->items[i];
        if (src.clock_MHz <= 0)
            src.clock_MHz = r_clock;
        en_item(hw, &src);
        if (src.c.time_s <= 0 || src.avg_power_W <= cap_W)
            continue;
        for (int k = 0; k < m->n; k++)
            if (same_kernel(&m->in[k], &src)) {
                d += m->out[k].c.time_s - src.c.time_s;
                break;
            }
    }
    return d;
}

int en_power_cap(const hw_gpu *hw, const kt_result *in, double cap_W, arena *a, kt_result *out)
{
    return en_power_cap_memo(hw, in, cap_W, NULL, a, out);
}

int en_power_cap_memo(const hw_gpu *hw, const kt_result *in, double cap_W, en_memo *m, arena *a,
                      kt_result *out)
{
    if (!(cap_W > 0) || !isfinite(cap_W))
        return -1;
    *out = *in;
    /* copy on write: items the limit leaves as they were are shared with the input (a run under
     * the board's limit mostly is: a copy was hundreds of bytes an op) */
    kt_item *items = (kt_item *)in->items;
    double r_clock = in->clock_MHz > 0 ? in->clock_MHz : hw->clock_MHz;
    int changed = 0;
    double ft_sum = 0, t_sum = 0;
    out->over_cap_items = 0;
    for (int i = 0; i < in->nitems; i++) {
        kt_item src = in->items[i];
        if (src.clock_MHz <= 0)
            src.clock_MHz = r_clock;
        en_item(hw, &src);
        kt_item t;
        if (m ? cap_item_memo(hw, &src, cap_W, m, a, &t) : cap_item(hw, &src, cap_W, a, &t))
            return -1;
        if (items == in->items && memcmp(&t, &in->items[i], sizeof t)) {
            if (!(items = arena_alloc(a, (size_t)in->nitems, sizeof *items)))
                return -1;
            memcpy(items, in->items, (size_t)i * sizeof *items);
        }
        kt_item *it = &items[i];
        if (items != in->items)
            *it = t;
        if (it->clock_MHz != src.clock_MHz)
            changed = 1;
        out->over_cap_items += it->over_cap;
        ft_sum += it->clock_MHz * it->c.time_s;
        t_sum += it->c.time_s;
    }
    out->items = items;
    if (changed) {
        result_sum(out);
        out->clock_MHz = t_sum > 0 ? ft_sum / t_sum : r_clock;
    } else {
        out->clock_MHz = r_clock;
    }
    out->power_cap_W = cap_W;
    sum_energy(out);
    return 0;
}
