// l2_lru.cu: how much of a cyclically re-read working set the L2 keeps (capacity, smoothness
// of the hit curve, halves). For each working set W, one launch reads W once (cold, after an
// eviction pass) and one reads it PASSES times; Nsight Compute's DRAM read bytes of the two
// give the bytes the repeat passes missed. Two mappings of lines to CTAs: "fixed" (a line is
// read by the same CTA, so by the SMs of one L2 half, every pass) and "rotate" (each pass moves
// every line 37 CTAs on, so over the passes SMs of both halves read it).
//
//   nvcc -O3 -gencode=arch=compute_90a,code=sm_90a -o l2_lru hw/calibrate/l2_lru.cu
//   ncu --clock-control none --csv --page raw --print-units base \
//       --metrics dram__bytes_read.sum,lts__t_sector_op_read_hit_rate.pct -k regex:chase \
//       ./l2_lru > ncu.csv      (the program prints its launch list on stderr)
//
// Launch order: for each mode, for each W: evict, chase(W, 1 pass), evict, chase(W, PASSES).
//
// `./l2_lru ring` measures rings instead: a buffer of W MiB written and read as a ring queue
// is (ring_pass). Each pass every line is written once (st.global.cg, whole 128-byte lines, by
// CTA (i + 37 pass) mod grid) and the line written half a ring earlier is read back (lag W/2, so
// a read comes W/2 of ring traffic after its write). Two kinds: "ring-rw" (the ring alone: a
// slot is rewritten after W distinct bytes) and "ring-stream" (per 3 ring lines one fresh line
// is read from and one fresh line written to streams that never repeat, as mgn-mc's streamed
// e and e_out beside its e_in ring: a slot is rewritten after 5/3 W distinct bytes). Nsight
// Compute's DRAM write and read bytes of the 1- and 5-pass launches, less the streams' own,
// give the fraction of ring lines written back (evicted dirty before their slot was rewritten)
// and read back (evicted before their reader came):
//   ncu ... --metrics dram__bytes_read.sum,dram__bytes_write.sum -k regex:ring_pass ./l2_lru ring
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); exit(1); } } while (0)

static const int PASSES = 5;

// Each CTA (one warp) reads the 128-byte lines it owns in a pass, four lines per step, with
// 16-byte loads that skip L1 (ld.global.cg); line i belongs to CTA (i + pass x shift) mod
// gridDim.x. All CTAs advance together, so the GPU sweeps the working set in order: a cyclic
// access pattern.
// The first line this CTA owns in pass p: line i belongs to CTA (i + p x shift) mod gridDim.x.
__device__ long long first_line(int p, int shift)
{
    long long g = gridDim.x, first = ((long long)blockIdx.x - (long long)p * shift) % g;
    return first < 0 ? first + g : first;
}

__global__ void chase(const int4 *buf, long long lines, int passes, int shift, int *sink)
{
    int acc = 0;
    long long g = gridDim.x;
    for (int p = 0; p < passes; p++) {
        long long first = first_line(p, shift);
        for (long long j = 0; first + j * g < lines; j += 4) {
            long long line = first + (j + threadIdx.x / 8) * g;
            if (line < lines) {
                int4 v = __ldcg(buf + line * 8 + (threadIdx.x % 8));
                acc ^= v.x ^ v.w;
            }
        }
    }
    if (acc == 0x7fffffff)
        *sink = acc;
}

// One warp per CTA; 4 lines per step. Line i of the ring belongs to CTA (i + pass x shift) mod
// grid. At ring line i: write it, read line i - lines/2 (mod lines), and when stream is set and
// i % 3 == 0, read one fresh line of sin and write one fresh line of sout (pass-offset, so a
// stream line is never touched twice).
__global__ void ring_pass(int4 *buf, long long lines, const int4 *sin, int4 *sout, int stream,
                          int passes, int shift, int *sink)
{
    int acc = 0;
    long long g = gridDim.x, third = lines / 3 + 1;
    for (int p = 0; p < passes; p++) {
        long long first = first_line(p, shift);
        for (long long j = 0; first + j * g < lines; j += 4) {
            long long line = first + (j + threadIdx.x / 8) * g;
            if (line >= lines)
                continue;
            int k = threadIdx.x % 8;
            __stcg(buf + line * 8 + k, make_int4((int)line, p, k, 1));
            long long back = line - lines / 2;
            if (back < 0)
                back += lines;
            int4 v = __ldcg(buf + back * 8 + k);
            acc ^= v.x ^ v.w;
            if (stream && line % 3 == 0) {
                long long s = (long long)p * third + line / 3;
                int4 w = __ldcg(sin + s * 8 + k);
                acc ^= w.y;
                __stcg(sout + s * 8 + k, make_int4(w.x, p, k, 2));
            }
        }
    }
    if (acc == 0x7fffffff)
        *sink = acc;
}

// Touch a large buffer so that nothing of the working set stays in L2.
__global__ void evict(int4 *buf, long long n)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x)
        buf[i] = make_int4((int)i, 0, 0, 1);
}

static int ring_main(int sms, int4 *big, long long big_bytes, int *sink)
{
    const long long MiB = 1 << 20;
    const int grid = sms * 4, block = 32;
    const int sizes[] = {8, 12, 16, 20, 24, 26, 28, 30, 32, 34, 36, 38, 40, 42, 44, 48, 52, 56, 64};
    const int nsizes = sizeof sizes / sizeof sizes[0];
    int4 *buf, *sin, *sout;
    long long stream_bytes = (long long)PASSES * (64 * MiB / 3 + 128 * 4);
    CK(cudaMalloc(&buf, 64 * MiB));
    CK(cudaMalloc(&sin, stream_bytes));
    CK(cudaMalloc(&sout, stream_bytes));
    CK(cudaMemset(buf, 1, 64 * MiB));
    CK(cudaMemset(sin, 1, stream_bytes));
    fprintf(stderr, "device sms %d grid %d block %d passes %d\n", sms, grid, block, PASSES);
    for (int stream = 0; stream < 2; stream++)
        for (int s = 0; s < nsizes; s++) {
            long long lines = (long long)sizes[s] * MiB / 128;
            for (int rep = 0; rep < 2; rep++) {
                evict<<<sms * 8, 256>>>(big, big_bytes / 16);
                int passes = rep ? PASSES : 1;
                ring_pass<<<grid, block>>>(buf, lines, sin, sout, stream, passes, 37, sink);
                CK(cudaGetLastError());
                fprintf(stderr, "launch %s W_MiB %d passes %d stream_lines_per_pass %lld\n",
                        stream ? "ring-stream" : "ring-rw", sizes[s], passes,
                        stream ? (lines + 2) / 3 : 0LL);
            }
        }
    CK(cudaDeviceSynchronize());
    return 0;
}

int main(int argc, char **argv)
{
    int dev = 0, sms = 0;
    CK(cudaGetDevice(&dev));
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    const int grid = sms * 4, block = 32;
    const long long MiB = 1 << 20;
    const int sizes[] = {8, 16, 20, 24, 26, 28, 30, 32, 34, 36, 40, 44, 48, 52, 56, 60, 64, 72, 80, 96};
    const int nsizes = sizeof sizes / sizeof sizes[0];
    int4 *buf, *big;
    int *sink;
    long long big_bytes = 512 * MiB;
    CK(cudaMalloc(&big, big_bytes));
    CK(cudaMalloc(&sink, sizeof(int)));
    if (argc > 1 && argv[1][0] == 'r')
        return ring_main(sms, big, big_bytes, sink);
    CK(cudaMalloc(&buf, 96 * MiB));
    CK(cudaMemset(buf, 1, 96 * MiB));
    fprintf(stderr, "device sms %d grid %d block %d passes %d\n", sms, grid, block, PASSES);
    for (int mode = 0; mode < 2; mode++) {
        int shift = mode ? 37 : 0; /* coprime to the SM count: a line visits 5 SMs */
        for (int s = 0; s < nsizes; s++) {
            long long lines = (long long)sizes[s] * MiB / 128;
            for (int rep = 0; rep < 2; rep++) {
                evict<<<sms * 8, 256>>>(big, big_bytes / 16);
                int passes = rep ? PASSES : 1;
                chase<<<grid, block>>>(buf, lines, passes, shift, sink);
                CK(cudaGetLastError());
                fprintf(stderr, "launch %s W_MiB %d passes %d\n", mode ? "rotate" : "fixed", sizes[s],
                        passes);
            }
        }
    }
    CK(cudaDeviceSynchronize());
    return 0;
}
