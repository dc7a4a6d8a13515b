/* AVX2 + FMA kernels ("avx2" means exactly these features; see dispatch.c). */
#if defined(FA_HAVE_X86_KERNELS) && (defined(__x86_64__) || defined(_M_X64))
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC target("avx2,fma")
#elif defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,fma"))), apply_to = function)
#endif
#include "simd/simd_avx2.h"
#include "kernels/kernels.inc"
#if defined(__clang__)
#pragma clang attribute pop
#endif
#endif
