/* lint: what makes a study wrong without failing it - GPU values no real GPU has, GEMMs in a
 * dtype the GPU has no tensor cores for, a workload larger than the GPU's memory. */
#ifndef KT_LINT_H
#define KT_LINT_H
#include <stdint.h>

#include "hw.h"
#include "op.h"
#include "wl.h"

enum { LINT_MAX = 64, LINT_MSG = 256 };

/** Findings, one lowercase sentence each (no "warning:" prefix). */
typedef struct lint_list {
    int n;
    char msg[LINT_MAX][LINT_MSG];
} lint_list;

/** Hardware values outside the range of real GPUs (a band well inside the loader's hard
 *  limits: a unit slip such as GHz for MHz, or a bandwidth in TB/s) and relations no GPU has
 *  (L2 slower than DRAM). Each message names the field's JSON path. Appends to out. */
void lint_hw(const hw_gpu *g, lint_list *out);

/** Tensor-core work of graph g (with its op_works w) in a dtype for which the GPU has no tensor
 *  cores, so the cost model runs it on the FP32 SIMT units (fp32 itself is not reported: SIMT is
 *  its native path). One message per GPU and dtype, whatever the workload. Appends to out. */
void lint_dtype(const hw_gpu *hw, const wl_graph *g, const op_work *w, lint_list *out);

/** Mixture-of-experts routing ops whose expert capacity drops token slots at their load
 *  imbalance (op_moe_kept_slots): one message for the graph, with the share of slots dropped at
 *  the first such op and how many ops drop. Appends to out. */
void lint_moe(const wl_graph *g, lint_list *out);

/** A footprint (bytes: weights + peak live activations) above the GPU's DRAM capacity. */
void lint_memory(const hw_gpu *hw, int64_t weight_bytes, int64_t peak_act_bytes,
                 const char *what, lint_list *out);

/** Append a message: 1, or 0 when the list holds it already, -1 when the list is full. */
int lint_add(lint_list *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
