/* predict: time, traffic and energy of one workload under the requested execution models. */
#include <stdio.h>
#include <string.h>

#include "../io/out.h"
#include "../model/run.h"
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
    "  --optimizer none|sgd|adam   training: append optimizer update ops (default none)\n"
    "  --vf-backward               vf: fuse backward chains too (default: forward only, as the paper)\n"
    "  --select search|patterns    kitsune subgraph selection (default search)\n"
    "  --scheduler hetero|shared   kitsune: SIMT+Tensor CTA pools (paper) or one shared pool\n"
    "  --rest vf|bsp               kitsune: how ops outside pipelines run (default vf)\n"
    "  --launch graph|plain        launch gaps of CUDA graphs (default) or plain launches\n"
    "  --power-cap W               also report execution under a board power cap (DVFS)\n"
    "  --format table|json|csv     output format (default table)\n"
    "  --explain                   table: show the roofline terms behind every time\n"
    "  -o FILE                     write to FILE (atomically) instead of stdout\n"
    "\n"
    "example: kitsune predict --hw a100 --workload nerf --exec all --set B=65536\n";

int cmd_predict(int argc, char **argv)
{
    cli_common c;
    kt_err e;
    err_clear(&e);
    int rc = cli_parse(argc, argv, O_MODEL | O_EXEC | O_FORMAT | O_OUT | O_EXPLAIN, &c, &e);
    if (rc == 1) {
        fputs(HELP, stdout);
        return 0;
    }
    if (rc)
        return cli_fail("predict", &e);
    if (c.modes == 3) {
        err_set(&e, KT_EINPUT, NULL, "--mode", "predict takes one mode (use compare for both)");
        return cli_fail("predict", &e);
    }
    if (c.nworkload > 1) {
        err_set(&e, KT_EINPUT, NULL, "--workload", "predict takes one workload");
        return cli_fail("predict", &e);
    }
    /* predict's default is bsp alone unless --exec was given */
    int exec_given = 0;
    for (int i = 1; i < argc; i++)
        if (!strncmp(argv[i], "--exec", 6))
            exec_given = 1;
    if (!exec_given)
        c.opts.exec_mask = EXEC_BSP;
    hw_gpu hw;
    arena a = {0};
    wl_graph g;
    kt_run_result rr;
    cli_out out = {0};
    int status = 0;
    if (cli_run_one(&c, &hw, &a, &g, &rr, &e) || cli_out_open(&out, c.out_path, &e)) {
        status = cli_fail("predict", &e);
        goto done;
    }
    FILE *f = out.f;
    if (c.format == FMT_JSON) {
        out_json_head(f, KT_VERSION, &hw, rr.g, c.opts.training);
        fputs(",\n \"results\": [", f);
        for (int i = 0; i < rr.nres; i++) {
            fputs(i ? ",\n " : "\n ", f);
            out_json_result(f, &rr.res[i], rr.g, 1);
        }
        fputs("]", f);
        if (c.opts.power_cap_W > 0) {
            fputs(",\n \"power_cap_W\": ", f);
            out_json_num(f, c.opts.power_cap_W);
            fputs(",\n \"capped_results\": [", f);
            for (int i = 0; i < rr.nres; i++) {
                fputs(i ? ",\n " : "\n ", f);
                out_json_result(f, &rr.capped[i], rr.g, 0);
            }
            fputs("]", f);
        }
        fputs("}\n", f);
    } else if (c.format == FMT_CSV) {
        out_csv_items_header(f);
        for (int i = 0; i < rr.nres; i++)
            out_csv_items(f, &rr.res[i], rr.g, &hw, c.opts.training);
    } else {
        for (int i = 0; i < rr.nres; i++) {
            fprintf(f, "%s%s on %s, %s, %s:\n", i ? "\n" : "", rr.g->name, hw.name,
                    cli_mode_name(c.opts.training), rr.res[i].exec);
            out_table_result(f, &rr.res[i], rr.g, &hw, c.explain);
            if (c.opts.power_cap_W > 0) {
                fprintf(f, "under a %.0f W cap: %.2f us, %.4g J, %.1f W average at %.0f MHz "
                           "(time-weighted SM clock)",
                        c.opts.power_cap_W, rr.capped[i].time_s * 1e6, rr.capped[i].energy_J,
                        rr.capped[i].avg_power_W, rr.capped[i].clock_MHz);
                if (rr.capped[i].over_cap_items > 0)
                    fprintf(f, "; %d kernels above the cap even at %.0f MHz",
                            rr.capped[i].over_cap_items, hw.clock_min_MHz);
                fputc('\n', f);
            }
        }
    }
    if (cli_out_close(&out, 1, &e))
        status = cli_fail("predict", &e);
done:
    if (out.f)
        cli_out_close(&out, 0, &e);
    arena_free(&a);
    return status;
}
