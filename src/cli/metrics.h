/* metrics: the derived metrics every report computes from the execution models' results -
 * speedups, traffic reduction, coverage, energy-delay product, performance per watt. One
 * definition each; compare, sweep and validate all call these. */
#ifndef KT_METRICS_H
#define KT_METRICS_H
#include "../model/result.h"

/** The metrics a reference table (validate) or a report names. */
typedef enum mx_metric {
    MX_TIME, MX_SPEEDUP_BSP, MX_SPEEDUP_VF, MX_DRAM, MX_DRAM_RD, MX_DRAM_WR, MX_TRAFFIC_RED,
    MX_OPS_COV, MX_COV, MX_FLOPS, MX_COUNT
} mx_metric;

/** Name of a metric as reference tables spell it ("time_s", "speedup_vs_bsp", ...). */
const char *mx_name(int m);
/** Parse a metric name; -1 if unknown. */
int mx_parse(const char *s);
/** Execution models (EXEC_* bits) a metric of exec x needs: x itself, plus bsp for speedups and
 *  traffic reductions over bsp, plus vf for speedups over vf. */
int mx_needs(int m, int x);
/** Value of metric m for result r, with the bsp and vf results of the same run (either may be
 *  NULL); NAN when undefined (a missing baseline, a zero denominator). */
double mx_value(int m, const kt_result *r, const kt_result *bsp, const kt_result *vf);

/** DRAM bytes read + written. */
double mx_dram(const kt_result *r);
/** Speedup of r over base: base time / r time (NAN when either is missing or r's time is 0). */
double mx_speedup(const kt_result *base, const kt_result *r);
/** Fraction of the bsp DRAM bytes r removes: 1 - dram(r) / dram(bsp). */
double mx_reduction(const kt_result *bsp, const kt_result *r);
/** Operator coverage: ops inside multi-op groups or pipelines over all ops (Table 2's count). */
double mx_coverage(const kt_result *r);
/** Energy-delay product in J s. */
double mx_edp_J_s(const kt_result *r);
/** Performance per watt: (1/t) / (E/t) = 1/E runs per joule. */
double mx_runs_per_J(const kt_result *r);

#endif
