/* info: ops, FLOPs, bytes and parameters of workloads, beside the paper's op counts. */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "../io/out.h"
#include "../model/autodiff.h"
#include "../model/op.h"
#include "cli.h"
#include "cmds.h"

static const char *const HELP =
    "usage: kitsune info [--workload WL]... [--mode inference|training|both] [--set NAME=VALUE]...\n"
    "                    [--optimizer none|sgd|adam] [--format table|json] [-o FILE]\n"
    "\n"
    "Summarize workloads: ops (graph nodes), kernels (nodes that launch one: views are free),\n"
    "FLOPs, weight bytes, activation bytes, minimum DRAM bytes (inputs and weights read once,\n"
    "outputs written once) and the op count of the Kitsune paper's Table 2. Without --workload:\n"
    "every shipped workload in both modes. With one workload, also its parameters and ops.\n"
    "\n"
    "example: kitsune info --workload llama3-8b-ctx --mode training\n";

typedef struct wl_summary {
    int ops, kernels;
    int64_t flops_tensor, flops_simt, weight_bytes, act_bytes, min_dram_bytes, saved_bytes;
} wl_summary;

static int summarize(const wl_graph *g, arena *a, wl_summary *s, kt_err *e)
{
    memset(s, 0, sizeof *s);
    op_work *w = op_works(g, a, e);
    if (!w)
        return -1;
    s->ops = g->nop;
    for (int i = 0; i < g->nop; i++) {
        if (w[i].kind != OPK_FREE)
            s->kernels++;
        s->flops_tensor += w[i].flops_tensor;
        s->flops_simt += w[i].flops_simt;
    }
    for (int i = 0; i < g->ntensor; i++) {
        const wl_tensor *t = &g->t[i];
        int view = t->producer >= 0 && w[t->producer].kind == OPK_FREE;
        if (t->kind == TK_WEIGHT)
            s->weight_bytes += t->bytes;
        if (t->kind == TK_INTER && !view)
            s->act_bytes += t->bytes;
        if (t->kind == TK_INPUT || t->kind == TK_WEIGHT || t->kind == TK_OUTPUT)
            s->min_dram_bytes += t->bytes;
        if (t->saved)
            s->saved_bytes += t->bytes;
    }
    return 0;
}

static int load_mode(const cli_common *c, const char *name, int training, arena *a,
                     const wl_graph **out, kt_err *e)
{
    wl_graph *g = arena_calloc(a, 1, sizeof *g);
    if (!g)
        return err_set(e, KT_EINTERNAL, NULL, NULL, "out of memory");
    if (cli_load_wl(c, name, training, a, g, e))
        return -1;
    *out = g;
    if (!training)
        return 0;
    if (g->inference_only)
        return 1;
    wl_graph *tg = arena_calloc(a, 1, sizeof *tg);
    if (!tg)
        return err_set(e, KT_EINTERNAL, NULL, NULL, "out of memory");
    if (ad_training_graph(g, c->opts.optimizer, a, tg, e))
        return -1;
    *out = tg;
    return 0;
}

int cmd_info(int argc, char **argv)
{
    cli_common c;
    kt_err e;
    err_clear(&e);
    int rc = cli_parse(argc, argv, O_WL | O_MODE | O_SET | O_OPTIM | O_FORMAT | O_OUT, &c, &e);
    if (rc == 1) {
        fputs(HELP, stdout);
        return 0;
    }
    if (rc)
        return cli_fail("info", &e);
    if (c.format == FMT_CSV) {
        err_set(&e, KT_EINPUT, NULL, "--format", "info writes table or json");
        return cli_fail("info", &e);
    }
    static char names[CLI_MAX_WL][64];
    int n = 0;
    if (c.nworkload == 0 || (c.nworkload == 1 && !strcmp(c.workload[0], "all"))) {
        n = cli_list_dir("workloads", names, CLI_MAX_WL);
        if (!c.mode_given)
            c.modes = 3;
    } else {
        for (int i = 0; i < c.nworkload; i++)
            snprintf(names[n++], 64, "%s", c.workload[i]);
    }
    cli_out out;
    if (cli_out_open(&out, c.out_path, &e))
        return cli_fail("info", &e);
    FILE *f = out.f;
    int status = 0, first = 1;
    if (c.format == FMT_JSON)
        fputs("{\"tool\": \"kitsune\", \"version\": \"" KT_VERSION "\", \"workloads\": [", f);
    else
        fprintf(f, "%-16s %-9s %6s %7s %6s %12s %12s %12s %12s %14s\n", "workload", "mode", "ops",
                "kernels", "paper", "GFLOP", "weights_MB", "activ_MB", "saved_MB", "min_dram_MB");
    for (int i = 0; i < n && !status; i++) {
        for (int m = 0; m < 2 && !status; m++) {
            if (!(c.modes & (1 << m)))
                continue;
            arena a = {0};
            const wl_graph *g = NULL;
            wl_summary s;
            int lr = load_mode(&c, names[i], m, &a, &g, &e);
            if (lr == 1 && (n > 1 || c.modes == 3)) { /* inference-only: no training row */
                arena_free(&a);
                continue;
            }
            if (lr == 1)
                err_set(&e, KT_EINPUT, g->file, "inference_only",
                        "workload \"%s\" is inference-only (no training graph)", g->name);
            if (lr || summarize(g, &a, &s, &e)) {
                status = cli_fail("info", &e);
                arena_free(&a);
                break;
            }
            int paper = g->paper_ops[m];
            if (c.format == FMT_JSON) {
                fputs(first ? "\n " : ",\n ", f);
                first = 0;
                fputs("{\"workload\": ", f);
                out_json_str(f, g->name);
                fprintf(f, ", \"mode\": \"%s\", \"ops\": %d, \"kernels\": %d, \"paper_ops\": %d, "
                           "\"flops\": %lld, \"flops_tensor\": %lld, \"flops_simt\": %lld, "
                           "\"weight_bytes\": %lld, \"activation_bytes\": %lld, "
                           "\"saved_activation_bytes\": %lld, \"min_dram_bytes\": %lld, \"params\": {",
                        cli_mode_name(m), s.ops, s.kernels, paper,
                        (long long)(s.flops_tensor + s.flops_simt), (long long)s.flops_tensor,
                        (long long)s.flops_simt, (long long)s.weight_bytes, (long long)s.act_bytes,
                        (long long)s.saved_bytes, (long long)s.min_dram_bytes);
                for (int k = 0; k < g->nparam; k++)
                    fprintf(f, "%s\"%s\": %lld", k ? ", " : "", g->param[k].name,
                            (long long)g->param[k].value);
                fputs("}}", f);
            } else {
                char pap[16];
                if (paper)
                    snprintf(pap, sizeof pap, "%d", paper);
                else
                    snprintf(pap, sizeof pap, "-");
                fprintf(f, "%-16s %-9s %6d %7d %6s %12.2f %12.2f %12.2f %12.2f %14.2f\n", g->name,
                        cli_mode_name(m), s.ops, s.kernels, pap,
                        (double)(s.flops_tensor + s.flops_simt) / 1e9, (double)s.weight_bytes / 1e6,
                        (double)s.act_bytes / 1e6, (double)s.saved_bytes / 1e6,
                        (double)s.min_dram_bytes / 1e6);
                if (n == 1 && c.nworkload == 1) {
                    fprintf(f, "  params:");
                    for (int k = 0; k < g->nparam; k++)
                        fprintf(f, " %s=%lld", g->param[k].name, (long long)g->param[k].value);
                    fprintf(f, "\n  source: %s\n", g->source[0] ? g->source : "-");
                    for (int k = 0; k < g->nop; k++) {
                        const wl_op *o = &g->op[k];
                        const wl_tensor *y = &g->t[o->out[0]];
                        fprintf(f, "  %4d %-28s %-18s %-5s [", k, o->name, op_name(o->type),
                                o->phase == PH_FWD ? "fwd" : o->phase == PH_BWD ? "bwd" : "opt");
                        for (int d = 0; d < y->ndim; d++)
                            fprintf(f, "%s%lld", d ? ", " : "", (long long)y->dim[d]);
                        fprintf(f, "] %s\n", dt_name(y->dt));
                    }
                }
            }
            arena_free(&a);
        }
    }
    if (c.format == FMT_JSON)
        fputs("]}\n", f);
    if (cli_out_close(&out, !status, &e) && !status)
        status = cli_fail("info", &e);
    return status;
}
