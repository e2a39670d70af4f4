/// @file bf16.cuh
/// @brief Reading bfloat16 from shared memory as floats: a pair or a quad of neighbours in one read,
/// each element widened to FP32 (chapter 12 walks through it). Any compute capability.
#pragma once

#include <cuda_bf16.h>

namespace cs {

/// The two bf16 at @p pair (4-byte aligned) as floats, x the lower address: one 32-bit read, and
/// each widened exactly (a bf16 is the top 16 bits of the float it stands for).
__device__ __forceinline__ float2 widen_pair(const __nv_bfloat16* pair) {
  return __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(pair));
}

/// The four bf16 at @p quad (8-byte aligned) as floats, x the lowest address: one 64-bit read.
__device__ __forceinline__ float4 widen_quad(const __nv_bfloat16* quad) {
  const uint2 bits = *reinterpret_cast<const uint2*>(quad);
  const float2 low = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&bits.x));
  const float2 high = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&bits.y));
  return make_float4(low.x, low.y, high.x, high.y);
}

} // namespace cs
