/* op: the table of operator types - shape rules, FLOPs, bytes, execution unit and tiling. */
#ifndef KT_OP_H
#define KT_OP_H
#include <stdint.h>

#include "../arena.h"
#include "../err.h"
#include "dtype.h"
#include "wl.h"

/** How an op is tiled onto CTAs (drives cost.c). */
typedef enum op_kind {
    OPK_FREE,    /* view/reshape without copy: no kernel */
    OPK_GEMM,    /* tensor-core (or SIMT fp32) GEMM, CTA tiles of tm x tn over M x N */
    OPK_STREAM,  /* elementwise / copy-like: fixed elements per CTA */
    OPK_ROW,     /* row-wise reductions (softmax, norms, reduce): rows per CTA */
    OPK_ATTN,    /* fused flash attention: query tiles x heads */
    OPK_GATHER,  /* random row reads (embedding, index_select) */
    OPK_SCATTER, /* random row read-modify-writes through L2 atomics (scatter_add) */
    OPK_SORT     /* radix select / radix sort: several passes over each row (topk, sort) */
} op_kind;

/* X(enum, name): every operator type; its properties are one row of the op table (op.c). */
#define OP_TYPES(X)                         \
    X(MATMUL, "matmul")                     \
    X(LINEAR, "linear")                     \
    X(RELU, "relu")                         \
    X(GELU, "gelu")                         \
    X(SILU, "silu")                         \
    X(SIGMOID, "sigmoid")                   \
    X(TANH, "tanh")                         \
    X(EXP, "exp")                           \
    X(LOG, "log")                           \
    X(NEG, "neg")                           \
    X(ABS, "abs")                           \
    X(SQRT, "sqrt")                         \
    X(RSQRT, "rsqrt")                       \
    X(SQUARE, "square")                     \
    X(SCALE, "scale")                       \
    X(COPY, "copy")                         \
    X(CAST, "cast")                         \
    X(FILL, "fill")                         \
    X(ADD, "add")                           \
    X(SUB, "sub")                           \
    X(MUL, "mul")                           \
    X(DIV, "div")                           \
    X(ACT_BWD, "act_backward")              \
    X(ADAM, "adam_update")                  \
    X(REDUCE, "reduce")                     \
    X(SOFTMAX, "softmax")                   \
    X(SOFTMAX_BWD, "softmax_backward")      \
    X(LAYERNORM, "layernorm")               \
    X(RMSNORM, "rmsnorm")                   \
    X(NORM_BWD, "norm_backward")            \
    X(ATTENTION, "attention")               \
    X(ATTN_BWD, "attention_backward")       \
    X(EMBEDDING, "embedding")               \
    X(GATHER, "gather")                     \
    X(INDEX_SELECT, "index_select")         \
    X(SCATTER_ADD, "scatter_add")           \
    X(INDEX_ADD, "index_add")               \
    X(INDEX_COPY, "index_copy")             \
    X(EMBEDDING_BWD, "embedding_backward")  \
    X(CONCAT, "concat")                     \
    X(SLICE, "slice")                       \
    X(TRANSPOSE, "transpose")               \
    X(RESHAPE, "reshape")                   \
    X(VIEW, "view")                         \
    X(ROPE, "rope")                         \
    X(EXPAND, "expand")                     \
    X(CONV2D, "conv2d")                     \
    X(CONV2D_DGRAD, "conv2d_dgrad")         \
    X(CONV2D_WGRAD, "conv2d_wgrad")         \
    X(BATCHNORM, "batchnorm")               \
    X(BATCHNORM_BWD, "batchnorm_backward")  \
    X(POOL2D, "pool2d")                     \
    X(POOL2D_BWD, "pool2d_backward")        \
    X(TOPK, "topk")                         \
    X(ARGMAX, "argmax")                     \
    X(SORT, "sort")                         \
    X(CUMSUM, "cumsum")                     \
    X(DROPOUT, "dropout")                   \
    X(SCATTER, "scatter")                   \
    X(MOE_DISPATCH, "moe_dispatch")         \
    X(MOE_COMBINE, "moe_combine")           \
    X(MOE_GATE_BWD, "moe_gate_backward")    \
    X(LEAKY_RELU, "leaky_relu")             \
    X(ELU, "elu")                           \
    X(SOFTPLUS, "softplus")                 \
    X(MISH, "mish")                         \
    X(HARDTANH, "hardtanh")                 \
    X(HARDSIGMOID, "hardsigmoid")           \
    X(HARDSWISH, "hardswish")

typedef enum op_type {
#define X(e, n) OP_##e,
    OP_TYPES(X)
#undef X
        OP_COUNT
} op_type;

/** Type flags (op_info.flags). */
enum {
    OPF_GEMM = 1 << 0,        /* matmul/linear: a GEMM kernel */
    OPF_TENSOR = 1 << 1,      /* runs on the tensor cores (GEMMs, attention) */
    OPF_ELEMENTWISE = 1 << 2, /* one output element per input element (unary, binary, rope, fill) */
    OPF_INDEX = 1 << 3,       /* data-dependent rows: gather, scatter, embedding, index_copy */
    OPF_EPILOGUE = 1 << 4,    /* kitsune: fuses into its producer's pipeline stage as an epilogue */
    OPF_TRAIN_ONLY = 1 << 5,  /* created by autodiff (backward kernels, optimizer updates) */
    OPF_CONV = 1 << 6,        /* a cuDNN convolution (forward, dgrad, wgrad): implicit GEMM */
    OPF_ROUTE = 1 << 7,       /* mixture-of-experts routing (dispatch, combine): a library
                                 kernel under every vf policy, never in a pipeline */
};

/** Vertical-fusion class of a type: what a fusion group may do with it (fusion.c). */
typedef enum op_fuse {
    FUSE_NONE,      /* a closed group of its own (op_info.fuse_why says why) */
    FUSE_FREE,      /* a view: joins its producer's group, launches nothing */
    FUSE_GEMM,      /* leads a group: epilogues, row epilogues and GEMM chains join it */
    FUSE_POINTWISE, /* joins as an epilogue of a GEMM tile or stitches with pointwise/row ops */
    FUSE_INPLACE,   /* pointwise, written in place into a wider output (concat): no broadcast test */
    FUSE_ROW        /* row op: row epilogue of a GEMM or stitched (AStitch) */
} op_fuse;

/** CTA grid of a row kernel (cost.c), as ATen launches it. */
typedef enum op_rowgrid {
    ROWGRID_CTA,  /* one row per CTA (layer_norm, rms_norm, block softmax, norm backward) */
    ROWGRID_PACK, /* rows packed until a CTA holds ROW_MIN_ELEMS_PER_CTA elements (reduce) */
    ROWGRID_WARP  /* one warp per row up to 1024 elements, a CTA per row above (softmax) */
} op_rowgrid;

/** Gradient rule of a type (autodiff.c applies it; docs/training.md lists them). */
typedef enum op_grad {
    GR_UNSUPPORTED, /* no rule: training graphs through it are refused */
    GR_NONE,        /* no differentiable inputs (fill) */
    GR_MATMUL,      /* dA = dC B^T, dB = A^T dC (transpose flags, no transpose kernels) */
    GR_LINEAR,      /* dx = linear(dy, W^T), dW = x^T dy, db = sum of dy over rows */
    GR_SELF,        /* the same op applied to dy (neg, copy, cast, scale) */
    GR_ACT,         /* act_backward(dy, saved): saved = output (OPG_SAVES_OUT) or input */
    GR_ADD,         /* da = db = dy (summed to broadcast operands) */
    GR_SUB,         /* da = dy, db = -dy */
    GR_MUL,         /* da = dy b, db = dy a */
    GR_DIV,         /* da = dy / b, db = -(dy y) / b */
    GR_SOFTMAX,     /* softmax_backward(dy, y) */
    GR_NORM,        /* norm_backward(dy, x, [gamma]) -> dx, [dgamma, dbeta] */
    GR_ATTENTION,   /* attention_backward(dO, q, k, v, O) -> dq, dk, dv */
    GR_ROPE,        /* the inverse rotation: rope of dy */
    GR_DUAL,        /* index ops: the dual index op (op_info.grad_dual) of dy */
    GR_EMBEDDING,   /* index_add of dy rows into the dense table gradient */
    GR_INDEX_COPY,  /* src: index_select of dy; dst: dy with src rows zeroed */
    GR_CONCAT,      /* slices of dy */
    GR_SLICE,       /* dy padded with zero fills (concat) */
    GR_TRANSPOSE,   /* the inverse permutation */
    GR_VIEW,        /* the same view of dy */
    GR_REDUCE,      /* expand dy back (max: masked with the saved input) */
    GR_EXPAND,      /* sum dy down to the input's shape */
    GR_CONV,        /* dx = conv2d_dgrad(dy, w), dw = conv2d_wgrad(dy, x), db = sum of dy */
    GR_CONV_T,      /* a transposed convolution y = conv2d_dgrad(x, w): dx = conv2d(dy, w),
                       dw = conv2d_wgrad(x, dy) */
    GR_BATCHNORM,   /* batchnorm_backward(dy, x, [gamma]) -> dx, [dgamma, dbeta] */
    GR_POOL,        /* pool2d_backward(dy, [saved argmax indices]) -> dx */
    GR_SELECT,      /* topk/sort: dy scattered into zeros of x's shape at the saved indices */
    GR_CUMSUM,      /* the reverse cumsum: flip, cumsum, flip */
    GR_DROPOUT,     /* dy times the saved mask (the 1/(1-p) scale folded in) */
    GR_MOE_DISPATCH, /* dx = moe_combine(dy, experts, [gate]); dgate = moe_gate_backward(x, dy) */
    GR_MOE_COMBINE  /* dy_e = moe_dispatch(dy, experts, [gate]); dgate = moe_gate_backward(dy, y) */
} op_grad;

/** Class of the kernels an op launches, as measured traces name them (kmatch.c sorts kernel
 *  names into these; validate --trace compares class by class). */
typedef enum op_kclass {
    KC_ELEMENTWISE, /* ATen's element-wise kernels (the default) */
    KC_GEMM,        /* cuBLAS, CUTLASS and cuDNN GEMMs and convolutions */
    KC_ATTENTION,   /* flash and memory-efficient attention, forward and backward */
    KC_NORM,        /* layer, RMS and batch norm, forward and backward */
    KC_SOFTMAX,     /* softmax and its backward */
    KC_REDUCE,      /* ATen reductions (sum, mean, max, argmax) */
    KC_INDEX,       /* data-dependent rows and sorts: gathers, scatters, embeddings and their
                       backward, top-k, sort, scans */
    KC_COPY,        /* concatenations, slices, layout copies, dtype casts */
    KC_FILL,        /* fills and memsets */
    KC_POOL,        /* pooling, forward and backward */
    KC_OPTIMIZER,   /* fused optimizer updates */
    KC_GENERATED,   /* kernels a compiler generates (Triton under torch.compile; vf groups) */
    KC_COUNT
} op_kclass;

/** One row of the op table: everything type-specific. */
typedef struct op_info {
    const char *name;
    op_kind kind;          /* tiling class (cost.c); views decide per op (op_work_of) */
    int min_in, max_in;    /* inputs; max_in -1 = any (concat) */
    int max_out;           /* outputs (1 unless a fused backward/update op) */
    int min_out;           /* outputs an op must have (0 = 1): values and indices of topk/sort */
    const char *attrs;     /* accepted attribute keys, each followed by ',' */
    unsigned flags;        /* OPF_* */
    int simt_flops_per_elem, sfu_per_elem; /* per element (STREAM: output, ROW: input) */
    double inst_per_elem, inst_per_cta;    /* ROW: measured issued instructions (0 = FLOPs) */
    double norm_warp_inst[3]; /* ATen's vectorized norm kernel: warp-instructions per row =
                                 [0] + [1] x active warps + [2] x warp-iterations (op.c) */
    int sfu_per_row;       /* ROW: SFU ops per row (norms: one rsqrt) */
    op_rowgrid rowgrid;    /* ROW: CTA grid */
    int row_input;         /* ROW: the input whose rows are normalized/reduced */
    op_fuse fuse;          /* vertical-fusion class */
    const char *fuse_why;  /* FUSE_NONE: why nothing fuses with it */
    op_grad grad;          /* gradient rule */
    int grad_saves_out;    /* GR_ACT: the rule reads the output (else the input) */
    int grad_dual;         /* GR_DUAL: op type of the gradient */
    op_kclass kclass;      /* its kernels' class in measured traces (default elementwise) */
} op_info;

enum { OP_MAXIN = 64 };

/** Hardware-independent work of one op instance (unique bytes; tiling geometry). */
typedef struct op_work {
    int type;              /* op_type of the op (or of a group's main op) */
    op_kind kind;
    dtype cdt;             /* compute dtype (tensor-core peak to use) */
    int64_t flops_tensor;  /* matrix FLOPs (2 per multiply-add) */
    int64_t flops_simt;    /* fp32 SIMT FLOPs */
    int64_t sfu_ops;       /* transcendental ops (exp, rsqrt, ...) on the SFUs */
    int nin;
    int64_t in_bytes[OP_MAXIN]; /* unique bytes the op must read from each input */
    int64_t in_l2_bytes;        /* bytes read by all CTAs incl. re-reads of shared operands */
    int64_t out_bytes;          /* bytes written (all outputs) */
    /* geometry */
    int64_t m, n, k, batch;     /* GEMM: C[batch][m][n] += A[m][k] B[k][n] */
    int64_t elems;              /* STREAM: output elements; ROW: input elements */
    int64_t rows, row_len;      /* ROW; GATHER/SCATTER: rows moved and elements per row */
    int64_t heads, kv_heads, s, l, d, dv; /* ATTN */
    int causal;
    int64_t table_rows;         /* GATHER/SCATTER: rows of the indexed table / destination */
    int is_backward;            /* ATTN_BWD etc. */
    double inst_per_elem;       /* ROW kernels: issued thread-instructions per element and per */
    double inst_per_cta;        /* CTA (ATen's kernels, measured with ncu; 0 = use the FLOPs) */
    int align1;                 /* GEMM: a leading dimension not a multiple of 16 bytes sends
                                   cuBLAS to its alignment-1 kernels (cost.c) */
    int col_reduce;             /* ROW reduce over outer axes only (the output is contiguous):
                                   ATen's column reduction (cost.c) */
    int unaligned;              /* STREAM copy (concat, slice) of rows that are not a multiple of
                                   16 bytes: ATen's element-wise, non-vectorized path */
    int generated;              /* a kernel a fusing compiler generates (Triton, vf groups), not
                                   an ATen library call: ROW ops pack rows and cost by their
                                   FLOPs, not by ATen's measured instruction counts (cost.c) */
    int param_grads;            /* norm_backward: parameter gradients it produces (dgamma,
                                   dbeta): a second kernel reduces them over the rows (cost.c) */
    int64_t refetch_bytes;      /* generated kernels: DRAM re-reads of their gathers' rows (the
                                   fuser sums its members' gather re-fetches; cost.c) */
    int64_t xform_bytes;        /* GEMM: bytes of the NCHW tensors cuDNN converts to NHWC and
                                   back around its tensor-core kernel (x/dy, w, y/dx; cost.c) */
    int passes;                 /* SORT: reads of input 0 through L2 (radix digit and gather
                                   passes; 0 = 1) */
    int kernels;                /* SORT: kernels the library call launches (0 = 1) */
    int row_ctas;               /* SORT: one CTA per row (ATen's single-block paths); 0: a
                                   device-wide grid */
    int64_t temp_bytes;         /* SORT: temporaries written and read back once (cost.c) */
    int64_t contig_bytes;       /* EMBEDDING_BWD: a strided dy that ATen's dense backward first
                                   makes contiguous (its bytes; generated kernels read it as is) */
    int64_t mask_l2_bytes;      /* ATTN: bytes of the additive mask read per score (cost.c) */
    int bn_train;               /* batchnorm(_backward): batch statistics (two passes over x) */
    int64_t chain_rounds;       /* ROW kernels of one row per CTA (ATen's norms): the memory round
                                   trips one CTA waits for one after another, start to end */
    double chain_inst;          /* ... and its dependent thread-instructions between them: a
                                   CTA's latency floor when a wave holds every row (cost.c) */
    int no_pipe;                /* not in a Kitsune pipeline: the op needs neighbouring or all
                                   tiles of its input before it writes one tile (op.c says why) */
} op_work;

/** Name of a type ("matmul"). */
const char *op_name(int type);
/** Parse a type name ("index_select"); -1 if unknown. */
int op_parse(const char *name);
/** The op table row of a type (type must be valid). */
const op_info *op_info_of(int type);
/** Kind of a type (OPK_FREE for views; transpose/reshape with "copy" attrs are decided per op
 *  by op_work). */
op_kind op_type_kind(int type);
/** Check inputs/outputs count, dtypes and shapes of op i in g; 0, or -1 with a lowercase reason
 *  in msg and the offending JSON sub-path (e.g. "inputs[1]") in sub. */
int op_check(const wl_graph *g, const wl_op *o, char *msg, unsigned long msglen, char *sub,
             unsigned long sublen);
/** Inductor's pad_mm on a (checked) GEMM op: bytes of the zero-padded copy of each of its first
 *  three inputs (A, B, bias; 0 = not padded) that makes the leading dimensions and N multiples of
 *  16 bytes, so that cuBLAS runs its aligned kernels. 0, or -1 on 64-bit overflow. */
int op_gemm_pad_bytes(const wl_graph *g, const wl_op *o, int64_t pad[3]);
/** Compute the work of a (checked) op; 0 or -1 on 64-bit overflow (msg set). */
int op_work_of(const wl_graph *g, const wl_op *o, op_work *w, char *msg, unsigned long msglen);
/** op_work_of for every op of a checked graph, allocated in a; NULL with e set (the op's JSON
 *  path) on overflow or out of memory. */
op_work *op_works(const wl_graph *g, arena *a, kt_err *e);
/** 1 for ops that launch no kernel (views). */
int op_is_free(const wl_graph *g, const wl_op *o);
/** 0 when tensor t, as stored, is a strided view of another: reached through free views and
 *  reshapes from a slice (copy: false) along an axis that has a dimension above 1 before it (a
 *  slice of leading rows stays contiguous), or from a free transpose or expand; else 1. */
int op_contiguous(const wl_graph *g, int t);
/** Flag tests on the table (OPF_ELEMENTWISE, OPF_INDEX, OPF_GEMM, OPF_CONV). */
int op_is_elementwise(int type);
int op_is_index(int type);
int op_is_gemm(int type);
int op_is_conv(int type);
int op_is_route(int type);
/** 1 when key is an attribute the op type accepts (its op table row's attrs list). */
int op_attr_known(int type, const char *key);
/** Mixture-of-experts load model: token slots kept when T tokens each pick K distinct experts
 *  of E, every expert holds at most C slots, and the busiest expert receives imbalance times the
 *  mean load T*K/E (imbalance in [1, E/K]) while the other E-1 share the rest evenly. */
double op_moe_kept_slots(int64_t tokens, int64_t k, int64_t experts, int64_t capacity,
                         double imbalance);
/** 1 when `elems` elements of dtype d are not a whole number of 16-byte vectors (cuBLAS's
 *  alignment-8 bf16 kernels and ATen's vectorized copies need 16-byte rows and offsets). */
int op_unaligned(int64_t elems, dtype d);
/** A (checked) routing op's busiest expert's load over the mean (its imbalance_pct / 100). */
double op_moe_imbalance(const wl_op *o);
/** A (checked) routing op's tokens T, slots per token K, experts E and capacity C. */
void op_moe_shape(const wl_graph *g, const wl_op *o, int64_t *tokens, int64_t *k, int64_t *experts,
                  int64_t *capacity);

#endif
