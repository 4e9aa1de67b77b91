/* list: shipped hardware descriptions and workloads. */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "../io/hw_json.h"
#include "../io/wl_json.h"
#include "cli.h"
#include "cmds.h"

static const char *const HELP =
    "usage: kitsune list\n"
    "\n"
    "List the shipped hardware descriptions (hw/), workloads (workloads/) and whole models\n"
    "(workloads/models/, composed of repeated blocks) with a one-line description each. Any of\n"
    "them can be named without path or .json suffix. They are found in $KITSUNE_HOME, else next\n"
    "to the binary (../share/kitsune when installed, .. in the build tree), else in the install\n"
    "prefix the binary was built for, else the current directory.\n"
    "Exit status 2 when no hardware or workload files are found there.\n";

/* An installed or copied binary that finds no data must say so, not print empty lists. */
static int none_found(cli_ctx *x, const char *dir)
{
    char root[PATH_MAX];
    cli_root(root, sizeof root);
    return cli_error(x, 0, NULL,
                     "no %s files in %s/%s/ (set KITSUNE_HOME to the directory that holds hw/ and "
                     "workloads/)",
                     strcmp(dir, "hw") ? "workload" : "hardware", root, dir);
}

/* One line per workload: its op count (whole models: and blocks), its parameters. */
static void print_workloads(const char **names, int n, int whole)
{
    for (int i = 0; i < n; i++) {
        arena a = {0};
        wl_graph g;
        kt_err le;
        err_clear(&le);
        char path[PATH_MAX];
        if (cli_resolve("workloads", names[i], path, sizeof path, &le) ||
            wl_load(path, NULL, 0, 0, &a, &g, &le)) {
            printf("  %-16s (invalid: %s)\n", names[i], le.msg);
            arena_free(&a);
            continue;
        }
        if (whole) {
            int reps = 0;
            for (int b = 0; b < g.nblock; b++)
                reps += g.block[b].repeat != NULL;
            printf("  %-16s %d ops in %d blocks (%d repeated);", names[i], g.nop, g.nblock, reps);
        } else {
            printf("  %-16s %d ops;", names[i], g.nop);
        }
        for (int k = 0; k < g.nparam; k++)
            printf(" %s=%lld", g.param[k].name, (long long)g.param[k].value);
        printf("\n");
        arena_free(&a);
    }
}

static int run(cli_ctx *x)
{
    const char **names, **wls;
    int n = cli_list_dir("hw", &x->a, &names);
    if (!n)
        return none_found(x, "hw");
    int nwl = cli_list_dir("workloads", &x->a, &wls);
    if (!nwl)
        return none_found(x, "workloads");
    printf("hardware (hw/):\n");
    for (int i = 0; i < n; i++) {
        hw_gpu g;
        kt_err le;
        err_clear(&le);
        if (cli_load_hw(names[i], &g, &le)) {
            printf("  %-16s (invalid: %s)\n", names[i], le.msg);
            continue;
        }
        printf("  %-16s %s%s\n", names[i], g.description, g.measured ? " [calibrated]" : "");
    }
    n = nwl;
    names = wls;
    printf("workloads (workloads/):\n");
    print_workloads(names, n, 0);
    n = cli_list_dir("workloads/models", &x->a, &names);
    if (n)
        printf("whole models (workloads/models/; not part of --workload all):\n");
    print_workloads(names, n, 1);
    return 0;
}

const cli_command cmd_list = {"list", "shipped hardware descriptions and workloads", HELP, 0, 0, run, 0};
