/* check_trace: measured kernels read from the hand-written traces of tests/data/traces (Chrome
 * and ncu), the --range selection, and every malformed-input error with its place. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../src/io/trace.h"
#include "ktest.h"

static void load_ok(const char *rel, const char *range, arena *a, trace *t)
{
    char path[1024];
    kt_err e;
    err_clear(&e);
    snprintf(path, sizeof path, "%s/%s", KT_ROOT, rel);
    ck_assert_msg(trace_load(path, range, a, t, &e) == 0, "%s: %s: %s", rel, e.path, e.msg);
}

/* tiny-chrome.json: 7 kernels in time order 10, 4, 2, 8, 2, 3, 5 us (the norm kernel is first in
 * the file, last in time); a memset of 1 us and CPU events left out. */
START_TEST(test_chrome)
{
    arena a = {0};
    trace t;
    load_ok("tests/data/traces/tiny-chrome.json", NULL, &a, &t);
    ck_assert_int_eq(t.format, TRACE_CHROME);
    ck_assert_int_eq(t.n, 7);
    static const double us[7] = {10, 4, 2, 8, 2, 3, 5};
    for (int i = 0; i < 7; i++) {
        ck_assert_double_eq_tol(t.k[i].dur_s, us[i] * 1e-6, 1e-15);
        ck_assert_int_eq(t.k[i].dram_read_bytes, -1);
    }
    ck_assert_str_eq(t.k[0].name, "nvjet_sm90_tst_64x64_64x13_2x1_v_bz_bias_TNT");
    ck_assert_double_eq_tol(t.k[0].start_s, 100e-6, 1e-15);
    ck_assert_int_eq(t.other, 1);
    ck_assert_double_eq_tol(t.other_s, 1e-6, 1e-15);
    ck_assert_int_eq(t.has_bytes, 0);
    arena_free(&a);
}
END_TEST

/* tiny-steps.json: two ProfilerStep ranges; the second launched 5 kernels of 20, 8, 16, 6 and
 * 10 us (twice the first step's). */
START_TEST(test_range)
{
    arena a = {0};
    trace t;
    load_ok("tests/data/traces/tiny-steps.json", NULL, &a, &t);
    ck_assert_int_eq(t.n, 10);
    ck_assert_int_eq(t.steps, 2);
    load_ok("tests/data/traces/tiny-steps.json", "ProfilerStep#2", &a, &t);
    ck_assert_int_eq(t.n, 5);
    static const double us[5] = {20, 8, 16, 6, 10};
    for (int i = 0; i < 5; i++)
        ck_assert_double_eq_tol(t.k[i].dur_s, us[i] * 1e-6, 1e-15);
    arena_free(&a);
}
END_TEST

/* tiny-ncu.csv: ncu's log lines skipped, a units row in usecond and Kbyte (1000 bytes), values
 * as ncu writes them. */
START_TEST(test_ncu)
{
    arena a = {0};
    trace t;
    load_ok("tests/data/traces/tiny-ncu.csv", NULL, &a, &t);
    ck_assert_int_eq(t.format, TRACE_NCU);
    ck_assert_int_eq(t.n, 6);
    ck_assert_int_eq(t.has_bytes, 1);
    static const double us[6] = {10, 4, 8, 2, 3, 5};
    static const int64_t rd[6] = {150000, 0, 131072, 1024, 0, 256};
    static const int64_t wr[6] = {65536, 65536, 0, 16384, 16384, 16384};
    for (int i = 0; i < 6; i++) {
        ck_assert_double_eq_tol(t.k[i].dur_s, us[i] * 1e-6, 1e-15);
        ck_assert_int_eq(t.k[i].dram_read_bytes, rd[i]);
        ck_assert_int_eq(t.k[i].dram_write_bytes, wr[i]);
    }
    ck_assert_str_eq(t.k[1].name + strlen(t.k[1].name) - 13, "(int, T2, T3)");
    arena_free(&a);
}
END_TEST

/* Write text to a temporary file and expect trace_load to fail with path and message. */
static void expect_err(const char *text, const char *range, const char *path, const char *msg)
{
    char file[] = "/tmp/kt_trace_XXXXXX";
    int fd = mkstemp(file);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq((int)write(fd, text, strlen(text)), (int)strlen(text));
    close(fd);
    arena a = {0};
    trace t;
    kt_err e;
    err_clear(&e);
    int rc = trace_load(file, range, &a, &t, &e);
    unlink(file);
    arena_free(&a);
    ck_assert_msg(rc == -1, "should fail: %s", text);
    ck_assert_int_eq(e.code, KT_EINPUT);
    ck_assert_str_eq(e.file, file);
    ck_assert_str_eq(e.path, path);
    ck_assert_str_eq(e.msg, msg);
}

START_TEST(test_chrome_errors)
{
    expect_err("{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"ts\": 1}]}",
               NULL, "traceEvents[0].dur", "missing field");
    expect_err("{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"c\"},\n"
               " {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"ts\": 1, \"dur\": -2}]}",
               NULL, "traceEvents[1].dur", "must be a number >= 0 (microseconds)");
    expect_err("{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\", \"ts\": 1, \"dur\": 2}]}",
               NULL, "traceEvents[0].name", "missing kernel name");
    expect_err("{\"traceEvents\": [3]}", NULL, "traceEvents[0]", "must be an object");
    expect_err("{\"deviceProperties\": []}", NULL, "traceEvents",
               "missing (not a torch.profiler Chrome trace)");
    expect_err("{\"traceEvents\": {}}", NULL, "traceEvents", "must be an array of events");
    expect_err("{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", "
               "\"ts\": 1, \"dur\": 2}]}",
               NULL, "traceEvents",
               "no GPU kernels (events with \"cat\": \"kernel\"; record with ProfilerActivity.CUDA)");
    expect_err("{\"traceEvents\": [\n  {\"ph\": \"X\",}\n]}", NULL, "",
               "invalid JSON at line 2, column 15");
    expect_err("{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"ts\": 1, "
               "\"dur\": 2}]}",
               "ProfilerStep#1", "--range", "no CPU event named \"ProfilerStep#1\" in the trace");
    expect_err("{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"step\", "
               "\"ts\": 0, \"dur\": 5}, {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"ts\": 9, "
               "\"dur\": 2, \"args\": {\"correlation\": 7}}]}",
               "step", "--range", "no kernels launched inside \"step\"");
}
END_TEST

START_TEST(test_ncu_errors)
{
    expect_err("a,b\n1,2\n", NULL, "",
               "neither a torch.profiler Chrome trace (JSON) nor an Nsight Compute CSV (no \"Kernel "
               "Name\" column)");
    expect_err("\"ID\",\"Kernel Name\",\"Metric Name\",\"Metric Value\"\n", NULL, "line 1",
               "one row per metric (ncu --page details); export with ncu --csv --page raw");
    expect_err("==PROF== x\n\"ID\",\"Kernel Name\",\"dram__bytes_read.sum\"\n", NULL, "line 2",
               "no \"gpu__time_duration.sum\" column (ncu --csv --page raw --metrics "
               "gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum)");
    expect_err("\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\"\n\"0\",\"k\"\n", NULL, "line 2",
               "2 fields, the header has 3");
    expect_err("\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\"\n\"\",\"\",\"furlong\"\n", NULL,
               "line 2", "unknown time unit \"furlong\"");
    expect_err("\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\"\n\"\",\"\",\"nsecond\"\n"
               "\"0\",\"k\",\"1,024\"\n\"1\",\"k2\",\"n/a\"\n",
               NULL, "line 4", "gpu__time_duration.sum must be a number >= 0, got \"n/a\"");
    expect_err("\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\"\n\"\",\"\",\"nsecond\"\n", NULL, "",
               "no kernel rows");
    expect_err("\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\"\n\"0\",\"k\",\"5\"\n", "s", "--range",
               "needs a Chrome trace (JSON); an ncu CSV holds no CPU ranges");
}
END_TEST

static Suite *trace_suite(void)
{
    Suite *s = suite_create("trace");
    TCase *tc = tcase_create("trace_load");
    tcase_add_test(tc, test_chrome);
    tcase_add_test(tc, test_range);
    tcase_add_test(tc, test_ncu);
    tcase_add_test(tc, test_chrome_errors);
    tcase_add_test(tc, test_ncu_errors);
    suite_add_tcase(s, tc);
    return s;
}

KT_TEST_MAIN(trace_suite)
