/* l2: L2 residency between kernels by stack distance. */
#include "l2.h"

void l2_init(l2_state *s, double cap_bytes, double *buf, int n)
{
    s->cap_bytes = cap_bytes;
    s->clock = 0;
    s->last = buf;
    s->n = n;
    for (int i = 0; i < n; i++)
        buf[i] = -1;
}

int64_t l2_read(l2_state *s, int t, int64_t bytes)
{
    double miss = (double)bytes;
    /* a tensor larger than L2 read in the order it was written thrashes LRU: no hits */
    if (s->last[t] >= 0 && (double)bytes <= s->cap_bytes) {
        double dist = s->clock - s->last[t];
        double resident = s->cap_bytes - dist;
        if (resident > (double)bytes)
            resident = (double)bytes;
        if (resident > 0)
            miss -= resident;
    }
    s->clock += (double)bytes;
    s->last[t] = s->clock;
    return (int64_t)miss;
}

void l2_write(l2_state *s, int t, int64_t bytes)
{
    s->clock += (double)bytes;
    s->last[t] = s->clock;
}

void l2_advance(l2_state *s, double bytes)
{
    s->clock += bytes;
}

void l2_alias(l2_state *s, int dst, int src)
{
    s->last[dst] = s->last[src];
}
