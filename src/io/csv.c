/* csv: RFC 4180 records (quoted fields, "" inside quotes). */
#include "csv.h"

#include <math.h>
#include <string.h>

int csv_record(char **p, char **field, int max, int *lines)
{
    char *s = *p, *w = s;
    int n = 0, nl = 0;
    field[n++] = w;
    for (;;) {
        if (*s == '"') {
            s++;
            for (;;) {
                if (!*s)
                    return -1;
                if (*s == '"' && s[1] == '"') {
                    *w++ = '"';
                    s += 2;
                } else if (*s == '"') {
                    s++;
                    break;
                } else {
                    nl += *s == '\n';
                    *w++ = *s++;
                }
            }
            continue;
        }
        if (*s == ',') {
            *w++ = 0;
            s++;
            if (n < max)
                field[n] = w;
            n++;
            continue;
        }
        if (!*s || *s == '\n' || *s == '\r') {
            nl += *s != 0;
            if (*s == '\r')
                s++;
            if (*s == '\n')
                s++;
            *w = 0;
            *p = s;
            if (lines)
                *lines = nl;
            return n;
        }
        *w++ = *s++;
    }
}

void csv_field(FILE *f, const char *s)
{
    if (strpbrk(s, ",\"\n")) {
        fputc('"', f);
        for (; *s; s++) {
            if (*s == '"')
                fputc('"', f);
            fputc(*s, f);
        }
        fputc('"', f);
    } else {
        fputs(s, f);
    }
}

void csv_num(FILE *f, double v)
{
    if (isfinite(v))
        fprintf(f, ",%.9g", v);
    else
        fputs(",", f);
}
