/* metrics: derived metrics of a run (speedups, reduction, coverage, EDP, runs per joule). */
#include "metrics.h"

#include <math.h>
#include <string.h>

#include "../model/run.h"

static const char *const NAME[MX_COUNT] = {
    "time_s", "speedup_vs_bsp", "speedup_vs_vf", "dram_bytes", "dram_read_bytes",
    "dram_write_bytes", "traffic_reduction", "ops_covered", "coverage", "flops"};

const char *mx_name(int m)
{
    return m >= 0 && m < MX_COUNT ? NAME[m] : NULL;
}

int mx_parse(const char *s)
{
    for (int m = 0; m < MX_COUNT; m++)
        if (!strcmp(s, NAME[m]))
            return m;
    return -1;
}

int mx_needs(int m, int x)
{
    int need = 1 << x;
    if (m == MX_SPEEDUP_BSP || m == MX_TRAFFIC_RED)
        need |= EXEC_BSP;
    if (m == MX_SPEEDUP_VF)
        need |= EXEC_VF;
    return need;
}

double mx_dram(const kt_result *r)
{
    return (double)(r->dram_read_bytes + r->dram_write_bytes);
}

double mx_speedup(const kt_result *base, const kt_result *r)
{
    if (!base || !r || !(r->time_s > 0))
        return NAN;
    return base->time_s / r->time_s;
}

double mx_reduction(const kt_result *bsp, const kt_result *r)
{
    if (!bsp || !r || mx_dram(bsp) <= 0)
        return NAN;
    return 1.0 - mx_dram(r) / mx_dram(bsp);
}

double mx_coverage(const kt_result *r)
{
    return r->ops_total > 0 ? (double)r->ops_covered / r->ops_total : NAN;
}

double mx_edp_J_s(const kt_result *r)
{
    return r->energy_J > 0 ? r->energy_J * r->time_s : NAN;
}

double mx_runs_per_J(const kt_result *r)
{
    return r->energy_J > 0 ? 1.0 / r->energy_J : NAN;
}

double mx_value(int m, const kt_result *r, const kt_result *bsp, const kt_result *vf)
{
    if (!r)
        return NAN;
    switch (m) {
    case MX_TIME:
        return r->time_s;
    case MX_SPEEDUP_BSP:
        return mx_speedup(bsp, r);
    case MX_SPEEDUP_VF:
        return mx_speedup(vf, r);
    case MX_DRAM:
        return mx_dram(r);
    case MX_DRAM_RD:
        return (double)r->dram_read_bytes;
    case MX_DRAM_WR:
        return (double)r->dram_write_bytes;
    case MX_TRAFFIC_RED:
        return mx_reduction(bsp, r);
    case MX_OPS_COV:
        return r->ops_covered;
    case MX_COV:
        return mx_coverage(r);
    case MX_FLOPS:
        return (double)r->flops;
    default:
        return NAN;
    }
}
