/// @file store_pair.cuh
/// @brief How a lane's sums leave for C two at a time: a tensor-core fragment holds the elements of
/// C in pairs of neighbouring columns (2q, 2q + 1), and a pair is one 8-byte store where the row
/// allows it (chapter 13), even in a row that starts 4 bytes past an 8-byte boundary, where the
/// lanes realign their pairs by a shuffle (store_row_of_pairs, chapter 20).
#pragma once

#include <cstdint>

namespace cs {

/// Writes @p low and @p high to columns col and col + 1 of a row, at @p to (the address of column
/// col), dropping the columns at or past @p row_length. kAligned: row_length is even (a multiple of
/// 8), so col + 1 is inside whenever col is, and @p to is 8-byte aligned: one 8-byte store.
/// Otherwise two guarded 4-byte stores.
template <bool kAligned>
__device__ __forceinline__ void store_pair(float* to, float low, float high, std::int64_t col,
                                           std::int64_t row_length) {
  if (kAligned) {
    if (col < row_length) *reinterpret_cast<float2*>(to) = make_float2(low, high);
  } else {
    if (col < row_length) to[0] = low;
    if (col + 1 < row_length) to[1] = high;
  }
}

/// Writes @p low and @p high to columns col and col + 1 of a row, at @p to (the address of column
/// col, 8-byte aligned, whatever the row's length), dropping the columns at or past @p row_length:
/// one 8-byte store, or the low one alone where col + 1 is past the row's end.
__device__ __forceinline__ void store_aligned_pair(float* to, float low, float high, std::int64_t col,
                                                   std::int64_t row_length) {
  if (col + 1 < row_length)
    *reinterpret_cast<float2*>(to) = make_float2(low, high);
  else if (col < row_length)
    to[0] = low;
}

/// Stores one row of a lane's sums, as a warp of a wgmma holds them: pair j, sums[4j + 2·half] and
/// sums[4j + 2·half + 1], goes to columns first_col + 8j and + 1 of the row at @p c_row, where
/// first_col = @p tile_col + 2q (q = lane % 4), for j below kCount / 4; only the columns below
/// @p row_length, and nothing where @p row_in_c is false. Where the row starts on an 8-byte
/// boundary, each pair is one 8-byte store. Where it starts 4 bytes past one (kAligned false and n
/// odd: every other row), no pair (2q, 2q + 1) is 8-byte aligned, so a lane stores (2q + 1, 2q + 2)
/// instead, column 2q + 2 taken from the next lane by a shuffle (for the fourth lane, from the first
/// lane's next 8 columns; none after the tile's last), and the tile's first column goes alone.
/// Every lane of the warp calls it for the same row number of its piece (the shuffles), in every row,
/// whether or not it stores.
template <bool kAligned, int kCount>
__device__ __forceinline__ void store_row_of_pairs(float* c_row, const float (&sums)[kCount], int half,
                                                   std::int64_t tile_col, std::int64_t row_length,
                                                   bool row_in_c) {
  const int lane = threadIdx.x % 32, q = lane % 4;
  const bool shifted = !kAligned && reinterpret_cast<std::uintptr_t>(c_row) % 8 != 0;
#pragma unroll
  for (int j = 0; j < kCount / 4; ++j) {
    const std::int64_t col = tile_col + j * 8 + 2 * q;
    const float low = sums[4 * j + 2 * half], high = sums[4 * j + 2 * half + 1];
    float next = 0.0f; // column col + 2 of this row, for a shifted row
    if (!kAligned) {
      const float next_lane = __shfl_sync(0xffffffffu, low, (lane & ~3) | ((q + 1) & 3));
      const float next_eight =
          j + 1 < kCount / 4 ? __shfl_sync(0xffffffffu, sums[4 * (j + 1) + 2 * half], lane & ~3) : 0.0f;
      next = q == 3 ? next_eight : next_lane;
    }
    if (!row_in_c) continue;
    if (!shifted) {
      store_aligned_pair(c_row + col, low, high, col, row_length);
    } else {
      if (j == 0 && q == 0 && col < row_length) c_row[col] = low;
      if (j + 1 == kCount / 4 && q == 3) {
        if (col + 1 < row_length) c_row[col + 1] = high; // its next column is the next tile's
      } else {
        store_aligned_pair(c_row + col + 1, high, next, col + 1, row_length);
      }
    }
  }
}

} // namespace cs
