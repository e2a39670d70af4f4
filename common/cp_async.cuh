/// @file cp_async.cuh
/// @brief cp.async: a copy from global into shared memory that does not pass through registers and
/// that the thread does not wait for, grouped and waited for by groups (chapter 11 walks through
/// it). Compute capability 8.0 or later.
#pragma once

#include "shared_address.cuh"

#include <cstdint>

namespace cs {

/// Starts copying kBytes (4, or 16 between 16-byte aligned addresses) from @p from in global memory
/// to @p to in shared memory, and returns without waiting: `cp.async.ca` (4 bytes, through L1) or
/// `cp.async.cg` (16 bytes, L2 only). When @p in_matrix is false nothing is read and the kBytes at
/// @p to are zero-filled (the instruction's source size is 0); the copy is then handed
/// @p fallback, any valid address of the same matrix, so that no address outside it is formed.
template <int kBytes, typename T>
__device__ __forceinline__ void copy_async(T* to, const T* from, bool in_matrix, const T* fallback) {
  static_assert(kBytes == 4 || kBytes == 16, "cp.async copies 4, 8 or 16 bytes; the stages use 4 and 16");
  const unsigned shared_to = shared_address(to);
  const int read_bytes = in_matrix ? kBytes : 0;
  from = in_matrix ? from : fallback;
  if constexpr (kBytes == 16)
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(shared_to), "l"(from),
                 "r"(read_bytes)
                 : "memory");
  else
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(shared_to), "l"(from), "r"(read_bytes)
                 : "memory");
}

/// Starts copying the 16 bytes of a row of a matrix that begin at @p from, its columns col ..
/// col + 16 / sizeof(T) - 1, to @p to in shared memory (16-byte aligned), zeros for the columns at
/// or past @p row_length and for a row outside the matrix (@p row_in_matrix false); @p fallback is
/// any valid address of the matrix, which a copy that reads nothing is handed. kAligned: the row's
/// length is a multiple of 16 bytes and @p from 16-byte aligned, so the 16 bytes are all inside the
/// row or all past it: one 16-byte cp.async. Otherwise element by element: a 4-byte cp.async each
/// (FP32), or for 2-byte elements (bf16, which cp.async cannot copy alone) a load and a store each.
template <bool kAligned, typename T>
__device__ __forceinline__ void copy_chunk_async(T* to, const T* from, bool row_in_matrix, std::int64_t col,
                                                 std::int64_t row_length, const T* fallback) {
  constexpr int kElements = 16 / static_cast<int>(sizeof(T));
  if constexpr (kAligned) {
    copy_async<16>(to, from, row_in_matrix && col < row_length, fallback);
  } else if constexpr (sizeof(T) == 4) {
#pragma unroll
    for (int e = 0; e < kElements; ++e)
      copy_async<4>(to + e, from + e, row_in_matrix && col + e < row_length, fallback);
  } else {
#pragma unroll
    for (int e = 0; e < kElements; ++e) to[e] = row_in_matrix && col + e < row_length ? from[e] : T(0.0f);
  }
}

/// Closes the group of copies this thread has started since its last commit: `cp.async.commit_group`.
__device__ __forceinline__ void commit_copies() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}

/// Waits until at most kPending of this thread's committed groups of copies are still in flight:
/// `cp.async.wait_group`. Only this thread's copies: the others' need a barrier after it.
template <int kPending>
__device__ __forceinline__ void wait_for_copies() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending) : "memory");
}

} // namespace cs
