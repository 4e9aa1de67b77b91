/* kitsune.h: the library's public API - load a GPU and a workload, run the execution models,
 * read the results. Everything a program embedding the model needs; the CLI uses nothing else
 * from the library except the writers in io/out.h.
 *
 *   hw_gpu hw; wl_graph g; arena a = {0}; kt_err e; kt_opts o; kt_run_result r;
 *   hw_load("hw/a100.json", &hw, &e);
 *   wl_load("workloads/nerf.json", NULL, 0, 0, &a, &g, &e);
 *   kt_opts_default(&o);
 *   kt_run(&hw, &g, &o, &a, &r, &e);       -> r.by[EX_BSP]->time_s, r.by[EX_KITSUNE]->...
 *   arena_free(&a);
 * Every call returns 0 or -1 with e naming the file, JSON path and reason. */
#ifndef KITSUNE_H
#define KITSUNE_H

#include "arena.h"
#include "err.h"
#include "io/hw_json.h"
#include "io/wl_json.h"
#include "model/exec/kitsune.h"
#include "model/hw.h"
#include "model/result.h"
#include "model/run.h"
#include "model/wl.h"

#endif
