/* result: totals of an execution from its kernels. */
#include "result.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

const char *kt_exec_name(int x)
{
    static const char *const N[EX_COUNT] = {"bsp", "vf", "kitsune"};
    return x >= 0 && x < EX_COUNT ? N[x] : NULL;
}

int kt_exec_parse(const char *s)
{
    for (int x = 0; x < EX_COUNT; x++)
        if (!strcmp(s, kt_exec_name(x)))
            return x;
    return -1;
}

int result_class(const cost_result *c)
{
    int sm_low = c->sm_util < UC_LOW_FRAC, dram_low = c->dram_util < UC_LOW_FRAC;
    if (sm_low && dram_low)
        return UC_BOTH_LOW;
    if (sm_low)
        return UC_SM_LOW;
    if (dram_low)
        return UC_DRAM_LOW;
    return UC_NEITHER;
}

void result_sum(kt_result *r)
{
    r->time_s = 0;
    r->flops = r->dram_read_bytes = r->dram_write_bytes = r->l2_bytes = 0;
    r->kernels = 0;
    for (int i = 0; i < UC_COUNT; i++)
        r->class_time_s[i] = 0;
    for (int i = 0; i < r->nitems; i++) {
        const cost_result *c = &r->items[i].c;
        r->time_s += c->time_s;
        r->flops = kt_count_add(r->flops, c->flops);
        r->dram_read_bytes = kt_count_add(r->dram_read_bytes, c->dram_read_bytes);
        r->dram_write_bytes = kt_count_add(r->dram_write_bytes, c->dram_write_bytes);
        r->l2_bytes = kt_count_add(r->l2_bytes, c->l2_bytes);
        if (c->bound != BOUND_NONE) {
            r->kernels++;
            r->class_time_s[result_class(c)] += c->time_s;
        }
    }
}

/* A count that is usable: >= 0 and below the saturation limit. */
static int count_ok(int64_t v)
{
    return v >= 0 && (double)v < KT_COUNT_LIMIT;
}

/* A time, energy, power or utilization that is usable: finite and >= 0. */
static int real_ok(double v)
{
    return isfinite(v) && v >= 0;
}

/* The first unusable number of a kernel's cost, or NULL. */
static const char *cost_bad(const cost_result *c, int *count)
{
    /* fast path (every kernel of every run): a NaN or an infinity makes the sum non-finite;
     * the times are far below overflowing the sum */
    const double fv[] = {c->time_s,    c->compute_s, c->tensor_s, c->simt_s,
                         c->l2_s,      c->dram_s,    c->latency_s, c->launch_s,
                         c->dispatch_s, c->tail_s,   c->sm_util,  c->dram_util,
                         c->chain_s};
    double sum = 0;
    int neg = 0;
    for (size_t i = 0; i < sizeof fv / sizeof fv[0]; i++) {
        sum += fv[i];
        neg |= fv[i] < 0;
    }
    if (isfinite(sum) && !neg && c->flops >= 0 && c->dram_read_bytes >= 0 &&
        c->dram_write_bytes >= 0 && c->l2_bytes >= 0 &&
        (double)c->flops < KT_COUNT_LIMIT && (double)c->l2_bytes < KT_COUNT_LIMIT &&
        (double)c->dram_read_bytes + (double)c->dram_write_bytes < KT_COUNT_LIMIT) {
        *count = 0;
        return NULL;
    }
    static const char *const CN[] = {"FLOP count", "DRAM read bytes", "DRAM write bytes",
                                     "DRAM bytes", "L2 bytes"};
    const int64_t cv[] = {c->flops, c->dram_read_bytes, c->dram_write_bytes,
                          kt_count_add(c->dram_read_bytes, c->dram_write_bytes), c->l2_bytes};
    for (int i = 0; i < 5; i++)
        if (!count_ok(cv[i])) {
            *count = cv[i] >= 0;
            return CN[i];
        }
    *count = 0;
    const double dv[] = {c->time_s, c->compute_s, c->tensor_s, c->simt_s, c->l2_s, c->dram_s,
                         c->latency_s, c->launch_s, c->dispatch_s, c->tail_s, c->sm_util,
                         c->dram_util, c->chain_s};
    for (size_t i = 0; i < sizeof dv / sizeof dv[0]; i++)
        if (!real_ok(dv[i]))
            return "time";
    return NULL;
}

int result_check(const kt_result *r, const char *what, const char *file, kt_err *e)
{
    int count = 0;
    cost_result total = {.flops = r->flops, .dram_read_bytes = r->dram_read_bytes,
                         .dram_write_bytes = r->dram_write_bytes, .l2_bytes = r->l2_bytes,
                         .time_s = r->time_s};
    const char *bad = cost_bad(&total, &count), *item = NULL;
    const double tv[] = {r->energy_J, r->avg_power_W, r->clock_MHz, r->e_tensor_J, r->e_simt_J,
                         r->e_dram_J, r->e_l2_J, r->e_smem_J, r->e_rf_J, r->e_static_J,
                         r->class_time_s[0], r->class_time_s[1], r->class_time_s[2],
                         r->class_time_s[3]};
    for (size_t i = 0; !bad && i < sizeof tv / sizeof tv[0]; i++)
        if (!real_ok(tv[i]))
            bad = "energy";
    for (int i = 0; !bad && i < r->nitems; i++) {
        const kt_item *it = &r->items[i];
        bad = cost_bad(&it->c, &count);
        if (!bad && !(real_ok(it->energy_J) && real_ok(it->avg_power_W) && real_ok(it->clock_MHz)))
            bad = "energy";
        if (bad)
            item = it->name ? it->name : "?";
    }
    if (!bad)
        return 0;
    char where[160];
    if (item)
        snprintf(where, sizeof where, "kernel \"%.80s\" of the %s", item, what);
    else
        snprintf(where, sizeof where, "the %s", what);
    if (count)
        return err_set(e, KT_EINPUT, file, NULL,
                       "the %s of %s exceeds 9e18, the range of 64-bit counters (use smaller "
                       "parameters)",
                       bad, where);
    return err_set(e, KT_EINTERNAL, file, NULL, "the %s of %s is not a finite number >= 0 (a model error)",
                   bad, where);
}
