/// @file gpu_timer.cu
/// @brief Implementation of the GPU's hold before a timed launch and of the per-block clock stamps.
#include "gpu_timer.cuh"

#include <algorithm>
#include <cstdio>
#include <limits>

namespace cs {

namespace {

// Spins until the GPU's global timer (nanoseconds) has moved on by @p nanoseconds.
__global__ void spin_for(unsigned long long nanoseconds) {
  unsigned long long start = 0, now = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < nanoseconds);
}

// Reads the @p count quads at @p quads through the L2 (not L1: ld.global.cg), a grid-stride loop.
// Their XOR is zero (the buffer is zeroed): the store only keeps the compiler from dropping the loads.
__global__ void read_through_l2(const int4* quads, std::int64_t count, int* never) {
  int bits = 0;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += stride) {
    const int4 quad = __ldcg(quads + i);
    bits ^= quad.x ^ quad.y ^ quad.z ^ quad.w;
  }
  if (bits != 0) *never = bits;
}

// Quads in twice the L2 of the current device, none where @p needed is false.
std::size_t l2_emptier_quads(bool needed) {
  if (!needed) return 0;
  int device = 0, l2_bytes = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, device));
  return 2 * static_cast<std::size_t>(l2_bytes) / sizeof(int4);
}

} // namespace

void hold_gpu(double microseconds) {
  spin_for<<<1, 1>>>(static_cast<unsigned long long>(microseconds * 1e3));
  CUDA_CHECK_LAUNCH();
}

L2Emptier::L2Emptier(bool needed) : buffer_(l2_emptier_quads(needed)) {
  if (buffer_.size() > 0) CUDA_CHECK(cudaMemset(buffer_.get(), 0, buffer_.bytes()));
}

void L2Emptier::empty() const {
  if (buffer_.size() == 0) return;
  read_through_l2<<<1024, 256>>>(buffer_.get(), static_cast<std::int64_t>(buffer_.size()),
                                 reinterpret_cast<int*>(buffer_.get()));
  CUDA_CHECK_LAUNCH();
}

BlockClocks::BlockClocks(std::int64_t blocks)
    : blocks_(blocks), stamps_(2 * static_cast<std::size_t>(blocks)) {}

ClockSpan BlockClocks::read(const DeviceInfo& info) const {
  if (blocks_ == 0) return ClockSpan{};
  const std::vector<long long> host = stamps_.to_host();
  const long long first_start = *std::min_element(host.begin(), host.begin() + blocks_);
  const long long last_end = *std::max_element(host.begin() + blocks_, host.end());
  long long longest = 0;
  for (std::int64_t block = 0; block < blocks_; ++block)
    longest = std::max(longest, host[blocks_ + block] - host[block]);
  const auto to_ms = [&](long long cycles) {
    return info.sm_clock_khz > 0 ? static_cast<double>(cycles) / info.sm_clock_khz : 0.0;
  };
  ClockSpan span;
  span.cycles = last_end - first_start;
  span.ms = to_ms(span.cycles);
  span.longest_block_cycles = longest;
  span.longest_block_ms = to_ms(longest);
  return span;
}

void print_block_clocks(const ClockSpan& span, const DeviceInfo& info, double event_ms) {
  std::printf("\nclock64 stamps of the last launch (thread 0 of each block, at its start and end):\n");
  std::printf(
      "  max(end) - min(start) over all blocks: %lld cycles = %.4g ms at %.0f MHz (the original\n"
      "    tutorial's figure; unsound: each SM counts its own cycles, and the counters are not "
      "synchronized)\n",
      span.cycles, span.ms, info.sm_clock_khz / 1e3);
  std::printf("  longest single block, end - start on its own SM: %lld cycles = %.4g ms\n",
              span.longest_block_cycles, span.longest_block_ms);
  std::printf("  the kernel by CUDA events (median): %.4g ms\n", event_ms);
}

} // namespace cs
