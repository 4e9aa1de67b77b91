/* cmds: the subcommands, one per file (src/cli/<name>.c); main.c lists them. */
#ifndef KT_CMDS_H
#define KT_CMDS_H
#include "cli.h"

extern const cli_command cmd_predict, cmd_compare, cmd_map, cmd_sweep, cmd_validate, cmd_info,
    cmd_list, cmd_hw;

#endif
