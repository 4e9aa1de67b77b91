/* compare: bsp, vf and kitsune side by side - time, speedups, DRAM traffic, coverage, energy. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../io/csv.h"
#include "../io/out.h"
#include "metrics.h"
#include "../model/run.h"
#include "blocks.h"
#include "cli.h"
#include "cmds.h"
#include "jobs.h"

static const char *const HELP =
    "usage: kitsune compare --hw HW --workload WL|all [options]\n"
    "\n"
    "bsp, vf and kitsune side by side: time, speedup over bsp and over vf, DRAM read/write bytes\n"
    "and their reduction, kernels, operator coverage (ops in multi-op groups or pipelines / all\n"
    "ops, as the paper's Table 2 counts it); with --power-cap also time, energy and power under\n"
    "the cap. --workload all (or several --workload) ends with geometric means of the speedups.\n"
    "\n"
    "  --mode inference|training|both   (default inference)\n"
    "  --exec bsp|vf|kitsune|all        execution models (default all)\n"
    "  --set NAME=VALUE  --dtype DT  --optimizer none|sgd|adam  --vf inductor|paper|rules\n"
    "  --vf-backward  --select search|patterns  --scheduler hetero|shared  --rest vf|bsp\n"
    "  --launch graph|plain  --power-cap W    as for predict (warnings too: see predict --help)\n"
    "  --format table|json|csv          output format (default table; csv: one row per\n"
    "                                   (workload, mode, exec), the input of scripts/plot.gp)\n"
    "  -o FILE                          write to FILE (atomically) instead of stdout\n"
    "  --jobs N                         run the (workload, mode) pairs on N threads (default: the\n"
    "                                   CPUs (nproc), at most 8; output does not depend on N)\n"
    "\n"
    "example: kitsune compare --hw a100 --workload all --mode both\n";

/* One (workload, mode) comparison: its results by execution model (NULL when not requested). */
typedef struct cmp_run {
    const char *workload; /* the file's name without .json: its identity in the output */
    int training;
    const kt_result *const *r, *const *cap;
    const wl_graph *g; /* the graph that ran (training graph in training mode) */
    kt_summary mem;    /* its memory footprint */
    cli_blocks blocks; /* a composed model's per-block breakdown (blocks.g NULL otherwise) */
} cmp_run;

/* Geometric mean of the finite, positive speedups of exec x over base b across runs. */
static double geomean(const cmp_run *runs, int n, int x, int b, int capped, int training_mask,
                      int *count)
{
    double s = 0;
    int k = 0;
    for (int i = 0; i < n; i++) {
        if (!(training_mask & (runs[i].training ? 2 : 1)))
            continue;
        const kt_result *const *v = capped ? runs[i].cap : runs[i].r;
        double u = mx_speedup(v[b], v[x]);
        if (isfinite(u) && u > 0) {
            s += log(u);
            k++;
        }
    }
    *count = k;
    return k ? exp(s / k) : NAN;
}

static void num_cell(FILE *f, const char *fmt, double v, int width)
{
    if (isfinite(v))
        fprintf(f, fmt, width, v);
    else
        fprintf(f, "%*s", width, "-");
}

static void table_run(FILE *f, const cmp_run *u, const char *hw, double cap_W)
{
    fprintf(f, "%s on %s, %s:\n", u->workload, hw, cli_mode_name(u->training));
    fprintf(f, "%-8s %12s %8s %8s %12s %12s %9s %8s %9s %10s %9s", "exec", "time_us", "vs_bsp",
            "vs_vf", "dram_rd_MB", "dram_wr_MB", "dram_red%", "kernels", "covered", "energy_J",
            "power_W");
    fprintf(f, " %9s %9s", "EDP_mJs", "runs/J");
    if (cap_W > 0)
        fprintf(f, " %12s %10s %9s %9s %8s", "cap_time_us", "cap_en_J", "cap_W", "cap_MHz",
                "cap_vs_bsp");
    fputc('\n', f);
    for (int x = 0; x < EX_COUNT; x++) {
        const kt_result *r = u->r[x];
        if (!r)
            continue;
        fprintf(f, "%-8s %12.2f", r->exec, r->time_s * 1e6);
        num_cell(f, " %*.2fx", mx_speedup(u->r[0], r), 7);
        num_cell(f, " %*.2fx", mx_speedup(u->r[1], r), 7);
        fprintf(f, " %12.3f %12.3f", (double)r->dram_read_bytes / 1e6,
                (double)r->dram_write_bytes / 1e6);
        num_cell(f, " %*.1f", 100 * mx_reduction(u->r[0], r), 9);
        fprintf(f, " %8d %4d/%-4d", r->kernels, r->ops_covered, r->ops_total);
        num_cell(f, " %*.4g", r->energy_J, 10);
        num_cell(f, " %*.1f", r->avg_power_W, 9);
        num_cell(f, " %*.4g", mx_edp_J_s(r) * 1e3, 9);
        num_cell(f, " %*.4g", mx_runs_per_J(r), 9);
        if (cap_W > 0 && u->cap[x]) {
            const kt_result *c = u->cap[x];
            fprintf(f, " %12.2f", c->time_s * 1e6);
            num_cell(f, " %*.4g", c->energy_J, 10);
            num_cell(f, " %*.1f", c->avg_power_W, 9);
            num_cell(f, " %*.0f", c->clock_MHz, 9);
            num_cell(f, " %*.2fx", mx_speedup(u->cap[0], c), 7);
        }
        fputc('\n', f);
    }
}

static void table_geomeans(FILE *f, const cmp_run *runs, int n, int modes, double cap_W)
{
    fputs("\ngeometric mean speedups", f);
    fputs(cap_W > 0 ? " (uncapped; under the power cap)\n" : "\n", f);
    for (int m = 1; m <= 2; m++) {
        if (!(modes & m))
            continue;
        static const struct {
            int x, b;
            const char *what;
        } P[] = {{1, 0, "vf over bsp"}, {2, 0, "kitsune over bsp"}, {2, 1, "kitsune over vf"}};
        for (size_t p = 0; p < sizeof P / sizeof P[0]; p++) {
            int k, kc;
            double g = geomean(runs, n, P[p].x, P[p].b, 0, m, &k);
            double gc = geomean(runs, n, P[p].x, P[p].b, 1, m, &kc);
            if (!k)
                continue;
            fprintf(f, "  %-9s %-17s %6.3fx over %d runs", cli_mode_name(m == 2), P[p].what, g, k);
            if (cap_W > 0 && kc)
                fprintf(f, "; %6.3fx under %.0f W", gc, cap_W);
            fputc('\n', f);
        }
    }
}

static void json_entry(FILE *f, const kt_result *r, const kt_result *bsp, const kt_result *vf,
                       const wl_graph *g)
{
    fputs("{\"exec\": ", f);
    out_json_str(f, r->exec);
    out_json_knum(f, "time_s", r->time_s);
    out_json_knum(f, "speedup_vs_bsp", mx_speedup(bsp, r));
    out_json_knum(f, "speedup_vs_vf", mx_speedup(vf, r));
    fprintf(f, ", \"flops\": %lld, \"dram_read_bytes\": %lld, \"dram_write_bytes\": %lld",
            (long long)r->flops, (long long)r->dram_read_bytes, (long long)r->dram_write_bytes);
    out_json_knum(f, "traffic_reduction_frac", mx_reduction(bsp, r));
    fprintf(f, ", \"kernels\": %d, \"ops_total\": %d, \"ops_covered\": %d", r->kernels,
            r->ops_total, r->ops_covered);
    out_json_knum(f, "coverage_frac", mx_coverage(r));
    out_json_knum(f, "clock_MHz", r->clock_MHz);
    out_json_knum(f, "energy_J", r->energy_J);
    out_json_knum(f, "avg_power_W", r->avg_power_W);
    out_json_knum(f, "edp_J_s", mx_edp_J_s(r));
    out_json_knum(f, "perf_per_W_runs_per_J", mx_runs_per_J(r));
    fputs(", \"class_time_s\": {", f);
    for (int i = 0; i < UC_COUNT; i++) {
        fprintf(f, "%s\"%s\": ", i ? ", " : "", out_class_name(i));
        out_json_num(f, r->class_time_s[i]);
    }
    fputs("}", f);
    if (g && r->extra && r->exec_id == EX_KITSUNE)
        out_json_pipelines(f, r->extra, g);
    fputs("}", f);
}

static void json_all(FILE *f, const cmp_run *runs, int n, const cli_ctx *ctx)
{
    const char *hw = ctx->hw.name;
    int modes = ctx->c.modes;
    double cap_W = ctx->c.opts.power_cap_W;
    fputs("{\"tool\": \"kitsune\", \"version\": ", f);
    out_json_str(f, KT_VERSION);
    fputs(", \"command\": \"compare\", \"hw\": ", f);
    out_json_str(f, hw);
    if (cap_W > 0) {
        out_json_knum(f, "power_cap_W", cap_W);
    }
    fputs(",\n \"runs\": [", f);
    for (int i = 0; i < n; i++) {
        const cmp_run *u = &runs[i];
        fputs(i ? ",\n " : "\n ", f);
        fputs("{\"workload\": ", f);
        out_json_str(f, u->workload);
        fprintf(f, ", \"mode\": \"%s\"", cli_mode_name(u->training));
        cli_json_memory(f, &u->mem, &ctx->hw);
        fputs(",\n  \"results\": [", f);
        int k = 0;
        for (int x = 0; x < EX_COUNT; x++)
            if (u->r[x]) {
                fputs(k++ ? ",\n   " : "\n   ", f);
                json_entry(f, u->r[x], u->r[0], u->r[1], u->g);
            }
        fputs("]", f);
        if (cap_W > 0) {
            fputs(",\n  \"capped_results\": [", f);
            k = 0;
            for (int x = 0; x < EX_COUNT; x++)
                if (u->cap[x]) {
                    fputs(k++ ? ",\n   " : "\n   ", f);
                    json_entry(f, u->cap[x], u->cap[0], u->cap[1], NULL);
                }
            fputs("]", f);
        }
        cli_blocks_json(f, &u->blocks, "  ");
        fputs("}", f);
    }
    fputs("],\n \"geomean\": {", f);
    int first = 1;
    for (int m = 1; m <= 2; m++) {
        if (!(modes & m))
            continue;
        for (int capped = 0; capped <= (cap_W > 0); capped++) {
            int k1, k2, k3;
            double a = geomean(runs, n, 1, 0, capped, m, &k1);
            double b = geomean(runs, n, 2, 0, capped, m, &k2);
            double c = geomean(runs, n, 2, 1, capped, m, &k3);
            fprintf(f, "%s\"%s%s\": {\"vf_speedup_vs_bsp\": ", first ? "" : ", ",
                    cli_mode_name(m == 2), capped ? "_capped" : "");
            out_json_num(f, a);
            out_json_knum(f, "kitsune_speedup_vs_bsp", b);
            out_json_knum(f, "kitsune_speedup_vs_vf", c);
            fputs("}", f);
            first = 0;
        }
    }
    fputs("}", f);
    cli_json_warnings(f, ctx);
    fputs("}\n", f);
}

static void csv_all(FILE *f, const cmp_run *runs, int n, const char *hw, double cap_W)
{
    fputs("workload,mode,exec,hw,time_s,speedup_vs_bsp,speedup_vs_vf,flops,dram_read_bytes,"
          "dram_write_bytes,dram_bytes,traffic_reduction_frac,kernels,ops_total,ops_covered,"
          "coverage_frac,clock_MHz,energy_J,avg_power_W,edp_J_s,perf_per_W_runs_per_J,"
          "class_both_low_time_s,"
          "class_sm_low_time_s,class_dram_low_time_s,class_neither_low_time_s,power_cap_W,"
          "capped_time_s,capped_energy_J,capped_avg_power_W,capped_clock_MHz,"
          "capped_speedup_vs_bsp,capped_speedup_vs_vf,energy_tensor_J,energy_simt_J,energy_dram_J,"
          "energy_l2_J,energy_smem_J,energy_rf_J,energy_static_J\n",
          f);
    for (int i = 0; i < n; i++) {
        const cmp_run *u = &runs[i];
        for (int x = 0; x < EX_COUNT; x++) {
            const kt_result *r = u->r[x];
            if (!r)
                continue;
            csv_field(f, u->workload);
            fprintf(f, ",%s,%s,", cli_mode_name(u->training), r->exec);
            csv_field(f, hw);
            csv_num(f, r->time_s);
            csv_num(f, mx_speedup(u->r[0], r));
            csv_num(f, mx_speedup(u->r[1], r));
            fprintf(f, ",%lld,%lld,%lld,%lld", (long long)r->flops, (long long)r->dram_read_bytes,
                    (long long)r->dram_write_bytes, (long long)mx_dram(r));
            csv_num(f, mx_reduction(u->r[0], r));
            fprintf(f, ",%d,%d,%d", r->kernels, r->ops_total, r->ops_covered);
            csv_num(f, mx_coverage(r));
            csv_num(f, r->clock_MHz);
            csv_num(f, r->energy_J);
            csv_num(f, r->avg_power_W);
            csv_num(f, mx_edp_J_s(r));
            csv_num(f, mx_runs_per_J(r));
            for (int c = 0; c < UC_COUNT; c++)
                csv_num(f, r->class_time_s[c]);
            const kt_result *c = cap_W > 0 ? u->cap[x] : NULL;
            csv_num(f, cap_W > 0 ? cap_W : NAN);
            csv_num(f, c ? c->time_s : NAN);
            csv_num(f, c ? c->energy_J : NAN);
            csv_num(f, c ? c->avg_power_W : NAN);
            csv_num(f, c ? c->clock_MHz : NAN);
            csv_num(f, c ? mx_speedup(u->cap[0], c) : NAN);
            csv_num(f, c ? mx_speedup(u->cap[1], c) : NAN);
            const double parts[] = {r->e_tensor_J, r->e_simt_J, r->e_dram_J, r->e_l2_J,
                                    r->e_smem_J,   r->e_rf_J,   r->e_static_J};
            for (size_t k = 0; k < sizeof parts / sizeof parts[0]; k++)
                csv_num(f, parts[k]);
            fputc('\n', f);
        }
    }
}

static int print_all(cli_ctx *x, cmp_run *runs, int nrun)
{
    cli_common *c = &x->c;
    FILE *f = cli_output(x);
    if (!f)
        return -1;
    if (c->format == FMT_JSON) {
        json_all(f, runs, nrun, x);
    } else if (c->format == FMT_CSV) {
        csv_all(f, runs, nrun, x->hw.name, c->opts.power_cap_W);
    } else {
        for (int i = 0; i < nrun; i++) {
            if (i)
                fputc('\n', f);
            table_run(f, &runs[i], x->hw.name, c->opts.power_cap_W);
            cli_blocks_compare(f, &runs[i].blocks);
        }
        if (nrun > 1)
            table_geomeans(f, runs, nrun, c->modes, c->opts.power_cap_W);
    }
    return 0;
}


/* One (workload, mode) pair's model run, on a worker thread: its own arena and result (the
 * graph and the GPU are shared, read only). */
typedef struct cmp_job {
    const wl_graph *g;
    kt_opts o;
    arena a;
    kt_run_result rr;
} cmp_job;

typedef struct cmp_jobs {
    const hw_gpu *hw;
    cmp_job *job;
    long long fail_run; /* KITSUNE_TEST_FAIL_RUN: this run and every later one fail; -1 none */
} cmp_jobs;

static int cmp_one(void *ctx, void *state, long long item, char **out, kt_err *e)
{
    cmp_jobs *c = ctx;
    cmp_job *j = &c->job[item];
    (void)state;
    *out = NULL;
    if (c->fail_run >= 0 && item >= c->fail_run)
        return err_set(e, KT_EINTERNAL, NULL, NULL, "run %lld failed (KITSUNE_TEST_FAIL_RUN)",
                       item);
    return kt_run(c->hw, j->g, &j->o, &j->a, &j->rr, e);
}

/* A run's expected work, to order the work longest first: its graph's ops, three times as many
 * in training (forward, backward, optimizer). */
static long long cmp_weight(const cmp_job *j)
{
    return (long long)j->g->nop * (j->o.training ? 3 : 1);
}

/* Threads by default: one per CPU (jobs_cpus), at most this many (the pairs are few). */
enum { CMP_JOBS_DEFAULT_MAX = 8 };

/* The (workload, mode) pairs' runs, in output order: loaded here, run on worker threads, checked
 * and summarised here in order (warnings and the first error come as a sequential run gives
 * them). */
static int run_all(cli_ctx *x, const char **names, int nwl, cmp_run *runs, cmp_job *job,
                   int *nrun_out)
{
    cli_common *c = &x->c;
    int njob = 0, load_failed = 0;
    for (int w = 0; w < nwl && !load_failed; w++) {
        char path[PATH_MAX];
        cJSON *root = cli_wl_parse(names[w], path, sizeof path, &x->e); /* once for both modes */
        if (!root) { /* reported after the runs before it, as a sequential run would */
            load_failed = 1;
            break;
        }
        for (int m = 1; m <= 2; m++) {
            if (!(c->modes & m))
                continue;
            cmp_run *u = &runs[njob];
            memset(u, 0, sizeof *u);
            /* the file name is the workload's identity in the output (plots key on it) */
            const char *base = strrchr(names[w], '/') ? strrchr(names[w], '/') + 1 : names[w];
            size_t len = strlen(base);
            if (len > 5 && !strcmp(base + len - 5, ".json"))
                len -= 5;
            char *id = arena_strdup(&x->a, base);
            if (!id)
                return cli_error(x, KT_EINTERNAL, NULL, "out of memory");
            id[len] = 0;
            u->workload = id;
            u->training = m == 2;
            wl_graph *g = arena_calloc(&x->a, 1, sizeof *g);
            if (!g)
                err_set(&x->e, KT_EINTERNAL, NULL, NULL, "out of memory");
            if (!g || cli_wl_build(c, root, path, u->training, &x->a, g, &x->e)) {
                load_failed = 1;
                break;
            }
            if (u->training && g->inference_only && (nwl > 1 || c->modes == 3))
                continue; /* e.g. a decode step: no training run to compare */
            job[njob].g = g;
            job[njob].o = c->opts;
            job[njob].o.training = u->training;
            njob++;
        }
        cJSON_Delete(root);
    }
    kt_err load_err = x->e;
    long long *items = arena_calloc(&x->a, (size_t)njob + 1, sizeof *items);
    if (!items)
        return cli_error(x, KT_EINTERNAL, NULL, "out of memory");
    /* the longest runs first, so that the threads finish together: a training graph has about
     * three times its forward ops (the order of the work only; output stays in run order) */
    int *slot = arena_calloc(&x->a, (size_t)njob + 1, sizeof *slot);
    if (!slot)
        return cli_error(x, KT_EINTERNAL, NULL, "out of memory");
    for (int k = 0; k < njob; k++) { /* insertion, stable: equal weights keep run order */
        int at = k;
        for (; at > 0 && cmp_weight(&job[items[at - 1]]) < cmp_weight(&job[k]); at--)
            items[at] = items[at - 1];
        items[at] = k;
    }
    for (int k = 0; k < njob; k++)
        slot[items[k]] = k;
    /* tests: KITSUNE_TEST_FAIL_RUN=K makes runs K, K+1, ... (0-based, output order) fail: the
     * threads meet several failures in their own order, and the error must still be run K's */
    const char *tf = getenv("KITSUNE_TEST_FAIL_RUN");
    char *end = NULL;
    long long fail_run = tf && *tf ? strtoll(tf, &end, 10) : -1;
    cmp_jobs ctx = {&x->hw, job, end && *end ? -1 : fail_run}; /* not a number: no failure */
    jobs_spec js = {items, njob, cli_threads(c, njob, CMP_JOBS_DEFAULT_MAX), &ctx, cmp_one, NULL, NULL, NULL};
    jobs *jb = jobs_start(&js, &x->e);
    if (!jb)
        return -1;
    int rc = 0, nrun = 0, sequential = 0;
    for (int k = 0; k < njob && !rc; k++) {
        char *none;
        if (!sequential && jobs_take(jb, slot[k], &none)) {
            /* a run failed (or a thread did not start): the threads stop, and the runs from this
             * one on are redone here in order, so that the error is the first a sequential run
             * meets */
            jobs_end(jb);
            jb = NULL;
            sequential = 1;
        }
        if (sequential) {
            arena_free(&job[k].a);
            if (cmp_one(&ctx, NULL, k, &none, &x->e)) {
                rc = -1;
                break;
            }
        }
        kt_run_result *rr = &job[k].rr;
        cmp_run *u = &runs[k];
        if (cli_check_run(x, &x->hw, rr->g, rr->works, u->training, &u->mem)) {
            rc = -1;
            break;
        }
        cli_warn_power(x, rr);
        u->g = rr->g;
        u->r = rr->by;
        u->cap = rr->capped_by;
        if (cli_blocks_of(x, rr->g, rr->by, &u->blocks)) {
            rc = -1;
            break;
        }
        nrun++;
    }
    jobs_end(jb); /* (NULL: ended above) */
    if (!rc && load_failed) {
        x->e = load_err;
        rc = -1;
    }
    *nrun_out = nrun;
    return rc;
}

static int run(cli_ctx *x)
{
    cli_common *c = &x->c;
    if (cli_applicable(x))
        return -1;
    const char **names;
    int nwl = cli_workload_names(c, &x->a, &names);
    if (!nwl)
        return cli_error(x, 0, "--workload", c->nworkload ? "no shipped workloads found"
                                                         : "missing (e.g. --workload nerf or all)");
    cmp_run *runs = arena_calloc(&x->a, 2 * (size_t)nwl, sizeof *runs);
    cmp_job *job = arena_calloc(&x->a, 2 * (size_t)nwl, sizeof *job);
    if (!runs || !job)
        return cli_error(x, KT_EINTERNAL, NULL, "out of memory");
    int nrun = 0;
    int rc = run_all(x, names, nwl, runs, job, &nrun);
    if (!rc)
        rc = print_all(x, runs, nrun);
    for (int k = 0; k < 2 * nwl; k++) /* the runs' memory, once printed */
        arena_free(&job[k].a);
    return rc;
}

const cli_command cmd_compare = {
    "compare", "bsp, vf and kitsune side by side (speedups, traffic, coverage)", HELP,
    O_MODEL | O_EXEC | O_FORMAT | O_OUT | O_JOBS, CMD_HW | CMD_OUT, run, O_WL | O_MODE};
