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
  /// Restarts the measurement.
  void reset() { start_ = std::chrono::steady_clock::now(); }
  /// Milliseconds since construction or the last reset().
  double elapsed_ms() const {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_).count();
  }

 private:
  std::chrono::steady_clock::time_point start_;
};

/// Progress on stderr for long CPU loops: silent for the first two seconds, then at most one
/// update a second ("01_cpu_matmul ijk: 45% (450/1000), 3.1 s"), so short runs print nothing.
class Progress {
 public:
  /// @param label what is running; @param total the count that means 100%
  Progress(std::string label, std::int64_t total);
  /// Reports that @p done of total units are finished.
  void update(std::int64_t done);
  /// Ends the meter's line if it printed anything.
  void finish();

 private:
  std::string label_;
  std::int64_t total_;
  CpuTimer timer_;
  double last_print_ms_ = 0;
  bool printed_ = false;
  bool terminal_ = false;
};

} // namespace cs
