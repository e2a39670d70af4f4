/// @file cpu_timer.hpp
/// @brief Wall-clock timing of CPU work with std::chrono::steady_clock, and a progress meter.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace cs {

/// Measures elapsed wall-clock time of CPU work. steady_clock never jumps (unlike
/// system_clock), so differences are always meaningful. GPU work is asynchronous: time it with
/// events (gpu_timer.cuh), not with this.
class CpuTimer {
 public:
  CpuTimer() : start_(std::chrono::steady_clock::now()) {}
  /// Milliseconds since construction.
  double elapsed_ms() const {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_).count();
  }

 private:
  std::chrono::steady_clock::time_point start_;
};

/// Progress on stderr for long CPU loops, in whole lines: silent for the first two seconds, then
/// one line at most every five seconds ("01_cpu_matmul ijk run 1: 45% (450/1000), 3.1 s"), and a
/// last line when a loop that printed finishes. Short runs print nothing.
class Progress {
 public:
  /// @param label what is running; @param total the count that means 100%
  Progress(std::string label, std::int64_t total);
  /// Reports that @p done of total units are finished.
  void update(std::int64_t done);
  /// Prints the closing line ("... done, 12.3 s") if the meter printed anything.
  void finish();

 private:
  std::string label_;
  std::int64_t total_;
  CpuTimer timer_;
  double next_print_ms_ = 2000.0;
  bool printed_ = false;
};

} // namespace cs
