/* datasheet: a hw JSON tree from datasheet numbers over a base description (kitsune hw new). */
#include "datasheet.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* The object at a dotted path's parent, created as needed; *leaf gets the last component. */
static cJSON *parent(cJSON *root, const char *dotted, char *leaf, size_t n)
{
    char buf[128];
    snprintf(buf, sizeof buf, "%s", dotted);
    cJSON *cur = root;
    char *dot, *p = buf;
    while ((dot = strchr(p, '.'))) {
        *dot = 0;
        cJSON *next = cJSON_GetObjectItemCaseSensitive(cur, p);
        if (!next && !(next = cJSON_AddObjectToObject(cur, p)))
            return NULL;
        if (!cJSON_IsObject(next))
            return NULL;
        cur = next;
        p = dot + 1;
    }
    snprintf(leaf, n, "%s", p);
    return cur;
}

static int set_num(cJSON *root, const char *dotted, double v)
{
    char leaf[128];
    cJSON *o = parent(root, dotted, leaf, sizeof leaf);
    if (!o)
        return -1;
    cJSON *it = cJSON_GetObjectItemCaseSensitive(o, leaf);
    if (it) {
        cJSON_SetNumberValue(it, v);
        return 0;
    }
    return cJSON_AddNumberToObject(o, leaf, v) ? 0 : -1;
}

static int set_str(cJSON *obj, const char *key, const char *v)
{
    cJSON *s = cJSON_CreateString(v);
    if (!s)
        return -1;
    if (cJSON_GetObjectItemCaseSensitive(obj, key))
        cJSON_ReplaceItemInObjectCaseSensitive(obj, key, s);
    else
        cJSON_AddItemToObject(obj, key, s);
    return 0;
}

/* A value and its sources entry. */
static int put(cJSON *root, cJSON *src, const char *dotted, double v, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static int put(cJSON *root, cJSON *src, const char *dotted, double v, const char *fmt, ...)
{
    char text[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    return set_num(root, dotted, v) || set_str(src, dotted, text) ? -1 : 0;
}

static double num(const cJSON *root, const char *dotted)
{
    char buf[128];
    snprintf(buf, sizeof buf, "%s", dotted);
    const cJSON *cur = root;
    char *save = NULL;
    for (char *t = strtok_r(buf, ".", &save); t && cur; t = strtok_r(NULL, ".", &save))
        cur = cJSON_IsObject(cur) ? cJSON_GetObjectItemCaseSensitive(cur, t) : NULL;
    return cJSON_IsNumber(cur) ? cur->valuedouble : NAN;
}

/* n significant digits: derived values carry no more precision than their inputs */
static double sig(double v, int n)
{
    if (v == 0 || !isfinite(v))
        return v;
    double scale = pow(10, n - 1 - (int)floor(log10(fabs(v))));
    return round(v * scale) / scale;
}

static int need(kt_err *e, const char *opt, int ok)
{
    return ok ? 0 : err_set(e, KT_EINPUT, NULL, opt, "missing or not > 0 (a datasheet figure)");
}

/* Everything the derivations below compute, with the sheet's given values first. */
static int fill(const ds_sheet *s, cJSON *t, cJSON *src, const cJSON *base, const char *bn,
                kt_err *e)
{
    const char *ref = s->source[0] ? s->source : "datasheet";
    double clk = s->clock_MHz, bclk = num(base, "clock_MHz");
    int bad = put(t, src, "sm_count", s->sm_count, "V: %s (%d SMs)", ref, s->sm_count) ||
              put(t, src, "clock_MHz", clk, "V: %s (%g MHz: the clock of the quoted peaks)", ref,
                  clk) ||
              put(t, src, "dram.bandwidth_GBps", s->dram_GBps, "V: %s (%g GB/s)", ref,
                  s->dram_GBps) ||
              put(t, src, "dram.capacity_GiB", s->dram_GB, "V: %s (%g GB; HBM capacities are "
                  "binary)", ref, s->dram_GB) ||
              put(t, src, "l2.capacity_MiB", s->l2_MiB, "V: %s (%g MiB)", ref, s->l2_MiB) ||
              put(t, src, "power.tdp_W", s->tdp_W, "V: %s (%g W)", ref, s->tdp_W);
    /* tensor cores: FLOP per clock per SM = peak / (SMs x clock), an integer in hardware */
    double tfrac = num(base, "efficiency.tensor_frac");
    double bidle = num(base, "power.idle_W"), bstatic = num(base, "power.static_W");
    double btdp = num(base, "power.tdp_W");
    double stat = sig(bstatic / btdp * s->tdp_W, 4);
    for (int d = 0; d < DT_COUNT && !bad; d++) {
        if (!dt_is_float((dtype)d) || d == DT_FP32)
            continue;
        char path[96], epath[96];
        snprintf(path, sizeof path, "tensor_flop_per_clk_per_sm.%s", dt_name((dtype)d));
        snprintf(epath, sizeof epath, "energy.tensor_pJ_per_flop.%s", dt_name((dtype)d));
        if (!s->tflops_given[d] || s->tflops[d] <= 0) {
            bad = put(t, src, path, 0, "V: %s gives no %s tensor-core figure (0: none)", ref,
                      dt_name((dtype)d));
            continue;
        }
        double raw = s->tflops[d] * 1e12 / ((double)s->sm_count * clk * 1e6);
        bad = put(t, src, path, round(raw),
                  "D, derived: %g TFLOP/s / (%d SMs x %g MHz) = %.6g -> %.0f FLOP/clk/SM (%s)",
                  s->tflops[d], s->sm_count, clk, raw, round(raw), ref);
        double pj = num(base, epath);
        if (!bad && !(pj > 0)) { /* the base has no figure: the board's budget at the peak */
            pj = sig((s->tdp_W - stat) / (tfrac * s->tflops[d] * 1e12) * 1e12, 2);
            bad = put(t, src, epath, pj,
                      "E/D, derived: (TDP %g W - static %g W) / (tensor_frac %g x %g TFLOP/s) = "
                      "%g pJ/FLOP, an upper bound (the whole board budget on the tensor cores)",
                      s->tdp_W, stat, tfrac, s->tflops[d], pj);
        }
    }
    if (bad)
        return -1;
    if (s->fp32_tflops > 0) {
        double fclk = s->fp32_clock_MHz > 0 ? s->fp32_clock_MHz : clk;
        double raw = s->fp32_tflops * 1e12 / ((double)s->sm_count * fclk * 1e6);
        bad = put(t, src, "simt_fp32_flop_per_clk_per_sm", round(raw),
                  "D, derived: %g TFLOP/s / (%d SMs x %g MHz) = %.6g -> %.0f FLOP/clk/SM (%s)",
                  s->fp32_tflops, s->sm_count, fclk, raw, round(raw), ref);
    }
    /* L2: the base's bytes per clock (an integer width) at the new clock, unless given */
    if (!bad && s->l2_GBps > 0) {
        bad = put(t, src, "l2.bandwidth_GBps", s->l2_GBps, "V: %s (%g GB/s)", ref, s->l2_GBps);
    } else if (!bad) {
        double width = round(num(base, "l2.bandwidth_GBps") * 1e3 / bclk);
        double bw = sig(width * clk * 1e-3, 4);
        bad = put(t, src, "l2.bandwidth_GBps", bw,
                  "D/E, derived: %s's %.0f B/clk (%g GB/s / %g MHz) x %g MHz = %g GB/s (the base's "
                  "L2 width; give --l2-GBps when the datasheet has it)",
                  bn, width, num(base, "l2.bandwidth_GBps"), bclk, clk, bw);
    }
    /* time per CTA started: the base's SM clocks per CTA at the new clock */
    double cta = num(base, "launch.cta_dispatch_ns");
    double knee = num(base, "dvfs.knee_clock_MHz"), cmin = num(base, "clock_min_MHz");
    if (!bad)
        bad = put(t, src, "launch.cta_dispatch_ns", sig(cta * bclk / clk, 4),
                  "D/E, derived: %s's %.4g SM clocks per CTA (%g ns x %g MHz) / %g MHz", bn,
                  cta * bclk * 1e-3, cta, bclk, clk) ||
              put(t, src, "dvfs.knee_clock_MHz", round(knee / bclk * clk),
                  "D/E, derived: the knee at %s's fraction of the clock (%g / %g MHz) x %g MHz",
                  bn, knee, bclk, clk) ||
              put(t, src, "power.static_W", stat,
                  "D/E, derived: %s's share of TDP (%g / %g W) x %g W", bn, bstatic, btdp,
                  s->tdp_W) ||
              put(t, src, "power.idle_W", sig(bidle / btdp * s->tdp_W, 4),
                  "D/E, derived: %s's share of TDP (%g / %g W) x %g W", bn, bidle, btdp, s->tdp_W);
    if (!bad && cmin > clk)
        bad = put(t, src, "clock_min_MHz", clk,
                  "E: %s's lowest clock (%g MHz) is above this clock; set to it", bn, cmin);
    return bad ? err_set(e, KT_EINTERNAL, NULL, NULL, "out of memory") : 0;
}

cJSON *ds_derive(const ds_sheet *s, const cJSON *base, const char *base_name, kt_err *e)
{
    if (!s->name[0]) {
        err_set(e, KT_EINPUT, NULL, "--name", "missing (the GPU's name, e.g. --name h100)");
        return NULL;
    }
    int given = 0;
    for (int d = 0; d < DT_COUNT; d++)
        given |= s->tflops_given[d];
    if (need(e, "--sm-count", s->sm_count > 0) || need(e, "--clock-MHz", s->clock_MHz > 0) ||
        need(e, "--tflops", given) || need(e, "--dram-GBps", s->dram_GBps > 0) ||
        need(e, "--dram-GB", s->dram_GB > 0) || need(e, "--l2-MiB", s->l2_MiB > 0) ||
        need(e, "--tdp-W", s->tdp_W > 0))
        return NULL;
    /* what the derivations scale from: the first three divide */
    static const char *const BASE_NEEDS[] = {"clock_MHz", "power.tdp_W", "efficiency.tensor_frac",
                                             "l2.bandwidth_GBps", "launch.cta_dispatch_ns",
                                             "dvfs.knee_clock_MHz", "power.idle_W",
                                             "power.static_W", "clock_min_MHz"};
    for (size_t i = 0; i < sizeof BASE_NEEDS / sizeof BASE_NEEDS[0]; i++) {
        double v = num(base, BASE_NEEDS[i]);
        if (!(i < 3 ? v > 0 : v >= 0)) {
            err_set(e, KT_EINPUT, base_name, BASE_NEEDS[i], "the base needs a value %s",
                    i < 3 ? "> 0" : ">= 0");
            return NULL;
        }
    }
    cJSON *t = cJSON_Duplicate(base, 1);
    if (!t) {
        err_set(e, KT_EINTERNAL, NULL, NULL, "out of memory");
        return NULL;
    }
    cJSON_DeleteItemFromObjectCaseSensitive(t, "measured");
    cJSON_DeleteItemFromObjectCaseSensitive(t, "base");
    /* every value starts as the base's, and says so */
    cJSON *src = cJSON_GetObjectItemCaseSensitive(t, "sources");
    if (!cJSON_IsObject(src)) {
        cJSON_DeleteItemFromObjectCaseSensitive(t, "sources");
        src = cJSON_AddObjectToObject(t, "sources");
    }
    int bad = !src;
    cJSON *it;
    cJSON_ArrayForEach(it, src)
    {
        char text[1024];
        snprintf(text, sizeof text, "E: as %s (%s: %s)", base_name, base_name,
                 cJSON_IsString(it) ? it->valuestring : "no source");
        cJSON *n = cJSON_CreateString(text);
        if (!n || !cJSON_ReplaceItemInObjectCaseSensitive(src, it->string, n)) {
            cJSON_Delete(n);
            bad = 1;
            break;
        }
        it = n; /* the replacement keeps the key and the place */
    }
    char desc[320];
    snprintf(desc, sizeof desc, "%s", s->description[0] ? s->description : s->name);
    if (bad || set_str(t, "name", s->name) || set_str(t, "description", desc) ||
        fill(s, t, src, base, base_name, e)) {
        if (bad)
            err_set(e, KT_EINTERNAL, NULL, NULL, "out of memory");
        cJSON_Delete(t);
        return NULL;
    }
    return t;
}
