/* refs: validate's reference table - RFC 4180 records with the columns workload, mode, exec,
 * metric, value, source and optionally hw and params, read into rows. */
#ifndef KT_REFS_H
#define KT_REFS_H
#include <stddef.h>

#include "../err.h"

/** One reference row, and what validate computes for it. */
typedef struct refs_row {
    int line;                            /* line of the file the record starts on */
    char *workload, *hw, *params, *source;
    int training, exec, metric;          /* mode, kt_exec, mx_metric */
    double ref;                          /* the reference value (finite) */
    double model, abs_err, rel_err;      /* validate: rel_err NAN when ref == 0 */
    int run;                             /* validate: index into its run cache */
    int ok;                              /* validate: model value available */
} refs_row;

/** Parse a reference table held in memory (len bytes, NUL-terminated at len; changed in place,
 *  the rows point into it). A leading UTF-8 byte-order mark is skipped; lines starting with '#'
 *  are comments; quoted fields may span lines (line numbers count every line). hw_default
 *  (--hw, may be NULL) fills an absent or empty hw column. *rows is malloc'd (caller frees).
 *  0, or -1 with e set naming the file and "line N": a NUL byte, an unterminated quote, a
 *  field count unlike the header's, a bad mode, exec, metric or value, no rows. */
int refs_parse(char *text, size_t len, const char *file, const char *hw_default, refs_row **rows,
               int *nrows, kt_err *e);

#endif
