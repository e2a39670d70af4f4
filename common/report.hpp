/// @file report.hpp
/// @brief The summary every stage prints: a readable table, an optional JSON object, and one
/// machine-readable last line ending in `Result = PASS|FAIL`.
#pragma once

#include "cli.hpp"
#include "verify.hpp"

#include <limits>
#include <string>
#include <vector>

namespace cs {

/// Median and spread of repeated timings.
struct TimingStats {
  double median_ms = std::numeric_limits<double>::quiet_NaN(); ///< median of the repetitions
  double min_ms = std::numeric_limits<double>::quiet_NaN();    ///< fastest repetition
  double max_ms = std::numeric_limits<double>::quiet_NaN();    ///< slowest repetition
  int reps = 0;                                                ///< how many were timed
};

/// Median, min and max of @p samples_ms (which it sorts).
TimingStats summarize(std::vector<double>& samples_ms);

/// One timed variant: a kernel, a loop order, or the library yardstick.
struct Measurement {
  std::string name;                                       ///< short variant name: "ikj", "naive", "cuBLAS"
  std::string what;                                       ///< what changed or what it is, for the table
  TimingStats time;                                       ///< event or CPU timing
  double rate = std::numeric_limits<double>::quiet_NaN(); ///< GFLOP/s or GB/s
  double pct_peak = std::numeric_limits<double>::quiet_NaN();      ///< % of the device's theoretical peak
  double pct_yardstick = std::numeric_limits<double>::quiet_NaN(); ///< % of the library's rate, same run
  CheckResult check;         ///< its verification (check.checked false: not verified)
  bool is_yardstick = false; ///< the library reference (not a stage result; never fails the run)
};

/// Collects a stage's measurements and prints them.
class Report {
 public:
  /// @param stage directory name, e.g. "02_naive_kernel"
  /// @param sizes problem size as text, e.g. "1000x1000x1000"
  /// @param unit  "GFLOP/s" or "GB/s"
  /// @param yardstick name of the library reference column ("cuBLAS", "memcpy", "cublasSdot"), or ""
  Report(std::string stage, std::string sizes, std::string unit, std::string yardstick);

  /// Adds a variant. The last non-yardstick variant added is the headline: the final line
  /// carries its numbers.
  void add(const Measurement& m);
  /// Adds a key/value pair to the JSON object and the final line (e.g. "clock64_ms").
  void add_field(const std::string& key, const std::string& value);

  /// Prints the table, the JSON object when @p run.json, and the final line. Returns the exit
  /// code: kExitPass when every verified variant passed, kExitVerificationFailed otherwise.
  int finish(const RunOptions& run) const;

 private:
  std::string stage_, sizes_, unit_, yardstick_, headline_;
  std::vector<Measurement> rows_;
  std::vector<std::pair<std::string, std::string>> fields_;
};

/// GFLOP/s of a matrix product of @p shape (2·m·n·k floating-point operations) done in @p ms.
double matmul_gflops(const MatmulShape& shape, double ms);

/// Formats @p value with printf-style @p format, or "-" when it is NaN.
std::string format_number(double value, const char* format);

} // namespace cs
