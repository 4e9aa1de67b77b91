/* blocks: the per-block breakdown of a composed model's results - tables and JSON. */
#include "blocks.h"

#include <math.h>
#include <string.h>

#include "../io/out.h"
#include "metrics.h"

/* The note every breakdown prints: how kernels across blocks are attributed. */
static const char *const ATTRIBUTION =
    "a kernel spanning blocks (a fused group or a pipeline across a boundary) is split among "
    "them by its ops' stand-alone times";

int cli_blocks_of(cli_ctx *x, const wl_graph *g, const kt_result *const *by, cli_blocks *b)
{
    memset(b, 0, sizeof *b);
    if (!g->nblock)
        return 0;
    b->g = g;
    for (int k = 0; k < EX_COUNT; k++) {
        if (!by[k])
            continue;
        b->by[k] = arena_calloc(&x->a, (size_t)g->nblock, sizeof *b->by[k]);
        if (!b->by[k])
            return cli_error(x, KT_EINTERNAL, NULL, "out of memory");
        if (compose_breakdown(&x->hw, g, by[k], &x->a, b->by[k], &x->e))
            return -1;
        for (int i = 0; i < by[k]->nitems; i++) {
            const kt_item *it = &by[k]->items[i];
            if (it->c.bound == BOUND_NONE)
                continue;
            for (int j = 1; j < it->nops; j++)
                if (g->op[it->ops[j]].block != g->op[it->ops[0]].block) {
                    b->spanning[k]++;
                    break;
                }
        }
    }
    return 0;
}

/* Width of the block-name column: the longest name or range ("layer10-30"). */
static int name_width(const wl_graph *g)
{
    int w = 5;
    for (int i = 0; i < g->nblock; i++) {
        int n = (int)strlen(g->block[i].name) + (g->block[i].repeat ? 6 : 0);
        if (n > w)
            w = n;
    }
    return w;
}

/* Print rows (each formatted by row(i) into a buffer), merging consecutive repetitions of one
 * repeat whose rows are identical into "layer1-30 ... (x30 each)". */
typedef void (*row_fn)(const cli_blocks *b, int blk, int arg, char *buf, size_t n);

static void print_rows(FILE *f, const cli_blocks *b, int arg, row_fn row)
{
    const wl_graph *g = b->g;
    int w = name_width(g);
    char cur[512], next[512];
    for (int i = 0; i < g->nblock;) {
        row(b, i, arg, cur, sizeof cur);
        int j = i + 1;
        const char *rep = g->block[i].repeat;
        while (rep && j < g->nblock && g->block[j].repeat && !strcmp(g->block[j].repeat, rep)) {
            row(b, j, arg, next, sizeof next);
            if (strcmp(cur, next))
                break;
            j++;
        }
        char name[160];
        if (j - i > 1)
            snprintf(name, sizeof name, "%.64s%d-%d", rep, g->block[i].index,
                     g->block[j - 1].index);
        else
            snprintf(name, sizeof name, "%.150s", g->block[i].name);
        fprintf(f, "%-*s%s", w, name, cur);
        if (j - i > 1)
            fprintf(f, "  (x%d, each)", j - i);
        fputc('\n', f);
        i = j;
    }
}

static void detail_row(const cli_blocks *b, int i, int exec, char *buf, size_t n)
{
    const compose_share *s = &b->by[exec][i];
    double total = 0;
    for (int k = 0; k < b->g->nblock; k++)
        total += b->by[exec][k].time_s;
    snprintf(buf, n, " %6d %8d %9d %12.3f %12.2f %7.2f %12.3f %12.3f %10.4g", s->ops, s->kernels,
             s->shared, (double)s->flops / 1e9, s->time_s * 1e6,
             total > 0 ? 100 * s->time_s / total : 0.0, s->dram_read_bytes / 1e6,
             s->dram_write_bytes / 1e6, s->energy_J);
}

void cli_blocks_table(FILE *f, const cli_blocks *b, int exec)
{
    if (!b->g || exec < 0 || exec >= EX_COUNT || !b->by[exec])
        return;
    fprintf(f, "per block; %s:\n", ATTRIBUTION);
    fprintf(f, "%-*s %6s %8s %9s %12s %12s %7s %12s %12s %10s\n", name_width(b->g), "block", "ops",
            "kernels", "spanning", "GFLOP", "time_us", "share%", "dram_rd_MB", "dram_wr_MB",
            "energy_J");
    print_rows(f, b, exec, detail_row);
}

static void compare_row(const cli_blocks *b, int i, int arg, char *buf, size_t n)
{
    (void)arg;
    /* ops and FLOPs are the same under every execution model: take the first that ran */
    const compose_share *any = NULL;
    for (int x = 0; x < EX_COUNT && !any; x++)
        if (b->by[x])
            any = &b->by[x][i];
    size_t k = (size_t)snprintf(buf, n, " %6d %12.3f", any ? any->ops : 0,
                         any ? (double)any->flops / 1e9 : 0.0);
    for (int x = 0; x < EX_COUNT && k < n; x++)
        if (b->by[x])
            k += (size_t)snprintf(buf + k, n - k, " %12.2f", b->by[x][i].time_s * 1e6);
    for (int x = 1; x < EX_COUNT && k < n; x++)
        if (b->by[x] && b->by[0]) {
            double t = b->by[x][i].time_s, base = b->by[0][i].time_s;
            if (t > 0 && base > 0)
                k += (size_t)snprintf(buf + k, n - k, " %8.2fx", base / t);
            else
                k += (size_t)snprintf(buf + k, n - k, " %9s", "-");
        }
}

void cli_blocks_compare(FILE *f, const cli_blocks *b)
{
    if (!b->g)
        return;
    fprintf(f, "per block; %s:\n", ATTRIBUTION);
    fprintf(f, "%-*s %6s %12s", name_width(b->g), "block", "ops", "GFLOP");
    for (int x = 0; x < EX_COUNT; x++)
        if (b->by[x]) {
            char h[32];
            snprintf(h, sizeof h, "%s_us", kt_exec_name(x));
            fprintf(f, " %12s", h);
        }
    for (int x = 1; x < EX_COUNT; x++)
        if (b->by[x] && b->by[0]) {
            char h[32];
            snprintf(h, sizeof h, "%s_x", kt_exec_name(x));
            fprintf(f, " %9s", h);
        }
    fputc('\n', f);
    print_rows(f, b, 0, compare_row);
    int any = 0;
    for (int x = 0; x < EX_COUNT; x++)
        if (b->by[x] && b->spanning[x])
            fprintf(f, "%s%s %d", any++ ? ", " : "kernels spanning blocks: ", kt_exec_name(x),
                    b->spanning[x]);
    if (any)
        fputc('\n', f);
}

void cli_blocks_json(FILE *f, const cli_blocks *b, const char *indent)
{
    if (!b->g)
        return;
    const wl_graph *g = b->g;
    fprintf(f, ",\n%s\"block_attribution\": ", indent);
    out_json_str(f, ATTRIBUTION);
    fprintf(f, ",\n%s\"blocks\": [", indent);
    for (int i = 0; i < g->nblock; i++) {
        const wl_block *bl = &g->block[i];
        const compose_share *any = NULL;
        for (int x = 0; x < EX_COUNT && !any; x++)
            if (b->by[x])
                any = &b->by[x][i];
        fprintf(f, "%s%s {\"name\": ", i ? ",\n" : "\n", indent);
        out_json_str(f, bl->name);
        fputs(", \"repeat\": ", f);
        if (bl->repeat)
            out_json_str(f, bl->repeat);
        else
            fputs("null", f);
        fprintf(f, ", \"index\": %d, \"ops\": %d, \"flops\": %lld", bl->index, any ? any->ops : 0,
                any ? (long long)any->flops : 0LL);
        for (int x = 0; x < EX_COUNT; x++) {
            if (!b->by[x])
                continue;
            const compose_share *s = &b->by[x][i];
            fprintf(f, ", \"%s\": {\"time_s\": ", kt_exec_name(x));
            out_json_num(f, s->time_s);
            fprintf(f, ", \"kernels\": %d, \"spanning_kernels\": %d", s->kernels, s->shared);
            fprintf(f, ", \"dram_read_bytes\": %lld, \"dram_write_bytes\": %lld",
                    (long long)llround(s->dram_read_bytes), (long long)llround(s->dram_write_bytes));
            out_json_knum(f, "energy_J", s->energy_J);
            fputs("}", f);
        }
        fputs("}", f);
    }
    fputs("]", f);
}
