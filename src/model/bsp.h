/* bsp: bulk-synchronous execution - one kernel per op on all SMs, a barrier between kernels. */
#ifndef KT_BSP_H
#define KT_BSP_H
#include "../arena.h"
#include "../err.h"
#include "hw.h"
#include "result.h"
#include "wl.h"

/** Per-op work of a graph (op_work_of for every op), allocated in a. NULL with e set on
 *  overflow. */
op_work *bsp_works(const wl_graph *g, arena *a, kt_err *e);
/** Predict bulk-synchronous execution: ops in order on all SMs; an op's input misses L2 when
 *  more than L2 capacity was touched since it was written (l2.c); every output is written back to
 *  DRAM. works: from bsp_works. */
int bsp_run(const hw_gpu *hw, const wl_graph *g, const op_work *works, const cost_ctx *c,
            arena *a, kt_result *r, kt_err *e);
/** The same over the ops with exclude[i] == 0 only (exclude may be NULL); excluded ops produce
 *  no items but their outputs count as written (for residency). */
int bsp_run_masked(const hw_gpu *hw, const wl_graph *g, const op_work *works, const cost_ctx *c,
                   const unsigned char *exclude, arena *a, kt_result *r, kt_err *e);

#endif
