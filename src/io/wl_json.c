/* wl_json: a workload graph read from JSON (workloads/<name>.json): parameters with --set
 * overrides, tensors with shape expressions, ops with attributes; then the full graph check. */
#include "wl_json.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../model/graph.h"
#include "../model/op.h"
#include "jsonx.h"

/* Attribute keys whose values are strings ("layout": a convolution's "nchw" / "nhwc"). */
static const char *const STRING_ATTRS[] = {"op", "mode", "approximate", "layout", NULL};
/* Attribute keys whose values may be real numbers: a constant multiplier (scale's 1/sqrt(d))
 * or fill value, never costed. Every other number must be an integer. */
static const char *const REAL_ATTRS[] = {"value", NULL};

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
                       kt_err *e)
{
    const cJSON *ps = cJSON_GetObjectItemCaseSensitive(root, key);
    if (!ps)
        return 0;
    if (!cJSON_IsObject(ps))
        return err_set(e, KT_EINPUT, file, key, "must be an object of name -> integer");
    int n = cJSON_GetArraySize(ps);
    if (add) {
        g->param = arena_calloc(g->a, (size_t)(n + 1), sizeof *g->param);
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

static int load_attrs(const cJSON *aj, const char *file, const char *path, wl_graph *g,
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

static int load_ops(const cJSON *root, const char *file, wl_graph *g, wl_names *tm, kt_err *e)
{
    char op_path[8];
    const cJSON *ops = jsonx_member(root, "ops", cJSON_Array, "an array", file, "", op_path,
                                    sizeof op_path, e);
    if (!ops)
        return -1;
    int i = 0;
    const cJSON *oj;
    cJSON_ArrayForEach(oj, ops)
    {
        char p[192], q[192];
        err_path(p, sizeof p, "ops", NULL, i);
        if (!cJSON_IsObject(oj))
            return err_set(e, KT_EINPUT, file, p, "must be an object");
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
        if (load_attrs(cJSON_GetObjectItemCaseSensitive(oj, "attrs"), file, q, g, &at, &nat, e))
            return -1;
        kt_err sub;
        err_clear(&sub);
        if (wl_add_op(g, nm->valuestring, type, in, nin, out, nout, at, nat, &sub) < 0)
            return err_set(e, sub.code, file, p, "%s", sub.msg);
        i++;
    }
    return 0;
}

int wl_from_json(const cJSON *root, const char *file, const wl_set *sets, int nsets, int training,
                 arena *a, wl_graph *g, kt_err *e)
{
    wl_init(g, "", a);
    g->file = arena_strdup(a, file);
    if (!cJSON_IsObject(root))
        return err_set(e, KT_EINPUT, file, NULL, "top level must be an object");
    const cJSON *nm = cJSON_GetObjectItemCaseSensitive(root, "name");
    if (!nm)
        return err_set(e, KT_EINPUT, file, "name", "missing field");
    if (!cJSON_IsString(nm) || !nm->valuestring[0])
        return err_set(e, KT_EINPUT, file, "name", "must be a non-empty string");
    if (has_control(nm->valuestring))
        return err_set(e, KT_EINPUT, file, "name", "must not contain control characters");
    g->name = arena_strdup(a, nm->valuestring);
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
    if (load_params(root, "params", file, g, 1, e))
        return -1;
    if (training && load_params(root, "training_params", file, g, 0, e))
        return -1;
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
    if (load_tensors(root, file, g, &tm, e) || load_ops(root, file, g, &tm, e))
        return -1;
    return graph_check(g, file, e);
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

