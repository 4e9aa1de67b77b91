/* hw_json: a GPU hardware description read from JSON - one table row per field, each
 * validated (type, finite, range) with its JSON path in errors. */
#include "hw_json.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "jsonx.h"

/* One numeric field: dotted JSON path, where it goes, its valid range, whether it may be absent
 * (then `def`). Ranges reject nonsense (a zero bandwidth, a fraction above 1), not unusual GPUs. */
typedef struct hw_field {
    const char *path;
    size_t off;
    int is_int;
    double lo, hi;
    int optional;
    double def;
} hw_field;

#define D(f) offsetof(hw_gpu, f), 0
#define I(f) offsetof(hw_gpu, f), 1
static const hw_field HW_FIELDS[] = {
    {"sm_count", I(sm_count), 1, 100000, 0, 0},
    {"clock_MHz", D(clock_MHz), 1, 1e5, 0, 0},
    {"clock_min_MHz", D(clock_min_MHz), 1, 1e5, 0, 0},
    {"simt_fp32_flop_per_clk_per_sm", D(simt_fp32_flop_per_clk_per_sm), 1, 1e7, 0, 0},
    {"sm.smem_per_sm_KiB", D(smem_per_sm_KiB), 1, 1e6, 0, 0},
    {"sm.registers_per_sm_KiB", D(registers_per_sm_KiB), 1, 1e6, 0, 0},
    {"sm.max_ctas_per_sm", I(max_ctas_per_sm), 1, 1024, 0, 0},
    {"sm.max_threads_per_sm", I(max_threads_per_sm), 32, 65536, 0, 0},
    {"sm.smem_bandwidth_bytes_per_clk", D(smem_bandwidth_bytes_per_clk), 1, 1e6, 0, 0},
    {"dram.capacity_GiB", D(dram_capacity_GiB), 1e-3, 1e6, 0, 0},
    {"dram.bandwidth_GBps", D(dram_bandwidth_GBps), 1e-3, 1e7, 0, 0},
    {"dram.latency_ns", D(dram_latency_ns), 0, 1e6, 0, 0},
    {"l2.capacity_MiB", D(l2_capacity_MiB), 1e-3, 1e6, 0, 0},
    {"l2.bandwidth_GBps", D(l2_bandwidth_GBps), 1e-3, 1e7, 0, 0},
    {"l2.latency_ns", D(l2_latency_ns), 0, 1e6, 0, 0},
    {"l2.persisting_max_MiB", D(l2_persisting_max_MiB), 0, 1e6, 1, 0},
    {"l2.atomic_Gops", D(l2_atomic_Gops), 0, 1e6, 1, 0},
    {"launch.overhead_us", D(launch_overhead_us), 0, 1e6, 0, 0},
    {"launch.graph_overhead_us", D(launch_graph_overhead_us), 0, 1e6, 0, 0},
    {"launch.cta_dispatch_ns", D(cta_dispatch_ns), 0, 1e6, 0, 0},
    {"launch.kernel_floor_us", D(kernel_floor_us), 0, 1e6, 1, 0.70},
    /* library kernel classes: optional; absent = the H200 measurement per SM clock (the
     * defaults below; hw/h200.json sources them) */
    {"kernels.gemm_fixed_clk", D(gemm_fixed_clk), 0, 1e9, 1, 4209},
    {"kernels.gemm_align1_flop_per_clk_per_sm", D(gemm_align1_flop_per_clk_per_sm), 1, 1e7, 1, 492},
    {"kernels.gemm_align1_tile_clk", D(gemm_align1_tile_clk), 0, 1e9, 1, 1802},
    {"kernels.gemm_align1_clk_per_out_elem", D(gemm_align1_clk_per_out_elem), 0, 1e6, 1, 0.1916},
    {"kernels.col_reduce_partial_ns", D(col_reduce_partial_ns), 0, 1e6, 1, 228},
    {"kernels.norm_param_grad_ns_per_row", D(norm_param_grad_ns_per_row), 0, 1e6, 1, 3.75},
    {"kernels.unaligned_copy_bytes_per_clk_per_sm", D(unaligned_copy_bytes_per_clk_per_sm), 0.01, 1e6, 1, 5.9},
    {"efficiency.tensor_frac", D(tensor_frac), 1e-3, 1, 0, 0},
    {"efficiency.simt_frac", D(simt_frac), 1e-3, 1, 0, 0},
    {"efficiency.dram_frac", D(dram_frac), 1e-3, 1, 0, 0},
    {"efficiency.l2_frac", D(l2_frac), 1e-3, 1, 0, 0},
    {"energy.simt_fp32_pJ_per_flop", D(simt_fp32_pJ_per_flop), 0, 1e6, 0, 0},
    {"energy.dram_pJ_per_byte", D(dram_pJ_per_byte), 0, 1e6, 0, 0},
    {"energy.l2_pJ_per_byte", D(l2_pJ_per_byte), 0, 1e6, 0, 0},
    {"energy.smem_pJ_per_byte", D(smem_pJ_per_byte), 0, 1e6, 0, 0},
    {"energy.rf_pJ_per_byte", D(rf_pJ_per_byte), 0, 1e6, 0, 0},
    {"power.idle_W", D(idle_W), 0, 1e5, 0, 0},
    {"power.static_W", D(static_W), 0, 1e5, 0, 0},
    {"power.tdp_W", D(tdp_W), 1, 1e5, 0, 0},
    {"dvfs.voltage_min_V", D(voltage_min_V), 0.1, 5, 0, 0},
    {"dvfs.voltage_max_V", D(voltage_max_V), 0.1, 5, 0, 0},
    {"dvfs.knee_clock_MHz", D(knee_clock_MHz), 1, 1e5, 0, 0},
    {"queue.atomic_latency_ns", D(queue_atomic_latency_ns), 0, 1e6, 0, 0},
    {"queue.sync_round_trips_per_tile", D(queue_sync_round_trips_per_tile), 0, 1000, 0, 0},
    {"queue.cta_bytes_per_clk", D(queue_cta_bytes_per_clk), 0, 1e6, 1, 0},
};
#undef D
#undef I

static const cJSON *lookup(const cJSON *root, const char *dotted, char *failed_at, size_t n)
{
    char buf[128];
    snprintf(buf, sizeof buf, "%s", dotted);
    const cJSON *cur = root;
    char *save = NULL;
    for (char *tok = strtok_r(buf, ".", &save); tok; tok = strtok_r(NULL, ".", &save)) {
        const cJSON *next = cJSON_IsObject(cur) ? cJSON_GetObjectItemCaseSensitive(cur, tok) : NULL;
        if (!next) {
            size_t len = (size_t)(tok - buf) + strlen(tok);
            snprintf(failed_at, n, "%.*s", (int)len, dotted);
            return NULL;
        }
        cur = next;
    }
    return cur;
}

static int read_dtype_table(const cJSON *root, const char *key, const char *file, double *out,
                            int required, kt_err *e)
{
    char path[128];
    snprintf(path, sizeof path, "%s", key);
    char failed[128];
    const cJSON *o = lookup(root, key, failed, sizeof failed);
    if (!o) {
        if (!required)
            return 0;
        return err_set(e, KT_EINPUT, file, path, "missing field");
    }
    if (!cJSON_IsObject(o))
        return err_set(e, KT_EINPUT, file, path, "must be an object of dtype -> number");
    const cJSON *it;
    cJSON_ArrayForEach(it, o)
    {
        dtype d;
        char p[192];
        snprintf(p, sizeof p, "%s.%s", path, it->string);
        if (dt_parse(it->string, &d) || !dt_is_float(d))
            return err_set(e, KT_EINPUT, file, p, "unknown floating-point dtype \"%s\"", it->string);
        if (!cJSON_IsNumber(it) || !isfinite(it->valuedouble) || it->valuedouble < 0)
            return err_set(e, KT_EINPUT, file, p, "must be a number >= 0");
        out[d] = it->valuedouble;
    }
    return 0;
}

int hw_from_json(const cJSON *root, const char *file, hw_gpu *g, kt_err *e)
{
    memset(g, 0, sizeof *g);
    if (!cJSON_IsObject(root))
        return err_set(e, KT_EINPUT, file, NULL, "top level must be an object");
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(root, "name");
    if (!cJSON_IsString(name) || !name->valuestring[0])
        return err_set(e, KT_EINPUT, file, "name", "must be a non-empty string");
    snprintf(g->name, sizeof g->name, "%s", name->valuestring);
    const cJSON *desc = cJSON_GetObjectItemCaseSensitive(root, "description");
    if (cJSON_IsString(desc))
        snprintf(g->description, sizeof g->description, "%s", desc->valuestring);

    for (size_t i = 0; i < sizeof HW_FIELDS / sizeof HW_FIELDS[0]; i++) {
        const hw_field *f = &HW_FIELDS[i];
        char path[128], failed[128];
        snprintf(path, sizeof path, "%s", f->path);
        const cJSON *it = lookup(root, f->path, failed, sizeof failed);
        double v;
        if (!it) {
            if (!f->optional)
                return err_set(e, KT_EINPUT, file, path, "missing field");
            v = f->def;
        } else {
            if (!cJSON_IsNumber(it))
                return err_set(e, KT_EINPUT, file, path, "must be a number");
            v = it->valuedouble;
            if (!isfinite(v))
                return err_set(e, KT_EINPUT, file, path, "must be finite");
            if (f->is_int && v != floor(v))
                return err_set(e, KT_EINPUT, file, path, "must be an integer");
            if (v < f->lo || v > f->hi)
                return err_set(e, KT_EINPUT, file, path, "must be in [%g, %g]", f->lo, f->hi);
        }
        if (f->is_int)
            *(int *)((char *)g + f->off) = (int)v;
        else
            *(double *)((char *)g + f->off) = v;
    }
    if (read_dtype_table(root, "tensor_flop_per_clk_per_sm", file, g->tensor_flop_per_clk_per_sm, 1, e))
        return -1;
    if (read_dtype_table(root, "energy.tensor_pJ_per_flop", file, g->tensor_pJ_per_flop, 1, e))
        return -1;
    if (g->clock_min_MHz > g->clock_MHz)
        return err_set(e, KT_EINPUT, file, "clock_min_MHz", "must be <= clock_MHz");
    if (g->voltage_min_V > g->voltage_max_V)
        return err_set(e, KT_EINPUT, file, "dvfs.voltage_min_V", "must be <= voltage_max_V");
    if (g->static_W > g->tdp_W)
        return err_set(e, KT_EINPUT, file, "power.static_W", "must be <= tdp_W");
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(root, "measured");
    if (cJSON_IsObject(m)) {
        const cJSON *d = cJSON_GetObjectItemCaseSensitive(m, "date");
        g->measured = 1;
        if (cJSON_IsString(d))
            snprintf(g->measured_date, sizeof g->measured_date, "%s", d->valuestring);
    }
    return 0;
}

int hw_load(const char *file, hw_gpu *g, kt_err *e)
{
    cJSON *root = jsonx_load(file, e);
    if (!root)
        return -1;
    int rc = hw_from_json(root, file, g, e);
    cJSON_Delete(root);
    return rc;
}

