/* cli: shared command-line plumbing - options, name resolution, the output of a command. */
#include "cli.h"
#include "jobs.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../io/hw_json.h"
#include "../io/jsonx.h"
#include "../io/out.h"
#include "../io/wl_json.h"
#include "../model/exec/vf.h"
#include "../model/expr.h"
#include "../model/op.h"
#include "../model/lint.h"

static const struct {
    const char *name;
    cli_opt_mask bit;
    int has_arg;
} OPTS[] = {
    {"--hw", O_HW, 1},         {"--workload", O_WL, 1},    {"--mode", O_MODE, 1},
    {"--exec", O_EXEC, 1},     {"--set", O_SET, 1},        {"--format", O_FORMAT, 1},
    {"-o", O_OUT, 1},          {"--output", O_OUT, 1},     {"--launch", O_LAUNCH, 1},
    {"--power-cap", O_POWER, 1}, {"--select", O_SELECT, 1}, {"--scheduler", O_SCHED, 1},
    {"--rest", O_REST, 1},     {"--vf-backward", O_VFBWD, 0}, {"--optimizer", O_OPTIM, 1},
    {"--explain", O_EXPLAIN, 0}, {"--max-error", O_MAXERR, 1}, {"--vary", O_VARY, 1},
    {"--jobs", O_JOBS, 1},     {"--shard", O_SHARD, 1},    {"--resume", O_RESUME, 0},
    {"--progress", O_PROGRESS, 0}, {"--vf", O_VF, 1},  {"--dtype", O_DTYPE, 1},
    {"--zip", O_ZIP, 1},
    {"--power-policy", O_PPOL, 1}, {"--why", O_WHY, 0},
    {"--ops", O_OPS, 1},       {"--stages", O_STAGES, 1},  {"--alloc", O_ALLOC, 1},
    {"--tile", O_TILE, 1},     {"--ctas-per-sm", O_CPS, 1},
    {"--stage-cta-tile-us", O_STIME, 1},
    {"--trace", O_TRACE, 1},   {"--range", O_RANGE, 1},
};

static int bad(kt_err *e, const char *opt, const char *fmt, const char *arg)
{
    char m[256];
    snprintf(m, sizeof m, fmt, arg ? arg : "");
    return err_set(e, KT_EINPUT, NULL, opt, "%s", m);
}

static int parse_num(const char *s, double *v)
{
    char *end;
    errno = 0;
    *v = strtod(s, &end);
    return (end == s || *end || errno) ? -1 : 0;
}

/* Most shards a sweep is split into. */
#define CLI_MAX_SHARDS 1000000LL

/* "K/N" with 0 <= K < N <= CLI_MAX_SHARDS, decimal digits only. 0 or -1. */
static int parse_shard(const char *s, long long *k, long long *n)
{
    char *end;
    if (*s < '0' || *s > '9')
        return -1;
    errno = 0;
    *k = strtoll(s, &end, 10);
    if (errno || *end != '/' || end[1] < '0' || end[1] > '9')
        return -1;
    *n = strtoll(end + 1, &end, 10);
    return errno || *end || *n < 1 || *n > CLI_MAX_SHARDS || *k >= *n ? -1 : 0;
}

int cli_parse(int argc, char **argv, cli_opt_mask allowed, cli_opt_mask multi, cli_common *c,
              kt_err *e)
{
    const char *given[64] = {0}; /* the value each single-valued option was given, by bit */
    multi |= O_REPEATABLE;
    memset(c, 0, sizeof *c);
    c->cmd = argv[0];
    kt_opts_default(&c->opts);
    c->max_error = -1;
    c->jobs = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help"))
            return 1;
        if (a[0] != '-' || !a[1]) {
            if (!(allowed & O_POS))
                return bad(e, a, "unexpected argument%s", NULL);
            if (c->npos >= CLI_MAX_POS)
                return bad(e, a, "too many arguments%s", NULL);
            c->pos[c->npos++] = a;
            continue;
        }
        const char *val = NULL;
        char name[64];
        const char *eq = strchr(a, '=');
        if (eq && a[1] == '-') {
            snprintf(name, sizeof name, "%.*s", (int)(eq - a), a);
            val = eq + 1;
        } else {
            snprintf(name, sizeof name, "%s", a);
        }
        int k = -1;
        for (size_t j = 0; j < sizeof OPTS / sizeof OPTS[0]; j++)
            if (!strcmp(OPTS[j].name, name))
                k = (int)j;
        if (k < 0 || !(allowed & OPTS[k].bit))
            return bad(e, name, "unknown option for this command (see --help)%s", NULL);
        if (OPTS[k].has_arg && !val) {
            if (i + 1 >= argc)
                return bad(e, name, "missing value%s", NULL);
            val = argv[++i];
        }
        if (!OPTS[k].has_arg && val)
            return bad(e, name, "takes no value%s", NULL);
        if (OPTS[k].has_arg && !(multi & OPTS[k].bit)) {
            int b = 0;
            while (!(OPTS[k].bit >> b & 1u))
                b++;
            if (given[b])
                return err_set(e, KT_EINPUT, NULL, name,
                               "given twice (\"%.80s\", then \"%.80s\"); it takes one value",
                               given[b], val);
            given[b] = val;
        }
        c->given |= OPTS[k].bit;
        double v;
        switch (OPTS[k].bit) {
        case O_HW:
            if (c->nhw >= CLI_MAX_HW)
                return bad(e, name, "too many GPUs%s", NULL);
            c->hws[c->nhw++] = val;
            if (!c->hw)
                c->hw = val;
            break;
        case O_WL:
            if (c->nworkload >= CLI_MAX_WL)
                return bad(e, name, "too many workloads%s", NULL);
            c->workload[c->nworkload++] = val;
            break;
        case O_MODE:
            c->mode_given = 1;
            if (!strcmp(val, "inference"))
                c->modes |= 1;
            else if (!strcmp(val, "training"))
                c->modes |= 2;
            else if (!strcmp(val, "both") || !strcmp(val, "all"))
                c->modes |= 3;
            else
                return bad(e, name, "expected inference, training or both, got \"%s\"", val);
            break;
        case O_EXEC:
            c->exec_given = 1;
            if (!strcmp(val, "bsp"))
                c->opts.exec_mask = EXEC_BSP;
            else if (!strcmp(val, "vf"))
                c->opts.exec_mask = EXEC_VF;
            else if (!strcmp(val, "kitsune"))
                c->opts.exec_mask = EXEC_KITSUNE;
            else if (!strcmp(val, "all"))
                c->opts.exec_mask = EXEC_ALL;
            else
                return bad(e, name, "expected bsp, vf, kitsune or all, got \"%s\"", val);
            break;
        case O_SET: {
            const char *q = strchr(val, '=');
            if (!q || q == val)
                return bad(e, name, "expected NAME=VALUE, got \"%s\"", val);
            if (c->nsets >= CLI_MAX_SETS)
                return bad(e, name, "too many --set options%s", NULL);
            char nm[64]; /* the whole name is checked: a longer one is no parameter's */
            if (q - val >= (ptrdiff_t)sizeof nm)
                return bad(e, name, "parameter name too long in \"%s\"", val);
            snprintf(nm, sizeof nm, "%.*s", (int)(q - val), val);
            int64_t x;
            char msg[160];
            if (!expr_is_name(nm))
                return bad(e, name, "invalid parameter name in \"%s\"", val);
            if (expr_eval(q + 1, NULL, 0, &x, msg, sizeof msg))
                return bad(e, name, "value must be an integer: \"%s\"", val);
            c->sets[c->nsets].name = val; /* NAME=... ; the name is cut at '=' below */
            c->sets[c->nsets].value = x;
            /* store a NUL-terminated copy of the name inside argv (safe: argv is writable) */
            ((char *)val)[q - val] = 0;
            c->nsets++;
            break;
        }
        case O_FORMAT:
            if (!strcmp(val, "table"))
                c->format = FMT_TABLE;
            else if (!strcmp(val, "json"))
                c->format = FMT_JSON;
            else if (!strcmp(val, "csv"))
                c->format = FMT_CSV;
            else
                return bad(e, name, "expected table, json or csv, got \"%s\"", val);
            break;
        case O_OUT:
            c->out_path = val;
            break;
        case O_LAUNCH:
            if (!strcmp(val, "graph"))
                c->opts.graph_launch = 1;
            else if (!strcmp(val, "plain"))
                c->opts.graph_launch = 0;
            else
                return bad(e, name, "expected graph or plain, got \"%s\"", val);
            break;
        case O_POWER:
            if (parse_num(val, &v) || !(v > 0) || v > 1e5)
                return bad(e, name, "expected a power in watts > 0, got \"%s\"", val);
            c->opts.power_cap_W = v;
            break;
        case O_SELECT:
            if (!strcmp(val, "search"))
                c->opts.select = SELECT_SEARCH;
            else if (!strcmp(val, "patterns"))
                c->opts.select = SELECT_PATTERNS;
            else
                return bad(e, name, "expected search or patterns, got \"%s\"", val);
            break;
        case O_SCHED:
            if (!strcmp(val, "shared"))
                c->opts.scheduler_shared = 1;
            else if (!strcmp(val, "hetero") || !strcmp(val, "kitsune"))
                c->opts.scheduler_shared = 0;
            else
                return bad(e, name, "expected hetero or shared, got \"%s\"", val);
            break;
        case O_REST:
            if (!strcmp(val, "bsp"))
                c->opts.rest_bsp = 1;
            else if (!strcmp(val, "vf"))
                c->opts.rest_bsp = 0;
            else
                return bad(e, name, "expected bsp or vf, got \"%s\"", val);
            break;
        case O_VFBWD:
            c->opts.vf_backward = 1;
            break;
        case O_PPOL: {
            int pp = kt_power_policy_parse(val);
            if (pp < 0)
                return bad(e, name, "expected scaled, fixed or none, got \"%s\"", val);
            c->opts.power_policy = pp;
            break;
        }
        case O_VF: {
            int pol = vf_policy_parse(val);
            if (pol < 0)
                return bad(e, name, "expected inductor, paper or rules, got \"%s\"", val);
            c->opts.vf_policy = pol;
            break;
        }
        case O_OPTIM:
            if (!strcmp(val, "none"))
                c->opts.optimizer = OPTIM_NONE;
            else if (!strcmp(val, "sgd"))
                c->opts.optimizer = OPTIM_SGD;
            else if (!strcmp(val, "adam"))
                c->opts.optimizer = OPTIM_ADAM;
            else
                return bad(e, name, "expected none, sgd or adam, got \"%s\"", val);
            break;
        case O_WHY:
            c->opts.why = 1;
            break;
        case O_OPS:
            c->force.ops = val;
            c->opts.ks_force = &c->force;
            break;
        case O_STAGES:
            c->force.stages = val;
            c->opts.ks_force = &c->force;
            break;
        case O_ALLOC: { /* CTAs per stage: "40-29-18" or "40,29,18" */
            const char *p = val;
            c->force.nctas = 0;
            while (*p) {
                char *end;
                errno = 0;
                long n = strtol(p, &end, 10);
                if (end == p || errno || n < 1 || n > 1000000 || (*end && *end != '-' && *end != ','))
                    return bad(e, name, "expected CTA counts >= 1 separated by '-', got \"%s\"", val);
                if (c->force.nctas >= CLI_MAX_STAGES)
                    return bad(e, name, "more stages than kitsune handles%s", NULL);
                c->force_ctas[c->force.nctas++] = (int)n;
                p = *end ? end + 1 : end;
                if (*end && !*p)
                    return bad(e, name, "expected CTA counts >= 1 separated by '-', got \"%s\"", val);
            }
            if (!c->force.nctas)
                return bad(e, name, "expected CTA counts >= 1 separated by '-', got \"%s\"", val);
            c->force.ctas = c->force_ctas;
            c->opts.ks_force = &c->force;
            break;
        }
        case O_STIME: { /* measured microseconds per tile and CTA, per stage: "6.9,12.8" */
            const char *p = val;
            c->force.nstage_times = 0;
            while (*p) {
                char *end;
                errno = 0;
                double us = strtod(p, &end);
                if (end == p || errno || !(us > 0) || us > 1e9 || (*end && *end != ','))
                    return bad(e, name, "expected microseconds > 0 separated by ',', got \"%s\"",
                               val);
                if (c->force.nstage_times >= CLI_MAX_STAGES)
                    return bad(e, name, "more stages than kitsune handles%s", NULL);
                c->force_stage_s[c->force.nstage_times++] = us * 1e-6;
                p = *end ? end + 1 : end;
                if (*end && !*p)
                    return bad(e, name, "expected microseconds > 0 separated by ',', got \"%s\"",
                               val);
            }
            if (!c->force.nstage_times)
                return bad(e, name, "expected microseconds > 0 separated by ',', got \"%s\"", val);
            c->force.stage_cta_tile_s = c->force_stage_s;
            c->opts.ks_force = &c->force;
            break;
        }
        case O_TILE:
            if (parse_num(val, &v) || v != floor(v) || v < 1 || v > 1048576)
                return bad(e, name, "expected rows per tile, an integer in [1, 1048576], got \"%s\"", val);
            c->force.tile_rows = (int64_t)v;
            c->opts.ks_force = &c->force;
            break;
        case O_CPS:
            if (parse_num(val, &v) || v != floor(v) || v < 1 || v > 32)
                return bad(e, name, "expected an integer in [1, 32], got \"%s\"", val);
            c->force.ctas_per_sm = (int)v;
            c->opts.ks_force = &c->force;
            break;
        case O_TRACE:
            c->trace = val;
            break;
        case O_RANGE:
            c->range = val;
            break;
        case O_EXPLAIN:
            c->explain = 1;
            break;
        case O_MAXERR:
            if (parse_num(val, &v) || !(v >= 0) || !isfinite(v)) /* "nan" disabled the gate */
                return bad(e, name, "expected a fraction >= 0 (e.g. 0.15), got \"%s\"", val);
            c->max_error = v;
            break;
        case O_VARY:
        case O_ZIP:
            if (c->nvary >= CLI_MAX_VARY)
                return bad(e, name, "too many --vary and --zip options%s", NULL);
            c->vary_zip[c->nvary] = OPTS[k].bit == O_ZIP;
            c->vary[c->nvary++] = val;
            break;
        case O_JOBS: /* range first: (int) of NaN or of 1e300 is undefined */
            if (parse_num(val, &v) || !(v >= 1 && v <= 256) || v != floor(v))
                return bad(e, name, "expected an integer 1..256, got \"%s\"", val);
            c->jobs = (int)v;
            break;
        case O_SHARD: {
            long long k2, n2;
            if (parse_shard(val, &k2, &n2)) /* sscanf("%d") read 1/4294967298 as 1/2 */
                return bad(e, name, "expected K/N with 0 <= K < N <= 1000000, got \"%s\"", val);
            c->shard_k = (int)k2;
            c->shard_n = (int)n2;
            break;
        }
        case O_RESUME:
            c->resume = 1;
            break;
        case O_PROGRESS:
            c->progress = 1;
            break;
        case O_DTYPE:
            if (dt_parse(val, &c->dtype) || !dt_is_float(c->dtype))
                return bad(e, name, "expected a floating-point dtype (fp32, tf32, fp16, bf16, fp8), "
                                    "got \"%s\"",
                           val);
            c->dtype_given = 1;
            break;
        }
    }
    if (!c->mode_given)
        c->modes = 1;
    c->opts.training = c->modes == 2;
    return 0;
}

/* A data root holds hw/ (and workloads/). */
static int has_data(const char *root)
{
    char probe[PATH_MAX + 64];
    snprintf(probe, sizeof probe, "%.*s/hw", PATH_MAX + 32, root);
    return access(probe, R_OK) == 0;
}

void cli_root(char *out, size_t n)
{
    const char *env = getenv("KITSUNE_HOME");
    if (env && env[0]) {
        snprintf(out, n, "%s", env);
        return;
    }
    /* next to the binary: PREFIX/bin/kitsune -> PREFIX/share/kitsune; build/kitsune -> . */
    char exe[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len > 0) {
        exe[len] = 0;
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = 0;
            char cand[PATH_MAX + 32];
            snprintf(cand, sizeof cand, "%s/../share/kitsune", exe);
            if (has_data(cand) || (snprintf(cand, sizeof cand, "%s/..", exe), has_data(cand))) {
                snprintf(out, n, "%s", cand);
                return;
            }
        }
    }
#ifdef KT_DATADIR
    /* the install prefix, for an installed binary copied elsewhere */
    if (has_data(KT_DATADIR)) {
        snprintf(out, n, "%s", KT_DATADIR);
        return;
    }
#endif
    snprintf(out, n, ".");
}

void cli_hw_dir(char *out, size_t n)
{
    char root[PATH_MAX];
    cli_root(root, sizeof root);
    snprintf(out, n, "%.*s/hw", (int)(n > 4 ? n - 4 : 0), root);
}

int cli_resolve(const char *dir, const char *name, char *out, size_t n, kt_err *e)
{
    size_t len = strlen(name);
    if (!len)
        return err_set(e, KT_EINPUT, NULL, NULL, "empty %s name", dir);
    if (strchr(name, '/') || (len > 5 && !strcmp(name + len - 5, ".json"))) {
        snprintf(out, n, "%s", name);
        if (access(out, R_OK) != 0)
            return err_set(e, KT_EINPUT, name, NULL, "cannot open: %s", strerror(errno));
        return 0;
    }
    char root[PATH_MAX], canon[PATH_MAX], cwd[PATH_MAX];
    cli_root(root, sizeof root);
    /* messages name files relative to the current directory when the data root is it */
    if (realpath(root, canon) && getcwd(cwd, sizeof cwd) && !strcmp(canon, cwd))
        snprintf(root, sizeof root, ".");
    else if (realpath(root, canon))
        snprintf(root, sizeof root, "%s", canon);
    if (!strcmp(root, "."))
        snprintf(out, n, "%s/%s.json", dir, name);
    else
        snprintf(out, n, "%s/%s/%s.json", root, dir, name);
    if (access(out, R_OK) != 0 && !strcmp(dir, "workloads")) { /* a whole model (compose.h) */
        char alt[PATH_MAX + 64];
        if (!strcmp(root, "."))
            snprintf(alt, sizeof alt, "%s/models/%s.json", dir, name);
        else
            snprintf(alt, sizeof alt, "%s/%s/models/%s.json", root, dir, name);
        if (access(alt, R_OK) == 0)
            snprintf(out, n, "%s", alt);
    }
    if (access(out, R_OK) != 0)
        return err_set(e, KT_EINPUT, NULL, NULL,
                       "no %s named \"%s\" in %s/%s/ (see 'kitsune list', or give a path to a "
                       ".json file)",
                       strcmp(dir, "hw") ? "workload" : "hardware", name, root, dir);
    return 0;
}

int cli_load_hw(const char *name, hw_gpu *g, kt_err *e)
{
    char path[PATH_MAX];
    if (!name)
        return err_set(e, KT_EINPUT, NULL, "--hw", "missing (e.g. --hw a100)");
    if (cli_resolve("hw", name, path, sizeof path, e))
        return -1;
    char dir[PATH_MAX];
    cli_hw_dir(dir, sizeof dir);
    return hw_load_dir(path, dir, g, e);
}

cJSON *cli_wl_parse(const char *name, char *path, size_t n, kt_err *e)
{
    if (!name) {
        err_set(e, KT_EINPUT, NULL, "--workload", "missing (e.g. --workload nerf)");
        return NULL;
    }
    if (cli_resolve("workloads", name, path, n, e))
        return NULL;
    return jsonx_load(path, e);
}

int cli_wl_build(const cli_common *c, const cJSON *root, const char *path, int training, arena *a,
                 wl_graph *g, kt_err *e)
{
    if (wl_from_json(root, path, c->sets, c->nsets, training, a, g, e))
        return -1;
    return c->dtype_given ? wl_set_float_dtype(g, c->dtype, e) : 0;
}

int cli_load_wl(const cli_common *c, const char *name, int training, arena *a, wl_graph *g,
                kt_err *e)
{
    char path[PATH_MAX];
    cJSON *root = cli_wl_parse(name, path, sizeof path, e);
    if (!root)
        return -1;
    int rc = cli_wl_build(c, root, path, training, a, g, e);
    cJSON_Delete(root);
    return rc;
}

int cli_error(cli_ctx *x, int code, const char *path, const char *fmt, ...)
{
    char msg[sizeof x->e.msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return err_set(&x->e, code ? code : KT_EINPUT, NULL, path, "%s", msg);
}

FILE *cli_output(cli_ctx *x)
{
    if (!x->out.f && of_open(&x->out, x->c.out_path, OF_BUFFER, &x->e))
        return NULL;
    return x->out.f;
}

wl_graph *cli_workload(cli_ctx *x, const char *name, int training)
{
    wl_graph *g = arena_calloc(&x->a, 1, sizeof *g);
    if (!g) {
        err_set(&x->e, KT_EINTERNAL, NULL, NULL, "out of memory");
        return NULL;
    }
    return cli_load_wl(&x->c, name, training, &x->a, g, &x->e) ? NULL : g;
}

int cli_applicable(cli_ctx *x)
{
    const cli_common *c = &x->c;
    int training = c->modes & 2, m = c->opts.exec_mask;
    if ((c->given & O_OPTIM) && !training)
        return cli_error(x, 0, "--optimizer", "applies to training (--mode training or both)");
    if ((c->given & O_VFBWD) && !training)
        return cli_error(x, 0, "--vf-backward", "applies to training (--mode training or both)");
    if ((c->given & O_VFBWD) && !(m & (EXEC_VF | EXEC_KITSUNE)))
        return cli_error(x, 0, "--vf-backward", "applies to vf and kitsune (--exec)");
    static const struct {
        cli_opt_mask bit;
        const char *name;
    } KS[] = {{O_SELECT, "--select"}, {O_SCHED, "--scheduler"}, {O_REST, "--rest"}};
    for (size_t i = 0; i < sizeof KS / sizeof KS[0]; i++)
        if ((c->given & KS[i].bit) && !(m & EXEC_KITSUNE))
            return cli_error(x, 0, KS[i].name, "applies to kitsune (--exec kitsune or all)");
    if ((c->given & O_VF) && !(m & EXEC_VF) && (!(m & EXEC_KITSUNE) || c->opts.rest_bsp))
        return cli_error(x, 0, "--vf", "applies to vf and to kitsune's rest as vf (--exec)");
    if ((c->given & O_EXPLAIN) && c->format != FMT_TABLE)
        return cli_error(x, 0, "--explain", "applies to --format table");
    return 0;
}

void cli_warn_power(cli_ctx *x, const kt_run_result *rr)
{
    const kt_opts *o = &x->c.opts;
    hw_gpu ph = kt_power_hw(&x->hw, o); /* the board limit under the power policy */
    int board = o->power_policy != KT_POWER_NONE;
    double cap = board && o->power_cap_W > ph.tdp_W ? ph.tdp_W : o->power_cap_W;
    lint_list l = {0};
    for (int i = 0; i < rr->nres; i++) {
        const kt_result *lim[2] = {board ? &rr->res[i] : NULL, o->power_cap_W > 0 ? &rr->capped[i] : NULL};
        const double limit[2] = {ph.tdp_W, cap};
        for (int k = 0; k < 2; k++)
            if (lim[k] && lim[k]->avg_power_W > limit[k] * (1 + 1e-9))
                lint_add(&l,
                         "%s, %s, %s: %.1f W on average, above the %s (%.0f W); kernels above it "
                         "even at the lowest clock (%.0f MHz): %d",
                         rr->g->name, cli_mode_name(o->training), lim[k]->exec,
                         lim[k]->avg_power_W, k ? "power cap" : "board's TDP", limit[k],
                         ph.clock_min_MHz, lim[k]->over_cap_items);
    }
    cli_warn(x, &l);
}

int cli_run_workload(cli_ctx *x, kt_run_result *rr)
{
    const cli_common *c = &x->c;
    if (!c->nworkload)
        return cli_error(x, 0, "--workload", "missing (e.g. --workload nerf)");
    wl_graph *g = cli_workload(x, c->workload[0], c->opts.training);
    if (!g || kt_run(&x->hw, g, &c->opts, &x->a, rr, &x->e) ||
        cli_check_run(x, &x->hw, rr->g, rr->works, c->opts.training, &x->mem))
        return -1;
    cli_warn_power(x, rr);
    return 0;
}

void cli_warn(cli_ctx *x, const lint_list *l)
{
    for (int i = 0; i < l->n; i++) {
        if (lint_add(&x->warn, "%s", l->msg[i])) /* new, or the list is full: print anyway */
            fprintf(stderr, "kitsune %s: warning: %s\n", x->cmd->name, l->msg[i]);
    }
}

int cli_check_run(cli_ctx *x, const hw_gpu *hw, const wl_graph *g, const op_work *w, int training,
                  kt_summary *s)
{
    arena_pos mark = arena_mark(&x->a);
    if (!w) /* a run's works when it has them (a 100,000-op graph's are 81 MB) */
        w = op_works(g, &x->a, &x->e);
    if (!w || kt_summarize_works(g, w, &x->a, s, &x->e)) {
        arena_release(&x->a, mark);
        return -1;
    }
    char what[128];
    snprintf(what, sizeof what, "%s, %s", g->name, cli_mode_name(training));
    lint_list l = {0};
    lint_dtype(hw, g, w, &l);
    lint_moe(g, &l);
    lint_memory(hw, s->footprint_bytes - s->peak_act_bytes, s->peak_act_bytes, what, &l);
    cli_warn(x, &l);
    arena_release(&x->a, mark);
    return 0;
}

void cli_json_memory(FILE *f, const kt_summary *s, const hw_gpu *hw)
{
    double cap = hw->dram_capacity_GiB * 1073741824.0;
    fprintf(f, ", \"memory\": {\"weight_bytes\": %lld, \"peak_activation_bytes\": %lld, "
               "\"footprint_bytes\": %lld, \"capacity_bytes\": %.0f, \"fits\": %s}",
            (long long)(s->footprint_bytes - s->peak_act_bytes), (long long)s->peak_act_bytes,
            (long long)s->footprint_bytes, cap, (double)s->footprint_bytes <= cap ? "true" : "false");
}

void cli_json_warnings(FILE *f, const cli_ctx *x)
{
    fputs(",\n \"warnings\": [", f);
    for (int i = 0; i < x->warn.n; i++) {
        if (i)
            fputs(", ", f);
        out_json_str(f, x->warn.msg[i]);
    }
    fputs("]", f);
}

int cli_workload_names(const cli_common *c, arena *a, const char ***names)
{
    for (int i = 0; i < c->nworkload; i++)
        if (!strcmp(c->workload[i], "all"))
            return cli_list_dir("workloads", a, names);
    *names = (const char **)c->workload;
    return c->nworkload;
}

int cli_main(const cli_command *cmd, int argc, char **argv)
{
    static cli_ctx x;
    memset(&x, 0, sizeof x);
    /* every run's results live here until the output is written (3 MB for compare --workload
     * all --mode both): huge blocks fault once per 2 MiB (557 page faults instead of 776) */
    arena_use_huge(&x.a);
    x.cmd = cmd;
    x.argc = argc;
    x.argv = argv;
    of_catch_signals();
    int rc = cmd->setup & CMD_RAW ? 0 : cli_parse(argc, argv, cmd->opts, cmd->multi, &x.c, &x.e);
    if (rc == 1) { /* --help: the text must arrive (stdout on a full disk: exit 1) */
        fputs(cmd->help, stdout);
        return of_flush_stdout(&x.e) ? cli_fail(cmd->name, &x.e) : 0;
    }
    if (rc)
        return cli_fail(cmd->name, &x.e);
    int status;
    if ((cmd->setup & CMD_HW) && cli_load_hw(x.c.hw, &x.hw, &x.e)) {
        status = -1;
    } else {
        if (cmd->setup & CMD_HW) {
            lint_list l = {0};
            lint_hw(&x.hw, &l);
            cli_warn(&x, &l);
        }
        status = cmd->run(&x);
    }
    int finished = status >= 0; /* the output is complete (possibly with a non-zero verdict) */
    if (status < 0)
        status = cli_fail(cmd->name, &x.e);
    kt_err e;
    err_clear(&e);
    if (!finished)
        of_abort(&x.out);
    else if (of_commit(&x.out, &e) || of_flush_stdout(&e))
        status = cli_fail(cmd->name, &e);
    arena_free(&x.a);
    return status;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int cli_list_dir(const char *dir, arena *a, const char ***names)
{
    char root[PATH_MAX], path[PATH_MAX + 64];
    cli_root(root, sizeof root);
    snprintf(path, sizeof path, "%s/%s", root, dir);
    *names = NULL;
    DIR *d = opendir(path);
    if (!d)
        return 0;
    int n = 0, cap = 0;
    const char **v = NULL;
    struct dirent *de;
    while ((de = readdir(d))) {
        size_t len = strlen(de->d_name);
        if (len <= 5 || strcmp(de->d_name + len - 5, ".json"))
            continue;
        if (n == cap) { /* no limit on the count (compare --workload all read at most 64) */
            cap = cap ? 2 * cap : 64;
            const char **nv = arena_calloc(a, (size_t)cap, sizeof *nv);
            if (!nv)
                break;
            if (n)
                memcpy(nv, v, (size_t)n * sizeof *nv);
            v = nv;
        }
        char *name = arena_strdup(a, de->d_name);
        if (!name)
            break;
        name[len - 5] = 0;
        v[n++] = name;
    }
    closedir(d);
    if (n)
        qsort(v, (size_t)n, sizeof *v, cmp_names);
    *names = v;
    return n;
}

/* The message is one line whatever names it quotes: control characters (a newline or an
 * escape sequence in a file or tensor name) are written as \n, \t or \xNN, so input cannot
 * forge further lines or drive the terminal. */
int cli_fail(const char *cmd, const kt_err *e)
{
    char buf[1024];
    err_format(e, buf, sizeof buf);
    fprintf(stderr, "kitsune%s%s: ", cmd[0] ? " " : "", cmd);
    for (const unsigned char *p = (const unsigned char *)buf; *p; p++) {
        if (*p == '\n')
            fputs("\\n", stderr);
        else if (*p == '\t')
            fputs("\\t", stderr);
        else if (*p < 0x20 || *p == 0x7f)
            fprintf(stderr, "\\x%02x", *p);
        else
            fputc(*p, stderr);
    }
    fputc('\n', stderr);
    return e->code ? e->code : 1;
}

const char *cli_mode_name(int training)
{
    return training ? "training" : "inference";
}

int cli_threads(const cli_common *c, long long n, int default_max)
{
    long t = c->jobs;
    if (!(c->given & O_JOBS)) {
        int cpus = jobs_cpus();
        t = cpus > default_max ? default_max : cpus;
    }
    return (int)(t < n ? t : n > 0 ? n : 1);
}
