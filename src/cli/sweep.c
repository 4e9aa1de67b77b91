/* sweep: design-space sweep over hardware fields and workload parameters, one CSV row per
 * (point, execution model); threads, shards, resumable output. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <pthread.h>

#include "../io/csv.h"
#include "../io/file.h"
#include "../io/jsonx.h"
#include "../model/graph.h"
#include "../model/lint.h"
#include "../io/outfile.h"
#include "../model/run.h"
#include "../opt/ilp.h"
#include "../io/hw_json.h"
#include "../io/wl_json.h"
#include "cli.h"
#include "cmds.h"
#include "jobs.h"
#include "metrics.h"

static const char *const HELP =
    "usage: kitsune sweep --hw HW [--hw HW]... --workload WL|all --vary NAME=VALUES [--vary ...]\n"
    "                     [--zip NAME=VALUES --zip NAME=VALUES ...] [options]\n"
    "\n"
    "Cross product of the GPUs, workloads, modes, each --vary list and the --zip lists; one CSV\n"
    "row per (point, execution model) with every varied input and every output. NAME is a\n"
    "parameter of the workload (applied like --set) or else a dotted field of the hw JSON (e.g.\n"
    "sm_count, l2.bandwidth_GBps, dram.bandwidth_GBps).\n"
    "VALUES: a list 54,108,216; multiples of the file's value x0.5,x1,x2 (of each GPU's own value);\n"
    "a geometric range 32:4096:x2; an arithmetic range 1:10:+3.\n"
    "--zip fields vary together, as one axis of the cross product: their lists need the same\n"
    "length, and point i takes the i-th value of each (2x SMs with 2x L2 bandwidth: --zip\n"
    "sm_count=x1,x2 --zip l2.bandwidth_GBps=x1,x2).\n"
    "Several --hw: the GPU is an axis too (outermost) and the CSV's hw column names it.\n"
    "Columns: point,hw,workload,mode,<varied inputs>,exec,time_s,speedup_vs_bsp,speedup_vs_vf,\n"
    "flops,dram_read_bytes,dram_write_bytes,dram_bytes,traffic_reduction_frac,energy_J,\n"
    "avg_power_W,clock_MHz,kernels,ops_total,ops_covered,coverage_frac[,power_cap_W,capped_*].\n"
    "\n"
    "  --mode inference|training|both   (default inference)\n"
    "  --exec bsp|vf|kitsune|all        (default all; speedups need bsp and vf)\n"
    "  --jobs N                         N worker threads (default: one per CPU, nproc, at most 64;\n"
    "                                   the output does not depend on N)\n"
    "  --shard K/N                      only points with index % N == K (0 <= K < N)\n"
    "  -o FILE                          write FILE atomically; rows go to FILE.partial first\n"
    "  --resume                         with -o: keep the finished points of FILE.partial\n"
    "  --progress                       progress bar even when stderr is not a terminal\n"
    "  --power-policy scaled|fixed|none power of a part with another sm_count than the file's:\n"
    "                                   scaled (default) multiplies TDP, static and idle power\n"
    "                                   by SMs / the file's SMs; fixed keeps the file's TDP; none\n"
    "                                   lifts the board limit (columns power_policy, tdp_W)\n"
    "  --set, --dtype, --power-cap, --select, --scheduler, --rest, --launch, --optimizer, --vf,\n"
    "  --vf-backward                    as for predict\n"
    "Warnings (stderr) as for predict; points whose footprint exceeds the GPU's memory are\n"
    "counted in one warning at the end.\n"
    "\n"
    "examples: kitsune sweep --hw a100 --workload nerf --vary sm_count=54,108,216 --vary B=32:4096:x2\n"
    "          kitsune sweep --hw a100 --hw h100 --workload all --zip sm_count=x1,x2 \\\n"
    "                        --zip l2.bandwidth_GBps=x1,x2\n";

enum { SW_MAX_VALUES = 1000000 };
/* Largest number of points one sweep may have (memory for per-point slots, 8 bytes each). */
#define SW_MAX_POINTS 100000000LL
/* Relative slack when a range's end is compared with accumulated steps (floating point). */
#define SW_RANGE_SLACK 1e-9
/* Progress bar refresh period (seconds): often enough to look live, rarely enough to be free. */
#define SW_PROGRESS_PERIOD_S 0.1
/* Progress bar width in characters. */
#define SW_BAR_CHARS 30
/* Worker threads without --jobs: one per CPU (jobs_cpus), at most this many (each holds a run's
 * memory). */
enum { SW_JOBS_DEFAULT_MAX = 64 };

/* One --vary or --zip: values with a per-value "multiple of the file's value" flag. */
typedef struct sw_vary {
    char name[64];
    int is_param;
    int is_zip;
    int axis;       /* the cross-product axis it moves along (all --zip share one) */
    int n, cap;
    double *v;
    int *mult;
    double hw_base[CLI_MAX_HW]; /* hw fields: each GPU file's value */
} sw_vary;

/* One GPU of the sweep (--hw is repeatable: the GPU is the outermost axis). */
typedef struct sw_hw {
    char file[PATH_MAX];
    cJSON *root;             /* the file with its "base" chain merged: what --vary edits */
    hw_gpu hw;               /* as loaded: used when no hw field varies */
} sw_hw;

/* Points whose footprint exceeds their GPU's memory (a warning after the sweep). */
typedef struct sw_mem {
    pthread_mutex_t mu;
    long long over, first;   /* count, and the lowest such point (-1: none) */
} sw_mem;

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
    sw_hw *hw;
    int nhw;
    int has_hw_vary;
    sw_vary *vary;
    int nvary;
    int axis_n[CLI_MAX_VARY]; /* values along each axis */
    int axis_timing[CLI_MAX_VARY]; /* 0: the axis moves only energy, power and DVFS fields of
                                      every GPU (points along it share their runs: same_group) */
    int naxes;
    sw_block *blk;
    int nblk;
    long long ncombo, npoints;
    int nexec;
    sw_mem *mem;
} sw_ctx;

/* A worker's state. Consecutive points it evaluates share what their inputs share
 * (eval_point): the prepared workload while the block and the workload parameters stay, and the
 * runs before energy (kt_run_times) while the GPU also differs at most in energy, power and DVFS
 * fields (hw_same_timing). */
typedef struct sw_thread_state {
    cJSON *hw_root[CLI_MAX_HW]; /* private copies when hw fields vary */
    arena a;                    /* one point's memory, released after it */
    long long over, first;      /* folded into sw_ctx.mem when the worker ends */
    sw_mem *mem;
    /* the prepared workload: block prep_blk with parameter values prep_set (memory a_prep) */
    arena a_prep;
    const sw_block *prep_blk;   /* NULL: none */
    int nprep_set;
    int64_t prep_set[CLI_MAX_VARY];
    wl_graph prep_fwd;
    kt_prep prep;
    graph_mem prep_mem;
    /* the runs before energy of prep on time_hw (memory a_time; time_ok: valid) */
    arena a_time;
    int time_ok;
    hw_gpu time_hw;
    kt_run_result times;
} sw_thread_state;

static int vary_fail(kt_err *e, const char *opt, const char *spec, const char *why)
{
    return err_set(e, KT_EINPUT, NULL, opt, "%s in \"%s\"", why, spec);
}

/* The option a spec came from, for messages. */
static const char *vary_opt(const sw_vary *y)
{
    return y->is_zip ? "--zip" : "--vary";
}

static int parse_double(const char *s, double *v)
{
    char *end;
    errno = 0;
    *v = strtod(s, &end);
    return (end == s || *end || errno || !isfinite(*v)) ? -1 : 0;
}

static int push_value(sw_vary *y, double v, int mult, const char *opt, const char *spec,
                      kt_err *e)
{
    if (y->n >= SW_MAX_VALUES)
        return vary_fail(e, opt, spec, "too many values");
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
static int parse_vary(const char *spec, const char *opt, sw_vary *y, kt_err *e)
{
    memset(y, 0, sizeof *y);
    const char *eq = strchr(spec, '=');
    if (!eq || eq == spec || (size_t)(eq - spec) >= sizeof y->name || !eq[1])
        return vary_fail(e, opt, spec, "expected NAME=VALUES");
    snprintf(y->name, sizeof y->name, "%.*s", (int)(eq - spec), spec);
    for (const char *p = y->name; *p; p++)
        if (!(*p == '.' || *p == '_' || (*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z') ||
              (*p >= 'A' && *p <= 'Z')))
            return vary_fail(e, opt, spec, "invalid name");
    char buf[512];
    snprintf(buf, sizeof buf, "%s", eq + 1);
    if (strchr(buf, ':')) {
        char *a = buf, *b = strchr(a, ':');
        *b++ = 0;
        char *s = strchr(b, ':');
        if (!s)
            return vary_fail(e, opt, spec, "a range needs START:END:xFACTOR or START:END:+STEP");
        *s++ = 0;
        double lo, hi, step;
        int geo = s[0] == 'x' || s[0] == '*';
        if (!geo && s[0] != '+')
            return vary_fail(e, opt, spec, "the step must start with x (geometric) or + (arithmetic)");
        if (parse_double(a, &lo) || parse_double(b, &hi) || parse_double(s + 1, &step))
            return vary_fail(e, opt, spec, "expected numbers");
        if (hi < lo)
            return vary_fail(e, opt, spec, "the end is below the start");
        if (geo ? !(step > 1 && lo > 0) : !(step > 0))
            return vary_fail(e, opt, spec, geo ? "need a factor > 1 and a start > 0" : "need a step > 0");
        for (long long k = 0;; k++) {
            double v = geo ? lo * pow(step, (double)k) : lo + step * (double)k;
            if (v > hi * (1 + SW_RANGE_SLACK) + (hi == 0 ? SW_RANGE_SLACK : 0))
                break;
            if (push_value(y, v, 0, opt, spec, e))
                return -1;
        }
        return 0;
    }
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int mult = tok[0] == 'x' || tok[0] == '*';
        double v;
        if (parse_double(tok + mult, &v))
            return vary_fail(e, opt, spec, "expected a number or xFACTOR");
        if (push_value(y, v, mult, opt, spec, e))
            return -1;
    }
    if (!y->n)
        return vary_fail(e, opt, spec, "no values");
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

/* Decode point p into its GPU, block and value indices: GPUs outermost, then (workload, mode)
 * blocks, then the axes (the last varies fastest; the --zip fields share one axis). */
static const sw_block *decode(const sw_ctx *x, long long p, int *hwi, int *idx)
{
    long long combo = p % x->ncombo, at[CLI_MAX_VARY];
    for (int a = x->naxes - 1; a >= 0; a--) {
        at[a] = combo % x->axis_n[a];
        combo /= x->axis_n[a];
    }
    for (int k = 0; k < x->nvary; k++)
        idx[k] = (int)at[x->vary[k].axis];
    *hwi = (int)(p / (x->ncombo * x->nblk));
    return &x->blk[(p / x->ncombo) % x->nblk];
}

/* Effective value of vary k at value index i for a block on GPU hwi (params: integers). */
static int vary_value(const sw_ctx *x, int hwi, const sw_block *b, int k, int i, double *out,
                      kt_err *e)
{
    const sw_vary *y = &x->vary[k];
    double v = y->v[i];
    if (y->is_param) {
        if (y->mult[i])
            v = round(v * (double)wl_param(b->base, y->name, 0));
        if (v != floor(v) || fabs(v) > 9.0e15)
            return err_set(e, KT_EINPUT, NULL, vary_opt(y),
                           "parameter \"%s\" needs integers, got %g", y->name, v);
    } else if (y->mult[i]) {
        v *= y->hw_base[hwi];
    }
    *out = v;
    return 0;
}

/* "point P (hw, workload, mode, NAME=V, ...)" for messages about one point. */
static void describe_point(const sw_ctx *x, long long p, char *out, size_t n)
{
    int idx[CLI_MAX_VARY], hwi;
    const sw_block *b = decode(x, p, &hwi, idx);
    int len = snprintf(out, n, "point %lld (%s, %s, %s", p, x->hw[hwi].hw.name, b->wl,
                       cli_mode_name(b->training));
    for (int k = 0; k < x->nvary && len > 0 && (size_t)len < n; k++) {
        double v = 0;
        kt_err e2;
        vary_value(x, hwi, b, k, idx[k], &v, &e2);
        len += snprintf(out + len, n - (size_t)len, ", %s=%.9g", x->vary[k].name, v);
    }
    if (len > 0 && (size_t)len < n)
        snprintf(out + len, n - (size_t)len, ")");
}

static void write_header(FILE *f, const sw_ctx *x)
{
    fputs("point,hw,workload,mode", f);
    for (int k = 0; k < x->nvary; k++)
        fprintf(f, ",%s", x->vary[k].name);
    fputs(",exec,time_s,speedup_vs_bsp,speedup_vs_vf,flops,dram_read_bytes,dram_write_bytes,"
          "dram_bytes,traffic_reduction_frac,energy_J,avg_power_W,clock_MHz,kernels,ops_total,"
          "ops_covered,coverage_frac,power_policy,tdp_W",
          f);
    if (x->c->opts.power_cap_W > 0)
        fputs(",power_cap_W,capped_time_s,capped_energy_J,capped_avg_power_W,capped_clock_MHz,"
              "capped_speedup_vs_bsp",
              f);
    fputc('\n', f);
}

/* The workload of block b with the point's varied parameters (vset, nvset; all its --set and
 * varied values: sets, nsets) prepared for runs in ts, unless ts holds it already. */
static int prepare(sw_thread_state *ts, const cli_common *c, const sw_block *b,
                   const wl_set *vset, int nvset, const wl_set *sets, int nsets, const kt_opts *o,
                   kt_err *e)
{
    int same = ts->prep_blk == b && ts->nprep_set == nvset;
    for (int k = 0; same && k < nvset; k++)
        same = ts->prep_set[k] == vset[k].value;
    if (same)
        return 0;
    ts->time_ok = 0; /* the runs read the prepared graph */
    arena_release(&ts->a_time, (arena_pos){0});
    ts->prep_blk = NULL;
    arena_release(&ts->a_prep, (arena_pos){0});
    if (wl_from_json(b->root, b->file, sets, nsets, b->training, &ts->a_prep, &ts->prep_fwd, e) ||
        (c->dtype_given && wl_set_float_dtype(&ts->prep_fwd, c->dtype, e)) ||
        kt_prepare(&ts->prep_fwd, o, &ts->a_prep, &ts->prep, e) ||
        graph_memory(ts->prep.g, &ts->a_prep, &ts->prep_mem, e))
        return -1;
    ts->prep_blk = b;
    ts->nprep_set = nvset;
    for (int k = 0; k < nvset; k++)
        ts->prep_set[k] = vset[k].value;
    return 0;
}

/* The runs before energy of ts's prepared workload on hw, unless ts holds them for a hw that
 * differs at most in energy, power and DVFS fields. */
static int times(sw_thread_state *ts, const hw_gpu *hw, const kt_opts *o, kt_err *e)
{
    if (ts->time_ok && hw_same_timing(&ts->time_hw, hw))
        return 0;
    ts->time_ok = 0;
    arena_release(&ts->a_time, (arena_pos){0});
    memcpy(&ts->time_hw, hw, sizeof ts->time_hw); /* items re-evaluate through it: it stays */
    if (kt_run_times(&ts->time_hw, &ts->prep, o, &ts->a_time, &ts->times, e))
        return -1;
    ts->time_ok = 1;
    return 0;
}

/* Evaluate point p: all requested execution models; the CSV rows into *rows (malloc'd). */
static int eval_point(void *vx, void *vts, long long p, char **rows, kt_err *e)
{
    const sw_ctx *x = vx;
    sw_thread_state *ts = vts;
    int idx[CLI_MAX_VARY], hwi;
    double val[CLI_MAX_VARY];
    const sw_block *b = decode(x, p, &hwi, idx);
    const sw_hw *gpu = &x->hw[hwi];
    const cli_common *c = x->c;
    wl_set sets[CLI_MAX_SETS + CLI_MAX_VARY];
    int nsets = 0;
    for (int i = 0; i < c->nsets; i++)
        sets[nsets++] = c->sets[i];
    hw_gpu hwv;
    const hw_gpu *hw = &gpu->hw;
    for (int k = 0; k < x->nvary; k++) {
        if (vary_value(x, hwi, b, k, idx[k], &val[k], e))
            return -1;
        if (x->vary[k].is_param) {
            sets[nsets].name = x->vary[k].name;
            sets[nsets].value = (int64_t)val[k];
            nsets++;
        } else if (jsonx_set_number(ts->hw_root[hwi], x->vary[k].name, val[k], 0, gpu->file, e)) {
            return -1;
        }
    }
    if (x->has_hw_vary) {
        if (hw_from_json(ts->hw_root[hwi], gpu->file, &hwv, e))
            return -1;
        hw = &hwv;
    }
    kt_run_result rr;
    kt_opts o = c->opts;
    o.training = b->training;
    o.power_ref_sm_count = gpu->hw.sm_count; /* the file's power fields describe its SMs */
    if (prepare(ts, c, b, sets + c->nsets, nsets - c->nsets, sets, nsets, &o, e) ||
        times(ts, hw, &o, e) || kt_run_power(hw, &o, &ts->times, &ts->a, &rr, e)) {
        arena_release(&ts->a, (arena_pos){0}); /* blocks kept for the next point */
        return -1;
    }
    const graph_mem mem = ts->prep_mem;
    if ((double)mem.weight_bytes + (double)mem.peak_act_bytes >
        hw->dram_capacity_GiB * 1073741824.0) {
        if (!ts->over++ || p < ts->first)
            ts->first = p;
    }
    const kt_result *const *by = rr.by, *const *cap = rr.capped_by;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) {
        arena_release(&ts->a, (arena_pos){0}); /* blocks kept for the next point */
        return err_set(e, KT_EINTERNAL, NULL, NULL, "out of memory");
    }
    for (int s = 0; s < EX_COUNT; s++) {
        const kt_result *r = by[s];
        if (!r)
            continue;
        fprintf(f, "%lld,", p);
        csv_field(f, gpu->hw.name);
        fputc(',', f);
        csv_field(f, b->wl);
        fprintf(f, ",%s", cli_mode_name(b->training));
        for (int k = 0; k < x->nvary; k++)
            fprintf(f, ",%.9g", val[k]);
        fprintf(f, ",%s", r->exec);
        csv_num(f, r->time_s);
        csv_num(f, mx_speedup(by[EX_BSP], r));
        csv_num(f, mx_speedup(by[EX_VF], r));
        fprintf(f, ",%lld,%lld,%lld,%lld", (long long)r->flops, (long long)r->dram_read_bytes,
                (long long)r->dram_write_bytes, (long long)mx_dram(r));
        csv_num(f, mx_reduction(by[EX_BSP], r));
        csv_num(f, r->energy_J);
        csv_num(f, r->avg_power_W);
        csv_num(f, r->clock_MHz);
        fprintf(f, ",%d,%d,%d", r->kernels, r->ops_total, r->ops_covered);
        csv_num(f, mx_coverage(r));
        fprintf(f, ",%s", kt_power_policy_name(o.power_policy));
        csv_num(f, kt_power_hw(hw, &o).tdp_W);
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
    arena_release(&ts->a, (arena_pos){0}); /* blocks kept for the next point */
    if (fclose(f) || !buf) {
        free(buf);
        return err_set(e, KT_EINTERNAL, NULL, NULL, "out of memory");
    }
    *rows = buf;
    return 0;
}

/* ---- per-worker state: private hw JSON trees (when hw fields vary) and an arena ---- */
static void *state_new(void *vx, kt_err *e)
{
    const sw_ctx *x = vx;
    sw_thread_state *ts = calloc(1, sizeof *ts);
    int ok = ts != NULL;
    for (int h = 0; ok && x->has_hw_vary && h < x->nhw; h++)
        ok = (ts->hw_root[h] = cJSON_Duplicate(x->hw[h].root, 1)) != NULL;
    if (!ok) {
        for (int h = 0; ts && h < x->nhw; h++)
            cJSON_Delete(ts->hw_root[h]);
        free(ts);
        err_set(e, KT_EINTERNAL, NULL, NULL, "out of memory");
        return NULL;
    }
    ts->first = -1;
    ts->mem = x->mem;
    return ts;
}

static void state_free(void *vts)
{
    sw_thread_state *ts = vts;
    pthread_mutex_lock(&ts->mem->mu);
    if (ts->over && (ts->mem->first < 0 || ts->first < ts->mem->first))
        ts->mem->first = ts->first;
    ts->mem->over += ts->over;
    pthread_mutex_unlock(&ts->mem->mu);
    for (int h = 0; h < CLI_MAX_HW; h++)
        cJSON_Delete(ts->hw_root[h]);
    arena_free(&ts->a);
    arena_free(&ts->a_time);
    arena_free(&ts->a_prep);
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

/* ---- the sweep's identity: a fingerprint of everything that decides its rows ---- */

/* FNV-1a over n bytes, continuing from *h. */
static void fp_mix(uint64_t *h, const void *p, size_t n)
{
    const unsigned char *c = p;
    for (size_t i = 0; i < n; i++)
        *h = (*h ^ c[i]) * 1099511628211ull;
}

/* A string and its terminating NUL (so "ab","c" and "a","bc" differ). */
static void fp_str(uint64_t *h, const char *s)
{
    fp_mix(h, s, strlen(s) + 1);
}

/* Read, fingerprint and parse a JSON input file (the bytes hashed are the bytes parsed). */
static cJSON *load_hashed(const char *file, uint64_t *fp, kt_err *e)
{
    size_t len = 0;
    char *text = io_read_file(file, JSONX_MAX_FILE_BYTES, &len, e);
    if (!text)
        return NULL;
    fp_mix(fp, text, len);
    fp_mix(fp, "", 1);
    cJSON *root = jsonx_parse_file(text, len, file, e);
    free(text);
    return root;
}

/* A GPU as the sweep sees it: its tree with the "base" chain merged (so a change in any file
 * of the chain changes it). */
static int fp_json(uint64_t *fp, const cJSON *root, kt_err *e)
{
    char *text = cJSON_PrintUnformatted(root);
    if (!text)
        return err_set(e, KT_EINTERNAL, NULL, NULL, "out of memory");
    fp_str(fp, text);
    free(text);
    return 0;
}

/* The options that decide a sweep's rows (the hw and workload files are already mixed in):
 * modes, execution models, --set, --vary and --zip as given, the model options and the
 * shard. */
static uint64_t fingerprint(uint64_t fp, const cli_common *c, int shard_k, int shard_n)
{
    char buf[512];
    const kt_opts *o = &c->opts;
    fp_str(&fp, "kitsune sweep " KT_VERSION);
    snprintf(buf, sizeof buf, "modes %d exec %d launch %d vf %d vfbwd %d select %d shared %d "
                              "rest %d optim %d cap %a ilp %a policy %d dtype %d:%d shard %d/%d",
             c->modes, o->exec_mask, o->graph_launch, o->vf_policy, o->vf_backward, o->select,
             o->scheduler_shared, o->rest_bsp, o->optimizer, o->power_cap_W, o->ilp_time_limit_s,
             o->power_policy, c->dtype_given, (int)c->dtype, shard_k, shard_n);
    fp_str(&fp, buf);
    for (int i = 0; i < c->nsets; i++) {
        snprintf(buf, sizeof buf, "%lld", (long long)c->sets[i].value);
        fp_str(&fp, c->sets[i].name);
        fp_str(&fp, buf);
    }
    for (int k = 0; k < c->nvary; k++) {
        fp_str(&fp, c->vary_zip[k] ? "--zip" : "--vary");
        fp_str(&fp, c->vary[k]);
    }
    return fp;
}

/* ---- output: rows through FILE.partial (a regular -o FILE), else straight to the stream ----
 * FILE.partial is the sweep's checkpoint, safe against a kill at any instruction:
 * - it is created by an atomic rename, holding only its header: a line with the fingerprint,
 *   then the CSV header; it exists complete or not at all;
 * - rows are only appended, one point (all its execution models) per write, in point order;
 *   a kill leaves at most a torn last point;
 * - --resume reads it without changing it, then cuts the torn tail (one ftruncate), then
 *   appends: the complete points are never rewritten, so no kill can lose them;
 * - at the end its rows are copied (without the fingerprint line) into FILE atomically, and
 *   only then is it removed. */

/* The partial file's header: the fingerprint line, then the CSV header. */
#define SW_FP_PREFIX "#kitsune-sweep-partial fingerprint="

static int header_string(const sw_ctx *x, uint64_t fp, char **out, size_t *fp_len)
{
    size_t len;
    FILE *f = open_memstream(out, &len);
    if (!f)
        return -1;
    fprintf(f, SW_FP_PREFIX "%016llx\n", (unsigned long long)fp);
    *fp_len = (size_t)ftell(f);
    write_header(f, x);
    return fclose(f) ? -1 : 0;
}

/* Read FILE.partial (fd) against this sweep: *kept complete points (the first of this shard's
 * points, in order), ending at byte *end; *kept = -1 when the file holds a strict prefix of the
 * header (empty: created by something that was interrupted) and is to be rebuilt. An error
 * when its fingerprint differs (another sweep's rows) or its rows are not this sweep's points
 * in order (changed by something else). Reads only. */
static int scan_partial(int fd, const char *file, const char *hdr, const sw_ctx *x, long long first,
                        long long step, long long *kept, off_t *end, kt_err *e)
{
    size_t hl = strlen(hdr);
    int dfd = dup(fd);
    FILE *f = dfd >= 0 ? fdopen(dfd, "r") : NULL;
    char *head = malloc(hl + 1), *line = NULL;
    size_t cap = 0;
    int rc = -1;
    if (!f || !head) {
        err_set(e, KT_EINTERNAL, file, NULL, "cannot read: %s", strerror(errno));
        goto out;
    }
    size_t got = fread(head, 1, hl, f);
    if (ferror(f)) {
        err_set(e, KT_EINPUT, file, NULL, "cannot read: %s", strerror(errno));
        goto out;
    }
    if (memcmp(head, hdr, got)) {
        size_t pl = strlen(SW_FP_PREFIX);
        if (got >= pl && !memcmp(head, SW_FP_PREFIX, pl))
            err_set(e, KT_EINPUT, file, NULL,
                    "holds rows of a different sweep (its hw or workload files, --vary values or "
                    "options differ); remove it, or resume with the same inputs");
        else
            err_set(e, KT_EINPUT, file, NULL,
                    "is not a partial file of this version of kitsune sweep; remove it");
        goto out;
    }
    *kept = -1;
    rc = 0;
    if (got < hl)
        goto out;
    long long k = 0, lineno = 2;
    int rows = 0;
    off_t pos = (off_t)hl;
    *end = pos;
    ssize_t n;
    while ((n = getline(&line, &cap, f)) > 0 && line[n - 1] == '\n') { /* a torn line ends it */
        long long want = first + k * step;
        char *stop;
        errno = 0;
        long long p = strtoll(line, &stop, 10);
        lineno++;
        if (stop == line || *stop != ',' || errno || p != want || want >= x->npoints) {
            rc = err_set(e, KT_EINPUT, file, NULL,
                         "line %lld: not a row of point %lld, which comes next in this sweep (the "
                         "file was changed by something else); remove it",
                         lineno, want);
            goto out;
        }
        pos += (off_t)n;
        if (++rows == x->nexec) {
            k++;
            rows = 0;
            *end = pos;
        }
    }
    if (ferror(f)) {
        rc = err_set(e, KT_EINPUT, file, NULL, "cannot read: %s", strerror(errno));
        goto out;
    }
    *kept = k;
out:
    free(line);
    free(head);
    if (f)
        fclose(f);
    else if (dfd >= 0)
        close(dfd);
    return rc;
}

/* Create FILE.partial holding only the header, atomically (outfile: temporary file, fsync,
 * rename), and open it for appending. The descriptor, or -1 with e set. */
static int create_partial(const char *partial, const char *hdr, kt_err *e)
{
    of_file o;
    if (of_open(&o, partial, 0, e))
        return -1;
    fputs(hdr, o.f);
    if (of_commit(&o, e))
        return -1;
    of_crash_point("partial-created");
    int fd = open(partial, O_WRONLY | O_APPEND | O_CLOEXEC);
    if (fd < 0)
        err_set(e, KT_EINPUT, partial, NULL, "cannot open: %s", strerror(errno));
    return fd;
}

/* The finished sweep: FILE.partial's bytes after `skip` (the fingerprint line) become FILE
 * (outfile: atomic for a regular file), then FILE.partial is removed. */
static int install(const char *partial, off_t skip, const char *out, kt_err *e)
{
    enum { CHUNK = 1 << 20 };
    int fd = open(partial, O_RDONLY | O_CLOEXEC);
    char *buf = malloc(CHUNK);
    of_file o;
    memset(&o, 0, sizeof o);
    o.fd = o.slot = -1;
    int rc = -1;
    if (fd < 0 || !buf || lseek(fd, skip, SEEK_SET) < 0) {
        err_set(e, KT_EINTERNAL, partial, NULL, "cannot read: %s", strerror(errno));
        goto out;
    }
    if (of_open(&o, out, 0, e))
        goto out;
    for (;;) {
        ssize_t n = read(fd, buf, CHUNK);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            err_set(e, KT_EINTERNAL, partial, NULL, "cannot read: %s", strerror(errno));
            goto out;
        }
        if (n == 0)
            break;
        if (fwrite(buf, 1, (size_t)n, o.f) != (size_t)n)
            break; /* of_commit reports the stream's error */
    }
    if (of_commit(&o, e))
        goto out;
    of_crash_point("output-renamed");
    if (unlink(partial) == 0)
        of_sync_dir(partial);
    rc = 0;
out:
    of_abort(&o);
    if (fd >= 0)
        close(fd);
    free(buf);
    return rc;
}

/* ---- setup ---- */
typedef struct sw_setup {
    sw_ctx x;
    sw_vary vary[CLI_MAX_VARY];
    int nwl;
    sw_block *blk;           /* [2 * nwl] */
    cJSON **wl_root;         /* [nwl] */
    sw_hw hw[CLI_MAX_HW];
    sw_mem mem;
    lint_list warn;          /* about the GPUs and workloads, before any point runs */
    uint64_t fp; /* fingerprint of the input files read (fingerprint() adds the options) */
    arena a;
} sw_setup;

static void setup_free(sw_setup *s)
{
    for (int k = 0; k < CLI_MAX_VARY; k++) {
        free(s->vary[k].v);
        free(s->vary[k].mult);
    }
    for (int i = 0; s->wl_root && i < s->nwl; i++)
        cJSON_Delete(s->wl_root[i]);
    for (int h = 0; h < CLI_MAX_HW; h++)
        cJSON_Delete(s->hw[h].root);
    arena_free(&s->a);
}

/* Every --hw: loaded (hw_load_dir names the file of a base chain at fault) and as the merged
 * tree that --vary edits; its values checked against the plausible ranges. */
static int setup_hw(const cli_common *c, sw_setup *s, kt_err *e)
{
    if (!c->nhw)
        return err_set(e, KT_EINPUT, NULL, "--hw", "missing (e.g. --hw a100)");
    char hw_dir[PATH_MAX];
    cli_hw_dir(hw_dir, sizeof hw_dir);
    s->fp = 14695981039346656037ull; /* FNV-1a's offset basis */
    for (int h = 0; h < c->nhw; h++) {
        sw_hw *u = &s->hw[h];
        if (cli_resolve("hw", c->hws[h], u->file, sizeof u->file, e) ||
            hw_load_dir(u->file, hw_dir, &u->hw, e) || !(u->root = hw_json_load(u->file, hw_dir, e)) ||
            fp_json(&s->fp, u->root, e))
            return -1;
        for (int j = 0; j < h; j++)
            if (!strcmp(s->hw[j].hw.name, u->hw.name))
                return err_set(e, KT_EINPUT, NULL, "--hw",
                               "two GPUs named \"%s\" (%s and %s): the hw column would not tell "
                               "them apart",
                               u->hw.name, s->hw[j].file, u->file);
        lint_hw(&u->hw, &s->warn);
    }
    s->x.hw = s->hw;
    s->x.nhw = c->nhw;
    return 0;
}

/* The (workload, mode) blocks; each workload's forward graph with --set gives the defaults of
 * its parameters ("x" values) and the dtype check on every GPU. */
static int setup_blocks(const cli_common *c, sw_setup *s, kt_err *e)
{
    sw_ctx *x = &s->x;
    /* workloads (names and paths of any length, any number of files for "all") */
    const char **names;
    int nwl = cli_workload_names(c, &s->a, &names);
    if (!nwl)
        return err_set(e, KT_EINPUT, NULL, "--workload", "missing (e.g. --workload nerf or all)");
    s->wl_root = arena_calloc(&s->a, (size_t)nwl, sizeof *s->wl_root);
    x->blk = s->blk = arena_calloc(&s->a, 2 * (size_t)nwl, sizeof *s->blk);
    if (!s->wl_root || !s->blk)
        return err_set(e, KT_EINTERNAL, NULL, NULL, "out of memory");
    s->nwl = nwl;
    for (int w = 0; w < nwl; w++) {
        char path[PATH_MAX];
        const char *file;
        if (cli_resolve("workloads", names[w], path, sizeof path, e))
            return -1;
        if (!(file = arena_strdup(&s->a, path)))
            return err_set(e, KT_EINTERNAL, NULL, NULL, "out of memory");
        fp_str(&s->fp, names[w]);
        if (!(s->wl_root[w] = load_hashed(file, &s->fp, e)))
            return -1;
        for (int m = 1; m <= 2; m++) {
            if (!(c->modes & m))
                continue;
            wl_graph *g = arena_calloc(&s->a, 1, sizeof *g);
            if (!g)
                return err_set(e, KT_EINTERNAL, NULL, NULL, "out of memory");
            if (wl_from_json(s->wl_root[w], file, c->sets, c->nsets, m == 2, &s->a, g, e) ||
                (c->dtype_given && wl_set_float_dtype(g, c->dtype, e)))
                return -1;
            if (m == 2 && g->inference_only && (nwl > 1 || c->modes == 3))
                continue; /* a decode step has no training graph */
            sw_block *b = &s->blk[x->nblk++];
            b->wl = g->name;
            b->root = s->wl_root[w];
            b->file = file;
            b->training = m == 2;
            b->base = g;
            const wl_graph *run;
            op_work *works;
            if (kt_graph(g, b->training, c->opts.optimizer, &s->a, &run, e) ||
                !(works = op_works(run, &s->a, e)))
                return -1;
            for (int h = 0; h < x->nhw; h++)
                lint_dtype(&x->hw[h].hw, run, works, &s->warn);
            lint_moe(run, &s->warn);
        }
    }
    return 0;
}

/* One --vary or --zip: a parameter of every workload, else a numeric field of every GPU file. */
static int setup_vary(const sw_setup *s, sw_vary *y, const char *spec, kt_err *e)
{
    const sw_ctx *x = &s->x;
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
        return err_set(e, KT_EINPUT, NULL, vary_opt(y),
                       "workload \"%s\" has no parameter \"%s\" (the others have it)", missing,
                       y->name);
    if (in_any) {
        y->is_param = 1;
        return 0;
    }
    for (int h = 0; h < x->nhw; h++)
        if (json_get(x->hw[h].root, y->name, &y->hw_base[h]))
            return err_set(e, KT_EINPUT, NULL, vary_opt(y),
                           "\"%s\" is neither a parameter of workload \"%s\" nor a numeric field "
                           "of %s (in \"%s\")",
                           y->name, x->blk[0].wl, x->hw[h].file, spec);
    return 0;
}

/* The hw of GPU h with the fields of axis a at their value index i (into out). 0, or -1 when
 * the changed file does not load. */
static int hw_at(const sw_ctx *x, int h, int a, int i, hw_gpu *out, kt_err *e)
{
    cJSON *t = cJSON_Duplicate(x->hw[h].root, 1);
    if (!t)
        return err_set(e, KT_EINTERNAL, NULL, NULL, "out of memory");
    int rc = 0;
    for (int k = 0; k < x->nvary && !rc; k++) {
        double v;
        if (x->vary[k].axis == a) /* hw fields only (a parameter's axis is never tested) */
            rc = vary_value(x, h, NULL, k, i, &v, e) ||
                 jsonx_set_number(t, x->vary[k].name, v, 0, x->hw[h].file, e);
    }
    rc = rc || hw_from_json(t, x->hw[h].file, out, e);
    cJSON_Delete(t);
    return rc ? -1 : 0;
}

/* Which axes can change a run before its energy (sw_ctx.axis_timing): a workload parameter
 * always; hw fields when, on some GPU, the hw at the axis' first two values differ beyond what
 * hw_same_timing ignores (or does not load). hw_same_timing ignores whole struct fields,
 * whatever their values, so two values tell. This only groups the points workers take
 * together (same_group); eval_point itself compares each point's hw. */
static void classify_axes(sw_ctx *x)
{
    for (int a = 0; a < x->naxes; a++) {
        int timing = 0;
        for (int k = 0; k < x->nvary && !timing; k++)
            timing = x->vary[k].axis == a && x->vary[k].is_param;
        for (int h = 0; h < x->nhw && !timing && x->axis_n[a] > 1; h++) {
            kt_err e2;
            hw_gpu h0, h1;
            timing = hw_at(x, h, a, 0, &h0, &e2) || hw_at(x, h, a, 1, &h1, &e2) ||
                     !hw_same_timing(&h0, &h1);
        }
        x->axis_timing[a] = timing;
    }
}

/* jobs_spec.same_group: points p and q differ at most along axes that move no timing field. */
static int same_group(void *vx, long long p, long long q)
{
    const sw_ctx *x = vx;
    int ip[CLI_MAX_VARY], iq[CLI_MAX_VARY], hp, hq;
    if (decode(x, p, &hp, ip) != decode(x, q, &hq, iq) || hp != hq)
        return 0;
    for (int k = 0; k < x->nvary; k++)
        if (x->axis_timing[x->vary[k].axis] && ip[k] != iq[k])
            return 0;
    return 1;
}

static int setup(const cli_common *c, sw_setup *s, kt_err *e)
{
    sw_ctx *x = &s->x;
    x->c = c;
    x->vary = s->vary;
    if (setup_hw(c, s, e) || setup_blocks(c, s, e))
        return -1;
    /* the axes: each --vary one, all --zip together one (where the first --zip stands) */
    x->nvary = c->nvary;
    x->ncombo = 1;
    int zip_axis = -1, zip_first = -1;
    for (int k = 0; k < c->nvary; k++) {
        sw_vary *y = &s->vary[k];
        const char *opt = c->vary_zip[k] ? "--zip" : "--vary";
        if (parse_vary(c->vary[k], opt, y, e))
            return -1;
        y->is_zip = c->vary_zip[k];
        for (int j = 0; j < k; j++)
            if (!strcmp(s->vary[j].name, y->name))
                return vary_fail(e, opt, c->vary[k], "the same name is varied twice");
        if (setup_vary(s, y, c->vary[k], e))
            return -1;
        if (y->is_param == 0)
            x->has_hw_vary = 1;
        if (y->is_zip && zip_axis >= 0) {
            if (y->n != x->axis_n[zip_axis])
                return err_set(e, KT_EINPUT, NULL, "--zip",
                               "\"%s\" has %d values and \"%s\" %d: zipped fields vary together, "
                               "one value of each per point",
                               c->vary[zip_first], x->axis_n[zip_axis], c->vary[k], y->n);
            y->axis = zip_axis;
            continue;
        }
        y->axis = x->naxes;
        x->axis_n[x->naxes++] = y->n;
        if (y->is_zip) {
            zip_axis = y->axis;
            zip_first = k;
        }
        x->ncombo *= y->n;
        if (x->ncombo > SW_MAX_POINTS)
            return err_set(e, KT_EINPUT, NULL, opt, "more than %lld points",
                           (long long)SW_MAX_POINTS);
    }
    x->npoints = x->ncombo * x->nblk * x->nhw;
    classify_axes(x);
    if (x->npoints > SW_MAX_POINTS)
        return err_set(e, KT_EINPUT, NULL, "--vary", "more than %lld points",
                       (long long)SW_MAX_POINTS);
    int m = c->opts.exec_mask;
    x->nexec = !!(m & EXEC_BSP) + !!(m & EXEC_VF) + !!(m & EXEC_KITSUNE);
    s->mem.first = -1;
    x->mem = &s->mem;
    return 0;
}

static int run_sweep(sw_setup *s, const cli_common *c, kt_err *e)
{
    sw_ctx *x = &s->x;
    int shard_n = c->shard_n ? c->shard_n : 1, shard_k = c->shard_n ? c->shard_k : 0;
    char *header = NULL;
    size_t fp_len = 0;
    long long kept = 0, ntodo = 0;
    long long *todo = NULL;
    jobs *jb = NULL;
    int rc = -1, fd = -1;
    char partial[PATH_MAX + 16];
    FILE *f = NULL;
    of_file direct;
    memset(&direct, 0, sizeof direct);
    direct.fd = direct.slot = -1;
    int use_partial = c->out_path && of_kind_of(c->out_path) == OF_ATOMIC;
    if (header_string(x, fingerprint(s->fp, c, shard_k, shard_n), &header, &fp_len))
        return err_set(e, KT_EINTERNAL, NULL, NULL, "out of memory");
    if (c->resume && !use_partial) {
        err_set(e, KT_EINPUT, NULL, "--resume",
                "needs -o FILE naming a regular file (it continues FILE.partial)");
        goto done;
    }
    if (use_partial) {
        of_sibling(c->out_path, ".partial", partial, sizeof partial);
        if (c->resume && (fd = open(partial, O_RDWR | O_CLOEXEC)) < 0 && errno != ENOENT) {
            err_set(e, KT_EINPUT, partial, NULL, "cannot open: %s", strerror(errno));
            goto done;
        }
        if (fd >= 0) {
            off_t end = 0;
            if (scan_partial(fd, partial, header, x, shard_k, shard_n, &kept, &end, e))
                goto done;
            of_crash_point("resume-scanned");
            if (kept < 0) { /* an unfinished header: start over */
                close(fd);
                fd = -1;
                kept = 0;
            } else if (ftruncate(fd, end) || lseek(fd, 0, SEEK_END) < 0) { /* the torn tail */
                err_set(e, KT_EINPUT, partial, NULL, "cannot truncate: %s", strerror(errno));
                goto done;
            }
            of_crash_point("resume-truncated");
        }
        if (fd < 0 && (fd = create_partial(partial, header, e)) < 0)
            goto done;
        if (!(f = fdopen(fd, "a"))) {
            err_set(e, KT_EINTERNAL, partial, NULL, "cannot open: %s", strerror(errno));
            goto done;
        }
        fd = -1;
    } else {
        if (of_open(&direct, c->out_path, 0, e))
            goto done;
        f = direct.f;
        fputs(header + fp_len, f);
    }
    long long total = x->npoints > shard_k ? (x->npoints - shard_k + shard_n - 1) / shard_n : 0;
    ntodo = total - kept;
    todo = malloc((size_t)(ntodo > 0 ? ntodo : 1) * sizeof *todo);
    if (!todo) {
        err_set(e, KT_EINTERNAL, NULL, NULL, "out of memory");
        goto done;
    }
    for (long long i = 0; i < ntodo; i++)
        todo[i] = shard_k + (kept + i) * shard_n;
    jobs_spec js = {todo, ntodo, cli_threads(c, ntodo, SW_JOBS_DEFAULT_MAX), x, eval_point,
                    state_new, state_free, same_group};
    if (!(jb = jobs_start(&js, e)))
        goto done;
    int show = c->progress || isatty(STDERR_FILENO);
    double t0 = now_s(), last = 0;
    long long j = 0;
    int failed = 0, bad_write = 0, werr = 0;
    for (; j < ntodo && !failed && !bad_write; j++) {
        char *rows = NULL;
        failed = jobs_take(jb, j, &rows) != 0;
        if (rows) {
            fputs(rows, f); /* one point, one write: a kill tears at most this point */
            free(rows);
        }
        errno = 0;
        bad_write = fflush(f) != 0 || ferror(f);
        werr = errno ? errno : EIO;
        if (show && now_s() - last >= SW_PROGRESS_PERIOD_S) {
            last = now_s();
            progress(kept + j + 1, total, j + 1, t0, 0);
        }
    }
    if (show)
        progress(kept + j, total, j, t0, 1);
    kt_err we;
    err_clear(&we);
    long long fail_at = jobs_failure(jb, &we);
    jobs_end(jb);
    jb = NULL;
    if (failed || fail_at >= 0) {
        /* name the point that failed, then the model's own message */
        char where[512];
        describe_point(x, todo[fail_at >= 0 ? fail_at : 0], where, sizeof where);
        err_set(e, we.code ? we.code : KT_EINTERNAL, we.file, we.path, "%.150s: %.160s", where,
                we.msg);
        goto done;
    }
    if (bad_write) {
        err_set(e, KT_EINTERNAL, use_partial ? partial : direct.name, NULL, "cannot write: %s",
                strerror(werr));
        goto done;
    }
    if (use_partial) {
        errno = 0;
        int bad = fsync(fileno(f)) != 0;
        int err = errno;
        if (fclose(f))
            bad = 1;
        f = NULL;
        if (bad) {
            err_set(e, KT_EINTERNAL, partial, NULL, "cannot write: %s", strerror(err ? err : EIO));
            goto done;
        }
        of_crash_point("rows-written");
        if (install(partial, (off_t)fp_len, c->out_path, e))
            goto done;
    } else {
        f = NULL;
        if (of_commit(&direct, e))
            goto done;
    }
    rc = 0;
done:
    jobs_end(jb);
    if (f && use_partial)
        fclose(f); /* the partial file stays for --resume */
    if (fd >= 0)
        close(fd);
    of_abort(&direct);
    free(todo);
    free(header);
    return rc;
}

static int run(cli_ctx *x)
{
    if (cli_applicable(x))
        return -1;
    static sw_setup s;
    memset(&s, 0, sizeof s);
    pthread_mutex_init(&s.mem.mu, NULL);
    int rc = setup(&x->c, &s, &x->e);
    cli_warn(x, &s.warn);
    if (!rc)
        rc = run_sweep(&s, &x->c, &x->e);
    if (!rc && s.mem.over > 0) {
        /* only the points computed now (not those kept by --resume) are checked */
        char where[512];
        lint_list l = {0};
        describe_point(&s.x, s.mem.first, where, sizeof where);
        lint_add(&l, "%lld point%s need%s more memory than the GPU has (weights + peak live "
                     "activations), the first: %.200s",
                 s.mem.over, s.mem.over == 1 ? "" : "s", s.mem.over == 1 ? "s" : "", where);
        cli_warn(x, &l);
    }
    pthread_mutex_destroy(&s.mem.mu);
    setup_free(&s);
    return rc ? -1 : 0;
}

const cli_command cmd_sweep = {
    "sweep", "design-space sweep over hardware fields and workload parameters (CSV)", HELP,
    O_MODEL | O_EXEC | O_OUT | O_VARY | O_ZIP | O_JOBS | O_SHARD | O_RESUME | O_PROGRESS | O_PPOL,
    0, run, O_WL | O_MODE | O_HW};
