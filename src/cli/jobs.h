/* jobs: an ordered parallel map - N items computed by T worker threads, their outputs taken by
 * the caller in item order (so the output does not depend on T, nor on how items are grouped). */
#ifndef KT_JOBS_H
#define KT_JOBS_H
#include "../err.h"

/** Compute item `item` with a worker's state: 0 and a malloc'd output (*out, may be NULL), or -1
 *  with e set. */
typedef int (*jobs_fn)(void *ctx, void *state, long long item, char **out, kt_err *e);

typedef struct jobs_spec {
    const long long *items;  /* the items, in the order they are taken */
    long long n;
    int threads;             /* 1..256; 1: no worker thread, jobs_take computes in the caller's */
    void *ctx;
    jobs_fn fn;
    void *(*state_new)(void *ctx, kt_err *e); /* per worker (NULL: none); NULL return = failure */
    void (*state_free)(void *state);
    /* NULL, or 1 when items a and b (values of items[]) are better computed by one worker in
     * a row (they share work through its state): a worker then takes, with the next item, the
     * items after it while this holds of each neighbouring pair, up to ceil(n / (4 x threads))
     * items (so that every thread still gets several takes). */
    int (*same_group)(void *ctx, long long a, long long b);
} jobs_spec;

typedef struct jobs jobs;

/** Start the workers. NULL with e set when nothing could be started. */
jobs *jobs_start(const jobs_spec *s, kt_err *e);
/** Wait for items[k] and take its output (caller frees). 0, or -1 when it or an earlier item
 *  failed (jobs_failure says which). */
int jobs_take(jobs *j, long long k, char **out);
/** Index of the first failed item (-1 if none) and its error. */
long long jobs_failure(jobs *j, kt_err *e);
/** Stop the workers (those running finish their item), join them and free everything. */
void jobs_end(jobs *j);
/** The CPUs this process may run on (its affinity mask: what taskset, a container's cpuset or a
 *  batch scheduler's allocation leaves, as nproc counts them), at least 1. */
int jobs_cpus(void);

#endif
