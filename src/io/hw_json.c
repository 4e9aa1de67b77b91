/* hw_json: a GPU hardware description read from JSON - one table row per field, each
 * validated (type, finite, range) with its JSON path in errors; unknown keys are errors; a file
 * may name a "base" file whose keys it overrides. */
#include "hw_json.h"

#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jsonx.h"

/* One numeric field: dotted JSON path, where it goes, its valid range, whether it may be absent
 * (then `def`). Ranges reject nonsense (a zero bandwidth, a fraction above 1), not unusual GPUs.
 * min_pos > 0: a rate where 0 means "not given", and any other value must be at least min_pos
 * (a denormal rate would make times infinite). */
typedef struct hw_field {
    const char *path;
    size_t off;
    int is_int;
    double lo, hi;
    int optional;
    double def;
    double min_pos;
} hw_field;

/* The least nonzero optional rate (GB/s, GFLOP/s, Gop/s, bytes per clock). */
#define HW_RATE_MIN 1e-3

#define D(f) offsetof(hw_gpu, f), 0
#define I(f) offsetof(hw_gpu, f), 1
static const hw_field HW_FIELDS[] = {
    {"sm_count", I(sm_count), 1, 100000, 0, 0, 0},
    {"clock_MHz", D(clock_MHz), 1, 1e5, 0, 0, 0},
    {"clock_min_MHz", D(clock_min_MHz), 1, 1e5, 0, 0, 0},
    {"simt_fp32_flop_per_clk_per_sm", D(simt_fp32_flop_per_clk_per_sm), 1, 1e7, 0, 0, 0},
    {"sm.smem_per_sm_KiB", D(smem_per_sm_KiB), 1, 1e6, 0, 0, 0},
    {"sm.registers_per_sm_KiB", D(registers_per_sm_KiB), 1, 1e6, 0, 0, 0},
    {"sm.max_ctas_per_sm", I(max_ctas_per_sm), 1, 1024, 0, 0, 0},
    {"sm.max_threads_per_sm", I(max_threads_per_sm), 32, 65536, 0, 0, 0},
    {"sm.smem_bandwidth_bytes_per_clk", D(smem_bandwidth_bytes_per_clk), 1, 1e6, 0, 0, 0},
    {"dram.capacity_GiB", D(dram_capacity_GiB), 1e-3, 1e6, 0, 0, 0},
    {"dram.bandwidth_GBps", D(dram_bandwidth_GBps), 1e-3, 1e7, 0, 0, 0},
    {"dram.latency_ns", D(dram_latency_ns), 0, 1e6, 0, 0, 0},
    {"l2.capacity_MiB", D(l2_capacity_MiB), 1e-3, 1e6, 0, 0, 0},
    {"l2.bandwidth_GBps", D(l2_bandwidth_GBps), 1e-3, 1e7, 0, 0, 0},
    {"l2.latency_ns", D(l2_latency_ns), 0, 1e6, 0, 0, 0},
    {"l2.persisting_max_MiB", D(l2_persisting_max_MiB), 0, 1e6, 1, 0, 0},
    {"l2.atomic_Gops", D(l2_atomic_Gops), 0, 1e6, 1, 0, HW_RATE_MIN},
    {"l2.partitions", I(l2_partitions), 1, 64, 1, 1, 0},
    {"launch.overhead_us", D(launch_overhead_us), 0, 1e6, 0, 0, 0},
    {"launch.graph_overhead_us", D(launch_graph_overhead_us), 0, 1e6, 0, 0, 0},
    {"launch.cta_dispatch_ns", D(cta_dispatch_ns), 0, 1e6, 0, 0, 0},
    {"launch.kernel_floor_us", D(kernel_floor_us), 0, 1e6, 1, 0.70, 0},
    /* library kernel classes: optional; absent = the H200 measurement per SM clock (the
     * defaults below; hw/h200.json sources them) */
    {"kernels.gemm_fixed_clk", D(gemm_fixed_clk), 0, 1e9, 1, 4209, 0},
    {"kernels.gemm_align1_flop_per_clk_per_sm", D(gemm_align1_flop_per_clk_per_sm), 1, 1e7, 1, 492, 0},
    {"kernels.gemm_align1_tile_clk", D(gemm_align1_tile_clk), 0, 1e9, 1, 1802, 0},
    {"kernels.gemm_align1_clk_per_out_elem", D(gemm_align1_clk_per_out_elem), 0, 1e6, 1, 0.1916, 0},
    {"kernels.gemm_wmma_flop_per_clk_per_sm", D(gemm_wmma_flop_per_clk_per_sm), 1, 1e7, 1, 110.3, 0},
    {"kernels.gemm_wmma_tile_clk", D(gemm_wmma_tile_clk), 0, 1e9, 1, 138, 0},
    {"kernels.col_reduce_partial_ns", D(col_reduce_partial_ns), 0, 1e6, 1, 228, 0},
    {"kernels.col_reduce_fixed_ns", D(col_reduce_fixed_ns), 0, 1e6, 1, 3300, 0},
    {"kernels.norm_param_grad_ns_per_row", D(norm_param_grad_ns_per_row), 0, 1e6, 1, 3.75, 0},
    {"kernels.unaligned_copy_bytes_per_clk_per_sm", D(unaligned_copy_bytes_per_clk_per_sm), 0.01, 1e6, 1, 5.9, 0},
    {"kernels.gemm_multicast_ctas", I(gemm_multicast_ctas), 1, 16, 1, 1, 0},
    {"efficiency.tensor_frac", D(tensor_frac), 1e-3, 1, 0, 0, 0},
    {"efficiency.simt_frac", D(simt_frac), 1e-3, 1, 0, 0, 0},
    {"efficiency.dram_frac", D(dram_frac), 1e-3, 1, 0, 0, 0},
    {"efficiency.l2_frac", D(l2_frac), 1e-3, 1, 0, 0, 0},
    {"energy.simt_fp32_pJ_per_flop", D(simt_fp32_pJ_per_flop), 0, 1e6, 0, 0, 0},
    {"energy.dram_pJ_per_byte", D(dram_pJ_per_byte), 0, 1e6, 0, 0, 0},
    {"energy.l2_pJ_per_byte", D(l2_pJ_per_byte), 0, 1e6, 0, 0, 0},
    {"energy.smem_pJ_per_byte", D(smem_pJ_per_byte), 0, 1e6, 0, 0, 0},
    {"energy.rf_pJ_per_byte", D(rf_pJ_per_byte), 0, 1e6, 0, 0, 0},
    {"power.idle_W", D(idle_W), 0, 1e5, 0, 0, 0},
    {"power.static_W", D(static_W), 0, 1e5, 0, 0, 0},
    {"power.tdp_W", D(tdp_W), 1, 1e5, 0, 0, 0},
    {"dvfs.voltage_min_V", D(voltage_min_V), 0.1, 5, 0, 0, 0},
    {"dvfs.voltage_max_V", D(voltage_max_V), 0.1, 5, 0, 0, 0},
    {"dvfs.knee_clock_MHz", D(knee_clock_MHz), 1, 1e5, 0, 0, 0},
    {"queue.atomic_latency_ns", D(queue_atomic_latency_ns), 0, 1e6, 0, 0, 0},
    {"queue.sync_round_trips_per_tile", D(queue_sync_round_trips_per_tile), 0, 1000, 0, 0, 0},
    {"queue.cta_bytes_per_clk", D(queue_cta_bytes_per_clk), 0, 1e6, 1, 0, HW_RATE_MIN},
    {"queue.rings_pinned", I(queue_rings_pinned), 0, 1, 1, 1, 0},
    /* a pipeline runtime's stage bodies: optional, all rates or none (checked below) */
    {"stage_body.handoff_ns", D(body_handoff_ns), 0, 1e6, 1, 0, 0},
    {"stage_body.poll_ns", D(body_poll_ns), 0, 1e6, 1, 0, 0},
    {"stage_body.load_GBps", D(body_load_GBps), 0, 1e7, 1, 0, HW_RATE_MIN},
    {"stage_body.operand_GBps", D(body_operand_GBps), 0, 1e7, 1, 0, HW_RATE_MIN},
    {"stage_body.gather_GBps", D(body_gather_GBps), 0, 1e7, 1, 0, HW_RATE_MIN},
    {"stage_body.store_GBps", D(body_store_GBps), 0, 1e7, 1, 0, HW_RATE_MIN},
    {"stage_body.tensor_GFLOPps", D(body_tensor_GFLOPps), 0, 1e9, 1, 0, HW_RATE_MIN},
    {"stage_body.simt_GFLOPps", D(body_simt_GFLOPps), 0, 1e9, 1, 0, HW_RATE_MIN},
    {"stage_body.coresident_slowdown_frac", D(body_coresident_slowdown_frac), 0, 10, 1, 0, 0},
    {"stage_body.ctas_per_sm", I(body_ctas_per_sm), 1, 1024, 1, 1, 0},
    {"stage_body.staging_bytes_per_row", D(body_staging_bytes_per_row), 0, 1e6, 1, 0, 0},
};
#undef D
#undef I
enum { HW_NFIELDS = sizeof HW_FIELDS / sizeof HW_FIELDS[0] };

/* Tables of dtype -> number (their keys are checked as dtypes by read_dtype_table). */
static const char *const HW_DTYPE_TABLES[] = {"tensor_flop_per_clk_per_sm",
                                              "energy.tensor_pJ_per_flop"};
/* The l2.ring_reuse curve: three arrays of one length (2..HW_RING_REUSE_MAX points). */
static const char *const HW_CURVE_KEYS[] = {"l2.ring_reuse.footprint_MiB",
                                            "l2.ring_reuse.written_back_frac",
                                            "l2.ring_reuse.read_back_frac"};
/* Top-level keys that are not numbers: free text, provenance and inheritance. */
static const char *const HW_META_KEYS[] = {"name", "description", "sources", "measured", "base"};
enum { HW_NDTYPE_TABLES = sizeof HW_DTYPE_TABLES / sizeof HW_DTYPE_TABLES[0],
       HW_NCURVE = sizeof HW_CURVE_KEYS / sizeof HW_CURVE_KEYS[0],
       HW_NMETA = sizeof HW_META_KEYS / sizeof HW_META_KEYS[0],
       HW_NKNOWN = HW_NFIELDS + HW_NDTYPE_TABLES + HW_NCURVE + HW_NMETA };

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

/* Ranges of the per-dtype tables. A tensor rate is 0 (no tensor cores for the dtype: SIMT
 * fallback) or at least 1 FLOP per clock per SM (an A100 does 2048 in bf16, a B200 about 16k in
 * fp8); 1e6 leaves room for any future part. Energy per tensor FLOP is 0.1-2 pJ on real parts;
 * 1e3 pJ bounds it so that energies stay finite. A denormal rate or a 1e308 pJ figure is an
 * error, not a NaN in the output. */
#define HW_TENSOR_RATE_MIN 1.0
#define HW_TENSOR_RATE_MAX 1e6
#define HW_TENSOR_PJ_MAX 1e3

static int read_dtype_table(const cJSON *root, const char *key, const char *file, double *out,
                            int required, double lo, double hi, kt_err *e)
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
        double v = it->valuedouble;
        if (!cJSON_IsNumber(it) || !isfinite(v) || v < 0)
            return err_set(e, KT_EINPUT, file, p, "must be a number >= 0");
        if (v != 0 && (v < lo || v > hi))
            return err_set(e, KT_EINPUT, file, p,
                           lo > 0 ? "must be 0 or in [%g, %g]" : "must be in [%g, %g]", lo, hi);
        out[d] = v;
    }
    return 0;
}

/* The optional l2.ring_reuse curve: footprints >= 0 and increasing, fractions in [0, 1], the
 * three arrays of one length. */
static int read_ring_reuse(const cJSON *root, const char *file, hw_gpu *g, kt_err *e)
{
    char failed[128];
    const cJSON *o = lookup(root, "l2.ring_reuse", failed, sizeof failed);
    if (!o)
        return 0;
    if (!cJSON_IsObject(o))
        return err_set(e, KT_EINPUT, file, "l2.ring_reuse",
                       "must be an object of footprint_MiB, written_back_frac, read_back_frac");
    double *out[HW_NCURVE] = {g->ring_reuse_footprint_MiB, g->ring_written_back_frac,
                              g->ring_read_back_frac};
    int n = -1;
    for (int k = 0; k < HW_NCURVE; k++) {
        const char *path = HW_CURVE_KEYS[k];
        const cJSON *a = lookup(root, path, failed, sizeof failed);
        if (!a)
            return err_set(e, KT_EINPUT, file, path, "missing field");
        int len = cJSON_IsArray(a) ? cJSON_GetArraySize(a) : -1;
        if (len < 2 || len > HW_RING_REUSE_MAX)
            return err_set(e, KT_EINPUT, file, path, "must be an array of 2 to %d numbers",
                           HW_RING_REUSE_MAX);
        if (n >= 0 && len != n)
            return err_set(e, KT_EINPUT, file, path, "must have %d points, as footprint_MiB",
                           n);
        n = len;
        int i = 0;
        const cJSON *it;
        cJSON_ArrayForEach(it, a)
        {
            char p[160];
            snprintf(p, sizeof p, "%s[%d]", path, i);
            double v = it->valuedouble;
            if (!cJSON_IsNumber(it) || !isfinite(v))
                return err_set(e, KT_EINPUT, file, p, "must be a finite number");
            if (k == 0 && (v < 0 || v > 1e6))
                return err_set(e, KT_EINPUT, file, p, "must be in [0, 1e+06]");
            if (k == 0 && i > 0 && v <= out[0][i - 1])
                return err_set(e, KT_EINPUT, file, p, "must be above the point before (%g)",
                               out[0][i - 1]);
            if (k > 0 && (v < 0 || v > 1))
                return err_set(e, KT_EINPUT, file, p, "must be in [0, 1]");
            out[k][i++] = v;
        }
    }
    g->ring_reuse_n = n;
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
            if (f->min_pos > 0 && v != 0 && v < f->min_pos)
                return err_set(e, KT_EINPUT, file, path, "must be 0 (not given) or in [%g, %g]",
                               f->min_pos, f->hi);
        }
        if (f->is_int)
            *(int *)((char *)g + f->off) = (int)v;
        else
            *(double *)((char *)g + f->off) = v;
    }
    if (read_dtype_table(root, "tensor_flop_per_clk_per_sm", file, g->tensor_flop_per_clk_per_sm, 1,
                         HW_TENSOR_RATE_MIN, HW_TENSOR_RATE_MAX, e))
        return -1;
    if (read_dtype_table(root, "energy.tensor_pJ_per_flop", file, g->tensor_pJ_per_flop, 1, 0,
                         HW_TENSOR_PJ_MAX, e))
        return -1;
    if (read_ring_reuse(root, file, g, e))
        return -1;
    if (!g->queue_rings_pinned && g->ring_reuse_n < 1)
        return err_set(e, KT_EINPUT, file, "queue.rings_pinned",
                       "0 (rings are ordinary L2 lines) needs the l2.ring_reuse curve");
    if (g->clock_min_MHz > g->clock_MHz)
        return err_set(e, KT_EINPUT, file, "clock_min_MHz", "must be <= clock_MHz");
    if (g->voltage_min_V > g->voltage_max_V)
        return err_set(e, KT_EINPUT, file, "dvfs.voltage_min_V", "must be <= voltage_max_V");
    if (g->static_W > g->tdp_W)
        return err_set(e, KT_EINPUT, file, "power.static_W", "must be <= tdp_W");
    /* stage bodies: every rate, or none (a missing rate would make its work free) */
    {
        static const char *const RATES[] = {"load_GBps", "operand_GBps", "gather_GBps",
                                            "store_GBps", "tensor_GFLOPps", "simt_GFLOPps"};
        const double v[] = {g->body_load_GBps, g->body_operand_GBps, g->body_gather_GBps,
                            g->body_store_GBps, g->body_tensor_GFLOPps, g->body_simt_GFLOPps};
        const cJSON *sb = cJSON_GetObjectItemCaseSensitive(root, "stage_body");
        for (int i = 0; sb && i < 6; i++)
            if (v[i] <= 0) {
                char path[64];
                snprintf(path, sizeof path, "stage_body.%s", RATES[i]);
                return err_set(e, KT_EINPUT, file, path,
                               "must be a number > 0 (a stage_body needs every rate)");
            }
        if (g->body_ctas_per_sm > g->max_ctas_per_sm)
            return err_set(e, KT_EINPUT, file, "stage_body.ctas_per_sm",
                           "must be <= sm.max_ctas_per_sm (%d)", g->max_ctas_per_sm);
    }
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(root, "measured");
    if (cJSON_IsObject(m)) {
        const cJSON *d = cJSON_GetObjectItemCaseSensitive(m, "date");
        g->measured = 1;
        if (cJSON_IsString(d))
            snprintf(g->measured_date, sizeof g->measured_date, "%s", d->valuestring);
        const cJSON *gpu = cJSON_GetObjectItemCaseSensitive(m, "gpu");
        if (cJSON_IsString(gpu))
            snprintf(g->measured_gpu, sizeof g->measured_gpu, "%s", gpu->valuestring);
        const cJSON *fl = cJSON_GetObjectItemCaseSensitive(m, "fields");
        if (cJSON_IsArray(fl))
            g->measured_fields = cJSON_GetArraySize(fl);
    }
    return 0;
}

/* Every key a hw file may hold, as dotted paths (fields, dtype tables, meta keys). */
static int known_keys(const char **out)
{
    int n = 0;
    for (int i = 0; i < HW_NFIELDS; i++)
        out[n++] = HW_FIELDS[i].path;
    for (int i = 0; i < HW_NDTYPE_TABLES; i++)
        out[n++] = HW_DTYPE_TABLES[i];
    for (int i = 0; i < HW_NCURVE; i++)
        out[n++] = HW_CURVE_KEYS[i];
    for (int i = 0; i < HW_NMETA; i++)
        out[n++] = HW_META_KEYS[i];
    return n;
}

/* Is `path` a known key (1), the dotted prefix of one, i.e. an object to descend into (2), or
 * unknown (0)? */
static int key_kind(const char *path, const char *const *known, int n)
{
    size_t len = strlen(path);
    int kind = 0;
    for (int i = 0; i < n; i++) {
        if (!strcmp(known[i], path))
            return 1;
        if (!strncmp(known[i], path, len) && known[i][len] == '.')
            kind = 2;
    }
    return kind;
}

/* A typo'd key would be ignored and its field silently left at the base's value (or reported
 * missing under another name), so every key must be one the loader reads. */
static int check_keys(const cJSON *obj, const char *prefix, const char *file, kt_err *e)
{
    const char *known[HW_NKNOWN];
    int n = known_keys(known);
    const cJSON *it;
    cJSON_ArrayForEach(it, obj)
    {
        char path[192];
        err_path(path, sizeof path, prefix, it->string, 0);
        int kind = key_kind(path, known, n);
        if (kind == 2 && cJSON_IsObject(it)) {
            if (check_keys(it, path, file, e))
                return -1;
        } else if (!kind) {
            const char *s = err_suggest(path, known, n);
            if (s)
                return err_set(e, KT_EINPUT, file, path, "unknown key (did you mean \"%s\"?)", s);
            return err_set(e, KT_EINPUT, file, path,
                           "unknown key (docs/formats.md lists the keys)");
        }
    }
    return 0;
}

/* Deep merge: src's members replace dst's, objects merged member by member. */
static int merge_into(cJSON *dst, const cJSON *src)
{
    const cJSON *it;
    cJSON_ArrayForEach(it, src)
    {
        cJSON *d = cJSON_GetObjectItemCaseSensitive(dst, it->string);
        if (d && cJSON_IsObject(d) && cJSON_IsObject(it)) {
            if (merge_into(d, it))
                return -1;
            continue;
        }
        cJSON *copy = cJSON_Duplicate(it, 1);
        if (!copy)
            return -1;
        if (d)
            cJSON_ReplaceItemInObjectCaseSensitive(dst, it->string, copy);
        else
            cJSON_AddItemToObject(dst, it->string, copy);
    }
    return 0;
}

/* The files of one base chain, the file itself first. */
typedef struct hw_chain {
    int n;
    cJSON *tree[HW_MAX_BASE_DEPTH + 1];
    char file[HW_MAX_BASE_DEPTH + 1][PATH_MAX];
    char real[HW_MAX_BASE_DEPTH + 1][PATH_MAX];
} hw_chain;

static void chain_free(hw_chain *c)
{
    for (int i = 0; i < c->n; i++)
        cJSON_Delete(c->tree[i]);
    c->n = 0;
}

/* Where "base": NAME or PATH of `file` points: a path is relative to file's directory; a name is
 * NAME.json beside the file, else in hw_dir. */
static int base_path(const char *file, const char *base, const char *hw_dir, char *out,
                     size_t n, kt_err *e)
{
    const char *slash = strrchr(file, '/');
    int dirlen = slash ? (int)(slash - file) : 1;
    const char *dir = slash ? file : ".";
    size_t len = strlen(base);
    if (strchr(base, '/') || (len > 5 && !strcmp(base + len - 5, ".json"))) {
        if (base[0] == '/')
            snprintf(out, n, "%s", base);
        else
            snprintf(out, n, "%.*s/%s", dirlen, dir, base);
        if (access(out, R_OK))
            return err_set(e, KT_EINPUT, file, "base", "cannot open \"%s\"", out);
        return 0;
    }
    snprintf(out, n, "%.*s/%s.json", dirlen, dir, base);
    if (!access(out, R_OK))
        return 0;
    if (hw_dir) {
        snprintf(out, n, "%s/%s.json", hw_dir, base);
        if (!access(out, R_OK))
            return 0;
    }
    return err_set(e, KT_EINPUT, file, "base", "no hardware named \"%s\" beside this file%s", base,
                   hw_dir ? " or in the hardware directory" : "");
}

/* Load file and its bases, checking each file's keys and the chain's length and cycles. */
static int load_chain(const char *file, const char *hw_dir, hw_chain *c, kt_err *e)
{
    c->n = 0;
    snprintf(c->file[0], sizeof c->file[0], "%s", file);
    for (int i = 0;; i++) {
        char real[PATH_MAX];
        if (!realpath(c->file[i], real))
            snprintf(real, sizeof real, "%s", c->file[i]);
        memcpy(c->real[i], real, sizeof real);
        for (int j = 0; j < i; j++)
            if (!strcmp(c->real[j], real))
                return err_set(e, KT_EINPUT, c->file[i - 1], "base",
                               "\"base\" cycle: %s is its own base", c->file[j]);
        if (!(c->tree[i] = jsonx_load(c->file[i], e)))
            return -1;
        c->n = i + 1;
        if (!cJSON_IsObject(c->tree[i]))
            return err_set(e, KT_EINPUT, c->file[i], NULL, "top level must be an object");
        if (check_keys(c->tree[i], "", c->file[i], e))
            return -1;
        const cJSON *b = cJSON_GetObjectItemCaseSensitive(c->tree[i], "base");
        if (!b)
            return 0;
        if (!cJSON_IsString(b) || !b->valuestring[0])
            return err_set(e, KT_EINPUT, c->file[i], "base",
                           "must be a hardware name or a path to a .json file");
        if (i == HW_MAX_BASE_DEPTH)
            return err_set(e, KT_EINPUT, c->file[i], "base",
                           "more than %d levels of \"base\" below %s", HW_MAX_BASE_DEPTH,
                           c->file[0]);
        if (base_path(c->file[i], b->valuestring, hw_dir, c->file[i + 1], sizeof c->file[i + 1],
                      e))
            return -1;
    }
}

/* One tree: the deepest base, then each file over it; "base" itself is dropped. */
static cJSON *merge_chain(const hw_chain *c, kt_err *e)
{
    cJSON *root = cJSON_Duplicate(c->tree[c->n - 1], 1);
    for (int i = c->n - 2; root && i >= 0; i--)
        if (merge_into(root, c->tree[i])) {
            cJSON_Delete(root);
            root = NULL;
        }
    if (!root) {
        err_set(e, KT_EINTERNAL, c->file[0], NULL, "out of memory");
        return NULL;
    }
    cJSON_DeleteItemFromObjectCaseSensitive(root, "base");
    return root;
}

cJSON *hw_json_load(const char *file, const char *hw_dir, kt_err *e)
{
    hw_chain *c = calloc(1, sizeof *c);
    if (!c) {
        err_set(e, KT_EINTERNAL, file, NULL, "out of memory");
        return NULL;
    }
    cJSON *root = load_chain(file, hw_dir, c, e) ? NULL : merge_chain(c, e);
    chain_free(c);
    free(c);
    return root;
}

int hw_load_dir(const char *file, const char *hw_dir, hw_gpu *g, kt_err *e)
{
    hw_chain *c = calloc(1, sizeof *c);
    if (!c)
        return err_set(e, KT_EINTERNAL, file, NULL, "out of memory");
    int rc = -1;
    cJSON *root = NULL;
    if (!load_chain(file, hw_dir, c, e) && (root = merge_chain(c, e))) {
        rc = hw_from_json(root, file, g, e);
        /* a bad value is reported in the file that sets it, the nearest one in the chain */
        if (rc && e->path[0] && c->n > 1) {
            char failed[192];
            for (int i = 0; i < c->n; i++)
                if (lookup(c->tree[i], e->path, failed, sizeof failed)) {
                    snprintf(e->file, sizeof e->file, "%s", c->file[i]);
                    break;
                }
        }
    }
    cJSON_Delete(root);
    chain_free(c);
    free(c);
    return rc;
}

int hw_load(const char *file, hw_gpu *g, kt_err *e)
{
    return hw_load_dir(file, NULL, g, e);
}

