/* file: whole files read into memory. */
#include "file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* First buffer size; doubled until the file fits. */
enum { IO_FIRST_BYTES = 1 << 16 };

char *io_read_file(const char *path, size_t max_bytes, size_t *len, kt_err *e)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        err_set(e, KT_EINPUT, path, NULL, "cannot open: %s", strerror(errno));
        return NULL;
    }
    size_t cap = IO_FIRST_BYTES, n = 0;
    char *buf = malloc(cap + 1);
    for (;;) {
        if (!buf) {
            fclose(f);
            err_set(e, KT_EINTERNAL, path, NULL, "out of memory");
            return NULL;
        }
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap)
            break;
        if (cap >= max_bytes) {
            free(buf);
            fclose(f);
            err_set(e, KT_EINPUT, path, NULL, "file larger than %zu MiB", max_bytes >> 20);
            return NULL;
        }
        cap *= 2;
        char *nb = realloc(buf, cap + 1);
        if (!nb)
            free(buf);
        buf = nb;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        err_set(e, KT_EINPUT, path, NULL, "read error");
        return NULL;
    }
    buf[n] = 0;
    *len = n;
    return buf;
}
