/* autodiff: placeholder until the training derivation lands. */
#include "autodiff.h"

int ad_training_graph(const wl_graph *fwd, int optimizer, arena *a, wl_graph *out, kt_err *e)
{
    (void)optimizer; (void)a; (void)out;
    return err_set(e, KT_EINPUT, fwd->file, NULL, "training mode is not implemented yet");
}
