/// @file cublas_sgemm.cu
/// @brief Implementation of the cuBLAS SGEMM yardstick.
#include "cublas_sgemm.cuh"

#include "cuda_check.cuh"
#include "device_buffer.cuh"
#include "device_check.cuh"
#include "gpu_timer.cuh"
#include "matrix.hpp"
#include "verify.hpp"

#include <cmath>

namespace cs {

CublasHandle::CublasHandle(cublasMath_t math) {
  CUBLAS_CHECK(cublasCreate(&handle_));
  CUBLAS_CHECK(cublasSetMathMode(handle_, math));
}

CublasHandle::~CublasHandle() {
  cublasDestroy(handle_);
}

Measurement measure_cublas_sgemm(const RunOptions& run, const MatmulShape& shape, const DeviceInfo& device,
                                 const float* d_a, const float* d_b, float* d_c, const HostMatrix& a,
                                 const HostMatrix& b) {
  const CublasHandle cublas;
  const int m = static_cast<int>(shape.m);
  const int n = static_cast<int>(shape.n);
  const int k = static_cast<int>(shape.k);
  const float alpha = 1.0f;
  const float beta = 0.0f;

  // cuBLAS is column-major; the stages store row-major. A row-major r×c matrix, read column-major,
  // is its c×r transpose with the same leading dimension c. So cuBLAS sees our buffers as
  // A^T (k×m, ld k), B^T (n×k, ld n) and C^T (n×m, ld n), and since C^T = (A·B)^T = B^T·A^T, asking
  // it for B^T·A^T (B first, m and n swapped) writes exactly the row-major C = A·B. No transposes
  // are performed: only the reading of the same bytes changes.
  const auto sgemm = [&] {
    CUBLAS_CHECK(
        cublasSgemm(cublas.get(), CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &alpha, d_b, n, d_a, k, &beta, d_c, n));
  };

  const std::size_t c_count = static_cast<std::size_t>(shape.m * shape.n);
  CUDA_CHECK(cudaMemset(d_c, kPoisonByte, c_count * sizeof(float)));
  Measurement result;
  result.name = "cuBLAS";
  result.what = "cublasSgemm, CUBLAS_PEDANTIC_MATH (strict FP32, no TF32)";
  result.is_yardstick = true;
  result.time = time_with_events(run, sgemm);
  result.rate = matmul_gflops(shape, result.time.median_ms);
  result.pct_peak = device.peak_fp32_gflops > 0 ? 100.0 * result.rate / device.peak_fp32_gflops : NAN;
  result.pct_yardstick = 100.0;
  if (run.check != CheckMode::kNone)
    result.check = verify_matmul_on_device(d_c, a, b, shape, run.seed, Accumulation::kFp32, false);
  return result;
}

Measurement measure_cublas_bf16_gemm(const RunOptions& run, const MatmulShape& shape,
                                     const DeviceInfo& device, const __nv_bfloat16* d_a,
                                     const __nv_bfloat16* d_b, float* d_c, const HostMatrix& a,
                                     const HostMatrix& b) {
  const CublasHandle cublas(CUBLAS_DEFAULT_MATH);
  const int m = static_cast<int>(shape.m);
  const int n = static_cast<int>(shape.n);
  const int k = static_cast<int>(shape.k);
  const float alpha = 1.0f;
  const float beta = 0.0f;
  // The same reading of row-major buffers as in measure_cublas_sgemm: C^T = B^T·A^T, column-major.
  const auto gemm = [&] {
    CUBLAS_CHECK(cublasGemmEx(cublas.get(), CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &alpha, d_b, CUDA_R_16BF, n,
                              d_a, CUDA_R_16BF, k, &beta, d_c, CUDA_R_32F, n, CUBLAS_COMPUTE_32F,
                              CUBLAS_GEMM_DEFAULT));
  };
  const std::size_t c_count = static_cast<std::size_t>(shape.m * shape.n);
  CUDA_CHECK(cudaMemset(d_c, kPoisonByte, c_count * sizeof(float)));
  Measurement result;
  result.name = "cuBLAS";
  result.what = "cublasGemmEx: bf16 A and B, FP32 sums (CUBLAS_COMPUTE_32F), FP32 C";
  result.is_yardstick = true;
  result.time = time_with_events(run, gemm);
  result.rate = matmul_gflops(shape, result.time.median_ms);
  result.pct_peak = device.peak_bf16_gflops > 0 ? 100.0 * result.rate / device.peak_bf16_gflops : NAN;
  result.pct_yardstick = 100.0;
  if (run.check != CheckMode::kNone)
    result.check = verify_matmul_on_device(d_c, a, b, shape, run.seed, Accumulation::kTensorCore, false);
  return result;
}

} // namespace cs
