/* op: the table of operator types - shape rules, FLOPs, bytes, execution unit and tiling. */
#ifndef KT_OP_H
#define KT_OP_H
#include <stdint.h>

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
    OPK_SCATTER  /* random row read-modify-writes through L2 atomics (scatter_add) */
} op_kind;

/* X(enum, name, kind, min_inputs, max_inputs)   max_inputs -1 = any (concat) */
#define OP_TYPES(X)                                   \
    X(MATMUL, "matmul", OPK_GEMM, 2, 2)               \
    X(LINEAR, "linear", OPK_GEMM, 2, 3)               \
    X(RELU, "relu", OPK_STREAM, 1, 1)                 \
    X(GELU, "gelu", OPK_STREAM, 1, 1)                 \
    X(SILU, "silu", OPK_STREAM, 1, 1)                 \
    X(SIGMOID, "sigmoid", OPK_STREAM, 1, 1)           \
    X(TANH, "tanh", OPK_STREAM, 1, 1)                 \
    X(EXP, "exp", OPK_STREAM, 1, 1)                   \
    X(LOG, "log", OPK_STREAM, 1, 1)                   \
    X(NEG, "neg", OPK_STREAM, 1, 1)                   \
    X(ABS, "abs", OPK_STREAM, 1, 1)                   \
    X(SQRT, "sqrt", OPK_STREAM, 1, 1)                 \
    X(RSQRT, "rsqrt", OPK_STREAM, 1, 1)               \
    X(SQUARE, "square", OPK_STREAM, 1, 1)             \
    X(SCALE, "scale", OPK_STREAM, 1, 1)               \
    X(COPY, "copy", OPK_STREAM, 1, 1)                 \
    X(CAST, "cast", OPK_STREAM, 1, 1)                 \
    X(FILL, "fill", OPK_STREAM, 0, 0)                 \
    X(ADD, "add", OPK_STREAM, 2, 2)                   \
    X(SUB, "sub", OPK_STREAM, 2, 2)                   \
    X(MUL, "mul", OPK_STREAM, 2, 2)                   \
    X(DIV, "div", OPK_STREAM, 2, 2)                   \
    X(ACT_BWD, "act_backward", OPK_STREAM, 2, 2)      \
    X(ADAM, "adam_update", OPK_STREAM, 4, 4)          \
    X(REDUCE, "reduce", OPK_ROW, 1, 1)                \
    X(SOFTMAX, "softmax", OPK_ROW, 1, 1)              \
    X(SOFTMAX_BWD, "softmax_backward", OPK_ROW, 2, 2) \
    X(LAYERNORM, "layernorm", OPK_ROW, 1, 3)          \
    X(RMSNORM, "rmsnorm", OPK_ROW, 1, 2)              \
    X(NORM_BWD, "norm_backward", OPK_ROW, 2, 4)       \
    X(ATTENTION, "attention", OPK_ATTN, 3, 3)         \
    X(ATTN_BWD, "attention_backward", OPK_ATTN, 5, 5) \
    X(EMBEDDING, "embedding", OPK_GATHER, 2, 2)       \
    X(GATHER, "gather", OPK_GATHER, 2, 2)             \
    X(INDEX_SELECT, "index_select", OPK_GATHER, 2, 2) \
    X(SCATTER_ADD, "scatter_add", OPK_SCATTER, 2, 2)  \
    X(INDEX_ADD, "index_add", OPK_SCATTER, 2, 2)      \
    X(INDEX_COPY, "index_copy", OPK_STREAM, 3, 3)     \
    X(CONCAT, "concat", OPK_STREAM, 1, -1)            \
    X(SLICE, "slice", OPK_STREAM, 1, 1)               \
    X(TRANSPOSE, "transpose", OPK_STREAM, 1, 1)       \
    X(RESHAPE, "reshape", OPK_FREE, 1, 1)             \
    X(VIEW, "view", OPK_FREE, 1, 1)                   \
    X(ROPE, "rope", OPK_STREAM, 1, 3)                 \
    X(EXPAND, "expand", OPK_STREAM, 1, 1)

typedef enum op_type {
#define X(e, n, k, lo, hi) OP_##e,
    OP_TYPES(X)
#undef X
        OP_COUNT
} op_type;

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
} op_work;

/** Name of a type ("matmul"). */
const char *op_name(int type);
/** Parse a type name ("index_select"); -1 if unknown. */
int op_parse(const char *name);
/** Kind of a type (OPK_FREE for views; transpose/reshape with "copy" attrs are decided per op
 *  by op_work). */
op_kind op_type_kind(int type);
/** Check inputs/outputs count, dtypes and shapes of op i in g; 0, or -1 with a lowercase reason
 *  in msg and the offending JSON sub-path (e.g. "inputs[1]") in sub. */
int op_check(const wl_graph *g, const wl_op *o, char *msg, unsigned long msglen, char *sub,
             unsigned long sublen);
/** Compute the work of a (checked) op; 0 or -1 on 64-bit overflow (msg set). */
int op_work_of(const wl_graph *g, const wl_op *o, op_work *w, char *msg, unsigned long msglen);
/** 1 for ops that launch no kernel (views). */
int op_is_free(const wl_graph *g, const wl_op *o);
/** 1 for elementwise types (unary, binary, cast, copy, act_backward). */
int op_is_elementwise(int type);
/** 1 for gathers/scatters/embeddings (index ops that fusion and pipelines exclude). */
int op_is_index(int type);
/** 1 for matmul/linear. */
int op_is_gemm(int type);

#endif
