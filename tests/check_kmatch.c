/* check_kmatch: kernel classes from measured names (real CUPTI/ncu names) and from the op table,
 * and the alignment of model and measured kernels, each case worked out by hand. */
#include <string.h>

#include "../src/model/kmatch.h"
#include "ktest.h"

/* Names as torch.profiler and Nsight Compute print them (validation/apps/h200-apps-kernels.csv,
 * PyTorch 2.11 on an H200), with the class a reader of PyTorch's sources gives them. */
START_TEST(test_kernel_class)
{
    static const struct {
        const char *name;
        int cls;
    } C[] = {
        {"nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT", KC_GEMM},
        {"void cutlass::Kernel2<cutlass_75_wmma_tensorop_bf16_s161616gemm_bf16_32x32_32x1_nn_align1>"
         "(cutlass_75_wmma_tensorop_bf16_s161616gemm_bf16_32x32_32x1_nn_align1::Params)", KC_GEMM},
        {"void cublasLt::splitKreduce_kernel<32, 16, int, float, __nv_bfloat16, float>", KC_GEMM},
        {"void gemmk1_kernel<int, float, 256, 5, false, false, false, false, "
         "cublasGemvTensorStridedBatched<__nv_bfloat16 const> >", KC_GEMM},
        {"cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_7_64x128x128_4x1x1_"
         "cga1x1x1_kernel0_0", KC_ATTENTION},
        {"void cudnn::fusion::compute_dot_do_o_specialized<true, 128>(void const*)", KC_ATTENTION},
        {"void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4> >", KC_ATTENTION},
        {"void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, float, "
         "true>(int, float)", KC_NORM},
        {"void at::native::(anonymous namespace)::GammaBetaBackwardCUDAKernelTemplate<c10::BFloat16>",
         KC_NORM},
        {"void at::native::batch_norm_collect_statistics_kernel<at::native::InvStd, float>", KC_NORM},
        {"void (anonymous namespace)::softmax_warp_forward<c10::BFloat16, c10::BFloat16, float, 10>",
         KC_SOFTMAX},
        {"void at::native::indexFuncLargeIndex<c10::BFloat16, long, unsigned int, 2, 2, -2, true, "
         "at::native::(anonymous namespace)::ReduceAdd>", KC_INDEX},
        {"void at::native::vectorized_gather_kernel<16, long>(char*, char*, long*, int)", KC_INDEX},
        {"void at_cuda_detail::cub::detail::radix_sort::DeviceRadixSortOnesweepKernel<long>", KC_INDEX},
        {"void at::native::(anonymous namespace)::compute_grad_weight<c10::BFloat16, long>", KC_INDEX},
        {"void at::native::reduce_kernel<512, 1, at::native::ReduceOp<c10::BFloat16, "
         "at::native::func_wrapper_t<c10::BFloat16, at::native::sum_functor<c10::BFloat16> > > >",
         KC_REDUCE},
        {"void at::native::(anonymous namespace)::CatArrayBatchedCopy_vectorized<at::native::"
         "(anonymous namespace)::OpaqueType<2u>, unsigned int, 2, 128, 1, 16, 8>", KC_COPY},
        {"void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl_nocast<at::native::"
         "direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}> >", KC_COPY},
        {"Memcpy DtoD (Device -> Device)", KC_COPY},
        {"void at::native::vectorized_elementwise_kernel<8, at::native::FillFunctor<c10::BFloat16>, "
         "std::array<char*, 1ul> >", KC_FILL},
        {"Memset (Device)", KC_FILL},
        {"void at::native::(anonymous namespace)::max_pool_forward_nchw<float, float>", KC_POOL},
        {"void at::native::(anonymous namespace)::multi_tensor_apply_kernel<FusedAdamMathFunctor>",
         KC_OPTIMIZER},
        {"triton_per_fused__to_copy_add_mean_mul_pow_rsqrt_0", KC_GENERATED},
        {"triton_poi_fused_index_put_0", KC_GENERATED},
        {"void at::native::vectorized_elementwise_kernel<8, at::native::(anonymous namespace)::"
         "silu_kernel(at::TensorIteratorBase&)::{lambda()#1}>", KC_ELEMENTWISE},
        {"void at::native::vectorized_elementwise_kernel<8, at::native::CUDAFunctor_add<c10::BFloat16>, "
         "std::array<char*, 3ul> >", KC_ELEMENTWISE},
    };
    for (size_t i = 0; i < sizeof C / sizeof C[0]; i++)
        ck_assert_msg(km_kernel_class(C[i].name) == C[i].cls, "%s: %s, want %s", C[i].name,
                      km_class_name(km_kernel_class(C[i].name)), km_class_name(C[i].cls));
    ck_assert_str_eq(km_class_name(KC_GENERATED), "generated");
    ck_assert_ptr_null(km_class_name(KC_COUNT));
}
END_TEST

static int tensor(wl_graph *g, const char *name, int64_t r, int64_t c, wl_kind kind)
{
    kt_err e;
    err_clear(&e);
    int64_t dim[2] = {r, c};
    return wl_add_tensor(g, name, 2, dim, DT_BF16, kind, &e);
}

/* Model kernels: a GEMM with a view (gemm under any executor), an elementwise op (ATen's kernel
 * in bsp, Triton under torch.compile), two ops fused (generated), a view alone (no kernel). */
START_TEST(test_item_class)
{
    arena a = {0};
    wl_graph g;
    wl_init(&g, "t", &a);
    kt_err e;
    err_clear(&e);
    int x = tensor(&g, "x", 64, 64, TK_INPUT), w = tensor(&g, "w", 64, 64, TK_WEIGHT);
    int h = tensor(&g, "h", 64, 64, TK_INTER), v = tensor(&g, "v", 64, 64, TK_INTER);
    int s = tensor(&g, "s", 64, 64, TK_INTER), y = tensor(&g, "y", 64, 64, TK_OUTPUT);
    int in2[2] = {x, w};
    ck_assert_int_ge(wl_add_op(&g, "mm", OP_MATMUL, in2, 2, &h, 1, NULL, 0, &e), 0);
    ck_assert_int_ge(wl_add_op(&g, "v", OP_VIEW, &h, 1, &v, 1, NULL, 0, &e), 0);
    ck_assert_int_ge(wl_add_op(&g, "act", OP_SILU, &v, 1, &s, 1, NULL, 0, &e), 0);
    int in3[2] = {s, x};
    ck_assert_int_ge(wl_add_op(&g, "res", OP_ADD, in3, 2, &y, 1, NULL, 0, &e), 0);
    int o01[2] = {0, 1}, o2[1] = {2}, o23[2] = {2, 3}, o1[1] = {1};
    kt_item it = {0};
    it.c.bound = BOUND_COMPUTE;
    it.ops = o01;
    it.nops = 2;
    ck_assert_int_eq(km_item_class(&g, &it, 0), KC_GEMM);
    ck_assert_int_eq(km_item_class(&g, &it, 1), KC_GEMM);
    it.ops = o2;
    it.nops = 1;
    ck_assert_int_eq(km_item_class(&g, &it, 0), KC_ELEMENTWISE);
    ck_assert_int_eq(km_item_class(&g, &it, 1), KC_GENERATED);
    it.ops = o23;
    it.nops = 2;
    ck_assert_int_eq(km_item_class(&g, &it, 0), KC_GENERATED);
    it.ops = o1;
    it.nops = 1;
    ck_assert_int_eq(km_item_class(&g, &it, 0), -1);
    it.ops = o2;
    it.c.bound = BOUND_NONE;
    ck_assert_int_eq(km_item_class(&g, &it, 0), -1);
    arena_free(&a);
}
END_TEST

enum { G = KC_GEMM, E = KC_ELEMENTWISE, A = KC_ATTENTION, C = KC_COPY, N = KC_NORM };

static void align_m(const int *mc, const double *mt, const unsigned *mabs, int nm, const int *kc,
                    const double *kt, int nk, const int *want)
{
    arena a = {0};
    kt_err e;
    err_clear(&e);
    int got[32];
    ck_assert_int_eq(km_align(mc, mt, mabs, nm, kc, kt, nk, &a, got, &e), 0);
    for (int j = 0; j < nk; j++)
        ck_assert_msg(got[j] == want[j], "measured kernel %d: model kernel %d, want %d", j, got[j],
                      want[j]);
    arena_free(&a);
}

static void align(const int *mc, const double *mt, int nm, const int *kc, const double *kt, int nk,
                  const int *want)
{
    align_m(mc, mt, NULL, nm, kc, kt, nk, want);
}

/* By hand:
 * - the same sequence on both sides: kernel j is model kernel j;
 * - an extra measured kernel of another class between two matches is left over;
 * - a split-K reduction (a GEMM kernel right after the GEMM) joins the GEMM's model kernel;
 * - crossing orders (model: attention then a copy; measured: a copy then attention) keep the pair
 *   that explains more time: attention (min(236, 311) us) over the copy (min(32, 42) us);
 * - a model kernel that could take either of two measured kernels of its class takes the first
 *   (the other is left over when another class separates them). */
START_TEST(test_align)
{
    int mc1[3] = {N, G, E}, kc1[3] = {N, G, E};
    double mt1[3] = {1e-6, 5e-6, 2e-6}, kt1[3] = {2e-6, 4e-6, 2e-6};
    int w1[3] = {0, 1, 2};
    align(mc1, mt1, 3, kc1, kt1, 3, w1);

    int kc2[4] = {N, G, C, E};
    double kt2[4] = {2e-6, 4e-6, 1e-6, 2e-6};
    int w2[4] = {0, 1, -1, 2};
    align(mc1, mt1, 3, kc2, kt2, 4, w2);

    int kc3[5] = {N, G, G, C, E};
    double kt3[5] = {2e-6, 4e-6, 1e-6, 1e-6, 2e-6};
    int w3[5] = {0, 1, 1, -1, 2};
    align(mc1, mt1, 3, kc3, kt3, 5, w3);

    int mc4[2] = {A, C}, kc4[2] = {C, A};
    double mt4[2] = {236e-6, 32e-6}, kt4[2] = {42e-6, 311e-6};
    int w4[2] = {-1, 0};
    align(mc4, mt4, 2, kc4, kt4, 2, w4);

    int mc5[1] = {E}, kc5[3] = {E, C, E};
    double mt5[1] = {1e-6}, kt5[3] = {5e-6, 1e-6, 6e-6};
    int w5[3] = {0, -1, -1};
    align(mc5, mt5, 1, kc5, kt5, 3, w5);

    /* nothing in common */
    int w6[2] = {-1, -1};
    align(mc4, mt4, 1, kc2 + 2, kt2 + 2, 2, w6);

    /* eager RoPE twice (q 9 us, k 3 us; each one model kernel that takes element-wise and copy
     * kernels) between two GEMMs, measured as mul, neg, cat, mul, add each: q 2+1+2+2+2 = 9 us,
     * k 5 x 0.6 = 3 us. The runs explain min(9, A) + min(3, 12 - A) us for a q run of A us, 12 only
     * for A = 9: q takes its five kernels, k its five. Without the copy in the mask a run stops at
     * a cat: q on its two first kernels (3) and k on 4..7 (min(3, 5.2)) explain 6 us, q on 4..7
     * (min(9, 5.2)) and k on 9..10 (1.2) 6.4 us, the best. */
    int mc7[4] = {G, E, E, G}, kc7[12] = {G, E, E, C, E, E, E, E, C, E, E, G};
    double mt7[4] = {4e-6, 9e-6, 3e-6, 4e-6};
    double kt7[12] = {4e-6, 2e-6, 1e-6, 2e-6, 2e-6, 2e-6, 0.6e-6, 0.6e-6, 0.6e-6, 0.6e-6, 0.6e-6,
                      4e-6};
    unsigned ab7[4] = {1u << G, 1u << E | 1u << C, 1u << E | 1u << C, 1u << G};
    int w7[12] = {0, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 3};
    align_m(mc7, mt7, ab7, 4, kc7, kt7, 12, w7);
    int w8[12] = {0, -1, -1, -1, 1, 1, 1, 1, -1, 2, 2, 3};
    align(mc7, mt7, 4, kc7, kt7, 12, w8);
}
END_TEST

/* The mask of eager RoPE: element-wise and copy kernels under bsp, its class alone under vf. */
START_TEST(test_item_absorbs)
{
    arena a = {0};
    wl_graph g;
    wl_init(&g, "t", &a);
    kt_err e;
    err_clear(&e);
    int x = tensor(&g, "x", 64, 64, TK_INPUT), y = tensor(&g, "y", 64, 64, TK_OUTPUT);
    int c = tensor(&g, "c", 64, 64, TK_INPUT), s = tensor(&g, "s", 64, 64, TK_INPUT);
    int in[3] = {x, c, s};
    ck_assert_int_ge(wl_add_op(&g, "rope", OP_ROPE, in, 3, &y, 1, NULL, 0, &e), 0);
    int o0[1] = {0};
    kt_item it = {0};
    it.c.bound = BOUND_DRAM;
    it.ops = o0;
    it.nops = 1;
    ck_assert_uint_eq(km_item_absorbs(&g, &it, KC_ELEMENTWISE, 1),
                      1u << KC_ELEMENTWISE | 1u << KC_COPY);
    ck_assert_uint_eq(km_item_absorbs(&g, &it, KC_GENERATED, 0), 1u << KC_GENERATED);
    arena_free(&a);
}
END_TEST

START_TEST(test_align_limit)
{
    arena a = {0};
    kt_err e;
    err_clear(&e);
    static int mc[1], kc[1];
    static double t[1];
    int got[1];
    /* the check comes before any memory is touched: sizes alone */
    ck_assert_int_eq(km_align(mc, t, NULL, 1 << 15, kc, t, 1 << 14, &a, got, &e), -1);
    ck_assert_str_eq(e.msg, "16384 measured kernels x 32768 model kernels are too many to align (at "
                            "most 268435456 cells); select one step with --range");
    arena_free(&a);
}
END_TEST

static Suite *kmatch_suite(void)
{
    Suite *s = suite_create("kmatch");
    TCase *tc = tcase_create("km_kernel_class");
    tcase_add_test(tc, test_kernel_class);
    suite_add_tcase(s, tc);
    tc = tcase_create("km_item_class");
    tcase_add_test(tc, test_item_class);
    suite_add_tcase(s, tc);
    tc = tcase_create("km_item_absorbs");
    tcase_add_test(tc, test_item_absorbs);
    suite_add_tcase(s, tc);
    tc = tcase_create("km_align");
    tcase_add_test(tc, test_align);
    tcase_add_test(tc, test_align_limit);
    suite_add_tcase(s, tc);
    return s;
}

KT_TEST_MAIN(kmatch_suite)
