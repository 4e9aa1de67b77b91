/* sweep: design-space sweep over hardware fields and workload parameters, one CSV row per
 * (point, execution model); threads, shards, resumable output. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../io/csv.h"
#include "../io/file.h"
#include "../io/jsonx.h"
#include "../model/run.h"
#include "../opt/ilp.h"
#include "../io/hw_json.h"
#include "../io/wl_json.h"
#include "cli.h"
#include "cmds.h"
#include "jobs.h"
#include "metrics.h"

static const char *const HELP =
    "usage: kitsune sweep --hw HW --workload WL|all --vary NAME=VALUES [--vary ...] [options]\n"
    "\n"
    "Cross product of the --vary lists over the workloads and modes; one CSV row per (point,\n"
    "execution model) with every varied input and every output. NAME is a parameter of the\n"
    "workload (applied like --set) or else a dotted field of the hw JSON (e.g. sm_count,\n"
    "l2.bandwidth_GBps, dram.bandwidth_GBps).\n"
    "VALUES: a list 54,108,216; multiples of the file's value x0.5,x1,x2; a geometric range\n"
    "32:4096:x2; an arithmetic range 1:10:+3.\n"
    "\n"
    "  --mode inference|training|both   (default inference)\n"
    "  --exec bsp|vf|kitsune|all        (default all; speedups need bsp and vf)\n"
    "  --jobs N                         N worker threads (output order does not depend on N)\n"
    "  --shard K/N                      only points with index % N == K (0 <= K < N)\n"
    "  -o FILE                          write FILE atomically; rows go to FILE.partial first\n"
    "  --resume                         with -o: keep the finished points of FILE.partial\n"
    "  --progress                       progress bar even when stderr is not a terminal\n"
    "  --set, --dtype, --power-cap, --select, --scheduler, --rest, --launch, --optimizer, --vf,\n"
    "  --vf-backward                    as for predict\n"
    "\n"
    "example: kitsune sweep --hw a100 --workload nerf --vary sm_count=54,108,216 --vary B=32:4096:x2\n";

enum { SW_MAX_VALUES = 1000000 };
/* Largest number of points one sweep may have (memory for per-point slots, 8 bytes each). */
#define SW_MAX_POINTS 100000000LL
/* Relative slack when a range's end is compared with accumulated steps (floating point). */
#define SW_RANGE_SLACK 1e-9
/* Progress bar refresh period (seconds): often enough to look live, rarely enough to be free. */
#define SW_PROGRESS_PERIOD_S 0.1
/* Largest partial file --resume reads (bytes). */
#define SW_MAX_PARTIAL_BYTES ((size_t)16 << 30)
/* Progress bar width in characters. */
#define SW_BAR_CHARS 30

/* One --vary: values with a per-value "multiple of the file's value" flag. */
typedef struct sw_vary {
    char name[64];
    int is_param;
    int n, cap;
    double *v;
    int *mult;
    double hw_base; /* hw fields: the file's value */
} sw_vary;

/* One (workload, mode) block of points. */
typedef struct sw_block {
    const char *wl;          /* workload name as shown in the CSV */
    const cJSON *root;       /* parsed workload file */
    const char *file;
    int training;
    const wl_graph *base;    /* loaded with --set only: parameter defaults for "x" values */
} sw_block;

typedef struct sw_ctx {
    const cli_common *c;
    const cJSON *hw_root;
    const char *hw_file;
    const hw_gpu *hw;        /* when no hw field varies */
    int has_hw_vary;
    sw_vary *vary;
    int nvary;
    sw_block *blk;
    int nblk;
    long long ncombo, npoints;
    int nexec;
} sw_ctx;

typedef struct sw_thread_state {
    cJSON *hw_root; /* private copy when hw fields vary */
    arena a;
} sw_thread_state;

static int vary_fail(kt_err *e, const char *spec, const char *why)
{
    return err_set(e, KT_EINPUT, NULL, "--vary", "%s in \"%s\"", why, spec);
}

static int parse_double(const char *s, double *v)
{
    char *end;
    errno = 0;
    *v = strtod(s, &end);
    return (end == s || *end || errno || !isfinite(*v)) ? -1 : 0;
}

static int push_value(sw_vary *y, double v, int mult, const char *spec, kt_err *e)
{
    if (y->n >= SW_MAX_VALUES)
        return vary_fail(e, spec, "too many values");
    if (y->n == y->cap) {
        int cap = y->cap ? 2 * y->cap : 8;
        y->cap = cap;
        double *nv = realloc(y->v, (size_t)cap * sizeof *nv);
        if (!nv)
            return err_set(e, KT_EINTERNAL, NULL, NULL, "out of memory");
        y->v = nv;
        int *nm = realloc(y->mult, (size_t)cap * sizeof *nm);
        if (!nm)
            return err_set(e, KT_EINTERNAL, NULL, NULL, "out of memory");
        y->mult = nm;
    }
    y->v[y->n] = v;
    y->mult[y->n] = mult;
    y->n++;
    return 0;
}

/* NAME=LIST | NAME=A:B:xK | NAME=A:B:+K; list items "V" or "xV" (multiple of the file's value). */
static int parse_vary(const char *spec, sw_vary *y, kt_err *e)
{
    memset(y, 0, sizeof *y);
    const char *eq = strchr(spec, '=');
    if (!eq || eq == spec || (size_t)(eq - spec) >= sizeof y->name || !eq[1])
        return vary_fail(e, spec, "expected NAME=VALUES");
    snprintf(y->name, sizeof y->name, "%.*s", (int)(eq - spec), spec);
    for (const char *p = y->name; *p; p++)
        if (!(*p == '.' || *p == '_' || (*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z') ||
              (*p >= 'A' && *p <= 'Z')))
            return vary_fail(e, spec, "invalid name");
    char buf[512];
    snprintf(buf, sizeof buf, "%s", eq + 1);
    if (strchr(buf, ':')) {
        char *a = buf, *b = strchr(a, ':');
        *b++ = 0;
        char *s = strchr(b, ':');
        if (!s)
            return vary_fail(e, spec, "a range needs START:END:xFACTOR or START:END:+STEP");
        *s++ = 0;
        double lo, hi, step;
        int geo = s[0] == 'x' || s[0] == '*';
        if (!geo && s[0] != '+')
            return vary_fail(e, spec, "the step must start with x (geometric) or + (arithmetic)");
        if (parse_double(a, &lo) || parse_double(b, &hi) || parse_double(s + 1, &step))
            return vary_fail(e, spec, "expected numbers");
        if (hi < lo)
            return vary_fail(e, spec, "the end is below the start");
        if (geo ? !(step > 1 && lo > 0) : !(step > 0))
            return vary_fail(e, spec, geo ? "need a factor > 1 and a start > 0" : "need a step > 0");
        for (long long k = 0;; k++) {
            double v = geo ? lo * pow(step, (double)k) : lo + step * (double)k;
            if (v > hi * (1 + SW_RANGE_SLACK) + (hi == 0 ? SW_RANGE_SLACK : 0))
                break;
            if (push_value(y, v, 0, spec, e))
                return -1;
        }
        return 0;
    }
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int mult = tok[0] == 'x' || tok[0] == '*';
        double v;
        if (parse_double(tok + mult, &v))
            return vary_fail(e, spec, "expected a number or xFACTOR");
        if (push_value(y, v, mult, spec, e))
            return -1;
    }
    if (!y->n)
        return vary_fail(e, spec, "no values");
    return 0;
}

/* The number at a dotted path of a JSON tree; 0, or -1 when it is not a numeric leaf. */
static int json_get(const cJSON *root, const char *dotted, double *v)
{
    char buf[192];
    snprintf(buf, sizeof buf, "%s", dotted);
    const cJSON *cur = root;
    char *save = NULL;
    for (char *tok = strtok_r(buf, ".", &save); tok; tok = strtok_r(NULL, ".", &save)) {
        if (!cJSON_IsObject(cur))
            return -1;
        cur = cJSON_GetObjectItemCaseSensitive(cur, tok);
        if (!cur)
            return -1;
    }
    if (!cJSON_IsNumber(cur))
        return -1;
    *v = cur->valuedouble;
    return 0;
}

static int has_param(const wl_graph *g, const char *name)
{
    for (int i = 0; i < g->nparam; i++)
        if (!strcmp(g->param[i].name, name))
            return 1;
    return 0;
}

/* Decode point p into its block and value indices (last --vary varies fastest). */
static const sw_block *decode(const sw_ctx *x, long long p, int *idx)
{
    long long combo = p % x->ncombo;
    for (int k = x->nvary - 1; k >= 0; k--) {
        idx[k] = (int)(combo % x->vary[k].n);
        combo /= x->vary[k].n;
    }
    return &x->blk[p / x->ncombo];
}

/* Effective value of vary k at value index i for a block (params: integers). */
static int vary_value(const sw_ctx *x, const sw_block *b, int k, int i, double *out, kt_err *e)
{
    const sw_vary *y = &x->vary[k];
    double v = y->v[i];
    if (y->is_param) {
        if (y->mult[i])
            v = round(v * (double)wl_param(b->base, y->name, 0));
        if (v != floor(v) || fabs(v) > 9.0e15)
            return err_set(e, KT_EINPUT, NULL, "--vary", "parameter \"%s\" needs integers, got %g",
                           y->name, v);
    } else if (y->mult[i]) {
        v *= y->hw_base;
    }
    *out = v;
    return 0;
}

static void write_header(FILE *f, const sw_ctx *x)
{
    fputs("point,workload,mode", f);
    for (int k = 0; k < x->nvary; k++)
        fprintf(f, ",%s", x->vary[k].name);
    fputs(",exec,time_s,speedup_vs_bsp,speedup_vs_vf,flops,dram_read_bytes,dram_write_bytes,"
          "dram_bytes,energy_J,avg_power_W,clock_MHz,kernels,ops_total,ops_covered",
          f);
    if (x->c->opts.power_cap_W > 0)
        fputs(",power_cap_W,capped_time_s,capped_energy_J,capped_avg_power_W,capped_clock_MHz,"
              "capped_speedup_vs_bsp",
              f);
    fputc('\n', f);
}

/* Evaluate point p: all requested execution models; the CSV rows into *rows (malloc'd). */
static int eval_point(void *vx, void *vts, long long p, char **rows, kt_err *e)
{
    const sw_ctx *x = vx;
    sw_thread_state *ts = vts;
    int idx[CLI_MAX_VARY];
    double val[CLI_MAX_VARY];
    const sw_block *b = decode(x, p, idx);
    const cli_common *c = x->c;
    wl_set sets[CLI_MAX_SETS + CLI_MAX_VARY];
    int nsets = 0;
    for (int i = 0; i < c->nsets; i++)
        sets[nsets++] = c->sets[i];
    hw_gpu hwv;
    const hw_gpu *hw = x->hw;
    for (int k = 0; k < x->nvary; k++) {
        if (vary_value(x, b, k, idx[k], &val[k], e))
            return -1;
        if (x->vary[k].is_param) {
            sets[nsets].name = x->vary[k].name;
            sets[nsets].value = (int64_t)val[k];
            nsets++;
        } else if (jsonx_set_number(ts->hw_root, x->vary[k].name, val[k], 0, x->hw_file, e)) {
            return -1;
        }
    }
    if (x->has_hw_vary) {
        if (hw_from_json(ts->hw_root, x->hw_file, &hwv, e))
            return -1;
        hw = &hwv;
    }
    wl_graph g;
    kt_run_result rr;
    kt_opts o = c->opts;
    o.training = b->training;
    int rc = wl_from_json(b->root, b->file, sets, nsets, b->training, &ts->a, &g, e) ||
             (c->dtype_given && wl_set_float_dtype(&g, c->dtype, e)) ||
             kt_run(hw, &g, &o, &ts->a, &rr, e);
    if (rc) {
        arena_free(&ts->a);
        return -1;
    }
    const kt_result *const *by = rr.by, *const *cap = rr.capped_by;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) {
        arena_free(&ts->a);
        return err_set(e, KT_EINTERNAL, NULL, NULL, "out of memory");
    }
    for (int s = 0; s < EX_COUNT; s++) {
        const kt_result *r = by[s];
        if (!r)
            continue;
        fprintf(f, "%lld,%s,%s", p, b->wl, cli_mode_name(b->training));
        for (int k = 0; k < x->nvary; k++)
            fprintf(f, ",%.9g", val[k]);
        fprintf(f, ",%s", r->exec);
        csv_num(f, r->time_s);
        csv_num(f, mx_speedup(by[EX_BSP], r));
        csv_num(f, mx_speedup(by[EX_VF], r));
        fprintf(f, ",%lld,%lld,%lld,%lld", (long long)r->flops, (long long)r->dram_read_bytes,
                (long long)r->dram_write_bytes,
                (long long)(r->dram_read_bytes + r->dram_write_bytes));
        csv_num(f, r->energy_J);
        csv_num(f, r->avg_power_W);
        csv_num(f, r->clock_MHz);
        fprintf(f, ",%d,%d,%d", r->kernels, r->ops_total, r->ops_covered);
        if (o.power_cap_W > 0) {
            csv_num(f, o.power_cap_W);
            csv_num(f, cap[s]->time_s);
            csv_num(f, cap[s]->energy_J);
            csv_num(f, cap[s]->avg_power_W);
            csv_num(f, cap[s]->clock_MHz);
            csv_num(f, mx_speedup(cap[EX_BSP], cap[s]));
        }
        fputc('\n', f);
    }
    arena_free(&ts->a);
    if (fclose(f) || !buf) {
        free(buf);
        return err_set(e, KT_EINTERNAL, NULL, NULL, "out of memory");
    }
    *rows = buf;
    return 0;
}

/* ---- per-worker state: a private hw JSON tree (when hw fields vary) and an arena ---- */
static void *state_new(void *vx, kt_err *e)
{
    const sw_ctx *x = vx;
    sw_thread_state *ts = calloc(1, sizeof *ts);
    if (ts && x->has_hw_vary && !(ts->hw_root = cJSON_Duplicate(x->hw_root, 1))) {
        free(ts);
        ts = NULL;
    }
    if (!ts)
        err_set(e, KT_EINTERNAL, NULL, NULL, "out of memory");
    return ts;
}

static void state_free(void *vts)
{
    sw_thread_state *ts = vts;
    cJSON_Delete(ts->hw_root);
    arena_free(&ts->a);
    free(ts);
    ilp_thread_release(); /* GLPK's per-thread environment */
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void progress(long long done, long long total, long long computed, double t0, int final)
{
    double el = now_s() - t0;
    double rate = el > 0 ? (double)computed / el : 0;
    double left = rate > 0 ? (double)(total - done) / rate : 0;
    int fill = total ? (int)((double)SW_BAR_CHARS * (double)done / (double)total) : SW_BAR_CHARS;
    char bar[SW_BAR_CHARS + 1];
    for (int i = 0; i < SW_BAR_CHARS; i++)
        bar[i] = i < fill ? '#' : '.';
    bar[SW_BAR_CHARS] = 0;
    fprintf(stderr, "\r[%s] %lld/%lld points %5.1f%%  %.0f points/s  %.1f s left ", bar, done,
            total, total ? 100.0 * (double)done / (double)total : 100.0, rate, left);
    if (final)
        fputc('\n', stderr);
    fflush(stderr);
}

/* ---- resume: rows of complete points already in FILE.partial ---- */
typedef struct sw_kept {
    long long point;
    size_t off, len;
} sw_kept;

/* Index the complete points of a partial file (header must match): a point counts only when all
 * of its nexec rows are there with their newlines. kept is malloc'd, ascending by point. */
static int scan_partial(const char *buf, size_t len, const char *header, int nexec,
                        sw_kept **kept, long long *nkept, const char *file, kt_err *e)
{
    *kept = NULL;
    *nkept = 0;
    size_t hl = strlen(header);
    if (len < hl || memcmp(buf, header, hl))
        return err_set(e, KT_EINPUT, file, NULL,
                       "its header differs from this sweep's (remove it, or run the same sweep)");
    long long cap = 0;
    size_t pos = hl;
    long long cur = -1;
    size_t start = pos;
    int rows = 0;
    while (pos < len) {
        const char *nl = memchr(buf + pos, '\n', len - pos);
        if (!nl)
            break; /* torn last line */
        char *end;
        long long p = strtoll(buf + pos, &end, 10);
        if (end == buf + pos || *end != ',' || p < 0)
            break;
        if (p != cur) {
            cur = p;
            start = pos;
            rows = 0;
        }
        rows++;
        pos = (size_t)(nl - buf) + 1;
        if (rows == nexec) {
            if (*nkept >= cap) {
                cap = cap ? 2 * cap : 1024;
                sw_kept *nk = realloc(*kept, (size_t)cap * sizeof *nk);
                if (!nk) {
                    free(*kept);
                    *kept = NULL;
                    return err_set(e, KT_EINTERNAL, NULL, NULL, "out of memory");
                }
                *kept = nk;
            }
            if (*nkept && (*kept)[*nkept - 1].point >= p)
                break; /* not ascending: stop trusting the file here */
            (*kept)[(*nkept)++] = (sw_kept){p, start, pos - start};
        }
    }
    return 0;
}

static const sw_kept *find_kept(const sw_kept *k, long long n, long long p)
{
    long long lo = 0, hi = n;
    while (lo < hi) {
        long long mid = (lo + hi) / 2;
        if (k[mid].point < p)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && k[lo].point == p ? &k[lo] : NULL;
}

static int header_string(const sw_ctx *x, char **out)
{
    size_t len;
    FILE *f = open_memstream(out, &len);
    if (!f)
        return -1;
    write_header(f, x);
    return fclose(f) ? -1 : 0;
}

/* ---- setup ---- */
typedef struct sw_setup {
    sw_ctx x;
    sw_vary vary[CLI_MAX_VARY];
    sw_block blk[2 * CLI_MAX_WL];
    cJSON *wl_root[CLI_MAX_WL];
    char wl_file[CLI_MAX_WL][PATH_MAX];
    char wl_name[CLI_MAX_WL][64];
    cJSON *hw_root;
    char hw_file[PATH_MAX];
    hw_gpu hw;
    arena a;
} sw_setup;

static void setup_free(sw_setup *s)
{
    for (int k = 0; k < CLI_MAX_VARY; k++) {
        free(s->vary[k].v);
        free(s->vary[k].mult);
    }
    for (int i = 0; i < CLI_MAX_WL; i++)
        cJSON_Delete(s->wl_root[i]);
    cJSON_Delete(s->hw_root);
    arena_free(&s->a);
}

static int setup(const cli_common *c, sw_setup *s, kt_err *e)
{
    sw_ctx *x = &s->x;
    x->c = c;
    x->vary = s->vary;
    x->blk = s->blk;
    if (!c->hw)
        return err_set(e, KT_EINPUT, NULL, "--hw", "missing (e.g. --hw a100)");
    if (cli_resolve("hw", c->hw, s->hw_file, sizeof s->hw_file, e))
        return -1;
    char hw_dir[PATH_MAX];
    cli_hw_dir(hw_dir, sizeof hw_dir);
    /* hw_load_dir names the file of a base chain at fault; the tree is what --vary edits */
    if (hw_load_dir(s->hw_file, hw_dir, &s->hw, e) ||
        !(s->hw_root = hw_json_load(s->hw_file, hw_dir, e)))
        return -1;
    x->hw_root = s->hw_root;
    x->hw_file = s->hw_file;
    x->hw = &s->hw;
    /* workloads */
    static char names[CLI_MAX_WL][64];
    int nwl = 0;
    for (int i = 0; i < c->nworkload; i++) {
        if (!strcmp(c->workload[i], "all")) {
            nwl = cli_list_dir("workloads", names, CLI_MAX_WL);
            break;
        }
        snprintf(names[nwl++], 64, "%s", c->workload[i]);
    }
    if (!nwl)
        return err_set(e, KT_EINPUT, NULL, "--workload", "missing (e.g. --workload nerf or all)");
    for (int w = 0; w < nwl; w++) {
        if (cli_resolve("workloads", names[w], s->wl_file[w], sizeof s->wl_file[w], e))
            return -1;
        if (!(s->wl_root[w] = jsonx_load(s->wl_file[w], e)))
            return -1;
        for (int m = 1; m <= 2; m++) {
            if (!(c->modes & m))
                continue;
            wl_graph *g = arena_calloc(&s->a, 1, sizeof *g);
            if (!g)
                return err_set(e, KT_EINTERNAL, NULL, NULL, "out of memory");
            if (wl_from_json(s->wl_root[w], s->wl_file[w], c->sets, c->nsets, m == 2, &s->a, g, e) ||
                (c->dtype_given && wl_set_float_dtype(g, c->dtype, e)))
                return -1;
            snprintf(s->wl_name[w], 64, "%s", g->name);
            if (m == 2 && g->inference_only && (nwl > 1 || c->modes == 3))
                continue; /* a decode step has no training graph */
            sw_block *b = &s->blk[x->nblk++];
            b->wl = s->wl_name[w];
            b->root = s->wl_root[w];
            b->file = s->wl_file[w];
            b->training = m == 2;
            b->base = g;
        }
    }
    /* varies: a parameter of the workload, else a numeric hw field */
    x->nvary = c->nvary;
    x->ncombo = 1;
    for (int k = 0; k < c->nvary; k++) {
        sw_vary *y = &s->vary[k];
        if (parse_vary(c->vary[k], y, e))
            return -1;
        for (int j = 0; j < k; j++)
            if (!strcmp(s->vary[j].name, y->name))
                return vary_fail(e, c->vary[k], "the same name is varied twice");
        int in_any = 0, in_all = 1;
        const char *missing = NULL;
        for (int b = 0; b < x->nblk; b++) {
            if (has_param(x->blk[b].base, y->name))
                in_any = 1;
            else if (in_all) {
                in_all = 0;
                missing = x->blk[b].wl;
            }
        }
        if (in_any && !in_all)
            return err_set(e, KT_EINPUT, NULL, "--vary",
                           "workload \"%s\" has no parameter \"%s\" (the others have it)", missing,
                           y->name);
        if (in_any) {
            y->is_param = 1;
        } else if (json_get(s->hw_root, y->name, &y->hw_base) == 0) {
            x->has_hw_vary = 1;
        } else {
            return err_set(e, KT_EINPUT, NULL, "--vary",
                           "\"%s\" is neither a parameter of workload \"%s\" nor a numeric field "
                           "of %s",
                           y->name, x->blk[0].wl, s->hw_file);
        }
        x->ncombo *= y->n;
        if (x->ncombo > SW_MAX_POINTS)
            return err_set(e, KT_EINPUT, NULL, "--vary", "more than %lld points",
                           (long long)SW_MAX_POINTS);
    }
    x->npoints = x->ncombo * x->nblk;
    if (x->npoints > SW_MAX_POINTS)
        return err_set(e, KT_EINPUT, NULL, "--vary", "more than %lld points",
                       (long long)SW_MAX_POINTS);
    int m = c->opts.exec_mask;
    x->nexec = !!(m & EXEC_BSP) + !!(m & EXEC_VF) + !!(m & EXEC_KITSUNE);
    return 0;
}

static int run_sweep(sw_setup *s, const cli_common *c, kt_err *e)
{
    sw_ctx *x = &s->x;
    int shard_n = c->shard_n ? c->shard_n : 1, shard_k = c->shard_n ? c->shard_k : 0;
    char *header = NULL, *old = NULL;
    sw_kept *kept = NULL;
    long long nkept = 0, ntodo = 0;
    long long *todo = NULL;
    jobs *jb = NULL;
    int rc = -1;
    char partial[PATH_MAX + 16];
    FILE *f = NULL;
    if (header_string(x, &header))
        return err_set(e, KT_EINTERNAL, NULL, NULL, "out of memory");
    if (c->resume && !c->out_path) {
        err_set(e, KT_EINPUT, NULL, "--resume", "needs -o FILE (it continues FILE.partial)");
        goto done;
    }
    if (c->out_path) {
        snprintf(partial, sizeof partial, "%s.partial", c->out_path);
        if (c->resume && access(partial, F_OK) == 0) {
            size_t len = 0;
            kt_err re;
            if (!(old = io_read_file(partial, SW_MAX_PARTIAL_BYTES, &len, &re)) ||
                scan_partial(old, len, header, x->nexec, &kept, &nkept, partial, e)) {
                if (!old)
                    *e = re;
                goto done;
            }
        }
        f = fopen(partial, "w");
        if (!f) {
            err_set(e, KT_EINPUT, partial, NULL, "cannot create: %s", strerror(errno));
            goto done;
        }
    } else {
        f = stdout;
    }
    long long total = x->npoints > shard_k ? (x->npoints - shard_k + shard_n - 1) / shard_n : 0;
    todo = malloc((size_t)(total ? total : 1) * sizeof *todo);
    if (!todo) {
        err_set(e, KT_EINTERNAL, NULL, NULL, "out of memory");
        goto done;
    }
    for (long long p = shard_k; p < x->npoints; p += shard_n)
        if (!find_kept(kept, nkept, p))
            todo[ntodo++] = p;
    jobs_spec js = {todo, ntodo, c->jobs, x, eval_point, state_new, state_free};
    if (!(jb = jobs_start(&js, e)))
        goto done;
    int show = c->progress || isatty(STDERR_FILENO);
    double t0 = now_s(), last = 0;
    fputs(header, f);
    long long j = 0, done_points = 0;
    int failed = 0;
    for (long long p = shard_k; p < x->npoints && !failed; p += shard_n) {
        const sw_kept *k = find_kept(kept, nkept, p);
        if (k) {
            fwrite(old + k->off, 1, k->len, f);
        } else {
            char *rows = NULL;
            failed = jobs_take(jb, j, &rows) != 0;
            if (rows) {
                fputs(rows, f);
                free(rows);
            }
            j++;
        }
        if (failed)
            break;
        fflush(f);
        done_points++;
        if (show && now_s() - last >= SW_PROGRESS_PERIOD_S) {
            last = now_s();
            progress(done_points, total, j, t0, 0);
        }
    }
    if (show)
        progress(done_points, total, j, t0, 1);
    kt_err we;
    err_clear(&we);
    long long fail_at = jobs_failure(jb, &we);
    jobs_end(jb);
    jb = NULL;
    if (failed || fail_at >= 0) {
        /* name the point that failed, then the model's own message */
        long long p = todo[fail_at >= 0 ? fail_at : 0];
        int idx[CLI_MAX_VARY];
        const sw_block *b = decode(x, p, idx);
        char where[512];
        int n = snprintf(where, sizeof where, "point %lld (%s, %s", p, b->wl,
                         cli_mode_name(b->training));
        for (int k = 0; k < x->nvary && n > 0 && n < (int)sizeof where; k++) {
            double v = 0;
            kt_err e2;
            vary_value(x, b, k, idx[k], &v, &e2);
            n += snprintf(where + n, sizeof where - (size_t)n, ", %s=%.9g", x->vary[k].name, v);
        }
        err_set(e, we.code ? we.code : KT_EINTERNAL, we.file, we.path, "%.150s): %.160s", where,
                we.msg);
        goto done;
    }
    if (f != stdout) {
        int bad = ferror(f);
        if (fclose(f))
            bad = 1;
        f = NULL;
        if (bad) {
            err_set(e, KT_EINTERNAL, partial, NULL, "write failed");
            goto done;
        }
        if (rename(partial, c->out_path)) {
            err_set(e, KT_EINPUT, c->out_path, NULL, "cannot write: %s", strerror(errno));
            goto done;
        }
    } else {
        fflush(stdout);
    }
    rc = 0;
done:
    jobs_end(jb);
    if (f && f != stdout)
        fclose(f); /* the partial file stays for --resume */
    free(todo);
    free(kept);
    free(old);
    free(header);
    return rc;
}

static int run(cli_ctx *x)
{
    static sw_setup s;
    memset(&s, 0, sizeof s);
    int rc = setup(&x->c, &s, &x->e) || run_sweep(&s, &x->c, &x->e) ? -1 : 0;
    setup_free(&s);
    return rc;
}

const cli_command cmd_sweep = {
    "sweep", "design-space sweep over hardware fields and workload parameters (CSV)", HELP,
    O_MODEL | O_EXEC | O_OUT | O_VARY | O_JOBS | O_SHARD | O_RESUME | O_PROGRESS, 0, run,
    O_WL | O_MODE};
