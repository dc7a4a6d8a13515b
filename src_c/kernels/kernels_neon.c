/* AArch64 Advanced SIMD (NEON) kernels: part of every AArch64 CPU, so on
 * that architecture they are the default set ("neon"; see dispatch.c). The
 * unit is empty elsewhere. */
#if defined(__aarch64__) && !defined(FA_NO_NEON)
#include "simd/simd_neon.h"
#include "kernels/kernels.inc"
#endif
