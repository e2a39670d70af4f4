/// @file device_info.cuh
/// @brief Picking the GPU (or saying exactly why there is none), printing what it is, and its
/// theoretical peaks.
///
/// The original tutorial's printDeviceProp/InitCUDA for today's CUDA: clock rates come from
/// `cudaDeviceGetAttribute`, since `cudaDeviceProp::clockRate` and `memoryClockRate` were removed in
/// CUDA 13.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

namespace cs {

/// What the CUDA runtime says before any device is touched: the input of no_gpu_message().
/// Plain numbers, so that the message can be tested on any machine, without CUDA.
struct GpuProbe {
  int driver_version = 0;  ///< cudaDriverGetVersion: newest CUDA the driver supports, 1000 x major + 10 x
                           ///< minor; 0 when no driver is installed, -1 when it could not be asked
  int runtime_version = 0; ///< cudaRuntimeGetVersion: the CUDA runtime this program was built with
  int error = 0;           ///< what cudaGetDeviceCount returned (a cudaError_t; 0 is cudaSuccess)
  std::string error_name;  ///< cudaGetErrorName(error), e.g. "cudaErrorSystemNotReady"
  std::string error_text;  ///< cudaGetErrorString(error), e.g. "system not yet initialized"
  int device_count = 0;    ///< the devices cudaGetDeviceCount found (read only when error is 0)
  std::optional<std::string> visible_devices; ///< CUDA_VISIBLE_DEVICES, when it is set (even empty)
};

/// cudaErrorStubLibrary: the CUDA toolkit's stub libcuda was loaded, not a driver. This and the
/// next two are the cudaError_t values no_gpu_message() tells apart, as plain numbers
/// (device_info.cu checks them against the CUDA headers).
inline constexpr int kProbeStubLibrary = 34;
/// cudaErrorInsufficientDriver: no driver, or one older than the runtime.
inline constexpr int kProbeInsufficientDriver = 35;
/// cudaErrorNoDevice: a driver, but no device that it shows this process.
inline constexpr int kProbeNoDevice = 100;

/// A CUDA version number as text: 12040 -> "12.4", 13000 -> "13.0".
inline std::string cuda_version_text(int version) {
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

/// Why there is no usable GPU, as the one line a stage prints before it exits 77, or "" when
/// there is one. The line starts `SKIP: no usable CUDA GPU: ` (scripts and CTest match that) and
/// names one reason (docs/troubleshooting.md has a row for each):
///   - the toolkit's stub driver library loaded instead of a driver (cudaErrorStubLibrary);
///   - no NVIDIA driver at all (driver version 0);
///   - a driver too old for this program's runtime (cudaErrorInsufficientDriver), both versions;
///   - a driver but no device (cudaErrorNoDevice, or no error and none counted), and
///     CUDA_VISIBLE_DEVICES when it is set, since it may be what hides them;
///   - any other error, by name and text, with both versions.
inline std::string no_gpu_message(const GpuProbe& probe) {
  if (probe.error == 0 && probe.device_count > 0) return "";
  const std::string prefix = "SKIP: no usable CUDA GPU: ";
  const std::string runtime = "CUDA " + cuda_version_text(probe.runtime_version);
  const std::string driver =
      probe.driver_version < 0 ? "unknown" : "CUDA " + cuda_version_text(probe.driver_version);
  if (probe.error == kProbeStubLibrary)
    return prefix + "the libcuda loaded is the CUDA toolkit's stub, not a driver: take the toolkit's " +
           "stubs directory off the library path (LD_LIBRARY_PATH)";
  if (probe.driver_version == 0)
    return prefix + "no NVIDIA driver found on this machine (stage 01 runs without one)";
  if (probe.driver_version > 0 && probe.error == kProbeInsufficientDriver &&
      probe.driver_version < probe.runtime_version)
    return prefix + "the NVIDIA driver supports up to " + driver + ", this program needs " + runtime +
           ": update the driver";
  if (probe.driver_version > 0 && (probe.error == kProbeNoDevice || probe.error == 0)) {
    const std::string none = prefix + "the NVIDIA driver (" + driver + ") reports no CUDA device";
    if (!probe.visible_devices) return none;
    if (probe.visible_devices->empty())
      return none + ": CUDA_VISIBLE_DEVICES is set but empty, which hides them all";
    return none + " among CUDA_VISIBLE_DEVICES=\"" + *probe.visible_devices +
           "\", which hides every device it does not name";
  }
  return prefix + "cudaGetDeviceCount failed with " + probe.error_name + " (" + probe.error_text +
         "); driver " + driver + ", runtime " + runtime;
}

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
  int bf16_tensor_fmas_per_sm = 0; ///< dense bf16 multiply-adds (FP32 sums) per SM per clock (0: unknown)
  double peak_bf16_gflops = 0;     ///< sm_count × bf16_tensor_fmas_per_sm × 2 × SM clock (0: unknown)
  double peak_bandwidth_gbs = 0;   ///< 2 (double data rate) × memory clock × bus bytes, decimal GB/s
};

/// FP32 FMA units per SM for compute capability major.minor (the CUDA Programming Guide's
/// throughput table); 0 for an architecture this table does not know.
int fp32_lanes_per_sm(int major, int minor);

/// Dense bfloat16 multiply-adds per SM per clock that the tensor cores retire with FP32 sums, for
/// compute capability major.minor: 1024 on 8.0 (A100) and 2048 on 9.0 (H100, H200), by the vendor's
/// peak figures. 0 elsewhere: on 8.6 and 8.9 the rate with FP32 sums differs between products of
/// the same capability (GeForce cards run it at a fraction of the workstation and data-center
/// rate), so no figure is claimed.
int bf16_tensor_fmas_per_sm(int major, int minor);

/// The one line a program that needs compute capability @p major.@p minor (or later; with @p exactly,
/// that one alone) prints when @p info's GPU is not one it can use: `SKIP: no usable CUDA GPU: ...`,
/// what @p program needs (@p why) and what was found. Empty when the GPU is usable. (@p exactly:
/// code built for an architecture-specific target such as sm_90a runs on that capability alone, not
/// on later GPUs.) Host code: it needs no CUDA to build or run.
inline std::string capability_message(const DeviceInfo& info, int major, int minor,
                                      const std::string& program, const std::string& why, bool exactly) {
  const bool same = info.major == major && info.minor == minor;
  const bool newer = info.major > major || (info.major == major && info.minor > minor);
  if (same || (newer && !exactly)) return "";
  return "SKIP: no usable CUDA GPU: " + program + " needs compute capability " + std::to_string(major) + "." +
         std::to_string(minor) + (exactly ? " exactly" : " or later") + " (" + why + "); " + info.name +
         " is " + std::to_string(info.major) + "." + std::to_string(info.minor);
}

/// Exits 77 with the line capability_message() makes, on stderr, when it is not empty.
void require_compute_capability(const DeviceInfo& info, int major, int minor, const std::string& program,
                                const std::string& why, bool exactly = false);

/// Picks device @p index and reads its properties. With no usable GPU or driver, prints the line
/// no_gpu_message() makes on stderr and exits 77 (kExitNoGpu); an index past the last device is
/// bad input (exit 2).
DeviceInfo pick_device(int index);

/// Prints the device's properties and derived peaks (the original tutorial's printDeviceProp).
void print_device_info(const DeviceInfo& info);

/// The streaming multiprocessors of the GPU this process uses, read from the device (never assumed:
/// an H100 SXM and an H200 have 132, an H100 PCIe 114); 0 when there is no GPU to ask (`--plan` on a
/// machine without one). For the persistent grids (stage 19 on), one block per SM.
int multiprocessor_count();

/// What a rule that plans a launch for the GPU needs to know of it (stage 23): the streaming
/// multiprocessors, their peak clock and the memory's peak bandwidth; all 0 when there is no GPU to
/// ask (`--plan` on a machine without one).
struct DeviceFigures {
  int sms = 0;                   ///< streaming multiprocessors
  double sm_clock_mhz = 0;       ///< peak SM clock, MHz
  double peak_bandwidth_gbs = 0; ///< 2 (double data rate) x memory clock x bus bytes, decimal GB/s
  double l2_bytes = 0;           ///< the L2 cache
};
/// The DeviceFigures of the GPU this process uses (all 0 without one).
DeviceFigures device_figures();

/// Exits with `error: ...` (exit 2) when @p bytes of device memory cannot be had on @p info's
/// device; @p what names the allocation. Call it before allocating.
void require_device_memory(const DeviceInfo& info, std::size_t bytes, const std::string& what);

} // namespace cs
