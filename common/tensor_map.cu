/// @file tensor_map.cu
/// @brief The driver functions the Hopper stages call, looked up through the runtime, and the padded
/// copy of a matrix a tensor map cannot take.
#include "tensor_map.cuh"

#include "cuda_check.cuh"
#include "matmul_flow.cuh"

#include <cstdio>
#include <cstdlib>

namespace cs {
namespace {

/// Copies a row-major bf16 matrix of @p rows x @p cols from @p from into @p to, whose rows are
/// @p pitch elements apart (a multiple of 8, @p to 16-byte aligned): a thread per 8 elements of
/// @p to, eight 2-byte loads and one 16-byte store, zeros in the padding past cols.
__global__ void pad_rows(const __nv_bfloat16* from, __nv_bfloat16* to, std::int64_t rows, std::int64_t cols,
                         std::int64_t pitch) {
  const std::int64_t chunk = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::int64_t row = chunk / (pitch / 8), col = chunk % (pitch / 8) * 8;
  if (row >= rows) return;
  alignas(16) __nv_bfloat16 eight[8];
#pragma unroll
  for (int e = 0; e < 8; ++e) eight[e] = col + e < cols ? from[row * cols + col + e] : __float2bfloat16(0.0f);
  *reinterpret_cast<uint4*>(to + row * pitch + col) = *reinterpret_cast<const uint4*>(eight);
}

/// The driver's function @p name, as it was in CUDA 12.0, or nullptr when the driver has none.
void* driver_function(const char* name) {
  void* function = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  CUDA_CHECK(cudaGetDriverEntryPointByVersion(name, &function, 12000, cudaEnableDefault, &found));
  return found == cudaDriverEntryPointSuccess ? function : nullptr;
}

} // namespace

PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder() {
  static const auto encode =
      reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(driver_function("cuTensorMapEncodeTiled"));
  if (encode == nullptr) {
    std::fprintf(
        stderr, "error: the CUDA driver has no cuTensorMapEncodeTiled (tensor maps need a CUDA 12 driver)\n");
    std::exit(kExitCudaError);
  }
  return encode;
}

const __nv_bfloat16* padded_copy(const __nv_bfloat16* matrix, std::int64_t rows, std::int64_t cols,
                                 std::int64_t pitch, DeviceBuffer<__nv_bfloat16>& padded) {
  if (padded.size() != static_cast<std::size_t>(rows * pitch))
    padded = DeviceBuffer<__nv_bfloat16>(static_cast<std::size_t>(rows * pitch));
  pad_rows<<<grid_of((rows * pitch / 8 + 255) / 256), 256>>>(matrix, padded.get(), rows, cols, pitch);
  CUDA_CHECK_LAUNCH();
  return padded.get();
}

void cu_check(CUresult result, const char* call, const char* file, int line) {
  if (result == CUDA_SUCCESS) return;
  static const auto error_name =
      reinterpret_cast<PFN_cuGetErrorName_v6000>(driver_function("cuGetErrorName"));
  static const auto error_string =
      reinterpret_cast<PFN_cuGetErrorString_v6000>(driver_function("cuGetErrorString"));
  const char* name = "unknown error";
  const char* text = "no description";
  if (error_name) error_name(result, &name);
  if (error_string) error_string(result, &text);
  std::fprintf(stderr, "%s:%d: CUDA driver error in %s: %s (%s)\n", file, line, call, name, text);
  std::exit(kExitCudaError);
}

} // namespace cs
