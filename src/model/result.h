/* result: what every execution model (bsp, vf, kitsune) returns - kernels and totals. */
#ifndef KT_RESULT_H
#define KT_RESULT_H
#include <stdint.h>

#include "../arena.h"
#include "../err.h"
#include "cost.h"

/** Evaluates an item again at another SM clock (the power cap lowers clocks): its cost at
 *  clock_MHz into out, scratch memory from a. 0, or -1 on failure. */
typedef int (*kt_reeval_fn)(const void *arg, double clock_MHz, arena *a, cost_result *out);

/** One kernel of an execution: an op (bsp), a fused group (vf) or a pipeline (kitsune). */
typedef struct kt_item {
    const char *name;
    const char *type;     /* op type name, "group" or "pipeline" */
    int nops;
    const int *ops;       /* graph op indices it covers */
    cost_result c;        /* time, bound, terms, bytes */
    const char *note;     /* vf: why the group ended; kitsune: pipeline summary */
    int pipeline;         /* kitsune: index into the pipeline list, else -1 */
    /* energy (filled by energy.c) */
    double energy_J, avg_power_W;
    double e_tensor_J, e_simt_J, e_dram_J, e_l2_J, e_smem_J, e_rf_J, e_static_J;
    double clock_MHz;     /* SM clock the item ran at (energy.c; 0 before en_account = the run's) */
    int over_cap;         /* 1: above the power cap even at clock_min_MHz (en_power_cap) */
    kt_reeval_fn reeval;  /* how the item runs at another clock (NULL: fixed, never re-clocked) */
    const void *reeval_arg;
} kt_item;

/** The execution models, in the order every report lists them. */
typedef enum kt_exec { EX_BSP, EX_VF, EX_KITSUNE, EX_COUNT } kt_exec;

/** "bsp", "vf", "kitsune" (NULL for anything else). */
const char *kt_exec_name(int x);
/** Parse an execution model name; -1 if unknown. */
int kt_exec_parse(const char *s);

/** Paper's four utilization classes (Kitsune Fig. 1): both SM and DRAM below 33% of peak,
 *  only SM low, only DRAM low, neither low. */
enum { UC_BOTH_LOW, UC_SM_LOW, UC_DRAM_LOW, UC_NEITHER, UC_COUNT };
/** Threshold of "low" utilization (fraction of peak), Kitsune paper section 2. */
#define UC_LOW_FRAC 0.33

typedef struct kt_result {
    kt_exec exec_id;      /* which execution model produced it */
    const char *exec;     /* its name (kt_exec_name) */
    double time_s;
    int64_t flops, dram_read_bytes, dram_write_bytes, l2_bytes;
    int kernels, ops_total, ops_covered;
    int nitems;
    kt_item *items;
    double class_time_s[UC_COUNT];
    double clock_MHz;
    /* energy (filled by energy.c) */
    double energy_J, avg_power_W;
    double e_tensor_J, e_simt_J, e_dram_J, e_l2_J, e_smem_J, e_rf_J, e_static_J;
    double power_cap_W;   /* cap this result was evaluated under (en_power_cap), 0 = none */
    int over_cap_items;   /* items above the cap even at clock_min_MHz */
    void *extra;          /* model-specific detail (vf groups, kitsune pipelines) */
} kt_result;

/** Utilization class of one kernel. */
int result_class(const cost_result *c);
/** Recompute totals (time, flops, bytes, kernels, class times) from the items; count sums
 *  saturate (kt_count_add). */
void result_sum(kt_result *r);
/** The result is reportable: every count below KT_COUNT_LIMIT, every time, energy, power and
 *  clock finite and >= 0 (items and totals). 0, or -1 with e set naming what is wrong and in
 *  which result: code KT_EINPUT for a count too large for 64 bits (the workload is too big),
 *  KT_EINTERNAL for a non-finite or negative number (a model error). file names the input. */
int result_check(const kt_result *r, const char *what, const char *file, kt_err *e);

#endif
