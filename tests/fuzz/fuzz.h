/* fuzz: what every harness shares - the entry point libFuzzer (make fuzz) or the corpus replay
 * (tests/fuzz/replay.c, make check) calls, an assertion that stays on in every build, and the
 * model's invariants that count as crashes: a result that is not finite, is negative, or where
 * kitsune is slower than its own run without pipelines under the same power limit. */
#ifndef KT_FUZZ_H
#define KT_FUZZ_H
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/io/hw_json.h"
#include "../../src/model/energy.h"
#include "../../src/model/exec/kitsune.h"
#include "../../src/model/run.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* An assertion that NDEBUG cannot remove: a failure is a crash the fuzzer reports. */
#define FZ_ASSERT(cond, ...)                                                                   \
    do {                                                                                       \
        if (!(cond)) {                                                                         \
            fprintf(stderr, "fuzz invariant failed: %s (%s:%d): ", #cond, __FILE__, __LINE__); \
            fprintf(stderr, __VA_ARGS__);                                                      \
            fputc('\n', stderr);                                                               \
            abort();                                                                           \
        }                                                                                      \
    } while (0)

/* The input as a NUL-terminated string (malloc'd; the caller frees). */
static inline char *fz_text(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    FZ_ASSERT(s != NULL, "out of memory");
    if (size)
        memcpy(s, data, size);
    s[size] = 0;
    return s;
}

/* A shipped GPU, hw/<name>.json under $KITSUNE_HOME (default: the current directory). */
static inline hw_gpu fz_hw(const char *name)
{
    char path[1024];
    const char *root = getenv("KITSUNE_HOME");
    snprintf(path, sizeof path, "%s/hw/%s.json", root && root[0] ? root : ".", name);
    hw_gpu g;
    kt_err e;
    err_clear(&e);
    FZ_ASSERT(hw_load(path, &g, &e) == 0, "%s: %s (run from the repository root)", path, e.msg);
    return g;
}

static inline int fz_real_ok(double v)
{
    return isfinite(v) && v >= 0;
}

/* Every number of a result is usable: finite and >= 0, counts below the 64-bit limit. */
static inline void fz_check_result(const kt_result *r)
{
    FZ_ASSERT(fz_real_ok(r->time_s) && fz_real_ok(r->energy_J) && fz_real_ok(r->avg_power_W) &&
                  fz_real_ok(r->clock_MHz) && r->clock_MHz > 0,
              "%s: time %g energy %g power %g clock %g", r->exec, r->time_s, r->energy_J,
              r->avg_power_W, r->clock_MHz);
    const double parts[] = {r->e_tensor_J, r->e_simt_J, r->e_dram_J, r->e_l2_J,
                            r->e_smem_J,   r->e_rf_J,   r->e_static_J};
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
        FZ_ASSERT(fz_real_ok(parts[i]), "%s: energy part %zu = %g", r->exec, i, parts[i]);
    const int64_t counts[] = {r->flops, r->dram_read_bytes, r->dram_write_bytes, r->l2_bytes};
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++)
        FZ_ASSERT(counts[i] >= 0 && (double)counts[i] < KT_COUNT_LIMIT, "%s: count %zu = %lld",
                  r->exec, i, (long long)counts[i]);
    for (int i = 0; i < r->nitems; i++) {
        const kt_item *it = &r->items[i];
        FZ_ASSERT(fz_real_ok(it->c.time_s) && fz_real_ok(it->energy_J) &&
                      fz_real_ok(it->avg_power_W),
                  "%s: kernel %s: time %g energy %g power %g", r->exec, it->name, it->c.time_s,
                  it->energy_J, it->avg_power_W);
    }
}

/* Kitsune's option without pipelines under the limits r ran at (the board's TDP under the
 * power policy, none for KT_POWER_NONE, and cap_W), as run.c applies them. */
static inline double fz_none_limited(const hw_gpu *hw0, const kt_opts *o, const kt_result *ks,
                                     double cap_W, arena *a)
{
    const ks_plan *pl = ks->extra;
    hw_gpu hw = kt_power_hw(hw0, o);
    int board = o->power_policy != KT_POWER_NONE;
    kt_result none = *pl->none, limited, capped;
    en_account(&hw, &none);
    limited = none;
    if (board)
        FZ_ASSERT(en_power_cap(&hw, &none, hw.tdp_W, a, &limited) == 0, "power limit failed");
    if (cap_W <= 0)
        return limited.time_s;
    FZ_ASSERT(en_power_cap(&hw, &limited, board && cap_W > hw.tdp_W ? hw.tdp_W : cap_W, a,
                           &capped) == 0,
              "power cap failed");
    return capped.time_s;
}

/* The invariants of a successful run. */
static inline void fz_check_run(const hw_gpu *hw, const kt_run_result *rr, const kt_opts *o,
                                arena *a)
{
    for (int i = 0; i < rr->nres; i++) {
        fz_check_result(&rr->res[i]);
        if (o->power_cap_W > 0)
            fz_check_result(&rr->capped[i]);
    }
    const kt_result *ks = rr->by[EX_KITSUNE];
    if (!ks || !ks->extra || !((const ks_plan *)ks->extra)->none)
        return;
    double nb = fz_none_limited(hw, o, ks, 0, a);
    FZ_ASSERT(ks->time_s <= nb, "kitsune %.9g s, without pipelines %.9g s", ks->time_s, nb);
    if (o->power_cap_W > 0) {
        double nc = fz_none_limited(hw, o, ks, o->power_cap_W, a);
        const kt_result *kc = rr->capped_by[EX_KITSUNE];
        FZ_ASSERT(kc && kc->time_s <= nc, "kitsune under the cap %.9g s, without pipelines %.9g s",
                  kc ? kc->time_s : -1.0, nc);
    }
    const ks_plan *pl = ks->extra;
    for (int i = 0; i < pl->npipelines; i++)
        FZ_ASSERT(!pl->p[i].infeasible, "an infeasible pipeline runs: %s", pl->p[i].infeasible);
}

/* Model options from the bits of one input byte, so the fuzzer explores them too. */
static inline kt_opts fz_opts(uint8_t bits)
{
    kt_opts o;
    kt_opts_default(&o);
    o.training = bits & 1;
    o.select = bits & 2 ? SELECT_PATTERNS : SELECT_SEARCH;
    o.rest_bsp = (bits >> 2) & 1;
    o.scheduler_shared = (bits >> 3) & 1;
    o.vf_backward = (bits >> 4) & 1;
    o.power_cap_W = bits & 32 ? 150 : 0;
    o.graph_launch = !((bits >> 6) & 1);
    o.optimizer = bits & 128 ? OPTIM_ADAM : OPTIM_NONE;
    o.ilp_time_limit_s = 0.05; /* a pathological ILP takes the greedy answer quickly */
    return o;
}

/* More model options from the high bits of a second byte (its low two bits are the harness's):
 * the vf fusion policy and the power policy. */
static inline void fz_opts2(kt_opts *o, uint8_t bits)
{
    o->vf_policy = (bits >> 2) % 3;
    o->power_policy = (bits >> 4) % 3;
}

#endif
