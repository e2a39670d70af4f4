/// @file thread_tile.cuh
/// @brief How many blocks of a thread-tiled kernel must fit on an SM at once: the second argument
/// of its __launch_bounds__, which caps a thread's registers (chapter 11 walks through it).
#pragma once

namespace cs {

/// Blocks of 256 threads that must fit on an SM at once (__launch_bounds__), for a thread tile of
/// @p thread_m × @p thread_n: two when it is at most 64 floats, which caps a thread at
/// 65536 / 512 = 128 registers; one otherwise, which lets a thread with 128 sums have up to 255.
constexpr int min_blocks_per_sm(int thread_m, int thread_n) {
  return thread_m * thread_n <= 64 ? 2 : 1;
}

} // namespace cs
