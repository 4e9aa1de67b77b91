/* hw_json: a GPU hardware description (hw/<name>.json) read into an hw_gpu. */
#ifndef KT_HW_JSON_H
#define KT_HW_JSON_H
#include <cjson/cJSON.h>

#include "../err.h"
#include "../model/hw.h"

/** Convert a parsed hw JSON tree into g; every field is validated (type, finite, range) and
 *  errors name `file` and the JSON path. 0 or -1. */
int hw_from_json(const cJSON *root, const char *file, hw_gpu *g, kt_err *e);
/** Load and convert a file. */
int hw_load(const char *file, hw_gpu *g, kt_err *e);

#endif
