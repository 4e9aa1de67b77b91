/* wl: the workload graph as a data structure - tensors, operators, parameters; built in code or
 * read from JSON by io/wl_json.c. */
#ifndef KT_WL_H
#define KT_WL_H
#include <stdint.h>

#include "../arena.h"
#include "../err.h"
#include "dtype.h"
#include "expr.h"

enum { WL_MAXDIM = 8 };

/** Tensor kinds; an intermediate has no kind in the JSON. */
typedef enum wl_kind { TK_INTER, TK_INPUT, TK_WEIGHT, TK_OUTPUT } wl_kind;
/** Phases of a (training) graph. */
typedef enum wl_phase { PH_FWD, PH_BWD, PH_OPT } wl_phase;

typedef struct wl_tensor {
    const char *name;
    int ndim;
    int64_t dim[WL_MAXDIM];
    dtype dt;
    wl_kind kind;
    int producer;   /* op index, -1 for inputs and weights */
    int64_t elems;  /* product of dims (checked) */
    int64_t bytes;  /* elems * dtype bytes (checked) */
    int grad_of;    /* training graphs: the tensor this is the gradient of, else -1 */
    int saved;      /* training graphs: forward activation read by the backward pass */
    int requires_grad; /* an input whose gradient training computes (a block inside a stack) */
} wl_tensor;

/** Attribute value types: integers (and bools, and integer expressions), integer lists,
 *  strings (the keys io/wl_json.c lists), and real numbers (only `value`, e.g. scale's
 *  constant multiplier, when it is not an integer). */
typedef enum wl_attr_type { WA_INT, WA_LIST, WA_STR, WA_REAL } wl_attr_type;
typedef struct wl_attr {
    const char *key;
    wl_attr_type type;
    int64_t ival;
    int64_t *list;
    int nlist;
    const char *sval;
    double dval; /* WA_REAL */
} wl_attr;

typedef struct wl_op {
    const char *name;
    int type; /* op_type */
    int nin, nout;
    int *in, *out; /* tensor indices */
    int nattr;
    wl_attr *attr;
    wl_phase phase;
    int fwd; /* backward/optimizer ops: the forward op they derive from, else -1 */
    int block; /* composed models: index into wl_graph.block (backward and optimizer ops: their
                  forward op's), else -1 */
} wl_op;

/** A block of a composed model (compose.h): one repetition of a repeated graph ("layer3":
 *  repeat "layer", index 3), or a run of the model's own ops ("head", "tail"). */
typedef struct wl_block {
    const char *name;   /* "layer3", "head", "tail" */
    const char *repeat; /* the repeat's name ("layer"); NULL for a run of the model's own ops */
    int index;          /* repetition index; -1 for the model's own ops */
} wl_block;

typedef struct wl_graph {
    const char *name;
    const char *source;
    const char *file;
    int nparam;
    expr_param *param;
    int ntensor, cap_tensor;
    wl_tensor *t;
    int nop, cap_op;
    wl_op *op;
    int paper_ops[2]; /* Table 2 #ops: [0] inference, [1] training; 0 = unknown */
    int inference_only; /* "inference_only": true - no training graph (e.g. a decode step) */
    int nblock, cap_block; /* composed models (compose.h): the blocks ops belong to; 0 otherwise */
    wl_block *block;
    arena *a;
} wl_graph;

/** A --set NAME=VALUE override. */
typedef struct wl_set {
    const char *name;
    int64_t value;
} wl_set;

/** Start an empty graph in arena a. */
void wl_init(wl_graph *g, const char *name, arena *a);
/** Add a tensor; returns its index or -1 (e set) on overflow/out of memory. */
int wl_add_tensor(wl_graph *g, const char *name, int ndim, const int64_t *dim, dtype dt,
                  wl_kind kind, kt_err *e);
/** Add an op (inputs/outputs by tensor index, attrs copied); returns its index or -1. Sets the
 *  producer of its outputs. */
int wl_add_op(wl_graph *g, const char *name, int type, const int *in, int nin, const int *out,
              int nout, const wl_attr *attr, int nattr, kt_err *e);
/** Name -> index hash (open addressing) over a graph's tensors or ops. */
typedef struct wl_names {
    int cap;
    int *slot; /* index+1, 0 = empty */
} wl_names;
/** Room for n names in arena a. 0 or -1 (out of memory). */
int wl_names_init(wl_names *m, int n, arena *a);
/** Index of `name` among g's tensors (ops = 0) or ops (ops = 1), -1 if absent; with
 *  insert_idx >= 0 an absent name is inserted with that index (the return is still -1). */
int wl_names_find(wl_names *m, const wl_graph *g, const char *name, int insert_idx, int ops);
/** Index of a tensor by name, -1 if absent (linear scan; for tests and small lookups). */
int wl_find_tensor(const wl_graph *g, const char *name);
/** Value of a parameter, or def if absent. */
int64_t wl_param(const wl_graph *g, const char *name, int64_t def);

/** Give every floating-point tensor of g dtype d (a floating-point type): the same model in
 *  another precision (--dtype). Integer and boolean tensors (indices, masks) keep theirs. 0, or
 *  -1 with e set when a byte count overflows. */
int wl_set_float_dtype(wl_graph *g, dtype d, kt_err *e);

/** Attribute helpers (NULL/def when absent). */
const wl_attr *wl_attr_get(const wl_op *o, const char *key);
int64_t wl_attr_int(const wl_op *o, const char *key, int64_t def);
const char *wl_attr_str(const wl_op *o, const char *key, const char *def);

/** Checked product and sum (return -1 on overflow). */
int wl_mul(int64_t a, int64_t b, int64_t *out);
int wl_add(int64_t a, int64_t b, int64_t *out);

#endif
