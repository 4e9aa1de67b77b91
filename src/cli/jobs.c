/* jobs: an ordered parallel map over worker threads (pthreads). Workers take the next item (or
 * the next run of items of one group) under a mutex, compute it outside, store the output in its
 * slot; the caller waits on a condition variable for the slot it needs next. The first failure
 * (lowest index) stops the workers and is reported once: items are taken in index order, so
 * every item before it is computed. */
#define _GNU_SOURCE /* sched_getaffinity: the CPUs this process may run on */
#include "jobs.h"

#include <pthread.h>
#include <sched.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

enum { JOBS_MAX_THREADS = 256 };

struct jobs {
    jobs_spec s;
    long long next;          /* next item a worker takes */
    char **slot;             /* outputs, NULL until done (or taken) */
    unsigned char *done;     /* item finished (its slot may hold NULL) */
    long long chunk;         /* most items one take holds (jobs_spec.same_group) */
    int failed, stop;
    long long fail_at;
    kt_err err;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t th[JOBS_MAX_THREADS];
    int nthreads;
    /* one thread: no worker; jobs_take computes the items up to the one it is asked for, in the
     * caller's thread (a worker's hand-off per item cost a sweep of cheap points a fifth of its
     * time in futex calls) */
    int in_caller;
    void *state;             /* in_caller: the one state, made at the first item */
};

static void fail(jobs *j, long long at, const kt_err *e)
{
    if (!j->failed || at < j->fail_at) {
        j->failed = 1;
        j->fail_at = at;
        j->err = *e;
    }
}

/* The outcome of item i (rc: its function's return): its output stored, or the failure noted. */
static void finish(jobs *j, long long i, int rc, char *out, const kt_err *e)
{
    if (rc)
        fail(j, i, e);
    else {
        j->slot[i] = out;
        j->done[i] = 1;
    }
}

static void *worker(void *arg)
{
    jobs *j = arg;
    kt_err e;
    err_clear(&e);
    void *state = NULL;
    if (j->s.state_new && !(state = j->s.state_new(j->s.ctx, &e))) {
        pthread_mutex_lock(&j->mu);
        fail(j, 0, &e);
        pthread_cond_broadcast(&j->cv);
        pthread_mutex_unlock(&j->mu);
        return NULL;
    }
    for (;;) {
        pthread_mutex_lock(&j->mu);
        long long i = j->next, end = i + 1;
        int stop = j->stop || j->failed || i >= j->s.n;
        if (!stop && j->s.same_group)
            while (end < j->s.n && end - i < j->chunk &&
                   j->s.same_group(j->s.ctx, j->s.items[end - 1], j->s.items[end]))
                end++;
        if (!stop)
            j->next = end;
        pthread_mutex_unlock(&j->mu);
        if (stop)
            break;
        for (; i < end; i++) {
            char *out = NULL;
            int rc = j->s.fn(j->s.ctx, state, j->s.items[i], &out, &e);
            pthread_mutex_lock(&j->mu);
            finish(j, i, rc, out, &e);
            pthread_cond_broadcast(&j->cv);
            /* the caller may still wait for this take's later items unless a failure came
             * before them */
            stop = j->stop || (j->failed && j->fail_at <= i + 1);
            pthread_mutex_unlock(&j->mu);
            if (stop)
                break;
        }
    }
    if (j->s.state_free && state)
        j->s.state_free(state);
    return NULL;
}

/* in_caller: compute the next item in the calling thread. */
static void step(jobs *j)
{
    kt_err e;
    err_clear(&e);
    long long i = j->next++;
    if (!j->state && j->s.state_new && !(j->state = j->s.state_new(j->s.ctx, &e))) {
        fail(j, i, &e);
        return;
    }
    char *out = NULL;
    int rc = j->s.fn(j->s.ctx, j->state, j->s.items[i], &out, &e);
    finish(j, i, rc, out, &e);
}

jobs *jobs_start(const jobs_spec *s, kt_err *e)
{
    jobs *j = calloc(1, sizeof *j);
    size_t n = (size_t)(s->n > 0 ? s->n : 1);
    if (j) {
        j->slot = calloc(n, sizeof *j->slot);
        j->done = calloc(n, 1);
    }
    if (!j || !j->slot || !j->done) {
        if (j) {
            free(j->slot);
            free(j->done);
        }
        free(j);
        err_set(e, KT_EINTERNAL, NULL, NULL, "out of memory");
        return NULL;
    }
    j->s = *s;
    pthread_mutex_init(&j->mu, NULL);
    pthread_cond_init(&j->cv, NULL);
    int nth = s->threads < 1 ? 1 : s->threads > JOBS_MAX_THREADS ? JOBS_MAX_THREADS : s->threads;
    if (nth > s->n)
        nth = s->n > 0 ? (int)s->n : 0;
    j->chunk = nth > 0 ? (s->n + 4LL * nth - 1) / (4LL * nth) : 1;
    if (nth == 1) {
        j->in_caller = 1;
        return j;
    }
    for (int i = 0; i < nth; i++) {
        if (pthread_create(&j->th[i], NULL, worker, j)) {
            kt_err te;
            err_set(&te, KT_EINTERNAL, NULL, NULL, "cannot start thread %d", i);
            pthread_mutex_lock(&j->mu);
            fail(j, 0, &te);
            pthread_mutex_unlock(&j->mu);
            break;
        }
        j->nthreads++;
    }
    return j;
}

int jobs_take(jobs *j, long long k, char **out)
{
    *out = NULL;
    if (j->in_caller)
        while (!j->done[k] && !j->failed && j->next <= k)
            step(j);
    pthread_mutex_lock(&j->mu);
    while (!j->done[k] && !(j->failed && j->fail_at <= k))
        pthread_cond_wait(&j->cv, &j->mu);
    int ok = j->done[k];
    if (ok) {
        *out = j->slot[k];
        j->slot[k] = NULL;
    }
    pthread_mutex_unlock(&j->mu);
    return ok ? 0 : -1;
}

long long jobs_failure(jobs *j, kt_err *e)
{
    pthread_mutex_lock(&j->mu);
    long long at = j->failed ? j->fail_at : -1;
    if (j->failed && e)
        *e = j->err;
    pthread_mutex_unlock(&j->mu);
    return at;
}

void jobs_end(jobs *j)
{
    if (!j)
        return;
    pthread_mutex_lock(&j->mu);
    j->stop = 1;
    pthread_mutex_unlock(&j->mu);
    for (int i = 0; i < j->nthreads; i++)
        pthread_join(j->th[i], NULL);
    if (j->s.state_free && j->state)
        j->s.state_free(j->state);
    for (long long i = 0; i < j->s.n; i++)
        free(j->slot[i]);
    free(j->slot);
    free(j->done);
    pthread_mutex_destroy(&j->mu);
    pthread_cond_destroy(&j->cv);
    free(j);
}

int jobs_cpus(void)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > JOBS_MAX_THREADS ? JOBS_MAX_THREADS : (int)n;
}
