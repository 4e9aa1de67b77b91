/* sched: the schedule core every execution model runs on - kernels in order over the GPU, with
 * L2 residency between them (l2.c) and each kernel's time from the cost model (cost.c). */
#ifndef KT_SCHED_H
#define KT_SCHED_H
#include <stdint.h>

#include "../arena.h"
#include "cost.h"
#include "hw.h"
#include "l2.h"
#include "result.h"
#include "wl.h"

/** A walk over a sequence of kernels: the GPU, the evaluation context, and what L2 holds. */
typedef struct sched_walk {
    const hw_gpu *hw;
    const wl_graph *g;
    cost_ctx c;
    l2_state l2;
    arena *a;
} sched_walk;

/** Start a walk with an empty L2. 0, or -1 when memory runs out. */
int sched_begin(sched_walk *s, const hw_gpu *hw, const wl_graph *g, const cost_ctx *c, arena *a);
/** A kernel reads `bytes` of tensor t: the bytes that miss L2 (read from DRAM). */
int64_t sched_read(sched_walk *s, int t, int64_t bytes);
/** A kernel writes `bytes` of tensor t (it becomes the most recent data in L2). */
void sched_write(sched_walk *s, int t, int64_t bytes);
/** Run work w as one kernel on `sms` SMs: its inputs missed L2 for `miss_bytes` (sched_read),
 *  it writes `write_bytes` back to DRAM. The kernel's own operand re-reads from DRAM age L2.
 *  Fills it->c and it->reeval (the same kernel at another clock: cost_eval again, with the same
 *  misses), which keeps a pointer to w: w must live as long as the item (arena memory). 0, or
 *  -1 when memory runs out. */
int sched_kernel(sched_walk *s, const op_work *w, int sms, int64_t miss_bytes, int64_t write_bytes,
                 kt_item *it);
/** Op i of the graph as its own kernel on every SM (bulk-synchronous): its inputs are read
 *  (per-input misses into miss[] when not NULL), it runs, its outputs are written; a free view
 *  launches nothing and aliases its input. 0, or -1 when memory runs out. */
int sched_op(sched_walk *s, int i, const op_work *w, kt_item *it, int64_t *miss);
/** Evaluate kernel work w on `sms` SMs at a context as sched_kernel does, without a walk (tests,
 *  single kernels); it->reeval set, its argument allocated in a. 0, or -1. */
int sched_kernel_item(const hw_gpu *hw, const op_work *w, int sms, const cost_ctx *c,
                      int64_t miss_bytes, int64_t write_bytes, arena *a, kt_item *it);
/** Op i runs outside this walk (a pipeline, another model): its outputs count as written. */
void sched_skip(sched_walk *s, int i);

#endif
