/* hw: GPU description files - `hw new` writes one from datasheet numbers (io/datasheet.c). */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../io/datasheet.h"
#include "../io/hw_json.h"
#include "../io/jsonx.h"
#include "cli.h"
#include "cmds.h"

static const char *const HELP =
    "usage: kitsune hw new --name NAME --sm-count N --clock-MHz F --tflops DTYPE=T [--tflops ...]\n"
    "                      --dram-GBps B --dram-GB C --l2-MiB L --tdp-W W [options] [-o FILE]\n"
    "\n"
    "Write a complete hw JSON file for a GPU from its datasheet numbers. The per-SM, per-clock\n"
    "fields the model needs are derived (tensor and FP32 FLOP per clock per SM = TFLOP/s / (SMs x\n"
    "clock), the L2 bandwidth and the CTA dispatch time at the new clock from the base's per-clock\n"
    "values, idle and static power at the base's share of TDP); everything else (shared memory,\n"
    "latencies, efficiencies, energies, DVFS) is copied from a base file. Every value's sources\n"
    "entry says which: \"V: <source>\" for a datasheet figure, \"D, derived: <arithmetic>\", \"E: as\n"
    "<base>\". The file loads as it is; review the copied values, then put it in hw/ or use it as\n"
    "--hw FILE.json.\n"
    "\n"
    "  --name NAME             the GPU's name (the file is usually hw/NAME.json)\n"
    "  --description TEXT      one line (default: the name)\n"
    "  --source TEXT           the datasheet, cited in every sources entry (default \"datasheet\")\n"
    "  --sm-count N            streaming multiprocessors\n"
    "  --clock-MHz F           the SM clock at which the quoted TFLOP/s hold (the boost clock)\n"
    "  --tflops DTYPE=T        dense tensor-core TFLOP/s for fp16, bf16, tf32 or fp8 (repeatable;\n"
    "                          without sparsity); a dtype not given gets no tensor cores\n"
    "  --fp32-tflops T         non-tensor FP32 TFLOP/s (default: the base's FLOP per clock per SM)\n"
    "  --fp32-clock-MHz F      the clock of that figure when it differs (H100: 1980 MHz)\n"
    "  --dram-GBps B           memory bandwidth\n"
    "  --dram-GB C             memory capacity (HBM \"GB\" are binary: written as capacity_GiB)\n"
    "  --l2-MiB L              L2 capacity\n"
    "  --l2-GBps B             L2 bandwidth, when the datasheet has it (default: derived)\n"
    "  --tdp-W W               board power limit\n"
    "  --base HW               where the other values come from (default h100)\n"
    "  -o FILE                 write to FILE instead of stdout\n"
    "\n"
    "example: kitsune hw new --name h100 --sm-count 132 --clock-MHz 1830 --tflops bf16=989.4 \\\n"
    "           --tflops fp16=989.4 --tflops tf32=494.7 --tflops fp8=1978.9 --fp32-tflops 66.9 \\\n"
    "           --fp32-clock-MHz 1980 --dram-GBps 3350 --dram-GB 80 --l2-MiB 50 --tdp-W 700 \\\n"
    "           --base a100 -o my-h100.json\n";

static int number(cli_ctx *x, const char *opt, const char *v, double *out)
{
    char *end;
    errno = 0;
    *out = strtod(v, &end);
    if (end == v || *end || errno || !isfinite(*out) || *out < 0)
        return cli_error(x, 0, opt, "expected a number >= 0, got \"%s\"", v);
    return 0;
}

/* The flat option parser of `hw new`; each option once except --tflops. */
static int parse(cli_ctx *x, ds_sheet *s, const char **base)
{
    static const char *const NUM[] = {"--sm-count", "--clock-MHz", "--fp32-tflops",
                                      "--fp32-clock-MHz", "--dram-GBps", "--dram-GB", "--l2-MiB",
                                      "--l2-GBps", "--tdp-W"};
    double *const dst[] = {NULL,         &s->clock_MHz, &s->fp32_tflops, &s->fp32_clock_MHz,
                           &s->dram_GBps, &s->dram_GB,   &s->l2_MiB,      &s->l2_GBps,
                           &s->tdp_W};
    enum { NNUM = sizeof NUM / sizeof NUM[0] };
    int seen[NNUM + 5] = {0};
    for (int i = 2; i < x->argc; i++) {
        const char *a = x->argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help"))
            return 1;
        if (i + 1 >= x->argc)
            return cli_error(x, 0, a, a[0] == '-' ? "missing value" : "unexpected argument");
        const char *v = x->argv[++i];
        int k = -1;
        for (int j = 0; j < NNUM; j++)
            if (!strcmp(a, NUM[j]))
                k = j;
        static const char *const STR[] = {"--name", "--description", "--source", "--base", "-o"};
        for (int j = 0; j < 5 && k < 0; j++)
            if (!strcmp(a, STR[j]))
                k = NNUM + j;
        if (!strcmp(a, "--tflops")) {
            const char *eq = strchr(v, '=');
            char dt[16];
            dtype d;
            double t;
            snprintf(dt, sizeof dt, "%.*s", eq ? (int)(eq - v) : 0, v);
            if (!eq || dt_parse(dt, &d) || !dt_is_float(d) || d == DT_FP32)
                return cli_error(x, 0, a, "expected fp16|bf16|tf32|fp8=TFLOPS, got \"%s\" (FP32 "
                                          "is --fp32-tflops)", v);
            if (s->tflops_given[d])
                return cli_error(x, 0, a, "%s given twice", dt);
            if (number(x, a, eq + 1, &t))
                return -1;
            s->tflops[d] = t;
            s->tflops_given[d] = 1;
            continue;
        }
        if (k < 0)
            return cli_error(x, 0, a, "unknown option for hw new (see kitsune hw --help)");
        if (seen[k]++)
            return cli_error(x, 0, a, "given twice; it takes one value");
        if (k == 0) {
            double n;
            if (number(x, a, v, &n) || n != floor(n) || n < 1 || n > 100000)
                return cli_error(x, 0, a, "expected a whole number of SMs, got \"%s\"", v);
            s->sm_count = (int)n;
        } else if (k < NNUM) {
            if (number(x, a, v, dst[k]))
                return -1;
        } else if (k == NNUM) {
            snprintf(s->name, sizeof s->name, "%s", v);
        } else if (k == NNUM + 1) {
            snprintf(s->description, sizeof s->description, "%s", v);
        } else if (k == NNUM + 2) {
            snprintf(s->source, sizeof s->source, "%s", v);
        } else if (k == NNUM + 3) {
            *base = v;
        } else {
            x->c.out_path = v;
        }
    }
    return 0;
}

static int run(cli_ctx *x)
{
    if (x->argc < 2 || !strcmp(x->argv[1], "--help") || !strcmp(x->argv[1], "-h")) {
        fputs(HELP, stdout);
        return 0;
    }
    if (strcmp(x->argv[1], "new"))
        return cli_error(x, 0, NULL, "unknown subcommand \"%s\" (see kitsune hw --help)",
                         x->argv[1]);
    static ds_sheet s;
    memset(&s, 0, sizeof s);
    const char *base = "h100";
    int rc = parse(x, &s, &base);
    if (rc) {
        if (rc == 1)
            fputs(HELP, stdout);
        return rc == 1 ? 0 : -1;
    }
    char file[PATH_MAX], dir[PATH_MAX];
    hw_gpu check;
    if (cli_resolve("hw", base, file, sizeof file, &x->e))
        return -1;
    cli_hw_dir(dir, sizeof dir);
    cJSON *root = hw_json_load(file, dir, &x->e);
    if (!root)
        return -1;
    char bn[64];
    const cJSON *nm = cJSON_GetObjectItemCaseSensitive(root, "name");
    snprintf(bn, sizeof bn, "%s", cJSON_IsString(nm) ? nm->valuestring : base);
    cJSON *t = ds_derive(&s, root, bn, &x->e);
    cJSON_Delete(root);
    /* the file must load as written */
    if (!t || hw_from_json(t, "the new file", &check, &x->e)) {
        cJSON_Delete(t);
        return -1;
    }
    lint_list l = {0};
    lint_hw(&check, &l);
    cli_warn(x, &l);
    FILE *f = cli_output(x);
    int bad = !f || jsonx_write(f, t);
    cJSON_Delete(t);
    if (bad && f)
        return cli_error(x, KT_EINTERNAL, NULL, "write failed");
    return bad ? -1 : 0;
}

const cli_command cmd_hw = {"hw", "GPU description files: hw new writes one from datasheet numbers",
                            HELP, 0, CMD_RAW | CMD_OUT, run, 0};
