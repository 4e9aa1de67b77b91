/* op: the table of operator types - shape rules, FLOPs, bytes, execution unit and tiling.
 *
 * FLOPs count 2 per multiply-add. Elementwise costs per element are instruction counts of the
 * usual CUDA implementations (PyTorch's ATen kernels): a transcendental (exp, tanh, erf, rsqrt)
 * is one SFU op plus the FP32 arithmetic around it. Bytes are unique bytes: each input read once,
 * each output written once; re-reads are the cost model's business (cost.c). */
#include "op.h"
#include "roof.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Per-element costs (simt_flops_per_elem, sfu_per_elem) are instruction counts of the usual
 * CUDA implementations (PyTorch's ATen kernels): a transcendental (exp, tanh, erf, rsqrt) is one
 * SFU op plus the FP32 arithmetic around it; elementwise costs count per output element, row
 * costs per input element.
 * Row kernels (inst_per_elem, inst_per_cta): issued thread-instructions of ATen's kernels
 * (PyTorch 2.11, bf16, sm_90), from ncu's smsp__inst_executed on the H200. These kernels are
 * instruction-issue bound (ncu: 77-91% of SM issue throughput), so their time follows these
 * counts, not their FLOPs. Reductions (one measured shape cannot separate per-row from
 * per-element cost) and backward kernels keep the FLOP estimate.
 * softmax (hw/calibrate/ncu_kernels.py, results/raw/ncu_kernels.csv): the warp-per-row kernel,
 * per element (rows <= 1024; SOFTMAX_BLOCK_INST_PER_ELEM above).
 * layernorm and rmsnorm (norm_warp_inst): ATen's vectorized_layer_norm_kernel runs a row per CTA
 * of NORM_WARPS warps whose lanes load NORM_VEC_ELEMS-element vectors, so one warp-iteration
 * covers NORM_WARP_ITER_ELEMS elements of the row; its warp-instructions per row are a base
 * (block reductions, prologue), a part per warp that has any element (its Welford merge and
 * reduction share) and a part per warp-iteration. ncu on the H200 (hw/calibrate/apps
 * norm_probe.py, results/raw-norm-probe, 12 row lengths D = 64..4096): least squares through
 * D = 64, 256, 1024, 3072; the other eight D held out, all within 1.2% (layernorm 920..4935,
 * rmsnorm 491..2002 warp-instructions per row). A linear fit through D = 128 and 4096 was 20%
 * low at D = 512 (GraphCast's layer norm). */
#define EW(fl, sfu) .simt_flops_per_elem = fl, .sfu_per_elem = sfu
#define ARITY(lo, hi) .min_in = lo, .max_in = hi, .max_out = 1
#define UNARY_ACT(nm, fl, sfu, out) \
    {.name = nm, .kind = OPK_STREAM, ARITY(1, 1), .attrs = "", \
     .flags = OPF_ELEMENTWISE | OPF_EPILOGUE, EW(fl, sfu), .fuse = FUSE_POINTWISE, .grad = GR_ACT, \
     .grad_saves_out = out}
#define BINARY(nm, rule) \
    {.name = nm, .kind = OPK_STREAM, ARITY(2, 2), .attrs = "", \
     .flags = OPF_ELEMENTWISE | OPF_EPILOGUE, EW(1, 0), .fuse = FUSE_POINTWISE, .grad = rule}
/* index ops; the scatters take an optional destination first: [dst, index, src] */
#define INDEX_OP(nm, k, dual, hi) \
    {.name = nm, .kclass = KC_INDEX, .kind = k, .min_in = 2, .max_in = hi, .max_out = 1, .attrs = "axis,", \
     .flags = OPF_INDEX, .fuse = FUSE_NONE, .fuse_why = INDEX_WHY, .grad = GR_DUAL, .grad_dual = dual}
static const char INDEX_WHY[] = "index op: no fusion across gathers/scatters";
static const char WINDOW_WHY[] = "pooling window: each output reads a window that spans "
                                 "neighbouring rows of its input (no epilogue or stitch rule "
                                 "covers the halo)";
static const char SORT_WHY[] = "radix select/sort: several passes over each row (and several "
                               "kernels), no epilogue";
static const char MOE_WHY[] = "mixture-of-experts routing: a token's rows go to (or come from) "
                              "buffers chosen by a count over all tokens (a library kernel)";
#define CONV_ATTRS "stride,padding,dilation,groups,layout,"
#define POOL_ATTRS "op,kernel,stride,padding,layout,"
/* ATen batch_norm_transform_input: gamma * (x - mean) * invstd + beta */
enum { BN_NORM_FLOPS_PER_ELEM = 4 };
/* dropout per element (ATen fused_dropout_kernel_vec): a quarter of one Philox4x32-10 call
 * (curand_uniform4: 10 rounds of 2 mul.hi + 2 mul.lo + 4 xor + 2 key adds = 100 integer
 * instructions for 4 numbers; Salmon et al., SC'11, and curand_philox4x32_x.h), 3 for the
 * uint -> float uniform, and compare, scale-multiply, select and mask store: 25 + 3 + 4 */
enum { PHILOX_INST_PER_ELEM = 25, DROPOUT_FLOPS_PER_ELEM = PHILOX_INST_PER_ELEM + 3 + 4 };
/* torch.nn.Dropout's default p = 0.5, in thousandths */
enum { DROPOUT_DEFAULT_PERMILLE = 500 };

static const op_info OP_TABLE[OP_COUNT] = {
    /* matmul: an optional third input C is added in the epilogue (cuBLAS beta = 1: addmm,
     * baddbmm with a non-zero C) */
    [OP_MATMUL] = {.name = "matmul", .kclass = KC_GEMM, .kind = OPK_GEMM, ARITY(2, 3), .attrs = "transpose_a,transpose_b,",
                   .flags = OPF_GEMM | OPF_TENSOR, .fuse = FUSE_GEMM, .grad = GR_MATMUL},
    [OP_LINEAR] = {.name = "linear", .kclass = KC_GEMM, .kind = OPK_GEMM, ARITY(2, 3), .attrs = "transpose_b,",
                   .flags = OPF_GEMM | OPF_TENSOR, .fuse = FUSE_GEMM, .grad = GR_LINEAR},
    [OP_RELU] = UNARY_ACT("relu", 1, 0, 1),
    [OP_GELU] = {.name = "gelu", .kind = OPK_STREAM, ARITY(1, 1), .attrs = "approximate,",
                 .flags = OPF_ELEMENTWISE | OPF_EPILOGUE, EW(8, 1), .fuse = FUSE_POINTWISE,
                 .grad = GR_ACT},
    [OP_SILU] = UNARY_ACT("silu", 4, 1, 0),
    [OP_SIGMOID] = UNARY_ACT("sigmoid", 3, 1, 1),
    [OP_TANH] = UNARY_ACT("tanh", 1, 1, 1),
    [OP_EXP] = UNARY_ACT("exp", 1, 1, 1),
    [OP_LOG] = UNARY_ACT("log", 1, 1, 0),
    [OP_NEG] = {.name = "neg", .kind = OPK_STREAM, ARITY(1, 1), .attrs = "",
                .flags = OPF_ELEMENTWISE | OPF_EPILOGUE, EW(1, 0), .fuse = FUSE_POINTWISE, .grad = GR_SELF},
    [OP_ABS] = UNARY_ACT("abs", 1, 0, 0),
    [OP_SQRT] = UNARY_ACT("sqrt", 0, 1, 1),
    [OP_RSQRT] = UNARY_ACT("rsqrt", 0, 1, 1),
    [OP_SQUARE] = UNARY_ACT("square", 1, 0, 0),
    [OP_SCALE] = {.name = "scale", .kind = OPK_STREAM, ARITY(1, 1), .attrs = "value,",
                  .flags = OPF_ELEMENTWISE | OPF_EPILOGUE, EW(1, 0), .fuse = FUSE_POINTWISE, .grad = GR_SELF},
    [OP_COPY] = {.name = "copy", .kclass = KC_COPY, .kind = OPK_STREAM, ARITY(1, 1), .attrs = "",
                 .flags = OPF_ELEMENTWISE | OPF_EPILOGUE, .fuse = FUSE_POINTWISE, .grad = GR_SELF},
    [OP_CAST] = {.name = "cast", .kclass = KC_COPY, .kind = OPK_STREAM, ARITY(1, 1), .attrs = "",
                 .flags = OPF_ELEMENTWISE | OPF_EPILOGUE, .fuse = FUSE_POINTWISE, .grad = GR_SELF},
    [OP_FILL] = {.name = "fill", .kclass = KC_FILL, .kind = OPK_STREAM, ARITY(0, 0), .attrs = "value,",
                 .flags = OPF_ELEMENTWISE, .fuse = FUSE_POINTWISE, .grad = GR_NONE},
    [OP_ADD] = BINARY("add", GR_ADD),
    [OP_SUB] = BINARY("sub", GR_SUB),
    [OP_MUL] = BINARY("mul", GR_MUL),
    [OP_DIV] = BINARY("div", GR_DIV),
    [OP_ACT_BWD] = {.name = "act_backward", .kind = OPK_STREAM, ARITY(2, 2), .attrs = "op,",
                    .flags = OPF_ELEMENTWISE | OPF_EPILOGUE | OPF_TRAIN_ONLY, EW(6, 1),
                    .fuse = FUSE_POINTWISE, .grad = GR_UNSUPPORTED},
    [OP_ADAM] = {.name = "adam_update", .kclass = KC_OPTIMIZER, .kind = OPK_STREAM, .min_in = 4, .max_in = 4, .max_out = 3,
                 .attrs = "", .flags = OPF_TRAIN_ONLY, EW(12, 1), .fuse = FUSE_NONE,
                 .fuse_why = "op does not fuse", .grad = GR_UNSUPPORTED},
    [OP_REDUCE] = {.name = "reduce", .kclass = KC_REDUCE, .kind = OPK_ROW, ARITY(1, 1), .attrs = "op,axes,keepdim,",
                   EW(1, 0), .rowgrid = ROWGRID_PACK, .fuse = FUSE_ROW, .grad = GR_REDUCE},
    [OP_SOFTMAX] = {.name = "softmax", .kclass = KC_SOFTMAX, .kind = OPK_ROW, ARITY(1, 1), .attrs = "axis,", EW(4, 1),
                    .inst_per_elem = 48.5, .rowgrid = ROWGRID_WARP, .fuse = FUSE_ROW,
                    .grad = GR_SOFTMAX},
    [OP_SOFTMAX_BWD] = {.name = "softmax_backward", .kclass = KC_SOFTMAX, .kind = OPK_ROW, ARITY(2, 2), .attrs = "axis,",
                        .flags = OPF_TRAIN_ONLY, EW(4, 0), .rowgrid = ROWGRID_WARP,
                        .fuse = FUSE_ROW, .grad = GR_UNSUPPORTED},
    [OP_LAYERNORM] = {.name = "layernorm", .kclass = KC_NORM, .kind = OPK_ROW, ARITY(1, 3), .attrs = "eps,", EW(8, 0),
                      .norm_warp_inst = {696.4, 116.6, 117.82}, .sfu_per_row = 1, .fuse = FUSE_ROW,
                      .grad = GR_NORM},
    [OP_RMSNORM] = {.name = "rmsnorm", .kclass = KC_NORM, .kind = OPK_ROW, ARITY(1, 2), .attrs = "eps,", EW(5, 0),
                    .norm_warp_inst = {428.1, 17.3, 47.03}, .sfu_per_row = 1, .fuse = FUSE_ROW,
                    .grad = GR_NORM},
    [OP_NORM_BWD] = {.name = "norm_backward", .kclass = KC_NORM, .kind = OPK_ROW, .min_in = 2, .max_in = 4, .max_out = 3,
                     .attrs = "op,", .flags = OPF_TRAIN_ONLY, EW(12, 0), .sfu_per_row = 1, .row_input = 1,
                     .fuse = FUSE_ROW, .grad = GR_UNSUPPORTED},
    /* attention: an optional fourth input is an additive mask read by the kernel */
    [OP_ATTENTION] = {.name = "attention", .kclass = KC_ATTENTION, .kind = OPK_ATTN, ARITY(3, 4), .attrs = "causal,",
                      .flags = OPF_TENSOR, .fuse = FUSE_NONE,
                      .fuse_why = "attention kernel takes no epilogue", .grad = GR_ATTENTION},
    [OP_ATTN_BWD] = {.name = "attention_backward", .kclass = KC_ATTENTION, .kind = OPK_ATTN, .min_in = 5, .max_in = 6,
                     .max_out = 3, .attrs = "causal,", .flags = OPF_TENSOR | OPF_TRAIN_ONLY,
                     .fuse = FUSE_NONE, .fuse_why = "attention kernel takes no epilogue",
                     .grad = GR_UNSUPPORTED},
    [OP_EMBEDDING] = {.name = "embedding", .kclass = KC_INDEX, .kind = OPK_GATHER, ARITY(2, 2), .attrs = "sparse_grad,",
                      .flags = OPF_INDEX, .fuse = FUSE_NONE, .fuse_why = INDEX_WHY,
                      .grad = GR_EMBEDDING},
    [OP_GATHER] = INDEX_OP("gather", OPK_GATHER, OP_SCATTER_ADD, 2),
    [OP_INDEX_SELECT] = INDEX_OP("index_select", OPK_GATHER, OP_INDEX_ADD, 2),
    [OP_SCATTER_ADD] = INDEX_OP("scatter_add", OPK_SCATTER, OP_GATHER, 3),
    [OP_INDEX_ADD] = INDEX_OP("index_add", OPK_SCATTER, OP_INDEX_SELECT, 3),
    [OP_EMBEDDING_BWD] = {.name = "embedding_backward", .kclass = KC_INDEX, .kind = OPK_SCATTER, ARITY(2, 2), .attrs = "",
                          .flags = OPF_INDEX | OPF_TRAIN_ONLY, .fuse = FUSE_NONE,
                          .fuse_why = INDEX_WHY, .grad = GR_UNSUPPORTED},
    [OP_INDEX_COPY] = {.name = "index_copy", .kclass = KC_INDEX, .kind = OPK_STREAM, ARITY(3, 3), .attrs = "axis,",
                       .flags = OPF_INDEX, .fuse = FUSE_NONE, .fuse_why = INDEX_WHY,
                       .grad = GR_INDEX_COPY},
    [OP_CONCAT] = {.name = "concat", .kclass = KC_COPY, .kind = OPK_STREAM, ARITY(1, -1), .attrs = "axis,",
                   .fuse = FUSE_INPLACE, .grad = GR_CONCAT},
    /* slice: a copy of the kept part, or with "copy": false a free view (torch.narrow/split) */
    [OP_SLICE] = {.name = "slice", .kclass = KC_COPY, .kind = OPK_STREAM, ARITY(1, 1), .attrs = "axis,start,end,copy,",
                  .fuse = FUSE_POINTWISE, .grad = GR_SLICE},
    [OP_TRANSPOSE] = {.name = "transpose", .kclass = KC_COPY, .kind = OPK_STREAM, ARITY(1, 1), .attrs = "perm,copy,",
                      .fuse = FUSE_POINTWISE, .grad = GR_TRANSPOSE},
    [OP_RESHAPE] = {.name = "reshape", .kclass = KC_COPY, .kind = OPK_FREE, ARITY(1, 1), .attrs = "copy,",
                    .fuse = FUSE_POINTWISE, .grad = GR_VIEW},
    [OP_VIEW] = {.name = "view", .kclass = KC_COPY, .kind = OPK_FREE, ARITY(1, 1), .attrs = "copy,",
                 .fuse = FUSE_POINTWISE, .grad = GR_VIEW},
    [OP_ROPE] = {.name = "rope", .kind = OPK_STREAM, ARITY(1, 3), .attrs = "",
                 .flags = OPF_ELEMENTWISE | OPF_EPILOGUE, EW(3, 0), .fuse = FUSE_POINTWISE,
                 .grad = GR_ROPE},
    /* broadcast copy (reduce backward): a store per output element; "copy": false is a free
     * view (torch.expand: stride 0 along the broadcast axes) */
    [OP_EXPAND] = {.name = "expand", .kclass = KC_COPY, .kind = OPK_STREAM, ARITY(1, 1), .attrs = "copy,",
                   .fuse = FUSE_POINTWISE, .grad = GR_EXPAND},
    /* Convolutions run as cuDNN implicit GEMMs (op_work_of: M = N*Ho*Wo, N = Cout/groups,
     * K = Cin/groups*KH*KW per group; depthwise convs are direct SIMT kernels). cuDNN's runtime
     * fusion engines take pointwise epilogues (bias, activation, residual add, scale/shift) on
     * the output tile (cuDNN developer guide, "Graph API: runtime fusion engines"), so a conv
     * leads a GEMM group. */
    [OP_CONV2D] = {.name = "conv2d", .kclass = KC_GEMM, .kind = OPK_GEMM, ARITY(2, 3), .attrs = CONV_ATTRS,
                   .flags = OPF_TENSOR | OPF_CONV, .fuse = FUSE_GEMM, .grad = GR_CONV},
    /* also a forward op: a transposed convolution (cuDNN runs it as this data gradient) */
    [OP_CONV2D_DGRAD] = {.name = "conv2d_dgrad", .kclass = KC_GEMM, .kind = OPK_GEMM, ARITY(2, 2), .attrs = CONV_ATTRS,
                         .flags = OPF_TENSOR | OPF_CONV, .fuse = FUSE_GEMM, .grad = GR_CONV_T},
    [OP_CONV2D_WGRAD] = {.name = "conv2d_wgrad", .kclass = KC_GEMM, .kind = OPK_GEMM, ARITY(2, 2), .attrs = CONV_ATTRS,
                         .flags = OPF_TENSOR | OPF_CONV | OPF_TRAIN_ONLY, .fuse = FUSE_GEMM,
                         .grad = GR_UNSUPPORTED},
    /* batchnorm: inference is a per-channel scale and shift (ATen batch_norm_transform_input:
     * (x - mean) * invstd * gamma + beta, 4 FP32 ops per element), pointwise like any epilogue;
     * training (attr "training": 1) is a per-channel reduction then that pass (op_work_of makes
     * it a row op: rows = channels), which vf treats as a row op */
    [OP_BATCHNORM] = {.name = "batchnorm", .kclass = KC_NORM, .kind = OPK_STREAM, ARITY(1, 3), .attrs = "training,axis,eps,",
                      .flags = OPF_EPILOGUE, EW(BN_NORM_FLOPS_PER_ELEM, 0), .fuse = FUSE_POINTWISE,
                      .grad = GR_BATCHNORM},
    [OP_BATCHNORM_BWD] = {.name = "batchnorm_backward", .kclass = KC_NORM, .kind = OPK_ROW, .min_in = 2, .max_in = 3,
                          .max_out = 3, .attrs = "training,axis,eps,", .flags = OPF_TRAIN_ONLY,
                          .row_input = 1, .fuse = FUSE_ROW, .grad = GR_UNSUPPORTED},
    [OP_POOL2D] = {.name = "pool2d", .kclass = KC_POOL, .kind = OPK_STREAM, .min_in = 1, .max_in = 1, .max_out = 2,
                   .attrs = POOL_ATTRS, .fuse = FUSE_NONE, .fuse_why = WINDOW_WHY, .grad = GR_POOL},
    [OP_POOL2D_BWD] = {.name = "pool2d_backward", .kclass = KC_POOL, .kind = OPK_STREAM, .min_in = 1, .max_in = 2,
                       .max_out = 1, .attrs = POOL_ATTRS, .flags = OPF_TRAIN_ONLY, .fuse = FUSE_NONE,
                       .fuse_why = WINDOW_WHY, .grad = GR_UNSUPPORTED},
    [OP_TOPK] = {.name = "topk", .kclass = KC_INDEX, .kind = OPK_SORT, .min_in = 1, .max_in = 1, .min_out = 2, .max_out = 2,
                 .attrs = "k,axis,", .fuse = FUSE_NONE, .fuse_why = SORT_WHY, .grad = GR_SELECT},
    /* argmax: ATen's reduction kernel with an (value, index) accumulator (Reduce.cuh,
     * ArgMaxOps): a compare and a select per element, grids as `reduce` */
    [OP_ARGMAX] = {.name = "argmax", .kclass = KC_REDUCE, .kind = OPK_ROW, ARITY(1, 1), .attrs = "axis,", EW(2, 0),
                   .rowgrid = ROWGRID_PACK, .fuse = FUSE_ROW, .grad = GR_NONE},
    [OP_SORT] = {.name = "sort", .kclass = KC_INDEX, .kind = OPK_SORT, .min_in = 1, .max_in = 1, .min_out = 2, .max_out = 2,
                 .attrs = "axis,", .fuse = FUSE_NONE, .fuse_why = SORT_WHY, .grad = GR_SELECT},
    /* cumsum: one add per element, one read and one write (ATen's scan kernels, cost.c) */
    [OP_CUMSUM] = {.name = "cumsum", .kclass = KC_INDEX, .kind = OPK_ROW, ARITY(1, 1), .attrs = "axis,", EW(1, 0),
                   .fuse = FUSE_NONE, .fuse_why = "scan: a running sum carried along the row (ATen's "
                   "scan kernels take no epilogue)", .grad = GR_CUMSUM},
    /* dropout: y = x * mask / (1 - p) and the bool mask, from Philox random numbers
     * (DROPOUT_FLOPS_PER_ELEM); an elementwise op that fuses like one */
    [OP_DROPOUT] = {.name = "dropout", .kind = OPK_STREAM, .min_in = 1, .max_in = 1, .min_out = 2,
                    .max_out = 2, .attrs = "p_permille,", .flags = OPF_ELEMENTWISE | OPF_EPILOGUE,
                    EW(DROPOUT_FLOPS_PER_ELEM, 0), .fuse = FUSE_POINTWISE, .grad = GR_DROPOUT},
    /* scatter (dst, index, src): dst with src's elements written at index along axis, in place
     * (torch.Tensor.scatter_); the backward of topk and sort */
    [OP_SCATTER] = {.name = "scatter", .kclass = KC_INDEX, .kind = OPK_STREAM, ARITY(3, 3), .attrs = "axis,",
                    .flags = OPF_INDEX | OPF_TRAIN_ONLY, .fuse = FUSE_NONE, .fuse_why = INDEX_WHY,
                    .grad = GR_UNSUPPORTED},
    /* mixture-of-experts routing (moe_work says how each is costed):
     * moe_dispatch (x [T, D], experts [T, K], [gate [T, K]]) -> [E, C, D]: each token's K slots
     *   copied (times the gate, if given) into the capacity buffer of its expert, in arrival
     *   order; slots beyond an expert's capacity C are dropped, unfilled rows are zeros;
     * moe_combine (y [E, C, D], experts [T, K], [gate [T, K]]) -> [T, D]: each token's kept
     *   slots summed back (times the gate);
     * moe_gate_backward (dy [T, D], y [E, C, D], experts [T, K]) -> [T, K]: the gate gradient,
     *   one dot product of length D per kept slot. */
    [OP_MOE_DISPATCH] = {.name = "moe_dispatch", .kclass = KC_INDEX, .kind = OPK_GATHER, ARITY(2, 3),
                         .attrs = "imbalance_pct,", .flags = OPF_INDEX | OPF_ROUTE, .fuse = FUSE_NONE,
                         .fuse_why = MOE_WHY, .grad = GR_MOE_DISPATCH},
    [OP_MOE_COMBINE] = {.name = "moe_combine", .kclass = KC_INDEX, .kind = OPK_GATHER, ARITY(2, 3),
                        .attrs = "imbalance_pct,", .flags = OPF_INDEX | OPF_ROUTE, .fuse = FUSE_NONE,
                        .fuse_why = MOE_WHY, .grad = GR_MOE_COMBINE},
    [OP_MOE_GATE_BWD] = {.name = "moe_gate_backward", .kclass = KC_INDEX, .kind = OPK_ROW, ARITY(3, 3),
                         .attrs = "imbalance_pct,", .flags = OPF_INDEX | OPF_ROUTE | OPF_TRAIN_ONLY,
                         .rowgrid = ROWGRID_PACK, .fuse = FUSE_NONE, .fuse_why = MOE_WHY,
                         .grad = GR_UNSUPPORTED},
    /* more activations (torch.nn's; their gradients read the input, as ATen's *_backward
     * kernels do). FLOPs and SFU ops per element from the formula:
     * leaky_relu x >= 0 ? x : s x (mul, select); elu x > 0 ? x : a (exp(x) - 1) (exp; sub,
     * mul, select); softplus log1p(exp(x)) below its threshold (exp, log; add, compare,
     * select); mish x tanh(softplus(x)) (exp, log, tanh; add, mul, select); hardtanh (relu6)
     * min(max(x, lo), hi); hardsigmoid min(max(x + 3, 0), 6) / 6 (add, max, min, mul);
     * hardswish x hardsigmoid(x) (one mul more) */
    [OP_LEAKY_RELU] = UNARY_ACT("leaky_relu", 2, 0, 0),
    [OP_ELU] = UNARY_ACT("elu", 3, 1, 0),
    [OP_SOFTPLUS] = UNARY_ACT("softplus", 3, 2, 0),
    [OP_MISH] = UNARY_ACT("mish", 3, 3, 0),
    [OP_HARDTANH] = UNARY_ACT("hardtanh", 2, 0, 0),
    [OP_HARDSIGMOID] = UNARY_ACT("hardsigmoid", 4, 0, 0),
    [OP_HARDSWISH] = UNARY_ACT("hardswish", 5, 0, 0),
};
#undef EW
#undef ARITY
#undef UNARY_ACT
#undef BINARY
#undef INDEX_OP

/* cunn_SoftMaxForwardReg (rows > 1024, one 1024-thread CTA per row): 10173 warp-instructions
 * per row of 4096 */
#define SOFTMAX_BLOCK_INST_PER_ELEM 79.5
/* Rows of at most this many elements run one warp per row (ROWGRID_WARP) */
enum { ROW_WARP_MAX_ELEMS = 1024 };
/* ATen's vectorized_layer_norm_kernel (aten/src/ATen/native/cuda/layer_norm_kernel.cu): a
 * (32, 4) block, vec_size 4; a warp-iteration covers 32 x 4 elements */
enum { NORM_WARPS = 4, NORM_VEC_ELEMS = 4, NORM_WARP_ITER_ELEMS = WARP_THREADS * NORM_VEC_ELEMS };
/* Its two passes per iteration: the statistics' load of x, then x and the weights for the
 * output (the H200 at 1-1024 rows, one wave: 2 x dram.latency_ns a thread-iteration, 0.67 us,
 * against 0.71 us measured for rms_norm between D = 4096 and 8192; hw/calibrate/apps
 * short_probe.py, validation/apps/h200-short-probe.csv) */
enum { NORM_CHAIN_ROUNDS_PER_ITER = 2 };

const op_info *op_info_of(int type)
{
    return &OP_TABLE[type];
}

const char *op_name(int type)
{
    return type >= 0 && type < OP_COUNT ? OP_TABLE[type].name : "?";
}

int op_parse(const char *name)
{
    for (int i = 0; i < OP_COUNT; i++)
        if (!strcmp(OP_TABLE[i].name, name))
            return i;
    return -1;
}

op_kind op_type_kind(int type)
{
    return OP_TABLE[type].kind;
}

int op_is_elementwise(int type)
{
    return (OP_TABLE[type].flags & OPF_ELEMENTWISE) != 0;
}

int op_is_index(int type)
{
    return (OP_TABLE[type].flags & OPF_INDEX) != 0;
}

int op_is_route(int type)
{
    return (OP_TABLE[type].flags & OPF_ROUTE) != 0;
}

int op_is_gemm(int type)
{
    return (OP_TABLE[type].flags & OPF_GEMM) != 0;
}

int op_is_conv(int type)
{
    return (OP_TABLE[type].flags & OPF_CONV) != 0;
}

static const wl_tensor *IN(const wl_graph *g, const wl_op *o, int i)
{
    return &g->t[o->in[i]];
}
static const wl_tensor *OUT(const wl_graph *g, const wl_op *o, int i)
{
    return &g->t[o->out[i]];
}

static int fail(char *msg, unsigned long n, char *sub, unsigned long sn, const char *where,
                const char *fmt, const char *a, long long x, long long y)
{
    snprintf(sub, sn, "%s", where ? where : "");
    char f[256];
    snprintf(f, sizeof f, fmt, a ? a : "", x, y);
    snprintf(msg, n, "%s", f);
    return -1;
}
#define FAIL(where, fmt) return fail(msg, msglen, sub, sublen, where, fmt "%.0s", "", 0, 0)
#define FAILX(where, fmt, a, x, y) return fail(msg, msglen, sub, sublen, where, fmt, a, x, y)

static int same_shape(const wl_tensor *a, const wl_tensor *b)
{
    if (a->ndim != b->ndim)
        return 0;
    for (int i = 0; i < a->ndim; i++)
        if (a->dim[i] != b->dim[i])
            return 0;
    return 1;
}

/* numpy broadcasting of a and b into out (dims right-aligned); 0 ok, -1 incompatible. */
static int broadcast(const int64_t *a, int na, const int64_t *b, int nb, int64_t *out, int *nout)
{
    int n = na > nb ? na : nb;
    for (int i = 0; i < n; i++) {
        int64_t x = i < n - na ? 1 : a[i - (n - na)];
        int64_t y = i < n - nb ? 1 : b[i - (n - nb)];
        if (x != y && x != 1 && y != 1)
            return -1;
        out[i] = x > y ? x : y;
    }
    *nout = n;
    return 0;
}

static int norm_axis(int64_t axis, int ndim, int *out)
{
    if (axis < 0)
        axis += ndim;
    if (axis < 0 || axis >= ndim)
        return -1;
    *out = (int)axis;
    return 0;
}

int op_attr_known(int type, const char *key)
{
    const char *keys = OP_TABLE[type].attrs;
    size_t n = strlen(key);
    if (!n || strchr(key, ',')) /* the list's separator: never part of a name */
        return 0;
    for (const char *p = strstr(keys, key); p; p = strstr(p + 1, key))
        if ((p == keys || p[-1] == ',') && p[n] == ',')
            return 1;
    return 0;
}

static int check_attrs(const wl_op *o, char *msg, unsigned long msglen, char *sub, unsigned long sublen)
{
    for (int i = 0; i < o->nattr; i++) {
        if (!op_attr_known(o->type, o->attr[i].key)) {
            char where[96];
            snprintf(where, sizeof where, "attrs.%s", o->attr[i].key);
            FAILX(where, "unknown attribute \"%s\"%.0lld%.0lld", o->attr[i].key, 0LL, 0LL);
        }
    }
    return 0;
}

/* A failure with a printf-style message (op_check's reasons with several numbers). */
static int failf(char *msg, unsigned long n, char *sub, unsigned long sn, const char *where,
                 const char *fmt, ...) __attribute__((format(printf, 6, 7)));
static int failf(char *msg, unsigned long n, char *sub, unsigned long sn, const char *where,
                 const char *fmt, ...)
{
    snprintf(sub, sn, "%s", where ? where : "");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, n, fmt, ap);
    va_end(ap);
    return -1;
}
#define FAILF(where, ...) return failf(msg, msglen, sub, sublen, where, __VA_ARGS__)

/* Largest window attribute (kernel, stride, padding, dilation) accepted: larger values only
 * overflow the shape arithmetic, no real layer comes near */
#define WINDOW_ATTR_MAX (1LL << 30)

/* A 2-D window attribute (stride, padding, dilation, kernel): an integer for both axes or a list
 * of one or two integers, each in [lo, WINDOW_ATTR_MAX]; absent: def (def < 0: required). */
static int pair_attr(const wl_op *o, const char *key, int64_t def, int64_t lo, int64_t out[2],
                     char *msg, unsigned long msglen, char *sub, unsigned long sublen)
{
    char where[64];
    snprintf(where, sizeof where, "attrs.%s", key);
    const wl_attr *a = wl_attr_get(o, key);
    if (!a) {
        if (def < 0)
            FAILF(where, "missing (an integer or a list of 2 integers)");
        out[0] = out[1] = def;
        return 0;
    }
    if (a->type == WA_INT) {
        out[0] = out[1] = a->ival;
    } else if (a->type == WA_LIST && (a->nlist == 1 || a->nlist == 2)) {
        out[0] = a->list[0];
        out[1] = a->list[a->nlist - 1];
    } else {
        FAILF(where, "must be an integer or a list of 2 integers");
    }
    for (int i = 0; i < 2; i++)
        if (out[i] < lo || out[i] > WINDOW_ATTR_MAX)
            FAILF(where, "must be in [%lld, %lld], got %lld", (long long)lo, WINDOW_ATTR_MAX,
                  (long long)out[i]);
    return 0;
}

/* Layout attribute of a convolution or pooling: 0 NCHW (default), 1 NHWC. */
static int layout_attr(const wl_op *o, int *nhwc, char *msg, unsigned long msglen, char *sub,
                       unsigned long sublen)
{
    const wl_attr *a = wl_attr_get(o, "layout");
    *nhwc = 0;
    if (!a)
        return 0;
    if (a->type != WA_STR || (strcmp(a->sval, "nchw") && strcmp(a->sval, "nhwc")))
        FAILF("attrs.layout", "must be \"nchw\" or \"nhwc\"");
    *nhwc = !strcmp(a->sval, "nhwc");
    return 0;
}

/* Output length of a window along one axis (PyTorch's conv/pool rule):
 * floor((in + 2 pad - dil (k - 1) - 1) / stride) + 1, or with ceil instead of floor (PyTorch's
 * ceil_mode, dropping a last window that would start in the right padding); -1 when the
 * (dilated) window does not fit the padded input. Inputs are bounded by WINDOW_ATTR_MAX and a
 * dimension (< 2^63 / 8): no overflow. */
static int64_t window_out(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d, int ceil_mode)
{
    if (in > (1LL << 60)) /* beyond any tensor of this model: keeps the sum below from overflowing */
        return -1;
    int64_t span = in + 2 * p - d * (k - 1) - 1;
    if (span < 0)
        return -1;
    int64_t out = (ceil_mode ? (span + s - 1) / s : span / s) + 1;
    if (ceil_mode && (out - 1) * s >= in + p) /* the last window would start in the padding */
        out--;
    return out;
}

/* Geometry of a 2-D convolution: x [N, C, H, W] (NHWC: [N, H, W, C]), w [Co, C/g, KH, KW]
 * (NHWC: [Co, KH, KW, C/g]), y [N, Co, Ho, Wo] (NHWC: [N, Ho, Wo, Co]). */
typedef struct conv_geo {
    int64_t n, c, h, w, co, kh, kw, ho, wo, groups;
    int64_t stride[2], pad[2], dil[2];
    int nhwc;
    int64_t ydim[4]; /* the output shape the inputs imply */
} conv_geo;

/* Check x and the weight of a convolution (JSON sub-paths xs, ws) and compute its geometry. */
static int conv_geometry(const wl_op *o, const wl_tensor *x, const wl_tensor *wt, const char *xs,
                         const char *ws, conv_geo *cg, char *msg, unsigned long msglen, char *sub,
                         unsigned long sublen)
{
    memset(cg, 0, sizeof *cg);
    if (layout_attr(o, &cg->nhwc, msg, msglen, sub, sublen) ||
        pair_attr(o, "stride", 1, 1, cg->stride, msg, msglen, sub, sublen) ||
        pair_attr(o, "padding", 0, 0, cg->pad, msg, msglen, sub, sublen) ||
        pair_attr(o, "dilation", 1, 1, cg->dil, msg, msglen, sub, sublen))
        return -1;
    cg->groups = wl_attr_int(o, "groups", 1);
    const wl_attr *ga = wl_attr_get(o, "groups");
    if ((ga && ga->type != WA_INT) || cg->groups < 1)
        FAILF("attrs.groups", "must be an integer >= 1");
    if (x->ndim != 4)
        FAILF(xs, "input must be 4-D %s", cg->nhwc ? "[N, H, W, C]" : "[N, C, H, W]");
    if (wt->ndim != 4)
        FAILF(ws, "weight must be 4-D %s", cg->nhwc ? "[Cout, KH, KW, C/groups]" : "[Cout, C/groups, KH, KW]");
    if (!dt_is_float(x->dt) || x->dt != wt->dt)
        FAILF(ws, "input and weight must have the same floating-point dtype");
    int cax = cg->nhwc ? 3 : 1, hax = cg->nhwc ? 1 : 2;
    cg->n = x->dim[0];
    cg->c = x->dim[cax];
    cg->h = x->dim[hax];
    cg->w = x->dim[hax + 1];
    cg->co = wt->dim[0];
    cg->kh = wt->dim[cg->nhwc ? 1 : 2];
    cg->kw = wt->dim[cg->nhwc ? 2 : 3];
    int64_t cpg = wt->dim[cg->nhwc ? 3 : 1];
    if (cg->c % cg->groups || cg->co % cg->groups)
        FAILF("attrs.groups", "groups (%lld) must divide the input channels (%lld) and the output "
              "channels (%lld)", (long long)cg->groups, (long long)cg->c, (long long)cg->co);
    if (cpg != cg->c / cg->groups)
        FAILF(ws, "weight has %lld input channels per group, the input %lld / %lld groups = %lld",
              (long long)cpg, (long long)cg->c, (long long)cg->groups, (long long)(cg->c / cg->groups));
    if (cg->kh > WINDOW_ATTR_MAX || cg->kw > WINDOW_ATTR_MAX)
        FAILF(ws, "kernel larger than %lld", WINDOW_ATTR_MAX);
    cg->ho = window_out(cg->h, cg->kh, cg->stride[0], cg->pad[0], cg->dil[0], 0);
    cg->wo = window_out(cg->w, cg->kw, cg->stride[1], cg->pad[1], cg->dil[1], 0);
    if (cg->ho < 1 || cg->wo < 1)
        FAILF(ws, "kernel %lldx%lld (dilation %lld, %lld) does not fit the input %lldx%lld padded by "
              "%lld, %lld", (long long)cg->kh, (long long)cg->kw, (long long)cg->dil[0],
              (long long)cg->dil[1], (long long)cg->h, (long long)cg->w, (long long)cg->pad[0],
              (long long)cg->pad[1]);
    int64_t nchw[4] = {cg->n, cg->co, cg->ho, cg->wo}, nhwc[4] = {cg->n, cg->ho, cg->wo, cg->co};
    memcpy(cg->ydim, cg->nhwc ? nhwc : nchw, sizeof cg->ydim);
    return 0;
}

/* A tensor must have the given 4-D shape ("<what> must be [a, b, c, d]"). */
static int want_shape4(const wl_tensor *t, const int64_t d[4], const char *where, const char *what,
                       char *msg, unsigned long msglen, char *sub, unsigned long sublen)
{
    if (t->ndim == 4 && !memcmp(t->dim, d, 4 * sizeof(int64_t)))
        return 0;
    FAILF(where, "%s must be [%lld, %lld, %lld, %lld]", what, (long long)d[0], (long long)d[1],
          (long long)d[2], (long long)d[3]);
}

/* Geometry of a 2-D pooling window over x [N, C, H, W] (NHWC: [N, H, W, C]). */
typedef struct pool_geo {
    int64_t k[2], stride[2], pad[2];
    int nhwc, max;
} pool_geo;

static int pool_geometry(const wl_op *o, const wl_tensor *x, const char *xs, pool_geo *pg,
                         char *msg, unsigned long msglen, char *sub, unsigned long sublen)
{
    memset(pg, 0, sizeof *pg);
    const char *op = wl_attr_str(o, "op", "");
    if (strcmp(op, "max") && strcmp(op, "avg"))
        FAILF("attrs.op", "must be \"max\" or \"avg\"");
    pg->max = !strcmp(op, "max");
    if (layout_attr(o, &pg->nhwc, msg, msglen, sub, sublen) ||
        pair_attr(o, "kernel", -1, 1, pg->k, msg, msglen, sub, sublen) ||
        pair_attr(o, "padding", 0, 0, pg->pad, msg, msglen, sub, sublen))
        return -1;
    if (!wl_attr_get(o, "stride"))
        memcpy(pg->stride, pg->k, sizeof pg->stride); /* PyTorch: stride defaults to the kernel */
    else if (pair_attr(o, "stride", 1, 1, pg->stride, msg, msglen, sub, sublen))
        return -1;
    for (int i = 0; i < 2; i++)
        if (2 * pg->pad[i] > pg->k[i]) /* PyTorch: pad should be at most half of kernel size */
            FAILF("attrs.padding", "padding %lld is more than half the kernel %lld",
                  (long long)pg->pad[i], (long long)pg->k[i]);
    if (x->ndim != 4)
        FAILF(xs, "input must be 4-D %s", pg->nhwc ? "[N, H, W, C]" : "[N, C, H, W]");
    return 0;
}

/* The pooled shape of x; ceil_mode: the last window may start in the right padding. */
static void pool_out(const wl_tensor *x, const pool_geo *pg, int ceil_mode, int64_t d[4])
{
    int hax = pg->nhwc ? 1 : 2;
    memcpy(d, x->dim, 4 * sizeof(int64_t));
    for (int i = 0; i < 2; i++)
        d[hax + i] = window_out(x->dim[hax + i], pg->k[i], pg->stride[i], pg->pad[i], 1, ceil_mode);
}

/* The pooled output y must be x pooled (floor, or ceil_mode as PyTorch writes it). */
static int pool_check_out(const wl_tensor *x, const wl_tensor *y, const pool_geo *pg,
                          const char *where, char *msg, unsigned long msglen, char *sub,
                          unsigned long sublen)
{
    int64_t fl[4], ce[4];
    pool_out(x, pg, 0, fl);
    pool_out(x, pg, 1, ce);
    if (fl[2] < 1 || fl[3] < 1 || (pg->nhwc && fl[1] < 1))
        FAILF(where, "pooling window larger than the padded input");
    if (y->ndim == 4 && (!memcmp(y->dim, fl, sizeof fl) || !memcmp(y->dim, ce, sizeof ce)))
        return 0;
    return want_shape4(y, fl, where, "output", msg, msglen, sub, sublen);
}

/* Axis attribute of a row-wise op (default -1) normalized for x. */
static int axis_attr(const wl_op *o, const wl_tensor *x, int *a, char *msg, unsigned long msglen,
                     char *sub, unsigned long sublen)
{
    if (x->ndim < 1)
        FAILF("inputs[0]", "input must have at least 1 dimension");
    if (norm_axis(wl_attr_int(o, "axis", -1), x->ndim, a))
        FAILF("attrs.axis", "axis %lld out of range for %d dimensions",
              (long long)wl_attr_int(o, "axis", -1), x->ndim);
    return 0;
}

/* t has x's shape with dimension a of length len (len < 0: dimension a removed). */
static int shape_along(const wl_tensor *t, const wl_tensor *x, int a, int64_t len)
{
    int nd = len < 0 ? x->ndim - 1 : x->ndim;
    if (t->ndim != nd)
        return 0;
    for (int i = 0, j = 0; i < x->ndim; i++) {
        if (i == a && len < 0)
            continue;
        if (t->dim[j++] != (i == a ? len : x->dim[i]))
            return 0;
    }
    return 1;
}

/* GEMM geometry of matmul/linear: M, N, K, batch dims of the output. */
typedef struct gemm_geo {
    int64_t m, n, k, batch;
    int64_t bdim[WL_MAXDIM];
    int nb;
} gemm_geo;

static int gemm_geometry(const wl_graph *g, const wl_op *o, gemm_geo *gg, char *msg,
                         unsigned long msglen, char *sub, unsigned long sublen)
{
    const wl_tensor *a = IN(g, o, 0), *b = IN(g, o, 1);
    memset(gg, 0, sizeof *gg);
    if (o->type == OP_LINEAR) {
        if (a->ndim < 1)
            FAIL("inputs[0]", "input must have at least 1 dimension");
        if (b->ndim != 2)
            FAIL("inputs[1]", "weight must be 2-D");
        int tb = (int)wl_attr_int(o, "transpose_b", 0);
        gg->k = a->dim[a->ndim - 1];
        int64_t wk = tb ? b->dim[1] : b->dim[0];
        gg->n = tb ? b->dim[0] : b->dim[1];
        if (wk != gg->k)
            FAILX("inputs[1]", "inner dimensions differ (x has %s%lld, weight has %lld)", "",
                  (long long)gg->k, (long long)wk);
        gg->m = 1;
        for (int i = 0; i < a->ndim - 1; i++)
            if (wl_mul(gg->m, a->dim[i], &gg->m))
                FAIL(NULL, "size overflows 64 bits");
        gg->batch = 1;
        gg->nb = 0;
        if (o->nin == 3) {
            const wl_tensor *bias = IN(g, o, 2);
            if (bias->ndim != 1 || bias->dim[0] != gg->n)
                FAILX("inputs[2]", "bias must be [%s%lld]%.0lld", "", (long long)gg->n, 0LL);
        }
        return 0;
    }
    if (a->ndim < 2 || b->ndim < 2)
        FAIL(a->ndim < 2 ? "inputs[0]" : "inputs[1]", "matmul operands must be at least 2-D");
    int ta = (int)wl_attr_int(o, "transpose_a", 0), tb = (int)wl_attr_int(o, "transpose_b", 0);
    int64_t am = a->dim[a->ndim - 2], ak = a->dim[a->ndim - 1];
    if (ta) {
        int64_t t = am;
        am = ak;
        ak = t;
    }
    int64_t bk = b->dim[b->ndim - 2], bn = b->dim[b->ndim - 1];
    if (tb) {
        int64_t t = bk;
        bk = bn;
        bn = t;
    }
    if (ak != bk)
        FAILX("inputs[1]", "inner dimensions differ (%s%lld vs %lld)", "", (long long)ak, (long long)bk);
    if (broadcast(a->dim, a->ndim - 2, b->dim, b->ndim - 2, gg->bdim, &gg->nb))
        FAIL("inputs[1]", "batch dimensions do not broadcast");
    gg->m = am;
    gg->n = bn;
    gg->k = ak;
    gg->batch = 1;
    for (int i = 0; i < gg->nb; i++)
        if (wl_mul(gg->batch, gg->bdim[i], &gg->batch))
            FAIL(NULL, "size overflows 64 bits");
    return 0;
}

/* The attribute "imbalance_pct" of a routing op: the busiest expert's load over the mean, in
 * percent (an integer expression of the parameters, so that sweeps can vary it; default 100:
 * every expert gets the mean load). */
enum { MOE_BALANCED_PCT = 100 };
double op_moe_imbalance(const wl_op *o)
{
    return (double)wl_attr_int(o, "imbalance_pct", MOE_BALANCED_PCT) / MOE_BALANCED_PCT;
}

/* The tensors of a routing op by role: tokens x [T, D] (dispatch's input, combine's output, the
 * gate gradient's dy), the expert buffer [E, C, D] (dispatch's output, combine's and the gate
 * gradient's input) and the expert ids [T, K]. */
static void moe_roles(const wl_graph *g, const wl_op *o, const wl_tensor **x, const wl_tensor **buf,
                      const wl_tensor **ids)
{
    int t = o->type;
    *x = t == OP_MOE_COMBINE ? OUT(g, o, 0) : IN(g, o, 0);
    *buf = t == OP_MOE_DISPATCH ? OUT(g, o, 0) : IN(g, o, t == OP_MOE_COMBINE ? 0 : 1);
    *ids = IN(g, o, t == OP_MOE_GATE_BWD ? 2 : 1);
}

void op_moe_shape(const wl_graph *g, const wl_op *o, int64_t *tokens, int64_t *k, int64_t *experts,
                  int64_t *capacity)
{
    const wl_tensor *x, *buf, *ids;
    moe_roles(g, o, &x, &buf, &ids);
    *tokens = x->dim[0];
    *k = ids->dim[1];
    *experts = buf->dim[0];
    *capacity = buf->dim[1];
}

/* Routing ops: the roles above, with the optional gate weights [T, K] (floating point). */
static int moe_check(const wl_graph *g, const wl_op *o, char *msg, unsigned long msglen, char *sub,
                     unsigned long sublen)
{
    int t = o->type;
    const wl_tensor *x, *buf, *ids;
    moe_roles(g, o, &x, &buf, &ids);
    const char *xs = t == OP_MOE_COMBINE ? "outputs[0]" : "inputs[0]";
    const char *bs = t == OP_MOE_DISPATCH ? "outputs[0]" : t == OP_MOE_COMBINE ? "inputs[0]" : "inputs[1]";
    const char *is = t == OP_MOE_GATE_BWD ? "inputs[2]" : "inputs[1]";
    if (ids->ndim != 2 || dt_is_float(ids->dt))
        FAIL(is, "expert ids must be a 2-D integer tensor [tokens, k]");
    if (x->ndim != 2 || x->dim[0] != ids->dim[0] || !dt_is_float(x->dt))
        FAILF(xs, "tokens must be a floating-point [%lld, D] (one row per token of the expert ids)",
              (long long)ids->dim[0]);
    if (buf->ndim != 3 || buf->dim[2] != x->dim[1] || buf->dt != x->dt)
        FAILF(bs, "expert buffer must be [experts, capacity, %lld] of the tokens' dtype",
              (long long)x->dim[1]);
    int64_t k = ids->dim[1], e = buf->dim[0];
    if (k > e)
        FAILF(is, "each token picks k = %lld distinct experts but there are only %lld", (long long)k,
              (long long)e);
    if (t != OP_MOE_GATE_BWD && o->nin == 3) {
        const wl_tensor *gt = IN(g, o, 2);
        if (!same_shape(gt, ids) || !dt_is_float(gt->dt))
            FAIL("inputs[2]", "gate weights must be a floating-point tensor of the expert ids' shape");
    }
    if (t == OP_MOE_GATE_BWD) {
        const wl_tensor *dg = OUT(g, o, 0);
        if (!same_shape(dg, ids) || !dt_is_float(dg->dt))
            FAIL("outputs[0]", "gate gradient must be a floating-point tensor of the expert ids' shape");
    }
    int64_t pct = wl_attr_int(o, "imbalance_pct", MOE_BALANCED_PCT);
    double top = k > 0 ? floor((double)MOE_BALANCED_PCT * (double)e / (double)k) : MOE_BALANCED_PCT;
    if (pct < MOE_BALANCED_PCT || (double)pct > top)
        FAILF("attrs.imbalance_pct", "imbalance_pct = %lld must be in [100, %.0f] (the busiest "
              "expert's load over the mean, in percent; at most 100 E/k, when it gets every "
              "token)", (long long)pct, top);
    return 0;
}

int op_check(const wl_graph *g, const wl_op *o, char *msg, unsigned long msglen, char *sub,
             unsigned long sublen)
{
    const op_info *inf = &OP_TABLE[o->type];
    sub[0] = 0;
    if (o->nin < inf->min_in || (inf->max_in >= 0 && o->nin > inf->max_in)) {
        if (inf->max_in < 0)
            FAILX("inputs", "needs at least %s%lld inputs, got %lld", "", (long long)inf->min_in,
                  (long long)o->nin);
        FAILX("inputs", "needs %s%lld..%lld inputs", "", (long long)inf->min_in, (long long)inf->max_in);
    }
    int max_out = inf->max_out, min_out = inf->min_out > 0 ? inf->min_out : 1;
    if (o->nout < min_out || o->nout > max_out) {
        if (min_out == max_out)
            FAILF("outputs", "needs %d outputs, got %d", min_out, o->nout);
        FAILX("outputs", "needs 1..%s%lld outputs, got %lld", "", (long long)max_out, (long long)o->nout);
    }
    if (check_attrs(o, msg, msglen, sub, sublen))
        return -1;
    const wl_tensor *y = OUT(g, o, 0);
    switch (o->type) {
    case OP_MATMUL:
    case OP_LINEAR: {
        gemm_geo gg;
        if (gemm_geometry(g, o, &gg, msg, msglen, sub, sublen))
            return -1;
        if (!dt_is_float(IN(g, o, 0)->dt) || !dt_is_float(IN(g, o, 1)->dt))
            FAIL("inputs", "operands must be floating point");
        if (IN(g, o, 0)->dt != IN(g, o, 1)->dt)
            FAIL("inputs[1]", "operands must have the same dtype");
        int64_t want[WL_MAXDIM];
        int nd = 0;
        if (o->type == OP_LINEAR) {
            const wl_tensor *x = IN(g, o, 0);
            for (int i = 0; i < x->ndim - 1; i++)
                want[nd++] = x->dim[i];
        } else {
            for (int i = 0; i < gg.nb; i++)
                want[nd++] = gg.bdim[i];
            want[nd++] = gg.m;
        }
        want[nd++] = gg.n;
        if (y->ndim != nd || memcmp(want, y->dim, (size_t)nd * sizeof(int64_t)))
            FAIL("outputs[0]", "output shape does not match the product's shape");
        if (o->type == OP_MATMUL && o->nin == 3) {
            /* C of addmm/baddbmm: broadcast to the product's shape, read in the epilogue */
            const wl_tensor *c = IN(g, o, 2);
            int64_t bd[WL_MAXDIM];
            int nbd;
            if (!dt_is_float(c->dt) || broadcast(c->dim, c->ndim, want, nd, bd, &nbd) || nbd != nd ||
                memcmp(bd, want, (size_t)nd * sizeof(int64_t)))
                FAIL("inputs[2]", "C must be floating point and broadcast to the product's shape");
        }
        return 0;
    }
    case OP_ADD: case OP_SUB: case OP_MUL: case OP_DIV: {
        int64_t bd[WL_MAXDIM];
        int nb;
        const wl_tensor *a = IN(g, o, 0), *b = IN(g, o, 1);
        if (broadcast(a->dim, a->ndim, b->dim, b->ndim, bd, &nb))
            FAIL("inputs[1]", "shapes do not broadcast");
        if (y->ndim != nb || memcmp(bd, y->dim, (size_t)nb * sizeof(int64_t)))
            FAIL("outputs[0]", "output shape is not the broadcast shape of the inputs");
        return 0;
    }
    case OP_FILL:
        return 0;
    case OP_ADAM:
        for (int i = 1; i < 4; i++)
            if (!same_shape(IN(g, o, i), IN(g, o, 0)))
                FAILX("inputs", "param, grad, m and v must have the same shape%s%.0lld%.0lld", "", 0LL, 0LL);
        for (int i = 0; i < o->nout; i++)
            if (!same_shape(OUT(g, o, i), IN(g, o, 0)))
                FAIL("outputs", "outputs must have the parameter's shape");
        return 0;
    case OP_ROPE: {
        const wl_tensor *x = IN(g, o, 0);
        for (int i = 1; i < o->nin; i++) {
            int64_t bd[WL_MAXDIM];
            int nb;
            const wl_tensor *c = IN(g, o, i);
            if (broadcast(x->dim, x->ndim, c->dim, c->ndim, bd, &nb) || nb != x->ndim ||
                memcmp(bd, x->dim, (size_t)nb * sizeof(int64_t)))
                FAILX(i == 1 ? "inputs[1]" : "inputs[2]", "cos/sin must broadcast to x%s%.0lld%.0lld", "", 0LL, 0LL);
        }
        if (!same_shape(x, y))
            FAIL("outputs[0]", "output shape must equal the input shape");
        return 0;
    }
    case OP_EXPAND: {
        /* numpy broadcast of x to the output shape (reduce backward writes the input-shaped grad) */
        int64_t bd[WL_MAXDIM];
        int nb;
        const wl_tensor *x = IN(g, o, 0);
        if (broadcast(x->dim, x->ndim, y->dim, y->ndim, bd, &nb) || nb != y->ndim ||
            memcmp(bd, y->dim, (size_t)nb * sizeof(int64_t)))
            FAIL("outputs[0]", "input must broadcast to the output shape");
        return 0;
    }
    case OP_CAST:
        if (y->elems != IN(g, o, 0)->elems || !same_shape(y, IN(g, o, 0)))
            FAIL("outputs[0]", "output shape must equal the input shape");
        return 0;
    case OP_ACT_BWD:
        if (!same_shape(IN(g, o, 0), y) || IN(g, o, 1)->elems != y->elems)
            FAIL("outputs[0]", "gradient shapes must match");
        return 0;
    case OP_REDUCE: {
        const wl_tensor *x = IN(g, o, 0);
        const wl_attr *ax = wl_attr_get(o, "axes");
        const char *rop = wl_attr_str(o, "op", "sum");
        if (strcmp(rop, "sum") && strcmp(rop, "mean") && strcmp(rop, "max"))
            FAILX("attrs.op", "unknown reduction \"%s\" (sum, mean or max)%.0lld%.0lld", rop, 0LL, 0LL);
        int red[WL_MAXDIM] = {0};
        if (!ax || ax->type != WA_LIST || ax->nlist == 0)
            FAIL("attrs.axes", "needs a non-empty list of axes");
        for (int i = 0; i < ax->nlist; i++) {
            int a = 0;
            if (norm_axis(ax->list[i], x->ndim, &a))
                FAILX("attrs.axes", "axis %s%lld out of range for %lld dimensions", "",
                      (long long)ax->list[i], (long long)x->ndim);
            red[a] = 1;
        }
        int keep = (int)wl_attr_int(o, "keepdim", 0);
        int64_t want[WL_MAXDIM];
        int nd = 0;
        for (int i = 0; i < x->ndim; i++)
            if (!red[i])
                want[nd++] = x->dim[i];
            else if (keep)
                want[nd++] = 1;
        if (y->ndim != nd || memcmp(want, y->dim, (size_t)nd * sizeof(int64_t)))
            FAIL("outputs[0]", "output shape does not match the reduction");
        return 0;
    }
    case OP_SOFTMAX:
    case OP_SOFTMAX_BWD: {
        int a = 0;
        if (norm_axis(wl_attr_int(o, "axis", -1), IN(g, o, 0)->ndim, &a))
            FAIL("attrs.axis", "axis out of range");
        for (int i = 0; i < o->nin; i++)
            if (!same_shape(IN(g, o, i), y))
                FAIL("outputs[0]", "shapes of inputs and output must be equal");
        return 0;
    }
    case OP_LAYERNORM:
    case OP_RMSNORM:
    case OP_NORM_BWD: {
        const wl_tensor *x = IN(g, o, o->type == OP_NORM_BWD ? 1 : 0);
        if (x->ndim < 1)
            FAIL("inputs[0]", "needs at least 1 dimension");
        int64_t d = x->dim[x->ndim - 1];
        int first_param = o->type == OP_NORM_BWD ? 2 : 1;
        for (int i = first_param; i < o->nin; i++) {
            const wl_tensor *p = IN(g, o, i);
            if (p->ndim != 1 || p->dim[0] != d)
                FAILX(i == 1 ? "inputs[1]" : i == 2 ? "inputs[2]" : "inputs[3]",
                      "norm parameters must be [%s%lld] (the last dimension)%.0lld", "", (long long)d, 0LL);
        }
        if (!same_shape(x, y))
            FAIL("outputs[0]", "output shape must equal the input shape");
        if (o->type == OP_NORM_BWD) {
            if (!same_shape(IN(g, o, 0), x))
                FAIL("inputs[0]", "gradient must have the input's shape");
            for (int i = 1; i < o->nout; i++)
                if (OUT(g, o, i)->ndim != 1 || OUT(g, o, i)->dim[0] != d)
                    FAIL("outputs", "parameter gradients must be [D]");
        }
        return 0;
    }
    case OP_ATTENTION:
    case OP_ATTN_BWD: {
        int base = o->type == OP_ATTN_BWD ? 1 : 0;
        const wl_tensor *q = IN(g, o, base), *k = IN(g, o, base + 1), *v = IN(g, o, base + 2);
        if (q->ndim != 4 || k->ndim != 4 || v->ndim != 4)
            FAIL("inputs", "q, k, v must be 4-D [B, heads, seq, head_dim]");
        if (k->dim[0] != q->dim[0] || v->dim[0] != q->dim[0])
            FAIL("inputs", "batch sizes of q, k, v differ");
        if (k->dim[1] != v->dim[1] || q->dim[1] % k->dim[1])
            FAILX("inputs", "query heads (%s%lld) must be a multiple of kv heads (%lld)", "",
                  (long long)q->dim[1], (long long)k->dim[1]);
        if (k->dim[2] != v->dim[2])
            FAIL("inputs", "k and v lengths differ");
        if (k->dim[3] != q->dim[3])
            FAIL("inputs", "q and k head dims differ");
        if (wl_attr_int(o, "causal", 0) && k->dim[2] < q->dim[2])
            FAIL("attrs.causal", "causal attention needs kv length >= query length");
        int mi = base ? 5 : 3; /* the mask: after q, k, v (backward: after dO, q, k, v, O) */
        if (o->nin > mi) {
            /* an additive mask, broadcast to the scores [B, Hq, S, L] */
            int64_t sc[4] = {q->dim[0], q->dim[1], q->dim[2], k->dim[2]}, bd[WL_MAXDIM];
            int nbd;
            const wl_tensor *m = IN(g, o, mi);
            if (broadcast(m->dim, m->ndim, sc, 4, bd, &nbd) || nbd != 4 || memcmp(bd, sc, sizeof sc))
                FAILF(base ? "inputs[5]" : "inputs[3]", "mask must broadcast to the scores [%lld, %lld, %lld, %lld]",
                      (long long)sc[0], (long long)sc[1], (long long)sc[2], (long long)sc[3]);
        }
        if (o->type == OP_ATTENTION) {
            if (y->ndim != 4 || y->dim[0] != q->dim[0] || y->dim[1] != q->dim[1] ||
                y->dim[2] != q->dim[2] || y->dim[3] != v->dim[3])
                FAIL("outputs[0]", "output must be [B, Hq, S, Dv]");
        } else {
            for (int i = 0; i < o->nout; i++)
                if (!same_shape(OUT(g, o, i), IN(g, o, base + i)))
                    FAIL("outputs", "gradients must have the shapes of q, k, v");
        }
        return 0;
    }
    case OP_EMBEDDING: {
        const wl_tensor *tab = IN(g, o, 0), *idx = IN(g, o, 1);
        if (tab->ndim != 2)
            FAIL("inputs[0]", "embedding table must be 2-D [rows, dim]");
        if (dt_is_float(idx->dt))
            FAIL("inputs[1]", "indices must be an integer dtype");
        if (y->ndim != idx->ndim + 1 || memcmp(y->dim, idx->dim, (size_t)idx->ndim * sizeof(int64_t)) ||
            y->dim[y->ndim - 1] != tab->dim[1])
            FAIL("outputs[0]", "output must be [indices..., dim]");
        int64_t sg = wl_attr_int(o, "sparse_grad", 0);
        if (sg != 0 && sg != 1)
            FAIL("attrs.sparse_grad", "must be 0 or 1");
        return 0;
    }
    case OP_GATHER:
    case OP_INDEX_SELECT:
    case OP_SCATTER_ADD:
    case OP_INDEX_ADD:
    case OP_EMBEDDING_BWD:
    case OP_INDEX_COPY: {
        /* index_copy, and index_add/scatter_add with a destination: [dst, index, src] */
        int is_copy = o->nin == 3;
        const wl_tensor *x = IN(g, o, 0), *idx = IN(g, o, 1);
        const wl_tensor *src = is_copy ? IN(g, o, 2) : x;
        int a = 0;
        if (norm_axis(wl_attr_int(o, "axis", 0), x->ndim, &a))
            FAIL("attrs.axis", "axis out of range");
        if (dt_is_float(idx->dt) || idx->ndim != 1)
            FAIL("inputs[1]", "index must be a 1-D integer tensor");
        int scatter = o->type == OP_SCATTER_ADD || o->type == OP_INDEX_ADD || o->type == OP_EMBEDDING_BWD;
        if (scatter || is_copy) {
            if (src->dim[a] != idx->dim[0])
                FAILX(is_copy ? "inputs[2]" : "inputs[0]",
                      "source has %s%lld rows along the axis but the index has %lld", "",
                      (long long)src->dim[a], (long long)idx->dim[0]);
            const wl_tensor *ref = is_copy ? x : y;
            if (ref->ndim != src->ndim)
                FAIL("outputs[0]", "destination and source ranks differ");
            for (int i = 0; i < src->ndim; i++)
                if (i != a && ref->dim[i] != src->dim[i])
                    FAIL("outputs[0]", "destination and source differ outside the axis");
            if (is_copy && !same_shape(x, y))
                FAIL("outputs[0]", "output must have the destination's shape");
        } else {
            if (y->ndim != x->ndim)
                FAIL("outputs[0]", "output rank must equal the input rank");
            for (int i = 0; i < x->ndim; i++)
                if (y->dim[i] != (i == a ? idx->dim[0] : x->dim[i]))
                    FAIL("outputs[0]", "output must be the input with the axis resized to the index length");
        }
        return 0;
    }
    case OP_CONV2D:
    case OP_CONV2D_DGRAD:
    case OP_CONV2D_WGRAD: {
        /* conv2d (x, w, [b]) -> y; dgrad (dy, w) -> dx; wgrad (dy, x) -> dw */
        int t = o->type;
        const wl_tensor *x = t == OP_CONV2D ? IN(g, o, 0) : t == OP_CONV2D_DGRAD ? y : IN(g, o, 1);
        const wl_tensor *wt = t == OP_CONV2D_WGRAD ? y : IN(g, o, 1);
        const wl_tensor *yt = t == OP_CONV2D ? y : IN(g, o, 0);
        const char *xs = t == OP_CONV2D ? "inputs[0]" : t == OP_CONV2D_DGRAD ? "outputs[0]" : "inputs[1]";
        const char *ws = t == OP_CONV2D_WGRAD ? "outputs[0]" : "inputs[1]";
        const char *ys = t == OP_CONV2D ? "outputs[0]" : "inputs[0]";
        conv_geo cg;
        if (conv_geometry(o, x, wt, xs, ws, &cg, msg, msglen, sub, sublen))
            return -1;
        if (t == OP_CONV2D && o->nin == 3) {
            const wl_tensor *b = IN(g, o, 2);
            if (b->ndim != 1 || b->dim[0] != cg.co)
                FAILF("inputs[2]", "bias must be [%lld] (the output channels)", (long long)cg.co);
        }
        return want_shape4(yt, cg.ydim, ys, t == OP_CONV2D ? "output" : "gradient of the output",
                           msg, msglen, sub, sublen);
    }
    case OP_BATCHNORM:
    case OP_BATCHNORM_BWD: {
        /* batchnorm (x, [gamma, [beta]]) -> y; backward (dy, x, [gamma]) -> dx, [dgamma, dbeta] */
        int bwd = o->type == OP_BATCHNORM_BWD;
        const wl_tensor *x = IN(g, o, bwd ? 1 : 0);
        int a = 0;
        int64_t tr = wl_attr_int(o, "training", 0);
        if (tr != 0 && tr != 1)
            FAIL("attrs.training", "must be 0 or 1");
        if (x->ndim < 2)
            FAIL(bwd ? "inputs[1]" : "inputs[0]", "input must have at least 2 dimensions (batch, channels)");
        if (norm_axis(wl_attr_int(o, "axis", 1), x->ndim, &a))
            FAILF("attrs.axis", "channel axis %lld out of range for %d dimensions",
                  (long long)wl_attr_int(o, "axis", 1), x->ndim);
        if (!dt_is_float(x->dt))
            FAIL(bwd ? "inputs[1]" : "inputs[0]", "input must be floating point");
        int64_t c = x->dim[a];
        for (int i = bwd ? 2 : 1; i < o->nin; i++) {
            const wl_tensor *p = IN(g, o, i);
            if (p->ndim != 1 || p->dim[0] != c)
                FAILF(i == 1 ? "inputs[1]" : "inputs[2]",
                      "batchnorm parameters must be [%lld] (the channels along axis %d)", (long long)c, a);
        }
        if (!same_shape(x, y))
            FAIL("outputs[0]", "output shape must equal the input shape");
        if (bwd) {
            if (!same_shape(IN(g, o, 0), x))
                FAIL("inputs[0]", "gradient must have the input's shape");
            for (int i = 1; i < o->nout; i++)
                if (OUT(g, o, i)->ndim != 1 || OUT(g, o, i)->dim[0] != c)
                    FAILF("outputs", "parameter gradients must be [%lld]", (long long)c);
        }
        return 0;
    }
    case OP_POOL2D: {
        pool_geo pg;
        const wl_tensor *x = IN(g, o, 0);
        if (pool_geometry(o, x, "inputs[0]", &pg, msg, msglen, sub, sublen) ||
            pool_check_out(x, y, &pg, "outputs[0]", msg, msglen, sub, sublen))
            return -1;
        if (o->nout == 2) {
            const wl_tensor *ix = OUT(g, o, 1);
            if (!pg.max)
                FAIL("outputs[1]", "only max pooling has indices");
            if (dt_is_float(ix->dt) || !same_shape(ix, y))
                FAIL("outputs[1]", "indices must be an integer tensor of the output's shape");
        }
        return 0;
    }
    case OP_POOL2D_BWD: {
        /* (dy, [indices]) -> dx: x's shape is the output's */
        pool_geo pg;
        if (pool_geometry(o, y, "outputs[0]", &pg, msg, msglen, sub, sublen) ||
            pool_check_out(y, IN(g, o, 0), &pg, "inputs[0]", msg, msglen, sub, sublen))
            return -1;
        if (pg.max != (o->nin == 2))
            FAIL("inputs", pg.max ? "max pooling backward reads the saved indices (2 inputs)"
                                  : "average pooling backward reads only the gradient (1 input)");
        if (o->nin == 2 && (dt_is_float(IN(g, o, 1)->dt) || !same_shape(IN(g, o, 1), IN(g, o, 0))))
            FAIL("inputs[1]", "indices must be an integer tensor of the gradient's shape");
        return 0;
    }
    case OP_TOPK:
    case OP_SORT: {
        const wl_tensor *x = IN(g, o, 0);
        int a = 0;
        if (axis_attr(o, x, &a, msg, msglen, sub, sublen))
            return -1;
        int64_t len = x->dim[a];
        if (o->type == OP_TOPK) {
            const wl_attr *ka = wl_attr_get(o, "k");
            if (!ka || ka->type != WA_INT)
                FAIL("attrs.k", "missing (an integer)");
            if (ka->ival < 1 || ka->ival > len)
                FAILF("attrs.k", "k = %lld must be in [1, %lld] (the length along axis %d)",
                      (long long)ka->ival, (long long)len, a);
            len = ka->ival;
        }
        if (!shape_along(y, x, a, len) || y->dt != x->dt)
            FAILF("outputs[0]", "values must have the input's dtype and shape with %lld along axis %d",
                  (long long)len, a);
        if (!shape_along(OUT(g, o, 1), x, a, len) || dt_is_float(OUT(g, o, 1)->dt))
            FAIL("outputs[1]", "indices must be an integer tensor of the values' shape");
        return 0;
    }
    case OP_ARGMAX: {
        const wl_tensor *x = IN(g, o, 0);
        int a = 0;
        if (axis_attr(o, x, &a, msg, msglen, sub, sublen))
            return -1;
        if (dt_is_float(y->dt))
            FAIL("outputs[0]", "indices must be an integer tensor");
        if (!shape_along(y, x, a, -1) && !shape_along(y, x, a, 1))
            FAILF("outputs[0]", "output must be the input's shape without axis %d (or with it 1)", a);
        return 0;
    }
    case OP_CUMSUM: {
        int a = 0;
        if (axis_attr(o, IN(g, o, 0), &a, msg, msglen, sub, sublen))
            return -1;
        if (!same_shape(IN(g, o, 0), y))
            FAIL("outputs[0]", "output shape must equal the input shape");
        return 0;
    }
    case OP_DROPOUT: {
        const wl_tensor *x = IN(g, o, 0);
        int64_t p = wl_attr_int(o, "p_permille", DROPOUT_DEFAULT_PERMILLE);
        if (p < 0 || p > 1000)
            FAIL("attrs.p_permille", "must be in [0, 1000] (thousandths)");
        if (!dt_is_float(x->dt))
            FAIL("inputs[0]", "input must be floating point");
        if (!same_shape(x, y) || y->dt != x->dt)
            FAIL("outputs[0]", "output must have the input's shape and dtype");
        if (!same_shape(x, OUT(g, o, 1)) || OUT(g, o, 1)->dt != DT_BOOL)
            FAIL("outputs[1]", "mask must be a bool tensor of the input's shape");
        return 0;
    }
    case OP_MOE_DISPATCH:
    case OP_MOE_COMBINE:
    case OP_MOE_GATE_BWD:
        return moe_check(g, o, msg, msglen, sub, sublen);
    case OP_SCATTER: {
        /* (dst, index, src): index and src of one shape, equal to dst's outside the axis */
        const wl_tensor *d = IN(g, o, 0), *ix = IN(g, o, 1), *s = IN(g, o, 2);
        int a = 0;
        if (norm_axis(wl_attr_int(o, "axis", 0), d->ndim, &a))
            FAIL("attrs.axis", "axis out of range");
        if (dt_is_float(ix->dt) || !same_shape(ix, s))
            FAIL("inputs[1]", "index must be an integer tensor of the source's shape");
        if (s->ndim != d->ndim)
            FAIL("inputs[2]", "source and destination ranks differ");
        for (int i = 0; i < d->ndim; i++)
            if (i != a ? s->dim[i] != d->dim[i] : s->dim[i] > d->dim[i])
                FAIL("inputs[2]", "source must fit the destination (equal outside the axis)");
        if (!same_shape(d, y))
            FAIL("outputs[0]", "output must have the destination's shape");
        return 0;
    }
    case OP_CONCAT: {
        int a = 0;
        const wl_tensor *x0 = IN(g, o, 0);
        if (norm_axis(wl_attr_int(o, "axis", 0), x0->ndim, &a))
            FAIL("attrs.axis", "axis out of range");
        int64_t sum = 0;
        for (int i = 0; i < o->nin; i++) {
            const wl_tensor *x = IN(g, o, i);
            if (x->ndim != x0->ndim)
                FAIL("inputs", "inputs have different ranks");
            for (int d = 0; d < x->ndim; d++)
                if (d != a && x->dim[d] != x0->dim[d])
                    FAILX("inputs", "input %s%lld differs from input 0 in dimension %lld", "",
                          (long long)i, (long long)d);
            sum += x->dim[a];
        }
        if (y->ndim != x0->ndim || y->dim[a] != sum)
            FAILX("outputs[0]", "output must have %s%lld along the concat axis%.0lld", "", (long long)sum, 0LL);
        for (int d = 0; d < y->ndim; d++)
            if (d != a && y->dim[d] != x0->dim[d])
                FAIL("outputs[0]", "output differs from the inputs outside the concat axis");
        return 0;
    }
    case OP_SLICE: {
        int a = 0;
        const wl_tensor *x = IN(g, o, 0);
        if (norm_axis(wl_attr_int(o, "axis", 0), x->ndim, &a))
            FAIL("attrs.axis", "axis out of range");
        int64_t s = wl_attr_int(o, "start", 0), en = wl_attr_int(o, "end", x->dim[a]);
        if (s < 0 || en > x->dim[a] || s >= en)
            FAILX("attrs", "slice [%s%lld, %lld) is empty or out of range", "", (long long)s, (long long)en);
        for (int d = 0; d < x->ndim; d++)
            if (y->ndim != x->ndim || y->dim[d] != (d == a ? en - s : x->dim[d]))
                FAIL("outputs[0]", "output shape does not match the slice");
        return 0;
    }
    case OP_TRANSPOSE: {
        const wl_tensor *x = IN(g, o, 0);
        const wl_attr *p = wl_attr_get(o, "perm");
        int perm[WL_MAXDIM], seen[WL_MAXDIM] = {0};
        if (x->ndim < 2 && !p)
            FAIL("inputs[0]", "needs at least 2 dimensions");
        for (int i = 0; i < x->ndim; i++)
            perm[i] = i;
        if (!p && x->ndim >= 2) {
            perm[x->ndim - 1] = x->ndim - 2;
            perm[x->ndim - 2] = x->ndim - 1;
        }
        if (p) {
            if (p->type != WA_LIST || p->nlist != x->ndim)
                FAIL("attrs.perm", "must list every dimension once");
            for (int i = 0; i < x->ndim; i++) {
                int a = 0;
                if (norm_axis(p->list[i], x->ndim, &a) || seen[a]++)
                    FAIL("attrs.perm", "must be a permutation of the dimensions");
                perm[i] = a;
            }
        }
        for (int d = 0; d < x->ndim; d++)
            if (y->ndim != x->ndim || y->dim[d] != x->dim[perm[d]])
                FAIL("outputs[0]", "output shape is not the permuted input shape");
        return 0;
    }
    case OP_RESHAPE:
    case OP_VIEW:
        if (y->elems != IN(g, o, 0)->elems)
            FAILX("outputs[0]", "element counts differ (%s%lld vs %lld)", "", (long long)IN(g, o, 0)->elems,
                  (long long)y->elems);
        return 0;
    default:
        /* unary elementwise */
        if (!same_shape(IN(g, o, 0), y))
            FAIL("outputs[0]", "output shape must equal the input shape");
        return 0;
    }
}

int op_is_free(const wl_graph *g, const wl_op *o)
{
    (void)g;
    if (o->type == OP_RESHAPE || o->type == OP_VIEW)
        return !wl_attr_int(o, "copy", 0);
    if (o->type == OP_TRANSPOSE || o->type == OP_SLICE || o->type == OP_EXPAND)
        return !wl_attr_int(o, "copy", 1); /* a copy unless "copy": false (a strided view) */
    return 0;
}

/* Bytes that make a leading dimension or a row "aligned": one 128-bit vector (cuBLAS picks its
 * alignment-8 bf16 kernels and ATen its vectorized copies only at 16-byte strides). */
enum { VECTOR_BYTES = 16 };

int op_unaligned(int64_t elems, dtype d)
{
    return (elems * dt_bytes(d)) % VECTOR_BYTES != 0;
}

/* Elements from one row of tensor t to the next as stored: its last dimension, or, for a strided
 * view (a slice with copy: false along the last axis, as autodiff's concat gradients are), the
 * row of the tensor it views; *off is set when such a view starts off a 16-byte boundary. */
static int64_t row_stride(const wl_graph *g, int t, int *off)
{
    const wl_tensor *x = &g->t[t];
    int64_t ld = x->ndim > 0 ? x->dim[x->ndim - 1] : 1;
    for (int depth = 0; depth < 64; depth++) {
        int p = g->t[t].producer;
        if (p < 0)
            break;
        const wl_op *o = &g->op[p];
        if (o->type != OP_SLICE || !op_is_free(g, o) || o->nin < 1)
            break;
        const wl_tensor *src = IN(g, o, 0);
        int a = 0;
        norm_axis(wl_attr_int(o, "axis", 0), src->ndim, &a);
        if (a == src->ndim - 1) {
            ld = src->dim[a];
            *off |= op_unaligned(wl_attr_int(o, "start", 0), src->dt);
        }
        t = o->in[0];
    }
    return ld;
}

int op_contiguous(const wl_graph *g, int t)
{
    for (int depth = 0; depth < 64; depth++) {
        int p = g->t[t].producer;
        if (p < 0)
            return 1;
        const wl_op *o = &g->op[p];
        if (!op_is_free(g, o) || o->nin < 1)
            return 1;
        if (o->type == OP_SLICE) {
            const wl_tensor *src = IN(g, o, 0);
            int a = 0;
            norm_axis(wl_attr_int(o, "axis", 0), src->ndim, &a);
            for (int i = 0; i < a; i++)
                if (src->dim[i] > 1)
                    return 0;
        } else if (o->type != OP_VIEW && o->type != OP_RESHAPE) {
            return 0; /* a free transpose or expand */
        }
        t = o->in[0];
    }
    return 1;
}

/* 1 when tensor t, as stored, is a transposed view: reached through free views, reshapes and
 * slices from a free transpose that moves the last axis (PyTorch's TransposeBackward gradient of
 * a matmul operand given as b.transpose(-1, -2)). */
static int last_axis_permuted(const wl_graph *g, int t)
{
    for (int depth = 0; depth < 64; depth++) {
        int p = g->t[t].producer;
        if (p < 0)
            return 0;
        const wl_op *o = &g->op[p];
        if (!op_is_free(g, o) || o->nin < 1)
            return 0;
        if (o->type == OP_TRANSPOSE) { /* no perm: the last two axes swap */
            const wl_attr *pa = wl_attr_get(o, "perm");
            int nd = g->t[t].ndim, last = 0;
            if (!pa || pa->type != WA_LIST || pa->nlist != nd || nd < 1)
                return !pa && nd >= 2;
            return norm_axis(pa->list[nd - 1], nd, &last) == 0 && last != nd - 1;
        }
        if (o->type != OP_VIEW && o->type != OP_RESHAPE && o->type != OP_SLICE)
            return 0;
        t = o->in[0];
    }
    return 0;
}

/* cuBLAS's operand alignment for C[M,N] = op(A) op(B), row-major storage: the leading dimension
 * of A (its stored row: K, or M when stored transposed, or the row of the tensor a strided view
 * reads), of B (likewise: N, or K when stored transposed) and of C (N). A vector operand (M or N
 * of 1) goes to cuBLAS's GEMV-like path instead. */
static int gemm_align1(const wl_graph *g, const wl_op *o, const gemm_geo *gg)
{
    if (gg->m == 1 || gg->n == 1)
        return 0;
    dtype d = IN(g, o, 0)->dt;
    int off = 0;
    int64_t lda = row_stride(g, o->in[0], &off), ldb = row_stride(g, o->in[1], &off);
    return op_unaligned(lda, d) || op_unaligned(ldb, d) || op_unaligned(gg->n, d) || off;
}

/* Elements of t with the flagged dimensions rounded up to a 16-byte multiple. */
static int64_t padded_elems(const wl_tensor *t, const int *flag)
{
    int64_t v = VECTOR_BYTES / (dt_bytes(t->dt) > 0 ? dt_bytes(t->dt) : 1), n = 1;
    for (int i = 0; i < t->ndim; i++) {
        int64_t d = t->dim[i];
        if (flag[i] && v > 0 && d % v)
            d += v - d % v;
        if (wl_mul(n, d, &n))
            return -1;
    }
    return n;
}

int op_gemm_pad_bytes(const wl_graph *g, const wl_op *o, int64_t pad[3])
{
    pad[0] = pad[1] = pad[2] = 0;
    gemm_geo gg;
    char msg[8], sub[8];
    if (op_type_kind(o->type) != OPK_GEMM || gemm_geometry(g, o, &gg, msg, sizeof msg, sub, sizeof sub))
        return 0;
    const wl_tensor *a = IN(g, o, 0), *b = IN(g, o, 1);
    int lin = o->type == OP_LINEAR, ta = !lin && wl_attr_int(o, "transpose_a", 0);
    int tb = (int)wl_attr_int(o, "transpose_b", 0);
    int padk = op_unaligned(gg.k, a->dt), padn = op_unaligned(gg.n, a->dt);
    /* pad_mm pads K and N only: an A stored transposed with an unaligned M stays unaligned */
    if ((!padk && !padn) || (ta && op_unaligned(gg.m, a->dt)))
        return 0;
    int fa[WL_MAXDIM] = {0}, fb[WL_MAXDIM] = {0}, fc[WL_MAXDIM] = {0};
    int ak = ta ? a->ndim - 2 : a->ndim - 1;
    int bk = lin ? (tb ? 1 : 0) : (tb ? b->ndim - 1 : b->ndim - 2);
    int bn = lin ? (tb ? 0 : 1) : (tb ? b->ndim - 2 : b->ndim - 1);
    fa[ak] = padk;
    fb[bk] = padk;
    fb[bn] = padn;
    fc[0] = padn;
    const int *flags[3] = {fa, fb, fc};
    int need[3] = {padk, padk || padn, padn && o->nin > 2};
    for (int j = 0; j < 3 && j < o->nin; j++) {
        if (!need[j])
            continue;
        const wl_tensor *t = IN(g, o, j);
        int64_t n = padded_elems(t, flags[j]), bytes;
        if (n < 0 || wl_mul(n, (int64_t)dt_bytes(t->dt), &bytes))
            return -1;
        pad[j] = bytes;
    }
    return 0;
}

/* Expected distinct rows touched by n uniform random lookups into r rows:
 * r * (1 - (1 - 1/r)^n) (balls into bins). */
static double expected_distinct(double r, double n)
{
    if (r <= 0)
        return 0;
    return r * -expm1(n * log1p(-1.0 / r));
}

#define CHK(x)                                                   \
    do {                                                         \
        if (x) {                                                 \
            snprintf(msg, msglen, "work overflows 64 bits");     \
            return -1;                                           \
        }                                                        \
    } while (0)

static dtype compute_dtype(dtype d)
{
    return dt_is_float(d) ? d : DT_FP32;
}

/* Bytes an op reads of tensor t: t's bytes, or fewer when t is a free view of a smaller
 * storage (a free broadcast `expand`: its repeated elements are stride-0 re-reads of one stored
 * element, PyTorch's expand semantics). Free slices keep their own (smaller) bytes. */
static int64_t read_bytes(const wl_graph *g, int t)
{
    int64_t b = g->t[t].bytes;
    for (int hops = 0; hops < g->nop; hops++) {
        int p = g->t[t].producer;
        if (p < 0 || p >= g->nop || g->op[p].nin < 1 || !op_is_free(g, &g->op[p]))
            break;
        t = g->op[p].in[0];
        if (g->t[t].bytes < b)
            b = g->t[t].bytes;
    }
    return b;
}

static int64_t cdiv64(int64_t a, int64_t b)
{
    return b > 0 ? a / b + (a % b != 0) : a;
}

/* Sum of an op's input bytes (its L2 reads when each input is read once). */
static int sum_in_bytes(const op_work *w, int64_t *out)
{
    int64_t s = 0;
    for (int i = 0; i < w->nin; i++)
        if (wl_add(s, w->in_bytes[i], &s))
            return -1;
    *out = s;
    return 0;
}

/* cuDNN converts NCHW fp16/bf16 tensors to NHWC for its tensor-core implicit-GEMM kernels and
 * the result back ("Tensor Layouts In Memory: NCHW vs NHWC" in NVIDIA's Convolutional Layers
 * User's Guide: with NCHW data the library transposes; the transposes cost extra kernels and
 * memory traffic). Other dtypes and NHWC need no transform. */
static int conv_needs_xform(const conv_geo *cg, dtype d)
{
    return !cg->nhwc && (d == DT_FP16 || d == DT_BF16);
}

/* Convolutions (forward, dgrad, wgrad): an implicit GEMM per group, as cuDNN runs them
 * (Chetlur et al., "cuDNN: efficient primitives for deep learning", 2014, section 3; CUTLASS
 * implicit_gemm_convolution.md): the im2col matrix is never stored, each CTA gathers its A
 * panel (output pixels x a K slice of C/groups x KH x KW) from the input through L2, so the
 * window's re-reads are L2 traffic (the GEMM tiling in cost.c counts them) and DRAM sees the
 * input once.
 *   forward: M = N*Ho*Wo, N = Cout/g, K = C/g*KH*KW, batch = g;
 *   dgrad:   M = N*H*W, N = C/g, K such that the work equals the forward's (cuDNN splits a
 *            strided dgrad into stride-1 sub-problems: no multiply-adds on inserted zeros);
 *   wgrad:   M = Cout/g, N = C/g*KH*KW, K = N*Ho*Wo (a reduction over every output pixel).
 * FLOPs = 2 N Ho Wo Cout (C/g) KH KW for all three; a bias adds one FLOP per output element.
 * fp32 convolutions run on TF32 tensor cores (PyTorch's torch.backends.cudnn.allow_tf32 is True
 * by default). Depthwise convolutions (C/g = 1, g > 1) are direct SIMT kernels: a GEMM with
 * K = KH*KW and N = Cout/g would be a tiny, padded tile per group; ATen runs its own
 * conv_depthwise2d kernels (one thread per output element, KH*KW multiply-adds) and the op is
 * memory- and SIMT-bound. Their window re-reads come from L2: a CTA of consecutive outputs along
 * W reads KH input rows, re-read by the CTAs of neighbouring output rows, so L2 traffic is KH x
 * SW input elements per output element (forward), ceil(KH/SH) gradient rows per input element
 * (dgrad), and the whole gradient and input once per tap (wgrad: one CTA per weight element,
 * ATen's conv_depthwise2d_grad_weight_kernel). */
static int conv_work(const wl_graph *g, const wl_op *o, op_work *w, char *msg, unsigned long msglen)
{
    int t = o->type;
    const wl_tensor *y = OUT(g, o, 0);
    const wl_tensor *x = t == OP_CONV2D ? IN(g, o, 0) : t == OP_CONV2D_DGRAD ? y : IN(g, o, 1);
    const wl_tensor *wt = t == OP_CONV2D_WGRAD ? y : IN(g, o, 1);
    const wl_tensor *yt = t == OP_CONV2D ? y : IN(g, o, 0);
    conv_geo cg;
    char sub[64];
    if (conv_geometry(o, x, wt, "", "", &cg, msg, msglen, sub, sizeof sub))
        return -1;
    int64_t grp = cg.groups, cpg = cg.c / grp, copg = cg.co / grp, esz = dt_bytes(x->dt);
    int64_t pix, taps, macs, t1;
    CHK(wl_mul(cg.n, cg.ho, &pix));
    CHK(wl_mul(pix, cg.wo, &pix));
    CHK(wl_mul(cg.kh, cg.kw, &taps));
    CHK(wl_mul(pix, cg.co, &macs));
    CHK(wl_mul(macs, cpg, &macs));
    CHK(wl_mul(macs, taps, &macs));
    int64_t flops;
    CHK(wl_mul(macs, 2, &flops));
    CHK(sum_in_bytes(w, &w->in_l2_bytes));
    /* a pointwise 1x1, stride-1 NHWC convolution is a GEMM over pixel rows, the rows a pipeline
     * streams; any other window spans neighbouring tile rows (a halo the ring queues do not
     * carry) and NCHW tiles are not the GEMM's rows */
    w->no_pipe = !(t == OP_CONV2D && taps == 1 && cg.stride[0] == 1 && cg.stride[1] == 1 &&
                   cg.pad[0] == 0 && cg.pad[1] == 0 && cg.nhwc && grp == 1);
    if (grp > 1 && cpg == 1) { /* depthwise: direct SIMT kernels */
        w->kind = OPK_STREAM;
        w->flops_simt = flops;
        int64_t act = 0;
        if (t == OP_CONV2D) {
            w->elems = y->elems;
            CHK(wl_mul(w->elems, cg.kh * cg.stride[1], &act)); /* each <= WINDOW_ATTR_MAX */
            CHK(wl_mul(act, esz, &act));
            if (o->nin == 3)
                CHK(wl_add(w->flops_simt, y->elems, &w->flops_simt));
            act = act > w->in_bytes[0] ? act : w->in_bytes[0];
            t1 = w->in_bytes[0];
        } else if (t == OP_CONV2D_DGRAD) {
            w->elems = x->elems;
            CHK(wl_mul(w->elems, cdiv64(cg.kh, cg.stride[0]) * esz, &act));
            act = act > w->in_bytes[0] ? act : w->in_bytes[0];
            t1 = w->in_bytes[0];
        } else {
            w->elems = yt->elems;
            CHK(wl_add(w->in_bytes[0], w->in_bytes[1], &t1));
            CHK(wl_mul(t1, taps, &act));
        }
        CHK(wl_add(w->in_l2_bytes - t1, act, &w->in_l2_bytes));
        return 0;
    }
    w->kind = OPK_GEMM;
    w->cdt = x->dt == DT_FP32 ? DT_TF32 : compute_dtype(x->dt);
    w->flops_tensor = flops;
    w->batch = grp;
    if (t == OP_CONV2D) {
        w->m = pix;
        w->n = copg;
        CHK(wl_mul(cpg, taps, &w->k));
        if (o->nin == 3)
            w->flops_simt = y->elems; /* bias add in the epilogue */
    } else if (t == OP_CONV2D_DGRAD) {
        w->m = x->elems / (cg.c ? cg.c : 1); /* input pixels N*H*W */
        w->n = cpg;
        w->k = cdiv64(macs, x->elems); /* x->elems = M * N * groups */
    } else {
        w->m = copg;
        CHK(wl_mul(cpg, taps, &w->n));
        w->k = pix;
    }
    if (conv_needs_xform(&cg, x->dt)) {
        CHK(wl_add(x->bytes, wt->bytes, &w->xform_bytes));
        CHK(wl_add(w->xform_bytes, yt->bytes, &w->xform_bytes));
    }
    return 0;
}

/* Batchnorm over the channel axis (attrs "axis", default 1; "training").
 * - inference: per-channel scale and shift with the running statistics, one elementwise pass
 *   (the table's BN_NORM_FLOPS_PER_ELEM per element);
 * - training: ATen's batch_norm_cuda for contiguous inputs: batch_norm_collect_statistics_kernel
 *   (one CTA per channel, Welford over its N*H*W elements: BN_STATS_FLOPS_PER_ELEM), a small
 *   kernel updating the running statistics, then the elementwise pass: two passes over x, a row
 *   op with one row per channel (cost.c);
 * - backward: batch_norm_backward_reduce (one CTA per channel: sums of dy and dy*(x-mean),
 *   BN_BWD_REDUCE_FLOPS_PER_ELEM) then batch_norm_backward_elemt (dx: BN_BWD_ELEMT_FLOPS_PER_ELEM
 *   in training; with running statistics dx = dy * gamma * invstd, BN_BWD_EVAL_FLOPS_PER_ELEM);
 *   a second pass that re-reads dy (and x in training).
 * One rsqrt per channel. The per-channel statistics buffers (running mean/var, saved mean and
 * invstd: 2-4 x C values) are not graph tensors and not counted (< 0.1% of x for any layer). */
enum { BN_STATS_FLOPS_PER_ELEM = 6, BN_BWD_REDUCE_FLOPS_PER_ELEM = 3, BN_BWD_ELEMT_FLOPS_PER_ELEM = 7,
       BN_BWD_EVAL_FLOPS_PER_ELEM = 2 };

static int bn_work(const wl_graph *g, const wl_op *o, op_work *w, char *msg, unsigned long msglen)
{
    int bwd = o->type == OP_BATCHNORM_BWD;
    const wl_tensor *x = IN(g, o, bwd ? 1 : 0);
    int a = 1;
    norm_axis(wl_attr_int(o, "axis", 1), x->ndim, &a);
    int64_t c = x->dim[a] > 0 ? x->dim[a] : 1;
    w->bn_train = wl_attr_int(o, "training", 0) != 0;
    w->elems = x->elems;
    CHK(sum_in_bytes(w, &w->in_l2_bytes));
    int64_t per;
    if (!bwd && !w->bn_train) {
        w->kind = OPK_STREAM;
        CHK(wl_mul(w->elems, BN_NORM_FLOPS_PER_ELEM, &w->flops_simt));
        return 0;
    }
    w->kind = OPK_ROW;
    w->rows = c;
    w->row_len = x->elems / c;
    w->no_pipe = 1; /* the statistics of the whole batch come before any normalized tile */
    if (!bwd)
        per = BN_STATS_FLOPS_PER_ELEM + BN_NORM_FLOPS_PER_ELEM;
    else
        per = BN_BWD_REDUCE_FLOPS_PER_ELEM + (w->bn_train ? BN_BWD_ELEMT_FLOPS_PER_ELEM : BN_BWD_EVAL_FLOPS_PER_ELEM);
    CHK(wl_mul(w->elems, per, &w->flops_simt));
    w->sfu_ops = c; /* one rsqrt per channel */
    return 0;
}

/* Pooling (ATen's MaxPoolForwardNCHW / avg_pool2d_out_cuda_frame: one thread per output
 * element, a loop over its window): KH*KW compares (max) or adds (avg, plus the divide) per
 * output; the input crosses DRAM once and its window re-reads come from L2 (KH x SW input
 * elements per output, as for depthwise convolutions). Max pooling on CUDA always writes the
 * int64 argmax indices too (ATen's max_pool2d calls max_pool2d_with_indices on every device but
 * the CPU, aten/src/ATen/native/Pooling.cpp): counted as written even when the graph does not
 * declare them. Backward (max_pool_backward_nchw, avg_pool2d_backward_out_cuda_frame): one
 * thread per input element gathering the ceil(KH/SH) x ceil(KW/SW) outputs whose windows hold
 * it (a compare of the saved index and an add each), the gradient (and indices) re-read from L2
 * ceil(KH/SH) times; no atomics, every input gradient written once. */
static int pool_work(const wl_graph *g, const wl_op *o, op_work *w, char *msg, unsigned long msglen)
{
    int bwd = o->type == OP_POOL2D_BWD;
    const wl_tensor *y = OUT(g, o, 0);
    const wl_tensor *x = bwd ? y : IN(g, o, 0);
    pool_geo pg;
    char sub[64];
    if (pool_geometry(o, x, "", &pg, msg, msglen, sub, sizeof sub))
        return -1;
    w->kind = OPK_STREAM;
    w->no_pipe = 1; /* the window spans neighbouring tile rows */
    int64_t esz = dt_bytes(x->dt), in;
    CHK(sum_in_bytes(w, &in));
    if (!bwd) {
        w->elems = y->elems;
        CHK(wl_mul(w->elems, pg.k[0] * pg.k[1] + (pg.max ? 0 : 1), &w->flops_simt));
        CHK(wl_mul(w->elems, pg.k[0] * pg.stride[1], &w->in_l2_bytes)); /* each <= WINDOW_ATTR_MAX */
        CHK(wl_mul(w->in_l2_bytes, esz, &w->in_l2_bytes));
        if (w->in_l2_bytes < in)
            w->in_l2_bytes = in;
        if (pg.max && o->nout == 1) /* the undeclared int64 indices */
            CHK(wl_add(w->out_bytes, y->elems * (int64_t)dt_bytes(DT_INT64), &w->out_bytes));
        return 0;
    }
    int64_t cand = cdiv64(pg.k[0], pg.stride[0]) * cdiv64(pg.k[1], pg.stride[1]);
    w->elems = y->elems;
    CHK(wl_mul(w->elems, 2 * cand, &w->flops_simt));
    CHK(wl_mul(in, cdiv64(pg.k[0], pg.stride[0]), &w->in_l2_bytes));
    return 0;
}

/* topk and sort, as ATen runs them on CUDA (PyTorch 2.x).
 * topk (aten/src/ATen/native/cuda/TensorTopK.cu): a radix select of the k-th value, then a
 * gather of the values beyond it; should_use_multiblock (the table below) picks
 * - single-block: one CTA per row (min(roundup(L, 32), 1024) threads); radixSelect walks the key
 *   2 bits at a time (SortingRadixSelect.cuh RADIX_BITS = 2): key_bits/2 counting passes over the
 *   row, then gatherTopK's 2 passes (values beyond the k-th, then equal ones): key_bits/2 + 2
 *   reads of each row, re-read from L1/L2; one kernel;
 * - multi-block: 8-bit digits (mbtopk RADIX_BITS = 8): key_bits/8 passes over the whole input on
 *   a device-wide grid, 3 kernels each (digit counts, their prefix sum, per-block counts), then 4
 *   more (k-th counts, 2 CUB scans, gatherTopK reading the input once more);
 * then the k results are sorted (sorted=True, torch's default): one sortKeyValueInplace kernel
 * re-reading and rewriting values and indices (a temporary).
 * sort (aten/src/ATen/native/cuda/Sort.cpp): rows of at most SORT_SMALL_MAX_ELEMS
 * (should_use_small_sort): values.copy_(x), the indices filled with 0..L-1, then
 * sortKeyValueInplace, one CTA per row sorting in shared memory (CUB BlockRadixSort, 4-bit
 * digits: key_bits/4 passes on chip): 3 kernels, the values and indices written, then read and
 * rewritten; longer rows: CUB's segmented radix sort of (key, int64 index) pairs, assumed
 * onesweep-like with 8-bit digits (Adinets & Merrill, "Onesweep", 2022): the indices filled, an
 * upfront histogram pass reading the keys, then ceil(key_bits/8) passes each reading and
 * writing keys and indices (all but the last into temporaries).
 * key_bits = the dtype's width (bf16: 16, fp32: 32, int64: 64). Instruction counts per element
 * (SIMT work): TOPK_COUNT_INST_PER_ELEM for a 2-bit counting pass (load, convert, pattern test,
 * digit extract, and per digit value a compare, ballot, popc and add), TOPK_GATHER_INST_PER_ELEM
 * for a gather pass (load, convert, compare, block prefix scan, store), TOPK_MB_COUNT_INST_PER_ELEM
 * for an 8-bit counting pass (load, convert, test, extract, shared-memory atomic add); the sort
 * passes' counts are estimates (rank, scan share, scatter of key and index). */
#define TOPK_SB_RADIX_BITS 2
#define TOPK_MB_RADIX_BITS 8
enum { TOPK_GATHER_PASSES = 2, TOPK_MB_KERNELS_PER_PASS = 3, TOPK_MB_KERNELS_AFTER = 4 };
enum { TOPK_COUNT_INST_PER_ELEM = 26, TOPK_GATHER_INST_PER_ELEM = 10, TOPK_MB_COUNT_INST_PER_ELEM = 8 };
enum { SORT_SMALL_MAX_ELEMS = 4096, SORT_SMALL_KERNELS = 3, SORT_BLOCK_RADIX_BITS = 4,
       SORT_LARGE_RADIX_BITS = 8, SORT_LARGE_FIXED_KERNELS = 2 };
enum { SORT_BLOCK_INST_PER_ELEM_PER_PASS = 20, SORT_ONESWEEP_INST_PER_ELEM_PER_PASS = 20,
       SORT_HIST_INST_PER_ELEM = 8 };

/* ATen's should_use_multiblock for CUB with scan-by-key (TensorTopK.cu, from the measurements
 * of pytorch/pytorch#74267): the multi-block radix select from these row lengths on, by the
 * number of rows. */
static int topk_multiblock(int64_t rows, int64_t len)
{
    if (rows > 4294967295LL || len > 4294967295LL)
        return 0;
    return (rows <= 20 && len >= 20000) || (rows > 20 && rows <= 40 && len >= 10000) ||
           (rows > 40 && rows <= 80 && len >= 8000) || (rows > 80 && rows < 200 && len >= 5000) ||
           (rows >= 200 && rows < 800 && len >= 3000) || (rows >= 800 && rows <= 4000 && len >= 800) ||
           (rows > 4000 && len >= 400);
}

static int sort_work(const wl_graph *g, const wl_op *o, op_work *w, char *msg, unsigned long msglen)
{
    const wl_tensor *x = IN(g, o, 0);
    int a = 0;
    norm_axis(wl_attr_int(o, "axis", -1), x->ndim, &a);
    int64_t len = x->dim[a] > 0 ? x->dim[a] : 1, bits = 8 * (int64_t)dt_bytes(x->dt), per;
    w->kind = OPK_SORT;
    w->elems = x->elems;
    w->rows = x->elems / len;
    w->row_len = len;
    CHK(sum_in_bytes(w, &w->in_l2_bytes));
    int row_local;
    if (o->type == OP_TOPK) {
        int64_t k = wl_attr_int(o, "k", 1);
        int mb = topk_multiblock(w->rows, len);
        row_local = !mb;
        if (!mb) {
            w->row_ctas = 1;
            w->kernels = 1;
            w->passes = (int)(bits / TOPK_SB_RADIX_BITS) + TOPK_GATHER_PASSES;
            per = bits / TOPK_SB_RADIX_BITS * TOPK_COUNT_INST_PER_ELEM +
                  TOPK_GATHER_PASSES * TOPK_GATHER_INST_PER_ELEM;
        } else {
            int64_t digits = bits / TOPK_MB_RADIX_BITS;
            w->kernels = (int)(TOPK_MB_KERNELS_PER_PASS * digits + TOPK_MB_KERNELS_AFTER);
            w->passes = (int)digits + 1;
            per = digits * TOPK_MB_COUNT_INST_PER_ELEM + TOPK_GATHER_INST_PER_ELEM;
        }
        CHK(wl_mul(w->elems, per, &w->flops_simt));
        if (k > 1) { /* the sort of the k results, in place */
            int64_t sf;
            w->kernels++;
            w->temp_bytes = w->out_bytes;
            CHK(wl_mul(OUT(g, o, 0)->elems, bits / SORT_BLOCK_RADIX_BITS * SORT_BLOCK_INST_PER_ELEM_PER_PASS, &sf));
            CHK(wl_add(w->flops_simt, sf, &w->flops_simt));
        }
    } else if (len <= SORT_SMALL_MAX_ELEMS) {
        row_local = 1;
        w->row_ctas = 1;
        w->kernels = SORT_SMALL_KERNELS;
        w->passes = 1;
        w->temp_bytes = w->out_bytes;
        CHK(wl_mul(w->elems, bits / SORT_BLOCK_RADIX_BITS * SORT_BLOCK_INST_PER_ELEM_PER_PASS, &w->flops_simt));
    } else {
        int64_t digits = cdiv64(bits, SORT_LARGE_RADIX_BITS), idx;
        row_local = 0;
        w->kernels = (int)(SORT_LARGE_FIXED_KERNELS + digits);
        w->passes = 2; /* the histogram pass and the first digit pass read the keys */
        CHK(wl_mul(w->elems, (int64_t)dt_bytes(DT_INT64), &idx));
        CHK(wl_mul(w->out_bytes, digits - 1, &w->temp_bytes));
        CHK(wl_add(w->temp_bytes, idx, &w->temp_bytes));
        per = digits * SORT_ONESWEEP_INST_PER_ELEM_PER_PASS + SORT_HIST_INST_PER_ELEM;
        CHK(wl_mul(w->elems, per, &w->flops_simt));
    }
    /* a row sorted inside one CTA along the last axis of a batch of rows is row-local, like a
     * softmax row: a pipeline stage can sort the rows of its tile; a 1-D tensor, another axis
     * or a device-wide pass needs the whole input first */
    w->no_pipe = !(row_local && a == x->ndim - 1 && x->ndim >= 2);
    return 0;
}

double op_moe_kept_slots(int64_t tokens, int64_t k, int64_t experts, int64_t capacity,
                         double imbalance)
{
    if (tokens <= 0 || k <= 0 || experts <= 0 || capacity <= 0)
        return 0.0;
    double slots = (double)tokens * (double)k, mean = slots / (double)experts;
    double hot = fmin(imbalance * mean, slots), cap = (double)capacity;
    double rest = experts > 1 ? (slots - hot) / (double)(experts - 1) : 0.0;
    return fmin(hot, cap) + (double)(experts - 1) * fmin(rest, cap);
}

/* Mixture-of-experts routing as MoE libraries run it (GShard's capacity buffers, Lepikhin et al.
 * 2021; DeepSpeed-MoE; Tutel's fast_encode/fast_decode, Hwang et al. 2023; Megatron-Core's
 * moe_permute/unpermute), with S = op_moe_kept_slots kept slots:
 * - dispatch: a position pass reads the expert ids and gives each slot its place in its
 *   expert's buffer (MOE_POS_INST_PER_SLOT), then a permute kernel writes every buffer row: S
 *   token rows (times the gate, if given) and E*C - S zero rows, reading a token's row once per
 *   kept slot through L2, the distinct tokens once from DRAM (a token whose K slots were all
 *   dropped is not read; slots assumed dropped independently): 2 kernels, a gather of E*C rows;
 * - combine: one output row per token, the sum of its kept slots' buffer rows (times the gate):
 *   a gather of T rows reading S buffer rows; the slot positions are the dispatch's (1 kernel);
 * - gate backward: a row reduction, one dot product of length D per slot (dropped slots: 0),
 *   reading dy once and the S kept buffer rows once.
 * No routing op is pipelinable: a slot's position needs the count over all earlier tokens, and a
 * token's output needs rows from every expert's buffer. */
enum { MOE_DISPATCH_KERNELS = 2 };
/* position pass, per slot: load the id, a shared-memory atomic increment of the expert's counter,
 * the block-offset add and the store of the position (an estimate of the instruction count,
 * like the sort passes') */
enum { MOE_POS_INST_PER_SLOT = 8 };

static int moe_work(const wl_graph *g, const wl_op *o, op_work *w, char *msg, unsigned long msglen)
{
    int t = o->type;
    const wl_tensor *x, *buf, *ids;
    moe_roles(g, o, &x, &buf, &ids);
    int64_t tok, k, e, cap, d = x->dim[1];
    op_moe_shape(g, o, &tok, &k, &e, &cap);
    int64_t rowb, keptb, slots, kept, gateb = t != OP_MOE_GATE_BWD && o->nin == 3 ? IN(g, o, 2)->bytes : 0;
    double s = op_moe_kept_slots(tok, k, e, cap, op_moe_imbalance(o));
    kept = (int64_t)llround(s);
    CHK(wl_mul(d, (int64_t)dt_bytes(x->dt), &rowb));
    CHK(wl_mul(kept, rowb, &keptb));
    CHK(wl_mul(tok, k, &slots));
    w->row_len = d;
    w->no_pipe = 1;
    w->kernels = 1;
    int64_t fl;
    CHK(wl_mul(kept, d, &fl));
    switch (t) {
    case OP_MOE_DISPATCH: {
        double drop = slots > 0 ? 1.0 - s / (double)slots : 0.0;
        double distinct = (double)tok * (1.0 - pow(fmax(drop, 0.0), (double)k));
        w->kernels = MOE_DISPATCH_KERNELS;
        CHK(wl_mul(e, cap, &w->rows));
        w->table_rows = tok;
        w->elems = buf->elems;
        w->in_bytes[0] = (int64_t)ceil(distinct) * rowb;
        CHK(wl_add(keptb, ids->bytes, &w->in_l2_bytes));
        CHK(wl_add(w->in_l2_bytes, ids->bytes, &w->in_l2_bytes)); /* the position pass's read */
        CHK(wl_add(w->in_l2_bytes, gateb, &w->in_l2_bytes));
        CHK(wl_mul(slots, MOE_POS_INST_PER_SLOT, &w->flops_simt));
        if (gateb)
            CHK(wl_add(w->flops_simt, fl, &w->flops_simt));
        break;
    }
    case OP_MOE_COMBINE:
        w->rows = tok;
        CHK(wl_mul(e, cap, &w->table_rows));
        w->elems = x->elems;
        w->in_bytes[0] = keptb;
        CHK(wl_add(keptb, ids->bytes, &w->in_l2_bytes));
        CHK(wl_add(w->in_l2_bytes, gateb, &w->in_l2_bytes));
        CHK(wl_mul(fl, gateb ? 2 : 1, &w->flops_simt)); /* (multiply and) add per element */
        break;
    default: /* OP_MOE_GATE_BWD */
        w->rows = slots;
        CHK(wl_mul(slots, d, &w->elems));
        w->in_bytes[1] = keptb;
        CHK(sum_in_bytes(w, &w->in_l2_bytes));
        CHK(wl_mul(fl, 2, &w->flops_simt)); /* a multiply-add per element of a kept slot */
        break;
    }
    return 0;
}

int op_work_of(const wl_graph *g, const wl_op *o, op_work *w, char *msg, unsigned long msglen)
{
    memset(w, 0, sizeof *w);
    w->type = o->type;
    w->kind = op_is_free(g, o) ? OPK_FREE : OP_TABLE[o->type].kind;
    if ((o->type == OP_RESHAPE || o->type == OP_VIEW) && !op_is_free(g, o)) /* "copy": true */
        w->kind = OPK_STREAM;
    w->nin = o->nin;
    const wl_tensor *y = OUT(g, o, 0);
    w->cdt = compute_dtype(o->nin ? IN(g, o, 0)->dt : y->dt);
    for (int i = 0; i < o->nout; i++)
        CHK(wl_add(w->out_bytes, OUT(g, o, i)->bytes, &w->out_bytes));
    for (int i = 0; i < o->nin; i++)
        w->in_bytes[i] = read_bytes(g, o->in[i]);
    if (w->kind == OPK_FREE) {
        memset(w->in_bytes, 0, sizeof w->in_bytes);
        w->out_bytes = 0;
        return 0;
    }
    switch (o->type) { /* families with their own geometry */
    case OP_CONV2D:
    case OP_CONV2D_DGRAD:
    case OP_CONV2D_WGRAD:
        return conv_work(g, o, w, msg, msglen);
    case OP_BATCHNORM:
    case OP_BATCHNORM_BWD:
        return bn_work(g, o, w, msg, msglen);
    case OP_POOL2D:
    case OP_POOL2D_BWD:
        return pool_work(g, o, w, msg, msglen);
    case OP_TOPK:
    case OP_SORT:
        return sort_work(g, o, w, msg, msglen);
    case OP_MOE_DISPATCH:
    case OP_MOE_COMBINE:
    case OP_MOE_GATE_BWD:
        return moe_work(g, o, w, msg, msglen);
    default:
        break;
    }
    const op_info *inf = &OP_TABLE[o->type];
    int fl = inf->simt_flops_per_elem, sfu = inf->sfu_per_elem;
    int l2_set = 0; /* in_l2_bytes set by the kind's case (else: every input read once) */
    switch (w->kind) {
    case OPK_GEMM: {
        gemm_geo gg;
        char sub[64];
        if (gemm_geometry(g, o, &gg, msg, msglen, sub, sizeof sub))
            return -1;
        w->m = gg.m;
        w->n = gg.n;
        w->k = gg.k;
        w->batch = gg.batch;
        int64_t mn, mnk;
        CHK(wl_mul(gg.m, gg.n, &mn));
        CHK(wl_mul(mn, gg.batch, &mn));
        CHK(wl_mul(mn, gg.k, &mnk));
        CHK(wl_mul(mnk, 2, &w->flops_tensor));
        if (o->nin == 3)
            w->flops_simt = mn; /* bias (linear) or C (matmul) added in the epilogue */
        w->align1 = gemm_align1(g, o, &gg);
        break;
    }
    case OPK_STREAM: {
        w->elems = y->elems;
        if (o->type == OP_SLICE || o->type == OP_TRANSPOSE || o->type == OP_RESHAPE || o->type == OP_VIEW)
            w->in_bytes[0] = y->bytes; /* a slice reads only what it keeps */
        if (o->type == OP_CONCAT || o->type == OP_SLICE) {
            /* along the last axis, a piece whose width (or offset) is not a 16-byte multiple
             * makes ATen copy element by element */
            const wl_tensor *x0 = IN(g, o, 0);
            int a = 0;
            norm_axis(wl_attr_int(o, "axis", 0), x0->ndim, &a);
            if (a == x0->ndim - 1) {
                for (int i = 0; i < o->nin; i++)
                    w->unaligned |= op_unaligned(IN(g, o, i)->dim[a], x0->dt);
                if (o->type == OP_SLICE)
                    w->unaligned |= op_unaligned(y->dim[a], x0->dt) ||
                                    op_unaligned(wl_attr_int(o, "start", 0), x0->dt);
            }
        }
        if (op_info_of(o->type)->flags & OPF_ELEMENTWISE)
            /* an operand that is a transposed view sends ATen's TensorIterator to its generic,
             * element-by-element kernel (elementwise_kernel<128, 4>, not the vectorized one):
             * DLRM training's accumulation of the interaction's two feature gradients, one a
             * transposed view, 56.9 us at B = 4096 against 14.6 us vectorized (H200 trace,
             * validation/apps/h200-apps-kernels.csv) */
            for (int i = 0; i < o->nin; i++)
                w->unaligned |= last_axis_permuted(g, o->in[i]);
        if (o->type == OP_INDEX_COPY || o->type == OP_SCATTER) {
            /* in place: the destination is not read; only the source rows (elements) are
             * written, in the destination's dtype */
            const wl_tensor *src = IN(g, o, 2);
            w->in_bytes[0] = 0;
            w->elems = src->elems;
            CHK(wl_mul(src->elems, (int64_t)dt_bytes(y->dt), &w->out_bytes));
        }
        CHK(wl_mul(w->elems, fl, &w->flops_simt));
        CHK(wl_mul(w->elems, sfu, &w->sfu_ops));
        break;
    }
    case OPK_ROW: {
        const wl_tensor *x = IN(g, o, inf->row_input);
        w->elems = x->elems;
        if (o->type == OP_REDUCE) {
            w->rows = y->elems;
            w->row_len = x->elems / (y->elems ? y->elems : 1);
            /* the innermost axis kept and some outer axis reduced: a column reduction */
            const wl_attr *ax = wl_attr_get(o, "axes");
            int inner = 0, outer = 0;
            for (int i = 0; ax && i < ax->nlist; i++) {
                int a = 0;
                norm_axis(ax->list[i], x->ndim, &a);
                inner |= a == x->ndim - 1;
                outer |= a < x->ndim - 1;
            }
            w->col_reduce = outer && !inner;
        } else if (o->type == OP_ARGMAX || o->type == OP_CUMSUM) {
            /* one reduction (argmax) or scan (cumsum) line per element of the other axes; along
             * an outer axis the lines are strided columns (ATen's column reduction, its
             * outer-dimension scan kernel); only lines along the last axis of a batch of rows
             * stay inside a pipeline tile */
            int a = 0;
            norm_axis(wl_attr_int(o, "axis", -1), x->ndim, &a);
            w->row_len = x->dim[a] > 0 ? x->dim[a] : 1;
            w->rows = x->elems / w->row_len;
            w->col_reduce = a < x->ndim - 1;
            w->no_pipe = a < x->ndim - 1 || x->ndim < 2;
        } else if (o->type == OP_SOFTMAX || o->type == OP_SOFTMAX_BWD) {
            int a = 0;
            norm_axis(wl_attr_int(o, "axis", -1), x->ndim, &a);
            w->row_len = x->dim[a];
            w->rows = x->elems / w->row_len;
        } else {
            w->row_len = x->dim[x->ndim - 1];
            w->rows = x->elems / w->row_len;
        }
        if (o->type == OP_NORM_BWD)
            w->param_grads = o->nout - 1;
        CHK(wl_mul(w->elems, fl, &w->flops_simt));
        CHK(wl_mul(w->elems, sfu, &w->sfu_ops));
        if (inf->sfu_per_row) /* norms: one rsqrt per row */
            CHK(wl_add(w->sfu_ops, w->rows, &w->sfu_ops));
        w->inst_per_elem = inf->inst_per_elem;
        w->inst_per_cta = inf->inst_per_cta;
        if (inf->norm_warp_inst[0] > 0 && w->row_len > 0) {
            /* thread-instructions: per row (CTA) the base and the active warps' share, per
             * element the warp-iterations' */
            int64_t iters = cdiv64(w->row_len, NORM_WARP_ITER_ELEMS);
            int64_t warps = iters < NORM_WARPS ? iters : NORM_WARPS;
            w->inst_per_cta = WARP_THREADS * (inf->norm_warp_inst[0] +
                                                   inf->norm_warp_inst[1] * (double)warps);
            w->inst_per_elem = WARP_THREADS * inf->norm_warp_inst[2] * (double)iters /
                               (double)w->row_len;
            /* each thread walks the row in iterations of a vector per thread (the row's warps
             * side by side): a load of x, then, after the statistics, x again with the weights
             * (gamma, beta) for the output, NORM_CHAIN_ROUNDS_PER_ITER dependent round trips and
             * the iteration's instructions each; a row per CTA, so a CTA lasts at least this */
            int64_t thread_iters = cdiv64(w->row_len, NORM_WARP_ITER_ELEMS * NORM_WARPS);
            w->chain_rounds = NORM_CHAIN_ROUNDS_PER_ITER * thread_iters;
            w->chain_inst = inf->norm_warp_inst[2] * (double)thread_iters;
        }
        if (inf->rowgrid == ROWGRID_WARP && inf->inst_per_elem > 0 && w->row_len > ROW_WARP_MAX_ELEMS)
            w->inst_per_elem = SOFTMAX_BLOCK_INST_PER_ELEM;
        break;
    }
    case OPK_ATTN: {
        int base = o->type == OP_ATTN_BWD ? 1 : 0;
        const wl_tensor *q = IN(g, o, base), *k = IN(g, o, base + 1), *v = IN(g, o, base + 2);
        w->batch = q->dim[0];
        w->heads = q->dim[1];
        w->kv_heads = k->dim[1];
        w->s = q->dim[2];
        w->l = k->dim[2];
        w->d = q->dim[3];
        w->dv = v->dim[3];
        w->causal = (int)wl_attr_int(o, "causal", 0);
        w->is_backward = base;
        /* score elements kept: causal masks are aligned bottom-right (query i sees keys
         * 0 .. L-S+i), so kept = S*L - S*(S-1)/2 */
        int64_t kept, t;
        CHK(wl_mul(w->s, w->l, &kept));
        if (w->causal)
            kept -= w->s * (w->s - 1) / 2;
        CHK(wl_mul(kept, w->batch, &kept));
        CHK(wl_mul(kept, w->heads, &kept));
        CHK(wl_mul(kept, 2 * (w->d + w->dv), &t)); /* QK^T and PV */
        /* backward recomputes QK^T and does dV, dP, dQ, dK: 5 GEMMs against the forward's 2
         * (FlashAttention-2, Dao 2023, section 3.2) */
        w->flops_tensor = base ? t / 2 * 5 : t;
        CHK(wl_mul(kept, base ? 8 : 4, &w->flops_simt)); /* scale, max, sub, sum (+dS) */
        w->sfu_ops = kept;                               /* one exp per score */
        int mi = base ? 5 : 3;
        if (o->nin > mi) { /* an additive mask: one element read (from L2) and added per score */
            CHK(wl_mul(kept, (int64_t)dt_bytes(IN(g, o, mi)->dt), &w->mask_l2_bytes));
            CHK(wl_add(w->flops_simt, kept, &w->flops_simt));
        }
        break;
    }
    case OPK_GATHER: {
        const wl_tensor *tab = IN(g, o, 0), *idx = IN(g, o, 1);
        int64_t lookups = idx->elems, rowb;
        if (o->type == OP_EMBEDDING) {
            w->row_len = tab->dim[1];
            w->table_rows = tab->dim[0];
        } else {
            int a = 0;
            norm_axis(wl_attr_int(o, "axis", 0), tab->ndim, &a);
            w->table_rows = tab->dim[a];
            w->row_len = tab->elems / tab->dim[a];
        }
        w->rows = lookups;
        CHK(wl_mul(w->row_len, dt_bytes(tab->dt), &rowb));
        double distinct = expected_distinct((double)w->table_rows, (double)lookups);
        w->in_bytes[0] = (int64_t)ceil(distinct) * rowb;
        CHK(wl_mul(lookups, rowb, &w->in_l2_bytes));
        CHK(wl_add(w->in_l2_bytes, idx->bytes, &w->in_l2_bytes));
        w->elems = y->elems;
        break;
    }
    case OPK_SCATTER: {
        /* [src, index] into a zeroed destination, or [dst, index, src] in place */
        int dst_form = o->nin == 3;
        const wl_tensor *src = IN(g, o, dst_form ? 2 : 0);
        int a = 0;
        norm_axis(wl_attr_int(o, "axis", 0), src->ndim, &a);
        w->rows = src->dim[a];
        w->row_len = src->elems / src->dim[a];
        w->table_rows = y->dim[a];
        w->elems = src->elems;
        w->flops_simt = src->elems; /* one add per element, as an L2 atomic */
        if (o->type == OP_EMBEDDING_BWD && !op_contiguous(g, o->in[0]))
            w->contig_bytes = src->bytes; /* embedding_dense_backward: grad.contiguous() */
        if (dst_form) {
            /* in place (like index_copy): the atomics read and write only the destination rows
             * the index touches, the expected distinct ones of I uniform lookups */
            int64_t rowb, touched;
            CHK(wl_mul(w->row_len, (int64_t)dt_bytes(y->dt), &rowb));
            double distinct = ceil(expected_distinct((double)w->table_rows, (double)w->rows));
            if (distinct * (double)rowb > (double)IN(g, o, 0)->bytes)
                touched = IN(g, o, 0)->bytes;
            else
                touched = (int64_t)distinct * rowb;
            w->in_bytes[0] = touched;
            w->out_bytes = touched;
            /* the RMW read of the destination is in cost.c's 2 x out_bytes */
            CHK(wl_add(w->in_bytes[1], w->in_bytes[2], &w->in_l2_bytes));
            l2_set = 1;
        }
        break;
    }
    case OPK_SORT:
    case OPK_FREE:
        break;
    }
    if (w->kind != OPK_GATHER && !l2_set)
        for (int i = 0; i < o->nin; i++)
            CHK(wl_add(w->in_l2_bytes, w->in_bytes[i], &w->in_l2_bytes));
    return 0;
}

op_work *op_works(const wl_graph *g, arena *a, kt_err *e)
{
    op_work *w = arena_calloc(a, (size_t)g->nop + 1, sizeof *w);
    if (!w) {
        err_set(e, KT_EINTERNAL, g->file, NULL, "out of memory");
        return NULL;
    }
    for (int i = 0; i < g->nop; i++) {
        char msg[128], p[64];
        if (op_work_of(g, &g->op[i], &w[i], msg, sizeof msg)) {
            err_path(p, sizeof p, "ops", NULL, i);
            err_set(e, KT_EINPUT, g->file, p, "%s", msg);
            return NULL;
        }
    }
    return w;
}
