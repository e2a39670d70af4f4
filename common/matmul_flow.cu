/// @file matmul_flow.cu
/// @brief The host flow of the matrix-multiply stages (see matmul_flow.cuh; chapter 02 walks
/// through it).
#include "matmul_flow.cuh"

#include "cublas_sgemm.cuh"
#include "device_buffer.cuh"
#include "device_check.cuh"
#include "device_info.cuh"
#include "exit_codes.hpp"
#include "matrix.hpp"
#include "report.hpp"
#include "verify.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

namespace cs {

dim3 grid_of(std::int64_t blocks_x, std::int64_t blocks_y) {
  if (blocks_x > kMaxGridX || blocks_y > kMaxGridY)
    throw UsageError("this problem needs a grid of " + std::to_string(blocks_x) + " x " +
                     std::to_string(blocks_y) +
                     " blocks, more than CUDA allows (x <= " + std::to_string(kMaxGridX) +
                     ", y <= " + std::to_string(kMaxGridY) + "); use larger blocks or a smaller problem");
  return dim3(static_cast<unsigned>(blocks_x), static_cast<unsigned>(blocks_y));
}

namespace {

// "(x, y) = (a, b)", or "(x, y, z) = (a, b, c)" when z is not 1: named by axis, as dim3 holds them,
// so that a block of 7 rows and 9 columns reads (x, y) = (9, 7) and not "9 x 7".
std::string dims(const dim3& d) {
  const std::string x = std::to_string(d.x), y = std::to_string(d.y);
  return d.z == 1 ? "(x, y) = (" + x + ", " + y + ")"
                  : "(x, y, z) = (" + x + ", " + y + ", " + std::to_string(d.z) + ")";
}

// Blocks in a grid, or threads in a block.
std::int64_t count(const dim3& d) {
  return static_cast<std::int64_t>(d.x) * d.y * d.z;
}

// Flips the sign of each of the @p count elements at @p data, in place, by its sign bit (@p sign):
// exact, and its own inverse. Run twice around the timed launches (step 5), so that they multiply
// -A and the checked launch after them A.
template <typename Bits>
__global__ void flip_sign_bits(Bits* data, std::size_t count, Bits sign) {
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    data[i] ^= sign;
}

// -A for A, and back (flip_sign_bits over the buffer's elements: FP32 or bfloat16).
template <typename Input>
void negate(DeviceBuffer<Input>& a) {
  if (a.size() == 0) return;
  const int blocks = static_cast<int>(std::min<std::size_t>((a.size() + 255) / 256, 4096));
  if constexpr (std::is_same_v<Input, float>)
    flip_sign_bits<<<blocks, 256>>>(reinterpret_cast<std::uint32_t*>(a.get()), a.size(),
                                    std::uint32_t{0x80000000u});
  else
    flip_sign_bits<<<blocks, 256>>>(reinterpret_cast<std::uint16_t*>(a.get()), a.size(),
                                    static_cast<std::uint16_t>(0x8000u));
  CUDA_CHECK_LAUNCH();
}

// The host's values copied to the device as its element type: the floats themselves, or each
// converted to bfloat16 (exactly: random_bf16_matrix made them bfloat16 values).
template <typename Input>
DeviceBuffer<Input> upload(const HostMatrix& values) {
  if constexpr (std::is_same_v<Input, float>) {
    return DeviceBuffer<float>(values);
  } else {
    // Each value is a bfloat16 already, so its bfloat16 is its float's top 16 bits, taken as they are
    // (no rounding left to do; much faster than a conversion call per element, for 2^31 of them),
    // and copied over a slice at a time (no second copy of a matrix on the host), each slice
    // converted on several threads (on_slices).
    DeviceBuffer<Input> buffer(values.size());
    constexpr std::size_t kSlice = std::size_t{1} << 26;
    std::vector<Input> slice(std::min(values.size(), kSlice));
    for (std::size_t first = 0; first < values.size(); first += kSlice) {
      const std::size_t count = std::min(kSlice, values.size() - first);
      on_slices(static_cast<std::int64_t>(count), [&](std::int64_t begin, std::int64_t end) {
        for (std::int64_t i = begin; i < end; ++i) {
          std::uint32_t bits = 0;
          std::memcpy(&bits, &values[first + i], sizeof bits);
          __nv_bfloat16_raw raw;
          raw.x = static_cast<unsigned short>(bits >> 16);
          slice[i] = raw;
        }
      });
      CUDA_CHECK(
          cudaMemcpy(buffer.get() + first, slice.data(), count * sizeof(Input), cudaMemcpyHostToDevice));
    }
    return buffer;
  }
}

} // namespace

bool launch_fits_int32(const LaunchPlan& launch, const MatmulShape& shape) {
  return fits_int32_indices(shape, count(launch.grid) * count(launch.block));
}

void print_launch(const LaunchPlan& launch, const MatmulShape& shape) {
  const long long blocks = count(launch.grid);
  const long long threads = count(launch.block);
  std::printf(
      "launch %s: grid %s blocks, block %s threads (%lld blocks x %lld threads), %zu bytes of "
      "shared memory per block\n",
      launch.name.c_str(), dims(launch.grid).c_str(), dims(launch.block).c_str(), blocks, threads,
      launch.shared_bytes);
  for (const std::string& note : launch.notes) std::printf("  %s\n", note.c_str());
  if (!launch.index_width_from_host)
    std::printf("  index arithmetic: 64-bit offsets whatever the problem\n");
  else
    std::printf("  index arithmetic: %s\n", launch_fits_int32(launch, shape)
                                                ? "32-bit (every index of this problem fits)"
                                                : "64-bit (an index of this problem passes 2^31)");
}

template <typename Input>
int run_matmul_stage(const MatmulStageOf<Input>& stage, int argc, char** argv) {
  // The element type of A and B decides the inputs, the tolerance, the peak and the yardstick.
  constexpr bool kBf16 = std::is_same_v<Input, __nv_bfloat16>;
  // 1. Parse the command line. Bad input stops here with exit code 2, before any GPU work, and so
  //    does a problem the stage cannot launch: the plan is made once every option is read.
  //    `--also` adds problems this process runs after the first, each as a run of its own would,
  //    and a list of `--params` runs them all once per parameter set.
  MatmulShape first;
  std::vector<MatmulShape> shapes;
  RunOptions run;
  bool plan_only = false;
  CommandLine cli(stage.name, stage.summary);
  add_shape_options(cli, first);
  add_more_shapes_option(cli, shapes);
  stage.add_options(cli);
  // A stage's `--params` may name several parameter sets: every problem runs with each in turn (the
  // tests check each set at its sizes in one process).
  const bool has_params = cli.has_option("params");
  if (has_params) cli.allow_list("params");
  const auto for_each_parameter_set = [&](const auto& body) {
    const std::vector<std::string> sets = has_params ? cli.list_values("params") : std::vector<std::string>{};
    if (sets.empty()) return body();
    for (const std::string& set : sets) {
      cli.set_value("params", set);
      body();
    }
  };
  add_run_options(cli, run, /*gpu=*/true);
  cli.add_flag("plan", &plan_only, "print the launch plan and exit, without touching a GPU");
  cli.add_validator([&] {
    shapes.insert(shapes.begin(), first);
    for_each_parameter_set([&] {
      for (const MatmulShape& shape : shapes) stage.plan(shape);
    });
  });
  parse_or_exit(cli, argc, argv);
  if (plan_only) {
    for_each_parameter_set([&] {
      for (const MatmulShape& shape : shapes) {
        std::printf("%s: C (%s) = A * B\n", stage.name.c_str(), to_string(shape).c_str());
        print_launch(stage.plan(shape), shape);
      }
    });
    return kExitPass;
  }

  // 2. Pick the GPU (exit 77 when there is none, or none new enough) and say what it is.
  const DeviceInfo device = pick_device(run.device);
  print_device_info(device);
  if (stage.min_compute_capability > 0)
    require_compute_capability(device, stage.min_compute_capability / 10, stage.min_compute_capability % 10,
                               stage.name, stage.needs, stage.exactly_that_capability);

  // Steps 3 to 9 for one problem; the exit code is the worst of the problems'.
  const auto run_problem = [&](const MatmulShape& shape) {
    const MatmulLaunchOf<Input> launch = stage.plan(shape);
    // 3. Generate A (m x k) and B (k x n) on the host: seeded, uniform in [-1, 1), not symmetric; for
    //    a bf16 stage rounded to bfloat16, so that the floats here are exactly the GPU's values.
    const auto generate = kBf16 ? random_bf16_matrix : random_matrix;
    const HostMatrix a = generate(shape.m, shape.k, run.seed, Operand::kA);
    const HostMatrix b = generate(shape.k, shape.n, run.seed, Operand::kB);
    std::printf("\n%s: C (%lld x %lld) = A (%lld x %lld) * B (%lld x %lld)\n", stage.name.c_str(),
                static_cast<long long>(shape.m), static_cast<long long>(shape.n),
                static_cast<long long>(shape.m), static_cast<long long>(shape.k),
                static_cast<long long>(shape.k), static_cast<long long>(shape.n));
    print_launch(launch, shape);

    // 4. Allocate device memory (after checking that it fits) and copy A and B over. The buffers
    //    free themselves when this problem is done.
    const std::size_t c_count = static_cast<std::size_t>(shape.m) * static_cast<std::size_t>(shape.n);
    const std::int64_t blocks = count(launch.grid);
    const std::size_t stamp_bytes =
        launch.block_clocks ? 2 * static_cast<std::size_t>(blocks) * sizeof(long long) : 0;
    require_device_memory(
        device, (a.size() + b.size()) * sizeof(Input) + c_count * sizeof(float) + stamp_bytes,
        "A, B and C" + std::string(launch.block_clocks ? " and the block clock stamps" : ""));
    DeviceBuffer<Input> d_a = upload<Input>(a); // not const: step 5 flips its signs and back
    const DeviceBuffer<Input> d_b = upload<Input>(b);
    DeviceBuffer<float> d_c(c_count);
    const BlockClocks clocks(launch.block_clocks ? blocks : 0);

    // 5. Launch: warm-up runs, then each timed run between its own pair of CUDA events, all on -A;
    //    then A again, C poisoned, and one more launch, the one step 7 checks. So no launch can hide
    //    another's mistake: an element the checked launch does not write stays NaN, and whatever a
    //    launch leaves behind for the next (a buffer or a flag it should have cleared) holds values
    //    of the other sign, which the check catches.
    const MatmulArgsOf<Input> args{d_a.get(),
                                   d_b.get(),
                                   d_c.get(),
                                   shape.m,
                                   shape.n,
                                   shape.k,
                                   clocks.device_stamps(),
                                   launch_fits_int32(launch, shape)};
    negate(d_a);
    const TimingStats time = time_with_events(run, [&] { launch.run(args); });
    negate(d_a);
    d_c.poison();
    launch.run(args);

    // 6. Copy C back to the host, into memory poisoned first (on several threads when C is large:
    //    the first touch of gigabytes is the slow part), for a full check. A sampled check leaves C
    //    where it is (step 7): a C of 2^31 elements is 8.6 GB, seconds to copy and to touch.
    const CheckMode check = resolved_check(run.check, shape);
    HostMatrix c;
    if (check == CheckMode::kFull) {
      c = poisoned_matrix(c_count);
      d_c.to_host(c);
    }

    // 7. Verify C against the CPU reference accumulated in double: every element, or a sample, the
    //    sample checked on the GPU's C (every element scanned there for unwritten and non-finite
    //    values, the sampled ones copied back and compared: device_check.cuh).
    Measurement kernel;
    kernel.name = launch.name;
    kernel.what = launch.what;
    kernel.time = time;
    kernel.rate = matmul_gflops(shape, time.median_ms);
    // The arithmetic decides the peak and the tolerance: the tensor cores', or FP32 multiply-adds.
    const bool tensor_cores = kBf16 && stage.tensor_core_sums;
    const double peak = tensor_cores ? device.peak_bf16_gflops : device.peak_fp32_gflops;
    kernel.pct_peak = peak > 0 ? 100.0 * kernel.rate / peak : NAN;
    const Accumulation accumulation = tensor_cores ? Accumulation::kTensorCore : Accumulation::kFp32;
    kernel.check = check == CheckMode::kSample
                       ? verify_matmul_on_device(d_c.get(), a, b, shape, run.seed, accumulation, true)
                       : verify_matmul(a, b, c, shape, check, run.seed, accumulation);

    // 8. The yardstick, on the same device buffers, in the same run: cuBLAS SGEMM in strict FP32, or
    //    for bf16 inputs cuBLAS with the same types (bf16 A and B, FP32 sums and C). Only the elements
    //    the sampled check picks come back from its C: it is the yardstick, checked to be the same
    //    product, not the lesson (and a C of 2^31 elements is 8.6 GB to copy).
    Measurement cublas;
    if constexpr (kBf16)
      cublas = measure_cublas_bf16_gemm(run, shape, device, d_a.get(), d_b.get(), d_c.get(), a, b);
    else
      cublas = measure_cublas_sgemm(run, shape, device, d_a.get(), d_b.get(), d_c.get(), a, b);
    kernel.pct_yardstick = 100.0 * kernel.rate / cublas.rate;

    // 9. Report: the table, the JSON object with --json, and the RESULT line; the exit code says
    //    whether the check passed.
    Report report(stage.name, to_string(shape), "GFLOP/s", "cuBLAS");
    report.add(cublas);
    report.add(kernel);
    if (kBf16) report.add_field("inputs", "bf16"); // the FP32 stages' reports name no type: fp32

    if (launch.block_clocks) {
      // The original tutorial's clock: max(end) - min(start) over the blocks' stamps of the last
      // launch, beside the longest single block and the event time.
      const ClockSpan span = clocks.read(device);
      print_block_clocks(span, device, time.median_ms);
      report.add_field("clock64_span_ms", format_number(span.ms, "%.4g"));
      report.add_field("clock64_longest_block_ms", format_number(span.longest_block_ms, "%.4g"));
    }
    return report.finish(run);
  };
  int code = kExitPass;
  for_each_parameter_set([&] {
    for (const MatmulShape& shape : shapes) code = std::max(code, run_problem(shape));
  });
  return code;
}

/// run_matmul_stage() for the FP32 stages (02-04, 07-11): A, B and C in FP32.
template int run_matmul_stage<float>(const MatmulStageOf<float>&, int, char**);
/// run_matmul_stage() for the bf16 stages (12 on): A and B in bfloat16, C in FP32.
template int run_matmul_stage<__nv_bfloat16>(const MatmulStageOf<__nv_bfloat16>&, int, char**);

} // namespace cs
