/* check_api: the public header alone is enough to load, run and read a prediction. */
#include <string.h>

#include "../src/kitsune.h"
#include "ktest.h"

START_TEST(test_public_header)
{
    char hwp[1024], wlp[1024];
    snprintf(hwp, sizeof hwp, "%s/hw/a100.json", KT_ROOT);
    snprintf(wlp, sizeof wlp, "%s/workloads/nerf.json", KT_ROOT);
    hw_gpu hw;
    wl_graph g;
    arena a = {0};
    kt_err e;
    err_clear(&e);
    kt_opts o;
    kt_run_result r;
    ck_assert_int_eq(hw_load(hwp, &hw, &e), 0);
    ck_assert_int_eq(wl_load(wlp, NULL, 0, 0, &a, &g, &e), 0);
    kt_opts_default(&o);
    ck_assert_msg(kt_run(&hw, &g, &o, &a, &r, &e) == 0, "%s", e.msg);
    for (int x = 0; x < EX_COUNT; x++) {
        ck_assert_ptr_nonnull(r.by[x]);
        ck_assert(r.by[x]->time_s > 0);
        ck_assert_str_eq(r.by[x]->exec, kt_exec_name(x));
    }
    arena_free(&a);
}
END_TEST

static Suite *api_suite(void)
{
    Suite *s = suite_create("api");
    TCase *t = tcase_create("kitsune.h");
    tcase_add_test(t, test_public_header);
    suite_add_tcase(s, t);
    return s;
}

KT_TEST_MAIN(api_suite)
