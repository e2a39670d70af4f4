/// @file cublas_sgemm.cuh
/// @brief The yardstick of the matrix-multiply stages: cuBLAS SGEMM in strict FP32, timed on the
/// stage's own device buffers in the same run.
///
/// cuBLAS is the yardstick, not the answer: every stage verifies its kernel against the CPU
/// reference accumulated in double, and the cuBLAS result is checked the same way (sampled), so
/// the figure it sets is known to come from a right answer.
#pragma once

#include "cli.hpp"
#include "cuda_check.cuh"
#include "device_info.cuh"
#include "exit_codes.hpp"
#include "report.hpp"

#include <cublas_v2.h>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace cs {

/// A cuBLAS handle that lives as long as its scope, set to strict FP32 arithmetic.
///
/// CUBLAS_PEDANTIC_MATH forbids every shortcut (no TF32 tensor cores, no reduced-precision
/// reductions): cuBLAS then does the same FP32 multiply-adds the stages do, so the comparison is
/// fair. TF32 would be several times faster on a Hopper GPU, and wrong by the stages' tolerance.
class CublasHandle {
 public:
  /// Creates the handle (on the current device) and sets CUBLAS_PEDANTIC_MATH.
  CublasHandle();
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
/// C is poisoned first; unless @p run.check is kNone, the result is copied back and checked
/// against the double reference of the host copies @p a and @p b with the sampled check (cheap at
/// any size). Overwrites @p d_c. Returns a Measurement named "cuBLAS", marked is_yardstick, with
/// its GFLOP/s and percentage of @p device's FP32 peak.
Measurement measure_cublas_sgemm(const RunOptions& run, const MatmulShape& shape, const DeviceInfo& device,
                                 const float* d_a, const float* d_b, float* d_c, const std::vector<float>& a,
                                 const std::vector<float>& b);

} // namespace cs
