/// @file gpu_timer.cu
/// @brief Implementation of the per-block clock stamps.
#include "gpu_timer.cuh"

#include <algorithm>
#include <limits>

namespace cs {

BlockClocks::BlockClocks(std::int64_t blocks) : blocks_(blocks) {
  CUDA_CHECK(cudaMalloc(&stamps_, 2 * static_cast<std::size_t>(blocks) * sizeof(long long)));
}

BlockClocks::~BlockClocks() { cudaFree(stamps_); }

ClockSpan BlockClocks::read(const DeviceInfo& info) const {
  std::vector<long long> host(2 * static_cast<std::size_t>(blocks_));
  CUDA_CHECK(cudaMemcpy(host.data(), stamps_, host.size() * sizeof(long long), cudaMemcpyDeviceToHost));
  const long long first_start = *std::min_element(host.begin(), host.begin() + blocks_);
  const long long last_end = *std::max_element(host.begin() + blocks_, host.end());
  ClockSpan span;
  span.cycles = last_end - first_start;
  span.ms = info.sm_clock_khz > 0 ? static_cast<double>(span.cycles) / info.sm_clock_khz : 0.0;
  return span;
}

} // namespace cs
