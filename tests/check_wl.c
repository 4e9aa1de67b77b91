/* check_wl: workload loader - params, --set, training_params, references, errors with paths. */
#include <stdio.h>
#include <string.h>

#include "../src/io/jsonx.h"
#include "../src/model/op.h"
#include "../src/model/wl.h"
#include "ktest.h"

/* A two-op graph over parameters B and H. */
static const char *MLP =
    "{\"name\": \"mlp\", \"params\": {\"B\": 8, \"H\": 32}, \"training_params\": {\"B\": 2},\n"
    " \"tensors\": {\n"
    "  \"x\": {\"shape\": [\"B\", \"H/4\"], \"dtype\": \"bf16\", \"kind\": \"input\"},\n"
    "  \"w\": {\"shape\": [\"H/4\", \"2*H+1\"], \"dtype\": \"bf16\", \"kind\": \"weight\"},\n"
    "  \"h\": {\"shape\": [\"B\", \"2*H+1\"], \"dtype\": \"bf16\"},\n"
    "  \"y\": {\"shape\": [\"B\", \"(2*H)+1\"], \"dtype\": \"bf16\", \"kind\": \"output\"}},\n"
    " \"ops\": [\n"
    "  {\"name\": \"fc\", \"type\": \"matmul\", \"inputs\": [\"x\", \"w\"], \"outputs\": [\"h\"]},\n"
    "  {\"name\": \"act\", \"type\": \"relu\", \"inputs\": [\"h\"], \"outputs\": [\"y\"]}]}";

/* Parse text (plain cJSON: a repeated key stays, for wl_from_json's own checks; files go
 * through jsonx_parse, which refuses it) and convert; returns wl_from_json's status. */
static int load(const char *text, const wl_set *sets, int nsets, int training, arena *a,
                wl_graph *g, kt_err *e)
{
    err_clear(e);
    cJSON *root = cJSON_Parse(text);
    ck_assert_msg(root != NULL, "test JSON does not parse: %s", text);
    int rc = wl_from_json(root, "t.json", sets, nsets, training, a, g, e);
    cJSON_Delete(root);
    return rc;
}

/* Expect text to fail with exactly this path and message. */
static void expect_err(const char *text, const char *path, const char *msg)
{
    arena a = {0};
    wl_graph g;
    kt_err e;
    int rc = load(text, NULL, 0, 0, &a, &g, &e);
    arena_free(&a);
    ck_assert_msg(rc == -1, "should fail: %s", text);
    ck_assert_int_eq(e.code, KT_EINPUT);
    ck_assert_str_eq(e.file, "t.json");
    ck_assert_str_eq(e.path, path);
    ck_assert_str_eq(e.msg, msg);
}

/* A one-op graph x -> relu -> y with the given shape JSON for x and y. */
static void expect_shape_err(const char *shape, const char *msg)
{
    char text[1024];
    snprintf(text, sizeof text,
             "{\"name\": \"s\", \"params\": {\"N\": 4},"
             " \"tensors\": {\"x\": {\"shape\": %s, \"dtype\": \"fp32\", \"kind\": \"input\"},"
             " \"y\": {\"shape\": [4], \"dtype\": \"fp32\", \"kind\": \"output\"}},"
             " \"ops\": [{\"name\": \"r\", \"type\": \"relu\", \"inputs\": [\"x\"], \"outputs\": [\"y\"]}]}",
             shape);
    expect_err(text, "tensors.x.shape[1]", msg);
}

START_TEST(test_params_and_shapes)
{
    arena a = {0};
    wl_graph g;
    kt_err e;
    ck_assert_msg(load(MLP, NULL, 0, 0, &a, &g, &e) == 0, "%s: %s", e.path, e.msg);
    ck_assert_str_eq(g.name, "mlp");
    ck_assert_int_eq(g.nparam, 2);
    ck_assert_int_eq(wl_param(&g, "B", -1), 8);
    ck_assert_int_eq(wl_param(&g, "H", -1), 32);
    ck_assert_int_eq(wl_param(&g, "nope", -7), -7);
    ck_assert_int_eq(g.ntensor, 4);
    ck_assert_int_eq(g.nop, 2);
    const wl_tensor *w = &g.t[wl_find_tensor(&g, "w")];
    ck_assert_int_eq(w->ndim, 2);
    ck_assert_int_eq(w->dim[0], 8);  /* H/4 */
    ck_assert_int_eq(w->dim[1], 65); /* 2*H+1 */
    ck_assert_int_eq(w->elems, 8 * 65);
    ck_assert_int_eq(w->bytes, 8 * 65 * 2);
    ck_assert_int_eq(w->kind, TK_WEIGHT);
    ck_assert_int_eq(w->producer, -1);
    const wl_tensor *y = &g.t[wl_find_tensor(&g, "y")];
    ck_assert_int_eq(y->kind, TK_OUTPUT);
    ck_assert_int_eq(y->producer, 1);
    ck_assert_int_eq(g.t[wl_find_tensor(&g, "h")].kind, TK_INTER);
    ck_assert_int_eq(g.op[0].type, OP_MATMUL);
    ck_assert_int_eq(g.op[1].type, OP_RELU);
    ck_assert_int_eq(wl_find_tensor(&g, "zzz"), -1);
    arena_free(&a);
}
END_TEST

START_TEST(test_set_overrides)
{
    arena a = {0};
    wl_graph g;
    kt_err e;
    wl_set s[2] = {{"B", 100}, {"H", 4}};
    ck_assert_msg(load(MLP, s, 2, 0, &a, &g, &e) == 0, "%s: %s", e.path, e.msg);
    const wl_tensor *h = &g.t[wl_find_tensor(&g, "h")];
    ck_assert_int_eq(h->dim[0], 100);
    ck_assert_int_eq(h->dim[1], 9); /* 2*4+1 */
    arena_free(&a);

    wl_set bad[1] = {{"Q", 3}};
    ck_assert_int_eq(load(MLP, bad, 1, 0, &a, &g, &e), -1);
    ck_assert_str_eq(e.path, "params");
    ck_assert_str_eq(e.msg, "--set: workload has no parameter \"Q\"");
    arena_free(&a);

    /* a --set that makes an expression inexact is an error at the shape that divides */
    wl_set odd[1] = {{"H", 30}};
    ck_assert_int_eq(load(MLP, odd, 1, 0, &a, &g, &e), -1);
    ck_assert_str_eq(e.path, "tensors.x.shape[1]");
    ck_assert_str_eq(e.msg, "bad expression \"H/4\": '/' does not divide exactly (use cdiv for "
                            "ceiling division)");
    arena_free(&a);
}
END_TEST

START_TEST(test_training_params)
{
    arena a = {0};
    wl_graph g;
    kt_err e;
    ck_assert_int_eq(load(MLP, NULL, 0, 1, &a, &g, &e), 0);
    ck_assert_int_eq(wl_param(&g, "B", -1), 2); /* training default */
    ck_assert_int_eq(g.t[wl_find_tensor(&g, "x")].dim[0], 2);
    arena_free(&a);
    /* --set wins over training_params */
    wl_set s[1] = {{"B", 5}};
    ck_assert_int_eq(load(MLP, s, 1, 1, &a, &g, &e), 0);
    ck_assert_int_eq(g.t[wl_find_tensor(&g, "x")].dim[0], 5);
    arena_free(&a);
    /* inference ignores training_params */
    ck_assert_int_eq(load(MLP, NULL, 0, 0, &a, &g, &e), 0);
    ck_assert_int_eq(wl_param(&g, "B", -1), 8);
    arena_free(&a);
    /* a training param that is not a param */
    const char *t = "{\"name\": \"t\", \"params\": {\"B\": 1}, \"training_params\": {\"Z\": 2},"
                    " \"tensors\": {}, \"ops\": []}";
    ck_assert_int_eq(load(t, NULL, 0, 1, &a, &g, &e), -1);
    ck_assert_str_eq(e.path, "training_params.Z");
    ck_assert_str_eq(e.msg, "not a parameter declared in \"params\"");
    arena_free(&a);
}
END_TEST

START_TEST(test_top_level_errors)
{
    expect_err("[1]", "", "top level must be an object");
    expect_err("{\"tensors\": {}, \"ops\": []}", "name", "missing field");
    expect_err("{\"name\": 3, \"tensors\": {}, \"ops\": []}", "name", "must be a non-empty string");
    expect_err("{\"name\": \"n\", \"ops\": []}", "tensors", "missing field");
    expect_err("{\"name\": \"n\", \"tensors\": {}}", "ops", "missing field");
    expect_err("{\"name\": \"n\", \"tensors\": [], \"ops\": []}", "tensors",
               "must be an object of name -> tensor");
    expect_err("{\"name\": \"n\", \"tensors\": {}, \"ops\": {}}", "ops", "must be an array");
    expect_err("{\"name\": \"n\", \"tensors\": {}, \"ops\": []}", "ops", "workload has no ops");
    expect_err("{\"name\": \"n\", \"params\": {\"B\": 1.5}, \"tensors\": {}, \"ops\": []}", "params.B",
               "must be an integer");
    expect_err("{\"name\": \"n\", \"params\": {\"B\": \"4\"}, \"tensors\": {}, \"ops\": []}",
               "params.B", "must be an integer");
    expect_err("{\"name\": \"n\", \"params\": {\"2B\": 4}, \"tensors\": {}, \"ops\": []}",
               "params.2B", "invalid parameter name");
}
END_TEST

START_TEST(test_dimension_errors)
{
    expect_shape_err("[4, 0]", "dimension must be > 0 (got 0)");
    expect_shape_err("[4, -2]", "dimension must be > 0 (got -2)");
    expect_shape_err("[4, \"N-4\"]", "dimension must be > 0 (got 0)");
    expect_shape_err("[4, 2.5]", "must be an integer");
    expect_shape_err("[4, \"M\"]", "unknown parameter \"M\"");
    expect_shape_err("[4, \"N/0\"]", "bad expression \"N/0\": division by zero");
    expect_shape_err("[4, [1]]", "must be an integer or an expression string");
}
END_TEST

START_TEST(test_overflow)
{
    /* 2^16 ^ 4 = 2^64 elements */
    expect_err("{\"name\": \"o\", \"tensors\": {\"x\": {\"shape\": [65536, 65536, 65536, 65536],"
               " \"dtype\": \"fp32\", \"kind\": \"input\"}}, \"ops\": []}",
               "tensors.x", "element count overflows 64 bits");
    /* 2^62 elements of 4 bytes = 2^64 bytes */
    expect_err("{\"name\": \"o\", \"tensors\": {\"x\": {\"shape\": [2147483648, 2147483648],"
               " \"dtype\": \"fp32\", \"kind\": \"input\"}}, \"ops\": []}",
               "tensors.x", "byte count overflows 64 bits");
}
END_TEST

START_TEST(test_tensor_errors)
{
    expect_err("{\"name\": \"n\", \"tensors\": {\"x\": {\"shape\": [1], \"dtype\": \"fp12\"}}, \"ops\": []}",
               "tensors.x.dtype", "unknown dtype \"fp12\"");
    expect_err("{\"name\": \"n\", \"tensors\": {\"x\": {\"shape\": [1], \"dtype\": \"fp32\", \"kind\": \"param\"}},"
               " \"ops\": []}",
               "tensors.x.kind", "unknown kind \"param\" (input, weight, output or intermediate)");
    expect_err("{\"name\": \"n\", \"tensors\": {\"x\": {\"dtype\": \"fp32\"}}, \"ops\": []}",
               "tensors.x.shape", "missing field");
    expect_err("{\"name\": \"n\", \"tensors\": {\"x\": {\"shape\": \"B\", \"dtype\": \"fp32\"}}, \"ops\": []}",
               "tensors.x.shape", "must be an array");
    expect_err("{\"name\": \"n\", \"tensors\": {\"x\": {\"shape\": [1]}}, \"ops\": []}",
               "tensors.x.dtype", "missing field");
    expect_err("{\"name\": \"n\", \"tensors\": {\"x\": {\"shape\": [1], \"dtype\": \"fp32\"},"
               " \"x\": {\"shape\": [1], \"dtype\": \"fp32\"}}, \"ops\": []}",
               "tensors.x", "duplicate tensor name");
}
END_TEST

/* ops over x (input [4,8]), w (weight [8,8]), h, y (output) */
static void expect_op_err(const char *ops, const char *path, const char *msg)
{
    char text[2048];
    snprintf(text, sizeof text,
             "{\"name\": \"o\", \"tensors\": {"
             "\"x\": {\"shape\": [4, 8], \"dtype\": \"fp32\", \"kind\": \"input\"},"
             "\"w\": {\"shape\": [8, 8], \"dtype\": \"fp32\", \"kind\": \"weight\"},"
             "\"h\": {\"shape\": [4, 8], \"dtype\": \"fp32\"},"
             "\"y\": {\"shape\": [4, 8], \"dtype\": \"fp32\", \"kind\": \"output\"}}, \"ops\": [%s]}",
             ops);
    expect_err(text, path, msg);
}

START_TEST(test_op_errors)
{
    expect_op_err("{\"name\": \"a\", \"type\": \"relu\", \"inputs\": [\"x\"], \"outputs\": [\"h\"]},"
                  "{\"name\": \"b\", \"type\": \"add\", \"inputs\": [\"h\", \"h9\"], \"outputs\": [\"y\"]}",
                  "ops[1].inputs[1]", "unknown tensor \"h9\"");
    expect_op_err("{\"name\": \"a\", \"type\": \"frobnicate\", \"inputs\": [\"x\"], \"outputs\": [\"y\"]}",
                  "ops[0].type", "unknown op type \"frobnicate\"");
    expect_op_err("{\"type\": \"relu\", \"inputs\": [\"x\"], \"outputs\": [\"y\"]}", "ops[0].name",
                  "missing field");
    expect_op_err("{\"name\": \"a\", \"type\": \"relu\", \"inputs\": \"x\", \"outputs\": [\"y\"]}",
                  "ops[0].inputs", "must be an array of tensor names");
    expect_op_err("{\"name\": \"a\", \"type\": \"relu\", \"inputs\": [3], \"outputs\": [\"y\"]}",
                  "ops[0].inputs[0]", "must be a tensor name");
    expect_op_err("{\"name\": \"a\", \"type\": \"relu\", \"inputs\": [\"x\"], \"outputs\": [\"h\"]},"
                  "{\"name\": \"a\", \"type\": \"relu\", \"inputs\": [\"h\"], \"outputs\": [\"y\"]}",
                  "ops[1].name", "duplicate op name \"a\"");
    expect_op_err("{\"name\": \"a\", \"type\": \"relu\", \"inputs\": [\"h\"], \"outputs\": [\"y\"]},"
                  "{\"name\": \"b\", \"type\": \"relu\", \"inputs\": [\"x\"], \"outputs\": [\"h\"]}",
                  "ops[0].inputs[0]",
                  "tensor \"h\" is neither an input/weight nor produced by an earlier op");
    expect_op_err("{\"name\": \"a\", \"type\": \"relu\", \"inputs\": [\"w\"], \"outputs\": [\"x\"]}",
                  "ops[0].outputs[0]", "cannot write input \"x\"");
    expect_op_err("{\"name\": \"a\", \"type\": \"relu\", \"inputs\": [\"x\"], \"outputs\": [\"y\"]},"
                  "{\"name\": \"b\", \"type\": \"relu\", \"inputs\": [\"x\"], \"outputs\": [\"y\"]}",
                  "ops[1].outputs[0]", "tensor \"y\" is already produced by op \"a\"");
    expect_op_err("{\"name\": \"a\", \"type\": \"relu\", \"inputs\": [\"x\"], \"outputs\": [\"h\"]}",
                  "tensors.y", "output tensor is not produced by any op");
    expect_op_err("{\"name\": \"a\", \"type\": \"matmul\", \"inputs\": [\"x\", \"x\"], \"outputs\": [\"y\"]}",
                  "ops[0].inputs[1]", "matmul: inner dimensions differ (8 vs 4)");
    expect_op_err("{\"name\": \"a\", \"type\": \"relu\", \"inputs\": [\"x\"], \"outputs\": [\"y\"],"
                  " \"attrs\": {\"alpha\": 1}}",
                  "ops[0].attrs.alpha", "relu: unknown attribute \"alpha\"");
    expect_op_err("{\"name\": \"a\", \"type\": \"softmax\", \"inputs\": [\"x\"], \"outputs\": [\"y\"],"
                  " \"attrs\": {\"axis\": 2}}",
                  "ops[0].attrs.axis", "softmax: axis out of range");
    expect_op_err("{\"name\": \"a\", \"type\": \"relu\", \"inputs\": [\"x\", \"w\"], \"outputs\": [\"y\"]}",
                  "ops[0].inputs", "relu: needs 1..1 inputs");
}
END_TEST

START_TEST(test_build_in_code)
{
    arena a = {0};
    wl_graph g;
    kt_err e;
    err_clear(&e);
    wl_init(&g, "code", &a);
    int64_t d[2] = {3, 5};
    int x = wl_add_tensor(&g, "x", 2, d, DT_FP16, TK_INPUT, &e);
    int y = wl_add_tensor(&g, "y", 2, d, DT_FP16, TK_OUTPUT, &e);
    ck_assert_int_eq(x, 0);
    ck_assert_int_eq(y, 1);
    ck_assert_int_eq(g.t[x].bytes, 30);
    ck_assert_int_eq(wl_add_op(&g, "n", OP_NEG, &x, 1, &y, 1, NULL, 0, &e), 0);
    ck_assert_int_eq(g.t[y].producer, 0);
    ck_assert_int_eq(graph_check(&g, "code.json", &e), 0);
    int64_t big[3] = {INT64_MAX / 2, 2, 2};
    ck_assert_int_eq(wl_add_tensor(&g, "z", 3, big, DT_FP32, TK_INPUT, &e), -1);
    ck_assert_str_eq(e.msg, "element count overflows 64 bits");
    arena_free(&a);
    /* checked arithmetic */
    int64_t r;
    ck_assert_int_eq(wl_mul(INT64_MAX / 2 + 1, 2, &r), -1);
    ck_assert_int_eq(wl_mul(3, 7, &r), 0);
    ck_assert_int_eq(r, 21);
    ck_assert_int_eq(wl_add(INT64_MAX, 1, &r), -1);
}
END_TEST

START_TEST(test_attrs)
{
    const char *t =
        "{\"name\": \"a\", \"params\": {\"A\": 1}, \"tensors\": {"
        "\"x\": {\"shape\": [2, 3, 4], \"dtype\": \"fp32\", \"kind\": \"input\"},"
        "\"y\": {\"shape\": [2, 4], \"dtype\": \"fp32\", \"kind\": \"output\"}},"
        "\"ops\": [{\"name\": \"r\", \"type\": \"reduce\", \"inputs\": [\"x\"], \"outputs\": [\"y\"],"
        " \"attrs\": {\"op\": \"mean\", \"axes\": [\"A\"], \"keepdim\": false}}]}";
    arena a = {0};
    wl_graph g;
    kt_err e;
    ck_assert_msg(load(t, NULL, 0, 0, &a, &g, &e) == 0, "%s: %s", e.path, e.msg);
    const wl_op *o = &g.op[0];
    ck_assert_str_eq(wl_attr_str(o, "op", "?"), "mean");
    const wl_attr *ax = wl_attr_get(o, "axes");
    ck_assert(ax && ax->type == WA_LIST && ax->nlist == 1 && ax->list[0] == 1);
    ck_assert_int_eq(wl_attr_int(o, "keepdim", 9), 0);
    ck_assert_int_eq(wl_attr_int(o, "absent", 9), 9);
    ck_assert_ptr_null(wl_attr_get(o, "absent"));
    arena_free(&a);
}
END_TEST

/* Attribute types: "value" and "eps" may be real numbers (scale's 1/sqrt(64) = 0.125, a norm's
 * 1e-5; integers stay integers), "layout" is a string; any other number must be an integer, as
 * must a huge value (checked before it is cast). */
START_TEST(test_attr_types)
{
    const char *t =
        "{\"name\": \"a\", \"tensors\": {"
        "\"x\": {\"shape\": [1, 4, 8, 8], \"dtype\": \"bf16\", \"kind\": \"input\"},"
        "\"w\": {\"shape\": [4, 4, 1, 1], \"dtype\": \"bf16\", \"kind\": \"weight\"},"
        "\"h\": {\"shape\": [1, 4, 8, 8], \"dtype\": \"bf16\"},"
        "\"s\": {\"shape\": [1, 4, 8, 8], \"dtype\": \"bf16\"},"
        "\"y\": {\"shape\": [1, 4, 8, 8], \"dtype\": \"bf16\", \"kind\": \"output\"}},"
        "\"ops\": [{\"name\": \"c\", \"type\": \"conv2d\", \"inputs\": [\"x\", \"w\"], \"outputs\": [\"h\"],"
        " \"attrs\": {\"layout\": \"nchw\", \"stride\": [1, 1]}},"
        "{\"name\": \"sc\", \"type\": \"scale\", \"inputs\": [\"h\"], \"outputs\": [\"s\"], \"attrs\": {\"value\": 0.125}},"
        "{\"name\": \"s2\", \"type\": \"scale\", \"inputs\": [\"s\"], \"outputs\": [\"y\"], \"attrs\": {\"value\": -3}}]}";
    arena a = {0};
    wl_graph g;
    kt_err e;
    ck_assert_msg(load(t, NULL, 0, 0, &a, &g, &e) == 0, "%s: %s", e.path, e.msg);
    ck_assert_str_eq(wl_attr_str(&g.op[0], "layout", "?"), "nchw");
    const wl_attr *v = wl_attr_get(&g.op[1], "value");
    ck_assert(v && v->type == WA_REAL);
    ck_assert_double_eq(v->dval, 0.125);
    ck_assert_int_eq(wl_attr_int(&g.op[2], "value", 0), -3);
    arena_free(&a);
    const char *p =
        "{\"name\": \"a\", \"tensors\": {"
        "\"x\": {\"shape\": [4], \"dtype\": \"fp32\", \"kind\": \"input\"},"
        "\"y\": {\"shape\": [4], \"dtype\": \"fp32\", \"kind\": \"output\"}},"
        "\"ops\": [{\"name\": \"c\", \"type\": \"cumsum\", \"inputs\": [\"x\"], \"outputs\": [\"y\"],"
        " \"attrs\": {\"axis\": %s}}]}";
    char buf[1024];
    snprintf(buf, sizeof buf, p, "0.5");
    expect_err(buf, "ops[0].attrs.axis", "must be an integer");
    snprintf(buf, sizeof buf, p, "1e300");
    expect_err(buf, "ops[0].attrs.axis", "must be an integer");
    snprintf(buf, sizeof buf, p, "\"nchw\"");
    expect_err(buf, "ops[0].attrs.axis", "unknown parameter \"nchw\"");
    /* a norm's epsilon as PyTorch writes it (1e-5, 1e-12): real, and not where no op takes it */
    const char *n =
        "{\"name\": \"a\", \"tensors\": {"
        "\"x\": {\"shape\": [4, 8], \"dtype\": \"bf16\", \"kind\": \"input\"},"
        "\"y\": {\"shape\": [4, 8], \"dtype\": \"bf16\", \"kind\": \"output\"}},"
        "\"ops\": [{\"name\": \"n\", \"type\": \"%s\", \"inputs\": [\"x\"], \"outputs\": [\"y\"],"
        " \"attrs\": {\"eps\": %s}}]}";
    static const char *const NORMS[] = {"layernorm", "rmsnorm", "batchnorm"};
    for (int k = 0; k < 3; k++) {
        snprintf(buf, sizeof buf, n, NORMS[k], k == 1 ? "1e-12" : "0.00001");
        ck_assert_msg(load(buf, NULL, 0, 0, &a, &g, &e) == 0, "%s: %s: %s", NORMS[k], e.path, e.msg);
        v = wl_attr_get(&g.op[0], "eps");
        ck_assert(v && v->type == WA_REAL);
        ck_assert_double_eq(v->dval, k == 1 ? 1e-12 : 1e-5);
        arena_free(&a);
    }
    snprintf(buf, sizeof buf, n, "relu", "0.00001");
    expect_err(buf, "ops[0].attrs.eps", "relu: unknown attribute \"eps\"");
}
END_TEST

static Suite *wl_suite(void)
{
    Suite *s = suite_create("wl");
    TCase *t = tcase_create("wl_from_json");
    tcase_add_test(t, test_params_and_shapes);
    tcase_add_test(t, test_set_overrides);
    tcase_add_test(t, test_training_params);
    tcase_add_test(t, test_top_level_errors);
    tcase_add_test(t, test_dimension_errors);
    tcase_add_test(t, test_overflow);
    tcase_add_test(t, test_tensor_errors);
    tcase_add_test(t, test_attr_types);
    tcase_add_test(t, test_op_errors);
    tcase_add_test(t, test_attrs);
    suite_add_tcase(s, t);
    TCase *c = tcase_create("wl_build");
    tcase_add_test(c, test_build_in_code);
    suite_add_tcase(s, c);
    return s;
}

KT_TEST_MAIN(wl_suite)
