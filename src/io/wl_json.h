/* wl_json: a workload graph (workloads/<name>.json) read into a wl_graph. */
#ifndef KT_WL_JSON_H
#define KT_WL_JSON_H
#include <cjson/cJSON.h>

#include "../arena.h"
#include "../err.h"
#include "../model/wl.h"

/** Load a workload file into g (allocated in a), applying `sets` over the file's params (and over
 *  its "training_params" when training is 1). Checks names, references, order and shapes
 *  (graph_check). 0 or -1 with e naming file and JSON path. */
int wl_load(const char *file, const wl_set *sets, int nsets, int training, arena *a, wl_graph *g,
            kt_err *e);
/** The same from a parsed tree. */
int wl_from_json(const cJSON *root, const char *file, const wl_set *sets, int nsets, int training,
                 arena *a, wl_graph *g, kt_err *e);

#endif
