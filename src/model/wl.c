/* wl: the workload graph as a data structure - tensors, ops, attributes, parameters, names.
 * io/wl_json.c reads it from JSON; graph.c checks it against the op table. */
#include "wl.h"

#include <stdio.h>
#include <string.h>

int wl_mul(int64_t a, int64_t b, int64_t *out)
{
    return __builtin_mul_overflow(a, b, out) ? -1 : 0;
}

int wl_add(int64_t a, int64_t b, int64_t *out)
{
    return __builtin_add_overflow(a, b, out) ? -1 : 0;
}

void wl_init(wl_graph *g, const char *name, arena *a)
{
    memset(g, 0, sizeof *g);
    g->a = a;
    g->name = arena_strdup(a, name);
    g->source = "";
    g->file = "";
}

/* A zeroed slot at the end of an arena array of n elements (capacity doubled when full); NULL
 * when memory runs out. */
static void *push(arena *a, void **arr, int *cap, int n, size_t elem)
{
    if (n >= *cap) {
        int nc = *cap ? *cap * 2 : 64;
        void *p = arena_calloc(a, (size_t)nc, elem);
        if (!p)
            return NULL;
        if (*arr)
            memcpy(p, *arr, (size_t)n * elem);
        *arr = p;
        *cap = nc;
    }
    void *slot = (char *)*arr + (size_t)n * elem;
    memset(slot, 0, elem);
    return slot;
}

int wl_add_tensor(wl_graph *g, const char *name, int ndim, const int64_t *dim, dtype dt,
                  wl_kind kind, kt_err *e)
{
    if (ndim < 0 || ndim > WL_MAXDIM)
        return err_set(e, KT_EINPUT, g->file, name, "at most %d dimensions", WL_MAXDIM);
    wl_tensor *t = push(g->a, (void **)&g->t, &g->cap_tensor, g->ntensor, sizeof *g->t);
    if (!t)
        return err_set(e, KT_EINTERNAL, g->file, NULL, "out of memory");
    t->name = arena_strdup(g->a, name);
    t->ndim = ndim;
    t->dt = dt;
    t->kind = kind;
    t->producer = -1;
    t->grad_of = -1;
    int64_t el = 1;
    for (int i = 0; i < ndim; i++) {
        t->dim[i] = dim[i];
        if (wl_mul(el, dim[i], &el))
            return err_set(e, KT_EINPUT, g->file, name, "element count overflows 64 bits");
    }
    t->elems = el;
    if (wl_mul(el, dt_bytes(dt), &t->bytes))
        return err_set(e, KT_EINPUT, g->file, name, "byte count overflows 64 bits");
    return g->ntensor++;
}

int wl_set_float_dtype(wl_graph *g, dtype d, kt_err *e)
{
    for (int i = 0; i < g->ntensor; i++) {
        wl_tensor *t = &g->t[i];
        if (!dt_is_float(t->dt))
            continue;
        t->dt = d;
        if (wl_mul(t->elems, dt_bytes(d), &t->bytes))
            return err_set(e, KT_EINPUT, g->file, t->name, "byte count overflows 64 bits");
    }
    return 0;
}

int wl_add_op(wl_graph *g, const char *name, int type, const int *in, int nin, const int *out,
              int nout, const wl_attr *attr, int nattr, kt_err *e)
{
    wl_op *o = push(g->a, (void **)&g->op, &g->cap_op, g->nop, sizeof *g->op);
    if (!o)
        return err_set(e, KT_EINTERNAL, g->file, NULL, "out of memory");
    o->name = arena_strdup(g->a, name);
    o->type = type;
    o->nin = nin;
    o->nout = nout;
    o->in = arena_calloc(g->a, (size_t)(nin ? nin : 1), sizeof(int));
    o->out = arena_calloc(g->a, (size_t)(nout ? nout : 1), sizeof(int));
    o->attr = arena_calloc(g->a, (size_t)(nattr ? nattr : 1), sizeof(wl_attr));
    o->fwd = -1;
    o->block = -1;
    if (!o->in || !o->out || !o->attr)
        return err_set(e, KT_EINTERNAL, g->file, NULL, "out of memory");
    if (nin)
        memcpy(o->in, in, (size_t)nin * sizeof(int));
    if (nout)
        memcpy(o->out, out, (size_t)nout * sizeof(int));
    for (int i = 0; i < nattr; i++) {
        o->attr[i] = attr[i];
        if (attr[i].type == WA_LIST && attr[i].nlist) {
            o->attr[i].list = arena_calloc(g->a, (size_t)attr[i].nlist, sizeof(int64_t));
            if (!o->attr[i].list)
                return err_set(e, KT_EINTERNAL, g->file, NULL, "out of memory");
            memcpy(o->attr[i].list, attr[i].list, (size_t)attr[i].nlist * sizeof(int64_t));
        }
    }
    o->nattr = nattr;
    for (int i = 0; i < nout; i++)
        if (out[i] >= 0 && out[i] < g->ntensor && g->t[out[i]].producer < 0)
            g->t[out[i]].producer = g->nop;
    return g->nop++;
}

int wl_find_tensor(const wl_graph *g, const char *name)
{
    for (int i = 0; i < g->ntensor; i++)
        if (!strcmp(g->t[i].name, name))
            return i;
    return -1;
}

int64_t wl_param(const wl_graph *g, const char *name, int64_t def)
{
    for (int i = 0; i < g->nparam; i++)
        if (!strcmp(g->param[i].name, name))
            return g->param[i].value;
    return def;
}

const wl_attr *wl_attr_get(const wl_op *o, const char *key)
{
    for (int i = 0; i < o->nattr; i++)
        if (!strcmp(o->attr[i].key, key))
            return &o->attr[i];
    return NULL;
}

int64_t wl_attr_int(const wl_op *o, const char *key, int64_t def)
{
    const wl_attr *a = wl_attr_get(o, key);
    return a && a->type == WA_INT ? a->ival : def;
}

const char *wl_attr_str(const wl_op *o, const char *key, const char *def)
{
    const wl_attr *a = wl_attr_get(o, key);
    return a && a->type == WA_STR ? a->sval : def;
}

/* ---- name hash (open addressing) ---- */

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

int wl_names_init(wl_names *m, int n, arena *a)
{
    m->cap = 16;
    while (m->cap < 2 * n + 16)
        m->cap *= 2;
    m->slot = arena_calloc(a, (size_t)m->cap, sizeof(int));
    return m->slot ? 0 : -1;
}

int wl_names_find(wl_names *m, const wl_graph *g, const char *name, int insert_idx, int ops)
{
    uint64_t h = hash_str(name) & (uint64_t)(m->cap - 1);
    for (;;) {
        int s = m->slot[h];
        if (!s) {
            if (insert_idx >= 0)
                m->slot[h] = insert_idx + 1;
            return -1;
        }
        const char *nm = ops ? g->op[s - 1].name : g->t[s - 1].name;
        if (!strcmp(nm, name))
            return s - 1;
        h = (h + 1) & (uint64_t)(m->cap - 1);
    }
}

