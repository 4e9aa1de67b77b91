/* queue: Kitsune ring queues through L2 - payload-dependent bandwidth and L2 storage/spill. */
#ifndef KT_QUEUE_H
#define KT_QUEUE_H
#include <stdint.h>

#include "../hw.h"

/** Default ring depth: two entries (double buffering), the paper's queue primitive. */
enum { Q_DEPTH_DEFAULT = 2 };
/** Payload clamp: 1 KiB .. 1 MiB (the range the paper measured on A100; below 1 KiB the
 *  synchronization dominates, above 256 KiB the queues spill out of L2). */
#define Q_PAYLOAD_MIN_BYTES 1024.0
#define Q_PAYLOAD_MAX_BYTES 1048576.0
/** Rows of the producer's CTA output tile that one payload carries (CUTLASS 128-row CTA tile,
 *  the same tile cost.c uses for GEMMs). */
enum { Q_TILE_ROWS = 128 };

/** Payload-transfer bandwidth of one queue (one producer CTA) in bytes/s: one SM's share of the
 *  achievable L2 bandwidth, l2_bandwidth_GBps * l2_frac / sm_count, scaled with the clock. */
double q_cta_Bps(const hw_gpu *g, double clock_MHz);
/** Synchronization time per tile in seconds: sync_round_trips_per_tile * atomic latency. */
double q_sync_s(const hw_gpu *g);
/** Time to move one payload through a queue (transfer at q_cta_Bps plus the sync round trips). */
double q_tile_s(const hw_gpu *g, double payload_bytes, double clock_MHz);
/** Effective bandwidth of one queue in bytes/s: P / (P / B_cta + t_sync). */
double q_eff_Bps(const hw_gpu *g, double payload_bytes, double clock_MHz);
/** Bandwidth loss factor versus an unsynchronized transfer: B_cta / q_eff_Bps = 1 + overhead. */
double q_loss_factor(const hw_gpu *g, double payload_bytes, double clock_MHz);
/** Synchronization overhead as a fraction of the transfer time: t_sync / (P / B_cta). */
double q_overhead_frac(const hw_gpu *g, double payload_bytes, double clock_MHz);
/** Aggregate bandwidth of n concurrent queues in bytes/s: n * q_eff_Bps, capped by the achievable
 *  L2 bandwidth while their storage (n * depth * P) fits L2, and by the achievable DRAM bandwidth
 *  (traffic read + written) for the part that spills. */
double q_aggregate_Bps(const hw_gpu *g, int n, double payload_bytes, int depth, double clock_MHz);
/** Payload of a queue carrying `bytes` split over `tiles` tiles: bytes / tiles clamped to
 *  [Q_PAYLOAD_MIN_BYTES, Q_PAYLOAD_MAX_BYTES] (at least 1 byte for tiny tensors). */
int64_t q_payload_bytes(int64_t bytes, int64_t tiles);
/** Fraction of queue storage that does not fit an L2 budget (spills to DRAM), 0..1. */
double q_spill_frac(double storage_bytes, double l2_budget_bytes);

#endif
