#pragma once
/// @file
/// @brief Hopper's wgmma.mma_async for bf16 A and B with FP32 sums, B read "transposed" (its rows
/// along N), and what goes with it: the matrix descriptors that tell the tensor cores how a tile
/// lies in shared memory, the fences, and the commits and waits of the instruction's groups
/// (chapter 15 walks through them; chapter 16 waits for all but the newest group; chapter 20 pins
/// the sums after the last wait).
///
/// wgmma exists on compute capability 9.0 alone, in code built for the sm_90a target: include this
/// only in a stage built that way (cs_require_architecture(<target> 90a)).

#include <cuda_bf16.h>

#include <cstdint>

namespace cs {

/// A wgmma matrix descriptor: where a tile of bf16 in shared memory starts and how the tensor core
/// walks it, in 64 bits. The tile is made of 8-row groups of 128-byte rows stored with the 128-byte
/// swizzle (swizzle.cuh); @p group_bytes apart from one group to the next (bits 32-45, in units of
/// 16 bytes), @p stripe_bytes apart from one 64-column stripe to the next (bits 16-29: B's tile, whose
/// 128-byte rows run along N, is read across stripes; A's 16 columns lie inside one row, and the
/// field is not used: 16 by convention), the start address in bits 0-13 and the swizzle mode in bits
/// 62-63 (1: 128 bytes). The swizzle is applied to the address bits, so every tile starts on a
/// 1024-byte boundary (base offset 0, bits 49-51).
__device__ __forceinline__ std::uint64_t matrix_descriptor(const __nv_bfloat16* tile, int stripe_bytes,
                                                           int group_bytes) {
  const auto address = static_cast<std::uint64_t>(__cvta_generic_to_shared(tile));
  return (address & 0x3FFFF) >> 4 | static_cast<std::uint64_t>(stripe_bytes >> 4) << 16 |
         static_cast<std::uint64_t>(group_bytes >> 4) << 32 | 1ull << 62;
}

/// Orders this thread's earlier writes to shared memory (plain stores and cp.async copies, made
/// through the "generic proxy") before later reads of it through the "async proxy" (the tensor
/// cores' wgmma, the TMA's stores): `fence.proxy.async.shared::cta`. A write one proxy made is not
/// promised to be seen by the other without it. Every thread that wrote runs it, before the
/// barrier that hands the memory over.
__device__ __forceinline__ void fence_for_async_proxy() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

/// Makes this thread's earlier reads and writes of the registers a wgmma accumulates into ordered
/// before the next wgmma (`wgmma.fence`): every thread of the warpgroup, before the first wgmma of
/// a batch.
__device__ __forceinline__ void fence_sums() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}

/// Closes the batch of wgmma this warpgroup has issued since its last commit into one group
/// (`wgmma.commit_group`).
__device__ __forceinline__ void commit_products() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}

/// Waits until at most kPending of this warpgroup's committed groups of wgmma are still running
/// (`wgmma.wait_group`): then the older groups have read their tiles and written their sums.
template <int kPending>
__device__ __forceinline__ void wait_for_products() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(kPending) : "memory");
}

/// Pins the registers of @p sums at this point of the program: an empty instruction that reads and
/// writes each of them, so the compiler moves no other read of them above it. Called right after
/// the wait that sees the last group finish, it tells the compiler what the hardware needs, that
/// nothing but wgmma touches the sums while a group may still write them; without it, ptxas may
/// find a later read (a shuffle, say) it cannot place safely, and then runs every wgmma of the
/// kernel serialized ("C7514: wgmma.mma_async instructions are serialized").
template <int kCount>
__device__ __forceinline__ void pin_sums(float (&sums)[kCount]) {
#pragma unroll
  for (int i = 0; i < kCount; ++i) asm volatile("" : "+f"(sums[i])::"memory");
}

/// sums += A·B for a 64 x kN piece of C, issued by a whole warpgroup (4 consecutive warps, the first
/// a multiple of 4), asynchronously: wgmma.mma_async.sync.aligned.m64nNk16.f32.bf16.bf16.
///
/// @p a describes A's 64 x 16 (its rows along K) and @p b B's 16 x kN (its rows along N: the
/// instruction's "transpose B" flag is set), both in shared memory (64-bit matrix descriptors: where
/// the tile starts, the strides of its 8-row groups, its swizzle). Warp w of the warpgroup holds rows
/// 16w .. 16w + 15 of the piece; with g = lane / 4 and q = lane % 4, a lane holds for each 8 columns j
///   sums[4j + 0], sums[4j + 1] = C[16w + g][8j + 2q], C[16w + g][8j + 2q + 1]
///   sums[4j + 2], sums[4j + 3] = C[16w + g + 8][8j + 2q], C[16w + g + 8][8j + 2q + 1]
/// (mma.sync's 16 x 8 piece, kN / 8 of them side by side). The instruction returns before it has
/// read the tiles or written the sums: until a wgmma.wait_group has seen its group finish, neither
/// the tiles nor @p sums may be touched. N = 192 (96 sums a thread) is stage 26's, for tiles 192
/// columns wide.
template <int kN>
__device__ __forceinline__ void wgmma_64xNx16(float (&sums)[kN / 2], std::uint64_t a, std::uint64_t b) {
  static_assert(kN == 64 || kN == 128 || kN == 192 || kN == 256, "written out for N = 64, 128, 192 and 256");
  // The operands: the kN / 2 sums (read and written), the two descriptors, and 1 for "scale-d", the
  // predicate that makes it D = A·B + D rather than D = A·B. The four immediates: A and B not negated
  // (1, 1), A not transposed (0), B transposed (1).
  // clang-format off
  if constexpr (kN == 64)
    asm volatile(
        "{\n.reg .pred accumulate;\nsetp.ne.b32 accumulate, %34, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
        "}, %32, %33, accumulate, 1, 1, 0, 1;\n}\n"
        : "+f"(sums[0]), "+f"(sums[1]), "+f"(sums[2]), "+f"(sums[3]), "+f"(sums[4]),
          "+f"(sums[5]), "+f"(sums[6]), "+f"(sums[7]), "+f"(sums[8]), "+f"(sums[9]),
          "+f"(sums[10]), "+f"(sums[11]), "+f"(sums[12]), "+f"(sums[13]), "+f"(sums[14]),
          "+f"(sums[15]), "+f"(sums[16]), "+f"(sums[17]), "+f"(sums[18]), "+f"(sums[19]),
          "+f"(sums[20]), "+f"(sums[21]), "+f"(sums[22]), "+f"(sums[23]), "+f"(sums[24]),
          "+f"(sums[25]), "+f"(sums[26]), "+f"(sums[27]), "+f"(sums[28]), "+f"(sums[29]),
          "+f"(sums[30]), "+f"(sums[31])
        : "l"(a), "l"(b), "r"(1));
  else if constexpr (kN == 128)
    asm volatile(
        "{\n.reg .pred accumulate;\nsetp.ne.b32 accumulate, %66, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
        "}, %64, %65, accumulate, 1, 1, 0, 1;\n}\n"
        : "+f"(sums[0]), "+f"(sums[1]), "+f"(sums[2]), "+f"(sums[3]), "+f"(sums[4]),
          "+f"(sums[5]), "+f"(sums[6]), "+f"(sums[7]), "+f"(sums[8]), "+f"(sums[9]),
          "+f"(sums[10]), "+f"(sums[11]), "+f"(sums[12]), "+f"(sums[13]), "+f"(sums[14]),
          "+f"(sums[15]), "+f"(sums[16]), "+f"(sums[17]), "+f"(sums[18]), "+f"(sums[19]),
          "+f"(sums[20]), "+f"(sums[21]), "+f"(sums[22]), "+f"(sums[23]), "+f"(sums[24]),
          "+f"(sums[25]), "+f"(sums[26]), "+f"(sums[27]), "+f"(sums[28]), "+f"(sums[29]),
          "+f"(sums[30]), "+f"(sums[31]), "+f"(sums[32]), "+f"(sums[33]), "+f"(sums[34]),
          "+f"(sums[35]), "+f"(sums[36]), "+f"(sums[37]), "+f"(sums[38]), "+f"(sums[39]),
          "+f"(sums[40]), "+f"(sums[41]), "+f"(sums[42]), "+f"(sums[43]), "+f"(sums[44]),
          "+f"(sums[45]), "+f"(sums[46]), "+f"(sums[47]), "+f"(sums[48]), "+f"(sums[49]),
          "+f"(sums[50]), "+f"(sums[51]), "+f"(sums[52]), "+f"(sums[53]), "+f"(sums[54]),
          "+f"(sums[55]), "+f"(sums[56]), "+f"(sums[57]), "+f"(sums[58]), "+f"(sums[59]),
          "+f"(sums[60]), "+f"(sums[61]), "+f"(sums[62]), "+f"(sums[63])
        : "l"(a), "l"(b), "r"(1));
  else if constexpr (kN == 192)
    asm volatile(
        "{\n.reg .pred accumulate;\nsetp.ne.b32 accumulate, %98, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n192k16.f32.bf16.bf16 {"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
        "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
        "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95"
        "}, %96, %97, accumulate, 1, 1, 0, 1;\n}\n"
        : "+f"(sums[0]), "+f"(sums[1]), "+f"(sums[2]), "+f"(sums[3]), "+f"(sums[4]),
          "+f"(sums[5]), "+f"(sums[6]), "+f"(sums[7]), "+f"(sums[8]), "+f"(sums[9]),
          "+f"(sums[10]), "+f"(sums[11]), "+f"(sums[12]), "+f"(sums[13]), "+f"(sums[14]),
          "+f"(sums[15]), "+f"(sums[16]), "+f"(sums[17]), "+f"(sums[18]), "+f"(sums[19]),
          "+f"(sums[20]), "+f"(sums[21]), "+f"(sums[22]), "+f"(sums[23]), "+f"(sums[24]),
          "+f"(sums[25]), "+f"(sums[26]), "+f"(sums[27]), "+f"(sums[28]), "+f"(sums[29]),
          "+f"(sums[30]), "+f"(sums[31]), "+f"(sums[32]), "+f"(sums[33]), "+f"(sums[34]),
          "+f"(sums[35]), "+f"(sums[36]), "+f"(sums[37]), "+f"(sums[38]), "+f"(sums[39]),
          "+f"(sums[40]), "+f"(sums[41]), "+f"(sums[42]), "+f"(sums[43]), "+f"(sums[44]),
          "+f"(sums[45]), "+f"(sums[46]), "+f"(sums[47]), "+f"(sums[48]), "+f"(sums[49]),
          "+f"(sums[50]), "+f"(sums[51]), "+f"(sums[52]), "+f"(sums[53]), "+f"(sums[54]),
          "+f"(sums[55]), "+f"(sums[56]), "+f"(sums[57]), "+f"(sums[58]), "+f"(sums[59]),
          "+f"(sums[60]), "+f"(sums[61]), "+f"(sums[62]), "+f"(sums[63]), "+f"(sums[64]),
          "+f"(sums[65]), "+f"(sums[66]), "+f"(sums[67]), "+f"(sums[68]), "+f"(sums[69]),
          "+f"(sums[70]), "+f"(sums[71]), "+f"(sums[72]), "+f"(sums[73]), "+f"(sums[74]),
          "+f"(sums[75]), "+f"(sums[76]), "+f"(sums[77]), "+f"(sums[78]), "+f"(sums[79]),
          "+f"(sums[80]), "+f"(sums[81]), "+f"(sums[82]), "+f"(sums[83]), "+f"(sums[84]),
          "+f"(sums[85]), "+f"(sums[86]), "+f"(sums[87]), "+f"(sums[88]), "+f"(sums[89]),
          "+f"(sums[90]), "+f"(sums[91]), "+f"(sums[92]), "+f"(sums[93]), "+f"(sums[94]),
          "+f"(sums[95])
        : "l"(a), "l"(b), "r"(1));
  else
    asm volatile(
        "{\n.reg .pred accumulate;\nsetp.ne.b32 accumulate, %130, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
        "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
        "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "
        "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, "
        "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
        "}, %128, %129, accumulate, 1, 1, 0, 1;\n}\n"
        : "+f"(sums[0]), "+f"(sums[1]), "+f"(sums[2]), "+f"(sums[3]), "+f"(sums[4]),
          "+f"(sums[5]), "+f"(sums[6]), "+f"(sums[7]), "+f"(sums[8]), "+f"(sums[9]),
          "+f"(sums[10]), "+f"(sums[11]), "+f"(sums[12]), "+f"(sums[13]), "+f"(sums[14]),
          "+f"(sums[15]), "+f"(sums[16]), "+f"(sums[17]), "+f"(sums[18]), "+f"(sums[19]),
          "+f"(sums[20]), "+f"(sums[21]), "+f"(sums[22]), "+f"(sums[23]), "+f"(sums[24]),
          "+f"(sums[25]), "+f"(sums[26]), "+f"(sums[27]), "+f"(sums[28]), "+f"(sums[29]),
          "+f"(sums[30]), "+f"(sums[31]), "+f"(sums[32]), "+f"(sums[33]), "+f"(sums[34]),
          "+f"(sums[35]), "+f"(sums[36]), "+f"(sums[37]), "+f"(sums[38]), "+f"(sums[39]),
          "+f"(sums[40]), "+f"(sums[41]), "+f"(sums[42]), "+f"(sums[43]), "+f"(sums[44]),
          "+f"(sums[45]), "+f"(sums[46]), "+f"(sums[47]), "+f"(sums[48]), "+f"(sums[49]),
          "+f"(sums[50]), "+f"(sums[51]), "+f"(sums[52]), "+f"(sums[53]), "+f"(sums[54]),
          "+f"(sums[55]), "+f"(sums[56]), "+f"(sums[57]), "+f"(sums[58]), "+f"(sums[59]),
          "+f"(sums[60]), "+f"(sums[61]), "+f"(sums[62]), "+f"(sums[63]), "+f"(sums[64]),
          "+f"(sums[65]), "+f"(sums[66]), "+f"(sums[67]), "+f"(sums[68]), "+f"(sums[69]),
          "+f"(sums[70]), "+f"(sums[71]), "+f"(sums[72]), "+f"(sums[73]), "+f"(sums[74]),
          "+f"(sums[75]), "+f"(sums[76]), "+f"(sums[77]), "+f"(sums[78]), "+f"(sums[79]),
          "+f"(sums[80]), "+f"(sums[81]), "+f"(sums[82]), "+f"(sums[83]), "+f"(sums[84]),
          "+f"(sums[85]), "+f"(sums[86]), "+f"(sums[87]), "+f"(sums[88]), "+f"(sums[89]),
          "+f"(sums[90]), "+f"(sums[91]), "+f"(sums[92]), "+f"(sums[93]), "+f"(sums[94]),
          "+f"(sums[95]), "+f"(sums[96]), "+f"(sums[97]), "+f"(sums[98]), "+f"(sums[99]),
          "+f"(sums[100]), "+f"(sums[101]), "+f"(sums[102]), "+f"(sums[103]), "+f"(sums[104]),
          "+f"(sums[105]), "+f"(sums[106]), "+f"(sums[107]), "+f"(sums[108]), "+f"(sums[109]),
          "+f"(sums[110]), "+f"(sums[111]), "+f"(sums[112]), "+f"(sums[113]), "+f"(sums[114]),
          "+f"(sums[115]), "+f"(sums[116]), "+f"(sums[117]), "+f"(sums[118]), "+f"(sums[119]),
          "+f"(sums[120]), "+f"(sums[121]), "+f"(sums[122]), "+f"(sums[123]), "+f"(sums[124]),
          "+f"(sums[125]), "+f"(sums[126]), "+f"(sums[127])
        : "l"(a), "l"(b), "r"(1));
  // clang-format on
}

} // namespace cs
