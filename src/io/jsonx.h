/* jsonx: cJSON loading with file/line errors and JSON-path-aware typed getters. */
#ifndef KT_JSONX_H
#define KT_JSONX_H
#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../err.h"

/** Largest JSON file read (bytes). */
enum { JSONX_MAX_FILE_BYTES = 64 * 1024 * 1024 };

/** Read and parse a JSON file; NULL and e set (with line and column) on failure. */
cJSON *jsonx_load(const char *file, kt_err *e);
/** Parse JSON text held in memory; `file` names it in errors. */
cJSON *jsonx_parse(const char *text, const char *file, kt_err *e);
/** Parse the len bytes of a file read into memory (NUL-terminated at len): a NUL byte inside
 *  is an error, a leading UTF-8 byte-order mark is skipped. */
cJSON *jsonx_parse_file(const char *text, size_t len, const char *file, kt_err *e);
/** Integer field `key` of obj (path names obj; no fraction, >= lo): required unless has_def,
 *  else def when absent. 0 or -1 with e set. */
int jsonx_int(const cJSON *obj, const char *key, const char *file, const char *path, int has_def,
              int64_t def, int64_t lo, int64_t *out, kt_err *e);
/** Member `key` of obj (whose JSON path is base, "" for the root) that must exist and be of
 *  `type` (cJSON_Object, cJSON_Array, cJSON_String, ...); its path goes into path (size n).
 *  `what` says what it must be in the error. NULL with e set ("missing field", "must be ..."). */
const cJSON *jsonx_member(const cJSON *obj, const char *key, int type, const char *what,
                          const char *file, const char *base, char *path, unsigned long n,
                          kt_err *e);
/** Set the number at a dotted path (e.g. "l2.bandwidth_GBps") in a tree: existing numeric leaf
 *  only. `mult` != 0 multiplies the existing value instead. 0 or -1 with e set. */
int jsonx_set_number(cJSON *root, const char *dotted, double value, int mult, const char *file,
                     kt_err *e);

/** Write a tree as the shipped files are laid out: two-space indents, "key": value. 0 or -1
 *  (out of memory, write error). */
int jsonx_write(FILE *f, const cJSON *root);

#endif
