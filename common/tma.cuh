/// @file tma.cuh
/// @brief The tensor memory accelerator's copy of a box of a matrix into shared memory, one
/// instruction issued by one thread, its bytes counted on an mbarrier (chapter 17 walks through
/// it; the tensor maps it reads are made on the host: tensor_map.cuh). Compute capability 9.0.
#pragma once

#include "shared_address.cuh"

#include <cuda.h>

#include <cstdint>

namespace cs {

/// Starts the tensor memory accelerator copying the box of the matrix @p map describes whose first
/// element is at column @p col, row @p row (past the matrix's edges too: what lies outside is zero)
/// to @p to in shared memory, laid out and swizzled as the map says; the bytes count on @p barrier
/// as they land (`cp.async.bulk.tensor.2d...mbarrier::complete_tx::bytes`). One thread issues it;
/// the map must be a kernel parameter (__grid_constant__), or in global or constant memory.
__device__ __forceinline__ void copy_box(void* to, const CUtensorMap& map, int col, int row,
                                         std::uint64_t* barrier) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3}], [%4];\n" ::"r"(shared_address(to)),
      "l"(reinterpret_cast<std::uint64_t>(&map)), "r"(col), "r"(row), "r"(shared_address(barrier))
      : "memory");
}

} // namespace cs
