/// @file tensor_map.cuh
/// @brief The driver's tensor-map encoder, reached through the CUDA runtime, and a check for the
/// driver calls made through it.
///
/// A tensor map (CUtensorMap, 128 bytes) describes a matrix in global memory to the tensor memory
/// accelerator: where it is, its sizes, its row pitch, the box one copy moves, the swizzle it lands
/// with. Only the driver API encodes one (cuTensorMapEncodeTiled), and the stages link only the
/// runtime: cudaGetDriverEntryPointByVersion hands out the driver's function, so no `-lcuda` is
/// needed. How a stage fills a map in is that stage's lesson (16_tma).
///
/// A map also needs the matrix's address and every row pitch to be multiples of 16 bytes, which a
/// bf16 matrix whose rows have a length that is not a multiple of 8 does not have: padded_copy()
/// makes the copy a map can take.
#pragma once

#include "device_buffer.cuh"

#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_bf16.h>

#include <cstdint>

namespace cs {

/// The driver's cuTensorMapEncodeTiled, with the signature of CUDA 12.0 (looked up once, through the
/// runtime). Ends the process with kExitCudaError, naming the function, when the driver has none.
PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder();

/// Ends the process with kExitCudaError when @p result is not CUDA_SUCCESS, printing where the
/// failing driver call was, its text, and the error's name and description (the driver's
/// cuGetErrorName and cuGetErrorString, looked up as the encoder is). Use it through CU_CHECK.
void cu_check(CUresult result, const char* call, const char* file, int line);

/// A copy of the row-major bf16 matrix @p matrix (@p rows x @p cols) whose rows are @p pitch
/// elements apart (a multiple of 8: 16 bytes), which a tensor map can take, made in @p padded
/// (allocated the first time, then kept) by a kernel in the stream order of the kernel that reads
/// it, so a timed run includes the copy. The padding past @p cols is zero, and a map whose rows end
/// at @p cols never reads it.
const __nv_bfloat16* padded_copy(const __nv_bfloat16* matrix, std::int64_t rows, std::int64_t cols,
                                 std::int64_t pitch, DeviceBuffer<__nv_bfloat16>& padded);

} // namespace cs

/// Checks a driver call: `CU_CHECK(cs::tensor_map_encoder()(&map, ...));`, as CUDA_CHECK does a
/// runtime call.
#define CU_CHECK(call) ::cs::cu_check((call), #call, __FILE__, __LINE__)
