/* energy: placeholder until the energy model lands. */
#include "energy.h"

#include <string.h>

void en_account(const hw_gpu *hw, kt_result *r)
{
    (void)hw; (void)r;
}

int en_power_cap(const hw_gpu *hw, const kt_result *in, double cap_W, arena *a, kt_result *out)
{
    (void)hw; (void)cap_W; (void)a;
    *out = *in;
    return 0;
}
