/* l2: L2 residency between kernels by stack distance (bytes touched since a tensor's last use). */
#ifndef KT_L2_H
#define KT_L2_H
#include <stdint.h>

/** Residency state: a byte clock and each tensor's clock value at its last touch. */
typedef struct l2_state {
    double cap_bytes;
    double clock;   /* bytes moved through L2 so far */
    double *last;   /* per tensor: clock after its last touch, < 0 = never touched */
    int n;
} l2_state;

/** Initialise with capacity and a caller-owned array of n doubles. */
void l2_init(l2_state *s, double cap_bytes, double *buf, int n);
/** A kernel reads `bytes` of tensor t: returns the bytes that miss L2 (read from DRAM).
 *  The resident part is what LRU keeps: cap - (bytes touched since t's last touch), clamped to
 *  [0, bytes]. Touches t. */
int64_t l2_read(l2_state *s, int t, int64_t bytes);
/** A kernel writes `bytes` of tensor t (allocate-on-write: it becomes the most recent data). */
void l2_write(l2_state *s, int t, int64_t bytes);
/** Other traffic through L2 (e.g. operand re-reads) ages everything by `bytes`. */
void l2_advance(l2_state *s, double bytes);
/** Tensor `dst` aliases `src` (a view): same residency. */
void l2_alias(l2_state *s, int dst, int src);

/** Bytes a table read at random rows (a gather) fetches from DRAM while `stream_bytes` of other
 *  data pass through the same L2, by Che's approximation of LRU: the rows of a `table_bytes`
 *  table are read `gathered_bytes` in all, uniformly at random over the run; streamed lines are
 *  used once. With `partitions` L2 halves, each caching what its own SMs read (half the stream,
 *  half the row reads, every table row possibly in both), each half of `cap_bytes_per_partition`
 *  bytes finds the characteristic time t (a fraction of the run) from
 *      cap = (stream / P) t + table (1 - exp(-k t)),   k = gathered / (table P)
 *  a row read again hits when its half read it within t; the first read of a row in each half
 *  misses for the `cold_bytes` of the table not in L2 when the run starts. Result in
 *  [0, gathered_bytes]. */
double l2_gather_dram_bytes(double cap_bytes_per_partition, int partitions, double stream_bytes,
                            double table_bytes, double cold_bytes, double gathered_bytes);
/** The share of the table such a run keeps in each L2 half: 1 - exp(-k t) (1 when it fits). */
double l2_gather_resident_frac(double cap_bytes_per_partition, int partitions,
                               double stream_bytes, double table_bytes, double gathered_bytes);

#endif
