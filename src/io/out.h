/* out: writers for results - aligned tables for people, JSON and CSV for programs. */
#ifndef KT_OUT_H
#define KT_OUT_H
#include <stdio.h>

#include "../model/hw.h"
#include "../model/result.h"
#include "../model/wl.h"

/** Write a JSON string literal (escaped). */
void out_json_str(FILE *f, const char *s);
/** Write a double deterministically (%.9g; non-finite as null). */
void out_json_num(FILE *f, double v);
/** Write `, "key": ` and the number (out_json_num): one member of an open object. */
void out_json_knum(FILE *f, const char *key, double v);
/** Write `, "key": ` and the string (out_json_str). */
void out_json_kstr(FILE *f, const char *key, const char *s);
/** {"tool":..., "version":..., "workload":..., "hw":..., "mode":..., "params":{...}, — leaves the
 *  object open for "results". */
void out_json_head(FILE *f, const char *version, const hw_gpu *hw, const wl_graph *g, int training);
/** Kitsune's pipeline summary inside a result object (", \"pipelines\": [...]" etc.); plan is the
 *  ks_plan in kt_result.extra. out_json_result writes it for "kitsune" results. */
void out_json_pipelines(FILE *f, const void *plan, const wl_graph *g);
/** One result object: totals, energy, class times and per-item list. */
void out_json_result(FILE *f, const kt_result *r, const wl_graph *g, int with_items);
/** Aligned per-item table of one result, totals last; explain adds the roofline terms. */
void out_table_result(FILE *f, const kt_result *r, const wl_graph *g, const hw_gpu *hw, int explain);
/** CSV header and rows (one per item) for predict. */
void out_csv_items_header(FILE *f);
void out_csv_items(FILE *f, const kt_result *r, const wl_graph *g, const hw_gpu *hw, int training);
/** Utilization class name ("both_low", "sm_low", "dram_low", "neither_low"). */
const char *out_class_name(int c);

#endif
