/* check_base: the foundations - arena (alignment, zeroing, overflow, mark/release), errors
 * (format, JSON paths) and dtypes. */
#include <stdint.h>
#include <string.h>

#include "../src/model/dtype.h"
#include "ktest.h"

START_TEST(test_arena)
{
    arena a = {0};
    unsigned char *p = arena_calloc(&a, 3, 7);
    ck_assert_ptr_nonnull(p);
    ck_assert_int_eq((uintptr_t)p % 16, 0);
    for (int i = 0; i < 21; i++)
        ck_assert_int_eq(p[i], 0);
    ck_assert_ptr_null(arena_calloc(&a, SIZE_MAX / 2, 4)); /* n x size overflows */
    char *s = arena_strdup(&a, "kitsune");
    ck_assert_str_eq(s, "kitsune");
    ck_assert_ptr_null(arena_strdup(&a, NULL));
    /* mark/release: what came after the mark is freed, what came before stays */
    arena_pos m = arena_mark(&a);
    for (int i = 0; i < 100; i++) /* spans several 64 KiB blocks */
        ck_assert_ptr_nonnull(arena_calloc(&a, 4096, 1));
    arena_release(&a, m);
    ck_assert_str_eq(s, "kitsune");
    ck_assert_ptr_eq(a.head, m.block);
    arena_free(&a);
    ck_assert_ptr_null(a.head);
}
END_TEST

/* An arena that outgrows its four 256 KiB blocks takes 2 MiB ones; every byte handed out stays
 * its own (a pattern written into each allocation reads back), a request above 2 MiB gets a
 * block of its own, and released blocks are reused: after a release to the same mark, the same
 * allocations come back at the same addresses. */
START_TEST(test_arena_growth)
{
    arena a = {0};
    enum { N = 40, BYTES = 200 * 1024 };
    unsigned char *p[N + 1];
    arena_pos m = arena_mark(&a);
    for (int i = 0; i < N; i++) {
        p[i] = arena_alloc(&a, BYTES, 1);
        ck_assert_ptr_nonnull(p[i]);
        ck_assert_int_eq((uintptr_t)p[i] % 16, 0);
        memset(p[i], i + 1, BYTES);
    }
    p[N] = arena_calloc(&a, 3, 1024 * 1024); /* 3 MiB: larger than any standard block */
    ck_assert_ptr_nonnull(p[N]);
    for (int k = 0; k < 3 * 1024 * 1024; k += 4099)
        ck_assert_int_eq(p[N][k], 0);
    for (int i = 0; i < N; i++)
        for (int k = 0; k < BYTES; k += 997)
            ck_assert_int_eq(p[i][k], i + 1);
    ck_assert_uint_ge(a.nblocks, 4 + 1 + 1); /* the small ones, at least one huge, the 3 MiB */
    arena_release(&a, m);
    size_t nb = a.nblocks;
    for (int i = 0; i < N; i++)
        ck_assert_ptr_eq(arena_alloc(&a, BYTES, 1), p[i]);
    ck_assert_uint_eq(a.nblocks, nb); /* all from the spare list */
    arena_free(&a);
    ck_assert_ptr_null(a.head);
    ck_assert_uint_eq(a.nblocks, 0);
}
END_TEST

START_TEST(test_err)
{
    kt_err e;
    err_clear(&e);
    ck_assert_int_eq(err_set(&e, KT_EINPUT, "w.json", "ops[3]", "bad %s", "thing"), -1);
    char buf[128];
    err_format(&e, buf, sizeof buf);
    ck_assert_str_eq(buf, "w.json: ops[3]: bad thing");
    err_set(&e, KT_EINPUT, NULL, NULL, "alone");
    err_format(&e, buf, sizeof buf);
    ck_assert_str_eq(buf, "alone");
    char p[64];
    err_path(p, sizeof p, "ops", NULL, 12);
    ck_assert_str_eq(p, "ops[12]");
    err_path(p, sizeof p, p, "inputs", 0); /* base may be the output itself */
    ck_assert_str_eq(p, "ops[12].inputs");
    err_path(p, sizeof p, "", "tensors", 0);
    ck_assert_str_eq(p, "tensors");
    char small[6];
    err_path(small, sizeof small, "abcdefgh", "x", 0); /* truncated, still terminated */
    ck_assert_int_eq((int)strlen(small), 5);
}
END_TEST

START_TEST(test_dtype)
{
    static const struct {
        const char *name;
        int bytes, is_float;
    } T[] = {{"fp32", 4, 1}, {"tf32", 4, 1}, {"fp16", 2, 1}, {"bf16", 2, 1},
             {"fp8", 1, 1},  {"int64", 8, 0}, {"int32", 4, 0}, {"bool", 1, 0}};
    for (size_t i = 0; i < sizeof T / sizeof T[0]; i++) {
        dtype d;
        ck_assert_int_eq(dt_parse(T[i].name, &d), 0);
        ck_assert_str_eq(dt_name(d), T[i].name);
        ck_assert_int_eq(dt_bytes(d), T[i].bytes);
        ck_assert_int_eq(dt_is_float(d), T[i].is_float);
    }
    dtype d;
    ck_assert_int_eq(dt_parse("float", &d), -1);
}
END_TEST

static Suite *base_suite(void)
{
    Suite *s = suite_create("base");
    TCase *t = tcase_create("arena_err_dtype");
    tcase_add_test(t, test_arena);
    tcase_add_test(t, test_arena_growth);
    tcase_add_test(t, test_err);
    tcase_add_test(t, test_dtype);
    suite_add_tcase(s, t);
    return s;
}

KT_TEST_MAIN(base_suite)
