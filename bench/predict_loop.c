/* predict_loop: the in-process time of one prediction - a workload on a GPU under the chosen
 * execution models (kt_run, ILP mappings included), repeated after one warm-up run, with the
 * hardware file and the workload parsed once. The median and min-max of the repeats go to
 * stdout in microseconds. A benchmark for `make bench` and scripts/bench-genz.sh (the
 * comparison of one prediction with a peer tool's), not part of the product.
 *
 *   predict_loop HW.json WORKLOAD.json bsp|vf|kitsune|all inference|training REPEATS */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../src/arena.h"
#include "../src/io/hw_json.h"
#include "../src/io/wl_json.h"
#include "../src/model/run.h"

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    if (argc != 6) {
        fprintf(stderr, "usage: predict_loop HW.json WORKLOAD.json bsp|vf|kitsune|all "
                        "inference|training REPEATS\n");
        return 2;
    }
    int mask = !strcmp(argv[3], "bsp")       ? EXEC_BSP
             : !strcmp(argv[3], "vf")        ? EXEC_VF
             : !strcmp(argv[3], "kitsune")   ? EXEC_KITSUNE
             : !strcmp(argv[3], "all")       ? EXEC_BSP | EXEC_VF | EXEC_KITSUNE
                                             : 0;
    int training = !strcmp(argv[4], "training");
    int reps = atoi(argv[5]);
    if (!mask || (!training && strcmp(argv[4], "inference")) || reps < 1 || reps > 1000000) {
        fprintf(stderr, "predict_loop: bad arguments\n");
        return 2;
    }
    /* the memory settings of kitsune's own main(): freed blocks stay with the process, so a
     * repetition does not fault in again the pages the previous one gave back to the kernel
     * (without them, 13% of a Llama prediction here was page faults, brk and munmap) */
    (void)mallopt(M_MMAP_THRESHOLD, 64 << 20);
    (void)mallopt(M_TRIM_THRESHOLD, 256 << 20);
    kt_err e;
    err_clear(&e);
    hw_gpu hw;
    arena a = {0};
    wl_graph g;
    if (hw_load(argv[1], &hw, &e) || wl_load(argv[2], NULL, 0, training, &a, &g, &e)) {
        fprintf(stderr, "predict_loop: %s\n", e.msg);
        return 2;
    }
    kt_opts o;
    kt_opts_default(&o);
    o.exec_mask = mask;
    o.training = training;
    double *t = malloc((size_t)reps * sizeof *t);
    arena run = {0};
    if (!t)
        return 1;
    for (int k = -1; k < reps; k++) { /* one warm-up run */
        arena_pos m = arena_mark(&run);
        kt_run_result rr;
        double t0 = now_s();
        if (kt_run(&hw, &g, &o, &run, &rr, &e)) {
            fprintf(stderr, "predict_loop: %s\n", e.msg);
            return 1;
        }
        double t1 = now_s();
        if (k >= 0)
            t[k] = t1 - t0;
        arena_release(&run, m);
    }
    qsort(t, (size_t)reps, sizeof *t, cmp);
    printf("%.3f %.3f %.3f\n", 1e6 * t[reps / 2], 1e6 * t[0], 1e6 * t[reps - 1]);
    free(t);
    arena_free(&run);
    arena_free(&a);
    return 0;
}
