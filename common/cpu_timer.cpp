/// @file cpu_timer.cpp
/// @brief Implementation of the progress meter.
#include "cpu_timer.hpp"

#include <cstdio>
#include <unistd.h>

namespace cs {

Progress::Progress(std::string label, std::int64_t total)
    : label_(std::move(label)), total_(total > 0 ? total : 1), terminal_(isatty(STDERR_FILENO) != 0) {}

void Progress::update(std::int64_t done) {
  const double now = timer_.elapsed_ms();
  if (now < 2000.0 || now - last_print_ms_ < 1000.0) return;
  last_print_ms_ = now;
  printed_ = true;
  std::fprintf(stderr, "%s%s: %3d%% (%lld/%lld), %.1f s%s", terminal_ ? "\r" : "", label_.c_str(),
               static_cast<int>(100 * done / total_), static_cast<long long>(done),
               static_cast<long long>(total_), now / 1000.0, terminal_ ? "" : "\n");
  std::fflush(stderr);
}

void Progress::finish() {
  if (printed_ && terminal_) std::fprintf(stderr, "\n");
  printed_ = false;
}

} // namespace cs
