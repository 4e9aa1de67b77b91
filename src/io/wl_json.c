/* wl_json: a workload graph read from JSON (workloads/<name>.json): parameters with --set
 * overrides, tensors with shape expressions, ops with attributes; then the full graph check. */
#include "wl_json.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../model/compose.h"
#include "../model/graph.h"
#include "../model/op.h"
#include "jsonx.h"

/* Attribute keys whose values are strings ("layout": a convolution's "nchw" / "nhwc"). */
static const char *const STRING_ATTRS[] = {"op", "approximate", "layout", NULL};
/* Attribute keys whose values may be real numbers, never costed: a constant multiplier (scale's
 * 1/sqrt(d)) or fill value, a norm's epsilon (PyTorch's 1e-5). Every other number must be an
 * integer. */
static const char *const REAL_ATTRS[] = {"value", "eps", NULL};

static int in_list(const char *const *list, const char *k)
{
    for (int i = 0; list[i]; i++)
        if (!strcmp(k, list[i]))
            return 1;
    return 0;
}

/* 1 when a name holds a control character (a newline, an escape sequence): names appear in
 * tables, CSV rows and messages, one line each. */
static int has_control(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            return 1;
    return 0;
}

static int is_string_attr(const char *k)
{
    return in_list(STRING_ATTRS, k);
}

/* 1 when d is an integer that fits 64 bits (range checked before the cast, which would be
 * undefined outside it). */
static int is_int64_value(double d)
{
    return d == d && d <= 9.0e18 && d >= -9.0e18 && d == (double)(int64_t)d;
}

static int eval_value(const cJSON *v, const wl_graph *g, const char *file, const char *path,
                      int64_t *out, kt_err *e)
{
    char msg[256];
    if (cJSON_IsBool(v)) {
        *out = cJSON_IsTrue(v);
        return 0;
    }
    if (cJSON_IsNumber(v)) {
        double d = v->valuedouble;
        if (!is_int64_value(d))
            return err_set(e, KT_EINPUT, file, path, "must be an integer");
        *out = (int64_t)d;
        return 0;
    }
    if (cJSON_IsString(v)) {
        if (expr_eval(v->valuestring, g->param, g->nparam, out, msg, sizeof msg))
            return err_set(e, KT_EINPUT, file, path, "%s", msg);
        return 0;
    }
    return err_set(e, KT_EINPUT, file, path, "must be an integer or an expression string");
}

static int load_params(const cJSON *root, const char *key, const char *file, wl_graph *g, int add,
                       int extra, kt_err *e)
{
    const cJSON *ps = cJSON_GetObjectItemCaseSensitive(root, key);
    if (!ps && add && extra > 0) { /* room for a block's inherited parameters */
        g->param = arena_calloc(g->a, (size_t)extra + 1, sizeof *g->param);
        if (!g->param)
            return err_set(e, KT_EINTERNAL, file, NULL, "out of memory");
    }
    if (!ps)
        return 0;
    if (!cJSON_IsObject(ps))
        return err_set(e, KT_EINPUT, file, key, "must be an object of name -> integer");
    int n = cJSON_GetArraySize(ps);
    if (add) {
        g->param = arena_calloc(g->a, (size_t)(n + extra + 1), sizeof *g->param);
        if (!g->param)
            return err_set(e, KT_EINTERNAL, file, NULL, "out of memory");
    }
    const cJSON *it;
    cJSON_ArrayForEach(it, ps)
    {
        char p[192];
        err_path(p, sizeof p, key, it->string, 0);
        if (!expr_is_name(it->string))
            return err_set(e, KT_EINPUT, file, p, "invalid parameter name");
        int64_t v;
        if (!cJSON_IsNumber(it))
            return err_set(e, KT_EINPUT, file, p, "must be an integer");
        if (eval_value(it, g, file, p, &v, e))
            return -1;
        int found = -1;
        for (int i = 0; i < g->nparam; i++)
            if (!strcmp(g->param[i].name, it->string))
                found = i;
        if (add) {
            if (found >= 0)
                return err_set(e, KT_EINPUT, file, p, "duplicate parameter");
            g->param[g->nparam].name = arena_strdup(g->a, it->string);
            g->param[g->nparam++].value = v;
        } else {
            if (found < 0)
                return err_set(e, KT_EINPUT, file, p, "not a parameter declared in \"params\"");
            g->param[found].value = v;
        }
    }
    return 0;
}

static int load_tensors(const cJSON *root, const char *file, wl_graph *g, wl_names *tm, kt_err *e)
{
    char tp[16];
    const cJSON *ts = jsonx_member(root, "tensors", cJSON_Object, "an object of name -> tensor",
                                   file, "", tp, sizeof tp, e);
    if (!ts)
        return -1;
    if (wl_names_init(tm, cJSON_GetArraySize(ts), g->a))
        return err_set(e, KT_EINTERNAL, file, NULL, "out of memory");
    const cJSON *it;
    cJSON_ArrayForEach(it, ts)
    {
        char p[192], q[192];
        err_path(p, sizeof p, "tensors", it->string, 0);
        if (!it->string[0])
            return err_set(e, KT_EINPUT, file, p, "empty tensor name");
        if (has_control(it->string))
            return err_set(e, KT_EINPUT, file, p, "tensor name with control characters");
        if (!cJSON_IsObject(it))
            return err_set(e, KT_EINPUT, file, p, "must be an object");
        const cJSON *sh = jsonx_member(it, "shape", cJSON_Array, "an array", file, p, q, sizeof q, e);
        if (!sh)
            return -1;
        int nd = cJSON_GetArraySize(sh);
        if (nd > WL_MAXDIM)
            return err_set(e, KT_EINPUT, file, q, "at most %d dimensions", WL_MAXDIM);
        int64_t dim[WL_MAXDIM];
        for (int i = 0; i < nd; i++) {
            char r[192];
            err_path(r, sizeof r, q, NULL, i);
            if (eval_value(cJSON_GetArrayItem(sh, i), g, file, r, &dim[i], e))
                return -1;
            if (dim[i] <= 0)
                return err_set(e, KT_EINPUT, file, r, "dimension must be > 0 (got %lld)",
                               (long long)dim[i]);
        }
        const cJSON *dtj = jsonx_member(it, "dtype", cJSON_String, "a string", file, p, q, sizeof q, e);
        dtype dt = DT_BF16;
        if (!dtj)
            return -1;
        if (dt_parse(dtj->valuestring, &dt))
            return err_set(e, KT_EINPUT, file, q, "unknown dtype \"%s\"", dtj->valuestring);
        wl_kind kind = TK_INTER;
        const cJSON *kj = cJSON_GetObjectItemCaseSensitive(it, "kind");
        err_path(q, sizeof q, p, "kind", 0);
        if (kj) {
            if (!cJSON_IsString(kj))
                return err_set(e, KT_EINPUT, file, q, "must be a string");
            const char *k = kj->valuestring;
            if (!strcmp(k, "input"))
                kind = TK_INPUT;
            else if (!strcmp(k, "weight"))
                kind = TK_WEIGHT;
            else if (!strcmp(k, "output"))
                kind = TK_OUTPUT;
            else if (!strcmp(k, "intermediate"))
                kind = TK_INTER;
            else
                return err_set(e, KT_EINPUT, file, q,
                               "unknown kind \"%s\" (input, weight, output or intermediate)", k);
        }
        const cJSON *rgj = cJSON_GetObjectItemCaseSensitive(it, "requires_grad");
        err_path(q, sizeof q, p, "requires_grad", 0);
        if (rgj && !cJSON_IsBool(rgj))
            return err_set(e, KT_EINPUT, file, q, "must be true or false");
        int rg = cJSON_IsTrue(rgj);
        if (rg && (kind != TK_INPUT || !dt_is_float(dt)))
            return err_set(e, KT_EINPUT, file, q,
                           "only floating-point inputs take requires_grad (weights always do)");
        kt_err sub;
        err_clear(&sub);
        int idx = wl_add_tensor(g, it->string, nd, dim, dt, kind, &sub);
        if (idx < 0)
            return err_set(e, sub.code, file, p, "%s", sub.msg);
        g->t[idx].requires_grad = rg;
        if (wl_names_find(tm, g, it->string, idx, 0) >= 0)
            return err_set(e, KT_EINPUT, file, p, "duplicate tensor name");
    }
    return 0;
}

static int load_attrs(const cJSON *aj, int type, const char *file, const char *path, wl_graph *g,
                      wl_attr **out, int *nout, kt_err *e)
{
    *nout = 0;
    if (!aj)
        return 0;
    if (!cJSON_IsObject(aj))
        return err_set(e, KT_EINPUT, file, path, "must be an object");
    int n = cJSON_GetArraySize(aj);
    wl_attr *at = arena_calloc(g->a, (size_t)(n ? n : 1), sizeof *at);
    if (!at)
        return err_set(e, KT_EINTERNAL, file, NULL, "out of memory");
    const cJSON *it;
    int k = 0;
    cJSON_ArrayForEach(it, aj)
    {
        char p[192];
        err_path(p, sizeof p, path, it->string, 0);
        for (int j = 0; j < k; j++)
            if (!strcmp(at[j].key, it->string))
                return err_set(e, KT_EINPUT, file, p, "duplicate attribute");
        at[k].key = arena_strdup(g->a, it->string);
        if (!op_attr_known(type, it->string)) /* before its value: "must be an integer" would
                                                  hide that the name is wrong */
            return err_set(e, KT_EINPUT, file, p, "%s: unknown attribute \"%s\"", op_name(type),
                           it->string);
        if (is_string_attr(it->string)) {
            if (!cJSON_IsString(it))
                return err_set(e, KT_EINPUT, file, p, "must be a string");
            at[k].type = WA_STR;
            at[k].sval = arena_strdup(g->a, it->valuestring);
        } else if (in_list(REAL_ATTRS, it->string) && cJSON_IsNumber(it) &&
                   !is_int64_value(it->valuedouble)) {
            double d = it->valuedouble;
            if (d != d || d > 1.0e300 || d < -1.0e300)
                return err_set(e, KT_EINPUT, file, p, "must be a finite number");
            at[k].type = WA_REAL;
            at[k].dval = d;
        } else if (cJSON_IsArray(it)) {
            int m = cJSON_GetArraySize(it);
            if (m > WL_MAXDIM * 8)
                return err_set(e, KT_EINPUT, file, p, "list too long");
            at[k].type = WA_LIST;
            at[k].nlist = m;
            at[k].list = arena_calloc(g->a, (size_t)(m ? m : 1), sizeof(int64_t));
            if (!at[k].list)
                return err_set(e, KT_EINTERNAL, file, NULL, "out of memory");
            for (int j = 0; j < m; j++) {
                char r[192];
                err_path(r, sizeof r, p, NULL, j);
                if (eval_value(cJSON_GetArrayItem(it, j), g, file, r, &at[k].list[j], e))
                    return -1;
            }
        } else {
            at[k].type = WA_INT;
            if (eval_value(it, g, file, p, &at[k].ival, e))
                return -1;
        }
        k++;
    }
    *out = at;
    *nout = k;
    return 0;
}

static int load_names(const cJSON *op, const char *key, const char *file, const char *path,
                      wl_graph *g, wl_names *tm, int *idx, int *n, int max, kt_err *e)
{
    char p[192];
    err_path(p, sizeof p, path, key, 0);
    const cJSON *arr = cJSON_GetObjectItemCaseSensitive(op, key);
    if (!arr)
        return err_set(e, KT_EINPUT, file, p, "missing field");
    if (!cJSON_IsArray(arr))
        return err_set(e, KT_EINPUT, file, p, "must be an array of tensor names");
    *n = cJSON_GetArraySize(arr);
    if (*n > max)
        return err_set(e, KT_EINPUT, file, p, "at most %d entries", max);
    int i = 0;
    const cJSON *s;
    cJSON_ArrayForEach(s, arr)
    {
        char r[192];
        if (!cJSON_IsString(s)) {
            err_path(r, sizeof r, p, NULL, i);
            return err_set(e, KT_EINPUT, file, r, "must be a tensor name");
        }
        idx[i] = wl_names_find(tm, g, s->valuestring, -1, 0);
        if (idx[i] < 0) {
            err_path(r, sizeof r, p, NULL, i);
            return err_set(e, KT_EINPUT, file, r, "unknown tensor \"%s\"", s->valuestring);
        }
        i++;
    }
    return 0;
}

/* ---- composed models: "repeat" entries in "ops" (compose.h) ---- */

/* Where the ops of each entry of "ops" start in the expanded graph, to name an entry in errors
 * that graph_check finds in the expanded graph. */
typedef struct wl_entries {
    int n;
    int *first_op;     /* n + 1 entries: ops of entry i are first_op[i] .. first_op[i+1]-1 */
    unsigned char *rep;/* entry i is a repeat */
} wl_entries;

static int load_graph(const cJSON *root, const char *file, const wl_set *sets, int nsets,
                      int training, const wl_graph *outer, arena *a, wl_graph *g, kt_err *e);

static const char *const REPEAT_KEYS[] = {"repeat", "count", "graph", "params",
                                          "inputs", "carry", "outputs"};
enum { N_REPEAT_KEYS = (int)(sizeof REPEAT_KEYS / sizeof REPEAT_KEYS[0]) };

/* "[8192, 4096] bf16" into buf. */
static void shape_str(const wl_tensor *t, char *buf, size_t n)
{
    size_t k = (size_t)snprintf(buf, n, "[");
    for (int i = 0; i < t->ndim && k < n; i++)
        k += (size_t)snprintf(buf + k, n - k, "%s%lld", i ? ", " : "", (long long)t->dim[i]);
    if (k < n)
        snprintf(buf + k, n - k, "] %s", dt_name(t->dt));
}

/* Model tensor mt may stand for block tensor bt (same shape and dtype). */
static int same_shape(const wl_tensor *mt, const wl_tensor *bt, const char *file, const char *p,
                      kt_err *e)
{
    int same = mt->ndim == bt->ndim && mt->dt == bt->dt;
    for (int i = 0; same && i < mt->ndim; i++)
        same = mt->dim[i] == bt->dim[i];
    if (same)
        return 0;
    char a[160], b[160];
    shape_str(mt, a, sizeof a);
    shape_str(bt, b, sizeof b);
    return err_set(e, KT_EINPUT, file, p, "\"%s\" is %s, the block's \"%s\" is %s", mt->name, a,
                   bt->name, b);
}

/* One binding object of a repeat ("inputs", "carry", "outputs"): block tensor name -> tensor name
 * (of the model, or of the block for "carry"), into map[block tensor]. kinds: what the block
 * tensor must be (bit mask of 1 << wl_kind). */
static int load_binding(const cJSON *rj, const char *key, const char *file, const char *base,
                        const wl_graph *g, wl_names *tm, const wl_graph *blk, unsigned kinds,
                        int *map, kt_err *e)
{
    char p[192], q[192];
    err_path(p, sizeof p, base, key, 0);
    const cJSON *bj = cJSON_GetObjectItemCaseSensitive(rj, key);
    if (!bj)
        return 0;
    if (!cJSON_IsObject(bj))
        return err_set(e, KT_EINPUT, file, p, "must be an object of block tensor -> tensor");
    const cJSON *it;
    cJSON_ArrayForEach(it, bj)
    {
        err_path(q, sizeof q, p, it->string, 0);
        int bt = wl_find_tensor(blk, it->string);
        if (bt < 0)
            return err_set(e, KT_EINPUT, file, q, "the block has no tensor \"%s\"", it->string);
        wl_kind k = blk->t[bt].kind;
        if (!(kinds >> k & 1u))
            return err_set(e, KT_EINPUT, file, q, "\"%s\" is not %s of the block", it->string,
                           kinds == 1u << TK_OUTPUT ? "an output"
                           : kinds == 1u << TK_INPUT ? "an input"
                                                     : "an input or a weight");
        if (!cJSON_IsString(it))
            return err_set(e, KT_EINPUT, file, q, "must be a tensor name");
        const char *tn = it->valuestring;
        if (!strcmp(key, "carry")) {
            int o = wl_find_tensor(blk, tn);
            if (o < 0 || blk->t[o].kind != TK_OUTPUT)
                return err_set(e, KT_EINPUT, file, q, "\"%s\" is not an output of the block", tn);
            if (same_shape(&blk->t[o], &blk->t[bt], file, q, e))
                return -1;
            map[bt] = o;
            continue;
        }
        int mt = wl_names_find(tm, g, tn, -1, 0);
        if (mt < 0)
            return err_set(e, KT_EINPUT, file, q, "unknown tensor \"%s\"", tn);
        const wl_tensor *m = &g->t[mt];
        if (same_shape(m, &blk->t[bt], file, q, e))
            return -1;
        if (k == TK_WEIGHT && m->kind != TK_WEIGHT)
            return err_set(e, KT_EINPUT, file, q, "\"%s\" stands for a weight and must be one", tn);
        if (!strcmp(key, "outputs")) {
            if (m->kind == TK_INPUT || m->kind == TK_WEIGHT)
                return err_set(e, KT_EINPUT, file, q, "cannot write %s \"%s\"",
                               m->kind == TK_INPUT ? "input" : "weight", tn);
            if (m->producer >= 0)
                return err_set(e, KT_EINPUT, file, q, "tensor \"%s\" is already produced by op \"%s\"",
                               tn, g->op[m->producer].name);
        }
        map[bt] = mt;
    }
    return 0;
}

/* Parameters a block file declares ("params" member names). */
static int declares(const cJSON *root, const char *name)
{
    const cJSON *ps = cJSON_GetObjectItemCaseSensitive(root, "params");
    return cJSON_IsObject(ps) && cJSON_GetObjectItemCaseSensitive(ps, name) != NULL;
}

/* A "repeat" entry (ops[idx]): load its block graph once (a file relative to this one, or an
 * object inline), bind its tensors and append count repetitions (compose_append). */
static int load_repeat(const cJSON *rj, int idx, const char *file, int training, wl_graph *g,
                       wl_names *tm, kt_err *e)
{
    char p[192], q[192];
    err_path(p, sizeof p, "ops", NULL, idx);
    const cJSON *it;
    cJSON_ArrayForEach(it, rj)
    {
        int known = 0;
        for (int k = 0; k < N_REPEAT_KEYS; k++)
            known |= !strcmp(it->string, REPEAT_KEYS[k]);
        if (!known) {
            err_path(q, sizeof q, p, it->string, 0);
            const char *s = err_suggest(it->string, REPEAT_KEYS, N_REPEAT_KEYS);
            if (s)
                return err_set(e, KT_EINPUT, file, q, "unknown key (did you mean \"%s\"?)", s);
            return err_set(e, KT_EINPUT, file, q,
                           "unknown key of a repeat (repeat, count, graph, params, inputs, carry, "
                           "outputs)");
        }
    }
    const cJSON *nj = jsonx_member(rj, "repeat", cJSON_String, "a name", file, p, q, sizeof q, e);
    if (!nj)
        return -1;
    if (!expr_is_name(nj->valuestring))
        return err_set(e, KT_EINPUT, file, q, "must be a name (letters, digits, _), got \"%s\"",
                       nj->valuestring);
    const char *rname = nj->valuestring;
    err_path(q, sizeof q, p, "count", 0);
    const cJSON *cj = cJSON_GetObjectItemCaseSensitive(rj, "count");
    int64_t count;
    if (!cj)
        return err_set(e, KT_EINPUT, file, q, "missing field");
    if (eval_value(cj, g, file, q, &count, e))
        return -1;
    if (count < 1 || count > COMPOSE_MAX_COUNT)
        return err_set(e, KT_EINPUT, file, q, "must be 1..%d (got %lld)", COMPOSE_MAX_COUNT,
                       (long long)count);
    /* the block: a path relative to this file, or an object inline */
    err_path(q, sizeof q, p, "graph", 0);
    const cJSON *gj = cJSON_GetObjectItemCaseSensitive(rj, "graph");
    if (!gj)
        return err_set(e, KT_EINPUT, file, q, "missing field");
    cJSON *owned = NULL;
    const cJSON *broot = gj;
    char bfile[1024];
    snprintf(bfile, sizeof bfile, "%s", file);
    if (cJSON_IsString(gj)) {
        const char *slash = strrchr(file, '/');
        if (gj->valuestring[0] == '/' || !slash)
            snprintf(bfile, sizeof bfile, "%s", gj->valuestring);
        else
            snprintf(bfile, sizeof bfile, "%.*s/%s", (int)(slash - file), file, gj->valuestring);
        kt_err sub;
        err_clear(&sub);
        owned = jsonx_load(bfile, &sub);
        if (!owned) {
            if (!strcmp(sub.file, bfile) && !sub.path[0] && strstr(sub.msg, "cannot open"))
                return err_set(e, KT_EINPUT, file, q, "%s: %s", bfile, sub.msg);
            *e = sub;
            return -1;
        }
        broot = owned;
    } else if (!cJSON_IsObject(gj)) {
        return err_set(e, KT_EINPUT, file, q, "must be a file name or a graph object");
    }
    /* parameters: the model's values for the names the block declares, then the repeat's own */
    wl_set sets[64];
    int nsets = 0, rc = -1;
    for (int i = 0; i < g->nparam && nsets < 64; i++)
        if (declares(broot, g->param[i].name)) {
            sets[nsets].name = g->param[i].name;
            sets[nsets++].value = g->param[i].value;
        }
    err_path(q, sizeof q, p, "params", 0);
    const cJSON *pj = cJSON_GetObjectItemCaseSensitive(rj, "params");
    if (pj && !cJSON_IsObject(pj)) {
        err_set(e, KT_EINPUT, file, q, "must be an object of name -> integer or expression");
        goto done;
    }
    cJSON_ArrayForEach(it, pj)
    {
        char r[192];
        err_path(r, sizeof r, q, it->string, 0);
        if (!declares(broot, it->string)) {
            err_set(e, KT_EINPUT, file, r, "the block declares no parameter \"%s\"", it->string);
            goto done;
        }
        if (nsets >= 64) {
            err_set(e, KT_EINPUT, file, r, "too many parameters");
            goto done;
        }
        sets[nsets].name = it->string;
        if (eval_value(it, g, file, r, &sets[nsets].value, e))
            goto done;
        nsets++;
    }
    wl_graph *blk = arena_calloc(g->a, 1, sizeof *blk);
    if (!blk) {
        err_set(e, KT_EINTERNAL, file, NULL, "out of memory");
        goto done;
    }
    if (load_graph(broot, bfile, sets, nsets, training, g, g->a, blk, e)) {
        if (!owned && !strcmp(e->file, file)) { /* inline: name the path inside this file */
            char r[sizeof e->path];
            snprintf(r, sizeof r, "%.60s.graph%s%.120s", p, e->path[0] ? "." : "", e->path);
            snprintf(e->path, sizeof e->path, "%s", r);
        }
        goto done;
    }
    g->inference_only |= blk->inference_only;
    int nt = blk->ntensor;
    int *bind_in = arena_calloc(g->a, (size_t)nt + 1, sizeof(int));
    int *carry = arena_calloc(g->a, (size_t)nt + 1, sizeof(int));
    int *bind_out = arena_calloc(g->a, (size_t)nt + 1, sizeof(int));
    if (!bind_in || !carry || !bind_out) {
        err_set(e, KT_EINTERNAL, file, NULL, "out of memory");
        goto done;
    }
    for (int t = 0; t < nt; t++)
        bind_in[t] = carry[t] = bind_out[t] = -1;
    if (load_binding(rj, "inputs", file, p, g, tm, blk, 1u << TK_INPUT | 1u << TK_WEIGHT, bind_in,
                     e) ||
        load_binding(rj, "carry", file, p, g, tm, blk, 1u << TK_INPUT, carry, e) ||
        load_binding(rj, "outputs", file, p, g, tm, blk, 1u << TK_OUTPUT, bind_out, e))
        goto done;
    if ((int64_t)g->nop + count * blk->nop > COMPOSE_MAX_OPS) {
        err_set(e, KT_EINPUT, file, p, "%lld repetitions of %d ops exceed %d ops", (long long)count,
                blk->nop, COMPOSE_MAX_OPS);
        goto done;
    }
    /* the name index grows to hold every new tensor */
    int64_t want = g->ntensor + count * (int64_t)nt;
    if (want * 2 + 16 >= tm->cap) {
        if (wl_names_init(tm, (int)want, g->a)) {
            err_set(e, KT_EINTERNAL, file, NULL, "out of memory");
            goto done;
        }
        for (int t = 0; t < g->ntensor; t++)
            wl_names_find(tm, g, g->t[t].name, t, 0);
    }
    compose_repeat r = {rname, (int)count, bind_in, carry, bind_out};
    if (compose_append(g, blk, &r, tm, e)) {
        snprintf(e->path, sizeof e->path, "%s", p);
        goto done;
    }
    rc = 0;
done:
    cJSON_Delete(owned);
    return rc;
}

static int load_ops(const cJSON *root, const char *file, wl_graph *g, wl_names *tm, int training,
                    const wl_graph *outer, wl_entries *en, kt_err *e)
{
    char op_path[8];
    const cJSON *ops = jsonx_member(root, "ops", cJSON_Array, "an array", file, "", op_path,
                                    sizeof op_path, e);
    if (!ops)
        return -1;
    /* a composed model: every op belongs to a block (repetitions, and runs of its own ops) */
    int nent = cJSON_GetArraySize(ops), composed = 0;
    const cJSON *oj;
    cJSON_ArrayForEach(oj, ops) composed |= cJSON_GetObjectItemCaseSensitive(oj, "repeat") != NULL;
    en->n = nent;
    en->first_op = arena_calloc(g->a, (size_t)nent + 1, sizeof(int));
    en->rep = arena_calloc(g->a, (size_t)nent + 1, 1);
    /* the runs of the model's own ops: their block and the repeats before them */
    int *run_blk = arena_calloc(g->a, (size_t)nent + 1, sizeof(int));
    int *run_reps = arena_calloc(g->a, (size_t)nent + 1, sizeof(int));
    if (!en->first_op || !en->rep || !run_blk || !run_reps)
        return err_set(e, KT_EINTERNAL, file, NULL, "out of memory");
    int i = 0, run = -1, nrep = 0, nrun = 0;
    cJSON_ArrayForEach(oj, ops)
    {
        char p[192], q[192];
        err_path(p, sizeof p, "ops", NULL, i);
        en->first_op[i] = g->nop;
        if (!cJSON_IsObject(oj))
            return err_set(e, KT_EINPUT, file, p, "must be an object");
        if (cJSON_GetObjectItemCaseSensitive(oj, "repeat")) {
            if (outer)
                return err_set(e, KT_EINPUT, file, p,
                               "a repeated block cannot itself hold repeats (one level)");
            en->rep[i] = 1;
            if (load_repeat(oj, i, file, training, g, tm, e))
                return -1;
            run = -1;
            nrep++;
            i++;
            continue;
        }
        const cJSON *nm = jsonx_member(oj, "name", cJSON_String, "a non-empty string", file, p, q,
                                       sizeof q, e);
        if (!nm)
            return -1;
        if (!nm->valuestring[0])
            return err_set(e, KT_EINPUT, file, q, "must be a non-empty string");
        if (has_control(nm->valuestring))
            return err_set(e, KT_EINPUT, file, q, "must not contain control characters");
        const cJSON *ty = jsonx_member(oj, "type", cJSON_String, "a string", file, p, q, sizeof q, e);
        if (!ty)
            return -1;
        int type = op_parse(ty->valuestring);
        if (type < 0)
            return err_set(e, KT_EINPUT, file, q, "unknown op type \"%s\"", ty->valuestring);
        int in[OP_MAXIN], out[8], nin, nout;
        if (load_names(oj, "inputs", file, p, g, tm, in, &nin, OP_MAXIN, e) ||
            load_names(oj, "outputs", file, p, g, tm, out, &nout, 8, e))
            return -1;
        wl_attr *at = NULL;
        int nat = 0;
        err_path(q, sizeof q, p, "attrs", 0);
        if (load_attrs(cJSON_GetObjectItemCaseSensitive(oj, "attrs"), type, file, q, g, &at, &nat, e))
            return -1;
        kt_err sub;
        err_clear(&sub);
        int k = wl_add_op(g, nm->valuestring, type, in, nin, out, nout, at, nat, &sub);
        if (k < 0)
            return err_set(e, sub.code, file, p, "%s", sub.msg);
        if (composed) {
            if (run < 0) {
                run = compose_block(g, "", NULL, -1, e);
                if (run < 0)
                    return -1;
                run_blk[nrun] = run;
                run_reps[nrun++] = nrep;
            }
            g->op[k].block = run;
        }
        i++;
    }
    en->first_op[nent] = g->nop;
    /* runs of the model's own ops: before every repeat "head", after all "tail", else "part<k>" */
    for (int k = 0; k < nrun; k++) {
        char nm[32];
        if (!run_reps[k])
            snprintf(nm, sizeof nm, "head");
        else if (run_reps[k] == nrep)
            snprintf(nm, sizeof nm, "tail");
        else
            snprintf(nm, sizeof nm, "part%d", k + 1);
        int b = run_blk[k];
        g->block[b].name = arena_strdup(g->a, nm);
        if (!g->block[b].name)
            return err_set(e, KT_EINTERNAL, file, NULL, "out of memory");
    }
    return 0;
}

/* An error graph_check found at "ops[N]..." of an expanded (composed) graph, named by the entry
 * of "ops" it comes from: a model op keeps its path under its entry index; an op of a repetition
 * is named in the message under the repeat's path. */
static void remap_error(const wl_graph *g, const wl_entries *en, kt_err *e)
{
    int n, off = 0;
    if (sscanf(e->path, "ops[%d]%n", &n, &off) != 1 || off <= 0 || n < 0 || n >= g->nop)
        return;
    int lo = 0, hi = en->n - 1; /* the last entry whose first op is <= n */
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (en->first_op[mid] <= n)
            lo = mid;
        else
            hi = mid - 1;
    }
    char rest[192], msg[sizeof e->msg];
    snprintf(rest, sizeof rest, "%.120s", e->path + off);
    if (!en->rep[lo]) {
        snprintf(e->path, sizeof e->path, "ops[%d]%.160s", lo, rest);
        return;
    }
    snprintf(msg, sizeof msg, "op \"%.80s\"%s%.60s: %.160s", g->op[n].name, rest[0] ? " " : "",
             rest[0] == '.' ? rest + 1 : rest, e->msg);
    snprintf(e->msg, sizeof e->msg, "%s", msg);
    snprintf(e->path, sizeof e->path, "ops[%d]", lo);
}

/* A graph from a parsed tree: a workload file, or (outer != NULL) the block of a repeat, which
 * needs no name and sees the model's parameters besides its own. */
static int load_graph(const cJSON *root, const char *file, const wl_set *sets, int nsets,
                      int training, const wl_graph *outer, arena *a, wl_graph *g, kt_err *e)
{
    wl_init(g, "", a);
    g->file = arena_strdup(a, file);
    if (!cJSON_IsObject(root))
        return err_set(e, KT_EINPUT, file, NULL, "top level must be an object");
    const cJSON *nm = cJSON_GetObjectItemCaseSensitive(root, "name");
    if (!nm && !outer)
        return err_set(e, KT_EINPUT, file, "name", "missing field");
    if (nm && (!cJSON_IsString(nm) || !nm->valuestring[0]))
        return err_set(e, KT_EINPUT, file, "name", "must be a non-empty string");
    if (nm && has_control(nm->valuestring))
        return err_set(e, KT_EINPUT, file, "name", "must not contain control characters");
    g->name = arena_strdup(a, nm ? nm->valuestring : "block");
    const cJSON *src = cJSON_GetObjectItemCaseSensitive(root, "source");
    if (src && !cJSON_IsString(src))
        return err_set(e, KT_EINPUT, file, "source", "must be a string");
    g->source = arena_strdup(a, src ? src->valuestring : "");
    const cJSON *io = cJSON_GetObjectItemCaseSensitive(root, "inference_only");
    if (io && !cJSON_IsBool(io))
        return err_set(e, KT_EINPUT, file, "inference_only", "must be true or false");
    g->inference_only = cJSON_IsTrue(io);
    const cJSON *po = cJSON_GetObjectItemCaseSensitive(root, "paper_ops");
    if (po) {
        int64_t v;
        if (!cJSON_IsObject(po))
            return err_set(e, KT_EINPUT, file, "paper_ops", "must be an object");
        if (jsonx_int(po, "inference", file, "paper_ops", 1, 0, 0, &v, e))
            return -1;
        g->paper_ops[0] = (int)(v > 1000000 ? 1000000 : v);
        if (jsonx_int(po, "training", file, "paper_ops", 1, 0, 0, &v, e))
            return -1;
        g->paper_ops[1] = (int)(v > 1000000 ? 1000000 : v);
    }
    if (load_params(root, "params", file, g, 1, outer ? outer->nparam : 0, e))
        return -1;
    if (training && load_params(root, "training_params", file, g, 0, 0, e))
        return -1;
    if (outer) /* the model's parameters the block does not declare */
        for (int i = 0; i < outer->nparam; i++)
            if (!declares(root, outer->param[i].name)) {
                g->param[g->nparam].name = arena_strdup(a, outer->param[i].name);
                g->param[g->nparam++].value = outer->param[i].value;
            }
    for (int i = 0; i < nsets; i++) {
        int found = 0;
        for (int j = 0; j < g->nparam; j++)
            if (!strcmp(g->param[j].name, sets[i].name)) {
                g->param[j].value = sets[i].value;
                found = 1;
            }
        if (!found)
            return err_set(e, KT_EINPUT, file, "params",
                           "--set: workload has no parameter \"%s\"", sets[i].name);
    }
    wl_names tm;
    wl_entries en = {0};
    if (load_tensors(root, file, g, &tm, e) || load_ops(root, file, g, &tm, training, outer, &en, e))
        return -1;
    if (graph_check(g, file, e)) {
        if (g->nblock)
            remap_error(g, &en, e);
        return -1;
    }
    return 0;
}

int wl_from_json(const cJSON *root, const char *file, const wl_set *sets, int nsets, int training,
                 arena *a, wl_graph *g, kt_err *e)
{
    return load_graph(root, file, sets, nsets, training, NULL, a, g, e);
}

int wl_load(const char *file, const wl_set *sets, int nsets, int training, arena *a, wl_graph *g,
            kt_err *e)
{
    cJSON *root = jsonx_load(file, e);
    if (!root)
        return -1;
    int rc = wl_from_json(root, file, sets, nsets, training, a, g, e);
    cJSON_Delete(root);
    return rc;
}

