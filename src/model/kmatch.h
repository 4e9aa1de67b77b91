/* kmatch: measured kernels (a torch.profiler trace, an Nsight Compute export) against the
 * kernels of a result - kernel classes from names and from the op table, and an in-order
 * alignment of the two sequences. */
#ifndef KT_KMATCH_H
#define KT_KMATCH_H
#include "../arena.h"
#include "../err.h"
#include "op.h"
#include "result.h"
#include "wl.h"

/** "gemm", "attention", ... (op_kclass order); NULL outside 0..KC_COUNT-1. */
const char *km_class_name(int c);
/** Class of a measured kernel from its (demangled) name: the first rule of kmatch.c's table
 *  whose pattern the name contains (Triton kernels; cuBLAS/CUTLASS/cuDNN GEMMs; attention;
 *  norms; softmax; optimizers; index and sort kernels; pooling; reductions; copies; fills),
 *  else KC_ELEMENTWISE. */
int km_kernel_class(const char *name);
/** Class of a kernel of a result of g: the op-table class of its library op (GEMM, attention,
 *  convolution, sort, a scatter other than the embedding backward), else KC_GENERATED when
 *  `compiler` (vf under inductor: every other kernel is Triton code) or when it fuses two ops or
 *  more, else its op's class. -1 for an item that launches no kernel. */
int km_item_class(const wl_graph *g, const kt_item *it, int compiler);
/** Classes (bit 1 << class) of the further measured kernels a model kernel of class cls may take
 *  after its first (km_align): its own class, and for an op that eager PyTorch runs as kernels of
 *  several classes those too - RoPE under bsp (`eager`) is mul, neg, cat, mul, add, the cat a
 *  CatArrayBatchedCopy (copy). */
unsigned km_item_absorbs(const wl_graph *g, const kt_item *it, int cls, int eager);

/** Most cells (model kernels x measured kernels) km_align works through (one byte each). */
#define KM_MAX_CELLS ((long long)1 << 28)

/** Score of a match beyond the time it explains (km_align), nanoseconds: any pair of one class
 *  beats leaving both unmatched. */
#define KM_MATCH_BONUS_NS 1000
/** Most measured kernels one model kernel takes (km_align): 63, six bits of the walk-back. */
#define KM_MAX_RUN 63

/** Score of a measured kernel absorbed by the model kernel matched just before it (km_align),
 *  nanoseconds, beyond the time it explains: more than leaving it out. */
#define KM_ABSORB_NS 1

/** Align model kernels (classes mc[], times mt[] in seconds, nm of them, in order) with measured
 *  kernels (kc[], kt[], nk), monotone in both, maximizing the time explained. A model kernel owns
 *  a run of consecutive measured kernels: the first of its class, the others of a class in its
 *  mask mabs[i] (NULL: its own class; km_item_absorbs), at most KM_MAX_RUN; one library call
 *  launching several kernels (a split-K reduction, a norm's parameter gradient) or an op eager
 *  PyTorch decomposes. A run scores KM_MATCH_BONUS_NS, plus the shorter of the model time and the
 *  run's measured time, plus KM_ABSORB_NS per kernel after the first; every other kernel is
 *  unmatched. Among alignments that score the same, matches fall on the earliest measured kernels
 *  and runs are the shortest. item_of[j]: the model kernel measured kernel j belongs to, or -1.
 *  Pure; scratch from a. 0, or -1 with e set (more than KM_MAX_CELLS cells, out of memory). */
int km_align(const int *mc, const double *mt, const unsigned *mabs, int nm, const int *kc,
             const double *kt, int nk, arena *a, int *item_of, kt_err *e);

#endif
