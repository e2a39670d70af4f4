/// @file gpu_timer.cuh
/// @brief Two GPU clocks: CUDA events around repeated launches, and the original tutorial's
/// per-block clock64() stamps.
#pragma once

#include "cli.hpp"
#include "cuda_check.cuh"
#include "device_buffer.cuh"
#include "device_info.cuh"
#include "report.hpp"

#include <cstdint>
#include <vector>

namespace cs {

/// How long time_with_events holds the GPU before each timed launch: longer than the host takes to
/// enqueue one (a few microseconds; encoding a kernel's tensor maps, choosing cuBLAS's algorithm).
constexpr double kHoldMicroseconds = 50;

/// Keeps the GPU busy for about @p microseconds (one thread of one block watching the GPU's clock),
/// so that what the host enqueues behind it waits in the stream: see time_with_events.
void hold_gpu(double microseconds);

/// A buffer of twice the L2's size, which one kernel reads through the L2 (empty()): what a launch
/// read before is then no longer there, and the next reads its inputs from memory, as a first call
/// does. Without it, a problem whose inputs fit in the L2 (a 64 x 4096 x 4096 product's 34 MB in an
/// H200's 50 MB) is timed from the cache the run before filled.
class L2Emptier {
 public:
  /// Allocates and zeroes the buffer, none where @p needed is false.
  explicit L2Emptier(bool needed);
  /// Enqueues the read of the whole buffer (a few tens of microseconds).
  void empty() const;

 private:
  DeviceBuffer<int4> buffer_;
};

/// Times @p launch with CUDA events: @p run.warmup untimed runs first (module load, caches,
/// clocks ramping up), then @p run.reps timed ones, each between its own pair of events, each pair
/// queued behind an emptied L2 (L2Emptier; not with @p run.warm_l2) and a short hold of the GPU
/// (hold_gpu): on an idle GPU the start event would be passed at once, while the host still prepares
/// the launch, and the pair would time the host's work too.
/// Returns the median and spread. @p launch must enqueue the work and check its launch.
template <typename Launch>
TimingStats time_with_events(const RunOptions& run, Launch&& launch) {
  for (int i = 0; i < run.warmup; ++i) launch();
  const L2Emptier l2(!run.warm_l2);
  CUDA_CHECK(cudaDeviceSynchronize());
  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  std::vector<double> samples_ms;
  for (int i = 0; i < run.reps; ++i) {
    if (!run.warm_l2) l2.empty();
    hold_gpu(kHoldMicroseconds);
    CUDA_CHECK(cudaEventRecord(start));
    launch();
    CUDA_CHECK(cudaEventRecord(stop));
    CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    samples_ms.push_back(ms);
  }
  CUDA_CHECK(cudaEventDestroy(start));
  CUDA_CHECK(cudaEventDestroy(stop));
  return summarize(samples_ms);
}

/// Linear index of this block in its grid (x fastest).
__device__ __forceinline__ std::int64_t block_linear_index() {
  return (static_cast<std::int64_t>(blockIdx.z) * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
}

/// Thread 0 of the block stamps the SM's cycle counter into stamps[block] (the original tutorial's method).
/// Does nothing when @p stamps is null.
///
/// Deliberately not inlined: inlined into stage 04's tiled kernel, these few instructions changed
/// how the compiler scheduled the whole kernel (same registers, same loop length) and cost 9% of
/// its speed at 4096^3 on the H200, even with @p stamps null; as a call they cost nothing
/// measurable. An instrument must not change what it measures.
inline __device__ __noinline__ void stamp_block_start(long long* stamps) {
  if (stamps != nullptr && threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0)
    stamps[block_linear_index()] = clock64();
}

/// Thread 0 of the block stamps stamps[blocks + block] when it is done. It records thread 0's
/// finish, not the last thread's: the original tutorial's method, and one reason the figure is approximate.
inline __device__ __noinline__ void stamp_block_end(long long* stamps) {
  if (stamps != nullptr && threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {
    const std::int64_t blocks = static_cast<std::int64_t>(gridDim.x) * gridDim.y * gridDim.z;
    stamps[blocks + block_linear_index()] = clock64();
  }
}

/// What the block stamps say, two ways.
struct ClockSpan {
  long long cycles = 0; ///< the original tutorial's figure: max(end) − min(start) over all blocks
  double ms = 0;        ///< cycles at the device's peak SM clock
  long long longest_block_cycles = 0; ///< max over blocks of end − start (both on one SM)
  double longest_block_ms = 0;        ///< longest_block_cycles at the peak SM clock
};

/// A device buffer of per-block start and end stamps, and the arithmetic the original tutorial did
/// on it.
///
/// The original tutorial's figure, max(end) − min(start) across all blocks, is unsound today: clock64()
/// counts the cycles of the SM the block runs on, and the SMs' counters are not synchronized, so
/// the span mixes clocks (on an H200 that had been running for a while it read 190 to 590 ms
/// for a 43 ms kernel, growing run after run; on a freshly started one, about the event time). The duration
/// of one block, end − start on its own SM, is sound; the longest one is reported beside it. Both assume the
/// peak clock for the conversion to ms. Use the stamps to see inside a kernel, and events for the time of the
/// kernel.
class BlockClocks {
 public:
  /// Allocates room for @p blocks start and end stamps (none for 0 blocks: the kernel then gets
  /// a null pointer and stamps nothing).
  explicit BlockClocks(std::int64_t blocks);

  /// The device pointer to pass to the kernel.
  long long* device_stamps() const { return stamps_.size() > 0 ? stamps_.get() : nullptr; }
  /// Copies the stamps of the last launch back and reduces them.
  ClockSpan read(const DeviceInfo& info) const;

 private:
  std::int64_t blocks_;
  DeviceBuffer<long long> stamps_;
};

/// Prints the stamps' two figures next to the event time @p event_ms of the same kernel, with
/// what each one means.
void print_block_clocks(const ClockSpan& span, const DeviceInfo& info, double event_ms);

} // namespace cs
