/* graph: whole-graph facts built on the op table. */
#ifndef KT_GRAPH_H
#define KT_GRAPH_H
#include "../err.h"
#include "wl.h"

/** Full structural and shape check: unique names, references to earlier ops, one producer per
 *  tensor, graph outputs produced, per-op shapes (op_check). `file` names the graph in errors
 *  (NULL: g->file). 0 or -1 with e naming file and JSON path. */
int graph_check(const wl_graph *g, const char *file, kt_err *e);

/** The tensor that owns t's storage: t itself, or the input of the free view (view, reshape or
 *  transpose without copy) that produced it, followed back. */
int graph_storage(const wl_graph *g, int t);
/** graph_storage of every tensor, in one pass over the ops (allocated in a; NULL when memory
 *  runs out): the lookup table hot loops use. */
int *graph_storage_map(const wl_graph *g, arena *a);
/** The op that really produces tensor t (free views followed back); -1 for graph inputs and
 *  weights. */
int graph_producer(const wl_graph *g, int t);

/** The memory a run of g holds (PyTorch's caching allocator aside). */
typedef struct graph_mem {
    int64_t weight_bytes;   /* weights (and optimizer state): resident for the whole run */
    int64_t peak_act_bytes; /* largest sum of live activation storage over the op order */
} graph_mem;
/** Liveness over the op order: a storage is live from its producer (graph inputs: the start)
 *  to its last reader (graph outputs: the end); views share their base's storage; the outputs
 *  of optimizer ops replace weights in place and take no new storage. Training graphs thereby
 *  count saved activations, live from the forward op to the backward op that reads them. 0, or
 *  -1 with e set (out of memory, overflow). */
int graph_memory(const wl_graph *g, arena *a, graph_mem *m, kt_err *e);

#endif
