/* check_l2: L2 residency by stack distance - hits, evictions, partial residency, aliases. */
#include <math.h>
#include "../src/model/l2.h"
#include "ktest.h"

enum { NT = 4 };

START_TEST(test_hit_when_recent)
{
    double buf[NT];
    l2_state s;
    l2_init(&s, 100, buf, NT);
    l2_write(&s, 0, 50);
    ck_assert_int_eq(l2_read(&s, 0, 50), 0); /* just written, fits: all hits */
    ck_assert_double_eq(s.clock, 100);       /* both touches moved 50 bytes through L2 */
}
END_TEST

START_TEST(test_never_touched)
{
    double buf[NT];
    l2_state s;
    l2_init(&s, 100, buf, NT);
    ck_assert_int_eq(l2_read(&s, 1, 30), 30); /* cold: all misses */
    ck_assert_int_eq(l2_read(&s, 1, 30), 0);  /* then resident */
}
END_TEST

START_TEST(test_evicted)
{
    double buf[NT];
    l2_state s;
    l2_init(&s, 100, buf, NT);
    l2_write(&s, 0, 50);
    l2_write(&s, 1, 100); /* 100 bytes since t0's last touch: a full L2 pushed it out */
    ck_assert_int_eq(l2_read(&s, 0, 50), 50);
    l2_write(&s, 2, 10);
    l2_advance(&s, 200); /* unrelated traffic ages everything */
    ck_assert_int_eq(l2_read(&s, 2, 10), 10);
}
END_TEST

START_TEST(test_partial)
{
    double buf[NT];
    l2_state s;
    l2_init(&s, 100, buf, NT);
    l2_write(&s, 0, 50);
    l2_write(&s, 1, 80); /* 80 bytes since: 100 - 80 = 20 of t0's 50 bytes remain */
    ck_assert_int_eq(l2_read(&s, 0, 50), 30);
}
END_TEST

START_TEST(test_larger_than_l2)
{
    double buf[NT];
    l2_state s;
    l2_init(&s, 100, buf, NT);
    l2_write(&s, 0, 150);
    /* a tensor larger than L2, read in the order it was written, thrashes LRU: no hits */
    ck_assert_int_eq(l2_read(&s, 0, 150), 150);
    /* exactly the capacity still fits */
    l2_write(&s, 1, 100);
    ck_assert_int_eq(l2_read(&s, 1, 100), 0);
}
END_TEST

START_TEST(test_alias)
{
    double buf[NT];
    l2_state s;
    l2_init(&s, 100, buf, NT);
    l2_write(&s, 0, 40);
    l2_alias(&s, 3, 0); /* t3 is a view of t0 */
    ck_assert_int_eq(l2_read(&s, 3, 40), 0);
    l2_alias(&s, 2, 1); /* a view of a never-written tensor is cold too */
    ck_assert_int_eq(l2_read(&s, 2, 10), 10);
}
END_TEST

/* Che's approximation, by hand: two halves, a 1 MB table read 24 MB in all (k = 12 reads per
 * row per half), 40 MB streamed (20 MB per half). Choose t = 0.05 of the run: each half then
 * holds 20e6 x 0.05 + 1e6 (1 - e^-0.6) = 1451188.4 bytes; with that capacity the first reads
 * (2 x 1 MB, all cold) miss and the other 22 MB miss with probability e^-0.6 */
START_TEST(test_gather_che_closed_form)
{
    double cap = 20e6 * 0.05 + 1e6 * (1.0 - exp(-0.6));
    double dram = l2_gather_dram_bytes(cap, 2, 40e6, 1e6, 1e6, 24e6);
    ck_assert_double_eq_tol(dram, 2e6 + 22e6 * exp(-0.6), 1.0);
    ck_assert_double_eq_tol(l2_gather_resident_frac(cap, 2, 40e6, 1e6, 24e6), 1.0 - exp(-0.6),
                            1e-9);
    /* half the table already in L2: half the first reads hit */
    ck_assert_double_eq_tol(l2_gather_dram_bytes(cap, 2, 40e6, 1e6, 0.5e6, 24e6),
                            1e6 + 22e6 * exp(-0.6), 1.0);
}
END_TEST

/* the limits: no stream and a table that fits -> the first reads only; no room -> every read
 * misses; fewer reads than rows in the halves -> every read is a first read */
START_TEST(test_gather_che_limits)
{
    ck_assert_double_eq(l2_gather_dram_bytes(10e6, 1, 0, 4e6, 4e6, 40e6), 4e6);
    ck_assert_double_eq(l2_gather_dram_bytes(10e6, 2, 0, 4e6, 4e6, 40e6), 8e6);
    ck_assert_double_eq(l2_gather_dram_bytes(0, 1, 1e6, 4e6, 4e6, 40e6), 4e6 + 36e6);
    ck_assert_double_eq(l2_gather_dram_bytes(10e6, 2, 1e9, 4e6, 4e6, 6e6), 6e6);
    ck_assert_double_eq(l2_gather_dram_bytes(10e6, 2, 1e9, 4e6, 4e6, 0), 0);
}
END_TEST

static Suite *l2_suite(void)
{
    Suite *s = suite_create("l2");
    TCase *t = tcase_create("l2_read");
    tcase_add_test(t, test_hit_when_recent);
    tcase_add_test(t, test_never_touched);
    tcase_add_test(t, test_evicted);
    tcase_add_test(t, test_partial);
    tcase_add_test(t, test_larger_than_l2);
    tcase_add_test(t, test_alias);
    tcase_add_test(t, test_gather_che_closed_form);
    tcase_add_test(t, test_gather_che_limits);
    suite_add_tcase(s, t);
    return s;
}

KT_TEST_MAIN(l2_suite)
