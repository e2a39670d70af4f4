/// @file registers.cuh
/// @brief setmaxnreg: a warpgroup gives registers back or takes more, so that a producer that only
/// issues copies keeps few and the consumers that hold the sums get the rest (chapter 18 walks
/// through it). sm_90a code only, and only in a kernel whose register count is capped at entry
/// (__launch_bounds__(threads, 1)).
#pragma once

namespace cs {

/// Registers per thread a launch of @p threads threads per block reserves at one block per SM: the
/// most of the SM's 65536 that it allows, in steps of 8, and at most 248.
__host__ __device__ constexpr int launch_registers(int threads) {
  return 65536 / threads / 8 * 8 > 248 ? 248 : 65536 / threads / 8 * 8;
}

/// Registers per thread each of @p consumers warpgroups can take once one producer warpgroup has
/// come down to @p producer_registers, in a block of consumers + 1 warpgroups: the rest of the
/// block's share, in steps of 8, and at most 240.
__host__ __device__ constexpr int consumer_registers(int consumers, int producer_registers) {
  const int threads = (consumers + 1) * 128;
  const int share =
      (launch_registers(threads) * threads - producer_registers * 128) / (consumers * 128) / 8 * 8;
  return share > 240 ? 240 : share;
}

/// Gives back registers: every thread of this warpgroup keeps kRegisters (a multiple of 8 in
/// [24, 256]) (`setmaxnreg.dec`). Executed by all four warps of the warpgroup.
template <int kRegisters>
__device__ __forceinline__ void release_registers() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(kRegisters));
}

/// Takes registers: every thread of this warpgroup may use kRegisters (a multiple of 8 in
/// [24, 256]), once the other warpgroups have given enough back (`setmaxnreg.inc`). All four warps
/// of the warpgroup.
template <int kRegisters>
__device__ __forceinline__ void claim_registers() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(kRegisters));
}

} // namespace cs
