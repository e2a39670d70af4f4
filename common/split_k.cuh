/// @file split_k.cuh
/// @brief Splitting the tiles of the last round along K: the schedule that decides which tiles are
/// split and into how many pieces, the scratch buffer and flags through which a block hands its
/// piece's sums to the block that stores the tile, and the release and acquire that order the two
/// (chapter 20 walks through them).
#pragma once

#include "cuda_check.cuh"
#include "device_buffer.cuh"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

namespace cs {

/// Sets the flag at @p flag in global memory to @p value, a release at GPU scope
/// (`st.release.gpu`): what this thread wrote before (and what its warp wrote before a __syncwarp
/// and a __threadfence) is seen by any thread that reads the value with wait_for_flag.
__device__ __forceinline__ void raise_flag(int* flag, int value) {
  asm volatile("st.release.gpu.global.b32 [%0], %1;\n" ::"l"(flag), "r"(value) : "memory");
}

/// Waits until the flag at @p flag is raised (nonzero), then fences: this thread's later reads see
/// what was written before it was raised (a relaxed read in the loop, `ld.relaxed.gpu`, and a fence
/// after it make an acquire at GPU scope, without one for every read of the loop).
__device__ __forceinline__ void wait_for_flag(const int* flag) {
  int value = 0;
  do asm volatile("ld.relaxed.gpu.global.b32 %0, [%1];\n" : "=r"(value) : "l"(flag) : "memory");
  while (value == 0);
  __threadfence();
}

/// A split of the last round must save each block at least this many k-tiles to be taken by
/// `--split auto`: a split tile's sums go through the scratch buffer and back, and the block that
/// gathers them waits for the slowest of the blocks it gathers from. Nor does `auto` split where
/// there are fewer tiles than blocks: there every piece is short, and at 1024^3 (32 tiles in four
/// pieces of 4 k-tiles) the split was measured slower than whole tiles (chapter 20).
constexpr std::int64_t kSplitSavesAtLeast = 4;

/// How the tiles are shared out among the blocks of a persistent grid.
struct Schedule {
  std::int64_t blocks = 0;       ///< blocks in the grid
  std::int64_t whole_tiles = 0;  ///< tiles taken whole, b, b + G, ... (a multiple of the blocks, or all)
  std::int64_t parts = 1;        ///< pieces each of the other tiles is split into along K
  std::int64_t most_k_tiles = 0; ///< the most k-tiles a block takes
};

/// The schedule of @p tiles tiles of @p k_tiles k-tiles each on at most @p blocks blocks: the full
/// rounds in whole tiles, b, b + G, ..., and the L tiles of the last round, if any, split into
/// min(G / L, k_tiles) pieces along K, one per block. Whole tiles only where that is fewer than
/// two pieces, with @p split "never", or ("auto") where there is no full round or the split saves a
/// block fewer than kSplitSavesAtLeast k-tiles; "always" splits wherever it can.
inline Schedule schedule_of(std::int64_t tiles, std::int64_t k_tiles, std::int64_t blocks,
                            const std::string& split) {
  const std::int64_t rounds = tiles / blocks, last = tiles % blocks;
  const Schedule whole{std::min(blocks, tiles), tiles, 1, (rounds + (last > 0)) * k_tiles};
  const std::int64_t parts = last > 0 ? std::min(blocks / last, k_tiles) : 1;
  if (split == "never" || parts < 2) return whole;
  const std::int64_t most = rounds * k_tiles + (k_tiles + parts - 1) / parts;
  if (split == "auto" && (rounds == 0 || whole.most_k_tiles - most < kSplitSavesAtLeast)) return whole;
  return {blocks, rounds * blocks, parts, most};
}

/// One line for the plan: how @p schedule shares @p tiles tiles of @p k_tiles k-tiles each among the
/// blocks (at most @p blocks, as asked; @p split as `--split` says) and, for split tiles, the
/// scratch buffer of tiles of @p tile_m x @p tile_n floats that sums their pieces; or why no tile is
/// split.
inline std::string schedule_note(const Schedule& schedule, std::int64_t tiles, std::int64_t k_tiles,
                                 std::int64_t blocks, const std::string& split, int tile_m, int tile_n) {
  const auto text = [](std::int64_t value) { return std::to_string(value); };
  if (schedule.whole_tiles == tiles)
    return "every block takes whole tiles, b, b + G, b + 2G, ... of the grid's G = " + text(schedule.blocks) +
           " (at most " + text(schedule.most_k_tiles) + " k-tiles each): " +
           (tiles % blocks == 0 ? std::string("the tiles divide among the blocks")
            : split == "never"  ? std::string("--split never")
            : tiles % blocks * 2 > blocks || k_tiles < 2
                ? std::string("the last round leaves too few blocks idle to split its tiles in two")
            : tiles < blocks
                ? std::string("fewer tiles than blocks (--split always splits them)")
                : "a split would save a block fewer than " + text(kSplitSavesAtLeast) + " k-tiles");
  return "block b of G = " + text(schedule.blocks) + " takes the whole tiles b, b + G, ... below " +
         text(schedule.whole_tiles) + "; the last round's " + text(tiles - schedule.whole_tiles) +
         " tiles are split into " + text(schedule.parts) +
         " pieces along K each, one per block (block b: piece b % " + text(schedule.parts) + " of tile " +
         text(schedule.whole_tiles) + " + b / " + text(schedule.parts) + "): at most " +
         text(schedule.most_k_tiles) + " k-tiles per block instead of " +
         text((tiles + blocks - 1) / blocks * k_tiles) +
         "; a tile's pieces are summed through a scratch buffer of G x " + text(tile_m) + " x " +
         text(tile_n) + " floats (" + text(schedule.blocks * tile_m * tile_n * 4 / 1024) +
         " KB) and a flag per consumer warp of each block";
}

/// What a split needs in device memory: a slot of a tile's sums for each block, and a flag for each
/// consumer warp of each block, zero between launches. Allocated at the first launch that splits
/// (the flags zeroed then) and kept: every launch leaves the flags zero again.
class SplitScratch {
 public:
  /// Room for @p partial_count floats and @p flag_count flags, allocated (and the flags zeroed)
  /// when there is less; nothing when the schedule splits no tile (@p partial_count 0).
  void reserve(std::size_t partial_count, std::size_t flag_count) {
    if (partials_.size() >= partial_count) return;
    partials_ = DeviceBuffer<float>(partial_count);
    flags_ = DeviceBuffer<int>(flag_count);
    CUDA_CHECK(cudaMemset(flags_.get(), 0, flags_.bytes()));
  }
  /// The slots of the blocks' sums.
  float* partials() { return partials_.get(); }
  /// The flags, one per consumer warp of each block.
  int* flags() { return flags_.get(); }

 private:
  DeviceBuffer<float> partials_{0};
  DeviceBuffer<int> flags_{0};
};

} // namespace cs
