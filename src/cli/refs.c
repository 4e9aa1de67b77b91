/* refs: validate's reference table (RFC 4180 records, a header naming the columns). */
#include "refs.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../io/csv.h"
#include "../model/result.h"
#include "metrics.h"

enum { REFS_MAX_FIELDS = 16, REFS_NCOLS = 8, REFS_REQUIRED = 6 };

static const char *const COLS[REFS_NCOLS] = {"workload", "mode",   "exec", "metric",
                                             "value",    "source", "hw",   "params"};

/* Skip comment lines ('#' first) at *p, counting them. */
static void skip_comments(char **p, int *line)
{
    while (**p == '#') {
        char *nl = strchr(*p, '\n');
        *p = nl ? nl + 1 : *p + strlen(*p);
        (*line)++;
    }
}

/* The next record that is not blank, its first line in *at; 0 fields at the end of the text. */
static int next_record(char **p, int *line, char **f, int *at)
{
    for (;;) {
        skip_comments(p, line);
        if (!**p)
            return 0;
        int lines = 0;
        *at = *line;
        int n = csv_record(p, f, REFS_MAX_FIELDS, &lines);
        *line += lines;
        if (n < 0 || n > 1 || (f[0][0] && f[0][0] != '#'))
            return n;
    }
}

/* One data record into r. 0, or -1 with e set (file, "line N"). */
static int row(char **f, const int *col, int line, const char *file, const char *hw_default,
               refs_row *r, kt_err *e)
{
    char where[32];
    snprintf(where, sizeof where, "line %d", line);
    memset(r, 0, sizeof *r);
    r->line = line;
    r->workload = f[col[0]];
    const char *mode = f[col[1]];
    if (!strcmp(mode, "inference") || !strcmp(mode, "training"))
        r->training = mode[0] == 't';
    else
        return err_set(e, KT_EINPUT, file, where, "mode must be inference or training, got \"%s\"",
                       mode);
    if ((r->exec = kt_exec_parse(f[col[2]])) < 0)
        return err_set(e, KT_EINPUT, file, where, "exec must be bsp, vf or kitsune, got \"%s\"",
                       f[col[2]]);
    if ((r->metric = mx_parse(f[col[3]])) < 0)
        return err_set(e, KT_EINPUT, file, where, "unknown metric \"%s\"", f[col[3]]);
    char *end;
    errno = 0;
    r->ref = strtod(f[col[4]], &end);
    if (end == f[col[4]] || *end || errno || !isfinite(r->ref))
        return err_set(e, KT_EINPUT, file, where, "value must be a number, got \"%s\"", f[col[4]]);
    r->source = f[col[5]];
    r->hw = col[6] >= 0 && f[col[6]][0] ? f[col[6]] : (char *)hw_default;
    r->params = col[7] >= 0 ? f[col[7]] : "";
    if (!r->hw)
        return err_set(e, KT_EINPUT, file, where, "no hw column value and no --hw given");
    if (!r->workload[0])
        return err_set(e, KT_EINPUT, file, where, "empty workload");
    return 0;
}

int refs_parse(char *text, size_t len, const char *file, const char *hw_default, refs_row **rows_out,
               int *nrows, kt_err *e)
{
    *rows_out = NULL;
    *nrows = 0;
    if (strlen(text) != len) { /* a NUL used to end the table silently */
        int line = 1;
        for (const char *q = text; *q; q++)
            line += *q == '\n';
        char where[32];
        snprintf(where, sizeof where, "line %d", line);
        return err_set(e, KT_EINPUT, file, where, "contains a NUL byte");
    }
    char *p = text, *f[REFS_MAX_FIELDS];
    if (!strncmp(p, "\xef\xbb\xbf", 3)) /* byte-order mark (spreadsheets on Windows write one) */
        p += 3;
    int line = 1, at = 0, col[REFS_NCOLS];
    int n = next_record(&p, &line, f, &at);
    if (!n)
        return err_set(e, KT_EINPUT, file, NULL, "empty reference table");
    if (n < 0 || n > REFS_MAX_FIELDS)
        return err_set(e, KT_EINPUT, file, "header", "bad header");
    for (int k = 0; k < REFS_NCOLS; k++) {
        col[k] = -1;
        for (int i = 0; i < n; i++)
            if (!strcmp(f[i], COLS[k]))
                col[k] = i;
        if (k < REFS_REQUIRED && col[k] < 0)
            return err_set(e, KT_EINPUT, file, "header", "missing column \"%s\"", COLS[k]);
    }
    int ncols = n, cap = 0, nr = 0;
    refs_row *rows = NULL;
    while ((n = next_record(&p, &line, f, &at)) != 0) {
        char where[32];
        snprintf(where, sizeof where, "line %d", at);
        if (n < 0 || n != ncols) {
            free(rows);
            if (n < 0)
                return err_set(e, KT_EINPUT, file, where, "unterminated quoted field");
            return err_set(e, KT_EINPUT, file, where, "%d fields, the header has %d", n, ncols);
        }
        if (nr == cap) {
            cap = cap ? 2 * cap : 64;
            refs_row *nrw = realloc(rows, (size_t)cap * sizeof *nrw);
            if (!nrw) {
                free(rows);
                return err_set(e, KT_EINTERNAL, NULL, NULL, "out of memory");
            }
            rows = nrw;
        }
        if (row(f, col, at, file, hw_default, &rows[nr], e)) {
            free(rows);
            return -1;
        }
        nr++;
    }
    if (!nr) {
        free(rows);
        return err_set(e, KT_EINPUT, file, NULL, "no reference rows");
    }
    *rows_out = rows;
    *nrows = nr;
    return 0;
}
