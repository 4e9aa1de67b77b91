/* sweep: placeholder until the command lands. */
#include <stdio.h>

#include "cmds.h"

int cmd_sweep(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "kitsune sweep: not implemented yet\n");
    return 1;
}
