/// @file quads.cuh
/// @brief Four consecutive floats of a row moved as one: the 16-byte loads and stores of the FP32
/// stages (chapter 09 walks through them), with a guarded 4-byte path for rows that are not
/// 16-byte aligned.
#pragma once

#include <cstdint>

namespace cs {

/// Reads columns col .. col + 3 of a row, from @p from (the address of column col), as a float4:
/// zeros for the columns at or past @p row_length, and for a row outside the matrix
/// (@p row_in_matrix false). kAligned: @p from is 16-byte aligned and row_length % 4 == 0, so the
/// four columns are all in the row or all past it: one 16-byte load. Otherwise four guarded 4-byte
/// loads.
template <bool kAligned>
__device__ __forceinline__ float4 load_quad(const float* from, bool row_in_matrix, std::int64_t col,
                                            std::int64_t row_length) {
  float4 quad = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  if (kAligned) {
    if (row_in_matrix && col < row_length) quad = *reinterpret_cast<const float4*>(from);
  } else if (row_in_matrix) {
    if (col < row_length) quad.x = from[0];
    if (col + 1 < row_length) quad.y = from[1];
    if (col + 2 < row_length) quad.z = from[2];
    if (col + 3 < row_length) quad.w = from[3];
  }
  return quad;
}

/// Writes @p quad to columns col .. col + 3 of a row, at @p to (the address of column col),
/// dropping the columns at or past @p row_length. kAligned as for load_quad: one 16-byte store, or
/// four guarded 4-byte stores.
template <bool kAligned>
__device__ __forceinline__ void store_quad(float* to, float4 quad, std::int64_t col,
                                           std::int64_t row_length) {
  if (kAligned) {
    if (col < row_length) *reinterpret_cast<float4*>(to) = quad;
  } else {
    if (col < row_length) to[0] = quad.x;
    if (col + 1 < row_length) to[1] = quad.y;
    if (col + 2 < row_length) to[2] = quad.z;
    if (col + 3 < row_length) to[3] = quad.w;
  }
}

} // namespace cs
