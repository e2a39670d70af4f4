/// @file cublas_sgemm.cuh
/// @brief The yardsticks of the matrix-multiply stages, timed on the stage's own device buffers in
/// the same run: cuBLAS SGEMM in strict FP32 for the FP32 stages, and cuBLAS with bf16 A and B, FP32
/// sums and an FP32 C (cublasGemmEx) for the tensor-core stages.
///
/// cuBLAS is the yardstick, not the answer: every stage verifies its kernel against the CPU
/// reference accumulated in double, and the cuBLAS result is checked the same way (sampled), so
/// the figure it sets is known to come from a right answer.
#pragma once

#include "cli.hpp"
#include "cuda_check.cuh"
#include "device_info.cuh"
#include "exit_codes.hpp"
#include "matrix.hpp"
#include "report.hpp"

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace cs {

/// A cuBLAS handle that lives as long as its scope, set to the math mode it is given.
///
/// For the FP32 stages, CUBLAS_PEDANTIC_MATH (the default here) forbids every shortcut (no TF32
/// tensor cores, no reduced-precision reductions): cuBLAS then does the same FP32 multiply-adds the
/// stages do, so the comparison is fair. TF32 would be several times faster on a Hopper GPU, and
/// wrong by the stages' tolerance. The bf16 stages' yardstick uses CUBLAS_DEFAULT_MATH, which lets
/// bf16 products go to the tensor cores as the stages' do.
class CublasHandle {
 public:
  /// Creates the handle (on the current device) and sets @p math.
  explicit CublasHandle(cublasMath_t math = CUBLAS_PEDANTIC_MATH);
  ~CublasHandle();
  CublasHandle(const CublasHandle&) = delete;
  CublasHandle& operator=(const CublasHandle&) = delete;

  /// The handle to pass to cuBLAS calls.
  cublasHandle_t get() const { return handle_; }

 private:
  cublasHandle_t handle_ = nullptr;
};

/// Times cuBLAS SGEMM computing C = A·B on the stage's row-major device buffers (A m×k in
/// @p d_a, B k×n in @p d_b, C m×n in @p d_c) with time_with_events and the same @p run options
/// as the stage (warm-up, repetitions, median).
///
/// C is poisoned first; unless @p run.check is kNone, the elements of the result the sampled check
/// picks (sampled_elements) are gathered on the device, copied back and checked against the double
/// reference of the host copies @p a and @p b (verify_matmul_elements: cheap at any size; the
/// yardstick's C is not scanned whole, as the stage's is). Overwrites @p d_c. Returns a
/// Measurement named "cuBLAS", marked is_yardstick, with its GFLOP/s and percentage of @p device's FP32 peak.
Measurement measure_cublas_sgemm(const RunOptions& run, const MatmulShape& shape, const DeviceInfo& device,
                                 const float* d_a, const float* d_b, float* d_c, const HostMatrix& a,
                                 const HostMatrix& b);

/// Times cuBLAS computing C = A·B from bf16 A and B with FP32 sums into an FP32 C (cublasGemmEx,
/// CUBLAS_COMPUTE_32F, tensor cores allowed) on the stage's row-major device buffers, as
/// measure_cublas_sgemm() does: same @p run options, C poisoned first, the sampled elements of the
/// result copied back and checked against the double reference of @p a and @p b (the same values, as
/// floats) with the tensor-core tolerance. Returns a Measurement named "cuBLAS", marked is_yardstick, with
/// its GFLOP/s and percentage of @p device's dense bf16 peak.
Measurement measure_cublas_bf16_gemm(const RunOptions& run, const MatmulShape& shape,
                                     const DeviceInfo& device, const __nv_bfloat16* d_a,
                                     const __nv_bfloat16* d_b, float* d_c, const HostMatrix& a,
                                     const HostMatrix& b);

} // namespace cs
