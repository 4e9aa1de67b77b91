/* compose: whole models from blocks - N repetitions of a block graph appended to a model's graph
 * under unique names (io/wl_json.c reads them from "repeat" entries), and the per-block
 * breakdown of a result. */
#ifndef KT_COMPOSE_H
#define KT_COMPOSE_H
#include <stdint.h>

#include "../arena.h"
#include "../err.h"
#include "hw.h"
#include "result.h"
#include "wl.h"

/** Most repetitions of one block (a sanity bound: the deepest published transformers have a few
 *  hundred layers). */
#define COMPOSE_MAX_COUNT 100000
/** Most ops of a composed graph (forward): keeps every index, and the training graph's 6x, in an
 *  int with room to spare. */
#define COMPOSE_MAX_OPS 10000000

/** How one repeated block graph connects to the model. Arrays are indexed by the block's
 *  tensors (blk->ntensor entries). */
typedef struct compose_repeat {
    const char *name;   /* repetition i is block "<name><i>"; its new tensors and ops are named
                           "<name><i>.<block name>" (layer3.q_proj) */
    int count;          /* repetitions, 1..COMPOSE_MAX_COUNT */
    const int *bind_in; /* an input or weight: the model tensor it is in every repetition (shared:
                           cos/sin tables, tied weights), or only in repetition 0 when carried;
                           -1: none (a new tensor per repetition) */
    const int *carry;   /* an input: the block output whose previous repetition feeds it (x <- y
                           of the layer before), -1: none */
    const int *bind_out;/* an output: the model tensor the last repetition writes, -1: none */
} compose_repeat;

/** Start a block for the model's own ops ("head", "tail"): its index in g->block, or -1 (e set)
 *  when memory runs out. repeat/index: as wl_block (NULL/-1 for the model's own ops). */
int compose_block(wl_graph *g, const char *name, const char *repeat, int index, kt_err *e);

/** Append r->count repetitions of the checked graph blk to g, each a new block: tensors not
 *  bound are new, named "<name><i>.<tensor>"; a carried output becomes an intermediate in every
 *  repetition but the last; ops are copied with their attributes, inputs and outputs remapped.
 *  tm (may be NULL): g's tensor-name index, new names are inserted and a duplicate is an error.
 *  Linear in count x (blk's tensors + ops). 0, or -1 with e set (duplicate name, a name too
 *  long, out of memory). */
int compose_append(wl_graph *g, const wl_graph *blk, const compose_repeat *r, wl_names *tm,
                   kt_err *e);

/** One block's share of a result (compose_breakdown). */
typedef struct compose_share {
    int ops;                 /* graph ops in the block (views and backward ops included) */
    int kernels;             /* the result's kernels whose ops all lie in the block */
    int shared;              /* kernels with ops in this block and in another */
    double time_s, energy_J; /* whole items, plus this block's part of shared ones */
    double dram_read_bytes, dram_write_bytes; /* fractional where shared */
    int64_t flops;           /* the block's ops' own FLOPs (op_work: tensor + SIMT) */
} compose_share;

/** The per-block breakdown of result r of the composed graph g (out: g->nblock entries). An item
 *  whose ops lie in one block counts whole there. An item spanning blocks (a vf group or a kitsune
 *  pipeline that fuses the end of one block with the start of the next) is split among them in
 *  proportion to its ops' stand-alone times: each op alone on all SMs of hw at its clock, every
 *  operand from DRAM (cost_eval), the launch gap left out; ops that launch nothing weigh 0, and
 *  an item whose ops all weigh 0 is split by op count. The shares of every item sum to it, so the
 *  blocks sum to the result's totals. Pure; scratch memory from a. 0, or -1 with e set. */
int compose_breakdown(const hw_gpu *hw, const wl_graph *g, const kt_result *r, arena *a,
                      compose_share *out, kt_err *e);

#endif
