/* energy: energy and power of an execution, and power-capped execution by DVFS. */
#ifndef KT_ENERGY_H
#define KT_ENERGY_H
#include "../arena.h"
#include "hw.h"
#include "result.h"

/** Core voltage at an SM clock: the AccelWattch DVFS form (gpu-params.md s2.3)
 *  V(f) = max(voltage_min_V, voltage_min_V + (voltage_max_V - voltage_min_V) *
 *             (f - knee_clock_MHz) / (clock_MHz - knee_clock_MHz)),
 *  i.e. the floor up to the knee and linear up to voltage_max_V at clock_MHz. */
double en_voltage_V(const hw_gpu *hw, double clock_MHz);

/** Fill the energy fields (parts, energy_J, avg_power_W, clock_MHz) of one item from its FLOPs,
 *  bytes and time at it->clock_MHz (0 = hw->clock_MHz). energy_J is the sum of the parts. */
void en_item(const hw_gpu *hw, kt_item *it);

/** Fill the energy fields of every item and of the totals from the items' FLOPs and bytes.
 *  Items with clock_MHz 0 get the result's clock (or hw->clock_MHz when that is 0 too). The
 *  totals are sums over the items; avg_power_W = energy_J / time_s. */
void en_account(const hw_gpu *hw, kt_result *r);

/** The same execution under a board power cap: every item whose average power exceeds cap_W
 *  runs at the highest SM clock in [clock_min_MHz, its clock] whose average power fits, its time
 *  evaluated again at that clock by its own cost model (kt_item.reeval; an item without one
 *  keeps its clock), its dynamic energy scaled with V(f)^2 (DRAM energy and static power do not
 *  change). An item above the cap even at clock_min_MHz runs there with over_cap set. out gets a copy of the items (from a), recomputed totals (result_sum) and energy
 *  totals; out->clock_MHz is the time-weighted average clock. Items and totals are bitwise
 *  those of `in` (after en_account) when no item exceeds the cap. 0, or -1 when cap_W is not a
 *  positive finite number or memory runs out. */
int en_power_cap(const hw_gpu *hw, const kt_result *in, double cap_W, arena *a, kt_result *out);

/** Kernels already re-clocked under one cap, for en_power_cap_memo: results that share kernels
 *  (kitsune's options share most of theirs) re-clock each only once. Zero-initialise it; its
 *  memory comes from the arena given to en_power_cap_memo. */
typedef struct en_memo {
    int n, cap;
    kt_item *in, *out; /* an item as it came (at its clock) and the same item under the cap */
} en_memo;
/** en_power_cap, reusing from m (and adding to it) the re-clocked kernels: an item over the cap
 *  that is identical to one seen before (same re-evaluation, ops, clock and cost) gets that
 *  item's result. m must be used with one hw and one cap_W only. */
int en_power_cap_memo(const hw_gpu *hw, const kt_result *in, double cap_W, en_memo *m, arena *a,
                      kt_result *out);
/** A lower bound on how much longer `in` takes under cap_W, from the kernels m has already
 *  re-clocked (the others count 0: a cap never speeds a kernel up). Cheap: nothing is
 *  re-evaluated. */
double en_memo_slowdown(const hw_gpu *hw, const kt_result *in, double cap_W, const en_memo *m);

#endif
