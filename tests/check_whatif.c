/* check_whatif: what-if hardware - more SMs, more L2 bandwidth or more DRAM bandwidth never make
 * any execution model slower on any shipped workload (inference and training), and the power
 * policy of a part with more SMs. The one allowance: kitsune's mapper stops within 1% of its
 * bound (ilp.c ILP_GAP_DONE), so a kitsune time may differ by that much between two parts. */
#include <dirent.h>
#include <stdio.h>
#include <string.h>

#include "../src/model/run.h"
#include "ktest.h"

/* The mapper's documented optimality tolerance (src/opt/ilp.c ILP_GAP_DONE). */
#define MAPPER_TOL 0.01

typedef struct variant {
    const char *what;
    double sm, l2, dram; /* multipliers */
} variant;

/* Times of every execution model for every workload and mode on hw (and its power policy);
 * times[w][mode][exec], names of the workloads into names. Returns the workload count. */
enum { MAXWL = 16 };
static int run_all(const hw_gpu *hw, int ref_sms, double times[MAXWL][2][EX_COUNT],
                   char names[MAXWL][64])
{
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/workloads", KT_ROOT);
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    struct dirent *de;
    char files[MAXWL][256];
    int n = 0;
    while ((de = readdir(d)) && n < MAXWL)
        if (kt_is_json(de->d_name))
            snprintf(files[n++], sizeof files[0], "%.255s", de->d_name);
    closedir(d);
    /* readdir order is not sorted: sort for stable indices */
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && strcmp(files[j - 1], files[j]) > 0; j--) {
            char t[256];
            memcpy(t, files[j], sizeof t);
            memcpy(files[j], files[j - 1], sizeof t);
            memcpy(files[j - 1], t, sizeof t);
        }
    for (int i = 0; i < n; i++) {
        snprintf(names[i], 64, "%.60s", files[i]);
        for (int training = 0; training <= 1; training++) {
            char path[2048];
            snprintf(path, sizeof path, "%.1000s/%.255s", dir, files[i]);
            arena a = {0};
            wl_graph g;
            kt_err e;
            err_clear(&e);
            for (int x = 0; x < EX_COUNT; x++)
                times[i][training][x] = -1;
            ck_assert_msg(wl_load(path, NULL, 0, training, &a, &g, &e) == 0, "%s", e.msg);
            kt_opts o;
            kt_opts_default(&o);
            o.training = training;
            o.power_policy = KT_POWER_SCALED;
            o.power_ref_sm_count = ref_sms;
            kt_run_result rr;
            if (kt_run(hw, &g, &o, &a, &rr, &e) == 0)
                for (int x = 0; x < EX_COUNT; x++)
                    if (rr.by[x])
                        times[i][training][x] = rr.by[x]->time_s;
            arena_free(&a);
        }
    }
    return n;
}

START_TEST(more_hardware_never_slower)
{
    hw_gpu base = kt_test_hw("a100");
    static double t0[MAXWL][2][EX_COUNT], t1[MAXWL][2][EX_COUNT];
    char names[MAXWL][64];
    int n = run_all(&base, base.sm_count, t0, names);
    ck_assert_int_ge(n, 5);
    static const variant V[] = {{"2x SMs (TDP scaled)", 2, 1, 1},
                                {"2x L2 bandwidth", 1, 2, 1},
                                {"2x DRAM bandwidth", 1, 1, 2},
                                {"2x SMs and 2x L2 bandwidth", 2, 2, 1}};
    int compared = 0;
    for (size_t v = 0; v < sizeof V / sizeof V[0]; v++) {
        hw_gpu h = base;
        h.sm_count = (int)(base.sm_count * V[v].sm);
        h.l2_bandwidth_GBps *= V[v].l2;
        h.dram_bandwidth_GBps *= V[v].dram;
        run_all(&h, base.sm_count, t1, names);
        for (int i = 0; i < n; i++)
            for (int m = 0; m < 2; m++)
                for (int x = 0; x < EX_COUNT; x++) {
                    if (t0[i][m][x] < 0 || t1[i][m][x] < 0)
                        continue;
                    double tol = x == EX_KITSUNE ? MAPPER_TOL : 1e-9;
                    ck_assert_msg(t1[i][m][x] <= t0[i][m][x] * (1 + tol),
                                  "%s %s %s with %s: %.3f us -> %.3f us", names[i],
                                  m ? "training" : "inference", kt_exec_name(x), V[v].what,
                                  t0[i][m][x] * 1e6, t1[i][m][x] * 1e6);
                    compared++;
                }
    }
    ck_assert_int_ge(compared, 4 * 5 * 2 * 3 - 4 * 3); /* Llama tok has no training graph */
}
END_TEST

/* A 2x part: scaled power doubles TDP, static and idle power; fixed keeps them; none lifts the
 * board limit. */
START_TEST(power_policies)
{
    hw_gpu base = kt_test_hw("a100");
    hw_gpu big = base;
    big.sm_count *= 2;
    kt_opts o;
    kt_opts_default(&o);
    ck_assert_int_eq(o.power_policy, KT_POWER_SCALED);
    o.power_ref_sm_count = base.sm_count;
    hw_gpu p = kt_power_hw(&big, &o);
    ck_assert_double_eq_tol(p.tdp_W, 2 * base.tdp_W, 1e-9);
    ck_assert_double_eq_tol(p.static_W, 2 * base.static_W, 1e-9);
    ck_assert_double_eq_tol(p.idle_W, 2 * base.idle_W, 1e-9);
    o.power_policy = KT_POWER_FIXED;
    p = kt_power_hw(&big, &o);
    ck_assert_double_eq(p.tdp_W, base.tdp_W);
    /* the file's own SM count: scaled is the file */
    o.power_policy = KT_POWER_SCALED;
    p = kt_power_hw(&base, &o);
    ck_assert_double_eq(p.tdp_W, base.tdp_W);
    ck_assert_int_eq(kt_power_policy_parse("none"), KT_POWER_NONE);
    ck_assert_int_eq(kt_power_policy_parse("scaled"), KT_POWER_SCALED);
    ck_assert_int_eq(kt_power_policy_parse("bogus"), -1);
    ck_assert_str_eq(kt_power_policy_name(KT_POWER_FIXED), "fixed");
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("whatif");
    TCase *t = tcase_create("whatif");
    tcase_set_timeout(t, 300);
    tcase_add_test(t, more_hardware_never_slower);
    tcase_add_test(t, power_policies);
    suite_add_tcase(s, t);
    return s;
}

KT_TEST_MAIN(suite)
