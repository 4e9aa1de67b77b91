/* vtrace: validate --trace - the model against a measured kernel trace. */
#ifndef KT_VTRACE_H
#define KT_VTRACE_H
#include "cli.h"

/** validate --trace FILE --workload WL --hw HW [--mode M] [--exec bsp|vf] [--range NAME]: read
 *  the trace (io/trace.h), run the model, map measured kernels to the result's kernels
 *  (kmatch.h) and write per-kernel, per-class and total errors in the command's format. 0, 3
 *  when --max-error is exceeded (the total kernel time's relative error), or -1 with x->e set. */
int cli_validate_trace(cli_ctx *x);

#endif
