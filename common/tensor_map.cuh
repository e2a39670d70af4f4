/// @file tensor_map.cuh
/// @brief The driver's tensor-map encoder, reached through the CUDA runtime, and a check for the
/// driver calls made through it.
///
/// A tensor map (CUtensorMap, 128 bytes) describes a matrix in global memory to the tensor memory
/// accelerator: where it is, its sizes, its row pitch, the box one copy moves, the swizzle it lands
/// with. Only the driver API encodes one (cuTensorMapEncodeTiled), and the stages link only the
/// runtime: cudaGetDriverEntryPointByVersion hands out the driver's function, so no `-lcuda` is
/// needed. The maps the stages make, and the padded copies of matrices a map cannot take as they
/// are, are in tma_inputs.cuh (chapter 17).
#pragma once

#include "cuda_check.cuh"

#include <cuda.h>
#include <cudaTypedefs.h>

namespace cs {

/// The driver's cuTensorMapEncodeTiled, with the signature of CUDA 12.0 (looked up once, through the
/// runtime). Ends the process with kExitCudaError, naming the function, when the driver has none.
PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder();

/// Ends the process with kExitCudaError when @p result is not CUDA_SUCCESS, printing where the
/// failing driver call was, its text, and the error's name and description (the driver's
/// cuGetErrorName and cuGetErrorString, looked up as the encoder is). Use it through CU_CHECK.
void cu_check(CUresult result, const char* call, const char* file, int line);

} // namespace cs

/// Checks a driver call: `CU_CHECK(cs::tensor_map_encoder()(&map, ...));`, as CUDA_CHECK does a
/// runtime call.
#define CU_CHECK(call) ::cs::cu_check((call), #call, __FILE__, __LINE__)
