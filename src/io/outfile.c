/* outfile: output destinations. A regular file (or a name that does not exist yet) is written
 * to a temporary file in the directory of the resolved target (symlinks followed, so the link
 * stays a link), fsync'ed and renamed onto the target: readers see the old or the new file,
 * never a part, and a kill leaves the target untouched. Anything else that exists - a device
 * (/dev/null, /dev/full), a FIFO, /dev/stdout, /dev/fd/N - is opened and written in place and
 * never replaced. New files get mode 0666 & ~umask, like any file a shell redirection creates.
 *
 * The signal-cleanup slots are the library's one piece of process state: a temporary file can
 * only be removed on SIGINT/SIGTERM/SIGHUP by a handler that knows its name. */
#define _GNU_SOURCE /* fopencookie: a memory stream with stdio's own buffering */
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Longest file name (one path component) POSIX file systems accept (NAME_MAX on Linux). */
enum { OF_NAME_MAX = 255 };
/* Characters of the target's name kept in its temporary file's name (".NAME.tmpXXXXXX"). */
enum { OF_TMP_STEM = 200 };
/* Symbolic links followed when resolving a target (Linux's own limit, MAXSYMLINKS). */
enum { OF_MAX_LINKS = 40 };
/* Temporary files protected at once (an output and a sweep's partial file at most). */
enum { OF_SLOTS = 8 };

static const int SIGNALS[] = {SIGINT, SIGTERM, SIGHUP};

static char slot_path[OF_SLOTS][sizeof ((of_file *)0)->tmp];
static volatile sig_atomic_t slot_used[OF_SLOTS];

static void on_signal(int sig)
{
    int saved = errno;
    for (int i = 0; i < OF_SLOTS; i++)
        if (slot_used[i])
            unlink(slot_path[i]);
    signal(sig, SIG_DFL);
    errno = saved;
    raise(sig); /* delivered when the handler returns: the default action, as if never caught */
}

void of_catch_signals(void)
{
    for (size_t i = 0; i < sizeof SIGNALS / sizeof SIGNALS[0]; i++) {
        struct sigaction old, sa;
        if (sigaction(SIGNALS[i], NULL, &old) || old.sa_handler == SIG_IGN)
            continue; /* nohup and friends ignore SIGHUP: keep it ignored */
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGNALS[i], &sa, NULL);
    }
}

int of_protect(const char *path)
{
    for (int i = 0; i < OF_SLOTS; i++)
        if (!slot_used[i] && strlen(path) < sizeof slot_path[i]) {
            memcpy(slot_path[i], path, strlen(path) + 1);
            slot_used[i] = 1;
            return i;
        }
    return -1;
}

void of_forget(int slot)
{
    if (slot >= 0 && slot < OF_SLOTS)
        slot_used[slot] = 0;
}

/* Block the signals of_protect covers (creating and registering a temporary file is then one
 * step as far as they are concerned); restore with unblock. */
static void block(sigset_t *old)
{
    sigset_t s;
    sigemptyset(&s);
    for (size_t i = 0; i < sizeof SIGNALS / sizeof SIGNALS[0]; i++)
        sigaddset(&s, SIGNALS[i]);
    sigprocmask(SIG_BLOCK, &s, old);
}

static void unblock(const sigset_t *old)
{
    sigprocmask(SIG_SETMASK, old, NULL);
}

void of_crash_point(const char *name)
{
    const char *at = getenv("KITSUNE_TEST_CRASH_AT");
    size_t n = strlen(name);
    if (!at || strncmp(at, name, n) || (at[n] && at[n] != ':'))
        return;
    raise(!strcmp(at + n, ":TERM") ? SIGTERM : !strcmp(at + n, ":INT") ? SIGINT : SIGKILL);
}

int of_write_all(int fd, const void *buf, size_t n)
{
    const char *p = buf;
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            if (w == 0)
                errno = EIO;
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Directory part of path ("." when it has none) into out. */
static void dir_of(const char *path, char *out, size_t n)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(out, n, ".");
    else if (slash == path)
        snprintf(out, n, "/");
    else
        snprintf(out, n, "%.*s", (int)(slash - path), path);
}

int of_sync_dir(const char *path)
{
    char dir[sizeof ((of_file *)0)->target];
    dir_of(path, dir, sizeof dir);
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    int rc = fsync(fd);
    close(fd);
    return rc;
}

/* FNV-1a, 64 bits. */
static uint64_t fnv(const char *s)
{
    uint64_t h = 14695981039346656037ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

void of_sibling(const char *path, const char *suffix, char *out, size_t n)
{
    const char *slash = strrchr(path, '/');
    const char *name = slash ? slash + 1 : path;
    size_t dirlen = (size_t)(name - path), nl = strlen(name), sl = strlen(suffix);
    if (nl + sl <= OF_NAME_MAX) {
        snprintf(out, n, "%s%s", path, suffix);
        return;
    }
    /* keep a prefix of the name, then "-" and 16 hex digits of the whole name's hash */
    int keep = (int)(OF_NAME_MAX - sl - 17);
    snprintf(out, n, "%.*s%.*s-%016llx%s", (int)dirlen, path, keep < 0 ? 0 : keep, name,
             (unsigned long long)fnv(name), suffix);
}

/* Follow symbolic links from path to the file they name (which need not exist yet). 0, or -1
 * with errno set (ELOOP, ENAMETOOLONG, or readlink's error). */
static int resolve(const char *path, char *out, size_t n)
{
    char cur[sizeof ((of_file *)0)->target], link[sizeof cur], dir[sizeof cur];
    if ((size_t)snprintf(cur, sizeof cur, "%s", path) >= sizeof cur) {
        errno = ENAMETOOLONG;
        return -1;
    }
    for (int depth = 0; depth <= OF_MAX_LINKS; depth++) {
        struct stat st;
        if (lstat(cur, &st) != 0 || !S_ISLNK(st.st_mode)) {
            if ((size_t)snprintf(out, n, "%s", cur) >= n) {
                errno = ENAMETOOLONG;
                return -1;
            }
            return 0;
        }
        ssize_t len = readlink(cur, link, sizeof link - 1);
        if (len < 0)
            return -1;
        link[len] = 0;
        int w;
        if (link[0] == '/') {
            w = snprintf(cur, sizeof cur, "%s", link);
        } else {
            dir_of(cur, dir, sizeof dir);
            w = snprintf(cur, sizeof cur, "%s/%s", dir, link);
        }
        if ((size_t)w >= sizeof cur) {
            errno = ENAMETOOLONG;
            return -1;
        }
    }
    errno = ELOOP;
    return -1;
}

/* The descriptor a special path names without opening a file: /dev/stdout, /dev/stderr,
 * /dev/fd/N and /proc/self/fd/N (-1 for any other path). */
static int fd_path(const char *path)
{
    if (!strcmp(path, "/dev/stdout"))
        return 1;
    if (!strcmp(path, "/dev/stderr"))
        return 2;
    const char *num = !strncmp(path, "/dev/fd/", 8)         ? path + 8
                      : !strncmp(path, "/proc/self/fd/", 14) ? path + 14
                                                            : NULL;
    if (!num || !*num)
        return -1;
    char *end;
    long v = strtol(num, &end, 10);
    return *end || v < 0 || v > INT32_MAX ? -1 : (int)v;
}

/* The memory stream of OF_BUFFER: stdio buffers the writes (64 KiB), this appends each buffer
 * to o->buf. (open_memstream copies byte by byte: 4% of predicting a 10,000-op graph.) */
static ssize_t mem_write(void *cookie, const char *p, size_t n)
{
    of_file *o = cookie;
    if (o->len + n > o->cap) {
        size_t cap = o->cap ? o->cap : 1 << 16;
        while (cap < o->len + n)
            cap *= 2;
        char *nb = realloc(o->buf, cap);
        if (!nb)
            return -1;
        o->buf = nb;
        o->cap = cap;
    }
    memcpy(o->buf + o->len, p, n);
    o->len += n;
    return (ssize_t)n;
}

static FILE *mem_open(of_file *o)
{
    cookie_io_functions_t io = {NULL, mem_write, NULL, NULL};
    FILE *f = fopencookie(o, "w", io);
    if (f)
        setvbuf(f, NULL, _IOFBF, 1 << 16);
    return f;
}

static int fail(of_file *o, int code, const char *what, int err, kt_err *e)
{
    err_set(e, code, o->name, NULL, "%s: %s", what, strerror(err));
    of_abort(o);
    return -1;
}

/* Open the in-place destination of an OF_DIRECT output: the descriptor of a /dev/fd-style
 * path (duplicated), else the file opened for writing. -1 with errno set. */
static int open_direct(const of_file *o)
{
    int n = fd_path(o->target);
    if (n >= 0)
        return fcntl(n, F_DUPFD_CLOEXEC, 3);
    return open(o->target, O_WRONLY | O_NOCTTY | O_CLOEXEC);
}

/* Where path leads: its kind and the resolved target. 0, or -1 with errno set. */
static int classify(const char *path, of_kind *kind, char *target, size_t n)
{
    if (!path || !strcmp(path, "-") || fd_path(path) == 1) {
        *kind = OF_STDOUT;
        snprintf(target, n, "-");
        return 0;
    }
    if (fd_path(path) >= 0 || !strncmp(path, "/dev/", 5) || !strncmp(path, "/proc/", 6)) {
        *kind = OF_DIRECT; /* special files by name: never resolved, never replaced */
        snprintf(target, n, "%s", path);
        return 0;
    }
    if (resolve(path, target, n))
        return -1;
    struct stat st;
    *kind = stat(target, &st) == 0 && !S_ISREG(st.st_mode) ? OF_DIRECT : OF_ATOMIC;
    return 0;
}

of_kind of_kind_of(const char *path)
{
    char target[sizeof ((of_file *)0)->target];
    of_kind k;
    return classify(path, &k, target, sizeof target) ? OF_ATOMIC : k;
}

int of_open(of_file *o, const char *path, int flags, kt_err *e)
{
    memset(o, 0, sizeof *o);
    o->fd = -1;
    o->slot = -1;
    o->flags = flags;
    snprintf(o->name, sizeof o->name, "%s", path && strcmp(path, "-") ? path : "standard output");
    if (path && !path[0])
        return err_set(e, KT_EINPUT, NULL, "-o", "empty file name");
    if (classify(path, &o->kind, o->target, sizeof o->target))
        return fail(o, KT_EINPUT, "cannot resolve", errno, e);
    if (o->kind == OF_STDOUT) {
        o->f = flags & OF_BUFFER ? mem_open(o) : stdout;
        if (!o->f)
            return fail(o, KT_EINTERNAL, "cannot buffer the output", errno, e);
        return 0;
    }
    if (o->kind == OF_DIRECT) {
        if (flags & OF_BUFFER) { /* opened at commit: a failed command never touches it */
            o->f = mem_open(o);
            if (!o->f)
                return fail(o, KT_EINTERNAL, "cannot buffer the output", errno, e);
            return 0;
        }
        if ((o->fd = open_direct(o)) < 0)
            return fail(o, KT_EINPUT, "cannot open", errno, e);
        if (!(o->f = fdopen(o->fd, "w")))
            return fail(o, KT_EINTERNAL, "cannot open", errno, e);
        return 0;
    }
    char dir[sizeof o->target];
    dir_of(o->target, dir, sizeof dir);
    const char *base = strrchr(o->target, '/') ? strrchr(o->target, '/') + 1 : o->target;
    if ((size_t)snprintf(o->tmp, sizeof o->tmp, "%s/.%.*s.tmpXXXXXX", dir, OF_TMP_STEM, base) >=
        sizeof o->tmp)
        return fail(o, KT_EINPUT, "cannot create", ENAMETOOLONG, e);
    sigset_t old;
    block(&old);
    o->fd = mkstemp(o->tmp);
    int err = errno;
    if (o->fd >= 0)
        o->slot = of_protect(o->tmp);
    unblock(&old);
    if (o->fd < 0) {
        o->tmp[0] = 0;
        return fail(o, KT_EINPUT, "cannot create", err, e);
    }
    mode_t mask = umask(0);
    umask(mask);
    if (fchmod(o->fd, 0666 & ~mask) || !(o->f = fdopen(o->fd, "w")))
        return fail(o, KT_EINTERNAL, "cannot create", errno, e);
    of_crash_point("output-created");
    return 0;
}

/* One step of finishing an output: the first that fails decides the error reported. */
static void step(int failed, int *bad, int *err)
{
    if (failed && !*bad) {
        *bad = 1;
        *err = errno ? errno : EIO;
    }
}

/* Close o's stream (not stdout): 0, or EOF with errno set. */
static int close_stream(of_file *o)
{
    int c = o->f == stdout ? 0 : fclose(o->f);
    o->f = NULL;
    o->fd = -1;
    return c;
}

int of_commit(of_file *o, kt_err *e)
{
    if (!o->f)
        return 0;
    int bad = 0, err = 0;
    errno = 0;
    step(fflush(o->f) != 0 || ferror(o->f), &bad, &err);
    if (o->kind == OF_ATOMIC) {
        step(!bad && fsync(o->fd) != 0, &bad, &err);
        step(close_stream(o) != 0, &bad, &err);
        if (bad)
            return fail(o, KT_EINTERNAL, "cannot write", err, e);
        if (rename(o->tmp, o->target))
            return fail(o, KT_EINPUT, "cannot replace", errno, e);
        of_forget(o->slot);
        o->slot = -1;
        o->tmp[0] = 0;
        of_sync_dir(o->target); /* durability of the rename; nothing to report if it fails */
        return 0;
    }
    if (o->flags & OF_BUFFER) { /* the memory stream: now write it out */
        if (close_stream(o) || bad)
            return fail(o, KT_EINTERNAL, "cannot buffer the output", err ? err : errno, e);
        errno = 0;
        if (o->kind == OF_STDOUT) {
            step(o->len && fwrite(o->buf, 1, o->len, stdout) != o->len, &bad, &err);
            step(fflush(stdout) != 0 || ferror(stdout), &bad, &err);
        } else if ((o->fd = open_direct(o)) < 0) {
            return fail(o, KT_EINPUT, "cannot open", errno, e);
        } else {
            step(of_write_all(o->fd, o->buf, o->len) != 0, &bad, &err);
            step(close(o->fd) != 0, &bad, &err);
            o->fd = -1;
        }
        free(o->buf);
        o->buf = NULL;
    } else {
        step(close_stream(o) != 0, &bad, &err); /* stdout or a device, streamed */
    }
    return bad ? fail(o, KT_EINTERNAL, "cannot write", err, e) : 0;
}

void of_abort(of_file *o)
{
    if (o->f && o->f != stdout)
        fclose(o->f);
    else if (!o->f && o->fd >= 0)
        close(o->fd);
    o->f = NULL;
    o->fd = -1;
    free(o->buf);
    o->buf = NULL;
    if (o->tmp[0]) {
        unlink(o->tmp);
        o->tmp[0] = 0;
    }
    of_forget(o->slot);
    o->slot = -1;
}

int of_flush_stdout(kt_err *e)
{
    errno = 0;
    if (fflush(stdout) == 0 && !ferror(stdout))
        return 0;
    return err_set(e, KT_EINTERNAL, "standard output", NULL, "cannot write: %s",
                   strerror(errno ? errno : EIO));
}
