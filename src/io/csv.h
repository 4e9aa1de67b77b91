/* csv: RFC 4180 records - a reader for reference tables and writers for CSV output. */
#ifndef KT_CSV_H
#define KT_CSV_H
#include <stdio.h>

/** Split the record starting at *p into fields, in place (NUL-terminated; quoted fields with ""
 *  inside quotes unescaped), and advance *p past it. At most `max` field pointers are stored.
 *  *lines (when not NULL) gets the line breaks the record spans: those inside quoted fields
 *  plus its terminator. Returns the field count, or -1 for an unterminated quote. */
int csv_record(char **p, char **field, int max, int *lines);
/** Write s as one field, quoted when it holds a comma, quote or newline. */
void csv_field(FILE *f, const char *s);
/** Write ",v" (%.9g), or "," alone when v is not finite. */
void csv_num(FILE *f, double v);

#endif
