/* check_workloads: the shipped workloads, forward and derived training graphs, against closed
 * forms derived by hand from the models' sizes (docs/workloads.md, docs/training.md). */
#include <stdio.h>
#include <string.h>

#include "../src/model/autodiff.h"
#include "../src/model/op.h"
#include "../src/model/run.h"
#include "ktest.h"

typedef struct flops {
    int64_t gemm_fwd, gemm_all, attn_fwd, attn_all;
} flops;

static void load(const char *name, int training, arena *a, wl_graph *g)
{
    char path[512];
    kt_err e;
    err_clear(&e);
    snprintf(path, sizeof path, "%s/workloads/%s.json", KT_ROOT, name);
    ck_assert_msg(wl_load(path, NULL, 0, training, a, g, &e) == 0, "%s: %s: %s", path, e.path, e.msg);
}

/* load with one parameter set (like --set NAME=VALUE) */
static void load_set(const char *name, const char *param, int64_t value, int training, arena *a,
                     wl_graph *g)
{
    char path[512];
    kt_err e;
    err_clear(&e);
    snprintf(path, sizeof path, "%s/workloads/%s.json", KT_ROOT, name);
    wl_set set = {param, value};
    ck_assert_msg(wl_load(path, &set, 1, training, a, g, &e) == 0, "%s: %s: %s", path, e.path, e.msg);
}

/* The lookups (index elements) of the embedding with sparse_grad 1 that reads table t of the
 * forward graph f; 0 when none does. */
static int64_t sparse_lookups(const wl_graph *f, int t)
{
    for (int i = 0; i < f->nop; i++)
        if (f->op[i].type == OP_EMBEDDING && f->op[i].in[0] == t &&
            wl_attr_int(&f->op[i], "sparse_grad", 0))
            return f->t[f->op[i].in[1]].elems;
    return 0;
}

static void derive(const wl_graph *f, int optimizer, arena *a, wl_graph *g)
{
    kt_err e;
    err_clear(&e);
    ck_assert_msg(ad_training_graph(f, optimizer, a, g, &e) == 0, "%s: %s: %s", f->name, e.path, e.msg);
}

static flops count(const wl_graph *g)
{
    flops s = {0, 0, 0, 0};
    for (int i = 0; i < g->nop; i++) {
        op_work w;
        char msg[128];
        ck_assert_int_eq(op_work_of(g, &g->op[i], &w, msg, sizeof msg), 0);
        int fwd = g->op[i].phase == PH_FWD;
        if (op_is_gemm(g->op[i].type)) {
            s.gemm_all += w.flops_tensor;
            s.gemm_fwd += fwd ? w.flops_tensor : 0;
        } else if (w.kind == OPK_ATTN) {
            s.attn_all += w.flops_tensor;
            s.attn_fwd += fwd ? w.flops_tensor : 0;
        } else {
            ck_assert_int_eq(w.flops_tensor, 0);
        }
    }
    return s;
}

static int64_t P(const wl_graph *g, const char *name)
{
    int64_t v = wl_param(g, name, -1);
    ck_assert_int_gt(v, 0);
    return v;
}

static const char *const ALL[] = {"dlrm", "graphcast", "mgn", "nerf", "llama3-8b-ctx", "llama3-8b-tok"};
enum { NALL = sizeof ALL / sizeof ALL[0] };

/* Every derived training graph (each optimizer) passes wl_check (ad_training_graph calls it),
 * gradient tensors have their tensor's shape and dtype (a sparse table gradient: the looked-up
 * rows, [lookups, D]), every weight has exactly one final gradient (a graph output),
 * backward/optimizer ops point at a forward op, the forward part is the forward graph
 * unchanged, and only forward-written tensors are saved. DLRM runs with its sparse table
 * gradient (the default), which Adam refuses as torch.optim.Adam does, and with the dense one. */
START_TEST(test_training_graphs_consistent)
{
    for (int w = 0; w <= NALL; w++)
        for (int opt = OPTIM_NONE; opt <= OPTIM_ADAM; opt++) {
            arena a = {0};
            wl_graph f, g;
            if (w == NALL) /* DLRM with the dense table gradient */
                load_set("dlrm", "SPARSE_GRAD", 0, 1, &a, &f);
            else
                load(ALL[w], 1, &a, &f);
            int sparse = 0;
            for (int t = 0; t < f.ntensor; t++)
                sparse |= sparse_lookups(&f, t) > 0;
            ck_assert_int_eq(sparse, w == 0); /* DLRM's default only */
            if (sparse && opt == OPTIM_ADAM) {
                kt_err e;
                err_clear(&e);
                ck_assert_int_eq(ad_training_graph(&f, opt, &a, &g, &e), -1);
                ck_assert_ptr_nonnull(strstr(e.msg, "sparse gradient"));
                ck_assert_str_eq(e.path, "ops[6].attrs.sparse_grad"); /* the embedding */
                arena_free(&a);
                continue;
            }
            derive(&f, opt, &a, &g);
            for (int i = 0; i < f.nop; i++) {
                ck_assert_str_eq(g.op[i].name, f.op[i].name);
                ck_assert_int_eq(g.op[i].phase, PH_FWD);
            }
            int nopt = 0;
            for (int i = f.nop; i < g.nop; i++) {
                ck_assert_int_ne(g.op[i].phase, PH_FWD);
                ck_assert_int_ge(g.op[i].fwd, 0);
                ck_assert_int_lt(g.op[i].fwd, f.nop);
                nopt += g.op[i].phase == PH_OPT;
                if (g.op[i].phase == PH_OPT)
                    ck_assert_int_eq(g.op[i - 1].phase == PH_BWD || g.op[i - 1].phase == PH_OPT, 1);
            }
            int nweights = 0;
            for (int t = 0; t < g.ntensor; t++) {
                const wl_tensor *x = &g.t[t];
                if (x->grad_of >= 0) {
                    const wl_tensor *of = &g.t[x->grad_of];
                    ck_assert_int_lt(x->grad_of, f.ntensor);
                    ck_assert_int_eq(x->ndim, of->ndim);
                    int64_t rows = sparse_lookups(&f, x->grad_of);
                    for (int d = 0; d < x->ndim; d++)
                        ck_assert_int_eq(x->dim[d], d == 0 && rows ? rows : of->dim[d]);
                    ck_assert_int_eq(x->dt, of->dt);
                }
                if (x->saved)
                    ck_assert_int_ge(x->producer, 0);
                if (t >= f.ntensor || x->kind != TK_WEIGHT)
                    continue;
                nweights++;
                int finals = 0;
                for (int u = 0; u < g.ntensor; u++)
                    finals += g.t[u].grad_of == t && g.t[u].kind == TK_OUTPUT;
                ck_assert_msg(finals == 1, "%s: weight %s has %d final gradients", ALL[w], x->name, finals);
            }
            ck_assert_int_eq(nopt, opt == OPTIM_NONE ? 0 : nweights);
            arena_free(&a);
        }
}
END_TEST

/* NeRF: per sample 2*(PE*W + 7*W^2 + (W+PE)*W + W + (W+DE)*W2 + 3*W2) = 1,186,816 FLOP forward.
 * Training: dx and dW per layer, each a GEMM of the forward's size, except fc1 whose input x is
 * a graph input (no dx): 3*F - 2*PE*W per sample. */
START_TEST(test_nerf_flops)
{
    arena a = {0};
    wl_graph f, g;
    load("nerf", 1, &a, &f);
    derive(&f, OPTIM_NONE, &a, &g);
    int64_t B = P(&f, "B"), PE = P(&f, "PE"), DE = P(&f, "DE"), W = P(&f, "W"), W2 = P(&f, "W2");
    int64_t per = 2 * (PE * W + 7 * W * W + (W + PE) * W + W + (W + DE) * W2 + 3 * W2);
    ck_assert_int_eq(per, 1186816);
    flops s = count(&g);
    ck_assert_int_eq(s.gemm_fwd, B * per);
    ck_assert_int_eq(s.gemm_all, B * (3 * per - 2 * PE * W));
    ck_assert_int_eq(s.gemm_all, 924894363648LL);
    ck_assert_int_eq(s.attn_all, 0);
    arena_free(&a);
}
END_TEST

/* DLRM: per sample 2*(DENSE*BOT1 + BOT1*BOT2 + BOT2*D + (T+1)^2*D + I*TOP1 + TOP1*TOP2 +
 * TOP2*TOP3 + TOP3*TOP4 + TOP4) with I = D + T(T+1)/2; the interaction bmm has both operands
 * requiring gradients (2 backward GEMMs); the bottom MLP's first layer has no dx. */
START_TEST(test_dlrm_flops)
{
    arena a = {0};
    wl_graph f, g;
    load("dlrm", 1, &a, &f);
    derive(&f, OPTIM_NONE, &a, &g);
    int64_t B = P(&f, "B"), DENSE = P(&f, "DENSE"), BOT1 = P(&f, "BOT1"), BOT2 = P(&f, "BOT2"),
            D = P(&f, "D"), T = P(&f, "T"), TOP1 = P(&f, "TOP1"), TOP2 = P(&f, "TOP2"),
            TOP3 = P(&f, "TOP3"), TOP4 = P(&f, "TOP4");
    int64_t I = D + (T + 1) * T / 2;
    int64_t per = 2 * (DENSE * BOT1 + BOT1 * BOT2 + BOT2 * D + (T + 1) * (T + 1) * D + I * TOP1 +
                       TOP1 * TOP2 + TOP2 * TOP3 + TOP3 * TOP4 + TOP4);
    ck_assert_int_eq(per, 4916992);
    flops s = count(&g);
    ck_assert_int_eq(s.gemm_fwd, B * per);
    ck_assert_int_eq(s.gemm_all, B * (3 * per - 2 * DENSE * BOT1));
    /* the embedding gradient is sparse (dlrm_s_pytorch.py's sparse=True): the B*T looked-up rows
     * of dy, bf16; dy is a strided slice of the interaction concat's gradient, so it is copied
     * contiguous first (one copy kernel: B*T*D*2 bytes read and written), and with SGD the rows
     * are added into the table in place (an index_add) */
    int tab = wl_find_tensor(&g, "emb_table");
    int found = 0;
    for (int t = 0; t < g.ntensor; t++)
        if (g.t[t].grad_of == tab && g.t[t].kind == TK_OUTPUT) {
            ck_assert_int_eq(g.t[t].bytes, B * T * D * 2);
            ck_assert_int_eq(g.t[t].bytes, 27262976);
            int p = g.t[t].producer;
            ck_assert_int_eq(g.op[p].type, OP_VIEW);
            int src = g.op[p].in[0];
            ck_assert_int_eq(g.op[g.t[src].producer].type, OP_COPY);
            found = 1;
        }
    ck_assert_int_eq(found, 1);
    arena_free(&a);
    /* with SGD: one index_add of those rows into the table, in place */
    load("dlrm", 1, &a, &f);
    derive(&f, OPTIM_SGD, &a, &g);
    found = 0;
    for (int i = 0; i < g.nop; i++)
        if (g.op[i].phase == PH_OPT && g.op[i].in[0] == wl_find_tensor(&g, "emb_table")) {
            ck_assert_int_eq(g.op[i].type, OP_INDEX_ADD);
            ck_assert_int_eq(g.t[g.op[i].in[1]].elems, B * T);
            found++;
        }
    ck_assert_int_eq(found, 1);
    arena_free(&a);
    /* SPARSE_GRAD=0: PyTorch's dense backward, the [T*ROWS, D] table */
    load_set("dlrm", "SPARSE_GRAD", 0, 1, &a, &f);
    derive(&f, OPTIM_NONE, &a, &g);
    found = 0;
    for (int t = 0; t < g.ntensor; t++)
        if (g.t[t].grad_of == tab && g.t[t].kind == TK_OUTPUT) {
            ck_assert_int_eq(g.t[t].bytes, P(&f, "T") * P(&f, "ROWS") * D * 2);
            ck_assert_int_eq(g.t[t].bytes, 665600000);
            found = 1;
        }
    ck_assert_int_eq(found, 1);
    arena_free(&a);
}
END_TEST

/* MGN / GraphCast block: edges 2*(3L*L + (h-1)*L*L), nodes 2*(2L*L + (h-1)*L*L) forward with h
 * linear layers per MLP (MGN h=3, GraphCast h=2). The latent inputs v and e require gradients
 * (the block sits inside a stack of processor blocks), so every layer has dx and dW:
 * training = 3F; the gradients of v and e are graph outputs, and the gathers' backward
 * scatters them (index_add). */
static void check_gnn(const char *name, int64_t layers, int64_t want_fwd)
{
    arena a = {0};
    wl_graph f, g;
    load(name, 1, &a, &f);
    derive(&f, OPTIM_NONE, &a, &g);
    int64_t N = P(&f, "N"), E = P(&f, "E"), L = P(&f, "L");
    int64_t fwd = E * 2 * (3 * L * L + (layers - 1) * L * L) + N * 2 * (2 * L * L + (layers - 1) * L * L);
    ck_assert_int_eq(fwd, want_fwd);
    flops s = count(&g);
    ck_assert_int_eq(s.gemm_fwd, fwd);
    ck_assert_int_eq(s.gemm_all, 3 * fwd);
    int v = wl_find_tensor(&f, "v"), ev = wl_find_tensor(&f, "e"), gv = 0, ge = 0, adds = 0;
    for (int t = 0; t < g.ntensor; t++) {
        gv += g.t[t].grad_of == v && g.t[t].kind == TK_OUTPUT;
        ge += g.t[t].grad_of == ev && g.t[t].kind == TK_OUTPUT;
    }
    for (int i = 0; i < g.nop; i++)
        adds += g.op[i].type == OP_INDEX_ADD;
    ck_assert_int_eq(gv, 1);
    ck_assert_int_eq(ge, 1);
    ck_assert_int_eq(adds, 2); /* d v from the two gathers (senders, receivers) */
    /* the scatter_add's backward is a gather of the aggregate's gradient (E rows) */
    int op = -1;
    for (int i = 0; i < g.nop; i++)
        if (!strcmp(g.op[i].name, "scatter.grad_x"))
            op = i;
    ck_assert_int_ge(op, 0);
    ck_assert_int_eq(g.op[op].type, OP_GATHER);
    ck_assert_int_eq(g.t[g.op[op].out[0]].dim[0], E);
    arena_free(&a);
}

START_TEST(test_mgn_flops)
{
    check_gnn("mgn", 3, 73014444032LL);
}
END_TEST

START_TEST(test_graphcast_flops)
{
    check_gnn("graphcast", 2, 751580479488LL);
}
END_TEST

/* Llama 3 8B layer: matmul weights D*H*HD + 2*D*KVH*HD + H*HD*D + 3*D*F = 218,103,808 (+2D
 * norm weights = 218,112,000); projections 2 FLOP per weight per token, all with inputs that
 * need gradients (3x in training). Attention forward 4*B*H*HD*pairs (QK^T and PV), backward 5 of
 * those GEMMs for 2 (FlashAttention-2, Dao 2023 section 3.2): 2.5x. ctx (training params B=2,
 * S=2048): causal pairs S(S+1)/2; tok: S=1 against P+1 keys. */
static void check_llama(const char *name, int ctx)
{
    arena a = {0};
    wl_graph f, g;
    load(name, 1, &a, &f);
    derive(&f, OPTIM_NONE, &a, &g);
    int64_t B = P(&f, "B"), S = P(&f, "S"), D = P(&f, "D"), H = P(&f, "H"), KVH = P(&f, "KVH"),
            HD = P(&f, "HD"), F = P(&f, "F");
    int64_t mw = D * H * HD + 2 * D * KVH * HD + H * HD * D + 3 * D * F;
    ck_assert_int_eq(mw, 218103808);
    int64_t wsum = 0;
    for (int t = 0; t < f.ntensor; t++)
        wsum += f.t[t].kind == TK_WEIGHT ? f.t[t].elems : 0;
    ck_assert_int_eq(wsum, 218112000);
    ck_assert_int_eq(wsum, mw + 2 * D);
    int64_t pairs = ctx ? S * (S + 1) / 2 : S * (P(&f, "P") + 1);
    int64_t attn = 4 * B * H * HD * pairs;
    if (ctx) {
        ck_assert_int_eq(B, 2); /* training_params */
        ck_assert_int_eq(attn, 68753031168LL);
    } else {
        ck_assert_int_eq(attn, 2148532224LL);
    }
    flops s = count(&g);
    ck_assert_int_eq(s.gemm_fwd, 2 * mw * B * S);
    ck_assert_int_eq(s.gemm_all, 3 * 2 * mw * B * S);
    ck_assert_int_eq(s.attn_fwd, attn);
    ck_assert_int_eq(s.attn_all * 2, attn * 7);
    arena_free(&a);
}

START_TEST(test_llama_ctx_flops)
{
    check_llama("llama3-8b-ctx", 1);
}
END_TEST

START_TEST(test_llama_tok_flops)
{
    check_llama("llama3-8b-tok", 0);
}
END_TEST

/* The whole Llama 3 8B (workloads/models/llama3-8b.json): 32 layers, embedding and LM head of
 * V x D = 128256 x 4096 each, a final norm of D. Parameters 32 x 218,112,000 + 2 x 525,336,576 +
 * 4,096 = 8,030,261,248 (the published 8.03B); tensor FLOPs 32 x the layer's (closed form above)
 * + the LM head's 2*T*D*V, T = B*S tokens; training 3x the GEMMs (every GEMM input needs a
 * gradient: the first layer's input comes from the embedding table) and 3.5x attention. The
 * count reaches any depth: L=80 is 1 + 80 x 24 + 2 ops. */
START_TEST(test_llama_model)
{
    for (int training = 0; training <= 1; training++) {
        arena a = {0};
        wl_graph f, g;
        load("models/llama3-8b", training, &a, &f);
        int64_t B = P(&f, "B"), S = P(&f, "S"), D = P(&f, "D"), H = P(&f, "H"), KVH = P(&f, "KVH"),
                HD = P(&f, "HD"), F = P(&f, "F"), V = P(&f, "V"), L = P(&f, "L"), T = B * S;
        ck_assert_int_eq(L, 32);
        ck_assert_int_eq(B, training ? 2 : 4);
        ck_assert_int_eq(f.nop, 1 + 32 * 24 + 2);
        ck_assert_int_eq(f.nblock, 34);
        ck_assert_str_eq(f.block[0].name, "head");
        ck_assert_str_eq(f.block[32].name, "layer31");
        ck_assert_str_eq(f.block[33].name, "tail");
        int64_t wsum = 0;
        for (int t = 0; t < f.ntensor; t++)
            wsum += f.t[t].kind == TK_WEIGHT ? f.t[t].elems : 0;
        ck_assert_int_eq(wsum, 8030261248LL);
        ck_assert_int_eq(wsum, 32 * 218112000LL + 2 * V * D + D);
        int64_t mw = D * H * HD + 2 * D * KVH * HD + H * HD * D + 3 * D * F;
        int64_t attn = 4 * B * H * HD * (S * (S + 1) / 2);
        int64_t gemm = 32 * 2 * mw * T + 2 * T * D * V;
        flops s = count(&f);
        ck_assert_int_eq(s.gemm_fwd, gemm);
        ck_assert_int_eq(s.attn_fwd, 32 * attn);
        if (!training)
            ck_assert_int_eq(s.gemm_fwd + s.attn_fwd, 32 * 3710918852608LL + 2 * 8192 * 4096 * 128256LL);
        if (training) {
            derive(&f, OPTIM_ADAM, &a, &g);
            s = count(&g);
            ck_assert_int_eq(s.gemm_all, 3 * gemm);
            ck_assert_int_eq(s.attn_all * 2, 7 * 32 * attn);
        }
        arena_free(&a);
    }
    arena a = {0};
    wl_graph f;
    kt_err e;
    err_clear(&e);
    char path[512];
    snprintf(path, sizeof path, "%s/workloads/models/llama3-8b.json", KT_ROOT);
    wl_set deep = {"L", 80};
    ck_assert_int_eq(wl_load(path, &deep, 1, 0, &a, &f, &e), 0);
    ck_assert_int_eq(f.nop, 1 + 80 * 24 + 2);
    ck_assert_str_eq(f.op[f.nop - 3].name, "layer79.ffn_res");
    arena_free(&a);
}
END_TEST

/* Mixtral 8x7B (workloads/models/mixtral-8x7b.json): per layer the Llama-shaped attention
 * (41,943,040 weights), a router of D x E, E = 8 experts of 3 x D x F and two norms: 1,451,270,144;
 * with the embedding and LM head of 32000 x 4096 and the final norm: 46,702,792,704 (the
 * published 46.7B). Tensor FLOPs: the expert GEMMs run over the capacity buffers, E x C rows with
 * C = ceil(T K 1.25 / E) = 2560 at T = 8192 tokens, K = 2: 3 x 2 E C D F per layer; attention
 * projections 2 T (2 D H HD + 2 D KVH HD), the router 2 T D E, the LM head 2 T D V. Training
 * derives 3x every GEMM (the expert buffers and the router need their gradients). */
START_TEST(test_mixtral_model)
{
    for (int training = 0; training <= 1; training++) {
        arena a = {0};
        wl_graph f, g;
        load("models/mixtral-8x7b", training, &a, &f);
        int64_t B = P(&f, "B"), S = P(&f, "S"), D = P(&f, "D"), H = P(&f, "H"), KVH = P(&f, "KVH"),
                HD = P(&f, "HD"), F = P(&f, "F"), V = P(&f, "V"), E = P(&f, "E"), T = B * S;
        ck_assert_int_eq(f.nop, 1 + 32 * 31 + 2);
        int64_t wsum = 0;
        for (int t = 0; t < f.ntensor; t++)
            wsum += f.t[t].kind == TK_WEIGHT ? f.t[t].elems : 0;
        ck_assert_int_eq(wsum, 46702792704LL);
        ck_assert_int_eq(wsum, 32 * (41943040LL + D * E + E * 3 * D * F + 2 * D) + 2 * V * D + D);
        int64_t C = (T * 2 * 125 + E * 100 - 1) / (E * 100);
        ck_assert_int_eq(C, training ? 1280 : 2560);
        int64_t layer = 3 * 2 * E * C * D * F + 2 * T * (2 * D * H * HD + 2 * D * KVH * HD) + 2 * T * D * E;
        int64_t gemm = 32 * layer + 2 * T * D * V;
        flops s = count(&f);
        ck_assert_int_eq(s.gemm_fwd, gemm);
        if (training) {
            derive(&f, OPTIM_ADAM, &a, &g);
            s = count(&g);
            ck_assert_int_eq(s.gemm_all, 3 * gemm);
        }
        arena_free(&a);
    }
}
END_TEST

/* Inference loads keep the inference defaults (llama ctx B=4) and derive the same structure. */
START_TEST(test_inference_params_training_derivation)
{
    arena a = {0};
    wl_graph f, g;
    load("llama3-8b-ctx", 0, &a, &f);
    ck_assert_int_eq(P(&f, "B"), 4);
    derive(&f, OPTIM_ADAM, &a, &g);
    flops s = count(&g);
    ck_assert_int_eq(s.gemm_all, 3 * 2 * 218103808LL * 4 * 2048);
    arena_free(&a);
}
END_TEST

static Suite *workloads_suite(void)
{
    Suite *s = suite_create("workloads");
    TCase *tc = tcase_create("training");
    tcase_add_test(tc, test_training_graphs_consistent);
    tcase_add_test(tc, test_nerf_flops);
    tcase_add_test(tc, test_dlrm_flops);
    tcase_add_test(tc, test_mgn_flops);
    tcase_add_test(tc, test_graphcast_flops);
    tcase_add_test(tc, test_llama_ctx_flops);
    tcase_add_test(tc, test_llama_tok_flops);
    tcase_add_test(tc, test_inference_params_training_derivation);
    tcase_add_test(tc, test_llama_model);
    tcase_add_test(tc, test_mixtral_model);
    suite_add_tcase(s, tc);
    return s;
}

KT_TEST_MAIN(workloads_suite)
