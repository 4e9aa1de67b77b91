/* check_pipeline: pipeline design, mapping, bounds, spills and traffic against bsp. */
#include <ctype.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../src/model/exec/bsp.h"
#include "../src/model/exec/kitsune.h"
#include "../src/model/run.h"
#include "../src/model/exec/queue.h"
#include "ktest.h"

static hw_gpu a100(void)
{
    return kt_test_hw("a100");
}

/* x[M,K] -> fc1 (W1 [K,K]) -> h -> fc2 (W2 [K,K]) -> y: two identical Tensor stages. */
static void chain(arena *a, wl_graph *g, op_work **w, int64_t M, int64_t K)
{
    kt_err e;
    wl_init(g, "chain", a);
    int64_t xd[2] = {M, K}, wd[2] = {K, K};
    int x = wl_add_tensor(g, "x", 2, xd, DT_BF16, TK_INPUT, &e);
    int w1 = wl_add_tensor(g, "w1", 2, wd, DT_BF16, TK_WEIGHT, &e);
    int w2 = wl_add_tensor(g, "w2", 2, wd, DT_BF16, TK_WEIGHT, &e);
    int h = wl_add_tensor(g, "h", 2, xd, DT_BF16, TK_INTER, &e);
    int y = wl_add_tensor(g, "y", 2, xd, DT_BF16, TK_OUTPUT, &e);
    int i1[2] = {x, w1}, i2[2] = {h, w2};
    ck_assert_int_ge(wl_add_op(g, "fc1", OP_LINEAR, i1, 2, &h, 1, NULL, 0, &e), 0);
    ck_assert_int_ge(wl_add_op(g, "fc2", OP_LINEAR, i2, 2, &y, 1, NULL, 0, &e), 0);
    ck_assert_msg(graph_check(g, "chain", &e) == 0, "%s", e.msg);
    *w = op_works(g, a, &e);
    ck_assert_ptr_nonnull(*w);
}

START_TEST(equal_stages_split_evenly)
{
    hw_gpu hw = a100();
    arena a = {0};
    wl_graph g;
    op_work *w;
    chain(&a, &g, &w, 8192, 1024);
    ks_opts o;
    ks_opts_default(&o);
    cost_ctx c = {.clock_MHz = hw.clock_MHz, .graph_launch = 1};
    ks_pipeline p;
    kt_err e;
    ck_assert_msg(ks_eval_segment(&hw, &g, w, &c, &o, 0, 1, &a, &p, &e) == 0, "%s", e.msg);
    ck_assert_int_eq(p.nstages, 2);
    ck_assert_int_eq(p.nqueues, 1);
    ck_assert_int_eq(p.tiles, 8192 / 128);
    ck_assert_int_eq(p.stages[0].ctas, hw.sm_count / 2);
    ck_assert_int_eq(p.stages[1].ctas, hw.sm_count / 2);
    ck_assert_str_eq(p.ilp_status_name, "optimal");
    /* queue: h is 16 MiB over 64 tiles = 256 KiB payloads, depth 2, one ring per producer CTA */
    ck_assert_int_eq(p.queues[0].payload_bytes, 262144);
    ck_assert_int_eq(p.queues[0].storage_bytes, 2 * 262144 * (hw.sm_count / 2));
    ck_assert_int_eq(p.queues[0].spilled, 0);
    /* DRAM by hand: x + W1 + W2 read, y written; h never leaves the chip */
    ck_assert_int_eq(p.dram_read_bytes, 8192 * 1024 * 2 + 2 * 1024 * 1024 * 2);
    ck_assert_int_eq(p.dram_write_bytes, 8192 * 1024 * 2);
    /* the shared-pool ablation still splits evenly (both stages are Tensor stages) */
    o.scheduler_shared = 1;
    ck_assert(ks_eval_segment(&hw, &g, w, &c, &o, 0, 1, &a, &p, &e) == 0);
    ck_assert_int_eq(p.stages[0].ctas + p.stages[1].ctas, hw.sm_count);
    arena_free(&a);
}
END_TEST

START_TEST(throughput_within_bounds)
{
    hw_gpu hw = a100();
    arena a = {0};
    wl_graph g;
    op_work *w;
    static const int64_t SHAPES[][2] = {{8192, 1024}, {512, 4096}, {65536, 256}, {128, 128}};
    for (size_t k = 0; k < sizeof SHAPES / sizeof SHAPES[0]; k++) {
        chain(&a, &g, &w, SHAPES[k][0], SHAPES[k][1]);
        ks_opts o;
        ks_opts_default(&o);
        cost_ctx c = {.clock_MHz = hw.clock_MHz, .graph_launch = 1};
        ks_pipeline p;
        kt_err e;
        ck_assert(ks_eval_segment(&hw, &g, w, &c, &o, 0, 1, &a, &p, &e) == 0);
        double T = p.throughput_tiles_per_s;
        ck_assert(T > 0);
        int pool = 0;
        for (int s = 0; s < p.nstages; s++) {
            ck_assert(T <= p.stages[s].rate_tiles_per_s * (1 + 1e-12));
            pool += p.stages[s].ctas;
        }
        ck_assert_int_le(pool, hw.sm_count); /* both are Tensor stages: one pool */
        if (p.dram_bound_tiles_per_s > 0)
            ck_assert(T <= p.dram_bound_tiles_per_s * (1 + 1e-12));
        if (p.l2_bound_tiles_per_s > 0)
            ck_assert(T <= p.l2_bound_tiles_per_s * (1 + 1e-12));
        /* independent DRAM bound: bytes per tile at the achievable DRAM bandwidth */
        double bytes = (double)(p.dram_read_bytes + p.dram_write_bytes);
        ck_assert(T <= roof_dram_Bps(&hw, hw.sm_count, roof_inflight_full(&hw)) * (double)p.tiles / bytes * (1 + 1e-9));
        /* time >= (tiles - 1) / T */
        ck_assert(p.time_s >= (double)(p.tiles - 1) / T);
    }
    arena_free(&a);
}
END_TEST

START_TEST(spills_when_l2_too_small)
{
    hw_gpu hw = a100();
    arena a = {0};
    wl_graph g;
    op_work *w;
    chain(&a, &g, &w, 8192, 1024);
    ks_opts o;
    ks_opts_default(&o);
    cost_ctx c = {.clock_MHz = hw.clock_MHz, .graph_launch = 1};
    ks_pipeline fit, sp;
    kt_err e;
    ck_assert(ks_eval_segment(&hw, &g, w, &c, &o, 0, 1, &a, &fit, &e) == 0);
    /* L2 of 256 KiB: smaller than the 16 MiB intermediate and than one producer CTA's ring
     * (2 x 256 KiB), so the queue cannot stay on chip at any allocation */
    hw.l2_capacity_MiB = 0.25;
    ck_assert(ks_eval_segment(&hw, &g, w, &c, &o, 0, 1, &a, &sp, &e) == 0);
    ck_assert_int_eq(sp.queues[0].spilled, 1);
    ck_assert(sp.spilled_bytes > 0);
    /* spilled: the part of the ring storage beyond L2, of h's traffic (written once, read by
     * one consumer: 2 x 16 MiB) */
    double frac = 1.0 - 0.25 * 1048576 / (double)sp.queues[0].storage_bytes;
    ck_assert(sp.queues[0].storage_bytes > 0.25 * 1048576);
    ck_assert_double_eq_tol((double)sp.spilled_bytes, frac * 2 * 8192 * 1024 * 2, 2);
    ck_assert(sp.dram_read_bytes + sp.dram_write_bytes >
              fit.dram_read_bytes + fit.dram_write_bytes);
    arena_free(&a);
}
END_TEST

/* Every shipped workload, both modes: a pipeline never moves more DRAM bytes than bsp moves for
 * the same ops. */
START_TEST(never_more_dram_than_bsp)
{
    hw_gpu hw = a100();
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/workloads", KT_ROOT);
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    struct dirent *de;
    int checked = 0;
    while ((de = readdir(d))) {
        if (!kt_is_json(de->d_name))
            continue;
        for (int training = 0; training <= 1; training++) {
            char path[2048];
            snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
            arena a = {0};
            wl_graph g;
            kt_err e;
            err_clear(&e);
            ck_assert_msg(wl_load(path, NULL, 0, training, &a, &g, &e) == 0, "%s", e.msg);
            kt_opts o;
            kt_opts_default(&o);
            o.training = training;
            o.exec_mask = EXEC_BSP | EXEC_KITSUNE;
            o.rest_bsp = 1;
            kt_run_result rr;
            if (kt_run(&hw, &g, &o, &a, &rr, &e)) {
                /* a training graph the autodiff cannot derive yet is not this test's concern */
                ck_assert_msg(training, "%s: %s", de->d_name, e.msg);
                arena_free(&a);
                continue;
            }
            const kt_result *bsp = &rr.res[0], *ks = &rr.res[1];
            ck_assert_str_eq(ks->exec, "kitsune");
            ck_assert_int_eq(bsp->nitems, rr.g->nop);
            for (int i = 0; i < ks->nitems; i++) {
                const kt_item *it = &ks->items[i];
                if (it->pipeline < 0)
                    continue;
                int64_t pb = it->c.dram_read_bytes + it->c.dram_write_bytes, bb = 0;
                for (int k = 0; k < it->nops; k++)
                    bb += bsp->items[it->ops[k]].c.dram_read_bytes +
                          bsp->items[it->ops[k]].c.dram_write_bytes;
                ck_assert_msg(pb <= bb, "%s %s: %s moves %lld > bsp %lld", de->d_name,
                              training ? "training" : "inference", it->name, (long long)pb,
                              (long long)bb);
                checked++;
            }
            ck_assert_int_eq(ks->ops_total, rr.g->nop);
            ck_assert_int_le(ks->ops_covered, ks->ops_total);
            arena_free(&a);
        }
    }
    closedir(d);
    ck_assert_int_gt(checked, 0);
}
END_TEST

/* No per-application constants: the pipeline model's sources name no application. */
START_TEST(no_application_constants)
{
    static const char *const FILES[] = {"src/model/exec/kitsune.c", "src/model/exec/pipe.c",
                                        "src/model/exec/queue.c", "src/model/exec/select.c",
                                        "src/opt/ilp.c"};
    static const char *const APPS[] = {"dlrm", "nerf", "llama", "graphcast", "meshgraph"};
    for (size_t f = 0; f < sizeof FILES / sizeof FILES[0]; f++) {
        char path[1024], buf[4096];
        snprintf(path, sizeof path, "%s/%s", KT_ROOT, FILES[f]);
        FILE *fp = fopen(path, "r");
        ck_assert_ptr_nonnull(fp);
        while (fgets(buf, sizeof buf, fp)) {
            for (char *p = buf; *p; p++)
                *p = (char)tolower((unsigned char)*p);
            for (size_t k = 0; k < sizeof APPS / sizeof APPS[0]; k++)
                ck_assert_msg(!strstr(buf, APPS[k]) || strstr(buf, "paper"),
                              "%s names %s: %s", FILES[f], APPS[k], buf);
        }
        fclose(fp);
    }
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("pipeline");
    TCase *t = tcase_create("ks_eval_segment");
    tcase_add_test(t, equal_stages_split_evenly);
    tcase_add_test(t, throughput_within_bounds);
    tcase_add_test(t, spills_when_l2_too_small);
    suite_add_tcase(s, t);
    TCase *r = tcase_create("ks_run");
    tcase_set_timeout(r, 120);
    tcase_add_test(r, never_more_dram_than_bsp);
    tcase_add_test(r, no_application_constants);
    suite_add_tcase(s, r);
    return s;
}

KT_TEST_MAIN(suite)
