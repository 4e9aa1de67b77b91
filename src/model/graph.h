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

#endif
