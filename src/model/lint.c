/* lint: findings that make a study wrong without failing it; the CLI prints them as warnings
 * and lists them in its JSON. */
#include "lint.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "roof.h"

/* The plausible range of one hw field: inside it lie every GPU from V100 to B200 with about a
 * factor of 4-10 to spare, so that a design study's scaled values pass, but a value in the wrong
 * unit (x1000) does not. The loader's hard limits (io/hw_json.c) reject only nonsense. */
typedef struct lint_band {
    const char *path;
    size_t off;
    int is_int;
    double lo, hi;
} lint_band;

#define D(f) offsetof(hw_gpu, f), 0
#define I(f) offsetof(hw_gpu, f), 1
static const lint_band BANDS[] = {
    {"sm_count", I(sm_count), 4, 1024},
    {"clock_MHz", D(clock_MHz), 300, 4000},
    {"clock_min_MHz", D(clock_min_MHz), 50, 4000},
    {"simt_fp32_flop_per_clk_per_sm", D(simt_fp32_flop_per_clk_per_sm), 32, 1024},
    {"sm.smem_per_sm_KiB", D(smem_per_sm_KiB), 16, 1024},
    {"sm.registers_per_sm_KiB", D(registers_per_sm_KiB), 64, 1024},
    {"sm.max_ctas_per_sm", I(max_ctas_per_sm), 8, 64},
    {"sm.max_threads_per_sm", I(max_threads_per_sm), 512, 4096},
    {"sm.smem_bandwidth_bytes_per_clk", D(smem_bandwidth_bytes_per_clk), 32, 1024},
    {"dram.capacity_GiB", D(dram_capacity_GiB), 1, 2048},
    {"dram.bandwidth_GBps", D(dram_bandwidth_GBps), 100, 50000},
    {"dram.latency_ns", D(dram_latency_ns), 50, 2000},
    {"l2.capacity_MiB", D(l2_capacity_MiB), 1, 2048},
    {"l2.bandwidth_GBps", D(l2_bandwidth_GBps), 300, 200000},
    {"l2.latency_ns", D(l2_latency_ns), 20, 1000},
    {"launch.overhead_us", D(launch_overhead_us), 0.2, 50},
    {"launch.graph_overhead_us", D(launch_graph_overhead_us), 0.05, 20},
    {"launch.cta_dispatch_ns", D(cta_dispatch_ns), 0.05, 20},
    {"efficiency.tensor_frac", D(tensor_frac), 0.3, 1},
    {"efficiency.simt_frac", D(simt_frac), 0.3, 1},
    {"efficiency.dram_frac", D(dram_frac), 0.3, 1},
    {"efficiency.l2_frac", D(l2_frac), 0.3, 1},
    {"energy.simt_fp32_pJ_per_flop", D(simt_fp32_pJ_per_flop), 0.3, 60},
    {"energy.dram_pJ_per_byte", D(dram_pJ_per_byte), 2, 200},
    {"energy.l2_pJ_per_byte", D(l2_pJ_per_byte), 0.3, 60},
    {"energy.smem_pJ_per_byte", D(smem_pJ_per_byte), 0.05, 20},
    {"energy.rf_pJ_per_byte", D(rf_pJ_per_byte), 0.02, 10},
    {"power.idle_W", D(idle_W), 5, 1000},
    {"power.static_W", D(static_W), 5, 2000},
    {"power.tdp_W", D(tdp_W), 20, 5000},
    {"dvfs.voltage_min_V", D(voltage_min_V), 0.4, 1.3},
    {"dvfs.voltage_max_V", D(voltage_max_V), 0.6, 1.5},
    {"dvfs.knee_clock_MHz", D(knee_clock_MHz), 50, 4000},
    {"queue.atomic_latency_ns", D(queue_atomic_latency_ns), 20, 10000},
    {"queue.sync_round_trips_per_tile", D(queue_sync_round_trips_per_tile), 0.5, 50},
};
#undef D
#undef I
/* Per dtype, when not 0 (0 = no tensor cores for it): tensor FLOP per clock per SM (V100 fp16
 * 1024 to B200 fp8 ~16k) and tensor pJ per FLOP. */
#define TENSOR_RATE_LO 64
#define TENSOR_RATE_HI 65536
#define TENSOR_PJ_LO 0.02
#define TENSOR_PJ_HI 20

int lint_add(lint_list *out, const char *fmt, ...)
{
    char m[LINT_MSG];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m, sizeof m, fmt, ap);
    va_end(ap);
    for (int i = 0; i < out->n; i++)
        if (!strcmp(out->msg[i], m))
            return 0;
    if (out->n == LINT_MAX)
        return -1;
    memcpy(out->msg[out->n++], m, sizeof m);
    return 1;
}

static void band(lint_list *out, const char *gpu, const char *path, double v, double lo, double hi)
{
    if (v < lo || v > hi)
        lint_add(out, "%s: %s = %g is outside the plausible range [%g, %g] (check its unit)", gpu,
                 path, v, lo, hi);
}

void lint_hw(const hw_gpu *g, lint_list *out)
{
    for (size_t i = 0; i < sizeof BANDS / sizeof BANDS[0]; i++) {
        const lint_band *b = &BANDS[i];
        const char *p = (const char *)g + b->off;
        double v = b->is_int ? (double)*(const int *)(const void *)p
                             : *(const double *)(const void *)p;
        band(out, g->name, b->path, v, b->lo, b->hi);
    }
    for (int d = 0; d < DT_COUNT; d++) {
        char path[96];
        if (g->tensor_flop_per_clk_per_sm[d] > 0) {
            snprintf(path, sizeof path, "tensor_flop_per_clk_per_sm.%s", dt_name((dtype)d));
            band(out, g->name, path, g->tensor_flop_per_clk_per_sm[d], TENSOR_RATE_LO,
                 TENSOR_RATE_HI);
        }
        if (g->tensor_pJ_per_flop[d] > 0) {
            snprintf(path, sizeof path, "energy.tensor_pJ_per_flop.%s", dt_name((dtype)d));
            band(out, g->name, path, g->tensor_pJ_per_flop[d], TENSOR_PJ_LO, TENSOR_PJ_HI);
        }
    }
    /* the L2 of every GPU generation delivers more bandwidth than its DRAM */
    if (g->l2_bandwidth_GBps < g->dram_bandwidth_GBps)
        lint_add(out, "%s: l2.bandwidth_GBps = %g is below dram.bandwidth_GBps = %g (no GPU's L2 "
                      "is slower than its DRAM)",
                 g->name, g->l2_bandwidth_GBps, g->dram_bandwidth_GBps);
}

void lint_dtype(const hw_gpu *hw, const wl_graph *g, const op_work *w, lint_list *out)
{
    int count[DT_COUNT] = {0};
    for (int i = 0; i < g->nop; i++)
        if (w[i].flops_tensor > 0 && w[i].cdt != DT_FP32 &&
            roof_tensor_rate(hw, w[i].cdt, hw->clock_MHz) <= 0)
            count[w[i].cdt]++;
    /* the dtype to suggest: one this GPU has tensor cores for, 16-bit first */
    static const dtype PREFER[] = {DT_BF16, DT_FP16, DT_FP8, DT_TF32};
    dtype alt = DT_COUNT;
    for (size_t k = 0; k < sizeof PREFER / sizeof PREFER[0] && alt == DT_COUNT; k++)
        if (hw->tensor_flop_per_clk_per_sm[PREFER[k]] > 0)
            alt = PREFER[k];
    for (int d = 0; d < DT_COUNT; d++) {
        if (!count[d])
            continue;
        if (alt == DT_COUNT) {
            lint_add(out, "%s has no %s tensor cores: %s GEMM and attention ops run on its FP32 SIMT "
                          "units",
                     hw->name, dt_name((dtype)d), dt_name((dtype)d));
            continue;
        }
        /* per-clock peaks: the SIMT fallback against the tensor cores of the suggested dtype */
        double slow = hw->tensor_flop_per_clk_per_sm[alt] / hw->simt_fp32_flop_per_clk_per_sm;
        lint_add(out, "%s has no %s tensor cores: %s GEMM and attention ops run on its FP32 SIMT "
                      "units, %.0fx below its %s tensor-core peak (--dtype %s uses them)",
                 hw->name, dt_name((dtype)d), dt_name((dtype)d), slow, dt_name(alt), dt_name(alt));
    }
}

void lint_moe(const wl_graph *g, lint_list *out)
{
    int first = -1, n = 0;
    double share = 0.0, cap = 0.0, hot = 0.0;
    for (int i = 0; i < g->nop; i++) {
        const wl_op *o = &g->op[i];
        if (o->type != OP_MOE_DISPATCH || o->phase != PH_FWD) /* not the combine's gradient */
            continue;
        int64_t t, k, e, c, slots;
        op_moe_shape(g, o, &t, &k, &e, &c);
        if (wl_mul(t, k, &slots) || slots <= 0)
            continue;
        double imb = op_moe_imbalance(o);
        double kept = op_moe_kept_slots(t, k, e, c, imb);
        if (kept >= (double)slots * (1.0 - 1e-9))
            continue;
        if (first < 0) {
            first = i;
            share = 1.0 - kept / (double)slots;
            cap = (double)c;
            hot = imb * (double)slots / (double)e;
        }
        n++;
    }
    if (first < 0)
        return;
    lint_add(out, "moe_dispatch '%s' drops %.1f%% of the token slots: expert capacity %.0f is below "
                  "the busiest expert's load %.0f (imbalance_pct); %d dispatch%s drop%s slots",
             g->op[first].name, 100.0 * share, cap, hot, n, n == 1 ? "" : "es", n == 1 ? "s" : "");
}

void lint_memory(const hw_gpu *hw, int64_t weight_bytes, int64_t peak_act_bytes,
                 const char *what, lint_list *out)
{
    double cap = hw->dram_capacity_GiB * 1073741824.0;
    double need = (double)weight_bytes + (double)peak_act_bytes;
    if (need > cap)
        lint_add(out, "%s needs %.1f GB of memory (weights %.1f GB + peak live activations %.1f "
                      "GB), more than %s's %g GiB (%.1f GB): the real run would not fit",
                 what, need / 1e9, (double)weight_bytes / 1e9, (double)peak_act_bytes / 1e9,
                 hw->name, hw->dram_capacity_GiB, cap / 1e9);
}
