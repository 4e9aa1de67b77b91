/* dtype: tensor element types and their sizes. */
#include "dtype.h"

#include <string.h>

static const struct {
    const char *name;
    int bytes;
    int is_float;
} DT_TABLE[DT_COUNT] = {
    [DT_FP32] = {"fp32", 4, 1}, [DT_TF32] = {"tf32", 4, 1}, [DT_FP16] = {"fp16", 2, 1},
    [DT_BF16] = {"bf16", 2, 1}, [DT_FP8] = {"fp8", 1, 1},   [DT_INT64] = {"int64", 8, 0},
    [DT_INT32] = {"int32", 4, 0}, [DT_BOOL] = {"bool", 1, 0},
};

int dt_bytes(dtype d)
{
    return DT_TABLE[d].bytes;
}

const char *dt_name(dtype d)
{
    return DT_TABLE[d].name;
}

int dt_is_float(dtype d)
{
    return DT_TABLE[d].is_float;
}

int dt_parse(const char *s, dtype *out)
{
    for (int i = 0; i < DT_COUNT; i++)
        if (!strcmp(s, DT_TABLE[i].name)) {
            *out = (dtype)i;
            return 0;
        }
    return -1;
}
