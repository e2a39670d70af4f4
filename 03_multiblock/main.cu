// 03_multiblock: the same arithmetic, organised as tiles of C.
//
// Stage 02 numbered its threads along the rows of C. Here the grid and the blocks are 2-D: block
// (x, y) owns a rows x cols rectangle of C (--block, 16x16 by default), and thread (x, y) in it
// computes one element of that rectangle, with the same k-loop as before. It is a reorganisation,
// not a speed-up: every thread still reads a whole row of A and column of B from global memory.
// But a block that owns a tile of C is the shape stage 04 needs to share its inputs.
/// @file
/// @brief Stage 03: a 2-D grid of 2-D blocks, a tile of C each (chapter: 03_multiblock/README.md).
#include "cli.hpp"
#include "cublas_sgemm.cuh"
#include "cuda_check.cuh"
#include "device_info.cuh"
#include "gpu_timer.cuh"
#include "matrix.hpp"
#include "report.hpp"
#include "verify.hpp"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

/// The stage's name: its directory, its program and the report's stage.
constexpr char kStage[] = "03_multiblock";
/// One sentence for --help.
constexpr char kSummary[] =
    "C = A*B on the GPU, one thread per element of C, each 2-D block owning a tile of C.";

/// Most threads in one block. This and the grid limits below hold on every GPU CUDA 13 supports.
constexpr int kMaxThreadsPerBlock = 1024;
/// Most blocks along x of a grid (2^31 - 1).
constexpr std::int64_t kMaxGridX = 2147483647;
/// Most blocks along y of a grid.
constexpr std::int64_t kMaxGridY = 65535;

/// C = A·B with one thread per element of C (A is m×k, B is k×n, C is m×n, all row-major).
///
/// Block (blockIdx.x, blockIdx.y) owns the blockDim.y × blockDim.x tile of C whose top-left
/// element is C[blockIdx.y·blockDim.y][blockIdx.x·blockDim.x]; thread (threadIdx.x, threadIdx.y)
/// computes the element threadIdx.y rows down and threadIdx.x columns across. Columns run along
/// x, so a warp still reads consecutive elements of B. The grid is rounded up to whole tiles; the
/// threads outside C do no work. Thread 0 of each block stamps clock64() into @p block_stamps at
/// its start and end (null: no stamps).
///
/// @tparam Index `int` when every index of the problem fits in 32 bits, else `std::int64_t` (m·n,
///         m·k and k·n can pass 2^31): 32-bit index arithmetic is cheaper on a GPU, and the host
///         picks it whenever it is safe (measured at 4096^3 on the H200: about 1.6x faster).
template <typename Index>
__global__ void matmul_multiblock(const float* a, const float* b, float* c, Index m, Index n, Index k,
                                  long long* block_stamps) {
  cs::stamp_block_start(block_stamps);
  // LAB 03.kernel: row from the y indices, column from the x ones; the same k-loop, only inside C
  const Index row = static_cast<Index>(blockIdx.y) * static_cast<Index>(blockDim.y) + static_cast<Index>(threadIdx.y);
  const Index col = static_cast<Index>(blockIdx.x) * static_cast<Index>(blockDim.x) + static_cast<Index>(threadIdx.x);
  if (row < m && col < n) {
    float sum = 0.0f;
    for (Index i = 0; i < k; ++i) sum += a[row * k + i] * b[i * n + col];
    c[row * n + col] = sum;
  }
  // END LAB
  cs::stamp_block_end(block_stamps);
}

/// The stage's own option: the shape of the tile of C each block owns.
struct StageOptions {
  int block_rows = 16; ///< --block ROWSxCOLS: rows of the tile (threads along y)
  int block_cols = 16; ///< --block ROWSxCOLS: columns of the tile (threads along x)
};

/// How the kernel is launched for one problem, and the names the report gives it.
struct LaunchPlan {
  dim3 grid;        ///< blocks in the grid
  dim3 block;       ///< threads in each block
  std::string name; ///< the variant's name in the report
  std::string what; ///< what the variant is, for the report
  bool int32_indices = false; ///< every index fits in 32 bits: launch the kernel's `int` instance
  /// Blocks in the grid: one pair of clock64 stamps each.
  std::int64_t blocks() const { return static_cast<std::int64_t>(grid.x) * grid.y * grid.z; }
};

/// Throws UsageError when a grid of @p blocks_x × @p blocks_y blocks is more than CUDA can launch.
void require_launchable(std::int64_t blocks_x, std::int64_t blocks_y) {
  if (blocks_x <= kMaxGridX && blocks_y <= kMaxGridY) return;
  throw cs::UsageError("this problem needs a grid of " + std::to_string(blocks_x) + " x " +
                       std::to_string(blocks_y) +
                       " blocks, more than CUDA allows (x <= " + std::to_string(kMaxGridX) +
                       ", y <= " + std::to_string(kMaxGridY) + "); use larger blocks or a smaller problem");
}

/// Plans the launch: ceil(n / cols) x ceil(m / rows) blocks of cols x rows threads, columns of C
/// along x and rows along y. Throws UsageError when the grid would be too large to launch.
LaunchPlan plan_launch(const StageOptions& options, const cs::MatmulShape& shape) {
  // LAB 03.grid: enough blocks to cover C: its columns along x, its rows along y, the last ones partly
  // LAB-STUB: const std::int64_t blocks_x = 1;
  // LAB-STUB: const std::int64_t blocks_y = 1;
  const std::int64_t blocks_x = (shape.n + options.block_cols - 1) / options.block_cols;
  const std::int64_t blocks_y = (shape.m + options.block_rows - 1) / options.block_rows;
  // END LAB
  require_launchable(blocks_x, blocks_y);
  LaunchPlan plan;
  plan.grid = dim3(static_cast<unsigned>(blocks_x), static_cast<unsigned>(blocks_y));
  plan.block = dim3(static_cast<unsigned>(options.block_cols), static_cast<unsigned>(options.block_rows));
  plan.name = "multiblock";
  plan.what = "one thread per element of C, 2-D blocks of " + std::to_string(options.block_rows) + "x" +
              std::to_string(options.block_cols) + " threads";
  plan.int32_indices = cs::fits_int32_indices(shape);
  return plan;
}

/// Reads --block ROWSxCOLS (e.g. 16x16, 8x32) into @p options: two integers, each at least 1,
/// at most kMaxThreadsPerBlock threads in all. Throws UsageError otherwise.
void parse_block_shape(const std::string& text, StageOptions& options) {
  const cs::UsageError bad_shape("--block must be ROWSxCOLS, two integers >= 1 with ROWS*COLS <= " +
                                 std::to_string(kMaxThreadsPerBlock) + ", got '" + text + "'");
  const std::size_t times = text.find('x');
  if (times == std::string::npos) throw bad_shape;
  std::int64_t rows = 0, cols = 0;
  try {
    rows = cs::parse_integer("block", text.substr(0, times), 1, kMaxThreadsPerBlock);
    cols = cs::parse_integer("block", text.substr(times + 1), 1, kMaxThreadsPerBlock);
  } catch (const cs::UsageError&) {
    throw bad_shape;
  }
  if (rows * cols > kMaxThreadsPerBlock) throw bad_shape;
  options.block_rows = static_cast<int>(rows);
  options.block_cols = static_cast<int>(cols);
}

/// Declares --block on @p cli, and a check, run once every option is read, that the grid it
/// needs for @p shape can be launched (so a bad combination is rejected before any GPU work).
void add_stage_options(cs::CommandLine& cli, StageOptions& options, const cs::MatmulShape& shape) {
  cli.add_custom("block", "ROWSxCOLS", "16x16",
                 "rows x columns of the tile of C a block owns, one thread each [product 1.." +
                     std::to_string(kMaxThreadsPerBlock) + "]",
                 [&options](const std::string& value) { parse_block_shape(value, options); });
  cli.add_validator([&options, &shape] { plan_launch(options, shape); });
}

/// Prints the launch configuration and how many global loads each element of C costs.
void print_launch_plan(const LaunchPlan& plan, const cs::MatmulShape& shape) {
  std::printf(
      "launch: %u x %u blocks (x across the columns of C, y down its rows) of %u x %u "
      "threads, each owning a %u-row x %u-column tile of C\n",
      plan.grid.x, plan.grid.y, plan.block.x, plan.block.y, plan.block.y, plan.block.x);
  std::printf(
      "global loads per element of C: 2K = %lld (a row of A and a column of B, no reuse "
      "but what the caches catch)\n",
      static_cast<long long>(2 * shape.k));
  std::printf("index arithmetic: %s\n", plan.int32_indices ? "32-bit (every index of this problem fits)"
                                                             : "64-bit (an index of this problem passes 2^31)");
}

/// Launches the kernel as planned and checks the launch.
void launch_matmul(const LaunchPlan& plan, const float* a, const float* b, float* c,
                   const cs::MatmulShape& shape, long long* block_stamps) {
  if (plan.int32_indices)
    matmul_multiblock<int><<<plan.grid, plan.block>>>(a, b, c, static_cast<int>(shape.m), static_cast<int>(shape.n),
                                                      static_cast<int>(shape.k), block_stamps);
  else
    matmul_multiblock<std::int64_t><<<plan.grid, plan.block>>>(a, b, c, shape.m, shape.n, shape.k, block_stamps);
  CUDA_CHECK_LAUNCH();
}

/// The host flow: parse, pick the GPU, generate, allocate and copy, warm up and time, copy back,
/// verify, measure the cuBLAS yardstick, report.
int main(int argc, char** argv) {
  // 1. Parse the command line: bad input, including a launch CUDA cannot make, stops here (exit 2).
  cs::MatmulShape shape;
  cs::RunOptions run;
  StageOptions options;
  cs::CommandLine cli(kStage, kSummary);
  cs::add_shape_options(cli, shape);
  add_stage_options(cli, options, shape);
  cs::add_run_options(cli, run, /*gpu=*/true);
  cs::parse_or_exit(cli, argc, argv);
  const LaunchPlan plan = plan_launch(options, shape);

  // 2. Pick the GPU (exit 77 without one) and say what it is.
  const cs::DeviceInfo device = cs::pick_device(run.device);
  cs::print_device_info(device);

  // 3. Generate A (m x k) and B (k x n): seeded, uniform in [-1, 1), not symmetric.
  const std::vector<float> a = cs::random_matrix(shape.m, shape.k, run.seed, cs::Operand::kA);
  const std::vector<float> b = cs::random_matrix(shape.k, shape.n, run.seed, cs::Operand::kB);
  std::printf("\n%s: C (%lld x %lld) = A (%lld x %lld) * B (%lld x %lld)\n", kStage,
              static_cast<long long>(shape.m), static_cast<long long>(shape.n),
              static_cast<long long>(shape.m), static_cast<long long>(shape.k),
              static_cast<long long>(shape.k), static_cast<long long>(shape.n));
  print_launch_plan(plan, shape);

  // 4. Allocate on the device (after checking it fits) and copy A and B over.
  const std::size_t a_bytes = a.size() * sizeof(float);
  const std::size_t b_bytes = b.size() * sizeof(float);
  const std::size_t c_count = static_cast<std::size_t>(shape.m * shape.n);
  const std::size_t c_bytes = c_count * sizeof(float);
  const std::size_t stamp_bytes = 2 * static_cast<std::size_t>(plan.blocks()) * sizeof(long long);
  cs::require_device_memory(device, a_bytes + b_bytes + c_bytes + stamp_bytes,
                            "A, B, C and the block clock stamps");
  float* d_a = nullptr;
  float* d_b = nullptr;
  float* d_c = nullptr;
  CUDA_CHECK(cudaMalloc(&d_a, a_bytes));
  CUDA_CHECK(cudaMalloc(&d_b, b_bytes));
  CUDA_CHECK(cudaMalloc(&d_c, c_bytes));
  CUDA_CHECK(cudaMemcpy(d_a, a.data(), a_bytes, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(d_b, b.data(), b_bytes, cudaMemcpyHostToDevice));
  const cs::BlockClocks clocks(plan.blocks());

  // 5. Warm up, then time each repetition between its own events. C is poisoned first, so an
  //    element no thread writes stays NaN and fails the check.
  CUDA_CHECK(cudaMemset(d_c, cs::kPoisonByte, c_bytes));
  const cs::TimingStats time =
      cs::time_with_events(run, [&] { launch_matmul(plan, d_a, d_b, d_c, shape, clocks.device_stamps()); });
  // The seeds' clock: max(end) - min(start) over the blocks' stamps of the last launch.
  const cs::ClockSpan clock_span = clocks.read(device);

  // 6. Copy C back.
  std::vector<float> c(c_count);
  CUDA_CHECK(cudaMemcpy(c.data(), d_c, c_bytes, cudaMemcpyDeviceToHost));

  // 7. Verify against the CPU reference accumulated in double (full or sampled, per --check).
  cs::Measurement kernel;
  kernel.name = plan.name;
  kernel.what = plan.what;
  kernel.time = time;
  kernel.rate = cs::matmul_gflops(shape, time.median_ms);
  kernel.pct_peak = device.peak_fp32_gflops > 0 ? 100.0 * kernel.rate / device.peak_fp32_gflops : NAN;
  kernel.check = cs::verify_matmul(a, b, c, shape, run.check, run.seed);

  // 8. The yardstick: cuBLAS SGEMM in strict FP32 on the same device buffers, in the same run.
  const cs::Measurement cublas = cs::measure_cublas_sgemm(run, shape, device, d_a, d_b, d_c, a, b);
  kernel.pct_yardstick = 100.0 * kernel.rate / cublas.rate;
  CUDA_CHECK(cudaFree(d_a));
  CUDA_CHECK(cudaFree(d_b));
  CUDA_CHECK(cudaFree(d_c));

  // 9. Report: the clock64 figure beside the event time, the table, the RESULT line.
  cs::print_block_clocks(clock_span, device, time.median_ms);
  cs::Report report(kStage, cs::to_string(shape), "GFLOP/s", "cuBLAS");
  report.add(cublas);
  report.add(kernel);
  report.add_field("clock64_span_ms", cs::format_number(clock_span.ms, "%.4g"));
  report.add_field("clock64_longest_block_ms", cs::format_number(clock_span.longest_block_ms, "%.4g"));
  return report.finish(run);
}
