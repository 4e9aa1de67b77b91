/* trace: measured kernels from a torch.profiler Chrome trace or an Nsight Compute CSV. */
#include "trace.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "csv.h"
#include "file.h"
#include "jsonx.h"

/* Seconds per unit of Chrome trace timestamps and durations (torch.profiler writes us). */
#define CHROME_S_PER_UNIT 1e-6
/* Most columns of an ncu CSV read (--page raw with every default section has ~270). */
enum { NCU_MAX_FIELDS = 1024 };

static int is_kernel_cat(const char *c)
{
    return !strcmp(c, "kernel") || !strcmp(c, "Kernel");
}

static int is_other_gpu_cat(const char *c)
{
    return !strcmp(c, "gpu_memset") || !strcmp(c, "gpu_memcpy") || !strcmp(c, "Memset") ||
           !strcmp(c, "Memcpy");
}

static const char *str_member(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* Kernels by start time, then by position in the file (a stable order). */
typedef struct chrome_k {
    trace_kernel k;
    int pos;
} chrome_k;

static int cmp_start(const void *a, const void *b)
{
    const chrome_k *x = a, *y = b;
    if (x->k.start_s != y->k.start_s)
        return x->k.start_s < y->k.start_s ? -1 : 1;
    return (x->pos > y->pos) - (x->pos < y->pos);
}

/* A number member >= 0 of event i (us -> s); -1 with e set. */
static int event_time(const cJSON *ev, const char *key, int i, const char *file, double *out,
                      kt_err *e)
{
    char p[96];
    snprintf(p, sizeof p, "traceEvents[%d].%s", i, key);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(ev, key);
    if (!v)
        return err_set(e, KT_EINPUT, file, p, "missing field");
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < 0)
        return err_set(e, KT_EINPUT, file, p, "must be a number >= 0 (microseconds)");
    *out = v->valuedouble * CHROME_S_PER_UNIT;
    return 0;
}

/* The correlation ids of the runtime/driver calls inside the first CPU event named range; its
 * count into *n (ids sorted, in a). NULL with e set when the range is absent. */
static int64_t *range_correlations(const cJSON *evs, const char *range, const char *file,
                                   arena *a, int *n, kt_err *e)
{
    double t0 = -1, t1 = -1;
    const cJSON *ev;
    cJSON_ArrayForEach(ev, evs)
    {
        const char *nm = str_member(ev, "name"), *ph = str_member(ev, "ph");
        const char *cat = str_member(ev, "cat");
        const cJSON *ts = cJSON_GetObjectItemCaseSensitive(ev, "ts");
        const cJSON *du = cJSON_GetObjectItemCaseSensitive(ev, "dur");
        if (nm && ph && !strcmp(ph, "X") && !strcmp(nm, range) &&
            !(cat && (is_kernel_cat(cat) || is_other_gpu_cat(cat))) && cJSON_IsNumber(ts) &&
            cJSON_IsNumber(du)) {
            t0 = ts->valuedouble;
            t1 = ts->valuedouble + du->valuedouble;
            break;
        }
    }
    if (t0 < 0) {
        err_set(e, KT_EINPUT, file, "--range", "no CPU event named \"%.120s\" in the trace", range);
        return NULL;
    }
    int cap = 64, k = 0;
    int64_t *ids = arena_calloc(a, (size_t)cap, sizeof *ids);
    cJSON_ArrayForEach(ev, evs)
    {
        const char *cat = str_member(ev, "cat");
        const cJSON *ts = cJSON_GetObjectItemCaseSensitive(ev, "ts");
        const cJSON *args = cJSON_GetObjectItemCaseSensitive(ev, "args");
        const cJSON *c = cJSON_GetObjectItemCaseSensitive(args, "correlation");
        if (!ids || !cat || (strcmp(cat, "cuda_runtime") && strcmp(cat, "cuda_driver")) ||
            !cJSON_IsNumber(ts) || ts->valuedouble < t0 || ts->valuedouble > t1 ||
            !cJSON_IsNumber(c))
            continue;
        if (k == cap) {
            int64_t *m = arena_calloc(a, (size_t)cap * 2, sizeof *m);
            if (m)
                memcpy(m, ids, (size_t)cap * sizeof *m);
            ids = m;
            cap *= 2;
            if (!ids)
                break;
        }
        ids[k++] = (int64_t)c->valuedouble;
    }
    if (!ids) {
        err_set(e, KT_EINTERNAL, file, NULL, "out of memory");
        return NULL;
    }
    qsort(ids, (size_t)k, sizeof *ids, cmp_i64);
    *n = k;
    return ids;
}

static int load_chrome(const char *text, const char *file, const char *range, arena *a, trace *t,
                       kt_err *e)
{
    cJSON *root = jsonx_parse(text, file, e);
    if (!root)
        return -1;
    int rc = -1;
    const cJSON *evs = cJSON_IsArray(root) ? root : cJSON_GetObjectItemCaseSensitive(root, "traceEvents");
    chrome_k *ks = NULL;
    if (!cJSON_IsArray(evs)) {
        err_set(e, KT_EINPUT, file, "traceEvents",
                evs ? "must be an array of events" : "missing (not a torch.profiler Chrome trace)");
        goto done;
    }
    int64_t *ids = NULL;
    int nids = 0;
    if (range && !(ids = range_correlations(evs, range, file, a, &nids, e)))
        goto done;
    int nev = cJSON_GetArraySize(evs), n = 0, i = 0;
    ks = calloc((size_t)nev + 1, sizeof *ks);
    if (!ks) {
        err_set(e, KT_EINTERNAL, file, NULL, "out of memory");
        goto done;
    }
    const cJSON *ev;
    cJSON_ArrayForEach(ev, evs)
    {
        char p[96];
        snprintf(p, sizeof p, "traceEvents[%d]", i);
        if (!cJSON_IsObject(ev)) {
            err_set(e, KT_EINPUT, file, p, "must be an object");
            goto done;
        }
        const char *cat = str_member(ev, "cat"), *ph = str_member(ev, "ph");
        const char *evn = str_member(ev, "name");
        int kernel = cat && is_kernel_cat(cat), other = cat && is_other_gpu_cat(cat);
        if (!kernel && !other && evn && !strncmp(evn, "ProfilerStep#", 13))
            t->steps++;
        if ((!kernel && !other) || (ph && strcmp(ph, "X"))) {
            i++;
            continue;
        }
        if (range) { /* launched inside the range? */
            const cJSON *args = cJSON_GetObjectItemCaseSensitive(ev, "args");
            const cJSON *c = cJSON_GetObjectItemCaseSensitive(args, "correlation");
            int64_t id = cJSON_IsNumber(c) ? (int64_t)c->valuedouble : -1;
            if (id < 0 || !bsearch(&id, ids, (size_t)nids, sizeof *ids, cmp_i64)) {
                i++;
                continue;
            }
        }
        double ts, dur;
        if (event_time(ev, "dur", i, file, &dur, e) || event_time(ev, "ts", i, file, &ts, e))
            goto done;
        if (other) {
            t->other++;
            t->other_s += dur;
            i++;
            continue;
        }
        const char *nm = str_member(ev, "name");
        if (!nm) {
            char q[112];
            snprintf(q, sizeof q, "%s.name", p);
            err_set(e, KT_EINPUT, file, q, "missing kernel name");
            goto done;
        }
        ks[n].k.name = arena_strdup(a, nm);
        ks[n].k.start_s = ts;
        ks[n].k.dur_s = dur;
        ks[n].k.dram_read_bytes = ks[n].k.dram_write_bytes = -1;
        ks[n].pos = i;
        if (!ks[n].k.name) {
            err_set(e, KT_EINTERNAL, file, NULL, "out of memory");
            goto done;
        }
        n++;
        i++;
    }
    if (!n) {
        if (range)
            err_set(e, KT_EINPUT, file, "--range", "no kernels launched inside \"%.120s\"", range);
        else
            err_set(e, KT_EINPUT, file, "traceEvents",
                    "no GPU kernels (events with \"cat\": \"kernel\"; record with "
                    "ProfilerActivity.CUDA)");
        goto done;
    }
    qsort(ks, (size_t)n, sizeof *ks, cmp_start);
    t->k = arena_calloc(a, (size_t)n, sizeof *t->k);
    if (!t->k) {
        err_set(e, KT_EINTERNAL, file, NULL, "out of memory");
        goto done;
    }
    for (int j = 0; j < n; j++)
        t->k[j] = ks[j].k;
    t->n = n;
    t->format = TRACE_CHROME;
    rc = 0;
done:
    free(ks);
    cJSON_Delete(root);
    return rc;
}

/* A unit's factor to seconds (time) or bytes; 0 if unknown. Nsight Compute's units are SI
 * (Kbyte = 1000 bytes). */
static double unit_factor(const char *u, int time)
{
    static const struct {
        const char *u;
        double f;
    } T[] = {{"ns", 1e-9}, {"nsecond", 1e-9}, {"us", 1e-6},     {"usecond", 1e-6},
             {"ms", 1e-3}, {"msecond", 1e-3}, {"s", 1},         {"second", 1}},
      B[] = {{"byte", 1}, {"Kbyte", 1e3}, {"Mbyte", 1e6}, {"Gbyte", 1e9}, {"Tbyte", 1e12},
             {"KB", 1e3}, {"MB", 1e6},    {"GB", 1e9},    {"B", 1}};
    if (time) {
        for (size_t i = 0; i < sizeof T / sizeof T[0]; i++)
            if (!strcasecmp(u, T[i].u))
                return T[i].f;
    } else {
        for (size_t i = 0; i < sizeof B / sizeof B[0]; i++)
            if (!strcmp(u, B[i].u))
                return B[i].f;
    }
    return 0;
}

/* A field "1,632" (ncu groups thousands) as a number >= 0; -1 when it is not one. */
static double ncu_number(const char *s)
{
    char buf[64];
    size_t k = 0;
    for (; *s && k + 1 < sizeof buf; s++)
        if (*s != ',')
            buf[k++] = *s;
    buf[k] = 0;
    char *end;
    errno = 0;
    double v = strtod(buf, &end);
    if (end == buf || *end || errno || !isfinite(v) || v < 0)
        return -1;
    return v;
}

/* Skip lines that are not CSV records: ncu's log lines ("==PROF== ...", "==WARNING== ...") and
 * "#" comments, and blank lines; counts them into *line. */
static void skip_noise(char **p, int *line)
{
    while (**p == '=' || **p == '#' || **p == '\n' || **p == '\r') {
        char *nl = strchr(*p, '\n');
        *p = nl ? nl + 1 : *p + strlen(*p);
        (*line)++;
    }
}

static int load_ncu(char *text, const char *file, arena *a, trace *t, kt_err *e)
{
    char **f = malloc(NCU_MAX_FIELDS * sizeof *f);
    if (!f)
        return err_set(e, KT_EINTERNAL, file, NULL, "out of memory");
    int rc = -1, line = 0, cap = 0;
    char *p = text, where[32];
    skip_noise(&p, &line);
    line++;
    int nh = csv_record(&p, f, NCU_MAX_FIELDS, NULL);
    int c_name = -1, c_time = -1, c_rd = -1, c_wr = -1, c_metric = -1;
    for (int i = 0; i < nh && i < NCU_MAX_FIELDS; i++) {
        if (!strcmp(f[i], "Kernel Name"))
            c_name = i;
        else if (!strcmp(f[i], "gpu__time_duration.sum"))
            c_time = i;
        else if (!strcmp(f[i], "dram__bytes_read.sum"))
            c_rd = i;
        else if (!strcmp(f[i], "dram__bytes_write.sum"))
            c_wr = i;
        else if (!strcmp(f[i], "Metric Name"))
            c_metric = i;
    }
    snprintf(where, sizeof where, "line %d", line);
    if (nh < 1 || c_name < 0) {
        err_set(e, KT_EINPUT, file, NULL,
                "neither a torch.profiler Chrome trace (JSON) nor an Nsight Compute CSV (no "
                "\"Kernel Name\" column)");
        goto done;
    }
    if (c_metric >= 0) {
        err_set(e, KT_EINPUT, file, where,
                "one row per metric (ncu --page details); export with ncu --csv --page raw");
        goto done;
    }
    if (c_time < 0) {
        err_set(e, KT_EINPUT, file, where,
                "no \"gpu__time_duration.sum\" column (ncu --csv --page raw --metrics "
                "gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum)");
        goto done;
    }
    int ncols = nh;
    double ft = 1e-9, fr = 1, fw = 1; /* ncu's defaults: ns and bytes */
    t->has_bytes = c_rd >= 0 && c_wr >= 0;
    t->format = TRACE_NCU;
    for (;;) {
        skip_noise(&p, &line);
        if (!*p)
            break;
        line++;
        int n = csv_record(&p, f, NCU_MAX_FIELDS, NULL);
        snprintf(where, sizeof where, "line %d", line);
        if (n < 0) {
            err_set(e, KT_EINPUT, file, where, "unterminated quoted field");
            goto done;
        }
        if (n != ncols) {
            err_set(e, KT_EINPUT, file, where, "%d fields, the header has %d", n, ncols);
            goto done;
        }
        if (!f[c_name][0]) { /* the units row */
            ft = unit_factor(f[c_time], 1);
            if (!(ft > 0)) {
                err_set(e, KT_EINPUT, file, where, "unknown time unit \"%.40s\"", f[c_time]);
                goto done;
            }
            for (int k = 0; k < 2 && t->has_bytes; k++) {
                const char *u = f[k ? c_wr : c_rd];
                double *fx = k ? &fw : &fr;
                *fx = unit_factor(u, 0);
                if (!(*fx > 0)) {
                    err_set(e, KT_EINPUT, file, where, "unknown byte unit \"%.40s\"", u);
                    goto done;
                }
            }
            continue;
        }
        double v = ncu_number(f[c_time]);
        if (v < 0) {
            err_set(e, KT_EINPUT, file, where,
                    "gpu__time_duration.sum must be a number >= 0, got \"%.40s\"", f[c_time]);
            goto done;
        }
        if (t->n == cap) {
            cap = cap ? 2 * cap : 256;
            trace_kernel *m = arena_calloc(a, (size_t)cap, sizeof *m);
            if (!m) {
                err_set(e, KT_EINTERNAL, file, NULL, "out of memory");
                goto done;
            }
            if (t->n)
                memcpy(m, t->k, (size_t)t->n * sizeof *m);
            t->k = m;
        }
        trace_kernel *k = &t->k[t->n];
        k->name = arena_strdup(a, f[c_name]);
        k->start_s = -1;
        k->dur_s = v * ft;
        k->dram_read_bytes = k->dram_write_bytes = -1;
        for (int b = 0; b < 2 && t->has_bytes; b++) {
            const char *s = f[b ? c_wr : c_rd];
            double x = ncu_number(s);
            if (x < 0) {
                err_set(e, KT_EINPUT, file, where, "%s must be a number >= 0, got \"%.40s\"",
                        b ? "dram__bytes_write.sum" : "dram__bytes_read.sum", s);
                goto done;
            }
            *(b ? &k->dram_write_bytes : &k->dram_read_bytes) = llround(x * (b ? fw : fr));
        }
        if (!k->name) {
            err_set(e, KT_EINTERNAL, file, NULL, "out of memory");
            goto done;
        }
        t->n++;
    }
    if (!t->n) {
        err_set(e, KT_EINPUT, file, NULL, "no kernel rows");
        goto done;
    }
    rc = 0;
done:
    free(f);
    return rc;
}

int trace_load(const char *file, const char *range, arena *a, trace *t, kt_err *e)
{
    memset(t, 0, sizeof *t);
    size_t len = 0;
    char *text = io_read_file(file, TRACE_MAX_FILE_BYTES, &len, e);
    if (!text)
        return -1;
    int rc;
    if (len >= 2 && (unsigned char)text[0] == 0x1f && (unsigned char)text[1] == 0x8b) {
        rc = err_set(e, KT_EINPUT, file, NULL,
                     "gzip-compressed (torch.profiler's .json.gz); gunzip it first");
    } else if (strlen(text) != len) {
        rc = err_set(e, KT_EINPUT, file, NULL, "contains a NUL byte (not a text trace)");
    } else {
        const char *s = text;
        while (isspace((unsigned char)*s))
            s++;
        if (*s == '{' || *s == '[')
            rc = load_chrome(text, file, range, a, t, e);
        else if (range)
            rc = err_set(e, KT_EINPUT, file, "--range", "needs a Chrome trace (JSON); an ncu CSV "
                                                         "holds no CPU ranges");
        else
            rc = load_ncu(text, file, a, t, e);
    }
    free(text);
    return rc;
}
