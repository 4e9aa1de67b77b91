/* sched: the schedule core - the kernel walk with L2 residency that bsp, vf and the kitsune
 * rest pass share. A kernel's DRAM reads are the bytes of its external inputs that are no longer
 * in L2 (stack distance, l2.c) plus its own operand re-reads (cost.c); every output is written to
 * DRAM once (write-back of a tensor the next kernel may still find in L2). */
#include "sched.h"

/* What re-evaluates a kernel at another clock: the same work, SMs, misses and writes. */
typedef struct sched_kernel_arg {
    const hw_gpu *hw;
    const op_work *w;
    int sms;
    cost_ctx c;
    int64_t miss_bytes, write_bytes;
} sched_kernel_arg;

static int kernel_reeval(const void *arg, double clock_MHz, arena *a, cost_result *out)
{
    (void)a;
    const sched_kernel_arg *k = arg;
    cost_ctx c = k->c;
    c.clock_MHz = clock_MHz;
    cost_eval(k->hw, k->w, k->sms, &c, k->miss_bytes, k->write_bytes, out);
    return 0;
}

int sched_kernel_item(const hw_gpu *hw, const op_work *w, int sms, const cost_ctx *c,
                      int64_t miss_bytes, int64_t write_bytes, arena *a, kt_item *it)
{
    sched_kernel_arg *k = arena_calloc(a, 1, sizeof *k);
    if (!k)
        return -1;
    *k = (sched_kernel_arg){hw, w, sms, *c, miss_bytes, write_bytes};
    cost_eval(hw, w, sms, c, miss_bytes, write_bytes, &it->c);
    it->reeval = kernel_reeval;
    it->reeval_arg = k;
    return 0;
}

int sched_begin(sched_walk *s, const hw_gpu *hw, const wl_graph *g, const cost_ctx *c, arena *a)
{
    double *last = arena_calloc(a, (size_t)g->ntensor + 1, sizeof(double));
    if (!last)
        return -1;
    s->hw = hw;
    s->g = g;
    s->c = *c;
    s->a = a;
    l2_init(&s->l2, hw_l2_bytes(hw), last, g->ntensor);
    return 0;
}

int64_t sched_read(sched_walk *s, int t, int64_t bytes)
{
    return l2_read(&s->l2, t, bytes);
}

void sched_write(sched_walk *s, int t, int64_t bytes)
{
    l2_write(&s->l2, t, bytes);
}

int sched_kernel(sched_walk *s, const op_work *w, int sms, int64_t miss_bytes, int64_t write_bytes,
                 kt_item *it)
{
    if (sched_kernel_item(s->hw, w, sms, &s->c, miss_bytes, write_bytes, s->a, it))
        return -1;
    l2_advance(&s->l2, (double)it->c.dram_read_bytes - (double)miss_bytes);
    return 0;
}

/* Bytes op i writes to output j: the work's bytes for one output, else the tensor's. */
static int64_t out_bytes(const wl_graph *g, const wl_op *o, const op_work *w, int j)
{
    return o->nout == 1 ? w->out_bytes : g->t[o->out[j]].bytes;
}

int sched_op(sched_walk *s, int i, const op_work *w, kt_item *it, int64_t *miss)
{
    const wl_graph *g = s->g;
    const wl_op *o = &g->op[i];
    if (w->kind == OPK_FREE) {
        l2_alias(&s->l2, o->out[0], o->in[0]);
        cost_eval(s->hw, w, s->hw->sm_count, &s->c, 0, 0, &it->c);
        return 0;
    }
    int64_t rd = 0;
    for (int j = 0; j < o->nin; j++)
        if (w->in_bytes[j] > 0) {
            int64_t m = sched_read(s, o->in[j], w->in_bytes[j]);
            if (miss)
                miss[j] = m;
            rd = kt_count_add(rd, m);
        }
    if (sched_kernel(s, w, s->hw->sm_count, rd, w->out_bytes, it))
        return -1;
    for (int j = 0; j < o->nout; j++)
        sched_write(s, o->out[j], out_bytes(g, o, w, j));
    return 0;
}

void sched_skip(sched_walk *s, int i)
{
    const wl_op *o = &s->g->op[i];
    for (int j = 0; j < o->nout; j++)
        sched_write(s, o->out[j], s->g->t[o->out[j]].bytes);
}
