/* kitsune: predict DL workloads on GPUs under bulk-synchronous, vertical-fusion and Kitsune
 * spatial-pipeline execution. main: the subcommand table (git's commands[]); cli_main does the
 * shared set-up (options, --help, --hw, -o) and tear-down of each. */
#include <malloc.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cmds.h"
#include "io/outfile.h"

static const cli_command *const COMMANDS[] = {&cmd_predict,  &cmd_compare, &cmd_map,  &cmd_sweep,
                                              &cmd_validate, &cmd_info,    &cmd_list, &cmd_hw};
enum { NCOMMANDS = sizeof COMMANDS / sizeof COMMANDS[0] };

static const cli_command *find(const char *name)
{
    for (int i = 0; i < NCOMMANDS; i++)
        if (!strcmp(COMMANDS[i]->name, name))
            return COMMANDS[i];
    return NULL;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: kitsune <command> [options]    (kitsune <command> --help for its options)\n\n"
               "commands:\n");
    for (int i = 0; i < NCOMMANDS; i++)
        fprintf(f, "  %-9s %s\n", COMMANDS[i]->name, COMMANDS[i]->summary);
    fprintf(f, "\nHW and WL name files in hw/ and workloads/ of the data directory: $KITSUNE_HOME, else\n"
               "next to the binary (../share/kitsune when installed), else the install prefix,\n"
               "else the current directory; or give a path to a .json file.\n"
               "\nexample: kitsune compare --hw a100 --workload nerf --mode inference\n");
}

/* What the program wrote to stdout itself (version, help) must have arrived: exit status 1 and
 * a message when it did not (stdout on a full disk or a closed pipe). */
static int done(int status)
{
    kt_err e;
    err_clear(&e);
    return of_flush_stdout(&e) ? cli_fail("", &e) : status;
}

static int unknown(const char *name)
{
    fprintf(stderr, "kitsune: unknown command \"%s\"\n", name);
    usage(stderr);
    return 2;
}

int main(int argc, char **argv)
{
    /* Freed memory stays with the process for the next model run (arenas of every run start
     * over): glibc would hand blocks of 128 KiB and more back to the kernel with munmap and
     * trim the heap top, and every page of the next run's blocks would fault in again (a sweep
     * of 200 points: 4,277 -> 1,354 page faults on the 2-core VM, several microseconds each
     * under virtualization; issue 18). A hint only: without it the output is the same. */
    (void)mallopt(M_MMAP_THRESHOLD, 64 << 20);
    (void)mallopt(M_TRIM_THRESHOLD, 256 << 20);
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
        printf("kitsune %s\n", KT_VERSION);
        return done(0);
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        if (argc > 2 && !strcmp(argv[1], "help")) {
            const cli_command *c = find(argv[2]);
            if (!c)
                return unknown(argv[2]);
            fputs(c->help, stdout);
            return done(0);
        }
        usage(stdout);
        return done(0);
    }
    const cli_command *c = find(argv[1]);
    if (c)
        return cli_main(c, argc - 1, argv + 1);
    return unknown(argv[1]);
}
