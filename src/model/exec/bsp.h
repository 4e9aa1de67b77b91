/* bsp: bulk-synchronous execution - one kernel per op on all SMs, a barrier between kernels. */
#ifndef KT_BSP_H
#define KT_BSP_H
#include "../../arena.h"
#include "../../err.h"
#include "../hw.h"
#include "../result.h"
#include "../wl.h"

/** Predict bulk-synchronous execution: ops in order on all SMs (sched.c: an op's input misses
 *  L2 when more than L2 capacity was touched since it was written; every output is written back
 *  to DRAM). works: from op_works. */
int bsp_run(const hw_gpu *hw, const wl_graph *g, const op_work *works, const cost_ctx *c,
            arena *a, kt_result *r, kt_err *e);
/** The same over the ops with exclude[i] == 0 only (exclude may be NULL); excluded ops produce
 *  no items but their outputs count as written (for residency). miss (may be NULL): per op, an
 *  array of its inputs' L2 misses in bytes (allocated in a; NULL for excluded and free ops). */
int bsp_run_masked(const hw_gpu *hw, const wl_graph *g, const op_work *works, const cost_ctx *c,
                   const unsigned char *exclude, arena *a, kt_result *r, int64_t ***miss, kt_err *e);

#endif
