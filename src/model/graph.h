/* graph: whole-graph facts built on the op table. */
#ifndef KT_GRAPH_H
#define KT_GRAPH_H
#include "../err.h"
#include "wl.h"

/** Full structural and shape check: unique names, references to earlier ops, one producer per
 *  tensor, graph outputs produced, per-op shapes (op_check). `file` names the graph in errors
 *  (NULL: g->file). 0 or -1 with e naming file and JSON path. */
int graph_check(const wl_graph *g, const char *file, kt_err *e);

#endif
