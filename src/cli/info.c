/* info: ops, FLOPs, bytes and parameters of workloads, beside the paper's op counts. */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "../io/out.h"
#include "../model/lint.h"
#include "../model/op.h"
#include "../model/run.h"
#include "cli.h"
#include "cmds.h"

static const char *const HELP =
    "usage: kitsune info [--workload WL]... [--hw HW] [--mode inference|training|both]\n"
    "                    [--set NAME=VALUE]... [--dtype DT] [--optimizer none|sgd|adam]\n"
    "                    [--format table|json] [-o FILE]\n"
    "\n"
    "Summarize workloads: ops (graph nodes), kernels (nodes that launch one: views are free),\n"
    "FLOPs, weight bytes, activation bytes, saved activations, minimum DRAM bytes (inputs and\n"
    "weights read once, outputs written once), the peak of live activations and the memory\n"
    "footprint (weights + that peak), and the op count of the Kitsune paper's Table 2. Without\n"
    "--workload: every shipped workload in both modes. With one workload, also its parameters and\n"
    "ops.\n"
    "\n"
    "With --hw: the GPU first - name, description, file, calibration (date, GPU and number of\n"
    "measured fields, or none: a datasheet file) and its peaks; then, for --workload, whether each\n"
    "footprint fits its memory (a warning when not). --hw alone describes only the GPU.\n"
    "\n"
    "examples: kitsune info --workload llama3-8b-ctx --mode training\n"
    "          kitsune info --hw h200 --format json\n";

/* The GPU: what the figure scripts print in their captions, and its headline peaks. */
static void hw_table(FILE *f, const hw_gpu *g, const char *file)
{
    fprintf(f, "%s: %s\n  file: %s\n", g->name, g->description, file);
    if (g->measured)
        fprintf(f, "  calibration: %d fields measured on %s, %s\n", g->measured_fields,
                g->measured_gpu[0] ? g->measured_gpu : "an unnamed GPU",
                g->measured_date[0] ? g->measured_date : "no date");
    else
        fputs("  calibration: none (datasheet, derived and estimated values; see its sources)\n", f);
    fprintf(f, "  %d SMs at %.0f MHz; tensor", g->sm_count, g->clock_MHz);
    for (int d = 0; d < DT_COUNT; d++)
        if (g->tensor_flop_per_clk_per_sm[d] > 0)
            fprintf(f, " %s %.1f", dt_name((dtype)d),
                    hw_tensor_flops_per_sm(g, (dtype)d, g->clock_MHz) * g->sm_count / 1e12);
    fprintf(f, ", fp32 SIMT %.1f TFLOP/s\n", hw_simt_flops_per_sm(g, g->clock_MHz) * g->sm_count / 1e12);
    fprintf(f, "  DRAM %g GiB at %g GB/s; L2 %g MiB at %g GB/s; TDP %g W\n", g->dram_capacity_GiB,
            g->dram_bandwidth_GBps, g->l2_capacity_MiB, g->l2_bandwidth_GBps, g->tdp_W);
}

static void hw_json(FILE *f, const hw_gpu *g, const char *file)
{
    fputs(", \"hw\": {\"name\": ", f);
    out_json_str(f, g->name);
    out_json_kstr(f, "description", g->description);
    out_json_kstr(f, "file", file);
    fprintf(f, ", \"calibrated\": %s, \"calibration\": ", g->measured ? "true" : "false");
    if (g->measured) {
        fputs("{\"date\": ", f);
        out_json_str(f, g->measured_date);
        out_json_kstr(f, "gpu", g->measured_gpu);
        fprintf(f, ", \"fields\": %d}", g->measured_fields);
    } else {
        fputs("null", f);
    }
    fprintf(f, ", \"sm_count\": %d", g->sm_count);
    out_json_knum(f, "clock_MHz", g->clock_MHz);
    fputs(", \"tensor_peak_TFLOPs\": {", f);
    for (int d = 0, n = 0; d < DT_COUNT; d++)
        if (g->tensor_flop_per_clk_per_sm[d] > 0) {
            fprintf(f, "%s\"%s\": ", n++ ? ", " : "", dt_name((dtype)d));
            out_json_num(f, hw_tensor_flops_per_sm(g, (dtype)d, g->clock_MHz) * g->sm_count / 1e12);
        }
    fputs("}", f);
    out_json_knum(f, "simt_fp32_peak_TFLOPs",
                  hw_simt_flops_per_sm(g, g->clock_MHz) * g->sm_count / 1e12);
    out_json_knum(f, "dram_capacity_GiB", g->dram_capacity_GiB);
    out_json_knum(f, "dram_bandwidth_GBps", g->dram_bandwidth_GBps);
    out_json_knum(f, "l2_capacity_MiB", g->l2_capacity_MiB);
    out_json_knum(f, "l2_bandwidth_GBps", g->l2_bandwidth_GBps);
    out_json_knum(f, "tdp_W", g->tdp_W);
    fputs("}", f);
}

static int run(cli_ctx *x)
{
    cli_common *c = &x->c;
    if (c->format == FMT_CSV)
        return cli_error(x, 0, "--format", "info writes table or json");
    char hw_file[PATH_MAX];
    const hw_gpu *hw = NULL;
    if (c->hw) {
        if (cli_resolve("hw", c->hw, hw_file, sizeof hw_file, &x->e) ||
            cli_load_hw(c->hw, &x->hw, &x->e))
            return -1;
        hw = &x->hw;
        lint_list l = {0};
        lint_hw(hw, &l);
        cli_warn(x, &l);
    }
    const char **names;
    int n = cli_workload_names(c, &x->a, &names);
    int all = c->nworkload == 0 || (c->nworkload == 1 && !strcmp(c->workload[0], "all"));
    if (c->nworkload == 0)
        n = hw ? 0 : cli_list_dir("workloads", &x->a, &names);
    if (all && !c->mode_given)
        c->modes = 3;
    if (cli_applicable(x))
        return -1;
    FILE *f = cli_output(x);
    if (!f)
        return -1;
    int first = 1;
    if (c->format == FMT_JSON) {
        fputs("{\"tool\": \"kitsune\", \"version\": \"" KT_VERSION "\"", f);
        if (hw)
            hw_json(f, hw, hw_file);
        fputs(", \"workloads\": [", f);
    } else {
        if (hw)
            hw_table(f, hw, hw_file);
        if (hw && n)
            fputc('\n', f);
        if (n)
            fprintf(f, "%-16s %-9s %6s %7s %6s %12s %12s %12s %12s %14s %12s %13s%s\n", "workload",
                    "mode", "ops", "kernels", "paper", "GFLOP", "weights_MB", "activ_MB",
                    "saved_MB", "min_dram_MB", "peak_act_MB", "footprint_MB", hw ? "  fits" : "");
    }
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
            if (hw && cli_check_run(x, hw, g, NULL, m, &s))
                return -1;
            int paper = g->paper_ops[m];
            double cap = hw ? hw->dram_capacity_GiB * 1073741824.0 : 0;
            if (c->format == FMT_JSON) {
                fputs(first ? "\n " : ",\n ", f);
                first = 0;
                fputs("{\"workload\": ", f);
                out_json_str(f, g->name);
                fprintf(f, ", \"mode\": \"%s\", \"ops\": %d, \"kernels\": %d, \"paper_ops\": %d, "
                           "\"flops\": %lld, \"flops_tensor\": %lld, \"flops_simt\": %lld, "
                           "\"weight_bytes\": %lld, \"activation_bytes\": %lld, "
                           "\"saved_activation_bytes\": %lld, \"min_dram_bytes\": %lld, "
                           "\"peak_activation_bytes\": %lld, \"footprint_bytes\": %lld, ",
                        cli_mode_name(m), s.ops, s.kernels, paper,
                        (long long)(s.flops_tensor + s.flops_simt), (long long)s.flops_tensor,
                        (long long)s.flops_simt, (long long)s.weight_bytes, (long long)s.act_bytes,
                        (long long)s.saved_bytes, (long long)s.min_dram_bytes,
                        (long long)s.peak_act_bytes, (long long)s.footprint_bytes);
                if (hw)
                    fprintf(f, "\"fits\": %s, ",
                            (double)s.footprint_bytes <= cap ? "true" : "false");
                fputs("\"params\": {", f);
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
                fprintf(f, "%-16s %-9s %6d %7d %6s %12.2f %12.2f %12.2f %12.2f %14.2f %12.2f %13.2f",
                        g->name, cli_mode_name(m), s.ops, s.kernels, pap,
                        (double)(s.flops_tensor + s.flops_simt) / 1e9, (double)s.weight_bytes / 1e6,
                        (double)s.act_bytes / 1e6, (double)s.saved_bytes / 1e6,
                        (double)s.min_dram_bytes / 1e6, (double)s.peak_act_bytes / 1e6,
                        (double)s.footprint_bytes / 1e6);
                if (hw)
                    fprintf(f, "  %4s", (double)s.footprint_bytes <= cap ? "yes" : "no");
                fputc('\n', f);
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
    if (c->format == FMT_JSON) {
        fputs("]", f);
        cli_json_warnings(f, x);
        fputs("}\n", f);
    }
    return 0;
}

const cli_command cmd_info = {"info", "ops, FLOPs, bytes and memory footprint of workloads; a GPU",
                              HELP, O_WL | O_HW | O_MODE | O_SET | O_DTYPE | O_OPTIM | O_FORMAT |
                                        O_OUT,
                              CMD_OUT, run, O_WL | O_MODE};
