/* Scalar kernels: the fallback for every CPU. Built with -fno-tree-vectorize
 * (setup.py) so it stays one lane and runs the same algorithm as the SIMD files. */
#include "simd/simd_scalar.h"
#include "kernels/kernels.inc"
