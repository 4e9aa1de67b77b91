/* hw_json: a GPU hardware description (hw/<name>.json) read into an hw_gpu. */
#ifndef KT_HW_JSON_H
#define KT_HW_JSON_H
#include <cjson/cJSON.h>

#include "../err.h"
#include "../model/hw.h"

/** Longest chain of "base" files below a hw file. */
#define HW_MAX_BASE_DEPTH 8

/** Convert a parsed hw JSON tree into g; every field is validated (type, finite, range) and
 *  errors name `file` and the JSON path. 0 or -1. */
int hw_from_json(const cJSON *root, const char *file, hw_gpu *g, kt_err *e);
/** Read a hw file into one tree: when it has "base": NAME (NAME.json beside the file, else in
 *  hw_dir, which may be NULL) or "base": PATH (relative to the file's directory), the base is
 *  read first (recursively, at most HW_MAX_BASE_DEPTH levels, no cycles) and this file's keys
 *  override its keys, objects ("sources" too) merged member by member. Every file's keys are
 *  checked: an unknown key is an error that suggests the closest known one. The result has no
 *  "base" key; free it with cJSON_Delete. NULL with e set (naming the file at fault). */
cJSON *hw_json_load(const char *file, const char *hw_dir, kt_err *e);
/** hw_json_load and hw_from_json: a value error names the file of the chain that sets it. */
int hw_load_dir(const char *file, const char *hw_dir, hw_gpu *g, kt_err *e);
/** hw_load_dir without a hardware directory (bases by path, or beside the file). */
int hw_load(const char *file, hw_gpu *g, kt_err *e);

#endif
