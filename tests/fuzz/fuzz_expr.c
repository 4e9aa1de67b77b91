/* fuzz_expr: the shape-expression parser. Input: an expression. It must evaluate or fail with a
 * message, never crash or overflow; a value must be the same when evaluated again. */
#include "../../src/model/expr.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const expr_param P[] = {{"B", 4},  {"S", 2048},         {"H", -3},
                                   {"N", 0}, {"BIG", INT64_MAX}, {"NEG", INT64_MIN}};
    char *s = fz_text(data, size);
    char msg[160];
    int64_t v, w;
    msg[0] = 0;
    if (expr_eval(s, P, (int)(sizeof P / sizeof P[0]), &v, msg, sizeof msg) == 0) {
        FZ_ASSERT(expr_eval(s, P, (int)(sizeof P / sizeof P[0]), &w, msg, sizeof msg) == 0 && v == w,
                  "not deterministic: %s", s);
    } else {
        FZ_ASSERT(msg[0] && memchr(msg, 0, sizeof msg), "an error without a message");
    }
    (void)expr_is_name(s);
    free(s);
    return 0;
}
