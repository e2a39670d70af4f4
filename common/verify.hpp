/// @file verify.hpp
/// @brief The CPU reference for C = A·B and the comparison every stage reports.
///
/// A result element passes when |got − want| ≤ tolerance × scale, where `want` is computed in
/// double and `scale` is what the error may grow with. For a dot product of length K the scale is
/// Σ|a·b| over its terms and the tolerance γ_K = K·u / (1 − K·u), u = 2⁻²⁴: the classical bound
/// on the rounding error of any float summation order (fused multiply-adds included), so a
/// correct FP32 kernel cannot fail it, while a wrong index, a stale tile or a lost term moves the
/// result by a whole term, far more than K·u of the sum. NaN, ±Inf and never-written (poisoned)
/// elements always fail.
#pragma once

#include "cli.hpp"
#include "matrix.hpp"

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace cs {

/// What a check found. Printed by Report; one per measured variant.
struct CheckResult {
  bool checked = false;              ///< false when the check was skipped (`--check=none`)
  bool passed = false;               ///< every scanned and compared element was acceptable
  std::string mode;                  ///< "full", "sample", "exact", "none", ...
  std::int64_t compared = 0;         ///< elements compared with the reference
  std::int64_t scanned = 0;          ///< elements scanned for NaN/Inf/never-written
  std::int64_t unwritten = 0;        ///< elements still holding the poison pattern
  std::int64_t non_finite = 0;       ///< NaN or ±Inf that the kernel computed
  std::int64_t out_of_tolerance = 0; ///< finite elements off by more than the tolerance
  double max_rel_error = 0;          ///< max |got − want| / scale over compared elements
  double rel_norm_error = 0;         ///< ‖got − want‖₂ / ‖want‖₂ over compared elements
  double tolerance = 0;              ///< the bound each |got − want| / scale had to meet
  std::string first_failure;         ///< the first bad element, e.g. "C[3][7] = nan (never written)"

  /// One-line summary, e.g. "full: 1000000 elements, max rel err 3.1e-07 <= tol 6.0e-05".
  std::string summary() const;
};

/// What a scan of a result for NaN, ±Inf and the poison pattern found, wherever it ran: on the host
/// (Comparison::scan) or on the GPU, for a result left there (scan_on_device, device_check.cuh).
struct ScanCounts {
  std::int64_t scanned = 0;    ///< elements scanned
  std::int64_t unwritten = 0;  ///< elements still holding the poison pattern
  std::int64_t non_finite = 0; ///< other NaN or ±Inf
  std::int64_t first_bad = -1; ///< the lowest index among the two kinds above, -1 when there is none
  float first_bad_value = 0;   ///< the value there
};

/// Accumulates element-by-element comparisons into a CheckResult.
class Comparison {
 public:
  /// @param tolerance bound on |got − want| / scale
  /// @param cols      columns of the result, to name failures as name[row][col] (1 for vectors)
  /// @param name      the result's name in messages ("C", "out", "dot")
  Comparison(double tolerance, std::int64_t cols, std::string name);

  /// Scans @p count values for NaN, ±Inf and the poison pattern without a reference.
  void scan(const float* values, std::int64_t count);
  /// Adds what a scan made elsewhere found (the GPU's, for a result that stays on the device).
  void add_scan(const ScanCounts& counts);
  /// Compares element @p index: @p got against @p want, allowing tolerance × @p scale.
  void compare(std::int64_t index, double got, double want, double scale);
  /// The verdict; @p mode names how much was checked.
  CheckResult finish(const std::string& mode) const;

 private:
  std::string where(std::int64_t index) const;
  void fail(std::int64_t index, double got, const char* why);

  double tolerance_;
  std::int64_t cols_;
  std::string name_;
  CheckResult result_;
  double sum_sq_diff_ = 0, sum_sq_want_ = 0;
};

/// γ_K = K·u / (1 − K·u) with u = 2⁻²⁴: the FP32 rounding-error bound for sums of K terms.
double fp32_sum_tolerance(std::int64_t terms);

/// How a kernel adds up the K products of an element of C, which decides the tolerance.
enum class Accumulation {
  kFp32,       ///< IEEE FP32 additions or fused multiply-adds, rounded to nearest: fp32_sum_tolerance
  kTensorCore, ///< tensor-core block sums into an FP32 accumulator: tensor_core_sum_tolerance
};

/// The bound for K products of bfloat16 values summed in FP32 by tensor cores:
/// γ_2K(2u) = 2K·(2u) / (1 − 2K·(2u)), u = 2⁻²⁴.
///
/// A tensor core does not round like IEEE additions. One instruction adds b products and the
/// accumulator in one step (a block FMA: b = 16 for mma m16n8k16): the products are exact (8 + 8
/// significant bits fit in FP32's 24), but before the sum every addend is shifted to the exponent of
/// the largest and its bits past the 24th are cut off (truncated, not rounded), and the sum is
/// truncated to FP32 again. So each of the b + 1 addends may lose up to 2u of the largest
/// magnitude in the block (truncation doubles the unit roundoff), and the result 2u of itself: at
/// most (b + 2)·2u·S, where S bounds the sum of the magnitudes in the block. Chained over K / b
/// blocks, whatever their order or grouping, that is at most K·(1 + 2/b)·2u·Σ|a·b| to first order,
/// which γ_2K(2u)·Σ|a·b| covers for every b ≥ 2. A dropped or doubled term moves an element by
/// |a·b| itself, in most elements far more. The unit tests (tests/test_common.cpp) sum in this model
/// in many orders and block sizes and check both; chapter 13 shows how close the GPU comes.
double tensor_core_sum_tolerance(std::int64_t terms);

/// Full CPU reference: C = A·B accumulated in double (row-major, shape.m × shape.n).
std::vector<double> reference_matmul(const HostMatrix& a, const HostMatrix& b, const MatmulShape& shape);

/// Whether kAuto picks the full check for this shape (m·n·k ≤ 2³⁰), else the sampled one.
bool full_check_is_cheap(const MatmulShape& shape);

/// Checks @p c against the double reference of A·B as @p mode asks, with the tolerance of
/// @p accumulation.
///
/// Full: every element. Sampled: every element is scanned for NaN/Inf/never-written, and the
/// reference is computed for the four borders (up to 1024 evenly spaced elements per edge, the
/// corners included) and 1024 random elements drawn from @p seed, so the check costs O(m·n + k·5120)
/// instead of O(m·n·k).
CheckResult verify_matmul(const HostMatrix& a, const HostMatrix& b, const HostMatrix& c,
                          const MatmulShape& shape, CheckMode mode, std::uint64_t seed,
                          Accumulation accumulation = Accumulation::kFp32);

/// What `--check auto` means for @p shape: kFull where full_check_is_cheap, else kSample; any other
/// @p mode as it is.
CheckMode resolved_check(CheckMode mode, const MatmulShape& shape);

/// The elements the sampled check compares, in increasing order: the four borders (up to 1024 evenly
/// spaced elements per edge, the corners included) and 1024 random elements drawn from @p seed.
std::vector<std::int64_t> sampled_elements(const MatmulShape& shape, std::uint64_t seed);

/// Checks only the elements of C at @p picked (their values in @p values, in the same order) against
/// the double reference of A·B, with the tolerance of @p accumulation: the sampled check without the
/// scan of every other element, for a result whose picked elements alone were copied back (the
/// cuBLAS yardstick's: cublas_sgemm.cuh), or with the scan the GPU made of it in @p scan (a stage's
/// sampled check: matmul_flow.cu).
CheckResult verify_matmul_elements(const HostMatrix& a, const HostMatrix& b,
                                   const std::vector<std::int64_t>& picked, const std::vector<float>& values,
                                   const MatmulShape& shape, Accumulation accumulation = Accumulation::kFp32,
                                   const ScanCounts* scan = nullptr);

} // namespace cs
