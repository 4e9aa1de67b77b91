/* kitsune: predict DL workloads on GPUs under bulk-synchronous, vertical-fusion and Kitsune
 * spatial-pipeline execution. main: the subcommand table. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cmds.h"

static const struct {
    const char *name;
    int (*fn)(int, char **);
    const char *summary;
} COMMANDS[] = {
    {"predict", cmd_predict, "time, traffic and energy of one workload under bsp, vf and kitsune"},
    {"compare", cmd_compare, "bsp, vf and kitsune side by side (speedups, traffic, coverage)"},
    {"map", cmd_map, "kitsune pipelines: stages, CTAs per stage, queues, ILP status"},
    {"sweep", cmd_sweep, "design-space sweep over hardware fields and workload parameters (CSV)"},
    {"validate", cmd_validate, "compare the model with a reference table (paper, measurements)"},
    {"info", cmd_info, "ops, FLOPs, bytes and parameters of a workload"},
    {"list", cmd_list, "shipped hardware descriptions and workloads"},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: kitsune <command> [options]    (kitsune <command> --help for its options)\n\n"
               "commands:\n");
    for (size_t i = 0; i < sizeof COMMANDS / sizeof COMMANDS[0]; i++)
        fprintf(f, "  %-9s %s\n", COMMANDS[i].name, COMMANDS[i].summary);
    fprintf(f, "\nexample: kitsune compare --hw a100 --workload nerf --mode inference\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
        printf("kitsune %s\n", KT_VERSION);
        return 0;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        if (argc > 2 && strcmp(argv[1], "help") == 0) {
            for (size_t i = 0; i < sizeof COMMANDS / sizeof COMMANDS[0]; i++)
                if (!strcmp(COMMANDS[i].name, argv[2])) {
                    char *args[] = {argv[2], "--help", NULL};
                    return COMMANDS[i].fn(2, args);
                }
        }
        usage(stdout);
        return 0;
    }
    for (size_t i = 0; i < sizeof COMMANDS / sizeof COMMANDS[0]; i++)
        if (!strcmp(COMMANDS[i].name, argv[1]))
            return COMMANDS[i].fn(argc - 1, argv + 1);
    fprintf(stderr, "kitsune: unknown command \"%s\"\n", argv[1]);
    usage(stderr);
    return 2;
}
