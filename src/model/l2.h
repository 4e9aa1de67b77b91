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

#endif
