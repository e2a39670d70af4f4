/// @file tma_store.cuh
/// @brief The tensor memory accelerator's store of a box from shared memory to a matrix, the bulk
/// groups that say when a store has read its shared memory and when it is done, and the barrier of
/// the warpgroup that fills the box first (chapter 21 walks through them). Compute capability 9.0.
#pragma once

#include "shared_address.cuh"

#include <cuda.h>

#include <cstdint>

namespace cs {

/// Waits until the 128 threads of consumer warpgroup @p warpgroup (0, 1, ...) have all arrived:
/// named barrier 1 + warpgroup (barrier 0 is __syncthreads'), which the other warpgroups never touch
/// (`bar.sync id, 128`).
__device__ __forceinline__ void sync_warpgroup(int warpgroup) {
  asm volatile("bar.sync %0, 128;\n" ::"r"(1 + warpgroup) : "memory");
}

/// Starts the tensor memory accelerator writing the box at @p from in shared memory (laid out and
/// swizzled as @p map says) to the matrix @p map describes, its first element at column @p col, row
/// @p row; what falls outside the matrix is not written (`cp.async.bulk.tensor.2d.global.shared`).
/// One thread issues it, into its bulk group.
__device__ __forceinline__ void store_box(const CUtensorMap& map, const void* from, int col, int row) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];\n" ::"l"(
                   reinterpret_cast<std::uint64_t>(&map)),
               "r"(shared_address(from)), "r"(col), "r"(row)
               : "memory");
}

/// Closes this thread's TMA stores since the last commit into one bulk group
/// (`cp.async.bulk.commit_group`).
__device__ __forceinline__ void commit_stores() {
  asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
}

/// Waits until at most kPending of this thread's bulk groups have still to read their shared memory
/// (`cp.async.bulk.wait_group.read`): the older ones' buffers may be written again (their writes to
/// C may still be on their way).
template <int kPending>
__device__ __forceinline__ void wait_stores_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(kPending) : "memory");
}

/// Waits until every bulk group of this thread is complete, its writes to C done
/// (`cp.async.bulk.wait_group 0`): before the block ends, so that no store is still reading shared
/// memory the block gives back.
__device__ __forceinline__ void wait_stores_done() {
  asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory");
}

} // namespace cs
