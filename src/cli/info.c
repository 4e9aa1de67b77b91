/* info: ops, FLOPs, bytes and parameters of workloads, beside the paper's op counts. */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "../io/out.h"
#include "../model/op.h"
#include "../model/run.h"
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

static int run(cli_ctx *x)
{
    cli_common *c = &x->c;
    if (c->format == FMT_CSV)
        return cli_error(x, 0, "--format", "info writes table or json");
    static char names[CLI_MAX_WL][64];
    int n = cli_workload_names(c, names, CLI_MAX_WL);
    int all = c->nworkload == 0 || (c->nworkload == 1 && !strcmp(c->workload[0], "all"));
    if (c->nworkload == 0)
        n = cli_list_dir("workloads", names, CLI_MAX_WL);
    if (all && !c->mode_given)
        c->modes = 3;
    FILE *f = cli_output(x);
    if (!f)
        return -1;
    int first = 1;
    if (c->format == FMT_JSON)
        fputs("{\"tool\": \"kitsune\", \"version\": \"" KT_VERSION "\", \"workloads\": [", f);
    else
        fprintf(f, "%-16s %-9s %6s %7s %6s %12s %12s %12s %12s %14s\n", "workload", "mode", "ops",
                "kernels", "paper", "GFLOP", "weights_MB", "activ_MB", "saved_MB", "min_dram_MB");
    for (int i = 0; i < n; i++) {
        for (int m = 0; m < 2; m++) {
            if (!(c->modes & (1 << m)))
                continue;
            arena_pos mark = arena_mark(&x->a);
            const wl_graph *fwd = cli_workload(x, names[i], m), *g;
            kt_summary s;
            if (!fwd)
                return -1;
            if (m && fwd->inference_only && (n > 1 || c->modes == 3)) {
                arena_release(&x->a, mark); /* inference-only: no training row */
                continue;
            }
            if (kt_graph(fwd, m, c->opts.optimizer, &x->a, &g, &x->e) ||
                kt_summarize(g, &x->a, &s, &x->e))
                return -1;
            int paper = g->paper_ops[m];
            if (c->format == FMT_JSON) {
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
                if (n == 1 && c->nworkload == 1 && !all) {
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
            arena_release(&x->a, mark);
        }
    }
    if (c->format == FMT_JSON)
        fputs("]}\n", f);
    return 0;
}

const cli_command cmd_info = {"info", "ops, FLOPs, bytes and parameters of a workload", HELP,
                              O_WL | O_MODE | O_SET | O_OPTIM | O_FORMAT | O_OUT, CMD_OUT, run,
                              O_WL | O_MODE};
