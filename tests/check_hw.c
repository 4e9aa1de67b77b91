/* check_hw: hardware loader - every shipped file loads, bad fields name their JSON path. */
#include <math.h>
#include <dirent.h>
#include <stdio.h>
#include <string.h>

#include <stdlib.h>

#include "../src/io/jsonx.h"
#include "../src/model/hw.h"
#include "ktest.h"

/* The object holding a dotted path's leaf ("dram.bandwidth_GBps" -> the dram object). */
static cJSON *parent_of(cJSON *root, const char *dotted, const char **leaf)
{
    const char *dot = strrchr(dotted, '.');
    if (!dot) {
        *leaf = dotted;
        return root;
    }
    char head[64];
    snprintf(head, sizeof head, "%.*s", (int)(dot - dotted), dotted);
    *leaf = dot + 1;
    cJSON *p = cJSON_GetObjectItemCaseSensitive(root, head);
    ck_assert_msg(p != NULL, "no object %s", head);
    return p;
}

/* Replace the leaf at `dotted` (NULL item: delete it), convert, and expect path + message. */
static void expect_err(const char *dotted, cJSON *item, const char *want_path, const char *want_msg)
{
    cJSON *root = kt_test_hw_tree("a100");
    const char *leaf;
    cJSON *p = parent_of(root, dotted, &leaf);
    if (item)
        cJSON_ReplaceItemInObjectCaseSensitive(p, leaf, item);
    else
        cJSON_DeleteItemFromObjectCaseSensitive(p, leaf);
    hw_gpu g;
    kt_err e;
    err_clear(&e);
    int rc = hw_from_json(root, "x.json", &g, &e);
    cJSON_Delete(root);
    ck_assert_int_eq(rc, -1);
    ck_assert_int_eq(e.code, KT_EINPUT);
    ck_assert_str_eq(e.file, "x.json");
    ck_assert_str_eq(e.path, want_path);
    ck_assert_str_eq(e.msg, want_msg);
}

/* Count numeric leaves of obj (dotted prefix) that have no entry in `sources`. */
static int unsourced(const cJSON *obj, const char *prefix, const cJSON *sources, char *first,
                     size_t n)
{
    int bad = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, obj)
    {
        char path[160];
        snprintf(path, sizeof path, "%s%s%s", prefix, prefix[0] ? "." : "", it->string);
        if (!prefix[0] && (!strcmp(it->string, "sources") || !strcmp(it->string, "measured")))
            continue;
        if (cJSON_IsObject(it)) {
            bad += unsourced(it, path, sources, first, n);
        } else if (cJSON_IsNumber(it) && !cJSON_GetObjectItemCaseSensitive(sources, path)) {
            if (!bad && !first[0])
                snprintf(first, n, "%s", path);
            bad++;
        }
    }
    return bad;
}

START_TEST(test_every_shipped_file_loads)
{
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/hw", KT_ROOT);
    DIR *d = opendir(dir);
    ck_assert_msg(d != NULL, "cannot open %s", dir);
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (!kt_is_json(de->d_name))
            continue;
        size_t len = strlen(de->d_name);
        char path[2048];
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        hw_gpu g;
        kt_err e;
        err_clear(&e);
        ck_assert_msg(hw_load(path, &g, &e) == 0, "%s: %s: %s", path, e.path, e.msg);
        /* the file is named after the GPU, so --hw NAME finds it */
        ck_assert_msg(strlen(g.name) == len - 5 && !strncmp(g.name, de->d_name, len - 5),
                      "%s: name \"%s\" differs from the file name", path, g.name);
        ck_assert(g.sm_count > 0 && g.clock_MHz > 0 && g.dram_bandwidth_GBps > 0);
        ck_assert(g.l2_capacity_MiB > 0 && g.tensor_frac > 0 && g.tensor_frac <= 1);
        /* every numeric key carries a source */
        cJSON *root = jsonx_load(path, &e);
        ck_assert(root != NULL);
        const cJSON *src = cJSON_GetObjectItemCaseSensitive(root, "sources");
        char first[160] = "";
        int bad = src ? unsourced(root, "", src, first, sizeof first) : 1;
        cJSON_Delete(root);
        ck_assert_msg(bad == 0, "%s: %d numeric keys without sources (first: %s)", path, bad, first);
        n++;
    }
    closedir(d);
    ck_assert_int_ge(n, 6); /* a100, a100-80gb, v100, h100, h200, b200 */
}
END_TEST

START_TEST(test_a100_values)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/hw/a100.json", KT_ROOT);
    hw_gpu g;
    kt_err e;
    err_clear(&e);
    ck_assert_int_eq(hw_load(path, &g, &e), 0);
    /* the paper's A100: 108 SMs, 1.41 GHz, 40 MB L2, 1555 GB/s */
    ck_assert_int_eq(g.sm_count, 108);
    ck_assert_double_eq(g.clock_MHz, 1410);
    ck_assert_double_eq(g.l2_capacity_MiB, 40);
    ck_assert_double_eq(g.dram_bandwidth_GBps, 1555);
    /* bf16 peak: 2048 FLOP/clk/SM x 1.41e9 clk/s = 2.88768e12 FLOP/s per SM; x108 ~ 312 TFLOP/s */
    ck_assert_double_eq_tol(hw_tensor_flops_per_sm(&g, DT_BF16, 1410), 2048 * 1.41e9, 1);
    ck_assert_double_eq_tol(hw_tensor_flops_per_sm(&g, DT_BF16, 1410) * 108 / 312e12, 1.0, 0.001);
    ck_assert_double_eq(hw_tensor_flops_per_sm(&g, DT_FP8, 1410), 0); /* no fp8 on GA100 */
    ck_assert_double_eq_tol(hw_simt_flops_per_sm(&g, 705), 128 * 705e6, 1);
    ck_assert_double_eq(hw_l2_bytes(&g), 40.0 * 1024 * 1024);
    ck_assert_double_eq(hw_smem_bytes(&g), 164.0 * 1024);
}
END_TEST

/* The ring curve: linear between its points, its end values beyond them (by hand), and the
 * shipped H200 curve read from hw/h200.json's first and last points. */
START_TEST(test_ring_curve)
{
    hw_gpu g = kt_test_hw("h200");
    ck_assert_int_eq(g.queue_rings_pinned, 1);
    ck_assert_int_eq(kt_test_hw("h200-ktpipe").queue_rings_pinned, 0);
    ck_assert_int_ge(g.ring_reuse_n, 2);
    double rb, wb = hw_ring_evicted_frac(&g, 1e12, &rb);
    ck_assert_double_eq(wb, g.ring_written_back_frac[g.ring_reuse_n - 1]);
    g.ring_reuse_n = 3;
    const double x[3] = {10, 20, 40}, w[3] = {0, 0.5, 1}, r[3] = {0, 0.2, 1};
    for (int i = 0; i < 3; i++) {
        g.ring_reuse_footprint_MiB[i] = x[i];
        g.ring_written_back_frac[i] = w[i];
        g.ring_read_back_frac[i] = r[i];
    }
    const double MiB = 1048576.0;
    ck_assert_double_eq_tol(hw_ring_evicted_frac(&g, 15 * MiB, &rb), 0.25, 1e-15);
    ck_assert_double_eq_tol(rb, 0.1, 1e-15);
    ck_assert_double_eq_tol(hw_ring_evicted_frac(&g, 35 * MiB, &rb), 0.875, 1e-15);
    ck_assert_double_eq_tol(rb, 0.8, 1e-15);
    ck_assert_double_eq(hw_ring_evicted_frac(&g, 5 * MiB, &rb), 0);
    ck_assert_double_eq(rb, 0);
    ck_assert_double_eq(hw_ring_evicted_frac(&g, 80 * MiB, &rb), 1);
    ck_assert_double_eq(rb, 1);
    ck_assert_double_eq(hw_ring_evicted_frac(&g, NAN, &rb), 0);
    g.ring_reuse_n = 0;
    ck_assert_double_eq(hw_ring_evicted_frac(&g, 15 * MiB, &rb), 0);
    ck_assert_double_eq(rb, 0);
}
END_TEST

START_TEST(test_missing_field)
{
    expect_err("dram.bandwidth_GBps", NULL, "dram.bandwidth_GBps", "missing field");
    expect_err("sm_count", NULL, "sm_count", "missing field");
    expect_err("efficiency.l2_frac", NULL, "efficiency.l2_frac", "missing field");
    expect_err("tensor_flop_per_clk_per_sm", NULL, "tensor_flop_per_clk_per_sm", "missing field");
    /* a whole missing object reports its first field */
    expect_err("dram", NULL, "dram.capacity_GiB", "missing field");
}
END_TEST

START_TEST(test_wrong_type)
{
    expect_err("sm_count", cJSON_CreateString("108"), "sm_count", "must be a number");
    expect_err("l2.latency_ns", cJSON_CreateTrue(), "l2.latency_ns", "must be a number");
    expect_err("tensor_flop_per_clk_per_sm", cJSON_CreateNumber(5), "tensor_flop_per_clk_per_sm",
               "must be an object of dtype -> number");
    expect_err("name", cJSON_CreateNumber(1), "name", "must be a non-empty string");
}
END_TEST

START_TEST(test_out_of_range)
{
    expect_err("efficiency.tensor_frac", cJSON_CreateNumber(1.5), "efficiency.tensor_frac",
               "must be in [0.001, 1]");
    expect_err("efficiency.dram_frac", cJSON_CreateNumber(0), "efficiency.dram_frac",
               "must be in [0.001, 1]");
    expect_err("dram.bandwidth_GBps", cJSON_CreateNumber(-1555), "dram.bandwidth_GBps",
               "must be in [0.001, 1e+07]");
    expect_err("sm_count", cJSON_CreateNumber(0), "sm_count", "must be in [1, 100000]");
    expect_err("sm_count", cJSON_CreateNumber(107.5), "sm_count", "must be an integer");
    expect_err("clock_min_MHz", cJSON_CreateNumber(2000), "clock_min_MHz", "must be <= clock_MHz");
    expect_err("power.static_W", cJSON_CreateNumber(500), "power.static_W", "must be <= tdp_W");
}
END_TEST

START_TEST(test_dtype_table)
{
    cJSON *root = kt_test_hw_tree("a100");
    cJSON *t = cJSON_GetObjectItemCaseSensitive(root, "tensor_flop_per_clk_per_sm");
    cJSON_AddNumberToObject(t, "int8", 4096);
    hw_gpu g;
    kt_err e;
    err_clear(&e);
    ck_assert_int_eq(hw_from_json(root, "x.json", &g, &e), -1);
    ck_assert_str_eq(e.path, "tensor_flop_per_clk_per_sm.int8");
    ck_assert_str_eq(e.msg, "unknown floating-point dtype \"int8\"");
    cJSON_Delete(root);
    expect_err("tensor_flop_per_clk_per_sm.bf16", cJSON_CreateNumber(-1),
               "tensor_flop_per_clk_per_sm.bf16", "must be a number >= 0");
}
END_TEST

START_TEST(test_not_an_object)
{
    kt_err e;
    err_clear(&e);
    cJSON *arr = jsonx_parse("[1, 2]", "x.json", &e);
    ck_assert(arr != NULL);
    hw_gpu g;
    ck_assert_int_eq(hw_from_json(arr, "x.json", &g, &e), -1);
    ck_assert_str_eq(e.path, "");
    ck_assert_str_eq(e.msg, "top level must be an object");
    cJSON_Delete(arr);
    err_clear(&e);
    ck_assert_int_eq(hw_load("/nonexistent/hw.json", &g, &e), -1);
    ck_assert_str_eq(e.msg, "cannot open: No such file or directory");
}
END_TEST

/* "base": the child's keys override the base's, everything else is the base's; sources merge. */
START_TEST(test_base_inheritance)
{
    char path[1024], dir[1024];
    snprintf(path, sizeof path, "%s/tests/data/hw/h100-2xl2-big.json", KT_ROOT);
    snprintf(dir, sizeof dir, "%s/hw", KT_ROOT);
    hw_gpu g, h = kt_test_hw("h100");
    kt_err e;
    err_clear(&e);
    ck_assert_msg(hw_load_dir(path, dir, &g, &e) == 0, "%s: %s", e.path, e.msg);
    ck_assert_str_eq(g.name, "h100-2xl2-big");
    /* two levels: dram from the file, l2 bandwidth from its base, the rest from h100 */
    ck_assert_double_eq(g.dram_capacity_GiB, 160);
    ck_assert_double_eq(g.l2_bandwidth_GBps, 2 * h.l2_bandwidth_GBps);
    ck_assert_str_eq(g.description, "h100 with twice the L2 bandwidth (a design point for tests of \"base\")");
    g.dram_capacity_GiB = h.dram_capacity_GiB;
    g.l2_bandwidth_GBps = h.l2_bandwidth_GBps;
    memcpy(g.name, h.name, sizeof g.name);
    memcpy(g.description, h.description, sizeof g.description);
    ck_assert_msg(!memcmp(&g, &h, sizeof g), "fields other than the overridden ones differ from h100");
    /* sources: h100's entries, two replaced, no "base" key left */
    cJSON *root = hw_json_load(path, dir, &e);
    ck_assert(root != NULL);
    const cJSON *src = cJSON_GetObjectItemCaseSensitive(root, "sources");
    const cJSON *l2 = cJSON_GetObjectItemCaseSensitive(src, "l2.bandwidth_GBps");
    ck_assert(cJSON_IsString(l2));
    ck_assert_str_eq(l2->valuestring, "E: 2 x h100 (a hypothetical design point)");
    ck_assert(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(src, "sm_count")));
    ck_assert(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(src, "dram.capacity_GiB")));
    ck_assert_ptr_null(cJSON_GetObjectItemCaseSensitive(root, "base"));
    cJSON_Delete(root);
    /* without a hardware directory a named base is looked for beside the file only */
    snprintf(path, sizeof path, "%s/tests/data/hw/h100-2xl2.json", KT_ROOT);
    ck_assert_int_eq(hw_load(path, &g, &e), -1);
    ck_assert_str_eq(e.path, "base");
    ck_assert_str_eq(e.msg, "no hardware named \"h100\" beside this file");
}
END_TEST

/* Write dir/f<i>.json: {"base": "f<i+1>.json", ...}; the last one is a full copy of a100. */
static void write_chain(const char *dir, int n)
{
    char src[1024], dst[1024];
    snprintf(src, sizeof src, "%s/hw/a100.json", KT_ROOT);
    for (int i = 0; i < n; i++) {
        snprintf(dst, sizeof dst, "%s/f%d.json", dir, i);
        FILE *f = fopen(dst, "w");
        ck_assert(f != NULL);
        if (i < n - 1) {
            fprintf(f, "{\"base\": \"f%d.json\", \"name\": \"f%d\", \"sm_count\": %d}\n", i + 1, i,
                    100 + i);
        } else {
            FILE *a = fopen(src, "r");
            ck_assert(a != NULL);
            int ch;
            while ((ch = fgetc(a)) != EOF)
                fputc(ch, f);
            fclose(a);
        }
        fclose(f);
    }
}

/* At most HW_MAX_BASE_DEPTH bases below a file. */
START_TEST(test_base_depth)
{
    char dir[] = "/tmp/kt-hw-XXXXXX", path[1100];
    ck_assert(mkdtemp(dir) != NULL);
    hw_gpu g;
    kt_err e;
    err_clear(&e);
    write_chain(dir, HW_MAX_BASE_DEPTH + 1);
    snprintf(path, sizeof path, "%s/f0.json", dir);
    ck_assert_msg(hw_load(path, &g, &e) == 0, "%s: %s: %s", e.file, e.path, e.msg);
    ck_assert_int_eq(g.sm_count, 100); /* the nearest file wins */
    write_chain(dir, HW_MAX_BASE_DEPTH + 2);
    ck_assert_int_eq(hw_load(path, &g, &e), -1);
    ck_assert_str_eq(e.path, "base");
    ck_assert(strstr(e.msg, "more than 8 levels of \"base\"") != NULL);
    for (int i = 0; i < HW_MAX_BASE_DEPTH + 2; i++) {
        snprintf(path, sizeof path, "%s/f%d.json", dir, i);
        remove(path);
    }
    remove(dir);
}
END_TEST

/* Unknown keys are errors, with the closest known key suggested. */
START_TEST(test_unknown_key)
{
    char dir[] = "/tmp/kt-hw-XXXXXX", path[1100];
    ck_assert(mkdtemp(dir) != NULL);
    write_chain(dir, 1);
    snprintf(path, sizeof path, "%s/f0.json", dir);
    cJSON *root = hw_json_load(path, NULL, NULL);
    ck_assert(root != NULL);
    cJSON *sm = cJSON_GetObjectItemCaseSensitive(root, "sm");
    cJSON_AddNumberToObject(sm, "max_cta_per_sm", 16);
    char *text = cJSON_Print(root);
    FILE *f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
    free(text);
    cJSON_Delete(root);
    hw_gpu g;
    kt_err e;
    err_clear(&e);
    ck_assert_int_eq(hw_load(path, &g, &e), -1);
    ck_assert_str_eq(e.file, path);
    ck_assert_str_eq(e.path, "sm.max_cta_per_sm");
    ck_assert_str_eq(e.msg, "unknown key (did you mean \"sm.max_ctas_per_sm\"?)");
    remove(path);
    remove(dir);
}
END_TEST

static Suite *hw_suite(void)
{
    Suite *s = suite_create("hw");
    TCase *t = tcase_create("hw_load");
    tcase_add_test(t, test_every_shipped_file_loads);
    tcase_add_test(t, test_a100_values);
    tcase_add_test(t, test_ring_curve);
    tcase_add_test(t, test_base_inheritance);
    tcase_add_test(t, test_base_depth);
    tcase_add_test(t, test_unknown_key);
    suite_add_tcase(s, t);
    TCase *b = tcase_create("hw_from_json");
    tcase_add_test(b, test_missing_field);
    tcase_add_test(b, test_wrong_type);
    tcase_add_test(b, test_out_of_range);
    tcase_add_test(b, test_dtype_table);
    tcase_add_test(b, test_not_an_object);
    suite_add_tcase(s, b);
    return s;
}

KT_TEST_MAIN(hw_suite)
