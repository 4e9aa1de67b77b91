/* autodiff: the training graph (forward + backward [+ optimizer]) derived from a forward graph. */
#ifndef KT_AUTODIFF_H
#define KT_AUTODIFF_H
#include "../arena.h"
#include "../err.h"
#include "wl.h"

/** Optimizer update ops a training graph may end with. */
enum { OPTIM_NONE, OPTIM_SGD, OPTIM_ADAM };

/** Build forward + backward from fwd: loss = sum of the graph outputs (backward starts from a
 *  gradient of ones), gradient rules per op type, a gradient for every weight, forward
 *  activations the backward reads marked `saved`. optimizer: OPTIM_NONE/SGD/ADAM (run.h) appends
 *  update ops. Ops carry phase PH_FWD/PH_BWD/PH_OPT and fwd = the forward op they derive from.
 *  The result passes wl_check. */
int ad_training_graph(const wl_graph *fwd, int optimizer, arena *a, wl_graph *out, kt_err *e);

#endif
