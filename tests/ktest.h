/* ktest: shared helpers for the check unit tests (one binary per module). */
#ifndef KT_KTEST_H
#define KT_KTEST_H
#include <check.h>
#include <stdlib.h>

#include "../src/arena.h"
#include "../src/err.h"

/* Path of the repository root, from the KITSUNE_HOME the runner exports (tests run from it). */
#define KT_ROOT (getenv("KITSUNE_HOME") ? getenv("KITSUNE_HOME") : ".")

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
