/* datasheet: a GPU description from the numbers of its datasheet - the per-SM, per-clock fields
 * the model needs are derived, the rest is taken from a base description, and every value's
 * provenance goes into "sources" (kitsune hw new). */
#ifndef KT_DATASHEET_H
#define KT_DATASHEET_H
#include <cjson/cJSON.h>

#include "../err.h"
#include "../model/dtype.h"

/** What a datasheet gives. 0 (or an empty string) = not given, unless noted. */
typedef struct ds_sheet {
    char name[64];
    char description[160];
    char source[160];              /* cited in every value's sources entry ("H100 datasheet") */
    int sm_count;                  /* required */
    double clock_MHz;              /* required: the clock at which the TFLOP/s figures hold */
    double tflops[DT_COUNT];       /* dense tensor-core TFLOP/s per floating-point dtype */
    int tflops_given[DT_COUNT];    /* 1 when given (a given 0: no tensor cores for it) */
    double fp32_tflops;            /* non-tensor FP32 TFLOP/s (0: the base's per-clock rate) */
    double fp32_clock_MHz;         /* the clock fp32_tflops holds at (0: clock_MHz) */
    double dram_GBps, dram_GB;     /* required; HBM "GB" are binary (80 GB = 80 GiB) */
    double l2_MiB;                 /* required */
    double l2_GBps;                /* 0: the base's L2 bytes per clock x clock_MHz */
    double tdp_W;                  /* required */
} ds_sheet;

/** Build a complete hw JSON tree for the sheet: a copy of `base` (a hw tree with its own
 *  "base" chain merged, not modified; named base_name in sources) with the given values (kind V)
 *  and the derived ones (kind D: tensor and FP32 FLOP per clock per SM, the L2 bandwidth, the
 *  CTA dispatch time and the DVFS knee at the new clock; E/D: idle and static power at the base's
 *  share of TDP, tensor pJ/FLOP of dtypes the base lacks). Every other value is the base's,
 *  marked "E: as BASE". Dtypes without a figure get no tensor cores (0). The base's "measured"
 *  object is dropped: nothing of the new GPU was measured. NULL with e set (a missing or
 *  inconsistent figure). The result is not validated: load it with hw_from_json. */
cJSON *ds_derive(const ds_sheet *s, const cJSON *base, const char *base_name, kt_err *e);

#endif
