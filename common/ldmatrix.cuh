/// @file ldmatrix.cuh
/// @brief ldmatrix: four 8 x 8 matrices of bf16 from shared memory into a warp's fragment
/// registers in one instruction, optionally transposed on the way (chapter 14 walks through it).
/// Compute capability 7.5 or later.
#pragma once

#include "shared_address.cuh"

#include <cuda_bf16.h>

namespace cs {

/// Four 8 x 8 matrices of bf16 from shared memory into the warp's registers, one instruction for the
/// whole warp (`ldmatrix.sync.aligned.m8n8.x4.shared.b16`): lanes 8j .. 8j + 7 each give @p row, the
/// address of one 16-byte row of matrix j, and every lane gets in @p fragment[j] its pair of matrix
/// j: row lane / 4, columns 2·(lane % 4) and 2·(lane % 4) + 1, the layout of an mma fragment.
/// kTranspose (ldmatrix .trans): the pair is column lane / 4, rows 2·(lane % 4) and
/// 2·(lane % 4) + 1 instead, so a matrix stored row by row arrives as the column-major fragment B
/// needs.
template <bool kTranspose>
__device__ __forceinline__ void load_matrices(unsigned (&fragment)[4], const __nv_bfloat16* row) {
  const unsigned shared_row = shared_address(row);
  if constexpr (kTranspose)
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(fragment[0]), "=r"(fragment[1]), "=r"(fragment[2]), "=r"(fragment[3])
                 : "r"(shared_row));
  else
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(fragment[0]), "=r"(fragment[1]), "=r"(fragment[2]), "=r"(fragment[3])
                 : "r"(shared_row));
}

} // namespace cs
