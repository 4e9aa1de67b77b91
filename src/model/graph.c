/* graph: whole-graph facts built on the op table - the structural and shape check of a loaded
 * or derived graph. */
#include "graph.h"

#include <stdio.h>
#include <string.h>

#include "op.h"

int graph_check(const wl_graph *g, const char *file, kt_err *e)
{
    if (!file)
        file = g->file;
    arena tmp = {0};
    int rc = -1;
    int *made = arena_calloc(&tmp, (size_t)(g->ntensor + 1), sizeof(int)); /* producer+1 */
    wl_names om;
    if (!made || wl_names_init(&om, g->nop, &tmp)) {
        err_set(e, KT_EINTERNAL, file, NULL, "out of memory");
        goto done;
    }
    for (int i = 0; i < g->nop; i++) {
        const wl_op *o = &g->op[i];
        char p[192], q[192];
        p[0] = 0;
#define OP_PATH() err_path(p, sizeof p, "ops", NULL, i)
        if (wl_names_find(&om, g, o->name, i, 1) >= 0) {
            OP_PATH();
            err_path(q, sizeof q, p, "name", 0);
            err_set(e, KT_EINPUT, file, q, "duplicate op name \"%s\"", o->name);
            goto done;
        }
        for (int j = 0; j < o->nin; j++) {
            const wl_tensor *t = &g->t[o->in[j]];
            if (t->kind != TK_INPUT && t->kind != TK_WEIGHT && !made[o->in[j]]) {
                char r[192]; /* a separate buffer: err_path(q, .., q, ..) overlaps */
                OP_PATH();
                err_path(r, sizeof r, p, "inputs", 0);
                err_path(q, sizeof q, r, NULL, j);
                err_set(e, KT_EINPUT, file, q,
                        "tensor \"%s\" is neither an input/weight nor produced by an earlier op",
                        t->name);
                goto done;
            }
        }
        for (int j = 0; j < o->nout; j++) {
            const wl_tensor *t = &g->t[o->out[j]];
            char r[192];
            int bad_out = t->kind == TK_INPUT || t->kind == TK_WEIGHT || made[o->out[j]];
            for (int k = 0; k < o->nin; k++)
                bad_out |= o->in[k] == o->out[j];
            if (bad_out) {
                OP_PATH();
                err_path(r, sizeof r, p, "outputs", 0);
                err_path(q, sizeof q, r, NULL, j);
            }
            if (t->kind == TK_INPUT || t->kind == TK_WEIGHT) {
                err_set(e, KT_EINPUT, file, q, "cannot write %s \"%s\"",
                        t->kind == TK_INPUT ? "input" : "weight", t->name);
                goto done;
            }
            if (made[o->out[j]]) {
                err_set(e, KT_EINPUT, file, q, "tensor \"%s\" is already produced by op \"%s\"",
                        t->name, g->op[made[o->out[j]] - 1].name);
                goto done;
            }
            for (int k = 0; k < o->nin; k++)
                if (o->in[k] == o->out[j]) {
                    err_set(e, KT_EINPUT, file, q, "op reads the tensor it writes (cycle)");
                    goto done;
                }
            made[o->out[j]] = i + 1;
        }
        char msg[256], sub[64] = "";
        if (op_check(g, o, msg, sizeof msg, sub, sizeof sub)) {
            OP_PATH();
            if (sub[0])
                err_path(q, sizeof q, p, sub, 0);
            else
                snprintf(q, sizeof q, "%s", p);
            err_set(e, KT_EINPUT, file, q, "%s: %s", op_name(o->type), msg);
            goto done;
        }
#undef OP_PATH
    }
    for (int i = 0; i < g->ntensor; i++) {
        if (g->t[i].kind == TK_OUTPUT && !made[i]) {
            char p[192];
            err_path(p, sizeof p, "tensors", g->t[i].name, 0);
            err_set(e, KT_EINPUT, file, p, "output tensor is not produced by any op");
            goto done;
        }
    }
    if (g->nop == 0) {
        err_set(e, KT_EINPUT, file, "ops", "workload has no ops");
        goto done;
    }
    rc = 0;
done:
    arena_free(&tmp);
    return rc;
}

int graph_storage(const wl_graph *g, int t)
{
    for (;;) {
        int p = g->t[t].producer;
        if (p < 0 || p >= g->nop || g->op[p].nin < 1 || !op_is_free(g, &g->op[p]))
            return t;
        t = g->op[p].in[0];
    }
}

int *graph_storage_map(const wl_graph *g, arena *a)
{
    int *root = arena_calloc(a, (size_t)g->ntensor + 1, sizeof(int));
    if (!root)
        return NULL;
    for (int t = 0; t < g->ntensor; t++)
        root[t] = t;
    for (int i = 0; i < g->nop; i++) /* ops in order: a view's input already has its root */
        if (g->op[i].nin > 0 && g->op[i].nout > 0 && op_is_free(g, &g->op[i]))
            root[g->op[i].out[0]] = root[g->op[i].in[0]];
    return root;
}

int graph_producer(const wl_graph *g, int t)
{
    return g->t[graph_storage(g, t)].producer;
}

int graph_memory(const wl_graph *g, arena *a, graph_mem *m, kt_err *e)
{
    m->weight_bytes = m->peak_act_bytes = 0;
    arena_pos mark = arena_mark(a);
    int *root = graph_storage_map(g, a);
    int *last = arena_calloc(a, (size_t)g->ntensor + 1, sizeof(int));
    int64_t *delta = arena_calloc(a, (size_t)g->nop + 2, sizeof(int64_t));
    if (!root || !last || !delta) {
        arena_release(a, mark);
        return err_set(e, KT_EINTERNAL, g->file, NULL, "out of memory");
    }
    /* last reader of each storage; graph outputs stay to the end */
    for (int t = 0; t < g->ntensor; t++)
        last[t] = g->t[t].kind == TK_OUTPUT ? g->nop - 1 : -1;
    for (int i = 0; i < g->nop; i++)
        for (int k = 0; k < g->op[i].nin; k++) {
            int r = root[g->op[i].in[k]];
            if (last[r] < i)
                last[r] = i;
        }
    for (int t = 0; t < g->ntensor; t++) {
        const wl_tensor *x = &g->t[t];
        if (x->kind == TK_WEIGHT) {
            if (wl_add(m->weight_bytes, x->bytes, &m->weight_bytes))
                goto overflow;
            continue;
        }
        if (root[t] != t || (x->producer >= 0 && g->op[x->producer].phase == PH_OPT))
            continue; /* a view, or a weight updated in place */
        int from = x->producer >= 0 ? x->producer : 0;
        int to = last[t] >= from ? last[t] : from; /* written and never read: live at its op */
        if (wl_add(delta[from], x->bytes, &delta[from]) ||
            wl_add(delta[to + 1], -x->bytes, &delta[to + 1]))
            goto overflow;
    }
    int64_t live = 0;
    for (int i = 0; i < g->nop; i++) {
        if (wl_add(live, delta[i], &live))
            goto overflow;
        if (live > m->peak_act_bytes)
            m->peak_act_bytes = live;
    }
    arena_release(a, mark);
    return 0;
overflow:
    arena_release(a, mark);
    return err_set(e, KT_EINPUT, g->file, NULL, "memory footprint overflows 64 bits");
}
