/// @file cuda_check.cuh
/// @brief Checking every CUDA and cuBLAS call and every kernel launch.
#pragma once

#include "exit_codes.hpp"

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>

namespace cs {

/// Ends the process with kExitCudaError when @p error is not cudaSuccess, printing where the
/// failing call was, its text, and the error's name and description. Use it through CUDA_CHECK.
inline void cuda_check(cudaError_t error, const char* call, const char* file, int line) {
  if (error == cudaSuccess) return;
  std::fprintf(stderr, "%s:%d: CUDA error in %s: %s (%s)\n", file, line, call, cudaGetErrorName(error),
               cudaGetErrorString(error));
  std::exit(kExitCudaError);
}

/// Checks the kernel launch just made. A launch returns no error code: a bad configuration
/// (too many threads, too much shared memory) shows up in cudaGetLastError(), and a fault inside
/// the kernel only when the host next waits for the device. Debug builds (no NDEBUG) therefore
/// also synchronize here, so a failing kernel is reported at its own launch; release builds do
/// not, so timing loops are not serialized.
inline void check_launch(const char* file, int line) {
  cuda_check(cudaGetLastError(), "kernel launch", file, line);
#ifndef NDEBUG
  cuda_check(cudaDeviceSynchronize(), "kernel execution (debug sync)", file, line);
#endif
}

/// Ends the process with kExitCudaError when @p status is not CUBLAS_STATUS_SUCCESS, printing
/// where the failing call was, its text and the status name. Use it through CUBLAS_CHECK.
inline void cublas_check(cublasStatus_t status, const char* call, const char* file, int line) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  std::fprintf(stderr, "%s:%d: cuBLAS error in %s: %s (%s)\n", file, line, call, cublasGetStatusName(status),
               cublasGetStatusString(status));
  std::exit(kExitCudaError);
}

} // namespace cs

/// Checks a CUDA runtime call: `CUDA_CHECK(cudaMalloc(&p, bytes));`. A macro, because only a
/// macro can capture the call's text, file and line.
#define CUDA_CHECK(call) ::cs::cuda_check((call), #call, __FILE__, __LINE__)

/// Checks the kernel launch on the line before: `kernel<<<grid, block>>>(...); CUDA_CHECK_LAUNCH();`
#define CUDA_CHECK_LAUNCH() ::cs::check_launch(__FILE__, __LINE__)

/// Checks a cuBLAS call: `CUBLAS_CHECK(cublasSgemm(...));`. A macro, like CUDA_CHECK, because
/// only a macro can capture the call's text, file and line.
#define CUBLAS_CHECK(call) ::cs::cublas_check((call), #call, __FILE__, __LINE__)
