/* jsonx: cJSON loading with file/line errors and JSON-path-aware typed getters. */
#include "jsonx.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "file.h"

cJSON *jsonx_parse(const char *text, const char *file, kt_err *e)
{
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithOpts(text, &end, 1);
    if (!root) {
        const char *where = cJSON_GetErrorPtr();
        if (!where)
            where = end ? end : text;
        long line = 1, col = 1;
        for (const char *p = text; p < where && *p; p++) {
            if (*p == '\n') {
                line++;
                col = 1;
            } else {
                col++;
            }
        }
        err_set(e, KT_EINPUT, file, NULL, "invalid JSON at line %ld, column %ld", line, col);
        return NULL;
    }
    return root;
}

cJSON *jsonx_parse_file(const char *text, size_t len, const char *file, kt_err *e)
{
    if (strlen(text) != len) {
        err_set(e, KT_EINPUT, file, NULL, "invalid JSON: contains a NUL byte");
        return NULL;
    }
    if (!strncmp(text, "\xef\xbb\xbf", 3)) /* byte-order mark: editors on Windows write one */
        text += 3;
    return jsonx_parse(text, file, e);
}

cJSON *jsonx_load(const char *file, kt_err *e)
{
    size_t len = 0;
    char *buf = io_read_file(file, JSONX_MAX_FILE_BYTES, &len, e);
    if (!buf)
        return NULL;
    cJSON *root = jsonx_parse_file(buf, len, file, e);
    free(buf);
    return root;
}

int jsonx_int(const cJSON *obj, const char *key, const char *file, const char *path, int has_def,
              int64_t def, int64_t lo, int64_t *out, kt_err *e)
{
    char p[192];
    err_path(p, sizeof p, path, key, 0);
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!it) {
        if (has_def) {
            *out = def;
            return 0;
        }
        return err_set(e, KT_EINPUT, file, p, "missing field");
    }
    if (!cJSON_IsNumber(it))
        return err_set(e, KT_EINPUT, file, p, "must be an integer");
    double v = it->valuedouble;
    if (!isfinite(v) || v != floor(v) || fabs(v) > 9.0e15)
        return err_set(e, KT_EINPUT, file, p, "must be an integer");
    if ((int64_t)v < lo)
        return err_set(e, KT_EINPUT, file, p, "must be >= %lld", (long long)lo);
    *out = (int64_t)v;
    return 0;
}

const cJSON *jsonx_member(const cJSON *obj, const char *key, int type, const char *what,
                          const char *file, const char *base, char *path, unsigned long n,
                          kt_err *e)
{
    err_path(path, n, base, key, 0);
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!m) {
        err_set(e, KT_EINPUT, file, path, "missing field");
        return NULL;
    }
    if ((m->type & 0xFF) != type) {
        err_set(e, KT_EINPUT, file, path, "must be %s", what);
        return NULL;
    }
    return m;
}

int jsonx_set_number(cJSON *root, const char *dotted, double value, int mult, const char *file,
                     kt_err *e)
{
    char buf[192];
    snprintf(buf, sizeof buf, "%s", dotted);
    cJSON *cur = root;
    char *save = NULL;
    for (char *tok = strtok_r(buf, ".", &save); tok; tok = strtok_r(NULL, ".", &save)) {
        if (!cJSON_IsObject(cur))
            return err_set(e, KT_EINPUT, file, dotted, "not an object path");
        cur = cJSON_GetObjectItemCaseSensitive(cur, tok);
        if (!cur)
            return err_set(e, KT_EINPUT, file, dotted, "no such field");
    }
    if (!cJSON_IsNumber(cur))
        return err_set(e, KT_EINPUT, file, dotted, "not a numeric field");
    double v = mult ? cur->valuedouble * value : value;
    if (!isfinite(v))
        return err_set(e, KT_EINPUT, file, dotted, "value must be finite");
    cJSON_SetNumberValue(cur, v);
    return 0;
}

int jsonx_write(FILE *f, const cJSON *root)
{
    char *text = cJSON_Print(root);
    if (!text)
        return -1;
    /* cJSON indents with tabs and writes "key":<tab>value; strings hold no raw tabs (escaped) */
    int line_start = 1;
    for (const char *p = text; *p; p++) {
        if (*p == '\t') {
            fputs(line_start ? "  " : " ", f);
            continue;
        }
        line_start = *p == '\n';
        fputc(*p, f);
    }
    fputc('\n', f);
    free(text);
    return ferror(f) ? -1 : 0;
}
