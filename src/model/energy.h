/* energy: energy and power of an execution, and power-capped execution by DVFS. */
#ifndef KT_ENERGY_H
#define KT_ENERGY_H
#include "../arena.h"
#include "hw.h"
#include "result.h"

/** Fill the energy fields of every item and of the totals from the items' FLOPs and bytes. */
void en_account(const hw_gpu *hw, kt_result *r);
/** The same execution under a board power cap: items whose average power exceeds cap_W run at
 *  the lowest clock that fits (compute and L2 terms scale with 1/f, DRAM does not). */
int en_power_cap(const hw_gpu *hw, const kt_result *in, double cap_W, arena *a, kt_result *out);

#endif
