// cta_rate.cu: how fast the GPU starts and retires CTAs (thread blocks), the cost that dominates
// kernels made of many tiny CTAs (ATen's one-row-per-CTA norms on short rows).
// Prints JSON lines: {"kernel", "ctas", "threads", "time_us", "ns_per_cta"}.
#include <cstdio>
#include <cuda_runtime.h>
#include <vector>
#include <algorithm>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_)); return 1; } } while (0)

__global__ void k_empty(int *sink, int magic)
{
    if (threadIdx.x == 0 && blockIdx.x == (unsigned)magic)
        sink[0] = 1;
}

// one row of 128 bf16-sized (here: 16-bit) elements per CTA: load, block sum, normalize, store
__global__ void k_row(const unsigned short *x, unsigned short *y, int row)
{
    __shared__ float part[32];
    size_t base = (size_t)blockIdx.x * row;
    float v = 0;
    for (int i = threadIdx.x; i < row; i += blockDim.x)
        v += (float)x[base + i];
    for (int o = 16; o; o >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    if ((threadIdx.x & 31) == 0)
        part[threadIdx.x >> 5] = v;
    __syncthreads();
    float s = 0;
    for (int w = 0; w < (int)(blockDim.x >> 5); w++)
        s += part[w];
    float inv = 1.0f / (s + 1.0f);
    for (int i = threadIdx.x; i < row; i += blockDim.x)
        y[base + i] = (unsigned short)((float)x[base + i] * inv * 65535.0f);
}

static float time_ms(void (*launch)(int, int, void *), int ctas, int threads, void *arg)
{
    cudaEvent_t a, b;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    launch(ctas, threads, arg); // warm-up
    std::vector<float> t;
    for (int r = 0; r < 15; r++) {
        cudaEventRecord(a);
        launch(ctas, threads, arg);
        cudaEventRecord(b);
        cudaEventSynchronize(b);
        float ms;
        cudaEventElapsedTime(&ms, a, b);
        t.push_back(ms);
    }
    std::sort(t.begin(), t.end());
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    return t[t.size() / 2];
}

struct row_args { const unsigned short *x; unsigned short *y; int row; };
static int *g_sink;
static void launch_empty(int ctas, int threads, void *) { k_empty<<<ctas, threads>>>(g_sink, -1); }
static void launch_row(int ctas, int threads, void *p)
{
    row_args *r = (row_args *)p;
    k_row<<<ctas, threads>>>(r->x, r->y, r->row);
}

int main()
{
    CK(cudaMalloc(&g_sink, 4));
    const int maxc = 1 << 20, row = 128;
    unsigned short *x, *y;
    CK(cudaMalloc(&x, (size_t)maxc * row * 2));
    CK(cudaMalloc(&y, (size_t)maxc * row * 2));
    CK(cudaMemset(x, 0x3c, (size_t)maxc * row * 2));
    row_args ra = {x, y, row};
    int threads_list[] = {32, 128, 256, 1024};
    for (int ti = 0; ti < 4; ti++)
        for (int c = 1 << 14; c <= maxc; c <<= 2) {
            float ms = time_ms(launch_empty, c, threads_list[ti], nullptr);
            CK(cudaGetLastError());
            printf("{\"kernel\": \"empty\", \"ctas\": %d, \"threads\": %d, \"time_us\": %.3f, \"ns_per_cta\": %.4f}\n",
                   c, threads_list[ti], ms * 1e3, ms * 1e6 / c);
        }
    for (int ti = 0; ti < 3; ti++)
        for (int c = 1 << 14; c <= maxc; c <<= 2) {
            float ms = time_ms(launch_row, c, threads_list[ti], &ra);
            CK(cudaGetLastError());
            printf("{\"kernel\": \"row128\", \"ctas\": %d, \"threads\": %d, \"time_us\": %.3f, \"ns_per_cta\": %.4f}\n",
                   c, threads_list[ti], ms * 1e3, ms * 1e6 / c);
        }
    return 0;
}
