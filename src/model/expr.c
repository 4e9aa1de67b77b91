/* expr: integer shape expressions over named parameters, by recursive descent. */
#include "expr.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

typedef struct parser {
    const char *s, *p;
    const expr_param *params;
    int nparams;
    char *msg;
    unsigned long msglen;
    int depth;
} parser;

enum { EXPR_MAX_DEPTH = 64 };

static int fail(parser *ps, const char *why)
{
    snprintf(ps->msg, ps->msglen, "bad expression \"%s\": %s", ps->s, why);
    return -1;
}

static void skip(parser *ps)
{
    while (isspace((unsigned char)*ps->p))
        ps->p++;
}

static int parse_sum(parser *ps, int64_t *v);

static int parse_call(parser *ps, const char *fn, int64_t *v)
{
    int64_t a, b;
    skip(ps);
    if (*ps->p != '(')
        return fail(ps, "expected '(' after function name");
    ps->p++;
    if (parse_sum(ps, &a))
        return -1;
    skip(ps);
    if (*ps->p != ',')
        return fail(ps, "expected ','");
    ps->p++;
    if (parse_sum(ps, &b))
        return -1;
    skip(ps);
    if (*ps->p != ')')
        return fail(ps, "expected ')'");
    ps->p++;
    if (!strcmp(fn, "min"))
        *v = a < b ? a : b;
    else if (!strcmp(fn, "max"))
        *v = a > b ? a : b;
    else {
        if (b <= 0)
            return fail(ps, "cdiv divisor must be > 0");
        if (a < 0)
            return fail(ps, "cdiv of a negative value");
        *v = a / b + (a % b != 0);
    }
    return 0;
}

static int parse_atom(parser *ps, int64_t *v)
{
    skip(ps);
    if (++ps->depth > EXPR_MAX_DEPTH)
        return fail(ps, "nested too deeply");
    int rc = 0;
    if (*ps->p == '(') {
        ps->p++;
        rc = parse_sum(ps, v);
        skip(ps);
        if (!rc && *ps->p != ')')
            rc = fail(ps, "missing ')'");
        else if (!rc)
            ps->p++;
    } else if (*ps->p == '-') {
        ps->p++;
        int64_t x;
        rc = parse_atom(ps, &x);
        if (!rc && __builtin_sub_overflow((int64_t)0, x, v))
            rc = fail(ps, "overflow");
    } else if (isdigit((unsigned char)*ps->p)) {
        int64_t x = 0;
        while (isdigit((unsigned char)*ps->p)) {
            if (__builtin_mul_overflow(x, (int64_t)10, &x) ||
                __builtin_add_overflow(x, (int64_t)(*ps->p - '0'), &x))
                return fail(ps, "number too large");
            ps->p++;
        }
        if (*ps->p == '.' || *ps->p == 'e' || *ps->p == 'E')
            return fail(ps, "not an integer");
        *v = x;
    } else if (isalpha((unsigned char)*ps->p) || *ps->p == '_') {
        char name[64];
        size_t n = 0;
        while (isalnum((unsigned char)*ps->p) || *ps->p == '_') {
            if (n + 1 >= sizeof name)
                return fail(ps, "name too long");
            name[n++] = *ps->p++;
        }
        name[n] = 0;
        skip(ps);
        if (*ps->p == '(' &&
            (!strcmp(name, "min") || !strcmp(name, "max") || !strcmp(name, "cdiv"))) {
            rc = parse_call(ps, name, v);
        } else {
            int found = 0;
            for (int i = 0; i < ps->nparams; i++)
                if (!strcmp(ps->params[i].name, name)) {
                    *v = ps->params[i].value;
                    found = 1;
                    break;
                }
            if (!found) {
                snprintf(ps->msg, ps->msglen, "unknown parameter \"%s\"", name);
                rc = -1;
            }
        }
    } else {
        rc = fail(ps, *ps->p ? "unexpected character" : "unexpected end");
    }
    ps->depth--;
    return rc;
}

static int parse_prod(parser *ps, int64_t *v)
{
    if (parse_atom(ps, v))
        return -1;
    for (;;) {
        skip(ps);
        char op = *ps->p;
        if (op != '*' && op != '/' && op != '%')
            return 0;
        ps->p++;
        int64_t r;
        if (parse_atom(ps, &r))
            return -1;
        if (op == '*') {
            if (__builtin_mul_overflow(*v, r, v))
                return fail(ps, "overflow");
        } else {
            if (r == 0)
                return fail(ps, "division by zero");
            if (*v == INT64_MIN && r == -1)
                return fail(ps, "overflow");
            if (op == '/' && *v % r != 0)
                return fail(ps, "'/' does not divide exactly (use cdiv for ceiling division)");
            *v = op == '/' ? *v / r : *v % r;
        }
    }
}

static int parse_sum(parser *ps, int64_t *v)
{
    if (parse_prod(ps, v))
        return -1;
    for (;;) {
        skip(ps);
        char op = *ps->p;
        if (op != '+' && op != '-')
            return 0;
        ps->p++;
        int64_t r;
        if (parse_prod(ps, &r))
            return -1;
        if (op == '+' ? __builtin_add_overflow(*v, r, v) : __builtin_sub_overflow(*v, r, v))
            return fail(ps, "overflow");
    }
}

int expr_eval(const char *s, const expr_param *params, int nparams, int64_t *out, char *msg,
              unsigned long msglen)
{
    parser ps = {s, s, params, nparams, msg, msglen, 0};
    int64_t v;
    if (parse_sum(&ps, &v))
        return -1;
    skip(&ps);
    if (*ps.p)
        return fail(&ps, "trailing characters");
    *out = v;
    return 0;
}

int expr_is_name(const char *s)
{
    if (!s || !(isalpha((unsigned char)*s) || *s == '_'))
        return 0;
    for (s++; *s; s++)
        if (!(isalnum((unsigned char)*s) || *s == '_'))
            return 0;
    return 1;
}
