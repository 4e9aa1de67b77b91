/* outfile: where a command's output goes - a regular file replaced atomically, or stdout, a
 * device or a FIFO written in place - with every write error reported and temporary files
 * removed when the process is interrupted. */
#ifndef KT_OUTFILE_H
#define KT_OUTFILE_H
#include <stddef.h>
#include <stdio.h>

#include "../err.h"

/** How an output reaches its destination (of_file.kind). */
typedef enum of_kind {
    OF_STDOUT, /* standard output ("-", "/dev/stdout" or no -o) */
    OF_DIRECT, /* an existing non-regular file (device, FIFO, /dev/fd/N): opened and written in
                  place, never replaced */
    OF_ATOMIC  /* a regular file (or a new one): a temporary file in the directory of the
                  resolved target (symlinks followed), fsync'ed and renamed onto it */
} of_kind;

/** Open flags. */
enum {
    /* Buffer the whole output in memory and write it to stdout or a non-regular target only
     * at of_commit, so that a command that fails half-way writes nothing there (regular files
     * are atomic anyway). Without it those destinations are written as data comes (sweeps). */
    OF_BUFFER = 1 << 0
};

/** An output being written. Zero-initialise it; of_open fills it. */
typedef struct of_file {
    FILE *f;            /* the stream to write to */
    of_kind kind;
    int flags;
    int fd;             /* OF_DIRECT, OF_ATOMIC: the open descriptor behind f (or -1) */
    int slot;           /* OF_ATOMIC: the temporary file's signal-cleanup slot (-1: none) */
    char *buf;          /* OF_BUFFER: the memory stream's contents */
    size_t len, cap;
    char name[1024];    /* the path as given (messages) */
    char target[4096];  /* the resolved path written or replaced */
    char tmp[4096];     /* OF_ATOMIC: the temporary file */
} of_file;

/** Open an output: path NULL or "-" is stdout. 0, or -1 with e set (code KT_EINPUT when the
 *  path cannot be created: missing directory, no permission, a directory). */
int of_open(of_file *o, const char *path, int flags, kt_err *e);
/** The kind of output of_open would make of path (no side effects). */
of_kind of_kind_of(const char *path);
/** The output is complete: flush it and make it visible (fsync and rename a temporary file, or
 *  write the buffered bytes to stdout or the device). 0, or -1 with e set when anything failed
 *  to be written (the old target is then untouched for OF_ATOMIC). */
int of_commit(of_file *o, kt_err *e);
/** The output is abandoned: close it and remove the temporary file. Safe after of_commit and on
 *  a zeroed of_file. */
void of_abort(of_file *o);
/** Flush stdout and report a write error on it (e.g. stdout is /dev/full): 0, or -1 with e
 *  set. The program's last step before exit. */
int of_flush_stdout(kt_err *e);

/** Remove `path` (a temporary file this process is writing) if SIGINT, SIGTERM or SIGHUP
 *  arrives before of_forget is called; the signal then takes its default action. Returns a
 *  slot for of_forget, or -1 when all slots are in use (the file is then not protected). */
int of_protect(const char *path);
/** Stop protecting the path of a slot (it was renamed or removed). -1 is ignored. */
void of_forget(int slot);
/** Install the handlers of_protect relies on (once per process; cli_main calls it). */
void of_catch_signals(void);

/** Test hook (tests/run-crash.sh, run-tools.sh): when the environment has
 *  KITSUNE_TEST_CRASH_AT=NAME the process kills itself with SIGKILL here, as a crash or kill -9
 *  at this step would; NAME:TERM or NAME:INT sends that signal instead. */
void of_crash_point(const char *name);
/** Write all of buf to fd, retrying interrupted and short writes. 0, or -1 with errno set. */
int of_write_all(int fd, const void *buf, size_t n);
/** fsync the directory that holds `path` (after a rename or unlink in it): 0 or -1. */
int of_sync_dir(const char *path);
/** The path of a file next to `path` (same directory) whose name is path's name followed by
 *  `suffix`, shortened with a hash of the full name when it would exceed the file system's
 *  name limit (255 bytes): deterministic, so a later run finds it again. */
void of_sibling(const char *path, const char *suffix, char *out, size_t n);

#endif
