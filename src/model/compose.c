/* compose: whole models from blocks - repetitions of a block graph appended under unique names,
 * and the per-block breakdown of a result. */
#include "compose.h"

#include <stdio.h>
#include <string.h>

#include "cost.h"
#include "op.h"

/* Longest generated name ("layer31.gate_proj_w"). */
enum { COMPOSE_NAME_MAX = 512 };

int compose_block(wl_graph *g, const char *name, const char *repeat, int index, kt_err *e)
{
    if (g->nblock >= g->cap_block) {
        int nc = g->cap_block ? 2 * g->cap_block : 16;
        wl_block *b = arena_calloc(g->a, (size_t)nc, sizeof *b);
        if (!b)
            return err_set(e, KT_EINTERNAL, g->file, NULL, "out of memory");
        if (g->nblock)
            memcpy(b, g->block, (size_t)g->nblock * sizeof *b);
        g->block = b;
        g->cap_block = nc;
    }
    wl_block *b = &g->block[g->nblock];
    b->name = arena_strdup(g->a, name);
    b->repeat = repeat ? arena_strdup(g->a, repeat) : NULL;
    b->index = index;
    if (!b->name || (repeat && !b->repeat))
        return err_set(e, KT_EINTERNAL, g->file, NULL, "out of memory");
    return g->nblock++;
}

/* "<prefix>.<name>" into buf; -1 when it does not fit. */
static int qualify(char *buf, size_t n, const char *prefix, const char *name)
{
    int k = snprintf(buf, n, "%s.%s", prefix, name);
    return k < 0 || (size_t)k >= n ? -1 : 0;
}

int compose_append(wl_graph *g, const wl_graph *blk, const compose_repeat *r, wl_names *tm,
                   kt_err *e)
{
    if (r->count < 1 || r->count > COMPOSE_MAX_COUNT)
        return err_set(e, KT_EINPUT, g->file, NULL, "repeat count %d out of range 1..%d",
                       r->count, COMPOSE_MAX_COUNT);
    int nt = blk->ntensor;
    int maxio = 1;
    for (int j = 0; j < blk->nop; j++) {
        if (blk->op[j].nin > maxio)
            maxio = blk->op[j].nin;
        if (blk->op[j].nout > maxio)
            maxio = blk->op[j].nout;
    }
    /* map[t]: the model tensor block tensor t is in this repetition; prev: in the last one */
    int *map = arena_calloc(g->a, (size_t)nt + 1, sizeof(int));
    int *prev = arena_calloc(g->a, (size_t)nt + 1, sizeof(int));
    unsigned char *carried = arena_calloc(g->a, (size_t)nt + 1, 1);
    int *in = arena_calloc(g->a, (size_t)maxio, sizeof(int));
    int *out = arena_calloc(g->a, (size_t)maxio, sizeof(int));
    if (!map || !prev || !carried || !in || !out)
        return err_set(e, KT_EINTERNAL, g->file, NULL, "out of memory");
    for (int t = 0; t < nt; t++)
        if (r->carry[t] >= 0)
            carried[r->carry[t]] = 1;
    char prefix[COMPOSE_NAME_MAX], name[COMPOSE_NAME_MAX];
    for (int i = 0; i < r->count; i++) {
        int last = i == r->count - 1;
        snprintf(prefix, sizeof prefix, "%.*s%d", COMPOSE_NAME_MAX - 16, r->name, i);
        int b = compose_block(g, prefix, r->name, i, e);
        if (b < 0)
            return -1;
        for (int t = 0; t < nt; t++) {
            const wl_tensor *bt = &blk->t[t];
            if (i > 0 && r->carry[t] >= 0) {
                map[t] = prev[r->carry[t]];
                continue;
            }
            if (r->bind_in[t] >= 0) {
                map[t] = r->bind_in[t];
                continue;
            }
            if (last && r->bind_out[t] >= 0) {
                map[t] = r->bind_out[t];
                continue;
            }
            if (qualify(name, sizeof name, prefix, bt->name))
                return err_set(e, KT_EINPUT, g->file, NULL, "tensor name \"%s.%.64s...\" too long",
                               prefix, bt->name);
            wl_kind kind = bt->kind == TK_OUTPUT && carried[t] && !last ? TK_INTER : bt->kind;
            kt_err sub;
            err_clear(&sub);
            int k = wl_add_tensor(g, name, bt->ndim, bt->dim, bt->dt, kind, &sub);
            if (k < 0)
                return err_set(e, sub.code, g->file, NULL, "%s", sub.msg);
            g->t[k].requires_grad = bt->requires_grad;
            if (tm && wl_names_find(tm, g, name, k, 0) >= 0)
                return err_set(e, KT_EINPUT, g->file, NULL,
                               "tensor \"%s\" of the repetition is also a tensor of the model",
                               name);
            map[t] = k;
        }
        for (int j = 0; j < blk->nop; j++) {
            const wl_op *o = &blk->op[j];
            for (int k = 0; k < o->nin; k++)
                in[k] = map[o->in[k]];
            for (int k = 0; k < o->nout; k++)
                out[k] = map[o->out[k]];
            if (qualify(name, sizeof name, prefix, o->name))
                return err_set(e, KT_EINPUT, g->file, NULL, "op name \"%s.%.64s...\" too long",
                               prefix, o->name);
            kt_err sub;
            err_clear(&sub);
            int k = wl_add_op(g, name, o->type, in, o->nin, out, o->nout, o->attr, o->nattr, &sub);
            if (k < 0)
                return err_set(e, sub.code, g->file, NULL, "%s", sub.msg);
            g->op[k].phase = o->phase;
            g->op[k].block = b;
        }
        int *sw = prev;
        prev = map;
        map = sw;
    }
    return 0;
}

/* Stand-alone time of op i (compose_breakdown's weight): alone on all SMs, operands from DRAM,
 * without the launch gap. */
static double standalone_s(const hw_gpu *hw, const op_work *w)
{
    if (w->kind == OPK_FREE)
        return 0;
    cost_ctx c = {.clock_MHz = hw->clock_MHz, .graph_launch = 1};
    int64_t rd = 0;
    for (int j = 0; j < w->nin && j < OP_MAXIN; j++)
        rd += w->in_bytes[j];
    cost_result cr;
    cost_eval(hw, w, hw->sm_count, &c, rd, w->out_bytes, &cr);
    double t = cr.time_s - cr.launch_s;
    return t > 0 ? t : 0;
}

int compose_breakdown(const hw_gpu *hw, const wl_graph *g, const kt_result *r, arena *a,
                      compose_share *out, kt_err *e)
{
    int nb = g->nblock;
    memset(out, 0, (size_t)nb * sizeof *out);
    if (!nb)
        return 0;
    arena_pos mark = arena_mark(a);
    op_work *w = op_works(g, a, e);
    double *part = arena_calloc(a, (size_t)nb, sizeof *part);
    int *seen = arena_calloc(a, (size_t)nb, sizeof *seen);
    if (!w || !part || !seen) {
        arena_release(a, mark);
        return w ? err_set(e, KT_EINTERNAL, g->file, NULL, "out of memory") : -1;
    }
    for (int i = 0; i < g->nop; i++) {
        int b = g->op[i].block;
        if (b < 0 || b >= nb)
            continue;
        out[b].ops++;
        out[b].flops += w[i].flops_tensor + w[i].flops_simt;
    }
    for (int k = 0; k < r->nitems; k++) {
        const kt_item *it = &r->items[k];
        int first = -1, spans = 0;
        for (int j = 0; j < it->nops; j++) {
            int b = g->op[it->ops[j]].block;
            if (b < 0 || b >= nb)
                continue;
            if (first < 0)
                first = b;
            else if (b != first)
                spans = 1;
        }
        if (first < 0)
            continue;
        int kernel = it->c.bound != BOUND_NONE; /* views launch nothing (result_sum) */
        if (!spans) {
            compose_share *s = &out[first];
            s->kernels += kernel;
            s->time_s += it->c.time_s;
            s->energy_J += it->energy_J;
            s->dram_read_bytes += (double)it->c.dram_read_bytes;
            s->dram_write_bytes += (double)it->c.dram_write_bytes;
            continue;
        }
        /* an item across blocks: each block's part of its ops' stand-alone time */
        double sum = 0;
        int nops = 0;
        for (int j = 0; j < it->nops; j++) {
            int op = it->ops[j], b = g->op[op].block;
            if (b < 0 || b >= nb)
                continue;
            double t = standalone_s(hw, &w[op]);
            part[b] += t;
            sum += t;
            nops++;
        }
        if (!(sum > 0)) { /* only views: by op count */
            for (int j = 0; j < it->nops; j++) {
                int b = g->op[it->ops[j]].block;
                if (b >= 0 && b < nb)
                    part[b] = 0;
            }
            for (int j = 0; j < it->nops; j++) {
                int b = g->op[it->ops[j]].block;
                if (b >= 0 && b < nb)
                    part[b] += 1;
            }
            sum = nops;
        }
        for (int j = 0; j < it->nops; j++) {
            int b = g->op[it->ops[j]].block;
            if (b < 0 || b >= nb || seen[b] == k + 1)
                continue;
            seen[b] = k + 1;
            double f = part[b] / sum;
            compose_share *s = &out[b];
            s->shared += kernel;
            s->time_s += f * it->c.time_s;
            s->energy_J += f * it->energy_J;
            s->dram_read_bytes += f * (double)it->c.dram_read_bytes;
            s->dram_write_bytes += f * (double)it->c.dram_write_bytes;
        }
        for (int j = 0; j < it->nops; j++) {
            int b = g->op[it->ops[j]].block;
            if (b >= 0 && b < nb)
                part[b] = 0;
        }
    }
    arena_release(a, mark);
    return 0;
}
