/* cli: shared command-line plumbing - options, name resolution, the output of a command. */
#ifndef KT_CLI_H
#define KT_CLI_H
#include <stdint.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "../arena.h"
#include "../err.h"
#include "../io/outfile.h"
#include "../model/hw.h"
#include "../model/lint.h"
#include "../model/run.h"
#include "../model/wl.h"

#define KT_VERSION "0.1.0"

enum { FMT_TABLE, FMT_JSON, FMT_CSV };

/* options a command accepts (bit mask, 64 bits) */
typedef uint64_t cli_opt_mask;
#define O_BIT(n) ((cli_opt_mask)1 << (n))
#define O_HW O_BIT(0)
#define O_WL O_BIT(1)
#define O_MODE O_BIT(2)
#define O_EXEC O_BIT(3)
#define O_SET O_BIT(4)
#define O_FORMAT O_BIT(5)
#define O_OUT O_BIT(6)
#define O_LAUNCH O_BIT(7)
#define O_POWER O_BIT(8)
#define O_SELECT O_BIT(9)
#define O_SCHED O_BIT(10)
#define O_REST O_BIT(11)
#define O_VFBWD O_BIT(12)
#define O_OPTIM O_BIT(13)
#define O_EXPLAIN O_BIT(14)
#define O_POS O_BIT(15)
#define O_MAXERR O_BIT(16)
#define O_VARY O_BIT(17)
#define O_JOBS O_BIT(18)
#define O_SHARD O_BIT(19)
#define O_RESUME O_BIT(20)
#define O_PROGRESS O_BIT(21)
#define O_VF O_BIT(22)
#define O_DTYPE O_BIT(23)
#define O_ZIP O_BIT(24)
#define O_PPOL O_BIT(25)
#define O_WHY O_BIT(26)
#define O_OPS O_BIT(27)
#define O_STAGES O_BIT(28)
#define O_ALLOC O_BIT(29)
#define O_TILE O_BIT(30)
#define O_CPS O_BIT(31)
#define O_TRACE O_BIT(32)
#define O_RANGE O_BIT(33)
#define O_STIME O_BIT(34)
#define O_MODEL                                                                                   \
    (O_HW | O_WL | O_MODE | O_SET | O_LAUNCH | O_POWER | O_SELECT | O_SCHED | O_REST | O_VFBWD |   \
     O_OPTIM | O_VF | O_DTYPE)
/* every command takes these more than once */
#define O_REPEATABLE (O_SET | O_VARY | O_ZIP)

enum { CLI_MAX_SETS = 64, CLI_MAX_POS = 16, CLI_MAX_VARY = 16, CLI_MAX_WL = 64, CLI_MAX_HW = 32,
       CLI_MAX_STAGES = 256 };

typedef struct cli_common {
    const char *cmd;
    const char *hw;                 /* name or path (the first --hw) */
    const char *hws[CLI_MAX_HW];    /* every --hw, for commands that take several (sweep) */
    int nhw;
    const char *workload[CLI_MAX_WL];
    int nworkload;
    int mode_given, modes;          /* modes: bit 1 inference, bit 2 training */
    const char *out_path;
    int format;
    wl_set sets[CLI_MAX_SETS];
    int nsets;
    kt_opts opts;
    int explain;
    const char *pos[CLI_MAX_POS];
    int npos;
    double max_error;               /* validate --max-error (fraction); <0 = none */
    const char *vary[CLI_MAX_VARY]; /* --vary and --zip specs, in command-line order */
    int vary_zip[CLI_MAX_VARY];     /* 1 for a --zip */
    int nvary;
    int jobs, shard_k, shard_n, resume, progress;
    int exec_given;                 /* --exec was given */
    ks_force_spec force;            /* map --ops/--stages/--alloc/--tile/--ctas-per-sm/--stage-cta-tile-us */
    int force_ctas[CLI_MAX_STAGES];
    double force_stage_s[CLI_MAX_STAGES]; /* map --stage-cta-tile-us, in seconds */
    int dtype_given;                /* --dtype: every floating-point tensor gets dtype */
    dtype dtype;
    cli_opt_mask given;             /* O_* of every option on the command line */
    const char *trace;              /* validate --trace: a measured kernel trace */
    const char *range;              /* validate --range: the CPU range of a Chrome trace */
} cli_common;

/** Parse argv[1..] (argv[0] is the command) for the options in `allowed`; prints nothing.
 *  An option that takes a value may be given once, unless it is in `multi` (then every value
 *  counts: --workload, --set, --vary ...). Returns 0, 1 when --help was asked, or -1 with e set
 *  (code 2). */
int cli_parse(int argc, char **argv, cli_opt_mask allowed, cli_opt_mask multi, cli_common *c,
              kt_err *e);
/** Resolve a hardware or workload name: a path (contains '/' or ends in .json), else
 *  <root>/<dir>/<name>.json where root is $KITSUNE_HOME, the binary's ../ or the current dir. */
int cli_resolve(const char *dir, const char *name, char *out, size_t n, kt_err *e);
/** The data root directory (see cli_resolve). */
void cli_root(char *out, size_t n);
/** The directory of the shipped hardware files (<root>/hw): where "base": NAME is found. */
void cli_hw_dir(char *out, size_t n);
/** Load hardware by name/path (with its "base" chain). */
int cli_load_hw(const char *name, hw_gpu *g, kt_err *e);
/** Load a workload by name/path with the command's --set and --dtype overrides. */
int cli_load_wl(const cli_common *c, const char *name, int training, arena *a, wl_graph *g,
                kt_err *e);
/** cli_load_wl in two steps, for several graphs from one file (compare's modes): the file's
 *  JSON, its resolved path into path[0..n) (NULL with e set); */
cJSON *cli_wl_parse(const char *name, char *path, size_t n, kt_err *e);
/** then one graph from it (the caller frees root with cJSON_Delete afterwards). */
int cli_wl_build(const cli_common *c, const cJSON *root, const char *path, int training, arena *a,
                 wl_graph *g, kt_err *e);
/** Names of the .json files under <root>/<dir> (without .json, sorted), allocated in a, into
 *  *names; returns the count (any number). */
int cli_list_dir(const char *dir, arena *a, const char ***names);

/** The context a command runs in: parsed options, the GPU (CMD_HW), the output (CMD_OUT), one
 *  arena and the error the command returns with -1. cli_main sets it up and tears it down. */
typedef struct cli_ctx {
    const struct cli_command *cmd;
    cli_common c;
    hw_gpu hw;
    of_file out;
    arena a;
    kt_err e;
    lint_list warn;   /* the warnings reported so far (cli_warn) */
    int argc;         /* CMD_RAW: the arguments, argv[0] the command */
    char **argv;
    kt_summary mem;   /* cli_run_workload: the run's graph summary (memory footprint) */
} cli_ctx;

/** Setup flags of a command: cli_main loads --hw into cli_ctx.hw (CMD_HW) and owns -o: the
 *  output (outfile.h) is opened by the command's first cli_output() and committed only when the
 *  command returns a status >= 0, i.e. finished writing (CMD_OUT); a command that fails writes
 *  nothing, to stdout or to the file.
 *  CMD_RAW: the command parses its own argv (cli_ctx.argc/argv; it sets c.out_path for -o). */
enum { CMD_HW = 1 << 0, CMD_OUT = 1 << 1, CMD_RAW = 1 << 2 };

/** A subcommand (git's commands[]): its name, one-line summary, --help text, accepted options
 *  (O_*), setup flags, entry point and the options it takes more than once (O_*; a second value
 *  of any other option is an error, not a silent override). run returns 0, an exit status > 0 (validate's 3), or -1
 *  with x->e set (reported once by cli_main as "kitsune NAME: message", exit status e.code). */
typedef struct cli_command {
    const char *name;
    const char *summary;
    const char *help;
    cli_opt_mask opts;
    unsigned setup;
    int (*run)(cli_ctx *x);
    cli_opt_mask multi;
} cli_command;

/** Parse argv (argv[0] is the command name), set up, run, report and tear down a command;
 *  returns the process exit status. */
int cli_main(const cli_command *cmd, int argc, char **argv);
/** The command's output stream (-o FILE, else stdout; opened on first use, buffered until the
 *  command succeeds); NULL with x->e set when it cannot be opened. */
FILE *cli_output(cli_ctx *x);
/** Set x->e (code KT_EINPUT unless given) and return -1, for `return cli_error(...)`. */
int cli_error(cli_ctx *x, int code, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/** Load the workload named `name` for one mode with the command's --set overrides into an
 *  arena-allocated graph. NULL with x->e set on failure. */
wl_graph *cli_workload(cli_ctx *x, const char *name, int training);
/** Load the single --workload and run the model on --hw with the command's options (predict,
 *  map). 0, or -1 with x->e set. */
int cli_run_workload(cli_ctx *x, kt_run_result *rr);
/** The model options given apply to what the command will run (its modes and execution
 *  models, set by then): --optimizer and --vf-backward need training, --vf-backward also vf or
 *  kitsune, --vf vf or kitsune's rest as vf, --select, --scheduler and --rest need kitsune,
 *  --explain the table format. An
 *  option that would change nothing is an error (it usually means a mistaken command): 0, or
 *  -1 with x->e set. */
int cli_applicable(cli_ctx *x);
/** Warn on stderr about each result whose average power is above the limit it ran under (the
 *  board's TDP, or --power-cap): kernels that exceed it even at the lowest clock (e.g. a cap
 *  below the static power), which the number alone does not say; through cli_warn, so JSON
 *  output lists them too. */
void cli_warn_power(cli_ctx *x, const kt_run_result *rr);
/** The workload names a command was given: every shipped one for "all" (allocated in a), else
 *  the --workload values in order, as given (paths of any length). Returns the count (0: none
 *  given). */
int cli_workload_names(const cli_common *c, arena *a, const char ***names);

/** Report findings as warnings: each one not reported before goes to stderr as
 *  "kitsune CMD: warning: ..." and into x->warn, which JSON outputs list (cli_json_warnings). */
void cli_warn(cli_ctx *x, const lint_list *l);
/** Check one run of graph g (the graph that runs: training graph in training mode) on hw: GEMMs
 *  in a dtype without tensor cores, memory footprint over capacity (cli_warn). The summary,
 *  with the footprint, goes into s. w: the run's op_works (NULL: computed here). 0, or -1 with
 *  x->e set. */
int cli_check_run(cli_ctx *x, const hw_gpu *hw, const wl_graph *g, const op_work *w, int training,
                  kt_summary *s);
/** Write `, "memory": {...}` (weights, peak activations, footprint, capacity, fits) for a JSON
 *  object: the footprint JSON outputs always report. */
void cli_json_memory(FILE *f, const kt_summary *s, const hw_gpu *hw);
/** Write `,\n "warnings": [...]` (x->warn) for the top-level JSON object. */
void cli_json_warnings(FILE *f, const cli_ctx *x);

/** Print "kitsune CMD: message" for e to stderr and return its exit status. */
int cli_fail(const char *cmd, const kt_err *e);
/** Mode name. */
const char *cli_mode_name(int training);
/** Worker threads for n items: --jobs when given, else the CPUs this process may use (jobs_cpus)
 *  up to default_max; never more than the items, at least 1. */
int cli_threads(const cli_common *c, long long n, int default_max);

#endif
