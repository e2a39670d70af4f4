/// @file device_info.cu
/// @brief Implementation of device selection and description.
#include "device_info.cuh"

#include "cuda_check.cuh"

#include <cstdio>
#include <cstdlib>

namespace cs {

int fp32_lanes_per_sm(int major, int minor) {
  switch (major) {
    case 5:
      return 128; // Maxwell
    case 6:
      return minor == 0 ? 64 : 128; // Pascal: GP100 64, GP10x 128
    case 7:
      return 64; // Volta, Turing
    case 8:
      return minor == 0 ? 64 : 128; // Ampere A100 64; GA10x and Ada 128
    case 9:
      return 128; // Hopper
    case 10:
    case 11:
    case 12:
      return 128; // Blackwell
    default:
      return 0;
  }
}

int bf16_tensor_fmas_per_sm(int major, int minor) {
  if (major == 8 && minor == 0) return 1024; // A100: 312 TFLOP/s dense at 1410 MHz on 108 SMs
  if (major == 9 && minor == 0) return 2048; // H100, H200: about 990 TFLOP/s dense at 1830 MHz on 132 SMs
  return 0;
}

void require_compute_capability(const DeviceInfo& info, int major, int minor, const std::string& program,
                                const std::string& why, bool exactly) {
  const std::string message = capability_message(info, major, minor, program, why, exactly);
  if (message.empty()) return;
  std::fprintf(stderr, "%s\n", message.c_str());
  std::exit(kExitNoGpu);
}

// The numbers no_gpu_message() compares with are the runtime's own.
static_assert(kProbeStubLibrary == cudaErrorStubLibrary, "cudaErrorStubLibrary moved");
static_assert(kProbeInsufficientDriver == cudaErrorInsufficientDriver, "cudaErrorInsufficientDriver moved");
static_assert(kProbeNoDevice == cudaErrorNoDevice, "cudaErrorNoDevice moved");

DeviceInfo pick_device(int index) {
  int count = 0;
  const cudaError_t error = cudaGetDeviceCount(&count);
  if (error != cudaSuccess || count == 0) {
    // Ask what little the runtime can tell without a device: the driver's CUDA version (0: none
    // installed) and its own, then say which of the reasons it is.
    GpuProbe probe;
    if (cudaDriverGetVersion(&probe.driver_version) != cudaSuccess) probe.driver_version = -1;
    if (cudaRuntimeGetVersion(&probe.runtime_version) != cudaSuccess) probe.runtime_version = CUDART_VERSION;
    probe.error = error;
    probe.error_name = cudaGetErrorName(error);
    probe.error_text = cudaGetErrorString(error);
    probe.device_count = error == cudaSuccess ? count : 0;
    if (const char* visible = std::getenv("CUDA_VISIBLE_DEVICES")) probe.visible_devices = visible;
    std::fprintf(stderr, "%s\n", no_gpu_message(probe).c_str());
    std::exit(kExitNoGpu);
  }
  if (index >= count) {
    std::fprintf(stderr, "error: --device must be in [0, %d] on this machine, got %d\n", count - 1, index);
    std::exit(kExitBadInput);
  }
  CUDA_CHECK(cudaSetDevice(index));
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, index));

  DeviceInfo info;
  info.index = index;
  info.name = prop.name;
  info.major = prop.major;
  info.minor = prop.minor;
  info.sm_count = prop.multiProcessorCount;
  info.global_memory_bytes = prop.totalGlobalMem;
  info.shared_per_block = prop.sharedMemPerBlock;
  info.shared_per_block_optin = prop.sharedMemPerBlockOptin;
  info.shared_per_sm = prop.sharedMemPerMultiprocessor;
  info.registers_per_block = prop.regsPerBlock;
  info.l2_bytes = prop.l2CacheSize;
  info.warp_size = prop.warpSize;
  info.max_threads_per_block = prop.maxThreadsPerBlock;
  for (int d = 0; d < 3; ++d) {
    info.max_block_dim[d] = prop.maxThreadsDim[d];
    info.max_grid_dim[d] = prop.maxGridSize[d];
  }
  // Clock rates are attributes now; the cudaDeviceProp fields are gone in CUDA 13.
  CUDA_CHECK(cudaDeviceGetAttribute(&info.sm_clock_khz, cudaDevAttrClockRate, index));
  CUDA_CHECK(cudaDeviceGetAttribute(&info.memory_clock_khz, cudaDevAttrMemoryClockRate, index));
  CUDA_CHECK(cudaDeviceGetAttribute(&info.memory_bus_bits, cudaDevAttrGlobalMemoryBusWidth, index));

  info.fp32_lanes_per_sm = fp32_lanes_per_sm(info.major, info.minor);
  // Peak FP32: every lane retires one fused multiply-add (2 FLOP) per cycle at the peak clock.
  info.peak_fp32_gflops =
      static_cast<double>(info.sm_count) * info.fp32_lanes_per_sm * 2.0 * info.sm_clock_khz * 1e3 / 1e9;
  // Peak bf16 on the tensor cores: each SM retires bf16_tensor_fmas_per_sm multiply-adds per cycle.
  info.bf16_tensor_fmas_per_sm = bf16_tensor_fmas_per_sm(info.major, info.minor);
  info.peak_bf16_gflops =
      static_cast<double>(info.sm_count) * info.bf16_tensor_fmas_per_sm * 2.0 * info.sm_clock_khz * 1e3 / 1e9;
  // Peak bandwidth: the memory transfers on both clock edges, bus_bits / 8 bytes per transfer.
  info.peak_bandwidth_gbs = 2.0 * info.memory_clock_khz * 1e3 * (info.memory_bus_bits / 8.0) / 1e9;
  return info;
}

void print_device_info(const DeviceInfo& d) {
  std::printf("Device %d: %s (compute capability %d.%d)\n", d.index, d.name.c_str(), d.major, d.minor);
  std::printf("  SMs %d, warp %d, max threads/block %d, block dims %d x %d x %d, grid %d x %d x %d\n",
              d.sm_count, d.warp_size, d.max_threads_per_block, d.max_block_dim[0], d.max_block_dim[1],
              d.max_block_dim[2], d.max_grid_dim[0], d.max_grid_dim[1], d.max_grid_dim[2]);
  std::printf(
      "  global memory %.1f GiB, L2 %.1f MiB, shared/block %zu KiB (opt-in %zu KiB), "
      "shared/SM %zu KiB, registers/block %d\n",
      d.global_memory_bytes / 1073741824.0, d.l2_bytes / 1048576.0, d.shared_per_block / 1024,
      d.shared_per_block_optin / 1024, d.shared_per_sm / 1024, d.registers_per_block);
  std::printf("  SM clock %.0f MHz, memory clock %.0f MHz, bus %d bits\n", d.sm_clock_khz / 1e3,
              d.memory_clock_khz / 1e3, d.memory_bus_bits);
  if (d.fp32_lanes_per_sm > 0)
    std::printf("  peak FP32 %.1f GFLOP/s (%d SMs x %d lanes x 2 x %.0f MHz), ", d.peak_fp32_gflops,
                d.sm_count, d.fp32_lanes_per_sm, d.sm_clock_khz / 1e3);
  else
    std::printf("  peak FP32 unknown for this architecture, ");
  std::printf("peak bandwidth %.0f GB/s (2 x %.0f MHz x %d bytes)\n", d.peak_bandwidth_gbs,
              d.memory_clock_khz / 1e3, d.memory_bus_bits / 8);
  if (d.bf16_tensor_fmas_per_sm > 0)
    std::printf("  peak dense bf16 (FP32 sums) %.1f GFLOP/s (%d SMs x %d multiply-adds x 2 x %.0f MHz)\n",
                d.peak_bf16_gflops, d.sm_count, d.bf16_tensor_fmas_per_sm, d.sm_clock_khz / 1e3);
}

void require_device_memory(const DeviceInfo& info, std::size_t bytes, const std::string& what) {
  std::size_t free_bytes = 0, total_bytes = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  if (bytes > free_bytes) {
    std::fprintf(stderr, "error: %s needs %.2f GiB of device memory, %.2f GiB of %.2f GiB is free on %s\n",
                 what.c_str(), bytes / 1073741824.0, free_bytes / 1073741824.0, total_bytes / 1073741824.0,
                 info.name.c_str());
    std::exit(kExitBadInput);
  }
}

int multiprocessor_count() {
  int device = 0, count = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) {
    static_cast<void>(cudaGetLastError()); // no GPU, or no driver: nothing to launch on
    return 0;
  }
  return count;
}

DeviceFigures device_figures() {
  int device = 0, sms = 0, clock_khz = 0, memory_khz = 0, bus_bits = 0, l2_bytes = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&memory_khz, cudaDevAttrMemoryClockRate, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, device) != cudaSuccess) {
    static_cast<void>(cudaGetLastError()); // no GPU, or no driver: the caller assumes one
    return {};
  }
  return {sms, clock_khz / 1e3, 2.0 * memory_khz * 1e3 * (bus_bits / 8.0) / 1e9,
          static_cast<double>(l2_bytes)};
}

} // namespace cs
