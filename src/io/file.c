/* file: whole files read into memory. */
#include "file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* First buffer size; doubled until the file fits. */
enum { IO_FIRST_BYTES = 1 << 16 };

char *io_read_file(const char *path, size_t max_bytes, size_t *len, kt_err *e)
{
    /* O_NONBLOCK: opening a FIFO must not wait for a writer (--hw FIFO hung); only regular
     * files are read, so a device or a pipe is refused, not read forever */
    struct stat st;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        err_set(e, KT_EINPUT, path, NULL, "cannot open: %s", strerror(errno));
        return NULL;
    }
    if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
        close(fd);
        err_set(e, KT_EINPUT, path, NULL, "cannot read: not a regular file");
        return NULL;
    }
    FILE *f = fcntl(fd, F_SETFL, 0) == 0 ? fdopen(fd, "rb") : NULL;
    if (!f) {
        close(fd);
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
