// ktpipe.cu: a Kitsune-style spatial-pipeline runtime for Hopper (sm_90), CUDA C++.
//
// One persistent kernel. Its CTAs are partitioned into stages by an allocation (CTAs per
// stage); every CTA of stage i loops over the tiles t = rank, rank + a_i, rank + 2 a_i, ...
// (round-robin: tile t -> CTA t mod a_i). A tile is TM consecutive rows of the streamed
// dimension (TM = 64 or 128, a template parameter). Stages exchange tiles through ring queues
// in global memory (L2-resident): queue q has `slots` slots; tile t lives in slot t mod slots,
// in "round" t / slots. Per slot there are two 32-bit counters, each alone on a 128-byte line:
//   full[s]  = (round + 1) of the last tile published into the slot (written by its producer,
//              release store after a __threadfence),
//   freec[s] = number of consumer releases so far (every consumer stage of the queue adds 1
//              per tile, after a __threadfence), so the slot is free for round r once
//              freec[s] >= ncons * r.
// One thread per CTA polls with ld.acquire.gpu (cuda::atomic_ref) and the CTA follows through
// __syncthreads, as in hw/calibrate/calib.cu's ring-queue benchmark. Queue data are read with
// L1-bypassing loads (cp.async.cg / ld.global.cg), so a slot's earlier contents can never be
// served from a stale L1 line.
//
// Deadlock freedom (any allocation, any slots >= 1, all CTAs co-resident): every CTA handles its
// tiles in increasing order and blocks on exactly one counter at a time. A CTA blocked pushing
// tile t waits for the consumer(s) of tile t - slots (a strictly smaller tile index); a CTA
// blocked popping tile t waits for the producer of tile t in an upstream stage (the same tile
// index, a stage strictly earlier in the DAG). Along any chain of waits the pair (tile index,
// stage position) therefore decreases strictly in lexicographic order (push: smaller tile;
// pop: same tile, earlier stage), so no chain can close into a cycle, and the smallest blocked
// element of a chain is always able to proceed. Co-residency is enforced on the host: the launch
// is refused when sum(a_i) exceeds cudaOccupancyMaxActiveBlocksPerMultiprocessor x #SMs.
// A watchdog (globaltimer) turns a hang into an error code instead of a hung GPU.
//
// Stage kinds:
//   GEMM : out[TM x N] = act(A[TM x K] W^T + b), bf16 in, fp32 accumulate (wmma 16x16x16 on
//          the tensor cores). W [N x K] (nn.Linear layout) is staged in shared memory once per
//          CTA; A is streamed in K-chunks of KC columns by cp.async.cg (double buffered). A is a
//          concatenation of up to 3 input segments (queue slot / global rows / gathered global
//          rows through an int64 index), so concat and gather can be fused into the loader.
//   COPY : out row = concatenation of up to 3 segments (gather of rows by int64 index, concat).
//   LN   : out = LayerNorm_128(seg0) * gamma + beta (+ residual segment), fp32 statistics.
//   ADD  : out = seg0 + seg1.
// Outputs go to a queue or to a global tensor. A queue may have several consumer stages
// (multicast: one producer, each consumer stage releases the slot once).
//
// Build: nvcc -O3 -std=c++17 -arch=sm_90a -Xcompiler -fPIC -shared -o libktpipe.so ktpipe.cu
#include <cuda/atomic>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <mma.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

using namespace nvcuda;
typedef __nv_bfloat16 bf16;

#define KTP_MAXST 10
#define KTP_MAXQ 10
#define KTP_THREADS 256
#define KTP_CTR_STRIDE 32 // unsigned per counter: 128 bytes
#define KTP_MAXSM 1024    // SM ids below this (placement by SM)

enum { SEG_NONE = 0, SEG_QUEUE = 1, SEG_GLOBAL = 2, SEG_GATHER = 3 };
enum { ST_GEMM = 1, ST_COPY = 2, ST_LN = 3, ST_ADD = 4 };
enum {
    ERR_TIMEOUT_IN = 1,
    ERR_TIMEOUT_OUT = 2,
    ERR_BAD_STAGE = 3,
    ERR_BAD_N = 4
};

struct Seg {
    int kind;   // SEG_*
    int q;      // queue id (SEG_QUEUE)
    int col;    // first column inside the source row
    int width;  // columns (elements)
    long long ld; // row stride of the source (elements); for queues the queue's width
    const bf16 *ptr;
    const long long *idx; // SEG_GATHER: row index per streamed row
};
struct Stage {
    int kind, ctas, nseg, relu;
    int K, N; // GEMM: K = sum of segment widths (padded), N output width
    int nin;  // distinct input queues to acquire/release
    int inq[4];
    float eps;
    Seg seg[3];
    Seg res; // LN residual (kind SEG_NONE if none)
    Seg out; // SEG_QUEUE or SEG_GLOBAL (ptr used as bf16* output)
    const bf16 *W, *bias, *gamma, *beta;
};
struct Queue {
    bf16 *buf;
    unsigned *full, *freec;
    int slots, width, ncons, pad;
};
struct Pipe {
    int nst, nq, ntiles, nblocks;
    unsigned long long timeout_ns;
    int *err;             // [0] code, [1] stage, [2] tile, [3] block, [4] abort flag
    long long *prof;      // per block: 8 x int64
    long long *trace;     // per (stage, tile): 4 x clock64 (ktp_set_trace), or null
    const int2 *bmap;     // per block: (stage, rank); with sm_key, per place in SM order
    const int *sm_key;    // placement by SM (ktp_set_sm_order), or null: block b takes bmap[b]
    unsigned *place;      // with sm_key: [0, KTP_MAXSM) CTAs per SM so far, then the arrival
                          // count on its own line, then one key per block (zeroed per launch)
    Stage st[KTP_MAXST];
    Queue q[KTP_MAXQ];
};

// ------------------------------------------------------------------ device helpers
__device__ __forceinline__ unsigned ld_acquire(const unsigned *p) {
    return cuda::atomic_ref<unsigned, cuda::thread_scope_device>(*const_cast<unsigned *>(p))
        .load(cuda::memory_order_acquire);
}
__device__ __forceinline__ void st_release(unsigned *p, unsigned v) {
    cuda::atomic_ref<unsigned, cuda::thread_scope_device>(*p).store(v, cuda::memory_order_release);
}
__device__ __forceinline__ unsigned long long gtime() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}
__device__ __forceinline__ void cp_async16(void *smem, const void *gmem) {
    unsigned s = (unsigned)__cvta_generic_to_shared(smem);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(gmem));
}
__device__ __forceinline__ void cp_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N> __device__ __forceinline__ void cp_wait() {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}
__device__ __forceinline__ uint4 ldcg16(const void *p) { return __ldcg((const uint4 *)p); }

__device__ void raise_err(const Pipe &P, int code, int stage, int tile) {
    if (atomicCAS(P.err, 0, code) == 0) {
        P.err[1] = stage;
        P.err[2] = tile;
        P.err[3] = blockIdx.x;
    }
    __threadfence();
    atomicExch(P.err + 4, 1);
}

// Spin (one thread) until *ctr >= target. false on timeout or abort.
__device__ bool spin_geq(const Pipe &P, const unsigned *ctr, unsigned target, int code,
                         int stage, int tile) {
    if (ld_acquire(ctr) >= target) return true;
    unsigned long long t0 = gtime();
    unsigned polls = 0;
    while (ld_acquire(ctr) < target) {
        if ((++polls & 127u) == 0) {
            if (*(volatile int *)(P.err + 4)) return false;
            if (gtime() - t0 > P.timeout_ns) {
                raise_err(P, code, stage, tile);
                return false;
            }
        }
    }
    return true;
}

struct Prof {
    long long w_in, w_out, tiles;
};

// Thread 0 waits until every input queue of stage S holds tile t (and, if want_out, until the
// output slot of tile t is free); the whole CTA then synchronizes. Returns false to bail out.
__device__ bool cta_acquire(const Pipe &P, const Stage &S, int si, int t, bool want_in,
                            bool want_out, int *bail, Prof &pr) {
    if (threadIdx.x == 0) {
        bool ok = true;
        long long c0 = clock64();
        if (want_in) {
            for (int i = 0; i < S.nin && ok; i++) {
                const Queue &Q = P.q[S.inq[i]];
                int s = t % Q.slots;
                unsigned r = (unsigned)(t / Q.slots);
                ok = spin_geq(P, Q.full + (size_t)s * KTP_CTR_STRIDE, r + 1, ERR_TIMEOUT_IN, si, t);
            }
        }
        long long c1 = clock64();
        long long *tr = P.trace ? P.trace + ((size_t)si * P.ntiles + t) * 4 : nullptr;
        if (tr && want_in) tr[0] = c1; // inputs held
        if (ok && want_out && S.out.kind == SEG_QUEUE) {
            const Queue &Q = P.q[S.out.q];
            int s = t % Q.slots;
            unsigned r = (unsigned)(t / Q.slots);
            ok = spin_geq(P, Q.freec + (size_t)s * KTP_CTR_STRIDE, (unsigned)Q.ncons * r,
                          ERR_TIMEOUT_OUT, si, t);
        }
        long long c2 = clock64();
        if (tr && want_out) { // before and after the wait for the output slot
            tr[1] = c1;
            tr[2] = c2;
        }
        pr.w_in += c1 - c0;
        pr.w_out += c2 - c1;
        *bail = ok ? 0 : 1;
    }
    __syncthreads();
    return *bail == 0;
}
// Thread 0: release the input slots of tile t (call after a __syncthreads that follows the
// last read of the slots).
__device__ __forceinline__ void release_inputs(const Pipe &P, const Stage &S, int t) {
    if (threadIdx.x == 0 && S.nin > 0) {
        __threadfence();
        for (int i = 0; i < S.nin; i++) {
            const Queue &Q = P.q[S.inq[i]];
            int s = t % Q.slots;
            atomicAdd(Q.freec + (size_t)s * KTP_CTR_STRIDE, 1u);
        }
    }
}
// Thread 0: publish tile t into the output queue (call after a __syncthreads that follows the
// last write of the slot).
__device__ __forceinline__ void publish_output(const Pipe &P, const Stage &S, int t) {
    if (threadIdx.x == 0 && P.trace) { // the tile's work is done (all its stores issued)
        int si = (int)(&S - P.st);
        P.trace[((size_t)si * P.ntiles + t) * 4 + 3] = clock64();
    }
    if (threadIdx.x == 0 && S.out.kind == SEG_QUEUE) {
        const Queue &Q = P.q[S.out.q];
        int s = t % Q.slots;
        __threadfence();
        st_release(Q.full + (size_t)s * KTP_CTR_STRIDE, (unsigned)(t / Q.slots) + 1u);
    }
}

// Address of element (row r of tile t, column c) of a segment's source.
template <int TM>
__device__ __forceinline__ const bf16 *seg_src(const Pipe &P, const Seg &g, int t, int r, int c) {
    if (g.kind == SEG_QUEUE) {
        const Queue &Q = P.q[g.q];
        int s = t % Q.slots;
        return Q.buf + ((size_t)s * TM + r) * Q.width + g.col + c;
    }
    long long row = (long long)t * TM + r;
    if (g.kind == SEG_GATHER) row = __ldg(g.idx + row);
    return g.ptr + row * g.ld + g.col + c;
}
// Address of element (row r of tile t, column c) of the stage output.
template <int TM>
__device__ __forceinline__ bf16 *out_dst(const Pipe &P, const Seg &o, int t, int r, int c) {
    if (o.kind == SEG_QUEUE) {
        const Queue &Q = P.q[o.q];
        int s = t % Q.slots;
        return Q.buf + ((size_t)s * TM + r) * Q.width + c;
    }
    return const_cast<bf16 *>(o.ptr) + ((long long)t * TM + r) * o.ld + o.col + c;
}
__device__ __forceinline__ uint4 load_seg16(const Seg &g, const bf16 *p) {
    // queue data: L2 only (cg); read-only global inputs: read-only path
    if (g.kind == SEG_QUEUE) return ldcg16(p);
    return __ldg((const uint4 *)p);
}

template <int TM, int KC> struct Geo {
    static constexpr int ALD = KC + 8;
    static constexpr int ABUF = 2 * TM * ALD * 2; // bytes, two K-chunk buffers
    static constexpr int STG = 8 * 16 * 20 * 4;   // per-warp fp32 16x20 staging (reuses ABUF)
    static constexpr int ABYTES = ((ABUF > STG ? ABUF : STG) + 127) / 128 * 128;
};

// Issue the cp.async loads of K-chunk kc (KC columns) of tile t's A operand into dst
// (TM x (KC+8) bf16). The host guarantees that a chunk lies inside one input segment.
template <int TM, int KC>
__device__ __forceinline__ void load_chunk(const Pipe &P, const Stage &S, int t, int kc, bf16 *dst) {
    constexpr int ALD = KC + 8;
    int g0 = kc * KC, si2 = 0, start = 0;
    while (si2 < S.nseg - 1 && g0 >= start + S.seg[si2].width) {
        start += S.seg[si2].width;
        si2++;
    }
    const Seg &g = S.seg[si2];
    const int cofs = g0 - start;
    constexpr int PPR = KC / 8; // 16-byte pieces per row
    constexpr int NP = TM * PPR;
#pragma unroll
    for (int p0 = 0; p0 < NP; p0 += KTP_THREADS) {
        int p = p0 + threadIdx.x;
        if (NP % KTP_THREADS == 0 || p < NP) {
            int r = p / PPR, c = (p - r * PPR) * 8;
            cp_async16(dst + r * ALD + c, seg_src<TM>(P, g, t, r, cofs + c));
        }
    }
}

// ------------------------------------------------------------------ GEMM stage
template <int TM, int N, int KC>
__device__ void gemm_stage(const Pipe &P, const Stage &S, int si, int rank, char *smem,
                           int *bail, Prof &pr) {
    typedef Geo<TM, KC> G;
    constexpr int WM = 2, WN = 4; // 8 warps
    constexpr int WTM = TM / WM, WTN = N / WN;
    constexpr int FM = WTM / 16, FN = WTN / 16;
    constexpr int ALD = G::ALD;
    const int K = S.K;
    const int WLD = K + 8;
    bf16 *As = (bf16 *)smem;
    float *bias_s = (float *)(smem + G::ABYTES);
    bf16 *Ws = (bf16 *)(smem + G::ABYTES + 256 * 4);
    // stage the weights (N x K, nn.Linear layout) and the bias once per CTA
    const int k8 = K / 8;
    for (int i = threadIdx.x; i < N * k8; i += KTP_THREADS) {
        int n = i / k8, c = i - n * k8;
        *(uint4 *)(Ws + (size_t)n * WLD + c * 8) = __ldg((const uint4 *)(S.W + (size_t)n * K) + c);
    }
    for (int i = threadIdx.x; i < N; i += KTP_THREADS)
        bias_s[i] = S.bias ? __bfloat162float(S.bias[i]) : 0.f;
    __syncthreads();
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int wm = warp / WN, wn = warp % WN;
    const int nk = K / KC;
    const int a = S.ctas;
    // segment of each K-chunk (host guarantees segment widths are multiples of KC)
    for (int t = rank; t < P.ntiles; t += a) {
        if (!cta_acquire(P, S, si, t, true, false, bail, pr)) return;
        wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[FM][FN];
#pragma unroll
        for (int i = 0; i < FM; i++)
#pragma unroll
            for (int j = 0; j < FN; j++) wmma::fill_fragment(acc[i][j], 0.f);

        load_chunk<TM, KC>(P, S, t, 0, As);
        cp_commit();
        for (int kc = 0; kc < nk; kc++) {
            if (kc + 1 < nk) {
                load_chunk<TM, KC>(P, S, t, kc + 1, As + ((kc + 1) & 1) * TM * ALD);
                cp_commit();
                cp_wait<1>();
            } else {
                cp_wait<0>();
            }
            __syncthreads();
            if (kc == nk - 1) release_inputs(P, S, t); // all of the tile is in shared memory
            const bf16 *Ab = As + (kc & 1) * TM * ALD;
#pragma unroll(FM * FN >= 16 ? 1 : KC / 16)
            for (int kk = 0; kk < KC; kk += 16) {
                wmma::fragment<wmma::matrix_a, 16, 16, 16, bf16, wmma::row_major> af[FM];
                wmma::fragment<wmma::matrix_b, 16, 16, 16, bf16, wmma::col_major> bfr[FN];
#pragma unroll
                for (int i = 0; i < FM; i++)
                    wmma::load_matrix_sync(af[i], Ab + (wm * WTM + i * 16) * ALD + kk, ALD);
#pragma unroll
                for (int j = 0; j < FN; j++)
                    wmma::load_matrix_sync(bfr[j], Ws + (size_t)(wn * WTN + j * 16) * WLD + kc * KC + kk,
                                           WLD);
#pragma unroll
                for (int i = 0; i < FM; i++)
#pragma unroll
                    for (int j = 0; j < FN; j++) wmma::mma_sync(acc[i][j], af[i], bfr[j], acc[i][j]);
            }
            __syncthreads();
        }
        if (!cta_acquire(P, S, si, t, false, true, bail, pr)) return;
        // epilogue: fp32 accumulators -> per-warp staging -> bias, ReLU -> bf16 -> 16-byte stores
        float *stg = (float *)smem + warp * (16 * 20);
        const int rr = lane >> 1, cc = (lane & 1) * 8;
#pragma unroll
        for (int i = 0; i < FM; i++) {
#pragma unroll
            for (int j = 0; j < FN; j++) {
                wmma::store_matrix_sync(stg, acc[i][j], 20, wmma::mem_row_major);
                __syncwarp();
                const int col = wn * WTN + j * 16 + cc;
                const int row = wm * WTM + i * 16 + rr;
                const float4 v0 = *(const float4 *)(stg + rr * 20 + cc);
                const float4 v1 = *(const float4 *)(stg + rr * 20 + cc + 4);
                float v[8] = {v0.x, v0.y, v0.z, v0.w, v1.x, v1.y, v1.z, v1.w};
                __align__(16) bf16 o[8];
#pragma unroll
                for (int e = 0; e < 8; e++) {
                    float x = v[e] + bias_s[col + e];
                    if (S.relu) x = fmaxf(x, 0.f);
                    o[e] = __float2bfloat16(x);
                }
                *(uint4 *)out_dst<TM>(P, S.out, t, row, col) = *(const uint4 *)o;
                __syncwarp();
            }
        }
        __syncthreads();
        publish_output(P, S, t);
        if (threadIdx.x == 0) pr.tiles++;
    }
}

// ------------------------------------------------------------------ GEMM stage, mma.sync path
// The same stage as gemm_stage (same shared-memory layout, K-chunk pipeline, queue protocol),
// with the tensor-core work written as ldmatrix.x4 + mma.sync.m16n8k16 (bf16 in, fp32 acc.)
// and an epilogue that goes through a per-warp bf16 staging tile to 16-byte stores.
__device__ __forceinline__ void ldsm_x4(unsigned &r0, unsigned &r1, unsigned &r2, unsigned &r3,
                                        const void *p) {
    unsigned s = (unsigned)__cvta_generic_to_shared(p);
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
                 : "r"(s));
}
__device__ __forceinline__ void mma16816(float (&c)[4], const unsigned (&a)[4], unsigned b0,
                                         unsigned b1) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, "
                 "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

template <int TM, int N, int KC>
__device__ void gemm_stage_mma(const Pipe &P, const Stage &S, int si, int rank, char *smem,
                               int *bail, Prof &pr) {
    typedef Geo<TM, KC> G;
    constexpr int WM = 2, WN = 4; // 8 warps
    constexpr int WTM = TM / WM, WTN = N / WN;
    constexpr int FM = WTM / 16, FN = WTN / 8; // m16 x n8 tiles per warp
    constexpr int ALD = G::ALD;
    constexpr int SLD = WTN + 8; // staging row (bf16)
    static_assert(8 * 16 * SLD * 2 <= G::ABYTES, "staging does not fit the A buffers");
    static_assert(FN % 2 == 0, "FN must be even");
    const int K = S.K;
    const int WLD = K + 8;
    bf16 *As = (bf16 *)smem;
    float *bias_s = (float *)(smem + G::ABYTES);
    bf16 *Ws = (bf16 *)(smem + G::ABYTES + 256 * 4);
    const int k8 = K / 8;
    for (int i = threadIdx.x; i < N * k8; i += KTP_THREADS) {
        int n = i / k8, c = i - n * k8;
        *(uint4 *)(Ws + (size_t)n * WLD + c * 8) = __ldg((const uint4 *)(S.W + (size_t)n * K) + c);
    }
    for (int i = threadIdx.x; i < N; i += KTP_THREADS)
        bias_s[i] = S.bias ? __bfloat162float(S.bias[i]) : 0.f;
    __syncthreads();
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int wm = warp / WN, wn = warp % WN;
    const int nk = K / KC;
    const int a = S.ctas;
    // ldmatrix lane addressing: A 16x16 at (row0, k0): row row0 + (lane & 15), col k0 + 8*(lane>>4)
    // B (Ws rows = n, K contiguous) two n8 blocks x k16: n = n0 + (lane&7) + 8*(lane>>4),
    // k = k0 + 8*((lane>>3)&1) -> r0,r1 = b0,b1 of block n0; r2,r3 = b0,b1 of block n0+8.
    const int a_row = lane & 15, a_col = (lane >> 4) * 8;
    const int b_row = (lane & 7) + ((lane >> 4) << 3), b_col = ((lane >> 3) & 1) * 8;
    const bf16 *Awarp = As + (wm * WTM + a_row) * ALD + a_col;
    const bf16 *Bwarp = Ws + (size_t)(wn * WTN + b_row) * WLD + b_col;
    const int relu = S.relu;
    for (int t = rank; t < P.ntiles; t += a) {
        if (!cta_acquire(P, S, si, t, true, false, bail, pr)) return;
        float acc[FM][FN][4];
#pragma unroll
        for (int i = 0; i < FM; i++)
#pragma unroll
            for (int j = 0; j < FN; j++)
#pragma unroll
                for (int e = 0; e < 4; e++) acc[i][j][e] = 0.f;
        load_chunk<TM, KC>(P, S, t, 0, As);
        cp_commit();
        for (int kc = 0; kc < nk; kc++) {
            if (kc + 1 < nk) {
                load_chunk<TM, KC>(P, S, t, kc + 1, As + ((kc + 1) & 1) * TM * ALD);
                cp_commit();
                cp_wait<1>();
            } else {
                cp_wait<0>();
            }
            __syncthreads();
            if (kc == nk - 1) release_inputs(P, S, t); // all of the tile is in shared memory
            const bf16 *Ab = Awarp + (kc & 1) * TM * ALD;
            const bf16 *Bb = Bwarp + kc * KC;
#pragma unroll(FM * FN >= 32 ? 1 : KC / 16)
            for (int kk = 0; kk < KC; kk += 16) {
                unsigned af[FM][4];
#pragma unroll
                for (int i = 0; i < FM; i++)
                    ldsm_x4(af[i][0], af[i][1], af[i][2], af[i][3], Ab + i * 16 * ALD + kk);
#pragma unroll
                for (int jj = 0; jj < FN / 2; jj++) {
                    unsigned b0, b1, b2, b3;
                    ldsm_x4(b0, b1, b2, b3, Bb + (size_t)jj * 16 * WLD + kk);
#pragma unroll
                    for (int i = 0; i < FM; i++) {
                        mma16816(acc[i][2 * jj], af[i], b0, b1);
                        mma16816(acc[i][2 * jj + 1], af[i], b2, b3);
                    }
                }
            }
            __syncthreads();
        }
        if (!cta_acquire(P, S, si, t, false, true, bail, pr)) return;
        // epilogue: bias, ReLU, bf16 into a per-warp 16 x WTN staging tile, 16-byte stores
        bf16 *stg = (bf16 *)smem + warp * 16 * SLD;
        const int g = lane >> 2, tq = lane & 3;
#pragma unroll
        for (int i = 0; i < FM; i++) {
#pragma unroll
            for (int j = 0; j < FN; j++) {
                const int col = j * 8 + 2 * tq;
                const float bb0 = bias_s[wn * WTN + col], bb1 = bias_s[wn * WTN + col + 1];
                float v00 = acc[i][j][0] + bb0, v01 = acc[i][j][1] + bb1;
                float v10 = acc[i][j][2] + bb0, v11 = acc[i][j][3] + bb1;
                if (relu) {
                    v00 = fmaxf(v00, 0.f);
                    v01 = fmaxf(v01, 0.f);
                    v10 = fmaxf(v10, 0.f);
                    v11 = fmaxf(v11, 0.f);
                }
                *(__nv_bfloat162 *)(stg + g * SLD + col) = __floats2bfloat162_rn(v00, v01);
                *(__nv_bfloat162 *)(stg + (g + 8) * SLD + col) = __floats2bfloat162_rn(v10, v11);
            }
            __syncwarp();
            constexpr int CPR = WTN / 8; // 16-byte chunks per staging row
#pragma unroll
            for (int c = lane; c < 16 * CPR; c += 32) {
                const int r = c / CPR, cc = (c - r * CPR) * 8;
                *(uint4 *)out_dst<TM>(P, S.out, t, wm * WTM + i * 16 + r, wn * WTN + cc) =
                    *(const uint4 *)(stg + r * SLD + cc);
            }
            __syncwarp();
        }
        __syncthreads();
        publish_output(P, S, t);
        if (threadIdx.x == 0) pr.tiles++;
    }
}

// ------------------------------------------------------------------ COPY stage (gather/concat)
// The gather indices of the tile are staged in shared memory first (one coalesced read), so
// that every 16-byte row piece is a single independent load; U pieces per thread in flight.
template <int TM>
__device__ void copy_stage(const Pipe &P, const Stage &S, int si, int rank, char *smem, int *bail,
                           Prof &pr) {
    int W = 0;
    for (int i = 0; i < S.nseg; i++) W += S.seg[i].width;
    const int PPR = W / 8, NP = TM * PPR;
    constexpr int U = 8;
    long long *idx_s = (long long *)smem; // [nseg][TM]
    for (int t = rank; t < P.ntiles; t += S.ctas) {
        if (!cta_acquire(P, S, si, t, true, true, bail, pr)) return;
        for (int i = threadIdx.x; i < S.nseg * TM; i += KTP_THREADS) {
            const int gi = i / TM, r = i - gi * TM;
            if (S.seg[gi].kind == SEG_GATHER) idx_s[i] = __ldg(S.seg[gi].idx + (long long)t * TM + r);
        }
        __syncthreads();
        for (int p0 = threadIdx.x; p0 < NP; p0 += KTP_THREADS * U) {
            uint4 v[U];
            bf16 *d[U];
#pragma unroll
            for (int u = 0; u < U; u++) {
                int p = p0 + u * KTP_THREADS;
                d[u] = nullptr;
                if (p < NP) {
                    int r = p / PPR, c = (p - r * PPR) * 8;
                    int gi = 0, start = 0;
                    while (gi < S.nseg - 1 && c >= start + S.seg[gi].width) {
                        start += S.seg[gi].width;
                        gi++;
                    }
                    const Seg &g = S.seg[gi];
                    const bf16 *src = g.kind == SEG_GATHER
                                          ? g.ptr + idx_s[gi * TM + r] * g.ld + g.col + (c - start)
                                          : seg_src<TM>(P, g, t, r, c - start);
                    v[u] = load_seg16(g, src);
                    d[u] = out_dst<TM>(P, S.out, t, r, c);
                }
            }
#pragma unroll
            for (int u = 0; u < U; u++)
                if (d[u]) *(uint4 *)d[u] = v[u];
        }
        __syncthreads();
        release_inputs(P, S, t);
        publish_output(P, S, t);
        if (threadIdx.x == 0) pr.tiles++;
    }
}

// ------------------------------------------------------------------ ADD stage
template <int TM>
__device__ void add_stage(const Pipe &P, const Stage &S, int si, int rank, int *bail, Prof &pr) {
    const int W = S.seg[0].width;
    const int PPR = W / 8, NP = TM * PPR;
    constexpr int U = 4;
    for (int t = rank; t < P.ntiles; t += S.ctas) {
        if (!cta_acquire(P, S, si, t, true, true, bail, pr)) return;
        for (int p0 = threadIdx.x; p0 < NP; p0 += KTP_THREADS * U) {
            uint4 x[U], y[U];
#pragma unroll
            for (int u = 0; u < U; u++) {
                int p = p0 + u * KTP_THREADS;
                if (p < NP) {
                    int r = p / PPR, c = (p - r * PPR) * 8;
                    x[u] = load_seg16(S.seg[0], seg_src<TM>(P, S.seg[0], t, r, c));
                    y[u] = load_seg16(S.seg[1], seg_src<TM>(P, S.seg[1], t, r, c));
                }
            }
#pragma unroll
            for (int u = 0; u < U; u++) {
                int p = p0 + u * KTP_THREADS;
                if (p < NP) {
                    int r = p / PPR, c = (p - r * PPR) * 8;
                    const bf16 *a = (const bf16 *)&x[u], *b = (const bf16 *)&y[u];
                    __align__(16) bf16 o[8];
#pragma unroll
                    for (int e = 0; e < 8; e++)
                        o[e] = __float2bfloat16(__bfloat162float(a[e]) + __bfloat162float(b[e]));
                    *(uint4 *)out_dst<TM>(P, S.out, t, r, c) = *(const uint4 *)o;
                }
            }
        }
        __syncthreads();
        release_inputs(P, S, t);
        publish_output(P, S, t);
        if (threadIdx.x == 0) pr.tiles++;
    }
}

// ------------------------------------------------------------------ LayerNorm(128) stage
// A half-warp per row (16 lanes x 8 elements), R rows in flight per half-warp.
template <int TM>
__device__ void ln_stage(const Pipe &P, const Stage &S, int si, int rank, int *bail, Prof &pr) {
    constexpr int R = 4;
    const int hw = threadIdx.x >> 4, l16 = threadIdx.x & 15;
    const int c = l16 * 8;
    float gam[8], bet[8];
#pragma unroll
    for (int e = 0; e < 8; e++) {
        gam[e] = __bfloat162float(S.gamma[c + e]);
        bet[e] = __bfloat162float(S.beta[c + e]);
    }
    const bool has_res = S.res.kind != SEG_NONE;
    for (int t = rank; t < P.ntiles; t += S.ctas) {
        if (!cta_acquire(P, S, si, t, true, true, bail, pr)) return;
        for (int rb = hw; rb < TM; rb += 16 * R) {
            uint4 xv[R], rv[R];
#pragma unroll
            for (int j = 0; j < R; j++) {
                int r = rb + j * 16;
                if (r < TM) {
                    xv[j] = load_seg16(S.seg[0], seg_src<TM>(P, S.seg[0], t, r, c));
                    if (has_res) rv[j] = load_seg16(S.res, seg_src<TM>(P, S.res, t, r, c));
                }
            }
#pragma unroll
            for (int j = 0; j < R; j++) {
                int r = rb + j * 16;
                if (r >= TM) continue;
                const bf16 *xb = (const bf16 *)&xv[j];
                float x[8], s = 0.f;
#pragma unroll
                for (int e = 0; e < 8; e++) {
                    x[e] = __bfloat162float(xb[e]);
                    s += x[e];
                }
#pragma unroll
                for (int o = 8; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
                const float mean = s * (1.f / 128.f);
                float q = 0.f;
#pragma unroll
                for (int e = 0; e < 8; e++) {
                    float d = x[e] - mean;
                    q += d * d;
                }
#pragma unroll
                for (int o = 8; o > 0; o >>= 1) q += __shfl_xor_sync(0xffffffffu, q, o);
                const float rstd = rsqrtf(q * (1.f / 128.f) + S.eps);
                __align__(16) bf16 ov[8];
                const bf16 *rb16 = (const bf16 *)&rv[j];
#pragma unroll
                for (int e = 0; e < 8; e++) {
                    float y = (x[e] - mean) * rstd * gam[e] + bet[e];
                    if (has_res) // the message is rounded to bf16 before the add, as in eager
                        y = __bfloat162float(__float2bfloat16(y)) + __bfloat162float(rb16[e]);
                    ov[e] = __float2bfloat16(y);
                }
                *(uint4 *)out_dst<TM>(P, S.out, t, r, c) = *(const uint4 *)ov;
            }
        }
        __syncthreads();
        release_inputs(P, S, t);
        publish_output(P, S, t);
        if (threadIdx.x == 0) pr.tiles++;
    }
}

// ------------------------------------------------------------------ the persistent kernel
template <int TM, int NMAX, int KC, int MINB, int IMPL>
__global__ void __launch_bounds__(KTP_THREADS, MINB) ktp_kernel(const __grid_constant__ Pipe P) {
    extern __shared__ __align__(128) char smem[];
    __shared__ int bail;
    int role = blockIdx.x;
    if (P.sm_key) {
        // placement by SM: every block posts (its SM's key, its slot on that SM), waits for all
        // blocks (all are co-resident), and takes the role at its rank among the keys
        __shared__ int my_role;
        if (threadIdx.x == 0) {
            unsigned smid;
            asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
            unsigned *cnt = P.place, *arrived = P.place + KTP_MAXSM, *keys = arrived + KTP_CTR_STRIDE;
            unsigned slot = atomicAdd(cnt + (smid < KTP_MAXSM ? smid : 0), 1u);
            unsigned key = (unsigned)P.sm_key[smid < KTP_MAXSM ? smid : 0] * 16u + slot;
            atomicExch(keys + blockIdx.x, key + 1u);
            __threadfence();
            atomicAdd(arrived, 1u);
            unsigned long long t0 = gtime();
            int r = -1;
            while (ld_acquire(arrived) < (unsigned)P.nblocks)
                if (gtime() - t0 > P.timeout_ns) {
                    raise_err(P, ERR_TIMEOUT_IN, -1, -1);
                    break;
                }
            if (ld_acquire(arrived) >= (unsigned)P.nblocks) {
                r = 0;
                for (int b = 0; b < P.nblocks; b++) {
                    unsigned kb = ld_acquire(keys + b) - 1u;
                    r += kb < key || (kb == key && b < (int)blockIdx.x);
                }
            }
            my_role = r;
        }
        __syncthreads();
        if (my_role < 0) return;
        role = my_role;
    }
    const int2 bm = P.bmap[role];
    const int si = bm.x, rank = bm.y;
    const Stage &S = P.st[si];
    Prof pr = {0, 0, 0};
    long long c0 = clock64();
    unsigned long long g0 = gtime();
    switch (S.kind) {
    case ST_GEMM:
        if (S.N == 128) {
            if (IMPL) gemm_stage_mma<TM, 128, KC>(P, S, si, rank, smem, &bail, pr);
            else gemm_stage<TM, 128, KC>(P, S, si, rank, smem, &bail, pr);
        } else if (NMAX >= 256 && S.N == 256) {
            constexpr int N2 = NMAX >= 256 ? 256 : 128;
            if (IMPL) gemm_stage_mma<TM, N2, KC>(P, S, si, rank, smem, &bail, pr);
            else gemm_stage<TM, N2, KC>(P, S, si, rank, smem, &bail, pr);
        } else if (threadIdx.x == 0) raise_err(P, ERR_BAD_N, si, -1);
        break;
    case ST_COPY: copy_stage<TM>(P, S, si, rank, smem, &bail, pr); break;
    case ST_LN: ln_stage<TM>(P, S, si, rank, &bail, pr); break;
    case ST_ADD: add_stage<TM>(P, S, si, rank, &bail, pr); break;
    default:
        if (threadIdx.x == 0) raise_err(P, ERR_BAD_STAGE, si, -1);
    }
    if (threadIdx.x == 0 && P.prof) {
        long long *o = P.prof + (size_t)blockIdx.x * 8;
        unsigned smid;
        asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
        o[0] = si;
        o[1] = rank;
        o[2] = pr.tiles;
        o[3] = pr.w_in;
        o[4] = pr.w_out;
        o[5] = clock64() - c0;
        o[6] = (long long)(gtime() - g0);
        o[7] = smid;
    }
}

// ------------------------------------------------------------------ host side
struct Variant {
    int tm, nmax, kc, minb, impl;
    const void *fn;
};
#define KTP_V(tm, nm, kc, mb)                                                                  \
    {tm, nm, kc, mb, 0, (const void *)ktp_kernel<tm, nm, kc, mb, 0>},                          \
        {tm, nm, kc, mb, 1, (const void *)ktp_kernel<tm, nm, kc, mb, 1>}
static const Variant kVariants[] = {
    KTP_V(64, 128, 32, 2), KTP_V(64, 128, 64, 1), KTP_V(128, 128, 64, 1),
    KTP_V(64, 256, 64, 1), KTP_V(128, 256, 64, 1),
};
static int abytes_of(int tm, int kc) {
    int abuf = 2 * tm * (kc + 8) * 2, stg = 8 * 16 * 20 * 4;
    return ((abuf > stg ? abuf : stg) + 127) / 128 * 128;
}

struct Handle {
    Pipe P;
    int tm, rows;
    int variant = -1, smem = 0, occ = 0, sms = 0, total = 0, regs = 0;
    std::vector<int> tensor_stage;
    void *qmem = nullptr, *cmem = nullptr;
    size_t cbytes = 0;
    int *err = nullptr;
    long long *prof = nullptr;
    int2 *bmap = nullptr;
    int order = 0; // block map order: 0 stages in sequence, 1 stages interleaved, >= 2 shuffled
    int tracing = 0;
    long long *d_trace = nullptr;
    std::vector<int> sm_key; // placement by SM (ktp_set_sm_order), empty: by block index
    int *d_sm_key = nullptr;
    char msg[512];
};

#define HCK(x)                                                                                 \
    do {                                                                                       \
        cudaError_t e_ = (x);                                                                  \
        if (e_ != cudaSuccess) {                                                               \
            snprintf(h->msg, sizeof h->msg, "%s: %s", #x, cudaGetErrorString(e_));             \
            return -10;                                                                        \
        }                                                                                      \
    } while (0)

extern "C" {

void *ktp_create(int tm, int rows) {
    Handle *h = new Handle();
    memset(&h->P, 0, sizeof h->P);
    h->tm = tm;
    h->rows = rows;
    h->P.timeout_ns = 2000000000ull;
    h->msg[0] = 0;
    return h;
}
const char *ktp_msg(void *hv) { return ((Handle *)hv)->msg; }
int ktp_param_bytes() { return (int)sizeof(Pipe); }

int ktp_add_queue(void *hv, int width, int ncons, int slots) {
    Handle *h = (Handle *)hv;
    if (h->P.nq >= KTP_MAXQ) return -1;
    Queue &Q = h->P.q[h->P.nq];
    Q.width = width;
    Q.ncons = ncons;
    Q.slots = slots;
    return h->P.nq++;
}
int ktp_add_stage(void *hv, int kind, int ctas, int is_tensor) {
    Handle *h = (Handle *)hv;
    if (h->P.nst >= KTP_MAXST) return -1;
    Stage &S = h->P.st[h->P.nst];
    S.kind = kind;
    S.ctas = ctas;
    S.eps = 1e-5f;
    h->tensor_stage.push_back(is_tensor);
    return h->P.nst++;
}
// which: 0..2 input segment, 3 residual, 4 output
int ktp_set_seg(void *hv, int s, int which, int kind, int q, void *ptr, void *idx, long long ld,
                int col, int width) {
    Handle *h = (Handle *)hv;
    if (s < 0 || s >= h->P.nst || which < 0 || which > 4) return -1;
    Stage &S = h->P.st[s];
    Seg g;
    g.kind = kind;
    g.q = q;
    g.ptr = (const bf16 *)ptr;
    g.idx = (const long long *)idx;
    g.ld = ld;
    g.col = col;
    g.width = width;
    if (which < 3) {
        S.seg[which] = g;
        if (which + 1 > S.nseg) S.nseg = which + 1;
    } else if (which == 3) S.res = g;
    else S.out = g;
    return 0;
}
int ktp_set_gemm(void *hv, int s, void *W, void *bias, int K, int N, int relu) {
    Handle *h = (Handle *)hv;
    Stage &S = h->P.st[s];
    S.W = (const bf16 *)W;
    S.bias = (const bf16 *)bias;
    S.K = K;
    S.N = N;
    S.relu = relu;
    return 0;
}
int ktp_set_ln(void *hv, int s, void *g, void *b, float eps) {
    Handle *h = (Handle *)hv;
    Stage &S = h->P.st[s];
    S.gamma = (const bf16 *)g;
    S.beta = (const bf16 *)b;
    S.eps = eps;
    return 0;
}
void ktp_set_timeout(void *hv, double seconds) {
    ((Handle *)hv)->P.timeout_ns = (unsigned long long)(seconds * 1e9);
}
// Which block runs which (stage, rank), i.e. where the block scheduler puts each stage's CTAs
// (call before ktp_prepare): 0 (default) each stage's ranks in sequence; 1 the stages
// interleaved rank by rank (stage 0 rank 0, stage 1 rank 0, ...); >= 2 a shuffle seeded by
// `order`. Tensor stages stay before SIMT stages in every order (two CTAs per SM).
void ktp_set_order(void *hv, int order) { ((Handle *)hv)->order = order; }
// Per-tile trace (call before ktp_prepare): for every (stage, tile), thread 0's clock64 when the
// inputs are held, before and after the wait for the output slot, and when the tile is done;
// ktp_trace copies the last launch's.
void ktp_set_trace(void *hv, int on) { ((Handle *)hv)->tracing = on; }
int ktp_trace(void *hv, long long *out, long long n) {
    Handle *h = (Handle *)hv;
    if (!h->d_trace) return -1;
    long long m = (long long)h->P.nst * h->P.ntiles * 4;
    HCK(cudaDeviceSynchronize());
    HCK(cudaMemcpy(out, h->d_trace, (size_t)(m < n ? m : n) * 8, cudaMemcpyDeviceToHost));
    return 0;
}
// Placement by SM (call before ktp_prepare; n = 0 turns it off): key[smid] ranks SM smid. The
// blocks, sorted by (their SM's key, their arrival on that SM), take the roles of the table that
// ktp_set_order orders, so that the j-th role runs on the SM of the j-th smallest key whatever
// SM the block scheduler gave each block.
int ktp_set_sm_order(void *hv, const int *key, int n) {
    Handle *h = (Handle *)hv;
    if (n < 0 || n > KTP_MAXSM) return -1;
    h->sm_key.assign(key, key + n);
    h->sm_key.resize(n ? KTP_MAXSM : 0, 1 << 20);
    return 0;
}

// Validate, pick the kernel variant, allocate queues and counters, check co-residency.
// minb_pref: 2 asks for the two-CTAs-per-SM variant where one exists (TM 64, N <= 128).
// Returns 0, or < 0 with ktp_msg() saying why (-2: allocation does not fit co-resident).
int ktp_prepare(void *hv, int minb_pref, int impl) {
    Handle *h = (Handle *)hv;
    Pipe &P = h->P;
    if (h->rows % h->tm) {
        snprintf(h->msg, sizeof h->msg, "rows %d not a multiple of TM %d", h->rows, h->tm);
        return -1;
    }
    P.ntiles = h->rows / h->tm;
    int nmax = 128;
    for (int i = 0; i < P.nst; i++)
        if (P.st[i].kind == ST_GEMM && P.st[i].N > nmax) nmax = P.st[i].N;
    int vi = -1; // a variant for (TM, NMAX), the one with minb == minb_pref if there is one
    for (int i = 0; i < (int)(sizeof kVariants / sizeof kVariants[0]); i++) {
        const Variant &v = kVariants[i];
        if (v.tm != h->tm || v.nmax != nmax || v.impl != impl) continue;
        if (vi < 0 || (v.minb == minb_pref && kVariants[vi].minb != minb_pref)) vi = i;
    }
    if (vi < 0) {
        snprintf(h->msg, sizeof h->msg, "no kernel variant for TM %d NMAX %d impl %d", h->tm, nmax,
                 impl);
        return -1;
    }
    const Variant &V = kVariants[vi];
    h->variant = vi;
    // validate stages, compute shared memory, distinct input queues
    int smem = 0;
    std::vector<int> ncons_seen(P.nq, 0);
    for (int i = 0; i < P.nst; i++) {
        Stage &S = P.st[i];
        if (S.ctas < 1) {
            snprintf(h->msg, sizeof h->msg, "stage %d has %d CTAs", i, S.ctas);
            return -1;
        }
        S.nin = 0;
        auto addq = [&](const Seg &g) {
            if (g.kind != SEG_QUEUE) return;
            for (int k = 0; k < S.nin; k++)
                if (S.inq[k] == g.q) return;
            S.inq[S.nin++] = g.q;
        };
        for (int k = 0; k < S.nseg; k++) addq(S.seg[k]);
        addq(S.res);
        for (int k = 0; k < S.nin; k++) ncons_seen[S.inq[k]]++;
        if (S.out.kind != SEG_QUEUE && S.out.kind != SEG_GLOBAL) {
            snprintf(h->msg, sizeof h->msg, "stage %d has no output", i);
            return -1;
        }
        int W = 0;
        for (int k = 0; k < S.nseg; k++) {
            if (S.seg[k].width % 8 || S.seg[k].col % 8 || S.seg[k].ld % 8) {
                snprintf(h->msg, sizeof h->msg, "stage %d seg %d not 16-byte aligned", i, k);
                return -1;
            }
            W += S.seg[k].width;
        }
        if (S.kind == ST_GEMM) {
            for (int k = 0; k < S.nseg; k++)
                if (S.seg[k].width % V.kc) {
                    snprintf(h->msg, sizeof h->msg, "stage %d seg %d width %d not a multiple of KC %d",
                             i, k, S.seg[k].width, V.kc);
                    return -1;
                }
            if (W != S.K || (S.N != 128 && S.N != 256) || S.N > nmax) {
                snprintf(h->msg, sizeof h->msg, "stage %d: K %d vs segments %d, N %d", i, S.K, W, S.N);
                return -1;
            }
            int sm = abytes_of(V.tm, V.kc) + 256 * 4 + S.N * (S.K + 8) * 2;
            if (sm > smem) smem = sm;
        } else if (S.kind == ST_COPY) {
            int sm = S.nseg * V.tm * 8; // staged gather indices
            if (sm > smem) smem = sm;
        } else if (S.kind == ST_LN) {
            if (S.seg[0].width != 128 || (S.res.kind != SEG_NONE && S.res.width != 128)) {
                snprintf(h->msg, sizeof h->msg, "stage %d: layernorm is for width 128", i);
                return -1;
            }
            W = 128;
        } else if (S.kind == ST_ADD) {
            if (S.nseg != 2 || S.seg[0].width != S.seg[1].width) {
                snprintf(h->msg, sizeof h->msg, "stage %d: add needs two equal segments", i);
                return -1;
            }
            W = S.seg[0].width;
        }
        int ow = S.kind == ST_GEMM ? S.N : W;
        if (S.out.kind == SEG_QUEUE) {
            if (S.out.q < 0 || S.out.q >= P.nq || P.q[S.out.q].width != ow) {
                snprintf(h->msg, sizeof h->msg, "stage %d: output queue width mismatch", i);
                return -1;
            }
        }
    }
    for (int q = 0; q < P.nq; q++)
        if (ncons_seen[q] != P.q[q].ncons) {
            snprintf(h->msg, sizeof h->msg, "queue %d: %d consumer stages, declared %d", q,
                     ncons_seen[q], P.q[q].ncons);
            return -1;
        }
    if (smem < 1024) smem = 1024;
    h->smem = smem;
    int dev;
    HCK(cudaGetDevice(&dev));
    HCK(cudaDeviceGetAttribute(&h->sms, cudaDevAttrMultiProcessorCount, dev));
    int maxopt;
    HCK(cudaDeviceGetAttribute(&maxopt, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
    if (smem > maxopt) {
        snprintf(h->msg, sizeof h->msg, "needs %d B shared memory, device allows %d", smem, maxopt);
        return -1;
    }
    HCK(cudaFuncSetAttribute(V.fn, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    HCK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&h->occ, V.fn, KTP_THREADS, smem));
    cudaFuncAttributes fa;
    HCK(cudaFuncGetAttributes(&fa, V.fn));
    h->regs = fa.numRegs;
    int total = 0;
    for (int i = 0; i < P.nst; i++) total += P.st[i].ctas;
    h->total = total;
    if (total > h->occ * h->sms) {
        snprintf(h->msg, sizeof h->msg,
                 "allocation of %d CTAs does not fit co-resident (%d per SM x %d SMs, %d B smem)",
                 total, h->occ, h->sms, smem);
        return -2;
    }
    // block -> (stage, rank): tensor stages first, so that with 2 CTAs/SM the block scheduler
    // tends to put them on distinct SMs and SIMT stages in the second slots.
    std::vector<int2> bm;
    unsigned long long rng = 0x9E3779B97F4A7C15ull * (unsigned long long)(h->order + 1);
    for (int pass = 0; pass < 2; pass++) {
        size_t from = bm.size();
        int most = 0;
        for (int i = 0; i < P.nst; i++)
            if ((pass == 0) == (h->tensor_stage[i] != 0) && P.st[i].ctas > most) most = P.st[i].ctas;
        if (h->order == 1) {
            for (int r = 0; r < most; r++)
                for (int i = 0; i < P.nst; i++)
                    if ((pass == 0) == (h->tensor_stage[i] != 0) && r < P.st[i].ctas)
                        bm.push_back(make_int2(i, r));
        } else {
            for (int i = 0; i < P.nst; i++)
                if ((pass == 0) == (h->tensor_stage[i] != 0))
                    for (int r = 0; r < P.st[i].ctas; r++) bm.push_back(make_int2(i, r));
        }
        if (h->order >= 2) // Fisher-Yates with xorshift64
            for (size_t k = bm.size(); k > from + 1;) {
                k--;
                rng ^= rng << 13;
                rng ^= rng >> 7;
                rng ^= rng << 17;
                size_t j = from + (size_t)(rng % (unsigned long long)(k - from + 1));
                int2 t = bm[k];
                bm[k] = bm[j];
                bm[j] = t;
            }
    }
    P.nblocks = total;
    // memory: queue buffers, counters, error word, profile, block map
    size_t qbytes = 0;
    std::vector<size_t> qofs(P.nq);
    for (int q = 0; q < P.nq; q++) {
        qofs[q] = qbytes;
        qbytes += ((size_t)P.q[q].slots * h->tm * P.q[q].width * 2 + 255) / 256 * 256;
    }
    size_t cbytes = 0;
    std::vector<size_t> cofs(P.nq);
    for (int q = 0; q < P.nq; q++) {
        cofs[q] = cbytes;
        cbytes += (size_t)P.q[q].slots * 2 * KTP_CTR_STRIDE * 4;
    }
    if (qbytes) HCK(cudaMalloc(&h->qmem, qbytes));
    size_t place_ofs = cbytes;
    if (!h->sm_key.empty()) // CTAs per SM, the arrival count, one key per block
        cbytes += ((size_t)KTP_MAXSM + KTP_CTR_STRIDE + (size_t)total) * 4;
    HCK(cudaMalloc(&h->cmem, cbytes + 256));
    h->cbytes = cbytes;
    P.sm_key = nullptr;
    P.place = nullptr;
    P.trace = nullptr;
    if (h->tracing) {
        HCK(cudaMalloc(&h->d_trace, (size_t)P.nst * P.ntiles * 4 * 8));
        HCK(cudaMemset(h->d_trace, 0, (size_t)P.nst * P.ntiles * 4 * 8));
        P.trace = h->d_trace;
    }
    if (!h->sm_key.empty()) {
        HCK(cudaMalloc(&h->d_sm_key, KTP_MAXSM * sizeof(int)));
        HCK(cudaMemcpy(h->d_sm_key, h->sm_key.data(), KTP_MAXSM * sizeof(int),
                       cudaMemcpyHostToDevice));
        P.sm_key = h->d_sm_key;
        P.place = (unsigned *)((char *)h->cmem + place_ofs);
    }
    HCK(cudaMalloc(&h->err, 64));
    HCK(cudaMalloc(&h->prof, (size_t)total * 8 * 8));
    HCK(cudaMalloc(&h->bmap, (size_t)total * sizeof(int2)));
    HCK(cudaMemcpy(h->bmap, bm.data(), total * sizeof(int2), cudaMemcpyHostToDevice));
    HCK(cudaMemset(h->err, 0, 64));
    HCK(cudaMemset(h->prof, 0, (size_t)total * 64));
    for (int q = 0; q < P.nq; q++) {
        P.q[q].buf = (bf16 *)((char *)h->qmem + qofs[q]);
        P.q[q].full = (unsigned *)((char *)h->cmem + cofs[q]);
        P.q[q].freec = P.q[q].full + (size_t)P.q[q].slots * KTP_CTR_STRIDE;
    }
    P.err = h->err;
    P.prof = h->prof;
    P.bmap = h->bmap;
    snprintf(h->msg, sizeof h->msg, "variant TM%d NMAX%d KC%d MINB%d %s smem %d occ %d regs %d",
             V.tm, V.nmax, V.kc, V.minb, V.impl ? "mma" : "wmma", smem, h->occ, h->regs);
    return 0;
}

// Zero the queue counters (stream-ordered). Call before every launch.
int ktp_reset(void *hv, void *stream) {
    Handle *h = (Handle *)hv;
    HCK(cudaMemsetAsync(h->cmem, 0, h->cbytes, (cudaStream_t)stream));
    return 0;
}
int ktp_clear_err(void *hv) {
    Handle *h = (Handle *)hv;
    HCK(cudaMemset(h->err, 0, 64));
    return 0;
}
// Launch the persistent kernel (stream-ordered, asynchronous).
int ktp_kernel(void *hv, void *stream) {
    Handle *h = (Handle *)hv;
    if (h->variant < 0) return -1;
    const Variant &V = kVariants[h->variant];
    void *args[] = {(void *)&h->P};
    HCK(cudaLaunchKernel(V.fn, dim3(h->total), dim3(KTP_THREADS), args, h->smem,
                         (cudaStream_t)stream));
    return 0;
}
// Synchronize and read the error words: out[0..4] = code, stage, tile, block, abort.
int ktp_errors(void *hv, int *out) {
    Handle *h = (Handle *)hv;
    HCK(cudaDeviceSynchronize());
    HCK(cudaMemcpy(out, h->err, 5 * sizeof(int), cudaMemcpyDeviceToHost));
    return 0;
}
// Per-block profile (8 int64 per block: stage, rank, tiles, wait_in cycles, wait_out cycles,
// total cycles, total ns, smid). n = capacity in int64.
int ktp_prof(void *hv, long long *out, int n) {
    Handle *h = (Handle *)hv;
    int m = h->total * 8 < n ? h->total * 8 : n;
    HCK(cudaMemcpy(out, h->prof, (size_t)m * 8, cudaMemcpyDeviceToHost));
    return h->total;
}
// info: smem bytes, CTAs per SM, SMs, total CTAs, variant, registers
int ktp_info(void *hv, int *out) {
    Handle *h = (Handle *)hv;
    out[0] = h->smem;
    out[1] = h->occ;
    out[2] = h->sms;
    out[3] = h->total;
    out[4] = h->variant;
    out[5] = h->regs;
    return 0;
}
void ktp_destroy(void *hv) {
    Handle *h = (Handle *)hv;
    if (h->qmem) cudaFree(h->qmem);
    if (h->cmem) cudaFree(h->cmem);
    if (h->err) cudaFree(h->err);
    if (h->prof) cudaFree(h->prof);
    if (h->bmap) cudaFree(h->bmap);
    if (h->d_sm_key) cudaFree(h->d_sm_key);
    if (h->d_trace) cudaFree(h->d_trace);
    delete h;
}
} // extern "C"
