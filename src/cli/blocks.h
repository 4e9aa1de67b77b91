/* blocks: the per-block breakdown of a composed model's results (compose.h) - tables and JSON
 * for predict and compare. */
#ifndef KT_CLI_BLOCKS_H
#define KT_CLI_BLOCKS_H
#include <stdio.h>

#include "../model/compose.h"
#include "cli.h"

/** A run's breakdown: by[x] has g->nblock entries for each execution model that ran, else NULL. */
typedef struct cli_blocks {
    const wl_graph *g;
    compose_share *by[EX_COUNT];
    int spanning[EX_COUNT]; /* kernels with ops in more than one block */
} cli_blocks;

/** The breakdown of results `by` (NULL where not run) of graph g; b->g = NULL when g is not
 *  composed (nothing to report). 0, or -1 with x->e set. */
int cli_blocks_of(cli_ctx *x, const wl_graph *g, const kt_result *const *by, cli_blocks *b);
/** predict: one execution model's blocks - ops, kernels, FLOPs, time and its share, DRAM bytes,
 *  energy. Consecutive repetitions with identical rows print as one ("layer1-30"). */
void cli_blocks_table(FILE *f, const cli_blocks *b, int exec);
/** compare: every execution model's time per block side by side, with speedups over bsp. */
void cli_blocks_compare(FILE *f, const cli_blocks *b);
/** `,\n "blocks": [...]` for a JSON object: per block its name, repeat, index, ops, FLOPs and
 *  per execution model time, kernels, spanning kernels, DRAM bytes, energy. Nothing when the
 *  graph is not composed. */
void cli_blocks_json(FILE *f, const cli_blocks *b, const char *indent);

#endif
