/// @file mbarrier.cuh
/// @brief The mbarrier: a barrier object in shared memory whose phase completes when enough
/// threads have arrived and every byte they said to expect has landed, and the waits on its phases
/// (chapter 17 walks through it; chapter 18 adds the plain arrival). Compute capability 9.0 for
/// the byte counts (expect_tx).
#pragma once

#include "shared_address.cuh"

#include <cstdint>

namespace cs {

/// Sets up the mbarrier at @p barrier (8 bytes of shared memory): its phase completes when
/// @p arrivals threads have arrived and every byte they said to expect has landed; then the next
/// phase begins (`mbarrier.init`). One thread, before anyone uses it.
__device__ __forceinline__ void init_barrier(std::uint64_t* barrier, int arrivals) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(shared_address(barrier)), "r"(arrivals)
               : "memory");
}

/// Makes the barriers' initialisation visible to the tensor memory accelerator, which counts bytes
/// on them through the "async proxy" (`fence.mbarrier_init`): after init_barrier, before the block
/// barrier that lets the barriers be used.
__device__ __forceinline__ void fence_barrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}

/// Arrives on @p barrier and tells it that @p bytes more are to land in its current phase
/// (`mbarrier.arrive.expect_tx`).
__device__ __forceinline__ void arrive_expecting(std::uint64_t* barrier, int bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(shared_address(barrier)),
               "r"(bytes)
               : "memory");
}

/// Arrives on @p barrier (one of the arrivals its phase waits for), expecting no bytes
/// (`mbarrier.arrive`).
__device__ __forceinline__ void arrive(std::uint64_t* barrier) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(shared_address(barrier)) : "memory");
}

/// Waits until the phase of @p barrier whose parity is @p phase (0 or 1: its 1st, 3rd, ... phase
/// or its 2nd, 4th, ...) has completed (`mbarrier.try_wait.parity`). try_wait returns false after
/// a while if not; then again. On a fresh barrier the phase before the first counts as completed:
/// a wait for parity 1 returns at once.
__device__ __forceinline__ void wait_for_phase(std::uint64_t* barrier, int phase) {
  unsigned done = 0;
  while (!done)
    asm volatile(
        "{\n.reg .pred done;\n"
        "mbarrier.try_wait.parity.shared::cta.b64 done, [%1], %2;\n"
        "selp.u32 %0, 1, 0, done;\n}\n"
        : "=r"(done)
        : "r"(shared_address(barrier)), "r"(phase)
        : "memory");
}

} // namespace cs
