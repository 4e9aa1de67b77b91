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
__global__ void chase(const int4 *buf, long long lines, int passes, int shift, int *sink)
{
    int acc = 0;
    long long g = gridDim.x;
    for (int p = 0; p < passes; p++) {
        long long first = ((long long)blockIdx.x - (long long)p * shift) % g;
        if (first < 0)
            first += g;
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

// Touch a large buffer so that nothing of the working set stays in L2.
__global__ void evict(int4 *buf, long long n)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x)
        buf[i] = make_int4((int)i, 0, 0, 1);
}

int main()
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
    CK(cudaMalloc(&buf, 96 * MiB));
    CK(cudaMalloc(&big, big_bytes));
    CK(cudaMalloc(&sink, sizeof(int)));
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
