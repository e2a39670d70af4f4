/// @file swizzle.cuh
/// @brief Where a 16-byte chunk of a tile row is kept in a swizzled shared-memory tile: chunk c of
/// row r at chunk c XOR (r % 8), so that the same chunk of eight consecutive rows lies in eight
/// different groups of four banks (chapter 14 has the picture); and the same swizzle in the stripes
/// of 64 columns that wgmma's 128-byte mode reads (chapter 15). Every write to such a tile and
/// every read from it goes through one of these.
#pragma once

namespace cs {

/// Where chunk @p chunk (16 bytes, 8 bf16) of row @p row of a swizzled tile is kept, as an index of
/// bf16 from the tile's start: chunk @p chunk XOR (row % 8) of the same row, whose length is
/// @p row_elements bf16 (a multiple of 64: 128 bytes). The XOR permutes the chunks inside each
/// 128-byte stretch of a row, so that chunk c of 8 consecutive rows, which an ldmatrix reads at once,
/// lies in 8 different groups of 4 banks.
__device__ __forceinline__ int swizzled(int row, int chunk, int row_elements) {
  return row * row_elements + (chunk ^ (row % 8)) * 8;
}

/// Where chunk @p chunk (16 bytes, 8 bf16) of row @p row of a tile of @p rows rows is kept, as an
/// index of bf16 from the tile's start, when the tile is stored in stripes of 64 columns (128
/// bytes), one after another, each @p rows rows of 128 bytes: inside its stripe, chunk c of a row is
/// at chunk c XOR (row % 8), swizzled() within each stripe, the layout wgmma's 128-byte mode reads.
/// A row of a 64-column tile is one stripe; a tile of N columns is N / 64 stripes.
__device__ __forceinline__ int swizzled_in_stripes(int row, int chunk, int rows) {
  return chunk / 8 * rows * 64 + row * 64 + (chunk % 8 ^ row % 8) * 8;
}

} // namespace cs
