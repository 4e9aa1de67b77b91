/* vtrace: validate --trace - the model's kernels against a measured trace (torch.profiler Chrome
 * trace or Nsight Compute CSV): kernels mapped to model ops by class and order, per-kernel, per
 * class and total errors. */
#include "vtrace.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../io/csv.h"
#include "../io/out.h"
#include "../io/trace.h"
#include "../model/exec/vf.h"
#include "../model/kmatch.h"
#include "cli.h"

/* One row of the report: a model kernel with the measured kernels mapped to it, a model kernel
 * nothing was mapped to, or a measured kernel mapped to no model kernel. */
typedef struct vt_row {
    int item;          /* index into the result's items, -1: measured only */
    int j0, nk;        /* measured kernels j0 .. j0+nk-1 (nk 0: model only) */
    int cls;
    int block;         /* composed models: the block of the model kernel's first op (measured
                          only: of the model kernel before it, else after it); -1 otherwise */
    double meas_s, model_s;
    double meas_dram, model_dram; /* bytes; meas_dram < 0 when the trace has none */
} vt_row;

/* Totals over a set of rows. */
typedef struct vt_sum {
    int meas_n, model_n, matched_rows;
    double meas_s, model_s;          /* every kernel on each side */
    double matched_meas_s, matched_abs_s, matched_rel_sum;
    double meas_only_s, model_only_s;
    int meas_only_n, model_only_n;
    double meas_dram, model_dram;
} vt_sum;

/* The device time of a model kernel: without the launch gap between kernels, which a measured
 * kernel's duration does not contain. */
static double device_s(const kt_item *it)
{
    double t = it->c.time_s - it->c.launch_s;
    return t > 0 ? t : 0;
}

/* A kernel's name without return type, namespaces, template arguments and parameters
 * ("vectorized_layer_norm_kernel"); CUTLASS's Kernel/Kernel2 wrappers by their first template
 * argument. */
static void short_name(const char *name, char *out, size_t n)
{
    char buf[1024];
    size_t k = 0;
    const char *s = name;
    if (!strncmp(s, "void ", 5))
        s += 5;
    while (*s && k + 1 < sizeof buf) {
        if (!strncmp(s, "(anonymous namespace)::", 23))
            s += 23;
        else if (!strncmp(s, "<unnamed>::", 11))
            s += 11;
        else
            buf[k++] = *s++;
    }
    buf[k] = 0;
    size_t end = strcspn(buf, "<(");
    const char *targ = buf[end] == '<' ? buf + end + 1 : NULL;
    buf[end] = 0;
    const char *base = buf;
    for (const char *q = buf; (q = strstr(q, "::")); q += 2)
        base = q + 2;
    if ((!strcmp(base, "Kernel2") || !strcmp(base, "Kernel")) && targ) {
        int m = (int)strcspn(targ, ",>(");
        snprintf(out, n, "%.*s", m, targ);
        return;
    }
    snprintf(out, n, "%.200s", base);
}

/* "name" cut to w characters with a trailing "~" when longer. */
static void cut(const char *s, int w, char *out, size_t n)
{
    if ((int)strlen(s) <= w)
        snprintf(out, n, "%s", s);
    else
        snprintf(out, n, "%.*s~", w - 1, s);
}

/* Totals over the rows of class cls and block blk (-1: any). */
static vt_sum summarize(const vt_row *r, int n, int cls, int blk)
{
    vt_sum s;
    memset(&s, 0, sizeof s);
    for (int i = 0; i < n; i++) {
        if ((cls >= 0 && r[i].cls != cls) || (blk >= 0 && r[i].block != blk))
            continue;
        s.meas_n += r[i].nk;
        s.meas_s += r[i].meas_s;
        if (r[i].meas_dram >= 0)
            s.meas_dram += r[i].meas_dram;
        if (r[i].item >= 0) {
            s.model_n++;
            s.model_s += r[i].model_s;
            s.model_dram += r[i].model_dram;
        }
        if (r[i].item >= 0 && r[i].nk) {
            s.matched_rows++;
            s.matched_meas_s += r[i].meas_s;
            s.matched_abs_s += fabs(r[i].model_s - r[i].meas_s);
            if (r[i].meas_s > 0)
                s.matched_rel_sum += fabs(r[i].model_s - r[i].meas_s) / r[i].meas_s;
        } else if (r[i].item >= 0) {
            s.model_only_n++;
            s.model_only_s += r[i].model_s;
        } else {
            s.meas_only_n += r[i].nk;
            s.meas_only_s += r[i].meas_s;
        }
    }
    return s;
}

/* " 12.3" (an absolute error in percent), "-" when not finite. */
static void apct(FILE *f, double v)
{
    if (isfinite(v))
        fprintf(f, " %.1f", 100 * v);
    else
        fputs(" -", f);
}

static double rel(double model, double meas)
{
    return meas > 0 ? (model - meas) / meas : NAN;
}

static void pct(FILE *f, double v, int w)
{
    if (isfinite(v))
        fprintf(f, " %+*.1f", w, 100 * v);
    else
        fprintf(f, " %*s", w, "-");
}

typedef struct vt_ctx {
    const char *file, *format, *range;
    const trace *t;
    const wl_graph *g;
    const kt_result *r;
    const hw_gpu *hw;
    int training;
    vt_row *rows;
    int nrows;
} vt_ctx;

static void write_table(FILE *f, const vt_ctx *v)
{
    const trace *t = v->t;
    fprintf(f, "%s: %s, %d kernels", v->file, v->format, t->n);
    if (t->other)
        fprintf(f, " (left out: %d memset/memcpy event%s, %.2f us)", t->other,
                t->other == 1 ? "" : "s", t->other_s * 1e6);
    if (t->steps > 1 && !v->range)
        fprintf(f, "\nnote: the trace holds %d profiler steps; --range ProfilerStep#N compares one",
                t->steps);
    fprintf(f, "\nmodel: %s on %s, %s, %s: %d kernels\n", v->g->name, v->hw->name,
            cli_mode_name(v->training), v->r->exec, summarize(v->rows, v->nrows, -1, -1).model_n);
    fprintf(f, "%-4s %-40s %-11s %12s  %-28s %12s %8s", "row", "measured kernel", "class",
            "measured_us", "model kernel", "model_us", "error%");
    if (t->has_bytes)
        fprintf(f, " %12s %13s %9s", "meas_dram_MB", "model_dram_MB", "dram_err%");
    fputc('\n', f);
    for (int i = 0; i < v->nrows; i++) {
        const vt_row *r = &v->rows[i];
        char sn[256], a[64], b[64];
        if (r->nk) {
            short_name(t->k[r->j0].name, sn, sizeof sn);
            if (r->nk > 1) {
                char more[16];
                snprintf(more, sizeof more, " +%d", r->nk - 1);
                cut(sn, 40 - (int)strlen(more), a, sizeof a);
                strncat(a, more, sizeof a - strlen(a) - 1);
            } else {
                cut(sn, 40, a, sizeof a);
            }
        } else {
            snprintf(a, sizeof a, "-");
        }
        if (r->item >= 0)
            cut(v->r->items[r->item].name, 28, b, sizeof b);
        else
            snprintf(b, sizeof b, "-");
        fprintf(f, "%-4d %-40s %-11s", i, a, km_class_name(r->cls));
        if (r->nk)
            fprintf(f, " %12.2f", r->meas_s * 1e6);
        else
            fprintf(f, " %12s", "-");
        fprintf(f, "  %-28s", b);
        if (r->item >= 0)
            fprintf(f, " %12.2f", r->model_s * 1e6);
        else
            fprintf(f, " %12s", "-");
        pct(f, r->item >= 0 && r->nk ? rel(r->model_s, r->meas_s) : NAN, 8);
        if (t->has_bytes) {
            if (r->nk)
                fprintf(f, " %12.3f", r->meas_dram / 1e6);
            else
                fprintf(f, " %12s", "-");
            if (r->item >= 0)
                fprintf(f, " %13.3f", r->model_dram / 1e6);
            else
                fprintf(f, " %13s", "-");
            pct(f, r->item >= 0 && r->nk ? rel(r->model_dram, r->meas_dram) : NAN, 9);
        }
        fputc('\n', f);
    }
    fprintf(f, "\nper class:\n%-11s %10s %12s %10s %12s %8s\n", "class", "measured_n", "measured_us",
            "model_n", "model_us", "error%");
    for (int c = 0; c < KC_COUNT; c++) {
        vt_sum s = summarize(v->rows, v->nrows, c, -1);
        if (!s.meas_n && !s.model_n)
            continue;
        fprintf(f, "%-11s %10d %12.2f %10d %12.2f", km_class_name(c), s.meas_n, s.meas_s * 1e6,
                s.model_n, s.model_s * 1e6);
        pct(f, rel(s.model_s, s.meas_s), 8);
        fputc('\n', f);
    }
    if (v->g->nblock) {
        fprintf(f, "\nper block (measured kernels of no model kernel: in the block before them):\n"
                   "%-16s %10s %12s %10s %12s %8s\n",
                "block", "measured_n", "measured_us", "model_n", "model_us", "error%");
        for (int b = 0; b < v->g->nblock; b++) {
            vt_sum s = summarize(v->rows, v->nrows, -1, b);
            fprintf(f, "%-16.16s %10d %12.2f %10d %12.2f", v->g->block[b].name, s.meas_n,
                    s.meas_s * 1e6, s.model_n, s.model_s * 1e6);
            pct(f, rel(s.model_s, s.meas_s), 8);
            fputc('\n', f);
        }
    }
    vt_sum s = summarize(v->rows, v->nrows, -1, -1);
    fprintf(f, "\ntotal kernel time: measured %.2f us (%d kernels), model %.2f us (%d kernels): "
               "error",
            s.meas_s * 1e6, s.meas_n, s.model_s * 1e6, s.model_n);
    pct(f, rel(s.model_s, s.meas_s), 1);
    fprintf(f, "%%\nmatched: %d model kernels to %d measured kernels; mean absolute error",
            s.matched_rows, s.meas_n - s.meas_only_n);
    apct(f, s.matched_rows ? s.matched_rel_sum / s.matched_rows : NAN);
    fprintf(f, "%%, time-weighted");
    apct(f, s.matched_meas_s > 0 ? s.matched_abs_s / s.matched_meas_s : NAN);
    fprintf(f, "%%\nunmatched: %d of %d measured kernels (%.2f us), %d of %d model kernels "
               "(%.2f us)\n",
            s.meas_only_n, s.meas_n, s.meas_only_s * 1e6, s.model_only_n, s.model_n,
            s.model_only_s * 1e6);
    if (t->has_bytes) {
        fprintf(f, "total DRAM bytes: measured %.3f MB, model %.3f MB: error", s.meas_dram / 1e6,
                s.model_dram / 1e6);
        pct(f, rel(s.model_dram, s.meas_dram), 1);
        fputs("%\n", f);
    }
    if (t->format == TRACE_CHROME) {
        double t0 = t->k[0].start_s, t1 = t0;
        for (int i = 0; i < t->n; i++)
            if (t->k[i].start_s + t->k[i].dur_s > t1)
                t1 = t->k[i].start_s + t->k[i].dur_s;
        fprintf(f, "GPU span (first kernel start to last end): measured %.2f us, model %.2f us "
                   "(with launch gaps): error",
                (t1 - t0) * 1e6, v->r->time_s * 1e6);
        pct(f, rel(v->r->time_s, t1 - t0), 1);
        fputs("%\n", f);
    }
}

static void json_sum(FILE *f, const vt_sum *s)
{
    fprintf(f, "{\"measured_kernels\": %d", s->meas_n);
    out_json_knum(f, "measured_time_s", s->meas_s);
    fprintf(f, ", \"model_kernels\": %d", s->model_n);
    out_json_knum(f, "model_time_s", s->model_s);
    out_json_knum(f, "rel_error_frac", rel(s->model_s, s->meas_s));
}

static void write_json(FILE *f, const vt_ctx *v)
{
    const trace *t = v->t;
    fputs("{\"tool\": \"kitsune\", \"version\": ", f);
    out_json_str(f, KT_VERSION);
    fputs(", \"command\": \"validate\", \"trace\": ", f);
    out_json_str(f, v->file);
    out_json_kstr(f, "trace_format", t->format == TRACE_CHROME ? "chrome" : "ncu");
    out_json_kstr(f, "workload", v->g->name);
    out_json_kstr(f, "hw", v->hw->name);
    out_json_kstr(f, "mode", cli_mode_name(v->training));
    out_json_kstr(f, "exec", v->r->exec);
    if (v->range)
        out_json_kstr(f, "range", v->range);
    else
        fputs(", \"range\": null", f);
    fprintf(f, ", \"other_gpu_events\": %d, \"profiler_steps\": %d", t->other, t->steps);
    out_json_knum(f, "other_gpu_events_time_s", t->other_s);
    fputs(",\n \"rows\": [", f);
    for (int i = 0; i < v->nrows; i++) {
        const vt_row *r = &v->rows[i];
        fprintf(f, "%s{\"class\": \"%s\", \"measured\": ", i ? ",\n  " : "\n  ",
                km_class_name(r->cls));
        if (r->nk) {
            fputs("{\"kernels\": [", f);
            for (int j = 0; j < r->nk; j++) {
                if (j)
                    fputs(", ", f);
                out_json_str(f, t->k[r->j0 + j].name);
            }
            fputs("]", f);
            out_json_knum(f, "time_s", r->meas_s);
            if (t->has_bytes)
                fprintf(f, ", \"dram_bytes\": %.0f", r->meas_dram);
            fputs("}", f);
        } else {
            fputs("null", f);
        }
        fputs(", \"model\": ", f);
        if (r->item >= 0) {
            const kt_item *it = &v->r->items[r->item];
            fputs("{\"name\": ", f);
            out_json_str(f, it->name);
            out_json_kstr(f, "type", it->type);
            out_json_knum(f, "time_s", r->model_s);
            fprintf(f, ", \"dram_bytes\": %.0f}", r->model_dram);
        } else {
            fputs("null", f);
        }
        out_json_knum(f, "rel_error_frac", r->item >= 0 && r->nk ? rel(r->model_s, r->meas_s) : NAN);
        if (v->g->nblock)
            out_json_kstr(f, "block", r->block >= 0 ? v->g->block[r->block].name : "");
        fputs("}", f);
    }
    fputs("],\n \"classes\": {", f);
    int k = 0;
    for (int c = 0; c < KC_COUNT; c++) {
        vt_sum s = summarize(v->rows, v->nrows, c, -1);
        if (!s.meas_n && !s.model_n)
            continue;
        fprintf(f, "%s\"%s\": ", k++ ? ",\n  " : "\n  ", km_class_name(c));
        json_sum(f, &s);
        fputs("}", f);
    }
    fputs("}", f);
    if (v->g->nblock) {
        fputs(",\n \"blocks\": [", f);
        for (int b = 0; b < v->g->nblock; b++) {
            vt_sum s = summarize(v->rows, v->nrows, -1, b);
            fputs(b ? ",\n  {\"block\": " : "\n  {\"block\": ", f);
            out_json_str(f, v->g->block[b].name);
            fputs(", \"totals\": ", f);
            json_sum(f, &s);
            fputs("}}", f);
        }
        fputs("]", f);
    }
    vt_sum s = summarize(v->rows, v->nrows, -1, -1);
    fputs(",\n \"total\": ", f);
    json_sum(f, &s);
    fprintf(f, ", \"matched_model_kernels\": %d, \"matched_measured_kernels\": %d",
            s.matched_rows, s.meas_n - s.meas_only_n);
    out_json_knum(f, "matched_mean_abs_error_frac",
                  s.matched_rows ? s.matched_rel_sum / s.matched_rows : NAN);
    out_json_knum(f, "matched_time_weighted_abs_error_frac",
                  s.matched_meas_s > 0 ? s.matched_abs_s / s.matched_meas_s : NAN);
    fprintf(f, ", \"unmatched_measured_kernels\": %d", s.meas_only_n);
    out_json_knum(f, "unmatched_measured_time_s", s.meas_only_s);
    fprintf(f, ", \"unmatched_model_kernels\": %d", s.model_only_n);
    out_json_knum(f, "unmatched_model_time_s", s.model_only_s);
    out_json_knum(f, "model_time_with_launch_gaps_s", v->r->time_s);
    if (t->has_bytes) {
        fprintf(f, ", \"measured_dram_bytes\": %.0f, \"model_dram_bytes\": %.0f", s.meas_dram,
                s.model_dram);
        out_json_knum(f, "dram_rel_error_frac", rel(s.model_dram, s.meas_dram));
    }
    fputs("}", f);
}

static void write_csv(FILE *f, const vt_ctx *v)
{
    const trace *t = v->t;
    fputs("row,class,measured_kernels,measured_name,measured_s,measured_dram_bytes,model_name,"
          "model_type,model_s,model_dram_bytes,rel_error,block\n",
          f);
    for (int i = 0; i < v->nrows; i++) {
        const vt_row *r = &v->rows[i];
        fprintf(f, "%d,%s,%d,", i, km_class_name(r->cls), r->nk);
        csv_field(f, r->nk ? t->k[r->j0].name : "");
        csv_num(f, r->nk ? r->meas_s : NAN);
        csv_num(f, r->nk && t->has_bytes ? r->meas_dram : NAN);
        fputc(',', f);
        csv_field(f, r->item >= 0 ? v->r->items[r->item].name : "");
        fputc(',', f);
        csv_field(f, r->item >= 0 ? v->r->items[r->item].type : "");
        csv_num(f, r->item >= 0 ? r->model_s : NAN);
        csv_num(f, r->item >= 0 ? r->model_dram : NAN);
        csv_num(f, r->item >= 0 && r->nk ? rel(r->model_s, r->meas_s) : NAN);
        fputc(',', f);
        csv_field(f, r->block >= 0 ? v->g->block[r->block].name : "");
        fputc('\n', f);
    }
}

/* The rows in order: walk the measured kernels; a model kernel nothing matched comes before the
 * next matched one. */
static int build_rows(vt_ctx *v, const int *items, const int *mc, int nm, const int *kc,
                      const int *item_of)
{
    const trace *t = v->t;
    v->rows = calloc((size_t)(nm + t->n) + 1, sizeof *v->rows);
    if (!v->rows)
        return -1;
    int i = 0, n = 0;
    for (int j = 0; j < t->n;) {
        int m = item_of[j];
        while (m >= 0 && i < m) {
            vt_row *r = &v->rows[n++];
            r->item = items[i];
            r->cls = mc[i];
            i++;
        }
        vt_row *r = &v->rows[n++];
        r->j0 = j;
        r->item = m >= 0 ? items[m] : -1;
        r->cls = m >= 0 ? mc[m] : kc[j];
        do {
            r->nk++;
            j++;
        } while (m >= 0 && j < t->n && item_of[j] == m);
        if (m >= 0)
            i = m + 1;
    }
    for (; i < nm; i++) {
        vt_row *r = &v->rows[n++];
        r->item = items[i];
        r->cls = mc[i];
    }
    for (int k = 0; k < n; k++) {
        vt_row *r = &v->rows[k];
        r->meas_dram = t->has_bytes ? 0 : -1;
        for (int j = r->j0; j < r->j0 + r->nk; j++) {
            r->meas_s += t->k[j].dur_s;
            if (t->has_bytes)
                r->meas_dram += (double)(t->k[j].dram_read_bytes + t->k[j].dram_write_bytes);
        }
        r->block = -1;
        if (r->item >= 0) {
            const kt_item *it = &v->r->items[r->item];
            r->model_s = device_s(it);
            r->model_dram = (double)(it->c.dram_read_bytes + it->c.dram_write_bytes);
            if (v->g->nblock && it->nops)
                r->block = v->g->op[it->ops[0]].block;
        }
    }
    v->nrows = n;
    if (!v->g->nblock)
        return 0;
    /* measured kernels of no model kernel: in the block of the model kernel before them (a
     * kernel PyTorch adds inside a layer), at the start in the first one after them */
    int last = -1;
    for (int k = 0; k < n; k++) {
        if (v->rows[k].item >= 0)
            last = v->rows[k].block;
        else
            v->rows[k].block = last;
    }
    for (int k = n - 1, next = -1; k >= 0; k--) {
        if (v->rows[k].item >= 0)
            next = v->rows[k].block;
        else if (v->rows[k].block < 0)
            v->rows[k].block = next;
    }
    return 0;
}

int cli_validate_trace(cli_ctx *x)
{
    cli_common *c = &x->c;
    if (c->npos)
        return cli_error(x, 0, "--trace", "takes no reference table (give either REFS.csv or "
                                          "--trace FILE)");
    if (c->nworkload != 1)
        return cli_error(x, 0, "--workload",
                         "--trace needs the one workload the trace measured (e.g. --workload "
                         "llama3-8b-ctx)");
    if (c->modes == 3)
        return cli_error(x, 0, "--mode", "--trace compares one mode");
    int exec = EX_BSP;
    if (c->exec_given) {
        if (c->opts.exec_mask == EXEC_VF)
            exec = EX_VF;
        else if (c->opts.exec_mask != EXEC_BSP)
            return cli_error(x, 0, "--exec",
                             "--trace compares bsp (PyTorch eager) or vf (torch.compile); kitsune "
                             "pipelines have no PyTorch run to trace");
    }
    c->opts.exec_mask = 1 << exec;
    if (cli_load_hw(c->hw, &x->hw, &x->e))
        return -1;
    trace t;
    if (trace_load(c->trace, c->range, &x->a, &t, &x->e))
        return -1;
    kt_run_result rr;
    if (cli_run_workload(x, &rr))
        return -1;
    const kt_result *r = rr.by[exec];
    int compiler = exec == EX_VF && c->opts.vf_policy == VF_INDUCTOR;
    int *items = arena_calloc(&x->a, (size_t)r->nitems + 1, sizeof(int));
    int *mc = arena_calloc(&x->a, (size_t)r->nitems + 1, sizeof(int));
    unsigned *mabs = arena_calloc(&x->a, (size_t)r->nitems + 1, sizeof(unsigned));
    int *kc = arena_calloc(&x->a, (size_t)t.n + 1, sizeof(int));
    int *item_of = arena_calloc(&x->a, (size_t)t.n + 1, sizeof(int));
    double *mt = arena_calloc(&x->a, (size_t)r->nitems + 1, sizeof(double));
    double *kt = arena_calloc(&x->a, (size_t)t.n + 1, sizeof(double));
    if (!items || !mc || !mabs || !kc || !item_of || !mt || !kt)
        return cli_error(x, KT_EINTERNAL, NULL, "out of memory");
    int nm = 0;
    for (int i = 0; i < r->nitems; i++) {
        int k = km_item_class(rr.g, &r->items[i], compiler);
        if (k < 0)
            continue;
        items[nm] = i;
        mt[nm] = device_s(&r->items[i]);
        mabs[nm] = km_item_absorbs(rr.g, &r->items[i], k, exec == EX_BSP);
        mc[nm++] = k;
    }
    for (int j = 0; j < t.n; j++) {
        kc[j] = km_kernel_class(t.k[j].name);
        kt[j] = t.k[j].dur_s;
    }
    if (km_align(mc, mt, mabs, nm, kc, kt, t.n, &x->a, item_of, &x->e)) {
        snprintf(x->e.file, sizeof x->e.file, "%s", c->trace);
        return -1;
    }
    vt_ctx v = {c->trace, t.format == TRACE_CHROME ? "torch.profiler Chrome trace" : "Nsight Compute CSV",
                c->range, &t, rr.g, r, &x->hw, c->opts.training, NULL, 0};
    if (build_rows(&v, items, mc, nm, kc, item_of))
        return cli_error(x, KT_EINTERNAL, NULL, "out of memory");
    int status = -1;
    FILE *f = cli_output(x);
    if (f) {
        if (c->format == FMT_JSON) {
            write_json(f, &v);
            cli_json_warnings(f, x);
            fputs("}\n", f);
        } else if (c->format == FMT_CSV) {
            write_csv(f, &v);
        } else {
            write_table(f, &v);
        }
        status = 0;
        vt_sum s = summarize(v.rows, v.nrows, -1, -1);
        double err = rel(s.model_s, s.meas_s);
        if (c->max_error >= 0 && isfinite(err) && fabs(err) > c->max_error) {
            fprintf(stderr, "kitsune validate: total kernel time error %.2f%% exceeds --max-error "
                            "%.2f%%\n",
                    100 * fabs(err), 100 * c->max_error);
            status = 3;
        }
    }
    free(v.rows);
    return status;
}
