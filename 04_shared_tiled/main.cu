// 04_shared_tiled: each block stages its inputs in shared memory, one tile at a time.
//
// Stage 03's block owns a tile of C, and its threads read the same rows of A and columns of B over
// and over from global memory. Here the tile is square, TILE x TILE (--tile 8, 16 or 32), and the
// block walks along K in steps of TILE: every thread loads one element of an A tile and one of a B
// tile into shared memory, a barrier, every thread adds the TILE products it needs from there, a
// second barrier before the tiles are overwritten. Each element loaded from global memory now
// serves TILE threads: global loads per element of C drop from 2K to 2K/TILE.
/// @file
/// @brief Stage 04: shared-memory tiles walking along K (chapter: 04_shared_tiled/README.md).
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
constexpr char kStage[] = "04_shared_tiled";
/// One sentence for --help.
constexpr char kSummary[] =
    "C = A*B on the GPU, each block walking along K through tiles of A and B in shared memory.";

/// Most threads in one block. This and the grid limits below hold on every GPU CUDA 13 supports.
constexpr int kMaxThreadsPerBlock = 1024;
/// Most blocks along x of a grid (2^31 - 1).
constexpr std::int64_t kMaxGridX = 2147483647;
/// Most blocks along y of a grid.
constexpr std::int64_t kMaxGridY = 65535;

/// C = A·B with one thread per element of C, its inputs staged through shared memory in square
/// tiles of kTile × kTile (A is m×k, B is k×n, C is m×n, all row-major).
///
/// Block (blockIdx.x, blockIdx.y) owns a kTile × kTile tile of C and needs the kTile rows of A and
/// kTile columns of B through it. It walks along K in steps of kTile: each thread loads one element
/// of the A tile and one of the B tile (zero where the tile overhangs A or B, which adds nothing),
/// the block waits until both tiles are complete, each thread accumulates its kTile products from
/// shared memory, and the block waits again before the next tiles overwrite these. Every thread
/// runs every step, even one whose element lies outside C: it still loads its share of the tiles,
/// and a barrier must be reached by every thread of the block. Thread 0 of each block stamps
/// clock64() into @p block_stamps at its start and end (null: no stamps).
template <int kTile>
__global__ void __launch_bounds__((kTile * kTile))
    matmul_shared_tiled(const float* a, const float* b, float* c, std::int64_t m, std::int64_t n,
                        std::int64_t k, long long* block_stamps) {
  // LAB 04.tiles: two kTile x kTile tiles in shared memory, one for A and one for B
  __shared__ float tile_a[kTile][kTile]; // A[this block's rows][k_tile .. k_tile + kTile)
  __shared__ float tile_b[kTile][kTile]; // B[k_tile .. k_tile + kTile)[this block's columns]
  // END LAB
  cs::stamp_block_start(block_stamps);
  // LAB 04.tile_loop: each k-tile: load an element of each tile (0 past an edge), barrier, multiply, barrier
  const int local_row = threadIdx.y;
  const int local_col = threadIdx.x;
  // 64-bit indices: m·n, m·k and k·n can all pass 2^31.
  const std::int64_t row = static_cast<std::int64_t>(blockIdx.y) * kTile + local_row;
  const std::int64_t col = static_cast<std::int64_t>(blockIdx.x) * kTile + local_col;
  const bool row_in_c = row < m;
  const bool col_in_c = col < n;
  // The element this thread loads moves kTile columns along A and kTile rows down B per k-tile:
  // walk two pointers instead of recomputing 64-bit indices, so each step of the loop is two
  // pointer adds (measured at 4096^3 on the H200: about 11% faster, the same sums to the bit).
  // A thread whose row or column lies outside C walks row or column 0 and never loads from it.
  const float* a_next = a + (row_in_c ? row : 0) * k + local_col;
  const float* b_next = b + static_cast<std::int64_t>(local_row) * n + (col_in_c ? col : 0);
  const std::int64_t b_step = static_cast<std::int64_t>(kTile) * n;
  float sum = 0.0f;
  for (std::int64_t k_tile = 0; k_tile < k; k_tile += kTile) {
    // Each thread loads one element of each tile; past the edge of A or B it stores a zero.
    tile_a[local_row][local_col] = (row_in_c && k_tile + local_col < k) ? *a_next : 0.0f;
    tile_b[local_row][local_col] = (k_tile + local_row < k && col_in_c) ? *b_next : 0.0f;
    // Barrier 1: both tiles are complete before anyone reads them.
    __syncthreads();
    // Row local_row of the A tile times column local_col of the B tile, all from shared memory.
#pragma unroll
    for (int i = 0; i < kTile; ++i) sum += tile_a[local_row][i] * tile_b[i][local_col];
    // Barrier 2: everyone has finished reading these tiles before the next step overwrites them.
    __syncthreads();
    a_next += kTile;
    b_next += b_step;
  }
  if (row_in_c && col_in_c) c[row * n + col] = sum;
  // END LAB
  cs::stamp_block_end(block_stamps);
}

/// The stage's own option: the width of the square tiles.
struct StageOptions {
  int tile = 32; ///< --tile: 8, 16 or 32; a block is tile x tile threads
};

/// How the kernel is launched for one problem, and the names the report gives it.
struct LaunchPlan {
  dim3 grid;        ///< blocks in the grid
  dim3 block;       ///< threads in each block
  std::string name; ///< the variant's name in the report
  std::string what; ///< what the variant is, for the report
  int tile = 0;     ///< the tile width, which picks the kernel's instantiation
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

/// Plans the launch: ceil(n / tile) x ceil(m / tile) blocks of tile x tile threads, columns of C
/// along x and rows along y. Throws UsageError when the grid would be too large to launch.
LaunchPlan plan_launch(const StageOptions& options, const cs::MatmulShape& shape) {
  const std::int64_t blocks_x = (shape.n + options.tile - 1) / options.tile;
  const std::int64_t blocks_y = (shape.m + options.tile - 1) / options.tile;
  require_launchable(blocks_x, blocks_y);
  LaunchPlan plan;
  plan.grid = dim3(static_cast<unsigned>(blocks_x), static_cast<unsigned>(blocks_y));
  plan.block = dim3(static_cast<unsigned>(options.tile), static_cast<unsigned>(options.tile));
  plan.name = "tiled" + std::to_string(options.tile);
  plan.what = "one thread per element of C, " + std::to_string(options.tile) + "x" +
              std::to_string(options.tile) + " tiles of A and B in shared memory";
  plan.tile = options.tile;
  return plan;
}

/// Reads --tile: 8, 16 or 32, the tile widths the kernel is instantiated for (32 x 32 = 1024
/// threads is the most a block may have). Throws UsageError otherwise.
void parse_tile(const std::string& text, StageOptions& options) {
  static_assert(32 * 32 <= kMaxThreadsPerBlock, "the widest tile must fit in one block");
  if (text != "8" && text != "16" && text != "32")
    throw cs::UsageError("--tile must be one of 8|16|32, got '" + text + "'");
  options.tile = std::stoi(text);
}

/// Declares --tile on @p cli, and a check, run once every option is read, that the grid it
/// needs for @p shape can be launched (so a bad combination is rejected before any GPU work).
void add_stage_options(cs::CommandLine& cli, StageOptions& options, const cs::MatmulShape& shape) {
  cli.add_custom("tile", "8|16|32", "32",
                 "width of the square tiles of A, B and C; a block is TILE x TILE threads",
                 [&options](const std::string& value) { parse_tile(value, options); });
  cli.add_validator([&options, &shape] { plan_launch(options, shape); });
}

/// Prints the launch configuration and how many global loads each element of C costs.
void print_launch_plan(const LaunchPlan& plan, const cs::MatmulShape& shape) {
  std::printf(
      "launch: %u x %u blocks (x across the columns of C, y down its rows) of %u x %u "
      "threads, each owning a %u-row x %u-column tile of C\n",
      plan.grid.x, plan.grid.y, plan.block.x, plan.block.y, plan.block.y, plan.block.x);
  const std::int64_t k_tiles = (shape.k + plan.tile - 1) / plan.tile;
  std::printf("shared memory per block: 2 tiles x %d x %d floats = %zu bytes; %lld steps along K\n",
              plan.tile, plan.tile, 2 * sizeof(float) * plan.tile * plan.tile,
              static_cast<long long>(k_tiles));
  std::printf("global loads per element of C: 2K/TILE = %.4g (2 per step: %lld), naive 2K = %lld\n",
              2.0 * static_cast<double>(shape.k) / plan.tile, static_cast<long long>(2 * k_tiles),
              static_cast<long long>(2 * shape.k));
}

/// Launches the kernel instantiated for the plan's tile width and checks the launch.
void launch_matmul(const LaunchPlan& plan, const float* a, const float* b, float* c,
                   const cs::MatmulShape& shape, long long* block_stamps) {
  switch (plan.tile) {
    case 8:
      matmul_shared_tiled<8><<<plan.grid, plan.block>>>(a, b, c, shape.m, shape.n, shape.k, block_stamps);
      break;
    case 16:
      matmul_shared_tiled<16><<<plan.grid, plan.block>>>(a, b, c, shape.m, shape.n, shape.k, block_stamps);
      break;
    case 32:
      matmul_shared_tiled<32><<<plan.grid, plan.block>>>(a, b, c, shape.m, shape.n, shape.k, block_stamps);
      break;
  }
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
