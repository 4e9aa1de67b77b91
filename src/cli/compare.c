/* compare: placeholder until the command lands. */
#include <stdio.h>

#include "cmds.h"

int cmd_compare(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "kitsune compare: not implemented yet\n");
    return 1;
}
