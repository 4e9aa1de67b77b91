/* dtype: tensor element types and their sizes. */
#ifndef KT_DTYPE_H
#define KT_DTYPE_H

typedef enum dtype { DT_FP32, DT_TF32, DT_FP16, DT_BF16, DT_FP8, DT_INT64, DT_INT32, DT_BOOL, DT_COUNT } dtype;

/** Bytes per element (tf32 is stored as fp32). */
int dt_bytes(dtype d);
/** Lowercase name ("bf16"). */
const char *dt_name(dtype d);
/** Parse a name; 0 or -1. */
int dt_parse(const char *s, dtype *out);
/** 1 for floating-point types. */
int dt_is_float(dtype d);

#endif
