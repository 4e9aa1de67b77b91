/* err: error values carried upward from the library to main. */
#include "err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Longest word err_suggest compares (longer ones are cut; keys are short). */
enum { SUGGEST_MAX = 96 };

void err_clear(kt_err *e)
{
    memset(e, 0, sizeof *e);
}

int err_set(kt_err *e, int code, const char *file, const char *path, const char *fmt, ...)
{
    va_list ap;
    if (!e)
        return -1;
    e->code = code;
    snprintf(e->file, sizeof e->file, "%s", file ? file : "");
    snprintf(e->path, sizeof e->path, "%s", path ? path : "");
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
    return -1;
}

void err_format(const kt_err *e, char *buf, unsigned long n)
{
    size_t used = 0;
    buf[0] = 0;
    if (e->file[0])
        used += (size_t)snprintf(buf + used, n - used, "%s: ", e->file);
    if (e->path[0] && used < n)
        used += (size_t)snprintf(buf + used, n - used, "%s: ", e->path);
    if (used < n)
        snprintf(buf + used, n - used, "%s", e->msg);
}

/* Hot path (called for every tensor and op while loading): plain copies, no printf. */
void err_path(char *out, unsigned long n, const char *base, const char *key, int index)
{
    size_t used = 0;
    if (!n)
        return;
    if (base && base != out)
        for (; *base && used + 1 < n; base++)
            out[used++] = *base;
    else if (base == out)
        used = strnlen(out, n - 1);
    if (key) {
        if (used && used + 1 < n)
            out[used++] = '.';
        for (; *key && used + 1 < n; key++)
            out[used++] = *key;
    } else {
        char digits[16];
        int nd = 0;
        unsigned v = index < 0 ? 0u : (unsigned)index;
        do {
            digits[nd++] = (char)('0' + v % 10);
            v /= 10;
        } while (v && nd < 15);
        if (used + 1 < n)
            out[used++] = '[';
        while (nd && used + 1 < n)
            out[used++] = digits[--nd];
        if (used + 1 < n)
            out[used++] = ']';
    }
    out[used] = 0;
}

/* Levenshtein distance (insert, delete, substitute: 1 each), two rows. */
static int edit_distance(const char *a, const char *b)
{
    int la = (int)strnlen(a, SUGGEST_MAX), lb = (int)strnlen(b, SUGGEST_MAX);
    int row[2][SUGGEST_MAX + 1];
    for (int j = 0; j <= lb; j++)
        row[0][j] = j;
    for (int i = 1; i <= la; i++) {
        int *cur = row[i & 1], *prev = row[(i - 1) & 1];
        cur[0] = i;
        for (int j = 1; j <= lb; j++) {
            int d = prev[j - 1] + (a[i - 1] != b[j - 1]);
            if (prev[j] + 1 < d)
                d = prev[j] + 1;
            if (cur[j - 1] + 1 < d)
                d = cur[j - 1] + 1;
            cur[j] = d;
        }
    }
    return row[la & 1][lb];
}

static const char *last_part(const char *s)
{
    const char *dot = strrchr(s, '.');
    return dot ? dot + 1 : s;
}

const char *err_suggest(const char *word, const char *const *cand, int n)
{
    /* a typo is a few edits, and never most of a short word */
    int limit = (int)strlen(word) / 3;
    if (limit > 3)
        limit = 3;
    if (limit < 1)
        limit = 1;
    const char *best = NULL;
    int best_d = limit + 1;
    for (int i = 0; i < n; i++) {
        int d = edit_distance(word, cand[i]);
        int dl = edit_distance(last_part(word), last_part(cand[i])) + 1;
        if (dl < d)
            d = dl;
        if (d < best_d) {
            best_d = d;
            best = cand[i];
        }
    }
    return best;
}
