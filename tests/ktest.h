/* ktest: shared helpers for the check unit tests (one binary per module). */
#ifndef KT_KTEST_H
#define KT_KTEST_H
#include <check.h>
#include <stdlib.h>

#include "../src/arena.h"
#include "../src/err.h"

/* Path of the repository root, from the KITSUNE_HOME the runner exports (tests run from it). */
#define KT_ROOT (getenv("KITSUNE_HOME") ? getenv("KITSUNE_HOME") : ".")

#include <stdio.h>
#include <string.h>

#include "../src/io/hw_json.h"
#include "../src/io/wl_json.h"
#include "../src/model/graph.h"
#include "../src/model/hw.h"
#include "../src/model/op.h"
#include "../src/model/run.h"

/* A shipped hardware description, hw/<name>.json under KT_ROOT; fails the test if it does not load. */
static inline hw_gpu kt_test_hw(const char *name)
{
    char path[1024];
    hw_gpu g;
    kt_err e;
    err_clear(&e);
    snprintf(path, sizeof path, "%s/hw/%s.json", KT_ROOT, name);
    ck_assert_msg(hw_load(path, &g, &e) == 0, "%s: %s", path, e.msg);
    return g;
}

/* A workload file under KT_ROOT (e.g. "tests/data/tiny.json") loaded for inference into g,
 * allocated in a; fails the test if it does not load. */
static inline void kt_test_wl(const char *rel, arena *a, wl_graph *g)
{
    char path[1024];
    kt_err e;
    err_clear(&e);
    snprintf(path, sizeof path, "%s/%s", KT_ROOT, rel);
    ck_assert_msg(wl_load(path, NULL, 0, 0, a, g, &e) == 0, "%s: %s", path, e.msg);
}

/* The JSON tree of hw/<name>.json under KT_ROOT (with its "base" chain merged); free it with
 * cJSON_Delete. Fails the test if it does not load. */
static inline cJSON *kt_test_hw_tree(const char *name)
{
    char path[1024];
    kt_err e;
    err_clear(&e);
    snprintf(path, sizeof path, "%s/hw/%s.json", KT_ROOT, name);
    cJSON *t = hw_json_load(path, NULL, &e);
    ck_assert_msg(t != NULL, "%s: %s", path, e.msg);
    return t;
}

/* workloads/<name>.json under KT_ROOT, allocated in a: its forward graph (*fwd), the graph of
 * the mode (*g: the training graph when training) and that graph's works. Fails the test if any
 * step fails. */
static inline const op_work *kt_test_workload(const char *name, int training, arena *a,
                                              const wl_graph **fwd, const wl_graph **g)
{
    char path[1024];
    kt_err e;
    err_clear(&e);
    snprintf(path, sizeof path, "%s/workloads/%s.json", KT_ROOT, name);
    wl_graph *f = arena_calloc(a, 1, sizeof *f);
    ck_assert_ptr_nonnull(f);
    ck_assert_msg(wl_load(path, NULL, 0, 0, a, f, &e) == 0, "%s: %s", path, e.msg);
    ck_assert_msg(kt_graph(f, training, 0, a, g, &e) == 0, "%s: %s", path, e.msg);
    const op_work *w = op_works(*g, a, &e);
    ck_assert_msg(w != NULL, "%s: %s", path, e.msg);
    *fwd = f;
    return w;
}

/* 1 for directory entries named *.json (with a non-empty stem). */
static inline int kt_is_json(const char *name)
{
    size_t n = strlen(name);
    return n >= 6 && !strcmp(name + n - 5, ".json");
}

/* main() for a test binary with one suite-building function. */
#define KT_TEST_MAIN(make_suite)                                   \
    int main(void)                                                 \
    {                                                              \
        SRunner *sr = srunner_create(make_suite());                \
        srunner_run_all(sr, CK_NORMAL);                            \
        int nf = srunner_ntests_failed(sr);                        \
        srunner_free(sr);                                          \
        return nf ? EXIT_FAILURE : EXIT_SUCCESS;                   \
    }

#endif
