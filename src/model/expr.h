/* expr: integer shape expressions over named parameters ("B*S", "(H/4)+1", "cdiv(N,128)"). */
#ifndef KT_EXPR_H
#define KT_EXPR_H
#include <stdint.h>

/** A named integer parameter. */
typedef struct expr_param {
    const char *name;
    int64_t value;
} expr_param;

/** Evaluate `s`: integers, parameter names, + - * / % with the usual precedence, parentheses,
 *  unary minus, min(a,b), max(a,b), cdiv(a,b). `/` must divide exactly; overflow, division by
 *  zero and unknown names are errors. Returns 0, or -1 with a lowercase reason in msg. */
int expr_eval(const char *s, const expr_param *params, int nparams, int64_t *out, char *msg,
              unsigned long msglen);

/** 1 if `s` is a valid parameter name (letter or '_' then letters, digits, '_'). */
int expr_is_name(const char *s);

#endif
