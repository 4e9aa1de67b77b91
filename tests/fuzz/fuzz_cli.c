/* fuzz_cli: the command-line parser (cli_parse). Input: arguments separated by NUL bytes, the
 * first naming the command (its options are those the parser accepts for it). Every argument
 * list must parse or fail with a message; what parses must be in range. */
#include "../../src/cli/cli.h"
#include "../../src/cli/cmds.h"
#include "fuzz.h"

enum { FZ_MAX_ARGS = 64 };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const cli_command *const CMDS[] = {&cmd_predict, &cmd_compare,  &cmd_map, &cmd_sweep,
                                              &cmd_validate, &cmd_info, &cmd_list};
    char *s = fz_text(data, size);
    char *argv[FZ_MAX_ARGS + 1];
    int argc = 0;
    for (char *p = s; p <= s + size && argc < FZ_MAX_ARGS; p += strlen(p) + 1)
        argv[argc++] = p;
    argv[argc] = NULL;
    const cli_command *cmd = CMDS[(unsigned char)argv[0][0] % (sizeof CMDS / sizeof CMDS[0])];
    for (size_t i = 0; i < sizeof CMDS / sizeof CMDS[0]; i++) /* by name, else by first byte */
        if (!strcmp(argv[0], CMDS[i]->name))
            cmd = CMDS[i];
    static cli_common c;
    kt_err e;
    err_clear(&e);
    int rc = cli_parse(argc, argv, cmd->opts, cmd->multi, &c, &e);
    if (rc < 0) {
        FZ_ASSERT(e.code == KT_EINPUT && e.msg[0], "an error without a message");
    } else if (rc == 0) {
        FZ_ASSERT(c.jobs >= 1 && c.jobs <= 256, "jobs %d", c.jobs);
        FZ_ASSERT(!c.shard_n || (c.shard_k >= 0 && c.shard_k < c.shard_n), "shard %d/%d",
                  c.shard_k, c.shard_n);
        FZ_ASSERT(c.max_error == -1 || (isfinite(c.max_error) && c.max_error >= 0),
                  "max error %g", c.max_error);
        FZ_ASSERT(c.opts.power_cap_W == 0 || (isfinite(c.opts.power_cap_W) && c.opts.power_cap_W > 0),
                  "power cap %g", c.opts.power_cap_W);
        FZ_ASSERT(c.modes >= 1 && c.modes <= 3, "modes %d", c.modes);
        for (int i = 0; i < c.nsets; i++)
            FZ_ASSERT(expr_is_name(c.sets[i].name), "--set name \"%s\"", c.sets[i].name);
    }
    free(s);
    return 0;
}
