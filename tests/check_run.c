/* check_run: a run in three parts (kt_prepare, kt_run_times, kt_run_power) gives what kt_run
 * gives, and the part a sweep shares between points (the runs before energy) reads no energy,
 * power or DVFS field - the fields hw_same_timing ignores. */
#include <math.h>

#include "ktest.h"

/* 1 for the JSON paths whose fields only energy and power accounting read, by the hw format's
 * own sections (docs/formats.md): energy.*, power.*, dvfs.* and clock_min_MHz (the lowest DVFS
 * clock). */
static int energy_path(const char *path)
{
    return !strncmp(path, "energy.", 7) || !strncmp(path, "power.", 6) ||
           !strncmp(path, "dvfs.", 5) || !strcmp(path, "clock_min_MHz");
}

/* Walk every numeric leaf under node (path: its JSON path), move it to another value that
 * still loads, and check that hw_same_timing says "same" exactly for the energy paths. Counts
 * the leaves checked per kind into n[0] (timing) and n[1] (energy). */
static void walk(cJSON *root, cJSON *node, char *path, size_t len, const hw_gpu *base, int n[2])
{
    if (cJSON_IsObject(node) || cJSON_IsArray(node)) {
        int i = 0;
        for (cJSON *c = node->child; c; c = c->next, i++) {
            size_t at = strlen(path);
            if (cJSON_IsObject(node))
                snprintf(path + at, len - at, "%s%s", at ? "." : "", c->string);
            else
                snprintf(path + at, len - at, "[%d]", i);
            walk(root, c, path, len, base, n);
            path[at] = 0;
        }
        return;
    }
    if (!cJSON_IsNumber(node))
        return;
    double v = node->valuedouble;
    /* other values within each field's checked range: a little up, a little down */
    const double f[] = {1.01, 0.99, 1.25, 0.8};
    int loaded = 0;
    for (size_t k = 0; k < sizeof f / sizeof f[0] && !loaded; k++) {
        double w = v != 0 ? v * f[k] : 0.5;
        if (node->valueint == v && fabs(v) >= 1 && fabs(v) < 1e9) /* integer fields */
            w = v + (k % 2 ? -1 : 1);
        cJSON_SetNumberValue(node, w);
        hw_gpu moved;
        kt_err e;
        if (hw_from_json(root, "h200", &moved, &e) == 0) {
            loaded = 1;
            int same = hw_same_timing(base, &moved);
            ck_assert_msg(same == energy_path(path), "%s moved %g -> %g: hw_same_timing %d", path,
                          v, w, same);
            n[energy_path(path)]++;
        }
    }
    cJSON_SetNumberValue(node, v);
    ck_assert_msg(loaded, "%s: no nearby value loads", path);
}

START_TEST(test_same_timing_fields)
{
    cJSON *t = kt_test_hw_tree("h200");
    hw_gpu base;
    kt_err e;
    ck_assert_msg(hw_from_json(t, "h200", &base, &e) == 0, "%s", e.msg);
    char path[512] = "";
    int n[2] = {0, 0};
    walk(t, t, path, sizeof path, &base, n);
    /* h200.json holds (today) 115 numeric leaves, 16 of them energy, power and DVFS (tensor
     * pJ/FLOP for 4 dtypes, 5 more energy figures, 3 power, 3 dvfs, clock_min_MHz): every one
     * was checked above; a field added later is checked the same way */
    ck_assert_int_ge(n[1], 16);
    ck_assert_int_ge(n[0], 115 - 16);
    cJSON_Delete(t);
}
END_TEST

/* hw with every field hw_same_timing ignores moved (struct fields, as a sweep's points may). */
static hw_gpu energy_moved(hw_gpu hw, double tdp_frac)
{
    snprintf(hw.name, sizeof hw.name, "%s", "moved");
    for (int d = 0; d < DT_COUNT; d++)
        hw.tensor_pJ_per_flop[d] *= 1.7;
    hw.simt_fp32_pJ_per_flop *= 1.3;
    hw.dram_pJ_per_byte *= 2.1;
    hw.l2_pJ_per_byte *= 0.6;
    hw.smem_pJ_per_byte *= 1.9;
    hw.rf_pJ_per_byte *= 0.7;
    hw.idle_W *= 1.2;
    hw.static_W *= 0.9;
    hw.tdp_W *= tdp_frac;
    hw.voltage_min_V *= 0.95;
    hw.voltage_max_V *= 1.05;
    hw.knee_clock_MHz *= 0.9;
    hw.clock_min_MHz *= 1.5;
    return hw;
}

/* The fields of a and b that a run's report shows, equal to the bit. */
static void same_result(const kt_result *a, const kt_result *b, const char *what)
{
    ck_assert_msg(a->exec_id == b->exec_id && a->time_s == b->time_s && a->flops == b->flops &&
                      a->dram_read_bytes == b->dram_read_bytes &&
                      a->dram_write_bytes == b->dram_write_bytes && a->l2_bytes == b->l2_bytes &&
                      a->kernels == b->kernels && a->ops_covered == b->ops_covered &&
                      a->nitems == b->nitems && a->energy_J == b->energy_J &&
                      a->avg_power_W == b->avg_power_W && a->clock_MHz == b->clock_MHz &&
                      a->e_dram_J == b->e_dram_J && a->over_cap_items == b->over_cap_items,
                  "%s %s: time %.9g/%.9g s, energy %.9g/%.9g J, clock %.6f/%.6f MHz", what,
                  a->exec, a->time_s, b->time_s, a->energy_J, b->energy_J, a->clock_MHz,
                  b->clock_MHz);
    for (int i = 0; i < a->nitems; i++)
        ck_assert_msg(a->items[i].c.time_s == b->items[i].c.time_s &&
                          a->items[i].energy_J == b->items[i].energy_J &&
                          a->items[i].clock_MHz == b->items[i].clock_MHz,
                      "%s %s item %d (%s)", what, a->exec, i, a->items[i].name);
}

/* The runs before energy on a hw and on the same hw with every energy, power and DVFS field
 * moved are the same runs, item by item (before energy: times, bytes, kernels). */
START_TEST(test_times_read_no_energy_field)
{
    static const char *const W[] = {"nerf", "mgn", "llama3-8b-ctx"};
    hw_gpu hw = kt_test_hw("h200"), moved = energy_moved(hw, 0.4);
    ck_assert(hw_same_timing(&hw, &moved));
    for (size_t w = 0; w < sizeof W / sizeof W[0]; w++)
        for (int training = 0; training <= 1; training++) {
            arena a = {0};
            const wl_graph *fwd, *g;
            kt_test_workload(W[w], training, &a, &fwd, &g);
            kt_opts o;
            kt_opts_default(&o);
            o.training = training;
            kt_prep p;
            kt_run_result t1, t2;
            kt_err e;
            ck_assert_msg(kt_prepare(fwd, &o, &a, &p, &e) == 0, "%s", e.msg);
            ck_assert_msg(kt_run_times(&hw, &p, &o, &a, &t1, &e) == 0, "%s", e.msg);
            ck_assert_msg(kt_run_times(&moved, &p, &o, &a, &t2, &e) == 0, "%s", e.msg);
            ck_assert_int_eq(t1.nres, 3);
            for (int i = 0; i < t1.nres; i++)
                same_result(&t1.res[i], &t2.res[i], W[w]);
            arena_free(&a);
        }
}
END_TEST

/* kt_run_power over runs before energy made on another hw (same timing fields), again and
 * again, equals a whole kt_run on its own hw: with the board limit binding (kernels re-clocked
 * through the shared runs' re-evaluations), under a power cap, and in the hw file's state, in
 * an order that goes back to an earlier hw (the shared items' energies are rewritten each time). */
START_TEST(test_power_over_shared_times)
{
    hw_gpu hw = kt_test_hw("h200");
    const hw_gpu v[] = {energy_moved(hw, 0.35), hw, energy_moved(hw, 0.35), energy_moved(hw, 1.0)};
    const double cap_W[] = {0, 300, 0, 250};
    static const char *const W[] = {"nerf", "mgn"};
    for (size_t w = 0; w < sizeof W / sizeof W[0]; w++) {
        arena a = {0};
        const wl_graph *fwd, *g;
        kt_test_workload(W[w], 1, &a, &fwd, &g);
        kt_opts o;
        kt_opts_default(&o);
        o.training = 1;
        kt_prep p;
        kt_run_result t;
        kt_err e;
        ck_assert_msg(kt_prepare(fwd, &o, &a, &p, &e) == 0, "%s", e.msg);
        ck_assert_msg(kt_run_times(&hw, &p, &o, &a, &t, &e) == 0, "%s", e.msg);
        int slowed = 0;
        for (size_t k = 0; k < sizeof v / sizeof v[0]; k++) {
            o.power_cap_W = cap_W[k];
            kt_run_result shared, fresh;
            ck_assert_msg(kt_run_power(&v[k], &o, &t, &a, &shared, &e) == 0, "%s", e.msg);
            ck_assert_msg(kt_run(&v[k], fwd, &o, &a, &fresh, &e) == 0, "%s", e.msg);
            ck_assert_int_eq(shared.nres, fresh.nres);
            for (int i = 0; i < fresh.nres; i++) {
                same_result(&shared.res[i], &fresh.res[i], W[w]);
                ck_assert_ptr_eq(shared.by[shared.res[i].exec_id], &shared.res[i]);
                if (o.power_cap_W > 0) {
                    same_result(&shared.capped[i], &fresh.capped[i], W[w]);
                    ck_assert_ptr_eq(shared.capped_by[shared.res[i].exec_id], &shared.capped[i]);
                }
                slowed += fresh.res[i].clock_MHz < hw.clock_MHz;
            }
        }
        ck_assert_msg(slowed > 0, "%s: the board limit never bound", W[w]);
        arena_free(&a);
    }
}
END_TEST

static Suite *run_suite(void)
{
    Suite *s = suite_create("run");
    TCase *t = tcase_create("parts");
    tcase_set_timeout(t, 120);
    tcase_add_test(t, test_same_timing_fields);
    tcase_add_test(t, test_times_read_no_energy_field);
    tcase_add_test(t, test_power_over_shared_times);
    suite_add_tcase(s, t);
    return s;
}

KT_TEST_MAIN(run_suite)
