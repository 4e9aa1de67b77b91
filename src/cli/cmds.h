/* cmds: one entry point per subcommand (src/cli/<name>.c). Each returns the exit status. */
#ifndef KT_CMDS_H
#define KT_CMDS_H

int cmd_predict(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_map(int argc, char **argv);
int cmd_sweep(int argc, char **argv);
int cmd_validate(int argc, char **argv);

#endif
