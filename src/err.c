/* err: error values carried upward from the library to main. */
#include "err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

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
