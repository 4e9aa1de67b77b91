/* result: totals of an execution from its kernels. */
#include "result.h"

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
        r->flops += c->flops;
        r->dram_read_bytes += c->dram_read_bytes;
        r->dram_write_bytes += c->dram_write_bytes;
        r->l2_bytes += c->l2_bytes;
        if (c->bound != BOUND_NONE) {
            r->kernels++;
            r->class_time_s[result_class(c)] += c->time_s;
        }
    }
}
