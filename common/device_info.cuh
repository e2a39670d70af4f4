/// @file device_info.cuh
/// @brief Picking the GPU, printing what it is, and its theoretical peaks.
///
/// The original tutorial's printDeviceProp/InitCUDA for today's CUDA: clock rates come from
/// `cudaDeviceGetAttribute`, since `cudaDeviceProp::clockRate` and `memoryClockRate` were removed in
/// CUDA 13.
#pragma once

#include <cstddef>
#include <string>

namespace cs {

/// What the stages need to know about the GPU they run on.
struct DeviceInfo {
  int index = 0;                          ///< CUDA device index
  std::string name;                       ///< e.g. "NVIDIA H200"
  int major = 0;                          ///< compute capability, major
  int minor = 0;                          ///< compute capability, minor
  int sm_count = 0;                       ///< streaming multiprocessors
  std::size_t global_memory_bytes = 0;    ///< total device memory
  std::size_t shared_per_block = 0;       ///< shared memory a block gets by default
  std::size_t shared_per_block_optin = 0; ///< shared memory a block may opt in to
  std::size_t shared_per_sm = 0;          ///< shared memory per SM
  int registers_per_block = 0;            ///< 32-bit registers available to one block
  int l2_bytes = 0;                       ///< L2 cache size
  int warp_size = 0;                      ///< threads per warp (32)
  int max_threads_per_block = 0;          ///< most threads in one block
  int max_block_dim[3] = {0, 0, 0};       ///< most threads along x, y, z of a block
  int max_grid_dim[3] = {0, 0, 0};        ///< most blocks along x, y, z of a grid
  int sm_clock_khz = 0;                   ///< peak SM clock (kHz), cudaDevAttrClockRate
  int memory_clock_khz = 0;               ///< peak memory clock (kHz), cudaDevAttrMemoryClockRate
  int memory_bus_bits = 0;                ///< memory bus width in bits
  int fp32_lanes_per_sm = 0;              ///< FP32 FMA units per SM for this architecture (0: unknown)
  double peak_fp32_gflops = 0;            ///< sm_count × lanes × 2 FLOP/FMA × SM clock
  double peak_bandwidth_gbs = 0;          ///< 2 (double data rate) × memory clock × bus bytes, decimal GB/s
};

/// FP32 FMA units per SM for compute capability major.minor (the CUDA Programming Guide's
/// throughput table); 0 for an architecture this table does not know.
int fp32_lanes_per_sm(int major, int minor);

/// Picks device @p index and reads its properties. With no usable GPU or driver, prints one line
/// and exits 77 (kExitNoGpu); an index past the last device is bad input (exit 2).
DeviceInfo pick_device(int index);

/// Prints the device's properties and derived peaks (the original tutorial's printDeviceProp).
void print_device_info(const DeviceInfo& info);

/// Exits with `error: ...` (exit 2) when @p bytes of device memory cannot be had on @p info's
/// device; @p what names the allocation. Call it before allocating.
void require_device_memory(const DeviceInfo& info, std::size_t bytes, const std::string& what);

} // namespace cs
