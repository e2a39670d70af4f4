// 07_register_tile_1d: each thread computes a column of several elements of C, in registers.
//
// Stage 04's threads read two floats from shared memory for every multiply-add. Here a block owns a
// 64 x 64 tile of C and each thread a column of THREAD vertically adjacent elements of it (--params:
// 8, 16 or 32), kept in registers: per value along K it reads one value of B from shared memory into a
// register and uses it THREAD times. The block walks along K in steps of 64 / THREAD, so that each of
// its 64 x 64 / THREAD threads still loads exactly one element of the A tile and one of the B tile.
//
// Run:  07_register_tile_1d --size 4096 --params 64x64x4/16   (the default: 16 elements of C per thread)
//       07_register_tile_1d --size 4096 --params 64x64x8/8    (8 per thread, twice the threads per block)
//       07_register_tile_1d --size 4096 --params 64x64x2/32   (32 per thread, steps of 2 along K)
//       (no options: the original tutorial's 1000 x 1000 x 1000; --plan: print the launch and exit, no
//       GPU needed; --help: every option)
// Everything but the kernel and its launch is the host flow every matmul stage shares
// (common/matmul_flow.cu: parse, generate, copy, time, verify, cuBLAS, report).
/// @file
/// @brief Stage 07: 1-D register tiling, a column of C per thread (chapter: 07_register_tile_1d/README.md).
#include "kernel_table.cuh"
#include "matmul_flow.cuh"

#include <cstdint>
#include <string>

// This stage's own names (every matmul stage has a StageOptions and a plan_launch of its own).
namespace stage07 {

/// C = A·B where each thread computes kThreadM vertically adjacent elements of one column of C
/// (A is m×k, B is k×n, C is m×n, all row-major).
///
/// Block (blockIdx.x, blockIdx.y) owns the kBlockM × kBlockN tile of C whose top-left element is
/// C[blockIdx.y·kBlockM][blockIdx.x·kBlockN], and walks along K in steps of kBlockK, staging a
/// kBlockM × kBlockK tile of A and a kBlockK × kBlockN tile of B in shared memory; every thread loads
/// one element of each (zero past an edge) and reaches both barriers of every step. Thread t owns
/// rows (t / kBlockN)·kThreadM .. + kThreadM of column t % kBlockN of the block's tile: it reads each
/// value of B it needs from shared memory once and uses it kThreadM times, from a register. Sizes and
/// offsets are 64-bit whatever the problem (m·k, k·n and m·n can pass 2^31).
///
/// @tparam kBlockM rows of C per block.
/// @tparam kBlockN columns of C per block.
/// @tparam kBlockK the step along K: columns of the A tile, rows of the B tile.
/// @tparam kThreadM rows of C per thread, in one column of the block's tile (a block is 1-D).
template <int kBlockM, int kBlockN, int kBlockK, int kThreadM>
__global__ void __launch_bounds__(kBlockM / kThreadM * kBlockN)
    matmul_1d_register_tiling(const float* a, const float* b, float* c, std::int64_t m, std::int64_t n,
                              std::int64_t k) {
  constexpr int kThreads = kBlockM / kThreadM * kBlockN;
  static_assert(kBlockM % kThreadM == 0, "a thread's rows must tile the block's rows");
  static_assert(kThreads == kBlockM * kBlockK && kThreads == kBlockK * kBlockN,
                "each thread loads exactly one element of each tile");
  __shared__ float tile_a[kBlockM][kBlockK]; // A[this block's rows][k_tile .. k_tile + kBlockK)
  __shared__ float tile_b[kBlockK][kBlockN]; // B[k_tile .. k_tile + kBlockK)[this block's columns]

  // Computing: this thread's kThreadM rows of one column of the block's tile of C.
  const int thread_col = threadIdx.x % kBlockN;
  const int thread_row = threadIdx.x / kBlockN;
  // Loading: one element of the A tile and one of the B tile, each in its own layout.
  const int a_load_row = threadIdx.x / kBlockK;
  const int a_load_col = threadIdx.x % kBlockK;
  const int b_load_row = threadIdx.x / kBlockN;
  const int b_load_col = threadIdx.x % kBlockN;

  // The offsets are computed once and then walked: a pointer into A and one into B, each moving one
  // step along K per tile. A load outside A or B walks row or column 0 and never dereferences it.
  const std::int64_t block_row = static_cast<std::int64_t>(blockIdx.y) * kBlockM;
  const std::int64_t block_col = static_cast<std::int64_t>(blockIdx.x) * kBlockN;
  const std::int64_t a_row = block_row + a_load_row;
  const std::int64_t b_col = block_col + b_load_col;
  const bool a_row_in_a = a_row < m;
  const bool b_col_in_b = b_col < n;
  const float* a_next = a + (a_row_in_a ? a_row : 0) * k + a_load_col;
  const float* b_next = b + static_cast<std::int64_t>(b_load_row) * n + (b_col_in_b ? b_col : 0);
  const std::int64_t b_step = static_cast<std::int64_t>(kBlockK) * n;

  float sums[kThreadM] = {}; // this thread's kThreadM elements of C, in registers
  // k_tile is an int: k is at most 65536, and the 64-bit offsets live in the walked pointers.
  for (int k_tile = 0; k_tile < k; k_tile += kBlockK) {
    // Each thread loads one element of each tile: a zero past the edge of A or B.
    tile_a[a_load_row][a_load_col] = (a_row_in_a && k_tile + a_load_col < k) ? *a_next : 0.0f;
    tile_b[b_load_row][b_load_col] = (k_tile + b_load_row < k && b_col_in_b) ? *b_next : 0.0f;
    // Barrier 1: both tiles are complete before anyone reads them.
    __syncthreads();
    // LAB 07.thread_tile: for each i of the step, one value of B into a register, kThreadM products with it
#pragma unroll
    for (int i = 0; i < kBlockK; ++i) {
      // One read of B from shared memory serves kThreadM multiply-adds.
      const float b_value = tile_b[i][thread_col];
#pragma unroll
      for (int r = 0; r < kThreadM; ++r) sums[r] += tile_a[thread_row * kThreadM + r][i] * b_value;
    }
    // END LAB
    // Barrier 2: everyone has finished reading these tiles before the next step overwrites them.
    __syncthreads();
    a_next += kBlockK;
    b_next += b_step;
  }
  const std::int64_t col = block_col + thread_col;
#pragma unroll
  for (int r = 0; r < kThreadM; ++r) {
    const std::int64_t row = block_row + thread_row * kThreadM + r;
    if (row < m && col < n) c[row * n + col] = sums[r];
  }
}

/// The kernel's instances, one per `--params` set.
const cs::KernelTable<void (*)(const float*, const float*, float*, std::int64_t, std::int64_t, std::int64_t)>
    kKernels = {
        {"64x64x4/16", matmul_1d_register_tiling<64, 64, 4, 16>},
        {"64x64x8/8", matmul_1d_register_tiling<64, 64, 8, 8>},
        {"64x64x2/32", matmul_1d_register_tiling<64, 64, 2, 32>},
};

/// The stage's own option.
struct StageOptions {
  std::string params = "64x64x4/16"; ///< `--params`: block rows x columns x step along K / rows per thread
};

/// Declares `--params` on @p cli: the parameter sets the kernel is instantiated for.
void add_stage_options(cs::CommandLine& cli, StageOptions& options) {
  cli.add_choice("params", &options.params, kKernels.params(),
                 "block tile of C (rows x columns) x step along K / rows of C per thread");
}

/// Plans the launch: ceil(n / BN) x ceil(m / BM) blocks, each a 1-D block of threads.
/// <!-- LAB-ANSWER 07.block: How many threads does a block need, at TM elements of C each? -->
/// A block is BM / TM x BN threads.
/// <!-- END LAB-ANSWER -->
cs::MatmulLaunch plan_launch(const StageOptions& options, const cs::MatmulShape& shape) {
  const std::string params = options.params;
  const cs::TileSizes tile = cs::tile_sizes_of(params, "BMxBNxBK/TM");
  const std::int64_t blocks_x = (shape.n + tile.block_n - 1) / tile.block_n;
  const std::int64_t blocks_y = (shape.m + tile.block_m - 1) / tile.block_m;
  const dim3 grid = cs::grid_of(blocks_x, blocks_y);
  // LAB 07.block: fewer threads than the block's tile of C has elements: TM elements of a column each
  // LAB-STUB: const dim3 block(1);
  const dim3 block(static_cast<unsigned>(tile.block_m / tile.thread_m * tile.block_n));
  // END LAB
  const std::int64_t k_steps = (shape.k + tile.block_k - 1) / tile.block_k;
  // Each block loads its BM rows of A and BN columns of B once, BK at a time, for BM x BN elements of C.
  const std::int64_t loads_per_element =
      (k_steps * tile.block_k * (tile.block_m + tile.block_n) + tile.block_m * tile.block_n / 2) /
      (tile.block_m * tile.block_n);
  cs::MatmulLaunch launch;
  launch.name = "register1d_" + params;
  launch.what = "a column of " + std::to_string(tile.thread_m) + " elements of C per thread, in registers";
  launch.grid = grid;
  launch.block = block;
  launch.shared_bytes = sizeof(float) * tile.block_k * (tile.block_m + tile.block_n);
  launch.notes = {
      "block (x, y) owns a " + std::to_string(tile.block_m) + "-row x " + std::to_string(tile.block_n) +
          "-column tile of C; thread t computes " + std::to_string(tile.thread_m) +
          " elements of column t % " + std::to_string(tile.block_n) + ", from row " +
          std::to_string(tile.thread_m) + " x (t / " + std::to_string(tile.block_n) + ") down",
      "shared-memory reads per value along K: 1 of B (into a register) + " + std::to_string(tile.thread_m) +
          " of A for " + std::to_string(tile.thread_m) +
          " multiply-adds (stage 04: 2 reads per multiply-add)",
      "global loads per element of C: about K/" + std::to_string(tile.block_m) + " + K/" +
          std::to_string(tile.block_n) + " = " + std::to_string(loads_per_element) + ", in steps of " +
          std::to_string(tile.block_k) +
          " along K (stage 04, tile 32: 2K/32 = " + std::to_string(2 * ((shape.k + 31) / 32)) + ")"};
  launch.index_width_from_host = false;
  launch.run = [=](const cs::MatmulArgs& p) {
    const auto kernel = kKernels.find(params, true);
    kernel<<<grid, block>>>(p.a, p.b, p.c, p.m, p.n, p.k);
    CUDA_CHECK_LAUNCH();
  };
  return launch;
}

} // namespace stage07

/// Hands the kernel's launch and the stage's option to the host flow every matmul stage shares.
int main(int argc, char** argv) {
  stage07::StageOptions options;
  return cs::run_matmul_stage(
      {"07_register_tile_1d", "C = A*B on the GPU, each thread computing several elements of C in registers.",
       [&](cs::CommandLine& cli) { stage07::add_stage_options(cli, options); },
       [&](const cs::MatmulShape& shape) { return stage07::plan_launch(options, shape); }},
      argc, argv);
}
