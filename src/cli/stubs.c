/* stubs: commands whose implementation has not landed yet. */
#include <stdio.h>

#include "cmds.h"

static int not_yet(const char *cmd)
{
    fprintf(stderr, "kitsune %s: not implemented yet\n", cmd);
    return 1;
}

int cmd_compare(int argc, char **argv)
{
    (void)argc; (void)argv;
    return not_yet("compare");
}
int cmd_map(int argc, char **argv)
{
    (void)argc; (void)argv;
    return not_yet("map");
}
int cmd_sweep(int argc, char **argv)
{
    (void)argc; (void)argv;
    return not_yet("sweep");
}
int cmd_validate(int argc, char **argv)
{
    (void)argc; (void)argv;
    return not_yet("validate");
}
