/* validate: placeholder until the command lands. */
#include <stdio.h>

#include "cmds.h"

int cmd_validate(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "kitsune validate: not implemented yet\n");
    return 1;
}
