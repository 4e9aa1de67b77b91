/* check_expr: shape-expression evaluator - precedence, functions, exact division, errors. */
#include <stdint.h>
#include <string.h>

#include "../src/model/expr.h"
#include "ktest.h"

static const expr_param P[] = {{"B", 4}, {"S", 10}, {"H", 12}, {"big", INT64_MAX / 2 + 1}};
enum { NP = (int)(sizeof P / sizeof P[0]) };

/* Evaluate s; assert success and value. */
static void ok(const char *s, int64_t want)
{
    char msg[256] = "";
    int64_t v = -12345;
    int rc = expr_eval(s, P, NP, &v, msg, sizeof msg);
    ck_assert_msg(rc == 0, "\"%s\" failed: %s", s, msg);
    ck_assert_msg(v == want, "\"%s\" = %lld, want %lld", s, (long long)v, (long long)want);
}

/* Evaluate s; assert failure and that the message contains `part`. */
static void bad(const char *s, const char *part)
{
    char msg[256] = "";
    int64_t v = 0;
    ck_assert_msg(expr_eval(s, P, NP, &v, msg, sizeof msg) == -1, "\"%s\" should fail", s);
    ck_assert_msg(strstr(msg, part), "\"%s\": message \"%s\" lacks \"%s\"", s, msg, part);
}

START_TEST(test_literals_and_names)
{
    ok("0", 0);
    ok("42", 42);
    ok("  7  ", 7);
    ok("B", 4);
    ok("B*S", 40);
    ok("9223372036854775807", INT64_MAX);
}
END_TEST

START_TEST(test_precedence)
{
    ok("2+3*4", 14);     /* * binds tighter than + */
    ok("2*3+4", 10);
    ok("20-6-4", 10);    /* left associative */
    ok("64/4/2", 8);     /* (64/4)/2, not 64/(4/2)=32 */
    ok("17%5*2", 4);     /* same level, left to right: (17%5)*2 */
    ok("B+S*H", 4 + 120);
    ok("H/4+1", 4);
}
END_TEST

START_TEST(test_parentheses)
{
    ok("(2+3)*4", 20);
    ok("((B))", 4);
    ok("(B+S)*(H-2)", 140);
    ok("64/(4/2)", 32);
}
END_TEST

START_TEST(test_unary_minus)
{
    ok("-3", -3);
    ok("-B", -4);
    ok("--3", 3);
    ok("2*-3", -6);
    ok("-(2+3)*2", -10);
    ok("S - -B", 14);
}
END_TEST

START_TEST(test_functions)
{
    ok("min(3,7)", 3);
    ok("max(3,7)", 7);
    ok("min(B*S, H)", 12);
    ok("cdiv(10,3)", 4);   /* ceil(10/3) */
    ok("cdiv(9,3)", 3);
    ok("cdiv(0,5)", 0);
    ok("cdiv(1,128)", 1);
    ok("max(min(1,2),cdiv(S,4))", 3);
    ok("2*max(B,S)+1", 21);
}
END_TEST

START_TEST(test_exact_division)
{
    ok("12/4", 3);
    ok("S*H/B", 30); /* (10*12)/4 = 30 exactly */
    ok("7%3", 1);
    bad("7/2", "does not divide exactly");
    bad("S/B", "does not divide exactly"); /* 10/4 */
}
END_TEST

START_TEST(test_errors)
{
    bad("Q", "unknown parameter \"Q\"");
    bad("B*nope", "unknown parameter \"nope\"");
    bad("1/0", "division by zero");
    bad("1%0", "division by zero");
    bad("B/(S-10)", "division by zero");
    bad("cdiv(3,0)", "cdiv divisor must be > 0");
    bad("9223372036854775808", "number too large");
    bad("9223372036854775807+1", "overflow");
    bad("big*2", "overflow");
    bad("-9223372036854775807-2", "overflow");
    bad("3 4", "trailing characters");
    bad("B)", "trailing characters");
    bad("(B", "missing ')'");
    bad("2*", "unexpected end");
    bad("", "unexpected end");
    bad("2.5", "not an integer");
    bad("1e3", "not an integer");
    bad("min(1)", "expected ','");
    bad("max(1,2", "expected ')'");
    bad("2 $ 3", "trailing characters");
    bad("@", "unexpected character");
}
END_TEST

START_TEST(test_deep_nesting)
{
    char buf[160]; /* 70 levels: deeper than EXPR_MAX_DEPTH (64), short enough to echo */
    size_t n = 0;
    for (int i = 0; i < 70; i++)
        buf[n++] = '(';
    buf[n++] = '1';
    for (int i = 0; i < 70; i++)
        buf[n++] = ')';
    buf[n] = 0;
    bad(buf, "nested too deeply");
}
END_TEST

START_TEST(test_is_name)
{
    ck_assert(expr_is_name("B"));
    ck_assert(expr_is_name("_x1"));
    ck_assert(expr_is_name("seq_len"));
    ck_assert(!expr_is_name(""));
    ck_assert(!expr_is_name("1B"));
    ck_assert(!expr_is_name("a-b"));
    ck_assert(!expr_is_name(NULL));
}
END_TEST

static Suite *expr_suite(void)
{
    Suite *s = suite_create("expr");
    TCase *t = tcase_create("expr_eval");
    tcase_add_test(t, test_literals_and_names);
    tcase_add_test(t, test_precedence);
    tcase_add_test(t, test_parentheses);
    tcase_add_test(t, test_unary_minus);
    tcase_add_test(t, test_functions);
    tcase_add_test(t, test_exact_division);
    tcase_add_test(t, test_errors);
    tcase_add_test(t, test_deep_nesting);
    suite_add_tcase(s, t);
    TCase *n = tcase_create("expr_is_name");
    tcase_add_test(n, test_is_name);
    suite_add_tcase(s, n);
    return s;
}

KT_TEST_MAIN(expr_suite)
