/// @file shared_address.cuh
/// @brief The 32-bit shared-memory address that the inline-PTX wrappers hand their instructions.
///
/// A pointer into shared memory, as C++ holds it, is a 64-bit generic address. Instructions that
/// name the shared state space (`cp.async`, `ldmatrix`, `mbarrier`, the TMA's copies) take the
/// address inside that space, 32 bits: __cvta_generic_to_shared converts one into the other.
#pragma once

namespace cs {

/// The address of @p pointer (which points into shared memory) in the shared state space.
__device__ __forceinline__ unsigned shared_address(const void* pointer) {
  return static_cast<unsigned>(__cvta_generic_to_shared(pointer));
}

} // namespace cs
