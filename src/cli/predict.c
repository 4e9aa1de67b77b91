/* predict: time, traffic and energy of one workload under the requested execution models. */
#include <stdio.h>
#include <string.h>

#include "../io/out.h"
#include "../model/run.h"
#include "blocks.h"
#include "cli.h"
#include "cmds.h"

static const char *const HELP =
    "usage: kitsune predict --hw HW --workload WL [options]\n"
    "\n"
    "Predict time, DRAM traffic, energy and power of one workload, kernel by kernel.\n"
    "HW and WL are names under hw/ and workloads/ (see 'kitsune list') or paths to .json files.\n"
    "\n"
    "  --mode inference|training   training derives forward + backward (default inference)\n"
    "  --exec bsp|vf|kitsune|all   execution model(s) (default bsp)\n"
    "  --set NAME=VALUE            override a workload parameter (repeatable)\n"
    "  --dtype DT                  run the workload in another precision: every floating-point\n"
    "                              tensor becomes DT (fp32, tf32, fp16, bf16, fp8)\n"
    "  --optimizer none|sgd|adam   training: append optimizer update ops (default none)\n"
    "  --vf inductor|paper|rules   vf fusion policy (default inductor: what torch.compile fuses;\n"
    "                              paper: the Kitsune paper's baseline, forward only; rules: the\n"
    "                              aggressive rules incl. GEMM chains)\n"
    "  --vf-backward               vf rules: fuse backward chains too (default: forward only)\n"
    "  --select search|patterns    kitsune subgraph selection (default search)\n"
    "  --scheduler hetero|shared   kitsune: SIMT+Tensor CTA pools (paper) or one shared pool\n"
    "  --rest vf|bsp               kitsune: how ops outside pipelines run (default vf)\n"
    "  --launch graph|plain        launch gaps of CUDA graphs (default) or plain launches\n"
    "  --power-cap W               also report execution under a board power cap (DVFS)\n"
    "  --format table|json|csv     output format (default table)\n"
    "  --explain                   table: show the roofline terms behind every time\n"
    "  -o FILE                     write to FILE (atomically) instead of stdout\n"
    "\n"
    "Warnings (stderr, and \"warnings\" in JSON) flag what makes a prediction wrong without\n"
    "failing it: hw values outside the range of real GPUs, GEMMs in a dtype the GPU has no tensor\n"
    "cores for (they run on FP32 SIMT units), a memory footprint (weights + peak live activations,\n"
    "\"memory\" in JSON) over the GPU's capacity.\n"
    "\n"
    "example: kitsune predict --hw a100 --workload nerf --exec all --set B=65536\n";

static int run(cli_ctx *x)
{
    cli_common *c = &x->c;
    if (c->modes == 3)
        return cli_error(x, 0, "--mode", "predict takes one mode (use compare for both)");
    if (!c->exec_given) /* predict's default is bsp alone */
        c->opts.exec_mask = EXEC_BSP;
    if (cli_applicable(x))
        return -1;
    kt_run_result rr;
    if (cli_run_workload(x, &rr))
        return -1;
    cli_blocks blk;
    if (cli_blocks_of(x, rr.g, rr.by, &blk))
        return -1;
    FILE *f = cli_output(x);
    if (!f)
        return -1;
    if (c->format == FMT_JSON) {
        out_json_head(f, KT_VERSION, &x->hw, rr.g, c->opts.training);
        cli_json_memory(f, &x->mem, &x->hw);
        fputs(",\n \"results\": [", f);
        for (int i = 0; i < rr.nres; i++) {
            fputs(i ? ",\n " : "\n ", f);
            out_json_result(f, &rr.res[i], rr.g, 1);
        }
        fputs("]", f);
        if (c->opts.power_cap_W > 0) {
            fputs(",\n \"power_cap_W\": ", f);
            out_json_num(f, c->opts.power_cap_W);
            fputs(",\n \"capped_results\": [", f);
            for (int i = 0; i < rr.nres; i++) {
                fputs(i ? ",\n " : "\n ", f);
                out_json_result(f, &rr.capped[i], rr.g, 1); /* each op at its capped clock */
            }
            fputs("]", f);
        }
        cli_blocks_json(f, &blk, " ");
        cli_json_warnings(f, x);
        fputs("}\n", f);
    } else if (c->format == FMT_CSV) {
        out_csv_items_header(f);
        for (int i = 0; i < rr.nres; i++)
            out_csv_items(f, &rr.res[i], rr.g, &x->hw, c->opts.training);
    } else {
        for (int i = 0; i < rr.nres; i++) {
            fprintf(f, "%s%s on %s, %s, %s:\n", i ? "\n" : "", rr.g->name, x->hw.name,
                    cli_mode_name(c->opts.training), rr.res[i].exec);
            out_table_result(f, &rr.res[i], rr.g, &x->hw, c->explain);
            cli_blocks_table(f, &blk, (int)rr.res[i].exec_id);
            if (c->opts.power_cap_W > 0) {
                const kt_result *cp = &rr.capped[i];
                fprintf(f, "under a %.0f W cap: %.2f us, %.4g J, %.1f W average at %.0f MHz "
                           "(time-weighted SM clock)",
                        c->opts.power_cap_W, cp->time_s * 1e6, cp->energy_J, cp->avg_power_W,
                        cp->clock_MHz);
                if (cp->over_cap_items > 0)
                    fprintf(f, "; %d kernels above the cap even at %.0f MHz", cp->over_cap_items,
                            x->hw.clock_min_MHz);
                fputc('\n', f);
            }
        }
    }
    return 0;
}

const cli_command cmd_predict = {
    "predict", "time, traffic and energy of one workload under bsp, vf and kitsune", HELP,
    O_MODEL | O_EXEC | O_FORMAT | O_OUT | O_EXPLAIN, CMD_HW | CMD_OUT, run, 0};
