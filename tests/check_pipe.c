/* check_pipe: one pipeline - stages and epilogues, queues and multicast, an imposed allocation
 * reproducing the ILP's, on the MeshGraphNets edge block (workloads/mgn.json ops 2..9). */
#include <string.h>

#include "../src/model/exec/pipe.h"
#include "../src/model/op.h"
#include "ktest.h"

START_TEST(test_edge_block)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/workloads/mgn.json", KT_ROOT);
    arena a = {0};
    wl_graph g;
    kt_err e;
    err_clear(&e);
    ck_assert_msg(wl_load(path, NULL, 0, 0, &a, &g, &e) == 0, "%s", e.msg);
    op_work *w = op_works(&g, &a, &e);
    ck_assert_ptr_nonnull(w);
    hw_gpu hw = kt_test_hw("a100");
    cost_ctx c = {.clock_MHz = hw.clock_MHz, .graph_launch = 1};
    pipe_env x;
    ck_assert_int_eq(pipe_env_init(&x, &hw, &g, w, &c, 0, 1.0, &a), 0);
    ks_pipeline p;
    ck_assert_int_eq(pipe_build(&x, 2, 9, 1, NULL, 0, &a, &p), 0);
    /* edge_cat, fc1(+relu1), fc2(+relu2), fc3, ln, res: the ReLUs are epilogues; the residual add
     * reads an external input besides the layernorm's output, so it is a stage of its own */
    ck_assert_int_eq(p.nstages, 6);
    ck_assert_int_eq(p.stages[1].nmembers, 2);
    ck_assert_str_eq(g.op[p.stages[1].members[1]].name, "edge_relu1");
    ck_assert_int_eq(p.stages[0].tensor, 0);
    ck_assert_int_eq(p.stages[1].tensor, 1);
    /* one queue per tensor crossing stages: e_in, a1, a2, h3, msg */
    ck_assert_int_eq(p.nqueues, 5);
    int consumers = 0;
    for (int q = 0; q < p.nqueues; q++)
        consumers += p.queues[q].nconsumers;
    ck_assert_int_eq(consumers, 5);
    ck_assert_int_eq(p.stream_rows, 393216);
    ck_assert(p.tile_rows >= PIPE_TILE_ROWS_MIN && p.tile_rows <= PIPE_TILE_ROWS_MAX);
    ck_assert_int_eq(p.tiles, (393216 + p.tile_rows - 1) / p.tile_rows);
    /* every stage within its pool: one Tensor and one SIMT CTA per SM at most; its groups
     * divide its CTAs */
    int pool[2] = {0, 0};
    for (int s = 0; s < p.nstages; s++) {
        pool[p.stages[s].tensor] += p.stages[s].ctas;
        ck_assert_int_eq(p.stages[s].ctas % p.stages[s].groups, 0);
    }
    ck_assert_int_le(pool[0], hw.sm_count);
    ck_assert_int_le(pool[1], hw.sm_count);
    /* imposing the mapper's own allocation and tile height gives the same pipeline */
    int force[16];
    for (int s = 0; s < p.nstages; s++)
        force[s] = p.stages[s].ctas;
    ks_pipeline q;
    ck_assert_int_eq(pipe_build(&x, 2, 9, 1, force, p.tile_rows, &a, &q), 0);
    ck_assert_double_eq_tol(q.time_s, p.time_s, 1e-12 * p.time_s);
    ck_assert_int_eq(q.dram_read_bytes, p.dram_read_bytes);
    ck_assert_str_eq(q.ilp_status_name, "imposed");
    pipe_env_release(&x);
    arena_free(&a);
}
END_TEST

static Suite *pipe_suite(void)
{
    Suite *s = suite_create("pipe");
    TCase *t = tcase_create("pipe_build");
    tcase_add_test(t, test_edge_block);
    suite_add_tcase(s, t);
    return s;
}

KT_TEST_MAIN(pipe_suite)
