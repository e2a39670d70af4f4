/// @file tensor_map.cu
/// @brief The driver functions the Hopper stages call, looked up through the runtime.
#include "tensor_map.cuh"

#include "cuda_check.cuh"

#include <cstdio>
#include <cstdlib>

namespace cs {
namespace {

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
