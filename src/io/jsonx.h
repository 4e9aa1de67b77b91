/* jsonx: cJSON loading with file/line errors and JSON-path-aware typed getters. */
#ifndef KT_JSONX_H
#define KT_JSONX_H
#include <cjson/cJSON.h>
#include <stdint.h>

#include "../err.h"

/** Read and parse a JSON file; NULL and e set (with line and column) on failure. */
cJSON *jsonx_load(const char *file, kt_err *e);
/** Parse JSON text held in memory; `file` names it in errors. */
cJSON *jsonx_parse(const char *text, const char *file, kt_err *e);
/** Number field `key` of obj (path names obj): required unless `def` is given (has_def=1).
 *  Must be finite and >= lo; 0 or -1 with e set. */
int jsonx_num(const cJSON *obj, const char *key, const char *file, const char *path, int has_def,
              double def, double lo, double *out, kt_err *e);
/** Integer field (no fraction), >= lo. */
int jsonx_int(const cJSON *obj, const char *key, const char *file, const char *path, int has_def,
              int64_t def, int64_t lo, int64_t *out, kt_err *e);
/** Object member that must be an object (required). */
const cJSON *jsonx_obj(const cJSON *obj, const char *key, const char *file, const char *path,
                       kt_err *e);
/** Set the number at a dotted path (e.g. "l2.bandwidth_GBps") in a tree: existing numeric leaf
 *  only. `mult` != 0 multiplies the existing value instead. 0 or -1 with e set. */
int jsonx_set_number(cJSON *root, const char *dotted, double value, int mult, const char *file,
                     kt_err *e);

#endif
