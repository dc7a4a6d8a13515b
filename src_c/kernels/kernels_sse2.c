/* SSE2 kernels, for x86-64 CPUs without AVX2 + FMA (simd_sse2.h computes the
 * fused multiply-adds exactly). SSE2 is part of x86-64's baseline: no target
 * pragma, and any compiler builds it.
 *
 * The algorithms' helpers are inlined where the compiler finds it worth it,
 * not always (kernels.inc's default): with every emulated FMA expanded in
 * place, forced inlining made functions whose register allocation took gcc
 * 5.5 minutes for this file (11 seconds this way). */
#include "runtime/fastact.h"
#if defined(FA_HAVE_SSE2_KERNELS)
#if !defined(FA_INLINE)
#define FA_INLINE static inline
#endif
#include "simd/simd_sse2.h"
#include "kernels/kernels.inc"
#endif
