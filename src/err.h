/* err: error values carried upward from the library to main (only main prints). */
#ifndef KT_ERR_H
#define KT_ERR_H

enum { KT_OK = 0, KT_EINPUT = 2, KT_EINTERNAL = 1 };

/** An error: code (KT_EINPUT for bad input, KT_EINTERNAL otherwise), the file it concerns,
 *  the JSON path inside it (e.g. "ops[3].inputs[1]") and a lowercase message. */
typedef struct kt_err {
    int code;
    char file[256];
    char path[192];
    char msg[320];
} kt_err;

/** Clear an error. */
void err_clear(kt_err *e);
/** Fill e (file/path may be NULL) and return -1, so callers can `return err_set(...)`. */
int err_set(kt_err *e, int code, const char *file, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/** Append ".key" (key != NULL) or "[index]" to the JSON path `base` into out (size n); base may
 *  be out itself. Error locations ("ops[3].inputs[1]") are built with it. */
void err_path(char *out, unsigned long n, const char *base, const char *key, int index);
/** The candidate closest to `word` in edit distance (a "did you mean"), or NULL when none is
 *  within a few edits. A candidate whose last dotted component equals word's counts as one edit
 *  away ("bandwidth_GBps" -> "dram.bandwidth_GBps"). */
const char *err_suggest(const char *word, const char *const *cand, int n);
/** Format "file: path: msg" (parts omitted when empty) into buf. */
void err_format(const kt_err *e, char *buf, unsigned long n);

#endif
