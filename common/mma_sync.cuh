/// @file mma_sync.cuh
/// @brief mma.sync: a warp multiplies a 16 x 16 piece of A by a 16 x 8 piece of B on the tensor
/// cores, bf16 in and FP32 sums, each lane holding fixed elements of the pieces (its fragments);
/// and the two ways a lane fills a fragment register from shared memory (chapter 13 walks through
/// them). Compute capability 8.0 or later.
#pragma once

#include <cuda_bf16.h>

namespace cs {

/// Two bf16 in one 32-bit register, @p low in bits 0-15 and @p high in bits 16-31: how a fragment
/// holds the two elements of a pair (the lower index in the lower half).
__device__ __forceinline__ unsigned pack_pair(__nv_bfloat16 low, __nv_bfloat16 high) {
  const unsigned low_bits = __bfloat16_as_ushort(low);
  const unsigned high_bits = __bfloat16_as_ushort(high);
  return low_bits | high_bits << 16;
}

/// The pair of bf16 at @p pair (4-byte aligned) as one register, in one 32-bit shared-memory read.
__device__ __forceinline__ unsigned load_pair(const __nv_bfloat16* pair) {
  return *reinterpret_cast<const unsigned*>(pair);
}

/// sums += A·B for one 16 x 8 piece of C, by the whole warp: mma.sync.aligned.m16n8k16 with bf16 A
/// (16 x 16, row-major) and B (16 x 8, column-major: pairs run down K), FP32 sums. With g = lane / 4
/// and q = lane % 4, this lane holds
///   @p a:    a[0] = A[g][2q, 2q+1],   a[1] = A[g+8][2q, 2q+1],
///            a[2] = A[g][2q+8, 2q+9], a[3] = A[g+8][2q+8, 2q+9]
///   @p b:    b[0] = B[2q, 2q+1][g], b[1] = B[2q+8, 2q+9][g]
///   @p sums: sums[0, 1] = C[g][2q, 2q+1], sums[2, 3] = C[g+8][2q, 2q+1]
/// Every lane must reach it with its own fragments (.sync, .aligned): a warp-wide instruction.
__device__ __forceinline__ void mma_16x8x16(float (&sums)[4], const unsigned (&a)[4],
                                            const unsigned (&b)[2]) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(sums[0]), "+f"(sums[1]), "+f"(sums[2]), "+f"(sums[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

} // namespace cs
