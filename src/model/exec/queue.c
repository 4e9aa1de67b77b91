/* queue: Kitsune ring queues through L2.
 *
 * A tile moves SM -> L2 -> SM at one SM's share of the L2 bandwidth, and every tile pays
 * sync_round_trips_per_tile atomic round trips at the L2 (acquire: wait on the sequence number;
 * release: atomic update), so a queue's effective bandwidth is
 *     B_eff(P) = P / (P / B_cta + t_sync),  B_cta = l2_bandwidth * l2_frac / sm_count,
 *     t_sync = sync_round_trips_per_tile * atomic_latency_ns.
 * Kitsune paper section 4 (A100 measurement): 54 queues ~2 TB/s aggregate (~37 GB/s per queue) at
 * 128-256 KB payloads, ~12x loss at 1 KB, < 63% overhead at >= 64 KB; docs/pipelines.md compares. */
#include "queue.h"

#include <math.h>

#include "../roof.h"

double q_cta_Bps(const hw_gpu *g, double clock_MHz)
{
    if (g->queue_cta_bytes_per_clk > 0) /* a per-SM port: does not shrink as SMs are added */
        return g->queue_cta_bytes_per_clk * clock_MHz * 1e6;
    return g->l2_bandwidth_GBps * 1e9 * g->l2_frac * (clock_MHz / g->clock_MHz) / g->sm_count;
}

double q_sync_s(const hw_gpu *g)
{
    return g->queue_sync_round_trips_per_tile * g->queue_atomic_latency_ns * 1e-9;
}

double q_tile_s(const hw_gpu *g, double payload_bytes, double clock_MHz)
{
    return payload_bytes / q_cta_Bps(g, clock_MHz) + q_sync_s(g);
}

double q_eff_Bps(const hw_gpu *g, double payload_bytes, double clock_MHz)
{
    double t = q_tile_s(g, payload_bytes, clock_MHz);
    return t > 0 ? payload_bytes / t : q_cta_Bps(g, clock_MHz);
}

double q_loss_factor(const hw_gpu *g, double payload_bytes, double clock_MHz)
{
    return q_cta_Bps(g, clock_MHz) / q_eff_Bps(g, payload_bytes, clock_MHz);
}

double q_overhead_frac(const hw_gpu *g, double payload_bytes, double clock_MHz)
{
    return q_sync_s(g) / (payload_bytes / q_cta_Bps(g, clock_MHz));
}

double q_aggregate_Bps(const hw_gpu *g, int n, double payload_bytes, int depth, double clock_MHz)
{
    double want = n * q_eff_Bps(g, payload_bytes, clock_MHz);
    double l2 = roof_l2_Bps(g, g->sm_count, roof_inflight_full(g), clock_MHz);
    double spill = q_spill_frac((double)n * depth * payload_bytes, hw_l2_bytes(g));
    /* the resident part streams at L2 speed, the spilled part is written and read back at DRAM
     * speed: time per byte is the weighted sum of both */
    double dram = roof_dram_Bps(g, g->sm_count, roof_inflight_full(g)) / 2.0;
    double per_byte = (1.0 - spill) / l2 + spill / dram;
    double cap = 1.0 / per_byte;
    return want < cap ? want : cap;
}

int64_t q_payload_bytes(int64_t bytes, int64_t tiles)
{
    double p = tiles > 0 ? (double)bytes / (double)tiles : (double)bytes;
    if (p > Q_PAYLOAD_MAX_BYTES)
        p = Q_PAYLOAD_MAX_BYTES;
    if (p < Q_PAYLOAD_MIN_BYTES)
        p = (double)bytes < Q_PAYLOAD_MIN_BYTES ? (double)bytes : Q_PAYLOAD_MIN_BYTES;
    return p < 1 ? 1 : (int64_t)ceil(p);
}

double q_spill_frac(double storage_bytes, double l2_budget_bytes)
{
    if (storage_bytes <= 0 || storage_bytes <= l2_budget_bytes)
        return 0;
    if (l2_budget_bytes <= 0)
        return 1;
    return 1.0 - l2_budget_bytes / storage_bytes;
}
