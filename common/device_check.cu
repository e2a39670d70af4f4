/// @file device_check.cu
/// @brief Implementation of the checks made where the result lies.
#include "device_check.cuh"

#include "cuda_check.cuh"
#include "device_buffer.cuh"
#include "matrix.hpp"

#include <algorithm>

namespace cs {
namespace {

// What the scan kernel adds up: the counts of the two kinds of bad element, and the lowest bad index
// (all bits set while there is none).
struct DeviceScan {
  unsigned long long unwritten, non_finite, first_bad;
};

// Each thread counts the bad elements of its grid-stride share, a warp adds its lanes' counts, and
// one lane per warp adds them to the totals (and lowers first_bad to the warp's lowest bad index).
__global__ void scan_values(const float* values, std::int64_t count, DeviceScan* totals) {
  unsigned long long unwritten = 0, non_finite = 0, first_bad = ~0ull;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += stride) {
    const float v = values[i];
    if (isfinite(v)) continue;
    if (__float_as_uint(v) == kPoisonBits)
      ++unwritten;
    else
      ++non_finite;
    if (first_bad == ~0ull) first_bad = static_cast<unsigned long long>(i); // a thread's indices increase
  }
  for (int offset = 16; offset > 0; offset /= 2) {
    unwritten += __shfl_down_sync(0xffffffffu, unwritten, offset);
    non_finite += __shfl_down_sync(0xffffffffu, non_finite, offset);
    first_bad = min(first_bad, __shfl_down_sync(0xffffffffu, first_bad, offset));
  }
  if (threadIdx.x % 32 == 0 && (unwritten != 0 || non_finite != 0)) {
    atomicAdd(&totals->unwritten, unwritten);
    atomicAdd(&totals->non_finite, non_finite);
    atomicMin(&totals->first_bad, first_bad);
  }
}

// to[i] = from[at[i]] for i < count: the picked elements of a result, side by side.
__global__ void gather(const float* from, const std::int64_t* at, float* to, std::int64_t count) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < count) to[i] = from[at[i]];
}

} // namespace

ScanCounts scan_on_device(const float* d_values, std::int64_t count) {
  const DeviceScan none{0, 0, ~0ull};
  DeviceBuffer<DeviceScan> d_totals(std::vector<DeviceScan>{none});
  int device = 0, sms = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  const std::int64_t blocks =
      std::min<std::int64_t>(std::max<std::int64_t>((count + 255) / 256, 1), 8LL * sms);
  scan_values<<<static_cast<unsigned>(blocks), 256>>>(d_values, count, d_totals.get());
  CUDA_CHECK_LAUNCH();
  DeviceScan totals{};
  CUDA_CHECK(cudaMemcpy(&totals, d_totals.get(), sizeof totals, cudaMemcpyDeviceToHost));
  ScanCounts counts;
  counts.scanned = count;
  counts.unwritten = static_cast<std::int64_t>(totals.unwritten);
  counts.non_finite = static_cast<std::int64_t>(totals.non_finite);
  if (totals.first_bad != ~0ull) {
    counts.first_bad = static_cast<std::int64_t>(totals.first_bad);
    CUDA_CHECK(cudaMemcpy(&counts.first_bad_value, d_values + counts.first_bad, sizeof(float),
                          cudaMemcpyDeviceToHost));
  }
  return counts;
}

std::vector<float> gather_to_host(const float* d_values, const std::vector<std::int64_t>& picked) {
  std::vector<float> values(picked.size());
  if (picked.empty()) return values;
  const auto count = static_cast<std::int64_t>(picked.size());
  const DeviceBuffer<std::int64_t> d_picked(picked);
  const DeviceBuffer<float> d_gathered(picked.size());
  gather<<<static_cast<unsigned>((count + 255) / 256), 256>>>(d_values, d_picked.get(), d_gathered.get(),
                                                              count);
  CUDA_CHECK_LAUNCH();
  CUDA_CHECK(cudaMemcpy(values.data(), d_gathered.get(), d_gathered.bytes(), cudaMemcpyDeviceToHost));
  return values;
}

CheckResult verify_matmul_on_device(const float* d_c, const HostMatrix& a, const HostMatrix& b,
                                    const MatmulShape& shape, std::uint64_t seed, Accumulation accumulation,
                                    bool scan_every_element) {
  ScanCounts scan;
  if (scan_every_element) scan = scan_on_device(d_c, shape.m * shape.n);
  const std::vector<std::int64_t> picked = sampled_elements(shape, seed);
  return verify_matmul_elements(a, b, picked, gather_to_host(d_c, picked), shape, accumulation,
                                scan_every_element ? &scan : nullptr);
}

} // namespace cs
