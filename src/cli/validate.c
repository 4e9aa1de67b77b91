/* validate: the model against a reference table (paper numbers, simulator or hardware
 * measurements) - per-row errors, mean absolute percentage error, worst row, rank correlation. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../io/csv.h"
#include "../io/file.h"
#include "../io/out.h"
#include "../model/run.h"
#include "cli.h"
#include "cmds.h"
#include "metrics.h"
#include "refs.h"
#include "vtrace.h"

static const char *const HELP =
    "usage: kitsune validate REFS.csv [--hw HW] [--max-error F] [options]\n"
    "       kitsune validate --trace FILE --hw HW --workload WL [--mode M] [--exec bsp|vf]\n"
    "                        [--range NAME] [--max-error F] [options]\n"
    "\n"
    "Compare the model with a reference table. REFS.csv has the header\n"
    "  workload,mode,exec,metric,value,source[,hw][,params]\n"
    "(quoted fields may hold commas; params: space-separated NAME=VALUE like --set; hw defaults to\n"
    "--hw). metric: time_s speedup_vs_bsp speedup_vs_vf dram_bytes dram_read_bytes\n"
    "dram_write_bytes traffic_reduction ops_covered coverage flops.\n"
    "Per row: the model's value, absolute and relative error; then the mean absolute percentage\n"
    "error (rows with a reference of 0 have no relative error and are left out of it), the worst\n"
    "row and the Spearman rank correlation of reference and model values.\n"
    "\n"
    "With --trace, compare the model's kernels with measured ones: a torch.profiler Chrome trace\n"
    "(prof.export_chrome_trace: events with \"cat\": \"kernel\", \"name\", \"ts\" and \"dur\" in\n"
    "us) or an Nsight Compute CSV (ncu --csv --page raw, with gpu__time_duration.sum and\n"
    "optionally dram__bytes_read.sum and dram__bytes_write.sum); the format is read from the file.\n"
    "Every kernel falls into a class by its name (gemm, attention, norm, softmax, reduce, index,\n"
    "copy, fill, pool, optimizer, generated for Triton, elementwise); model kernels by their op.\n"
    "Measured and model kernels are matched in order, class by class (a model kernel may take\n"
    "several measured kernels of its class in a row). Reported: each pair with its error, kernels\n"
    "on one side only, per class (and per block of a whole model) and total kernel time, DRAM\n"
    "bytes (ncu) and the GPU span (Chrome).\n"
    "bsp is PyTorch eager, vf with --vf inductor (the default) torch.compile.\n"
    "\n"
    "  --trace FILE                a measured trace instead of a reference table\n"
    "  --workload WL, --mode M     what the trace ran (default inference)\n"
    "  --exec bsp|vf               the model to compare (default bsp)\n"
    "  --range NAME                Chrome traces: only kernels launched inside the CPU range NAME\n"
    "                              (a record_function label, ProfilerStep#2): one step of many\n"
    "  --max-error F               exit status 3 when the MAPE (tables) or the total kernel time\n"
    "                              error (traces) exceeds F (a fraction, e.g. 0.15)\n"
    "  --format table|json|csv     (default table; csv: the per-row table)\n"
    "  -o FILE                     write to FILE (atomically) instead of stdout\n"
    "  --set, --dtype, --select, --scheduler, --rest, --launch, --optimizer, --vf, --vf-backward\n"
    "  as for predict\n"
    "\n"
    "exit status: 0; 3 when --max-error is exceeded; 2 for bad input (also a row's bad params,\n"
    "hw or workload: the message names the line); 1 when a model run failed\n"
    "\n"
    "examples: kitsune validate validation/kitsune-paper.csv --hw a100\n"
    "          kitsune validate --trace validation/traces/h200-llama3-8b-ctx-inference-eager.json \\\n"
    "              --hw h200 --workload llama3-8b-ctx\n";

/* Largest reference table read (bytes). */
#define V_MAX_FILE_BYTES ((size_t)256 << 20)

typedef refs_row v_row;

typedef struct v_run {
    const char *workload, *hw, *params;
    int training, mask;
    int line;                            /* the first row that needs the run */
    kt_run_result rr;
    kt_err err;
} v_run;

/* "B=64 S=128" -> sets (names NUL-terminated in a private copy). */
static int parse_params(const char *s, char *copy, size_t n, wl_set *sets, int *nsets, int max,
                        kt_err *e)
{
    snprintf(copy, n, "%s", s);
    char *save = NULL;
    for (char *tok = strtok_r(copy, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
        char *eq = strchr(tok, '=');
        char *end;
        if (!eq || eq == tok)
            return err_set(e, KT_EINPUT, NULL, "params", "expected NAME=VALUE, got \"%s\"", tok);
        *eq = 0;
        errno = 0;
        long long v = strtoll(eq + 1, &end, 10);
        if (end == eq + 1 || *end || errno)
            return err_set(e, KT_EINPUT, NULL, "params", "\"%s\" needs an integer value", tok);
        if (*nsets >= max)
            return err_set(e, KT_EINPUT, NULL, "params", "too many parameters");
        sets[*nsets].name = tok;
        sets[*nsets].value = v;
        (*nsets)++;
    }
    return 0;
}

static int do_run(const cli_common *c, v_run *u, arena *a, kt_err *e)
{
    hw_gpu *hw = arena_calloc(a, 1, sizeof *hw);
    wl_graph *g = arena_calloc(a, 1, sizeof *g);
    if (!hw || !g)
        return err_set(e, KT_EINTERNAL, NULL, NULL, "out of memory");
    cli_common cc = *c;
    char copy[1024];
    if (parse_params(u->params, copy, sizeof copy, cc.sets, &cc.nsets, CLI_MAX_SETS, e))
        return -1;
    kt_opts o = c->opts;
    o.training = u->training;
    o.exec_mask = u->mask;
    if (cli_load_hw(u->hw, hw, e) || cli_load_wl(&cc, u->workload, u->training, a, g, e) ||
        kt_run(hw, g, &o, a, &u->rr, e))
        return -1;
    return 0;
}

/* Average ranks (1-based) of v[0..n-1] into rk; ties share their mean rank. Sorting makes it
 * O(n log n) (30,000 rows took 34 s by counting); idx is scratch of n ints. */
static const double *rank_v; /* the values qsort compares (single-threaded command) */

static int by_value(const void *a, const void *b)
{
    double x = rank_v[*(const int *)a], y = rank_v[*(const int *)b];
    return x < y ? -1 : x > y ? 1 : 0;
}

static void ranks(const double *v, int n, double *rk, int *idx)
{
    for (int i = 0; i < n; i++)
        idx[i] = i;
    rank_v = v;
    qsort(idx, (size_t)n, sizeof *idx, by_value);
    for (int i = 0; i < n;) {
        int j = i;
        while (j + 1 < n && v[idx[j + 1]] == v[idx[i]])
            j++;
        for (int k = i; k <= j; k++) /* positions i..j (0-based) share rank (i + j) / 2 + 1 */
            rk[idx[k]] = (i + j) / 2.0 + 1;
        i = j + 1;
    }
}

/* Spearman rank correlation: the Pearson correlation of the average ranks. NAN for n < 2 or
 * when either side is constant. */
static double spearman(const double *x, const double *y, int n)
{
    if (n < 2)
        return NAN;
    double *rx = malloc((size_t)n * sizeof *rx), *ry = malloc((size_t)n * sizeof *ry);
    int *idx = malloc((size_t)n * sizeof *idx);
    if (!rx || !ry || !idx) {
        free(rx);
        free(ry);
        free(idx);
        return NAN;
    }
    ranks(x, n, rx, idx);
    ranks(y, n, ry, idx);
    free(idx);
    double mx = 0, my = 0;
    for (int i = 0; i < n; i++) {
        mx += rx[i];
        my += ry[i];
    }
    mx /= n;
    my /= n;
    double sxy = 0, sxx = 0, syy = 0;
    for (int i = 0; i < n; i++) {
        sxy += (rx[i] - mx) * (ry[i] - my);
        sxx += (rx[i] - mx) * (rx[i] - mx);
        syy += (ry[i] - my) * (ry[i] - my);
    }
    free(rx);
    free(ry);
    return sxx > 0 && syy > 0 ? sxy / sqrt(sxx * syy) : NAN;
}

typedef struct v_summary {
    int rows, with_model, in_mape, worst;
    double mape, spearman;
} v_summary;

/* Summary over the rows matching metric (or all rows when metric < 0). */
static v_summary summarize(const v_row *r, int n, int metric)
{
    v_summary s = {0, 0, 0, -1, NAN, NAN};
    double sum = 0;
    double *x = malloc((size_t)n * sizeof *x), *y = malloc((size_t)n * sizeof *y);
    for (int i = 0; i < n; i++) {
        if (metric >= 0 && r[i].metric != metric)
            continue;
        s.rows++;
        if (!r[i].ok)
            continue;
        if (x && y) {
            x[s.with_model] = r[i].ref;
            y[s.with_model] = r[i].model;
        }
        s.with_model++;
        if (isfinite(r[i].rel_err)) {
            sum += r[i].rel_err;
            s.in_mape++;
            if (s.worst < 0 || r[i].rel_err > r[s.worst].rel_err)
                s.worst = i;
        }
    }
    if (s.in_mape)
        s.mape = sum / s.in_mape;
    if (x && y)
        s.spearman = spearman(x, y, s.with_model);
    free(x);
    free(y);
    return s;
}

static void fnum(FILE *f, const char *fmt, double v, int w)
{
    if (isfinite(v))
        fprintf(f, fmt, w, v);
    else
        fprintf(f, "%*s", w, "-");
}

static void write_table(FILE *f, const v_row *r, int n, const char *file)
{
    int ww = 8;
    for (int i = 0; i < n; i++)
        if ((int)strlen(r[i].workload) > ww)
            ww = (int)strlen(r[i].workload);
    fprintf(f, "%-5s  %-*s  %-9s  %-7s  %-17s  %14s  %14s  %14s  %9s\n", "line", ww, "workload",
            "mode", "exec", "metric", "reference", "model", "abs_error", "rel_err%");
    for (int i = 0; i < n; i++) {
        fprintf(f, "%-5d  %-*s  %-9s  %-7s  %-17s  %14.6g", r[i].line, ww, r[i].workload,
                cli_mode_name(r[i].training), kt_exec_name(r[i].exec), mx_name(r[i].metric), r[i].ref);
        fnum(f, "  %*.6g", r[i].ok ? r[i].model : NAN, 14);
        fnum(f, "  %*.6g", r[i].ok ? r[i].abs_err : NAN, 14);
        fnum(f, "  %*.1f", r[i].ok ? 100 * r[i].rel_err : NAN, 9);
        fputc('\n', f);
    }
    v_summary s = summarize(r, n, -1);
    fprintf(f, "\n%s: %d rows, %d with a model value, %d in the MAPE (reference != 0)\n", file,
            s.rows, s.with_model, s.in_mape);
    fprintf(f, "mean absolute percentage error: ");
    fnum(f, "%*.2f%%", 100 * s.mape, 1);
    if (s.worst >= 0)
        fprintf(f, "; worst: line %d (%s %s %s %s) %.2f%%", r[s.worst].line, r[s.worst].workload,
                cli_mode_name(r[s.worst].training), kt_exec_name(r[s.worst].exec),
                mx_name(r[s.worst].metric), 100 * r[s.worst].rel_err);
    fprintf(f, "\nSpearman rank correlation (reference vs model): ");
    fnum(f, "%*.4f", s.spearman, 1);
    fputc('\n', f);
    int header = 0;
    for (int m = 0; m < MX_COUNT; m++) {
        v_summary t = summarize(r, n, m);
        if (!t.rows)
            continue;
        if (!header++)
            fprintf(f, "per metric:\n");
        fprintf(f, "  %-17s %3d rows  MAPE ", mx_name(m), t.rows);
        fnum(f, "%*.2f%%", 100 * t.mape, 8);
        fputs("  Spearman ", f);
        fnum(f, "%*.4f", t.spearman, 7);
        fputc('\n', f);
    }
}

static void write_csv(FILE *f, const v_row *r, int n)
{
    fputs("line,workload,mode,exec,metric,hw,params,ref_value,model_value,abs_error,rel_error,"
          "source\n",
          f);
    for (int i = 0; i < n; i++) {
        fprintf(f, "%d,", r[i].line);
        csv_field(f, r[i].workload);
        fprintf(f, ",%s,%s,%s,", cli_mode_name(r[i].training), kt_exec_name(r[i].exec),
                mx_name(r[i].metric));
        csv_field(f, r[i].hw);
        fputc(',', f);
        csv_field(f, r[i].params);
        csv_num(f, r[i].ref);
        csv_num(f, r[i].ok ? r[i].model : NAN);
        csv_num(f, r[i].ok ? r[i].abs_err : NAN);
        csv_num(f, r[i].ok ? r[i].rel_err : NAN);
        fputc(',', f);
        csv_field(f, r[i].source);
        fputc('\n', f);
    }
}

static void json_summary(FILE *f, const v_row *r, int n, int metric)
{
    v_summary s = summarize(r, n, metric);
    fprintf(f, "{\"rows\": %d, \"rows_with_model\": %d, \"rows_in_mape\": %d, \"mape_frac\": ",
            s.rows, s.with_model, s.in_mape);
    out_json_num(f, s.mape);
    out_json_knum(f, "spearman", s.spearman);
    if (s.worst >= 0) {
        fprintf(f, ", \"worst\": {\"line\": %d, \"rel_error_frac\": ", r[s.worst].line);
        out_json_num(f, r[s.worst].rel_err);
        fputs("}", f);
    }
    fputs("}", f);
}

static void write_json(FILE *f, const v_row *r, int n, const char *file)
{
    fputs("{\"tool\": \"kitsune\", \"version\": ", f);
    out_json_str(f, KT_VERSION);
    fputs(", \"command\": \"validate\", \"refs\": ", f);
    out_json_str(f, file);
    fputs(",\n \"rows\": [", f);
    for (int i = 0; i < n; i++) {
        fprintf(f, "%s{\"line\": %d, \"workload\": ", i ? ",\n  " : "\n  ", r[i].line);
        out_json_str(f, r[i].workload);
        fprintf(f, ", \"mode\": \"%s\", \"exec\": \"%s\", \"metric\": \"%s\", \"hw\": ",
                cli_mode_name(r[i].training), kt_exec_name(r[i].exec), mx_name(r[i].metric));
        out_json_str(f, r[i].hw);
        out_json_kstr(f, "params", r[i].params);
        out_json_knum(f, "ref_value", r[i].ref);
        out_json_knum(f, "model_value", r[i].ok ? r[i].model : NAN);
        out_json_knum(f, "abs_error", r[i].ok ? r[i].abs_err : NAN);
        out_json_knum(f, "rel_error_frac", r[i].ok ? r[i].rel_err : NAN);
        out_json_kstr(f, "source", r[i].source);
        fputs("}", f);
    }
    fputs("],\n \"summary\": ", f);
    json_summary(f, r, n, -1);
    fputs(",\n \"by_metric\": {", f);
    int k = 0;
    for (int m = 0; m < MX_COUNT; m++) {
        if (!summarize(r, n, m).rows)
            continue;
        fprintf(f, "%s\"%s\": ", k++ ? ",\n  " : "\n  ", mx_name(m));
        json_summary(f, r, n, m);
    }
    fputs("}}\n", f);
}

static int run(cli_ctx *x)
{
    cli_common *c = &x->c;
    if (c->trace)
        return cli_validate_trace(x);
    if (c->nworkload || c->exec_given || c->mode_given || c->range || c->dtype_given)
        return cli_error(x, 0, c->nworkload ? "--workload" : c->exec_given ? "--exec"
                                                     : c->mode_given ? "--mode"
                                                     : c->range      ? "--range"
                                                                     : "--dtype",
                         "only with --trace (a reference table names them per row)");
    if (c->npos != 1)
        return cli_error(x, 0, NULL, "expected one reference table (REFS.csv)");
    const char *file = c->pos[0];
    size_t len = 0;
    char *text = io_read_file(file, V_MAX_FILE_BYTES, &len, &x->e);
    if (!text)
        return -1;
    v_row *rows = NULL;
    v_run *runs = NULL;
    int nrows = 0, nruns = 0, status = -1;
    if (refs_parse(text, len, file, c->hw, &rows, &nrows, &x->e))
        goto done;
    /* one model run per (workload, mode, hw, params), with every exec its rows need */
    runs = calloc((size_t)nrows, sizeof *runs);
    if (!runs) {
        cli_error(x, KT_EINTERNAL, NULL, "out of memory");
        goto done;
    }
    for (int i = 0; i < nrows; i++) {
        v_row *r = &rows[i];
        int k;
        for (k = 0; k < nruns; k++)
            if (runs[k].training == r->training && !strcmp(runs[k].workload, r->workload) &&
                !strcmp(runs[k].hw, r->hw) && !strcmp(runs[k].params, r->params))
                break;
        if (k == nruns) {
            runs[k].workload = r->workload;
            runs[k].hw = r->hw;
            runs[k].params = r->params;
            runs[k].training = r->training;
            runs[k].line = r->line;
            nruns++;
        }
        runs[k].mask |= mx_needs(r->metric, r->exec);
        r->run = k;
    }
    for (int k = 0; k < nruns; k++) {
        err_clear(&runs[k].err);
        if (do_run(c, &runs[k], &x->a, &runs[k].err)) {
            /* the row that asked for it, then what went wrong (bad params, hw or workload:
             * exit 2 like any bad input) */
            char why[sizeof x->e.msg], where[32];
            err_format(&runs[k].err, why, sizeof why);
            snprintf(where, sizeof where, "line %d", runs[k].line);
            err_set(&x->e, runs[k].err.code, file, where, "%s", why);
            goto done;
        }
    }
    for (int i = 0; i < nrows; i++) {
        v_row *r = &rows[i];
        const kt_run_result *rr = &runs[r->run].rr;
        r->model = mx_value(r->metric, rr->by[r->exec], rr->by[EX_BSP], rr->by[EX_VF]);
        r->ok = isfinite(r->model);
        r->abs_err = fabs(r->model - r->ref);
        r->rel_err = r->ref != 0 ? r->abs_err / fabs(r->ref) : NAN;
    }
    FILE *f = cli_output(x);
    if (!f)
        goto done;
    if (c->format == FMT_JSON)
        write_json(f, rows, nrows, file);
    else if (c->format == FMT_CSV)
        write_csv(f, rows, nrows);
    else
        write_table(f, rows, nrows, file);
    v_summary s = summarize(rows, nrows, -1);
    status = 0;
    if (c->max_error >= 0 && isfinite(s.mape) && s.mape > c->max_error) {
        fprintf(stderr, "kitsune validate: mean absolute percentage error %.2f%% exceeds "
                        "--max-error %.2f%%\n",
                100 * s.mape, 100 * c->max_error);
        status = 3;
    }
done:
    free(runs);
    free(rows);
    free(text);
    return status;
}

const cli_command cmd_validate = {
    "validate", "compare the model with a reference table or a measured kernel trace", HELP,
    O_POS | O_HW | O_SET | O_LAUNCH | O_SELECT | O_SCHED | O_REST | O_VFBWD | O_VF | O_OPTIM | O_FORMAT |
        O_OUT | O_MAXERR | O_TRACE | O_RANGE | O_WL | O_MODE | O_EXEC | O_DTYPE,
    CMD_OUT, run, 0};
