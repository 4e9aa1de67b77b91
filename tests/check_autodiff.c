/* check_autodiff: training graphs derived from small hand-written forward graphs. Expected
 * values are closed forms (2*M*N*K per GEMM) and hand-derived op lists. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "../src/model/autodiff.h"
#include "../src/model/op.h"
#include "../src/model/run.h"
#include "ktest.h"

/* Load a forward graph from a JSON string and derive its training graph. */
static int derive(const char *json, int optimizer, arena *a, wl_graph *fwd, wl_graph *tg, kt_err *e)
{
    cJSON *root = cJSON_Parse(json);
    ck_assert_ptr_nonnull(root);
    int rc = wl_from_json(root, "test.json", NULL, 0, 1, a, fwd, e);
    cJSON_Delete(root);
    ck_assert_msg(rc == 0, "forward: %s: %s", e->path, e->msg);
    return ad_training_graph(fwd, optimizer, a, tg, e);
}

static int find_op(const wl_graph *g, const char *name)
{
    for (int i = 0; i < g->nop; i++)
        if (!strcmp(g->op[i].name, name))
            return i;
    return -1;
}

static int64_t op_flops_tensor(const wl_graph *g, int i)
{
    op_work w;
    char msg[128];
    ck_assert_int_eq(op_work_of(g, &g->op[i], &w, msg, sizeof msg), 0);
    return w.flops_tensor;
}

/* Tensor FLOPs of the ops of one phase (fwd_op >= 0: only those derived from that op). */
static int64_t phase_flops(const wl_graph *g, wl_phase ph, int fwd_op)
{
    int64_t s = 0;
    for (int i = 0; i < g->nop; i++)
        if (g->op[i].phase == ph && (fwd_op < 0 || g->op[i].fwd == fwd_op))
            s += op_flops_tensor(g, i);
    return s;
}

static int count_type(const wl_graph *g, int type, wl_phase ph)
{
    int n = 0;
    for (int i = 0; i < g->nop; i++)
        n += g->op[i].type == type && g->op[i].phase == ph;
    return n;
}

/* The single graph-output gradient of tensor t (-1 if none, fails if several). */
static int final_grad(const wl_graph *g, int t)
{
    int r = -1;
    for (int i = 0; i < g->ntensor; i++)
        if (g->t[i].grad_of == t && g->t[i].kind == TK_OUTPUT) {
            ck_assert_int_eq(r, -1);
            r = i;
        }
    return r;
}

static void assert_same_shape(const wl_tensor *a, const wl_tensor *b)
{
    ck_assert_int_eq(a->ndim, b->ndim);
    for (int i = 0; i < a->ndim; i++)
        ck_assert_int_eq(a->dim[i], b->dim[i]);
}

/* Every gradient tensor has its tensor's shape; every float weight one final gradient. */
static void assert_grads_consistent(const wl_graph *g)
{
    for (int i = 0; i < g->ntensor; i++)
        if (g->t[i].grad_of >= 0)
            assert_same_shape(&g->t[i], &g->t[g->t[i].grad_of]);
}

/* Two layers: x (input) -> linear w1 -> h -> linear w2 -> y. M=64, K=32, H=48, N=16. */
static const char *const MLP2 =
    "{\"name\":\"mlp2\",\"params\":{\"M\":64,\"K\":32,\"H\":48,\"N\":16},"
    "\"tensors\":{"
    "\"x\":{\"shape\":[\"M\",\"K\"],\"dtype\":\"bf16\",\"kind\":\"input\"},"
    "\"w1\":{\"shape\":[\"K\",\"H\"],\"dtype\":\"bf16\",\"kind\":\"weight\"},"
    "\"b1\":{\"shape\":[\"H\"],\"dtype\":\"bf16\",\"kind\":\"weight\"},"
    "\"h\":{\"shape\":[\"M\",\"H\"],\"dtype\":\"bf16\"},"
    "\"a\":{\"shape\":[\"M\",\"H\"],\"dtype\":\"bf16\"},"
    "\"w2\":{\"shape\":[\"N\",\"H\"],\"dtype\":\"bf16\",\"kind\":\"weight\"},"
    "\"y\":{\"shape\":[\"M\",\"N\"],\"dtype\":\"bf16\",\"kind\":\"output\"}},"
    "\"ops\":["
    "{\"name\":\"fc1\",\"type\":\"linear\",\"inputs\":[\"x\",\"w1\",\"b1\"],\"outputs\":[\"h\"]},"
    "{\"name\":\"act\",\"type\":\"relu\",\"inputs\":[\"h\"],\"outputs\":[\"a\"]},"
    "{\"name\":\"fc2\",\"type\":\"linear\",\"inputs\":[\"a\",\"w2\"],\"outputs\":[\"y\"],"
    "\"attrs\":{\"transpose_b\":true}}]}";

START_TEST(test_linear_backward_is_twice_forward)
{
    arena a = {0};
    wl_graph f, g;
    kt_err e;
    err_clear(&e);
    ck_assert_int_eq(derive(MLP2, OPTIM_NONE, &a, &f, &g, &e), 0);
    const int64_t M = 64, K = 32, H = 48, N = 16;
    /* fc2 = op 2: its input a needs a gradient -> dx and dW, each 2*M*H*N */
    ck_assert_int_eq(phase_flops(&g, PH_FWD, -1), 2 * M * K * H + 2 * M * H * N);
    ck_assert_int_eq(phase_flops(&g, PH_BWD, 2), 2 * (2 * M * H * N));
    ck_assert_int_eq(phase_flops(&g, PH_BWD, 2), 2 * op_flops_tensor(&g, 2));
    /* fc1's input x is a graph input: only dW (no dx GEMM) */
    ck_assert_int_eq(phase_flops(&g, PH_BWD, 0), 2 * M * K * H);
    ck_assert_int_lt(find_op(&g, "fc1.grad_x"), 0);
    ck_assert_int_ge(find_op(&g, "fc1.grad_w"), 0);
    ck_assert_int_ge(find_op(&g, "fc1.grad_b"), 0);
    ck_assert_int_lt(find_op(&g, "fc2.grad_b"), 0);
    /* ops: fill, fc2 dx+dW, relu, fc1 dW+db */
    ck_assert_int_eq(g.nop, 3 + 1 + 2 + 1 + 2);
    ck_assert_int_eq(g.op[find_op(&g, "y.grad_ones")].type, OP_FILL);
    /* dW of a [N,H] (PyTorch layout) weight: dy^T a = [N, M] x [M, H] */
    int gw = final_grad(&g, wl_find_tensor(&g, "w2"));
    ck_assert_int_ge(gw, 0);
    ck_assert_int_eq(g.t[gw].dim[0], N);
    ck_assert_int_eq(g.t[gw].dim[1], H);
    ck_assert_int_ge(final_grad(&g, wl_find_tensor(&g, "w1")), 0);
    ck_assert_int_ge(final_grad(&g, wl_find_tensor(&g, "b1")), 0);
    assert_grads_consistent(&g);
    arena_free(&a);
}
END_TEST

START_TEST(test_phases_and_saved)
{
    arena a = {0};
    wl_graph f, g;
    kt_err e;
    err_clear(&e);
    ck_assert_int_eq(derive(MLP2, OPTIM_NONE, &a, &f, &g, &e), 0);
    for (int i = 0; i < g.nop; i++) {
        const wl_op *o = &g.op[i];
        if (i < f.nop) {
            ck_assert_int_eq(o->phase, PH_FWD);
            ck_assert_int_eq(o->fwd, -1);
            continue;
        }
        ck_assert_int_eq(o->phase, PH_BWD);
        ck_assert_int_ge(o->fwd, 0);
        ck_assert_int_lt(o->fwd, f.nop);
    }
    ck_assert_int_eq(g.op[find_op(&g, "fc2.grad_w")].fwd, 2);
    ck_assert_int_eq(g.op[find_op(&g, "act.grad_x")].fwd, 1);
    /* relu backward reads its output a; fc2's dW reads a; fc1's dW reads the input x (not an
     * activation); h is read by nobody in the backward (relu saves its output) */
    ck_assert_int_eq(g.t[wl_find_tensor(&g, "a")].saved, 1);
    ck_assert_int_eq(g.t[wl_find_tensor(&g, "h")].saved, 0);
    ck_assert_int_eq(g.t[wl_find_tensor(&g, "x")].saved, 0);
    ck_assert_int_eq(g.t[wl_find_tensor(&g, "w2")].saved, 0);
    /* the derivation does not touch the forward graph */
    ck_assert_int_eq(f.t[wl_find_tensor(&f, "a")].saved, 0);
    arena_free(&a);
}
END_TEST

START_TEST(test_optimizers)
{
    arena a = {0};
    wl_graph f, g;
    kt_err e;
    err_clear(&e);
    ck_assert_int_eq(derive(MLP2, OPTIM_SGD, &a, &f, &g, &e), 0);
    ck_assert_int_eq(count_type(&g, OP_SUB, PH_OPT), 3); /* w1, b1, w2 */
    int s = find_op(&g, "w2.sgd");
    ck_assert_int_ge(s, 0);
    ck_assert_int_eq(g.op[s].in[0], wl_find_tensor(&g, "w2"));
    ck_assert_int_eq(g.op[s].in[1], final_grad(&g, wl_find_tensor(&g, "w2")));
    ck_assert_int_eq(g.t[g.op[s].out[0]].kind, TK_OUTPUT);
    arena_free(&a);

    ck_assert_int_eq(derive(MLP2, OPTIM_ADAM, &a, &f, &g, &e), 0);
    ck_assert_int_eq(count_type(&g, OP_ADAM, PH_OPT), 3);
    int ad = find_op(&g, "w1.adam");
    ck_assert_int_ge(ad, 0);
    const wl_op *o = &g.op[ad];
    ck_assert_int_eq(o->nin, 4);
    ck_assert_int_eq(o->nout, 3);
    for (int i = 2; i < 4; i++) {
        ck_assert_int_eq(g.t[o->in[i]].kind, TK_WEIGHT);
        ck_assert_int_eq(g.t[o->in[i]].dt, DT_FP32);
        assert_same_shape(&g.t[o->in[i]], &g.t[o->in[0]]);
    }
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(g.t[o->out[i]].kind, TK_OUTPUT);
    ck_assert_int_eq(g.t[o->out[0]].dt, DT_BF16);
    /* adam_update streams p, g (bf16) and m, v (fp32) in, p', m', v' out: 2+2+4+4 in, 2+4+4 out */
    op_work w;
    char msg[128];
    ck_assert_int_eq(op_work_of(&g, o, &w, msg, sizeof msg), 0);
    const int64_t P = 32 * 48;
    ck_assert_int_eq(w.in_bytes[0] + w.in_bytes[1] + w.in_bytes[2] + w.in_bytes[3], P * 12);
    ck_assert_int_eq(w.out_bytes, P * 10);
    arena_free(&a);
}
END_TEST

/* matmul with every transpose combination and broadcast batch dims. */
START_TEST(test_matmul_transposes)
{
    static const char *const SHAPES[4][2] = {
        {"[3,\"M\",\"K\"]", "[3,\"K\",\"N\"]"}, /* ta=0 tb=0 */
        {"[3,\"K\",\"M\"]", "[3,\"K\",\"N\"]"}, /* ta=1 */
        {"[3,\"M\",\"K\"]", "[3,\"N\",\"K\"]"}, /* tb=1 */
        {"[3,\"K\",\"M\"]", "[3,\"N\",\"K\"]"}, /* both */
    };
    for (int v = 0; v < 4; v++) {
        char json[2048];
        snprintf(json, sizeof json,
                 "{\"name\":\"mm\",\"params\":{\"M\":8,\"K\":16,\"N\":24},\"tensors\":{"
                 "\"a\":{\"shape\":%s,\"dtype\":\"bf16\",\"kind\":\"weight\"},"
                 "\"b\":{\"shape\":%s,\"dtype\":\"bf16\",\"kind\":\"weight\"},"
                 "\"c\":{\"shape\":[3,\"M\",\"N\"],\"dtype\":\"bf16\",\"kind\":\"output\"}},"
                 "\"ops\":[{\"name\":\"mm\",\"type\":\"matmul\",\"inputs\":[\"a\",\"b\"],"
                 "\"outputs\":[\"c\"],\"attrs\":{\"transpose_a\":%d,\"transpose_b\":%d}}]}",
                 SHAPES[v][0], SHAPES[v][1], v & 1, v >> 1);
        arena a = {0};
        wl_graph f, g;
        kt_err e;
        err_clear(&e);
        ck_assert_msg(derive(json, OPTIM_NONE, &a, &f, &g, &e) == 0, "%s", e.msg);
        ck_assert_int_eq(phase_flops(&g, PH_BWD, 0), 2 * (2 * 3 * 8 * 16 * 24));
        for (int t = 0; t < 2; t++) {
            int gt = final_grad(&g, t);
            ck_assert_int_ge(gt, 0);
            assert_same_shape(&g.t[gt], &g.t[t]);
        }
        /* tb: PyTorch returns the gradient of b as the transpose of the [K, N] GEMM, a free view
         * (TransposeBackward), one more op */
        ck_assert_int_eq(g.nop, 1 + 1 + 2 + (v >> 1));
        if (v >> 1) {
            int gb = final_grad(&g, 1), p = g.t[gb].producer;
            ck_assert_int_eq(g.op[p].type, OP_TRANSPOSE);
            ck_assert_int_eq(wl_attr_int(&g.op[p], "copy", 1), 0);
        }
        arena_free(&a);
    }
}
END_TEST

/* A 2-D weight times a batched activation: dW is a batched GEMM summed over the batch. */
START_TEST(test_matmul_broadcast_batch)
{
    const char *json =
        "{\"name\":\"bmm\",\"tensors\":{"
        "\"x\":{\"shape\":[5,7,16],\"dtype\":\"bf16\",\"kind\":\"input\"},"
        "\"s\":{\"shape\":[1],\"dtype\":\"bf16\",\"kind\":\"weight\"},"
        "\"xs\":{\"shape\":[5,7,16],\"dtype\":\"bf16\"},"
        "\"w\":{\"shape\":[4,7],\"dtype\":\"bf16\",\"kind\":\"weight\"},"
        "\"y\":{\"shape\":[5,4,16],\"dtype\":\"bf16\",\"kind\":\"output\"}},"
        "\"ops\":[{\"name\":\"sc\",\"type\":\"mul\",\"inputs\":[\"x\",\"s\"],\"outputs\":[\"xs\"]},"
        "{\"name\":\"mm\",\"type\":\"matmul\",\"inputs\":[\"w\",\"xs\"],\"outputs\":[\"y\"]}]}";
    arena a = {0};
    wl_graph f, g;
    kt_err e;
    err_clear(&e);
    ck_assert_msg(derive(json, OPTIM_NONE, &a, &f, &g, &e) == 0, "%s", e.msg);
    /* dW = dY [5,4,16] x xs^T [5,16,7] -> [5,4,7], reduce over axis 0 -> [4,7] */
    int r = find_op(&g, "mm.grad_a.sum");
    ck_assert_int_ge(r, 0);
    ck_assert_int_eq(g.op[r].type, OP_REDUCE);
    int gw = final_grad(&g, wl_find_tensor(&g, "w"));
    ck_assert_int_eq(g.op[r].out[0], gw);
    ck_assert_int_eq(op_flops_tensor(&g, find_op(&g, "mm.grad_a")), 2 * 5 * 4 * 16 * 7);
    /* s [1] broadcast over [5,7,16]: mul(dy, x) then a keepdim reduce over axes 0,1 (leading)
     * and 2 (size 1) and a free view back to [1] */
    int gs = final_grad(&g, wl_find_tensor(&g, "s"));
    ck_assert_int_ge(gs, 0);
    ck_assert_int_eq(g.t[gs].ndim, 1);
    ck_assert_int_eq(g.op[g.t[gs].producer].type, OP_VIEW);
    assert_grads_consistent(&g);
    arena_free(&a);
}
END_TEST

/* h consumed by three ops: contributions summed by two adds, in reverse consumer order. */
START_TEST(test_accumulation)
{
    const char *json =
        "{\"name\":\"acc\",\"tensors\":{"
        "\"x\":{\"shape\":[4,8],\"dtype\":\"bf16\",\"kind\":\"input\"},"
        "\"w\":{\"shape\":[8,8],\"dtype\":\"bf16\",\"kind\":\"weight\"},"
        "\"bias\":{\"shape\":[8],\"dtype\":\"bf16\",\"kind\":\"weight\"},"
        "\"h\":{\"shape\":[4,8],\"dtype\":\"bf16\"},"
        "\"p\":{\"shape\":[4,8],\"dtype\":\"bf16\"},"
        "\"q\":{\"shape\":[4,8],\"dtype\":\"bf16\"},"
        "\"r\":{\"shape\":[4,8],\"dtype\":\"bf16\"},"
        "\"s\":{\"shape\":[4,8],\"dtype\":\"bf16\"},"
        "\"y\":{\"shape\":[4,8],\"dtype\":\"bf16\",\"kind\":\"output\"}},"
        "\"ops\":[{\"name\":\"fc\",\"type\":\"linear\",\"inputs\":[\"x\",\"w\"],\"outputs\":[\"h\"]},"
        "{\"name\":\"e1\",\"type\":\"tanh\",\"inputs\":[\"h\"],\"outputs\":[\"p\"]},"
        "{\"name\":\"e2\",\"type\":\"sub\",\"inputs\":[\"p\",\"h\"],\"outputs\":[\"q\"]},"
        "{\"name\":\"e3\",\"type\":\"add\",\"inputs\":[\"h\",\"bias\"],\"outputs\":[\"r\"]},"
        "{\"name\":\"e4\",\"type\":\"mul\",\"inputs\":[\"q\",\"r\"],\"outputs\":[\"s\"]},"
        "{\"name\":\"e5\",\"type\":\"gelu\",\"inputs\":[\"s\"],\"outputs\":[\"y\"]}]}";
    arena a = {0};
    wl_graph f, g;
    kt_err e;
    err_clear(&e);
    ck_assert_msg(derive(json, OPTIM_NONE, &a, &f, &g, &e) == 0, "%s", e.msg);
    int h = wl_find_tensor(&g, "h");
    int a1 = find_op(&g, "h.grad_acc1"), a2 = find_op(&g, "h.grad_acc2");
    ck_assert_int_ge(a1, 0);
    ck_assert_int_ge(a2, 0);
    ck_assert_int_lt(find_op(&g, "h.grad_acc3"), 0);
    /* consumers in reverse: e3 (pass-through of r's grad), e2 (neg), e1 (tanh backward) */
    int neg = find_op(&g, "e2.grad_b"), th = find_op(&g, "e1.grad_x");
    ck_assert_int_eq(g.op[neg].type, OP_NEG);
    ck_assert_int_eq(g.op[a1].in[0], g.op[find_op(&g, "e4.grad_b")].out[0]);
    ck_assert_int_eq(g.op[a1].in[1], g.op[neg].out[0]);
    ck_assert_int_eq(g.op[a2].in[0], g.op[a1].out[0]);
    ck_assert_int_eq(g.op[a2].in[1], g.op[th].out[0]);
    /* fc's dW reads the accumulated gradient; tanh's backward reads its output p */
    ck_assert_int_eq(g.op[find_op(&g, "fc.grad_w")].in[1], g.op[a2].out[0]);
    ck_assert_int_eq(g.op[th].in[1], wl_find_tensor(&g, "p"));
    ck_assert_str_eq(wl_attr_str(&g.op[th], "op", ""), "tanh");
    /* gelu's backward reads its input s; mul saves both operands */
    ck_assert_int_eq(g.op[find_op(&g, "e5.grad_x")].in[1], wl_find_tensor(&g, "s"));
    ck_assert_int_eq(g.t[wl_find_tensor(&g, "q")].saved, 1);
    ck_assert_int_eq(g.t[wl_find_tensor(&g, "r")].saved, 1);
    /* bias [8] broadcast over [4,8]: reduce over axis 0 */
    int gb = final_grad(&g, wl_find_tensor(&g, "bias"));
    ck_assert_int_eq(g.op[g.t[gb].producer].type, OP_REDUCE);
    ck_assert_int_eq(g.t[gb].grad_of, wl_find_tensor(&g, "bias"));
    (void)h;
    assert_grads_consistent(&g);
    arena_free(&a);
}
END_TEST

/* Index, shape and fused ops: embedding, index_select, scatter_add, concat, slice, transpose,
 * view, softmax, layernorm, rmsnorm, attention, rope, reduce. */
START_TEST(test_structured_ops)
{
    const char *json =
        "{\"name\":\"mix\",\"params\":{\"R\":100,\"D\":16,\"I\":12,\"S\":6},\"tensors\":{"
        "\"tab\":{\"shape\":[\"R\",\"D\"],\"dtype\":\"bf16\",\"kind\":\"weight\"},"
        "\"idx\":{\"shape\":[3,4],\"dtype\":\"int64\",\"kind\":\"input\"},"
        "\"sel\":{\"shape\":[\"I\"],\"dtype\":\"int64\",\"kind\":\"input\"},"
        "\"cos\":{\"shape\":[\"S\",\"D\"],\"dtype\":\"bf16\",\"kind\":\"input\"},"
        "\"g\":{\"shape\":[\"D\"],\"dtype\":\"bf16\",\"kind\":\"weight\"},"
        "\"bt\":{\"shape\":[\"D\"],\"dtype\":\"bf16\",\"kind\":\"weight\"},"
        "\"emb\":{\"shape\":[3,4,\"D\"],\"dtype\":\"bf16\"},"
        "\"e2\":{\"shape\":[\"I\",\"D\"],\"dtype\":\"bf16\"},"
        "\"gx\":{\"shape\":[\"I\",\"D\"],\"dtype\":\"bf16\"},"
        "\"agg\":{\"shape\":[\"I\",\"D\"],\"dtype\":\"bf16\"},"
        "\"cat\":{\"shape\":[\"I\",\"3*D\"],\"dtype\":\"bf16\"},"
        "\"sl\":{\"shape\":[\"I\",\"D\"],\"dtype\":\"bf16\"},"
        "\"ln\":{\"shape\":[\"I\",\"D\"],\"dtype\":\"bf16\"},"
        "\"rn\":{\"shape\":[\"I\",\"D\"],\"dtype\":\"bf16\"},"
        "\"sm\":{\"shape\":[\"I\",\"D\"],\"dtype\":\"bf16\"},"
        "\"q\":{\"shape\":[1,2,\"S\",\"D\"],\"dtype\":\"bf16\"},"
        "\"qr\":{\"shape\":[1,2,\"S\",\"D\"],\"dtype\":\"bf16\"},"
        "\"o\":{\"shape\":[1,2,\"S\",\"D\"],\"dtype\":\"bf16\"},"
        "\"ot\":{\"shape\":[1,\"S\",2,\"D\"],\"dtype\":\"bf16\"},"
        "\"red\":{\"shape\":[1,2],\"dtype\":\"bf16\",\"kind\":\"output\"}},"
        "\"ops\":["
        "{\"name\":\"lookup\",\"type\":\"embedding\",\"inputs\":[\"tab\",\"idx\"],\"outputs\":[\"emb\"]},"
        "{\"name\":\"flat\",\"type\":\"view\",\"inputs\":[\"emb\"],\"outputs\":[\"e2\"]},"
        "{\"name\":\"gat\",\"type\":\"index_select\",\"inputs\":[\"e2\",\"sel\"],\"outputs\":[\"gx\"]},"
        "{\"name\":\"sca\",\"type\":\"scatter_add\",\"inputs\":[\"gx\",\"sel\"],\"outputs\":[\"agg\"]},"
        "{\"name\":\"cc\",\"type\":\"concat\",\"inputs\":[\"e2\",\"gx\",\"agg\"],\"outputs\":[\"cat\"],"
        "\"attrs\":{\"axis\":1}},"
        "{\"name\":\"sli\",\"type\":\"slice\",\"inputs\":[\"cat\"],\"outputs\":[\"sl\"],"
        "\"attrs\":{\"axis\":1,\"start\":\"D\",\"end\":\"2*D\"}},"
        "{\"name\":\"lnorm\",\"type\":\"layernorm\",\"inputs\":[\"sl\",\"g\",\"bt\"],\"outputs\":[\"ln\"]},"
        "{\"name\":\"rnorm\",\"type\":\"rmsnorm\",\"inputs\":[\"ln\"],\"outputs\":[\"rn\"]},"
        "{\"name\":\"smax\",\"type\":\"softmax\",\"inputs\":[\"rn\"],\"outputs\":[\"sm\"]},"
        "{\"name\":\"v4\",\"type\":\"view\",\"inputs\":[\"sm\"],\"outputs\":[\"q\"]},"
        "{\"name\":\"rot\",\"type\":\"rope\",\"inputs\":[\"q\",\"cos\"],\"outputs\":[\"qr\"]},"
        "{\"name\":\"att\",\"type\":\"attention\",\"inputs\":[\"qr\",\"q\",\"q\"],\"outputs\":[\"o\"],"
        "\"attrs\":{\"causal\":true}},"
        "{\"name\":\"tr\",\"type\":\"transpose\",\"inputs\":[\"o\"],\"outputs\":[\"ot\"],"
        "\"attrs\":{\"perm\":[0,2,1,3]}},"
        "{\"name\":\"rd\",\"type\":\"reduce\",\"inputs\":[\"ot\"],\"outputs\":[\"red\"],"
        "\"attrs\":{\"op\":\"sum\",\"axes\":[1,3]}}]}";
    arena a = {0};
    wl_graph f, g;
    kt_err e;
    err_clear(&e);
    ck_assert_msg(derive(json, OPTIM_NONE, &a, &f, &g, &e) == 0, "%s: %s", e.path, e.msg);
    assert_grads_consistent(&g);
    /* reduce -> expand of a keepdim view */
    int ex = find_op(&g, "rd.grad_x");
    ck_assert_int_eq(g.op[ex].type, OP_EXPAND);
    ck_assert_int_eq(g.op[find_op(&g, "rd.grad_x.keepdim")].type, OP_VIEW);
    /* transpose -> transpose with the inverse permutation (0,2,1,3 is its own inverse) */
    ck_assert_int_eq(g.op[find_op(&g, "tr.grad_x")].type, OP_TRANSPOSE);
    /* attention -> one attention_backward reading dO, q, k, v, O; q used 3 times -> 2 adds
     * plus the rope path (another add) */
    int ab = find_op(&g, "att.grad");
    ck_assert_int_eq(g.op[ab].type, OP_ATTN_BWD);
    ck_assert_int_eq(g.op[ab].nin, 5);
    ck_assert_int_eq(g.op[ab].nout, 3);
    ck_assert_int_eq(g.op[ab].in[4], wl_find_tensor(&g, "o"));
    ck_assert_int_eq(wl_attr_int(&g.op[ab], "causal", 0), 1);
    ck_assert_int_ge(find_op(&g, "q.grad_acc2"), 0);
    ck_assert_int_eq(g.op[find_op(&g, "rot.grad_x")].type, OP_ROPE);
    /* attention backward FLOPs: 5 GEMMs of the 2 in the forward (FlashAttention-2) */
    ck_assert_int_eq(op_flops_tensor(&g, ab) * 2, op_flops_tensor(&g, find_op(&g, "att")) * 5);
    ck_assert_int_eq(g.op[find_op(&g, "smax.grad_x")].type, OP_SOFTMAX_BWD);
    /* norms: layernorm -> dx, dgamma, dbeta; rmsnorm without weight -> dx only */
    int lb = find_op(&g, "lnorm.grad");
    ck_assert_int_eq(g.op[lb].type, OP_NORM_BWD);
    ck_assert_int_eq(g.op[lb].nout, 3);
    ck_assert_int_eq(g.op[lb].out[1], final_grad(&g, wl_find_tensor(&g, "g")));
    ck_assert_int_eq(g.op[lb].out[2], final_grad(&g, wl_find_tensor(&g, "bt")));
    ck_assert_int_eq(g.op[find_op(&g, "rnorm.grad")].nout, 1);
    /* slice [D, 2D) of 3D -> concat(zeros D, grad, zeros D) */
    int sc = find_op(&g, "sli.grad_x");
    ck_assert_int_eq(g.op[sc].type, OP_CONCAT);
    ck_assert_int_eq(g.op[sc].nin, 3);
    ck_assert_int_eq(g.op[find_op(&g, "sli.grad_x.pad_lo")].type, OP_FILL);
    ck_assert_int_eq(g.op[find_op(&g, "sli.grad_x.pad_hi")].type, OP_FILL);
    /* concat -> one slice per input */
    for (int i = 0; i < 3; i++) {
        char nm[32];
        snprintf(nm, sizeof nm, "cc.grad_in%d", i);
        int s = find_op(&g, nm);
        ck_assert_int_eq(g.op[s].type, OP_SLICE);
        ck_assert_int_eq(wl_attr_int(&g.op[s], "start", -1), i * 16);
        ck_assert_int_eq(wl_attr_int(&g.op[s], "copy", 1), 0); /* a strided view (narrow) */
        ck_assert(op_is_free(&g, &g.op[s]));
    }
    /* scatter_add -> gather; index_select -> index_add; embedding -> embedding_backward into
     * [R, D] */
    ck_assert_int_eq(g.op[find_op(&g, "sca.grad_x")].type, OP_GATHER);
    ck_assert_int_eq(g.op[find_op(&g, "gat.grad_x")].type, OP_INDEX_ADD);
    int eb = find_op(&g, "lookup.grad_w");
    ck_assert_int_eq(g.op[eb].type, OP_EMBEDDING_BWD);
    int gt = final_grad(&g, wl_find_tensor(&g, "tab"));
    ck_assert_int_eq(g.op[eb].out[0], gt);
    ck_assert_int_eq(g.t[gt].dim[0], 100);
    ck_assert_int_eq(g.t[gt].dim[1], 16);
    ck_assert_int_eq(g.t[g.op[eb].in[1]].ndim, 1);
    ck_assert_int_eq(g.t[g.op[eb].in[1]].dim[0], 12);
    /* view -> view back */
    ck_assert_int_eq(g.op[find_op(&g, "flat.grad_x")].type, OP_VIEW);
    arena_free(&a);
}
END_TEST

/* Tensors that do not depend on a weight get no gradient; unsupported rules are errors. */
START_TEST(test_no_grad_paths_and_errors)
{
    const char *json =
        "{\"name\":\"ng\",\"tensors\":{"
        "\"x\":{\"shape\":[4,8],\"dtype\":\"bf16\",\"kind\":\"input\"},"
        "\"w\":{\"shape\":[8,8],\"dtype\":\"bf16\",\"kind\":\"weight\"},"
        "\"u\":{\"shape\":[8,8],\"dtype\":\"bf16\",\"kind\":\"weight\"},"
        "\"p\":{\"shape\":[4,8],\"dtype\":\"bf16\",\"kind\":\"output\"},"
        "\"h\":{\"shape\":[4,8],\"dtype\":\"bf16\"},"
        "\"y\":{\"shape\":[4,8],\"dtype\":\"bf16\",\"kind\":\"output\"},"
        "\"dead\":{\"shape\":[4,8],\"dtype\":\"bf16\"}},"
        "\"ops\":[{\"name\":\"px\",\"type\":\"relu\",\"inputs\":[\"x\"],\"outputs\":[\"p\"]},"
        "{\"name\":\"fc\",\"type\":\"linear\",\"inputs\":[\"x\",\"w\"],\"outputs\":[\"h\"]},"
        "{\"name\":\"deadfc\",\"type\":\"linear\",\"inputs\":[\"x\",\"u\"],\"outputs\":[\"dead\"]},"
        "{\"name\":\"act\",\"type\":\"silu\",\"inputs\":[\"h\"],\"outputs\":[\"y\"]}]}";
    arena a = {0};
    wl_graph f, g;
    kt_err e;
    err_clear(&e);
    ck_assert_msg(derive(json, OPTIM_SGD, &a, &f, &g, &e) == 0, "%s", e.msg);
    ck_assert_int_lt(find_op(&g, "p.grad_ones"), 0);  /* p depends on no weight */
    ck_assert_int_ge(find_op(&g, "y.grad_ones"), 0);
    ck_assert_int_lt(find_op(&g, "deadfc.grad_w"), 0); /* dead does not reach an output */
    ck_assert_int_lt(final_grad(&g, wl_find_tensor(&g, "u")), 0);
    ck_assert_int_lt(find_op(&g, "u.sgd"), 0);
    ck_assert_int_ge(find_op(&g, "w.sgd"), 0);
    ck_assert_int_eq(g.nop, 4 + 3 + 1); /* fill, silu bwd, dW; one sgd */
    arena_free(&a);

    const char *bad =
        "{\"name\":\"bad\",\"tensors\":{"
        "\"x\":{\"shape\":[2,4],\"dtype\":\"bf16\",\"kind\":\"input\"},"
        "\"c\":{\"shape\":[2,4],\"dtype\":\"bf16\",\"kind\":\"weight\"},"
        "\"y\":{\"shape\":[2,4],\"dtype\":\"bf16\",\"kind\":\"output\"}},"
        "\"ops\":[{\"name\":\"r\",\"type\":\"rope\",\"inputs\":[\"x\",\"c\"],\"outputs\":[\"y\"]}]}";
    err_clear(&e);
    ck_assert_int_eq(derive(bad, OPTIM_NONE, &a, &f, &g, &e), -1);
    ck_assert_str_eq(e.path, "ops[0]");
    ck_assert_str_eq(e.msg, "training: no gradient rule for cos/sin of \"rope\"");
    arena_free(&a);
}
END_TEST

/* embedding with sparse_grad 1 (nn.Embedding(sparse=True)): a contiguous dy is the table's
 * gradient itself through free views - the [I, D] values - no kernel before the optimizer; SGD
 * adds them into the table in place (index_add of the I lookups). A table the sparse lookup
 * shares with another reader has no rule (PyTorch would sum a sparse and a dense gradient). */
START_TEST(test_sparse_embedding_grad)
{
    const char *json =
        "{\"name\":\"se\",\"tensors\":{"
        "\"tab\":{\"shape\":[1000,16],\"dtype\":\"bf16\",\"kind\":\"weight\"},"
        "\"idx\":{\"shape\":[8,4],\"dtype\":\"int64\",\"kind\":\"input\"},"
        "\"y\":{\"shape\":[8,4,16],\"dtype\":\"bf16\",\"kind\":\"output\"}},"
        "\"ops\":[{\"name\":\"emb\",\"type\":\"embedding\",\"inputs\":[\"tab\",\"idx\"],"
        "\"outputs\":[\"y\"],\"attrs\":{\"sparse_grad\":1}}]}";
    arena a = {0};
    wl_graph f, g;
    kt_err e;
    err_clear(&e);
    ck_assert_msg(derive(json, OPTIM_SGD, &a, &f, &g, &e) == 0, "%s", e.msg);
    int gt = final_grad(&g, wl_find_tensor(&g, "tab"));
    ck_assert_int_ge(gt, 0);
    ck_assert_int_eq(g.t[gt].ndim, 2);
    ck_assert_int_eq(g.t[gt].dim[0], 32); /* 8 x 4 lookups */
    ck_assert_int_eq(g.t[gt].dim[1], 16);
    /* forward, the ones fill, the values and indices views, the sgd: no embedding_backward */
    ck_assert_int_eq(g.nop, 1 + 1 + 2 + 1);
    ck_assert_int_lt(find_op(&g, "emb.grad_w.contig"), 0);
    int sgd = find_op(&g, "tab.sgd");
    ck_assert_int_ge(sgd, 0);
    ck_assert_int_eq(g.op[sgd].type, OP_INDEX_ADD);
    ck_assert_int_eq(g.op[sgd].nin, 3);
    ck_assert_int_eq(g.op[sgd].in[2], gt);
    ck_assert_int_eq(g.t[g.op[sgd].in[1]].elems, 32);
    arena_free(&a);

    const char *shared =
        "{\"name\":\"se2\",\"tensors\":{"
        "\"tab\":{\"shape\":[16,16],\"dtype\":\"bf16\",\"kind\":\"weight\"},"
        "\"idx\":{\"shape\":[8],\"dtype\":\"int64\",\"kind\":\"input\"},"
        "\"x\":{\"shape\":[8,16],\"dtype\":\"bf16\",\"kind\":\"input\"},"
        "\"e\":{\"shape\":[8,16],\"dtype\":\"bf16\"},"
        "\"h\":{\"shape\":[8,16],\"dtype\":\"bf16\"},"
        "\"y\":{\"shape\":[8,16],\"dtype\":\"bf16\",\"kind\":\"output\"}},"
        "\"ops\":[{\"name\":\"emb\",\"type\":\"embedding\",\"inputs\":[\"tab\",\"idx\"],"
        "\"outputs\":[\"e\"],\"attrs\":{\"sparse_grad\":1}},"
        "{\"name\":\"fc\",\"type\":\"matmul\",\"inputs\":[\"x\",\"tab\"],\"outputs\":[\"h\"]},"
        "{\"name\":\"sum\",\"type\":\"add\",\"inputs\":[\"e\",\"h\"],\"outputs\":[\"y\"]}]}";
    err_clear(&e);
    ck_assert_int_eq(derive(shared, OPTIM_NONE, &a, &f, &g, &e), -1);
    ck_assert_str_eq(e.path, "ops[0]");
    ck_assert_str_eq(e.msg, "training: no gradient rule for a table with a sparse gradient read "
                            "by another op of \"embedding\"");
    arena_free(&a);
}
END_TEST

/* An activation's gradient (act_backward with the forward's op name) reads what ATen's backward
 * kernel reads: relu, sigmoid and tanh their output; leaky_relu, elu, softplus, mish, hardtanh,
 * hardsigmoid and hardswish their input (their *_backward(grad, self, ...)). */
START_TEST(test_activation_grads)
{
    static const struct { const char *type; int reads_out; } A[] = {
        {"relu", 1},     {"sigmoid", 1},  {"tanh", 1},        {"leaky_relu", 0}, {"elu", 0},
        {"softplus", 0}, {"mish", 0},     {"hardtanh", 0},    {"hardsigmoid", 0}, {"hardswish", 0}};
    for (size_t k = 0; k < sizeof A / sizeof A[0]; k++) {
        char json[1024];
        snprintf(json, sizeof json,
                 "{\"name\":\"a\",\"tensors\":{"
                 "\"x\":{\"shape\":[4,8],\"dtype\":\"bf16\",\"kind\":\"input\"},"
                 "\"w\":{\"shape\":[8,8],\"dtype\":\"bf16\",\"kind\":\"weight\"},"
                 "\"h\":{\"shape\":[4,8],\"dtype\":\"bf16\"},"
                 "\"y\":{\"shape\":[4,8],\"dtype\":\"bf16\",\"kind\":\"output\"}},"
                 "\"ops\":[{\"name\":\"fc\",\"type\":\"linear\",\"inputs\":[\"x\",\"w\"],\"outputs\":[\"h\"]},"
                 "{\"name\":\"act\",\"type\":\"%s\",\"inputs\":[\"h\"],\"outputs\":[\"y\"]}]}",
                 A[k].type);
        arena a = {0};
        wl_graph f, g;
        kt_err e;
        err_clear(&e);
        ck_assert_msg(derive(json, OPTIM_NONE, &a, &f, &g, &e) == 0, "%s: %s", A[k].type, e.msg);
        int b = -1;
        for (int i = 0; i < g.nop; i++)
            if (g.op[i].type == OP_ACT_BWD)
                b = i;
        ck_assert_msg(b >= 0, "%s: no act_backward", A[k].type);
        ck_assert_str_eq(wl_attr_str(&g.op[b], "op", "?"), A[k].type);
        int saved = g.op[b].in[1];
        ck_assert_msg(saved == wl_find_tensor(&g, A[k].reads_out ? "y" : "h"), "%s reads %s",
                      A[k].type, g.t[saved].name);
        arena_free(&a);
    }
}
END_TEST

/* A transposed convolution (conv2d_dgrad as a forward op, x requiring a gradient): its input
 * gradient is the convolution it inverts, conv2d(dy, w), and its weight gradient
 * conv2d_wgrad(x, dy), each with the forward's attributes and the forward's tensor FLOPs
 * (2 N C_in H W C_out K^2 = 2 x 2 x 16 x 4 x 4 x 8 x 9 = 73,728: x [2, 16, 4, 4] up to y [2, 8, 8, 8],
 * 3x3, stride 2). */
START_TEST(test_conv_transpose)
{
    const char *json =
        "{\"name\":\"ct\",\"tensors\":{"
        "\"x\":{\"shape\":[2,16,4,4],\"dtype\":\"bf16\",\"kind\":\"input\",\"requires_grad\":true},"
        "\"w\":{\"shape\":[16,8,3,3],\"dtype\":\"bf16\",\"kind\":\"weight\"},"
        "\"y\":{\"shape\":[2,8,8,8],\"dtype\":\"bf16\",\"kind\":\"output\"}},"
        "\"ops\":[{\"name\":\"up\",\"type\":\"conv2d_dgrad\",\"inputs\":[\"x\",\"w\"],\"outputs\":[\"y\"],"
        "\"attrs\":{\"stride\":2,\"padding\":1}}]}";
    arena a = {0};
    wl_graph f, g;
    kt_err e;
    err_clear(&e);
    ck_assert_msg(derive(json, OPTIM_NONE, &a, &f, &g, &e) == 0, "%s: %s", e.path, e.msg);
    int dx = find_op(&g, "up.grad_x"), dw = find_op(&g, "up.grad_w");
    ck_assert_int_ge(dx, 0);
    ck_assert_int_ge(dw, 0);
    ck_assert_int_eq(g.op[dx].type, OP_CONV2D);
    ck_assert_int_eq(g.op[dw].type, OP_CONV2D_WGRAD);
    int x = wl_find_tensor(&g, "x"), w = wl_find_tensor(&g, "w");
    ck_assert_int_eq(g.op[dx].in[1], w);
    ck_assert_int_eq(g.op[dw].in[0], x);
    ck_assert_int_eq(wl_attr_int(&g.op[dx], "stride", 0), 2);
    ck_assert_int_eq(op_flops_tensor(&g, find_op(&g, "up")), 73728);
    ck_assert_int_eq(op_flops_tensor(&g, dx), 73728);
    ck_assert_int_eq(op_flops_tensor(&g, dw), 73728);
    arena_free(&a);
}
END_TEST

/* A conv block: conv2d (x requiring a gradient, weight, bias, padding 1) -> training batchnorm
 * -> relu -> 2x2 max pooling. Backward: dgrad, wgrad and a bias reduction over (N, H, W); one
 * batchnorm_backward with the forward's attributes; the pooling backward reads the argmax
 * indices, which the training graph declares as the pooling's second output (saved). Tensor
 * FLOPs: the forward conv 2 x (2*16*16) x 16 x 8 x 9 = 1,179,648, dgrad and wgrad the same. */
START_TEST(test_conv_block)
{
    const char *json =
        "{\"name\":\"cb\",\"tensors\":{"
        "\"x\":{\"shape\":[2,8,16,16],\"dtype\":\"bf16\",\"kind\":\"input\",\"requires_grad\":true},"
        "\"w\":{\"shape\":[16,8,3,3],\"dtype\":\"bf16\",\"kind\":\"weight\"},"
        "\"b\":{\"shape\":[16],\"dtype\":\"bf16\",\"kind\":\"weight\"},"
        "\"g\":{\"shape\":[16],\"dtype\":\"bf16\",\"kind\":\"weight\"},"
        "\"bt\":{\"shape\":[16],\"dtype\":\"bf16\",\"kind\":\"weight\"},"
        "\"y1\":{\"shape\":[2,16,16,16],\"dtype\":\"bf16\"},"
        "\"y2\":{\"shape\":[2,16,16,16],\"dtype\":\"bf16\"},"
        "\"y3\":{\"shape\":[2,16,16,16],\"dtype\":\"bf16\"},"
        "\"out\":{\"shape\":[2,16,8,8],\"dtype\":\"bf16\",\"kind\":\"output\"}},"
        "\"ops\":["
        "{\"name\":\"conv\",\"type\":\"conv2d\",\"inputs\":[\"x\",\"w\",\"b\"],\"outputs\":[\"y1\"],"
        "\"attrs\":{\"padding\":[1,1],\"layout\":\"nchw\"}},"
        "{\"name\":\"bn\",\"type\":\"batchnorm\",\"inputs\":[\"y1\",\"g\",\"bt\"],\"outputs\":[\"y2\"],"
        "\"attrs\":{\"training\":1,\"axis\":1}},"
        "{\"name\":\"act\",\"type\":\"relu\",\"inputs\":[\"y2\"],\"outputs\":[\"y3\"]},"
        "{\"name\":\"pool\",\"type\":\"pool2d\",\"inputs\":[\"y3\"],\"outputs\":[\"out\"],"
        "\"attrs\":{\"op\":\"max\",\"kernel\":2}}]}";
    arena a = {0};
    wl_graph f, g;
    kt_err e;
    err_clear(&e);
    ck_assert_msg(derive(json, OPTIM_NONE, &a, &f, &g, &e) == 0, "%s: %s", e.path, e.msg);
    assert_grads_consistent(&g);
    int x = wl_find_tensor(&g, "x"), w = wl_find_tensor(&g, "w");
    int dg = find_op(&g, "conv.grad_x"), wg = find_op(&g, "conv.grad_w"), bg = find_op(&g, "conv.grad_b");
    ck_assert_int_eq(g.op[dg].type, OP_CONV2D_DGRAD);
    ck_assert_int_eq(g.op[dg].in[1], w);
    ck_assert_int_eq(g.op[dg].out[0], final_grad(&g, x));
    ck_assert_int_eq(g.op[wg].type, OP_CONV2D_WGRAD);
    ck_assert_int_eq(g.op[wg].in[1], x);
    ck_assert_int_eq(g.op[wg].out[0], final_grad(&g, w));
    ck_assert_int_eq(g.op[bg].type, OP_REDUCE);
    const wl_attr *ax = wl_attr_get(&g.op[bg], "axes");
    ck_assert(ax && ax->nlist == 3 && ax->list[0] == 0 && ax->list[1] == 2 && ax->list[2] == 3);
    ck_assert_int_eq(wl_attr_int(&g.op[wg], "groups", 1), 1);
    ck_assert_int_eq(phase_flops(&g, PH_FWD, -1), 1179648);
    ck_assert_int_eq(phase_flops(&g, PH_BWD, -1), 2 * 1179648);
    int bb = find_op(&g, "bn.grad");
    ck_assert_int_eq(g.op[bb].type, OP_BATCHNORM_BWD);
    ck_assert_int_eq(g.op[bb].nout, 3);
    ck_assert_int_eq(wl_attr_int(&g.op[bb], "training", 0), 1);
    ck_assert_int_eq(g.t[wl_find_tensor(&g, "y1")].saved, 1); /* batchnorm backward reads its x */
    int po = find_op(&g, "pool");
    ck_assert_int_eq(g.op[po].nout, 2);
    int ix = g.op[po].out[1];
    ck_assert_int_eq(g.t[ix].dt, DT_INT64);
    ck_assert_int_eq(g.t[ix].saved, 1);
    int pb = find_op(&g, "pool.grad_x");
    ck_assert_int_eq(g.op[pb].type, OP_POOL2D_BWD);
    ck_assert_int_eq(g.op[pb].nin, 2);
    ck_assert_int_eq(g.op[pb].in[1], ix);
    arena_free(&a);
}
END_TEST

/* Selections, scans, dropout and the new optional operands:
 * h = matmul(x, w) + C; (values, idx) = topk(h, 4); cs = cumsum(values); (d, m) = dropout(cs);
 * (sv, si) = sort(h); o = index_add into h of src rows; attention with a mask.
 * Backward: topk and sort scatter dy into zeros at their saved indices; cumsum is a flip copy,
 * a cumsum and a flip copy; dropout multiplies by the saved mask; C's gradient is dy summed
 * over the rows; index_add passes dy to its destination and gathers src's rows; the attention
 * backward re-reads the mask. */
START_TEST(test_selections_scans_extras)
{
    const char *json =
        "{\"name\":\"sel\",\"tensors\":{"
        "\"x\":{\"shape\":[8,16],\"dtype\":\"bf16\",\"kind\":\"input\"},"
        "\"w\":{\"shape\":[16,16],\"dtype\":\"bf16\",\"kind\":\"weight\"},"
        "\"c\":{\"shape\":[16],\"dtype\":\"bf16\",\"kind\":\"weight\"},"
        "\"src\":{\"shape\":[4,16],\"dtype\":\"bf16\",\"kind\":\"weight\"},"
        "\"ri\":{\"shape\":[4],\"dtype\":\"int64\",\"kind\":\"input\"},"
        "\"h\":{\"shape\":[8,16],\"dtype\":\"bf16\"},"
        "\"v\":{\"shape\":[8,4],\"dtype\":\"bf16\"},"
        "\"i\":{\"shape\":[8,4],\"dtype\":\"int64\"},"
        "\"cs\":{\"shape\":[8,4],\"dtype\":\"bf16\"},"
        "\"d\":{\"shape\":[8,4],\"dtype\":\"bf16\",\"kind\":\"output\"},"
        "\"m\":{\"shape\":[8,4],\"dtype\":\"bool\",\"kind\":\"output\"},"
        "\"sv\":{\"shape\":[8,16],\"dtype\":\"bf16\",\"kind\":\"output\"},"
        "\"si\":{\"shape\":[8,16],\"dtype\":\"int64\",\"kind\":\"output\"},"
        "\"o\":{\"shape\":[8,16],\"dtype\":\"bf16\",\"kind\":\"output\"},"
        "\"q\":{\"shape\":[1,2,4,8],\"dtype\":\"bf16\",\"kind\":\"weight\"},"
        "\"mask\":{\"shape\":[4,4],\"dtype\":\"bf16\",\"kind\":\"input\"},"
        "\"att\":{\"shape\":[1,2,4,8],\"dtype\":\"bf16\",\"kind\":\"output\"}},"
        "\"ops\":["
        "{\"name\":\"mm\",\"type\":\"matmul\",\"inputs\":[\"x\",\"w\",\"c\"],\"outputs\":[\"h\"]},"
        "{\"name\":\"tk\",\"type\":\"topk\",\"inputs\":[\"h\"],\"outputs\":[\"v\",\"i\"],"
        "\"attrs\":{\"k\":4}},"
        "{\"name\":\"scan\",\"type\":\"cumsum\",\"inputs\":[\"v\"],\"outputs\":[\"cs\"],\"attrs\":{\"axis\":1}},"
        "{\"name\":\"dp\",\"type\":\"dropout\",\"inputs\":[\"cs\"],\"outputs\":[\"d\",\"m\"],"
        "\"attrs\":{\"p_permille\":100}},"
        "{\"name\":\"st\",\"type\":\"sort\",\"inputs\":[\"h\"],\"outputs\":[\"sv\",\"si\"]},"
        "{\"name\":\"ia\",\"type\":\"index_add\",\"inputs\":[\"h\",\"ri\",\"src\"],\"outputs\":[\"o\"]},"
        "{\"name\":\"at\",\"type\":\"attention\",\"inputs\":[\"q\",\"q\",\"q\",\"mask\"],\"outputs\":[\"att\"]}]}";
    arena a = {0};
    wl_graph f, g;
    kt_err e;
    err_clear(&e);
    ck_assert_msg(derive(json, OPTIM_NONE, &a, &f, &g, &e) == 0, "%s: %s", e.path, e.msg);
    assert_grads_consistent(&g);
    /* topk: zeros [8, 16] + scatter(zeros, i, dy) along axis 1 (the forward's -1) */
    int tz = find_op(&g, "tk.grad_x.zeros"), ts = find_op(&g, "tk.grad_x");
    ck_assert_int_eq(g.op[tz].type, OP_FILL);
    ck_assert_int_eq(g.t[g.op[tz].out[0]].dim[1], 16);
    ck_assert_int_eq(g.op[ts].type, OP_SCATTER);
    ck_assert_int_eq(g.op[ts].in[1], wl_find_tensor(&g, "i"));
    ck_assert_int_eq(wl_attr_int(&g.op[ts], "axis", -1), 1);
    ck_assert_int_eq(g.t[wl_find_tensor(&g, "i")].saved, 1);
    ck_assert_int_eq(g.op[find_op(&g, "st.grad_x")].type, OP_SCATTER);
    ck_assert_int_eq(g.op[find_op(&g, "st.grad_x")].in[1], wl_find_tensor(&g, "si"));
    /* cumsum: flip, cumsum, flip */
    ck_assert_int_eq(g.op[find_op(&g, "scan.grad_x.flip")].type, OP_COPY);
    ck_assert_int_eq(g.op[find_op(&g, "scan.grad_x.cumsum")].type, OP_CUMSUM);
    ck_assert_int_eq(g.op[find_op(&g, "scan.grad_x")].type, OP_COPY);
    /* dropout: dy * mask */
    int dg = find_op(&g, "dp.grad_x");
    ck_assert_int_eq(g.op[dg].type, OP_MUL);
    ck_assert_int_eq(g.op[dg].in[1], wl_find_tensor(&g, "m"));
    /* C of the matmul: dy summed over the 8 rows */
    int cg = final_grad(&g, wl_find_tensor(&g, "c"));
    ck_assert_int_eq(g.op[g.t[cg].producer].type, OP_REDUCE);
    /* index_add with a destination: h gets dy as is (no kernel), src an index_select of dy */
    int sg = find_op(&g, "ia.grad_src");
    ck_assert_int_eq(g.op[sg].type, OP_INDEX_SELECT);
    ck_assert_int_eq(g.op[sg].out[0], final_grad(&g, wl_find_tensor(&g, "src")));
    ck_assert_int_lt(find_op(&g, "ia.grad_x"), 0);
    /* h is read by topk, sort and index_add: two accumulation adds */
    ck_assert_int_ge(find_op(&g, "h.grad_acc2"), 0);
    ck_assert_int_lt(find_op(&g, "h.grad_acc3"), 0);
    /* attention backward with the mask as its sixth input */
    int ab = find_op(&g, "at.grad");
    ck_assert_int_eq(g.op[ab].nin, 6);
    ck_assert_int_eq(g.op[ab].in[5], wl_find_tensor(&g, "mask"));
    arena_free(&a);
}
END_TEST

/* Mixture-of-experts routing: gw, ids = topk(x w_r, 2); buf = moe_dispatch(x, ids);
 * eo = buf @ w_e (per expert); y = moe_combine(eo, ids, gw). Backward: the combine's gradient is
 * a dispatch of dy weighted by the gate, the gate's a moe_gate_backward(dy, eo, ids) that feeds
 * topk's scatter; the dispatch's gradient is an unweighted combine into x's shape; eo and ids
 * are saved. */
START_TEST(test_moe_routing)
{
    const char *json =
        "{\"name\":\"moe\",\"tensors\":{"
        "\"x\":{\"shape\":[16,8],\"dtype\":\"bf16\",\"kind\":\"input\",\"requires_grad\":true},"
        "\"wr\":{\"shape\":[8,4],\"dtype\":\"bf16\",\"kind\":\"weight\"},"
        "\"lg\":{\"shape\":[16,4],\"dtype\":\"bf16\"},"
        "\"gw\":{\"shape\":[16,2],\"dtype\":\"bf16\"},"
        "\"ids\":{\"shape\":[16,2],\"dtype\":\"int64\"},"
        "\"buf\":{\"shape\":[4,10,8],\"dtype\":\"bf16\"},"
        "\"we\":{\"shape\":[4,8,8],\"dtype\":\"bf16\",\"kind\":\"weight\"},"
        "\"eo\":{\"shape\":[4,10,8],\"dtype\":\"bf16\"},"
        "\"y\":{\"shape\":[16,8],\"dtype\":\"bf16\",\"kind\":\"output\"}},"
        "\"ops\":["
        "{\"name\":\"router\",\"type\":\"matmul\",\"inputs\":[\"x\",\"wr\"],\"outputs\":[\"lg\"]},"
        "{\"name\":\"tk\",\"type\":\"topk\",\"inputs\":[\"lg\"],\"outputs\":[\"gw\",\"ids\"],\"attrs\":{\"k\":2}},"
        "{\"name\":\"disp\",\"type\":\"moe_dispatch\",\"inputs\":[\"x\",\"ids\"],\"outputs\":[\"buf\"],"
        "\"attrs\":{\"imbalance_pct\":125}},"
        "{\"name\":\"exp\",\"type\":\"matmul\",\"inputs\":[\"buf\",\"we\"],\"outputs\":[\"eo\"]},"
        "{\"name\":\"comb\",\"type\":\"moe_combine\",\"inputs\":[\"eo\",\"ids\",\"gw\"],\"outputs\":[\"y\"],"
        "\"attrs\":{\"imbalance_pct\":125}}]}";
    arena a = {0};
    wl_graph f, g;
    kt_err e;
    err_clear(&e);
    ck_assert_msg(derive(json, OPTIM_NONE, &a, &f, &g, &e) == 0, "%s: %s", e.path, e.msg);
    assert_grads_consistent(&g);
    int ids = wl_find_tensor(&g, "ids"), eo = wl_find_tensor(&g, "eo");
    int cg = find_op(&g, "comb.grad_x"), gg = find_op(&g, "comb.grad_gate");
    ck_assert_int_eq(g.op[cg].type, OP_MOE_DISPATCH);
    ck_assert_int_eq(g.op[cg].nin, 3);
    ck_assert_int_eq(g.op[cg].in[1], ids);
    ck_assert_int_eq(g.op[cg].in[2], wl_find_tensor(&g, "gw"));
    ck_assert_int_eq(g.t[g.op[cg].out[0]].dim[1], 10); /* the buffer's shape */
    ck_assert_int_eq(wl_attr_int(&g.op[cg], "imbalance_pct", 0), 125);
    ck_assert_int_eq(g.op[gg].type, OP_MOE_GATE_BWD);
    ck_assert_int_eq(g.op[gg].in[1], eo);
    ck_assert_int_eq(g.op[gg].in[2], ids);
    ck_assert_int_eq(g.t[eo].saved, 1);
    ck_assert_int_eq(g.t[ids].saved, 1);
    /* the gate gradient flows into topk's scatter */
    ck_assert_int_eq(g.op[find_op(&g, "tk.grad_x")].in[2], g.op[gg].out[0]);
    /* the dispatch's gradient: an unweighted combine of dbuf into x's shape */
    int dg = find_op(&g, "disp.grad_x");
    ck_assert_int_eq(g.op[dg].type, OP_MOE_COMBINE);
    ck_assert_int_eq(g.op[dg].nin, 2);
    ck_assert_int_eq(g.t[g.op[dg].out[0]].dim[0], 16);
    ck_assert_int_eq(g.t[g.op[dg].out[0]].dim[1], 8);
    arena_free(&a);
}
END_TEST

/* Names are exact, never cut: two 300-byte op names that differ only at the end derive
 * distinct backward names (at 256 bytes they collided: "duplicate op name"), and a name that
 * would exceed the limit is an error rather than a cut. */
START_TEST(test_long_names)
{
    char json[8192], a1[301], a2[301];
    memset(a1, 'L', 299);
    memcpy(a2, a1, 299);
    a1[299] = '1';
    a2[299] = '2';
    a1[300] = a2[300] = 0;
    const char *fmt =
        "{\"name\": \"n\", \"params\": {}, \"tensors\": {"
        "\"x\": {\"shape\": [64, 64], \"dtype\": \"bf16\", \"kind\": \"input\"},"
        "\"w\": {\"shape\": [64, 64], \"dtype\": \"bf16\", \"kind\": \"weight\"},"
        "\"h\": {\"shape\": [64, 64], \"dtype\": \"bf16\"},"
        "\"y\": {\"shape\": [64, 64], \"dtype\": \"bf16\", \"kind\": \"output\"}},"
        "\"ops\": [{\"name\": \"%s\", \"type\": \"matmul\", \"inputs\": [\"x\", \"w\"], \"outputs\": [\"h\"]},"
        "{\"name\": \"%s\", \"type\": \"relu\", \"inputs\": [\"h\"], \"outputs\": [\"y\"]}]}";
    snprintf(json, sizeof json, fmt, a1, a2);
    arena a = {0};
    wl_graph fwd, tg;
    kt_err e;
    err_clear(&e);
    ck_assert_msg(derive(json, OPTIM_ADAM, &a, &fwd, &tg, &e) == 0, "%s", e.msg);
    for (int i = 0; i < tg.nop; i++)
        for (int j = i + 1; j < tg.nop; j++)
            ck_assert_str_ne(tg.op[i].name, tg.op[j].name);
    arena_free(&a);
    char big[1100];
    memset(big, 'M', sizeof big - 1);
    big[sizeof big - 1] = 0;
    snprintf(json, sizeof json, fmt, big, a2);
    err_clear(&e);
    ck_assert_int_eq(derive(json, OPTIM_NONE, &a, &fwd, &tg, &e), -1);
    ck_assert_int_eq(e.code, KT_EINPUT);
    ck_assert_str_eq(e.msg, "a training-graph name would exceed 1023 bytes (shorten the op and "
                            "tensor names)");
    arena_free(&a);
}
END_TEST

static Suite *autodiff_suite(void)
{
    Suite *s = suite_create("autodiff");
    TCase *tc = tcase_create("ad_training_graph");
    tcase_add_test(tc, test_linear_backward_is_twice_forward);
    tcase_add_test(tc, test_phases_and_saved);
    tcase_add_test(tc, test_optimizers);
    tcase_add_test(tc, test_matmul_transposes);
    tcase_add_test(tc, test_matmul_broadcast_batch);
    tcase_add_test(tc, test_accumulation);
    tcase_add_test(tc, test_structured_ops);
    tcase_add_test(tc, test_no_grad_paths_and_errors);
    tcase_add_test(tc, test_sparse_embedding_grad);
    tcase_add_test(tc, test_activation_grads);
    tcase_add_test(tc, test_conv_transpose);
    tcase_add_test(tc, test_conv_block);
    tcase_add_test(tc, test_selections_scans_extras);
    tcase_add_test(tc, test_moe_routing);
    tcase_add_test(tc, test_long_names);
    suite_add_tcase(s, tc);
    return s;
}

KT_TEST_MAIN(autodiff_suite)
