/* check_compose: whole models - repetitions appended under unique names with their bindings,
 * "repeat" entries read from JSON (with error paths), training over the expanded graph, and the
 * per-block breakdown of a result (whole kernels, shared kernels split by hand). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../src/io/jsonx.h"
#include "../src/model/compose.h"
#include "../src/model/op.h"
#include "../src/model/run.h"
#include "ktest.h"

static int tensor(wl_graph *g, const char *name, int64_t r, int64_t c, wl_kind kind)
{
    kt_err e;
    err_clear(&e);
    int64_t dim[2] = {r, c};
    int k = wl_add_tensor(g, name, 2, dim, DT_BF16, kind, &e);
    ck_assert_int_ge(k, 0);
    return k;
}

static void op2(wl_graph *g, const char *name, int type, int a, int b, int out)
{
    kt_err e;
    err_clear(&e);
    int in[2] = {a, b};
    ck_assert_int_ge(wl_add_op(g, name, type, in, 2, &out, 1, NULL, 0, &e), 0);
}

/* The block: y = x w + s, with a per-repetition input c read by nothing but declared, and an
 * output z = relu(x) that is not carried. */
static void block(wl_graph *b, arena *a)
{
    wl_init(b, "blk", a);
    int x = tensor(b, "x", 4, 8, TK_INPUT), s = tensor(b, "s", 4, 8, TK_INPUT);
    int w = tensor(b, "w", 8, 8, TK_WEIGHT), h = tensor(b, "h", 4, 8, TK_INTER);
    int y = tensor(b, "y", 4, 8, TK_OUTPUT), z = tensor(b, "z", 4, 8, TK_OUTPUT);
    tensor(b, "c", 4, 8, TK_INPUT);
    op2(b, "mm", OP_MATMUL, x, w, h);
    op2(b, "res", OP_ADD, h, s, y);
    kt_err e;
    err_clear(&e);
    int in = x;
    ck_assert_int_ge(wl_add_op(b, "act", OP_RELU, &in, 1, &z, 1, NULL, 0, &e), 0);
}

/* Three repetitions: x of the first is the model's x0, then the previous y; s is shared; the
 * last y is the model's yN. Expected by hand: 9 ops, tensors 3 (model) + per repetition w, h,
 * z, c (4 x 3) + the first two y (the last is yN) = 17. */
START_TEST(test_append)
{
    arena a = {0};
    wl_graph b, g;
    block(&b, &a);
    wl_init(&g, "m", &a);
    int x0 = tensor(&g, "x0", 4, 8, TK_INPUT), s = tensor(&g, "s", 4, 8, TK_INPUT);
    int yN = tensor(&g, "yN", 4, 8, TK_OUTPUT);
    int bind_in[7], carry[7], bind_out[7];
    for (int t = 0; t < 7; t++)
        bind_in[t] = carry[t] = bind_out[t] = -1;
    bind_in[0] = x0;  /* x */
    bind_in[1] = s;   /* s */
    carry[0] = 4;     /* x <- y */
    bind_out[4] = yN; /* y */
    compose_repeat r = {"L", 3, bind_in, carry, bind_out};
    kt_err e;
    err_clear(&e);
    ck_assert_msg(compose_append(&g, &b, &r, NULL, &e) == 0, "%s", e.msg);
    ck_assert_int_eq(g.nop, 9);
    ck_assert_int_eq(g.ntensor, 17);
    ck_assert_int_eq(g.nblock, 3);
    ck_assert_str_eq(g.block[2].name, "L2");
    ck_assert_str_eq(g.block[2].repeat, "L");
    ck_assert_int_eq(g.block[2].index, 2);
    /* L1.mm reads L0.y and its own weight; L2.res writes yN and reads the shared s */
    ck_assert_str_eq(g.op[3].name, "L1.mm");
    ck_assert_str_eq(g.t[g.op[3].in[0]].name, "L0.y");
    ck_assert_str_eq(g.t[g.op[3].in[1]].name, "L1.w");
    ck_assert_int_eq(g.op[7].out[0], yN);
    ck_assert_int_eq(g.op[7].in[1], s);
    ck_assert_int_eq(g.op[0].in[0], x0);
    for (int i = 0; i < 9; i++)
        ck_assert_int_eq(g.op[i].block, i / 3);
    /* carried outputs become intermediates, the others stay outputs; c is new per repetition */
    ck_assert_int_eq(g.t[wl_find_tensor(&g, "L0.y")].kind, TK_INTER);
    ck_assert_int_eq(g.t[wl_find_tensor(&g, "L1.y")].kind, TK_INTER);
    ck_assert_int_lt(wl_find_tensor(&g, "L2.y"), 0);
    ck_assert_int_eq(g.t[wl_find_tensor(&g, "L2.z")].kind, TK_OUTPUT);
    ck_assert_int_eq(g.t[wl_find_tensor(&g, "L1.c")].kind, TK_INPUT);
    ck_assert_int_eq(g.t[wl_find_tensor(&g, "L2.w")].kind, TK_WEIGHT);
    ck_assert_int_eq(graph_check(&g, "m", &e), 0);
    arena_free(&a);
}
END_TEST

/* A name the model already has is an error, not a silent second tensor. */
START_TEST(test_append_duplicate)
{
    arena a = {0};
    wl_graph b, g;
    block(&b, &a);
    wl_init(&g, "m", &a);
    tensor(&g, "L0.h", 4, 8, TK_INPUT);
    wl_names tm;
    ck_assert_int_eq(wl_names_init(&tm, 64, &a), 0);
    wl_names_find(&tm, &g, "L0.h", 0, 0);
    int none[7] = {-1, -1, -1, -1, -1, -1, -1};
    compose_repeat r = {"L", 2, none, none, none};
    kt_err e;
    err_clear(&e);
    ck_assert_int_eq(compose_append(&g, &b, &r, &tm, &e), -1);
    ck_assert_str_eq(e.msg, "tensor \"L0.h\" of the repetition is also a tensor of the model");
    r.count = 0;
    ck_assert_int_eq(compose_append(&g, &b, &r, NULL, &e), -1);
    ck_assert_str_eq(e.msg, "repeat count 0 out of range 1..100000");
    arena_free(&a);
}
END_TEST

/* A model in JSON: an embedding head, N repetitions of an inline block (x -> x + x w), a GEMM
 * tail. B=4 tokens, D=8, vocabulary 16. */
static const char *MODEL =
    "{\"name\": \"m\", \"params\": {\"B\": 4, \"D\": 8, \"N\": 3},\n"
    " \"tensors\": {\n"
    "  \"tok\": {\"shape\": [\"B\"], \"dtype\": \"int64\", \"kind\": \"input\"},\n"
    "  \"emb\": {\"shape\": [16, \"D\"], \"dtype\": \"bf16\", \"kind\": \"weight\"},\n"
    "  \"h0\": {\"shape\": [\"B\", \"D\"], \"dtype\": \"bf16\"},\n"
    "  \"hN\": {\"shape\": [\"B\", \"D\"], \"dtype\": \"bf16\"},\n"
    "  \"wo\": {\"shape\": [\"D\", 16], \"dtype\": \"bf16\", \"kind\": \"weight\"},\n"
    "  \"logits\": {\"shape\": [\"B\", 16], \"dtype\": \"bf16\", \"kind\": \"output\"}},\n"
    " \"ops\": [\n"
    "  {\"name\": \"embed\", \"type\": \"embedding\", \"inputs\": [\"emb\", \"tok\"], \"outputs\": [\"h0\"]},\n"
    "  {\"repeat\": \"blk\", \"count\": \"N\", %s\n"
    "   \"graph\": {\"tensors\": {\n"
    "     \"x\": {\"shape\": [\"B\", \"D\"], \"dtype\": \"bf16\", \"kind\": \"input\"},\n"
    "     \"w\": {\"shape\": [\"D\", \"D\"], \"dtype\": \"bf16\", \"kind\": \"weight\"},\n"
    "     \"h\": {\"shape\": [\"B\", \"D\"], \"dtype\": \"bf16\"},\n"
    "     \"y\": {\"shape\": [\"B\", \"D\"], \"dtype\": \"bf16\", \"kind\": \"output\"}},\n"
    "    \"ops\": [{\"name\": \"fc\", \"type\": \"%s\", \"inputs\": [\"x\", \"w\"], \"outputs\": [\"h\"]},\n"
    "     {\"name\": \"res\", \"type\": \"add\", \"inputs\": [\"x\", \"h\"], \"outputs\": [\"y\"]}]},\n"
    "   \"inputs\": {\"x\": \"h0\"}, \"carry\": {\"x\": \"y\"}, \"outputs\": {\"y\": \"hN\"}},\n"
    "  {\"name\": \"head\", \"type\": \"matmul\", \"inputs\": [\"hN\", \"wo\"], \"outputs\": [\"logits\"]}]}";

static int load_text(const char *text, const wl_set *sets, int nsets, int training, arena *a,
                     wl_graph *g, kt_err *e)
{
    err_clear(e);
    cJSON *root = jsonx_parse(text, "t.json", e);
    ck_assert_msg(root != NULL, "test JSON does not parse: %s", e->msg);
    int rc = wl_from_json(root, "t.json", sets, nsets, training, a, g, e);
    cJSON_Delete(root);
    return rc;
}

/* MODEL with `extra` members in the repeat and the block's GEMM of type `fc`. */
static int load_model(const char *extra, const char *fc, const wl_set *sets, int nsets,
                      int training, arena *a, wl_graph *g, kt_err *e)
{
    char text[4096];
    snprintf(text, sizeof text, MODEL, extra, fc);
    return load_text(text, sets, nsets, training, a, g, e);
}

START_TEST(test_json_model)
{
    arena a = {0};
    wl_graph g;
    kt_err e;
    ck_assert_msg(load_model("", "matmul", NULL, 0, 0, &a, &g, &e) == 0, "%s: %s", e.path, e.msg);
    ck_assert_int_eq(g.nop, 1 + 3 * 2 + 1);
    ck_assert_int_eq(g.nblock, 5);
    static const char *const NAMES[] = {"head", "blk0", "blk1", "blk2", "tail"};
    for (int b = 0; b < 5; b++)
        ck_assert_str_eq(g.block[b].name, NAMES[b]);
    ck_assert_int_eq(g.op[0].block, 0);
    ck_assert_int_eq(g.op[7].block, 4);
    ck_assert_str_eq(g.op[5].name, "blk2.fc");
    /* tensor FLOPs by hand: N GEMMs 2*B*D*D and the head 2*B*D*16 */
    kt_summary s;
    ck_assert_int_eq(kt_summarize(&g, &a, &s, &e), 0);
    ck_assert_int_eq(s.flops_tensor, 3 * 2 * 4 * 8 * 8 + 2 * 4 * 8 * 16);
    /* --set N=5 on the model reaches the count */
    wl_set set = {"N", 5};
    wl_graph g5;
    ck_assert_int_eq(load_model("", "matmul", &set, 1, 0, &a, &g5, &e), 0);
    ck_assert_int_eq(g5.nop, 1 + 5 * 2 + 1);
    ck_assert_str_eq(g5.block[5].name, "blk4");
    arena_free(&a);
}
END_TEST

/* Training over the expanded graph: every GEMM input needs a gradient (h0 comes from the
 * embedding table), so the tensor FLOPs are 3x the forward's; backward ops join their forward
 * op's block. */
START_TEST(test_json_training)
{
    arena a = {0};
    wl_graph f;
    const wl_graph *g;
    kt_err e;
    ck_assert_int_eq(load_model("", "matmul", NULL, 0, 1, &a, &f, &e), 0);
    ck_assert_int_eq(kt_graph(&f, 1, OPTIM_ADAM, &a, &g, &e), 0);
    ck_assert_int_eq(g->nblock, 5);
    kt_summary s;
    ck_assert_int_eq(kt_summarize(g, &a, &s, &e), 0);
    ck_assert_int_eq(s.flops_tensor, 3 * (3 * 2 * 4 * 8 * 8 + 2 * 4 * 8 * 16));
    int bwd = 0;
    for (int i = 0; i < g->nop; i++) {
        const wl_op *o = &g->op[i];
        ck_assert_int_ge(o->block, 0);
        if (o->fwd >= 0) {
            ck_assert_int_eq(o->block, g->op[o->fwd].block);
            bwd += o->block == 2; /* blk1 */
        }
    }
    ck_assert_int_gt(bwd, 0);
    arena_free(&a);
}
END_TEST

static void expect_err(const char *extra, const char *fc, const char *path, const char *msg)
{
    arena a = {0};
    wl_graph g;
    kt_err e;
    int rc = load_model(extra, fc, NULL, 0, 0, &a, &g, &e);
    arena_free(&a);
    ck_assert_msg(rc == -1, "should fail: %s", extra);
    ck_assert_int_eq(e.code, KT_EINPUT);
    ck_assert_str_eq(e.file, "t.json");
    ck_assert_str_eq(e.path, path);
    ck_assert_str_eq(e.msg, msg);
}

START_TEST(test_json_errors)
{
    expect_err("\"cout\": 2,", "matmul", "ops[1].cout", "unknown key (did you mean \"count\"?)");
    expect_err("\"params\": {\"Q\": 1},", "matmul", "ops[1].params.Q",
               "the block declares no parameter \"Q\"");
    expect_err("", "matmal", "ops[1].graph.ops[0].type", "unknown op type \"matmal\"");
    /* a carried output of another shape than the input it feeds */
    char text[4096];
    snprintf(text, sizeof text, MODEL, "", "matmul");
    char *p = strstr(text, "\"carry\": {\"x\": \"y\"}");
    ck_assert_ptr_nonnull(p);
    memcpy(p, "\"carry\": {\"x\": \"w\"}", strlen("\"carry\": {\"x\": \"w\"}"));
    arena a = {0};
    wl_graph g;
    kt_err e;
    ck_assert_int_eq(load_text(text, NULL, 0, 0, &a, &g, &e), -1);
    ck_assert_str_eq(e.path, "ops[1].carry.x");
    ck_assert_str_eq(e.msg, "\"w\" is not an output of the block");
    /* the model's tail op moved before the repeat: its path is its own entry, not the expanded
     * graph's op index */
    snprintf(text, sizeof text,
             "{\"name\": \"m\", \"params\": {\"B\": 4, \"D\": 8},\n"
             " \"tensors\": {\"h0\": {\"shape\": [\"B\", \"D\"], \"dtype\": \"bf16\", \"kind\": \"input\"},\n"
             "  \"hN\": {\"shape\": [\"B\", \"D\"], \"dtype\": \"bf16\"},\n"
             "  \"o\": {\"shape\": [\"B\", \"D\"], \"dtype\": \"bf16\", \"kind\": \"output\"}},\n"
             " \"ops\": [{\"name\": \"t\", \"type\": \"relu\", \"inputs\": [\"hN\"], \"outputs\": [\"o\"]},\n"
             "  {\"repeat\": \"blk\", \"count\": 2, \"graph\": {\"tensors\": {\n"
             "   \"x\": {\"shape\": [\"B\", \"D\"], \"dtype\": \"bf16\", \"kind\": \"input\"},\n"
             "   \"y\": {\"shape\": [\"B\", \"D\"], \"dtype\": \"bf16\", \"kind\": \"output\"}},\n"
             "   \"ops\": [{\"name\": \"r\", \"type\": \"relu\", \"inputs\": [\"x\"], \"outputs\": [\"y\"]}]},\n"
             "  \"inputs\": {\"x\": \"h0\"}, \"carry\": {\"x\": \"y\"}, \"outputs\": {\"y\": \"hN\"}}]}");
    ck_assert_int_eq(load_text(text, NULL, 0, 0, &a, &g, &e), -1);
    ck_assert_str_eq(e.path, "ops[0].inputs[0]");
    ck_assert_str_eq(e.msg, "tensor \"hN\" is neither an input/weight nor produced by an earlier op");
    /* a binding of another shape */
    char *q = strstr(text, "\"h0\": {\"shape\": [\"B\", \"D\"]");
    ck_assert_ptr_nonnull(q);
    memcpy(q, "\"h0\": {\"shape\": [\"B\", \"B\"]", strlen("\"h0\": {\"shape\": [\"B\", \"B\"]"));
    ck_assert_int_eq(load_text(text, NULL, 0, 0, &a, &g, &e), -1);
    ck_assert_str_eq(e.path, "ops[1].inputs.x");
    ck_assert_str_eq(e.msg, "\"h0\" is [4, 4] bf16, the block's \"x\" is [4, 8] bf16");
    arena_free(&a);
}
END_TEST

/* The breakdown sums to each result's totals, under every execution model and in training. */
START_TEST(test_breakdown_sums)
{
    hw_gpu hw = kt_test_hw("a100");
    for (int training = 0; training <= 1; training++) {
        arena a = {0};
        wl_graph f;
        kt_err e;
        wl_set set = {"B", 4096};
        ck_assert_int_eq(load_model("", "matmul", &set, 1, training, &a, &f, &e), 0);
        kt_opts o;
        kt_opts_default(&o);
        o.training = training;
        kt_run_result rr;
        ck_assert_msg(kt_run(&hw, &f, &o, &a, &rr, &e) == 0, "%s", e.msg);
        kt_summary s;
        ck_assert_int_eq(kt_summarize(rr.g, &a, &s, &e), 0);
        for (int x = 0; x < rr.nres; x++) {
            const kt_result *r = &rr.res[x];
            compose_share sh[8];
            ck_assert_int_eq(rr.g->nblock, 5);
            ck_assert_int_eq(compose_breakdown(&hw, rr.g, r, &a, sh, &e), 0);
            double t = 0, en = 0, rd = 0, wr = 0;
            int64_t fl = 0;
            int ops = 0, kernels = 0;
            for (int b = 0; b < 5; b++) {
                t += sh[b].time_s;
                en += sh[b].energy_J;
                rd += sh[b].dram_read_bytes;
                wr += sh[b].dram_write_bytes;
                fl += sh[b].flops;
                ops += sh[b].ops;
                kernels += sh[b].kernels;
            }
            ck_assert_double_eq_tol(t, r->time_s, 1e-9 * r->time_s);
            ck_assert_double_eq_tol(en, r->energy_J, 1e-9 * r->energy_J);
            ck_assert_double_eq_tol(rd, (double)r->dram_read_bytes, 1e-6 * (double)r->dram_read_bytes);
            ck_assert_double_eq_tol(wr, (double)r->dram_write_bytes, 1e-6 * (double)r->dram_write_bytes);
            ck_assert_int_eq(fl, s.flops_tensor + s.flops_simt);
            ck_assert_int_eq(ops, rr.g->nop);
            ck_assert_int_le(kernels, r->kernels);
            ck_assert_int_eq(sh[2].flops, sh[3].flops); /* blk1 and blk2 do the same work */
        }
        arena_free(&a);
    }
}
END_TEST

/* A kernel across two blocks whose ops are the same op on the same shapes: by hand, each block
 * takes half of its time, energy and bytes; a kernel of views only splits by op count. */
START_TEST(test_breakdown_split)
{
    hw_gpu hw = kt_test_hw("a100");
    arena a = {0};
    wl_graph g;
    wl_init(&g, "m", &a);
    kt_err e;
    err_clear(&e);
    int x = tensor(&g, "x", 1024, 1024, TK_INPUT), y = tensor(&g, "y", 1024, 1024, TK_INTER);
    int z = tensor(&g, "z", 1024, 1024, TK_OUTPUT), v = tensor(&g, "v", 1024, 1024, TK_INTER);
    int v2 = tensor(&g, "v2", 1024, 1024, TK_OUTPUT);
    ck_assert_int_ge(wl_add_op(&g, "a", OP_RELU, &x, 1, &y, 1, NULL, 0, &e), 0);
    ck_assert_int_ge(wl_add_op(&g, "b", OP_RELU, &y, 1, &z, 1, NULL, 0, &e), 0);
    ck_assert_int_ge(wl_add_op(&g, "c", OP_VIEW, &x, 1, &v, 1, NULL, 0, &e), 0);
    ck_assert_int_ge(wl_add_op(&g, "d", OP_VIEW, &x, 1, &v2, 1, NULL, 0, &e), 0);
    int b0 = compose_block(&g, "p0", "p", 0, &e), b1 = compose_block(&g, "p1", "p", 1, &e);
    g.op[0].block = g.op[2].block = b0;
    g.op[1].block = g.op[3].block = b1;
    ck_assert_int_eq(graph_check(&g, "m", &e), 0);
    int ops01[2] = {0, 1}, ops23[2] = {2, 3};
    kt_item it[2];
    memset(it, 0, sizeof it);
    it[0].nops = 2;
    it[0].ops = ops01;
    it[0].c.time_s = 10e-6;
    it[0].c.bound = BOUND_DRAM;
    it[0].c.dram_read_bytes = 1000;
    it[0].c.dram_write_bytes = 3000;
    it[0].energy_J = 1.0;
    it[1].nops = 2;
    it[1].ops = ops23;
    it[1].c.time_s = 2e-6;
    it[1].c.bound = BOUND_NONE;
    kt_result r;
    memset(&r, 0, sizeof r);
    r.items = it;
    r.nitems = 2;
    compose_share sh[2];
    ck_assert_int_eq(compose_breakdown(&hw, &g, &r, &a, sh, &e), 0);
    for (int b = 0; b < 2; b++) {
        ck_assert_int_eq(sh[b].ops, 2);
        ck_assert_int_eq(sh[b].kernels, 0);
        ck_assert_int_eq(sh[b].shared, 1); /* the views launch no kernel */
        ck_assert_double_eq_tol(sh[b].time_s, 5e-6 + 1e-6, 1e-15);
        ck_assert_double_eq_tol(sh[b].energy_J, 0.5, 1e-12);
        ck_assert_double_eq_tol(sh[b].dram_read_bytes, 500, 1e-9);
        ck_assert_double_eq_tol(sh[b].dram_write_bytes, 1500, 1e-9);
        ck_assert_int_eq(sh[b].flops, 1024 * 1024); /* relu: one SIMT FLOP per element */
    }
    arena_free(&a);
}
END_TEST

static Suite *compose_suite(void)
{
    Suite *s = suite_create("compose");
    TCase *tc = tcase_create("compose_append");
    tcase_add_test(tc, test_append);
    tcase_add_test(tc, test_append_duplicate);
    suite_add_tcase(s, tc);
    tc = tcase_create("json");
    tcase_add_test(tc, test_json_model);
    tcase_add_test(tc, test_json_training);
    tcase_add_test(tc, test_json_errors);
    suite_add_tcase(s, tc);
    tc = tcase_create("compose_breakdown");
    tcase_add_test(tc, test_breakdown_sums);
    tcase_add_test(tc, test_breakdown_split);
    suite_add_tcase(s, tc);
    return s;
}

KT_TEST_MAIN(compose_suite)
