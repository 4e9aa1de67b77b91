/* fuzz_refs: the CSV reader of validate (io/csv.c records, cli/refs.c tables). Input: a
 * reference table. It must parse or fail with a message and a line number; rows carry finite
 * values and line numbers that increase. */
#include "../../src/cli/refs.h"
#include "../../src/io/csv.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = fz_text(data, size);
    refs_row *rows = NULL;
    int n = 0;
    kt_err e;
    err_clear(&e);
    if (refs_parse(s, size, "fuzz.csv", size % 2 ? "a100" : NULL, &rows, &n, &e) == 0) {
        FZ_ASSERT(n > 0, "no rows but no error");
        for (int i = 0; i < n; i++) {
            FZ_ASSERT(isfinite(rows[i].ref), "row %d: value %g", i, rows[i].ref);
            FZ_ASSERT(i == 0 || rows[i].line > rows[i - 1].line, "line numbers do not increase");
            FZ_ASSERT(rows[i].workload[0] && rows[i].hw, "row %d: no workload or hw", i);
        }
    } else {
        FZ_ASSERT(e.code == KT_EINPUT || !strcmp(e.msg, "out of memory"), "%s", e.msg);
        FZ_ASSERT(e.msg[0], "an error without a message");
    }
    free(rows);
    free(s);
    s = fz_text(data, size); /* the record splitter alone, on any bytes */
    char *p = s, *f[8];
    while (*p) {
        char *before = p;
        int lines = 0;
        if (csv_record(&p, f, 8, &lines) < 0)
            break;
        FZ_ASSERT(p > before && lines >= 0, "no progress");
    }
    free(s);
    return 0;
}
