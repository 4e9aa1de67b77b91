/* jsonx: cJSON loading with file/line errors and JSON-path-aware typed getters. */
#include "jsonx.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "file.h"

/* The duplicate-key search: a hash table of an object's members (open addressing), and the
 * path from the root to the node being searched (its members at each depth), formatted only
 * when a duplicate is found. */
enum { DUP_HASH_MIN = 9, DUP_MAX_DEPTH = 1024 };
typedef struct dup_scratch {
    const cJSON **slot;
    size_t cap;
    const cJSON *at[DUP_MAX_DEPTH]; /* at[d]: the member entered at depth d */
} dup_scratch;

/* A key twice in object o: the second member, or NULL. Small objects compare pairs, large ones
 * (thousands of tensors) go through the hash table: O(n). Sets *oom when memory runs out. */
static const cJSON *dup_in(const cJSON *o, dup_scratch *s, int *oom)
{
    size_t k = 0;
    const cJSON *c, *d;
    for (c = o->child; c; c = c->next)
        k++;
    if (k < DUP_HASH_MIN) {
        for (c = o->child; c; c = c->next)
            for (d = c->next; d; d = d->next)
                if (c->string[0] == d->string[0] && !strcmp(c->string, d->string))
                    return d;
        return NULL;
    }
    size_t cap = 16;
    while (cap < 2 * k)
        cap *= 2;
    if (cap > s->cap) {
        const cJSON **v = realloc(s->slot, cap * sizeof *v);
        if (!v) {
            *oom = 1;
            return NULL;
        }
        s->slot = v;
        s->cap = cap;
    }
    memset(s->slot, 0, cap * sizeof *s->slot);
    for (c = o->child; c; c = c->next) {
        uint64_t h = 14695981039346656037ull; /* FNV-1a */
        for (const unsigned char *p = (const unsigned char *)c->string; *p; p++)
            h = (h ^ *p) * 1099511628211ull;
        for (size_t i = (size_t)h & (cap - 1);; i = (i + 1) & (cap - 1)) {
            if (!s->slot[i]) {
                s->slot[i] = c;
                break;
            }
            if (!strcmp(s->slot[i]->string, c->string))
                return c;
        }
    }
    return NULL;
}

/* A repeated key in the tree under node (at depth `depth`): 1 with s->at[0..*end] the path to
 * it, 0 when there is none, -1 when memory runs out. */
static int dup_key(const cJSON *node, int depth, dup_scratch *s, int *end)
{
    int oom = 0;
    if (depth >= DUP_MAX_DEPTH)
        return 0; /* cJSON's own nesting limit is lower */
    if ((node->type & 0xFF) == cJSON_Object) {
        const cJSON *d = dup_in(node, s, &oom);
        if (oom)
            return -1;
        if (d) {
            s->at[depth] = d;
            *end = depth;
            return 1;
        }
    }
    for (const cJSON *c = node->child; c; c = c->next)
        if ((c->type & 0xFF) == cJSON_Object || (c->type & 0xFF) == cJSON_Array) {
            s->at[depth] = c;
            int rc = dup_key(c, depth + 1, s, end);
            if (rc)
                return rc;
        }
    return 0;
}

/* The JSON path of s->at[0..end] under root ("ops[3].attrs.k"). */
static void dup_path(const cJSON *root, const dup_scratch *s, int end, char *path, size_t n)
{
    path[0] = 0;
    const cJSON *parent = root;
    for (int d = 0; d <= end; d++) {
        int i = 0;
        if (cJSON_IsArray(parent))
            for (const cJSON *c = parent->child; c && c != s->at[d]; c = c->next)
                i++;
        err_path(path, n, path, cJSON_IsObject(parent) ? s->at[d]->string : NULL, i);
        parent = s->at[d];
    }
}

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
    /* cJSON keeps both members of a repeated key and lookups see the first: the second was
     * silently ignored */
    dup_scratch *s = calloc(1, sizeof *s);
    int last = 0, rc = s ? dup_key(root, 0, s, &last) : -1;
    if (rc) {
        char path[192];
        if (rc > 0)
            dup_path(root, s, last, path, sizeof path);
        cJSON_Delete(root);
        root = NULL;
        if (rc < 0)
            err_set(e, KT_EINTERNAL, file, NULL, "out of memory");
        else
            err_set(e, KT_EINPUT, file, path, "duplicate key");
    }
    if (s)
        free(s->slot);
    free(s);
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
