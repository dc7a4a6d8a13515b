/* AVX-512F kernels ("avx512" means AVX-512F only; see dispatch.c). */
#if defined(FA_HAVE_X86_KERNELS) && (defined(__x86_64__) || defined(_M_X64))
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC target("avx512f,avx2,fma")
#elif defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f,avx2,fma"))), apply_to = function)
#endif
#define FA_ISA_SUFFIX avx512
#include "simd/simd_avx512.h"
#include "kernels/kernels.inc"
#if defined(__clang__)
#pragma clang attribute pop
#endif
#endif
