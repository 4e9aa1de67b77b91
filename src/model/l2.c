/* l2: L2 residency between kernels by stack distance. */
#include "l2.h"

#include <math.h>

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

/* Che's characteristic time t (fraction of the run) of one L2 half, with k row reads per row per
 * half; INFINITY when the half holds the stream and the whole table */
static double che_time(double cap, int parts, double stream, double table, double gathered,
                       double *k_out)
{
    double P = parts > 0 ? parts : 1;
    double k = table > 0 ? gathered / (table * P) : 0;
    *k_out = k;
    double s = stream / P;
    if (cap <= 0)
        return 0;
    if (s <= 0 && table <= cap)
        return INFINITY;
    /* f(t) = s t + table (1 - exp(-k t)) - cap rises from -cap; bracket, then bisect */
    double lo = 0, hi = 1;
    while (s * hi + table * -expm1(-k * hi) < cap) {
        hi *= 2;
        if (hi > 1e12)
            return INFINITY;
    }
    for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; i++) {
        double mid = 0.5 * (lo + hi);
        if (s * mid + table * -expm1(-k * mid) < cap)
            lo = mid;
        else
            hi = mid;
    }
    return 0.5 * (lo + hi);
}

double l2_gather_resident_frac(double cap_bytes_per_partition, int partitions,
                               double stream_bytes, double table_bytes, double gathered_bytes)
{
    double k;
    double t = che_time(cap_bytes_per_partition, partitions, stream_bytes, table_bytes,
                        gathered_bytes, &k);
    return isinf(t) ? 1.0 : -expm1(-k * t);
}

double l2_gather_dram_bytes(double cap_bytes_per_partition, int partitions, double stream_bytes,
                            double table_bytes, double cold_bytes, double gathered_bytes)
{
    if (gathered_bytes <= 0 || table_bytes <= 0)
        return 0;
    double P = partitions > 0 ? partitions : 1;
    double hit = l2_gather_resident_frac(cap_bytes_per_partition, partitions, stream_bytes,
                                         table_bytes, gathered_bytes);
    double cold = fmin(fmax(cold_bytes, 0), table_bytes);
    /* first reads: every row once per half (as many as there are reads), cold rows from DRAM */
    double first = fmin(gathered_bytes, P * table_bytes);
    double again = gathered_bytes - first;
    double dram = first * (cold / table_bytes) + again * (1.0 - hit);
    return fmin(dram, gathered_bytes);
}
