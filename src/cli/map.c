/* map: placeholder until the command lands. */
#include <stdio.h>

#include "cmds.h"

int cmd_map(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "kitsune map: not implemented yet\n");
    return 1;
}
