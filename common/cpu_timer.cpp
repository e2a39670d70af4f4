/// @file cpu_timer.cpp
/// @brief Implementation of the progress meter.
#include "cpu_timer.hpp"

#include <cstdio>
#include <utility>

namespace cs {

Progress::Progress(std::string label, std::int64_t total)
    : label_(std::move(label)), total_(total > 0 ? total : 1) {}

void Progress::update(std::int64_t done) {
  const double now_ms = timer_.elapsed_ms();
  if (now_ms < next_print_ms_) return;
  next_print_ms_ = now_ms + 5000.0;
  printed_ = true;
  std::fprintf(stderr, "%s: %3d%% (%lld/%lld), %.1f s\n", label_.c_str(),
               static_cast<int>(100 * done / total_), static_cast<long long>(done),
               static_cast<long long>(total_), now_ms / 1000.0);
  std::fflush(stderr);
}

void Progress::finish() {
  if (printed_) std::fprintf(stderr, "%s: done, %.1f s\n", label_.c_str(), timer_.elapsed_ms() / 1000.0);
  printed_ = false;
}

} // namespace cs
