// 08_register_tile_2d: each thread computes a 2-D tile of C, as a sum of outer products in registers.
//
// Stage 07's threads reuse each value of B they read from shared memory, but still read a value of A
// for every multiply-add. Here each thread owns a TM x TN tile of C (--params: 8x4, 8x8 or 4x4): per
// value along K it reads TM values of A and TN of B from shared memory into registers and adds their
// outer product, TM x TN multiply-adds for TM + TN reads. A block of 256 threads now owns a tile of C
// far larger than itself, so each thread loads several elements of each shared tile, in passes.
//
// Run:  08_register_tile_2d --size 4096 --params 128x64x16/8x4    (the default: an 8 x 4 tile per thread)
//       08_register_tile_2d --size 4096 --params 128x128x16/8x8   (8 x 8: more reuse, more registers)
//       08_register_tile_2d --size 4096 --params 64x64x16/4x4     (4 x 4: less reuse, fewer registers)
//       (no options: the original tutorial's 1000 x 1000 x 1000; --plan: print the launch and exit, no
//       GPU needed; --help: every option)
// Everything but the kernel and its launch is the host flow every matmul stage shares
// (common/matmul_flow.cu: parse, generate, copy, time, verify, cuBLAS, report).
/// @file
/// @brief Stage 08: 2-D register tiling, a tile of C per thread (chapter: 08_register_tile_2d/README.md).
#include "kernel_table.cuh"
#include "matmul_flow.cuh"

#include <cstdint>
#include <string>

// This stage's own names (every matmul stage has a StageOptions and a plan_launch of its own).
namespace stage08 {

/// C = A·B where each thread computes a kThreadM × kThreadN tile of C as a sum of outer products
/// (A is m×k, B is k×n, C is m×n, all row-major).
///
/// Block (blockIdx.x, blockIdx.y) owns the kBlockM × kBlockN tile of C whose top-left element is
/// C[blockIdx.y·kBlockM][blockIdx.x·kBlockN], and walks along K in steps of kBlockK, staging a
/// kBlockM × kBlockK tile of A and a kBlockK × kBlockN tile of B in shared memory; the block has
/// fewer threads than a tile has elements, so every thread loads several of each in a fixed number
/// of passes (zero past an edge), and reaches both barriers of every step. Thread t owns rows
/// (t / (kBlockN / kThreadN))·kThreadM .. + kThreadM and columns (t % (kBlockN / kThreadN))·kThreadN
/// .. + kThreadN of the block's tile: per value along K it copies kThreadM values of A and kThreadN
/// of B from shared memory into registers and adds their outer product, kThreadM·kThreadN
/// multiply-adds from registers. Sizes and offsets are 64-bit whatever the problem (m·k, k·n and m·n
/// can pass 2^31).
///
/// @tparam kBlockM rows of C per block.
/// @tparam kBlockN columns of C per block.
/// @tparam kBlockK the step along K: columns of the A tile, rows of the B tile.
/// @tparam kThreadM rows of C per thread.
/// @tparam kThreadN columns of C per thread; a block is (kBlockM / kThreadM)·(kBlockN / kThreadN)
///         threads (1-D).
template <int kBlockM, int kBlockN, int kBlockK, int kThreadM, int kThreadN>
__global__ void __launch_bounds__((kBlockM / kThreadM) * (kBlockN / kThreadN))
    matmul_2d_register_tiling(const float* a, const float* b, float* c, std::int64_t m, std::int64_t n,
                              std::int64_t k) {
  constexpr int kThreads = (kBlockM / kThreadM) * (kBlockN / kThreadN);
  static_assert(kBlockM % kThreadM == 0 && kBlockN % kThreadN == 0, "a thread's tile must tile the block's");
  // Loading: the A tile in passes of kThreads / kBlockK rows, the B tile in passes of kThreads / kBlockN.
  constexpr int kARowsPerPass = kThreads / kBlockK;
  constexpr int kAPasses = kBlockM / kARowsPerPass;
  constexpr int kBRowsPerPass = kThreads / kBlockN;
  constexpr int kBPasses = kBlockK / kBRowsPerPass;
  static_assert(kThreads % kBlockK == 0 && kBlockM % kARowsPerPass == 0, "the A tile loads in whole passes");
  static_assert(kThreads % kBlockN == 0 && kBlockK % kBRowsPerPass == 0, "the B tile loads in whole passes");
  __shared__ float tile_a[kBlockM][kBlockK]; // A[this block's rows][k_tile .. k_tile + kBlockK)
  __shared__ float tile_b[kBlockK][kBlockN]; // B[k_tile .. k_tile + kBlockK)[this block's columns]

  // Computing: this thread's kThreadM rows x kThreadN columns of the block's tile of C.
  const int thread_col = threadIdx.x % (kBlockN / kThreadN);
  const int thread_row = threadIdx.x / (kBlockN / kThreadN);
  // Loading: one element of the A tile and one of the B tile per pass, each in its own layout.
  const int a_load_row = threadIdx.x / kBlockK;
  const int a_load_col = threadIdx.x % kBlockK;
  const int b_load_row = threadIdx.x / kBlockN;
  const int b_load_col = threadIdx.x % kBlockN;

  // The offsets are computed once and then walked: a pointer into A per pass (its rows are
  // kARowsPerPass·k apart) and one into B (its passes kBRowsPerPass·n apart), each moving one step
  // along K per tile. A load outside A or B walks row or column 0 and never dereferences it.
  const std::int64_t block_row = static_cast<std::int64_t>(blockIdx.y) * kBlockM;
  const std::int64_t block_col = static_cast<std::int64_t>(blockIdx.x) * kBlockN;
  const float* a_next[kAPasses];
  bool a_row_in_a[kAPasses];
#pragma unroll
  for (int p = 0; p < kAPasses; ++p) {
    const std::int64_t a_row = block_row + a_load_row + p * kARowsPerPass;
    a_row_in_a[p] = a_row < m;
    a_next[p] = a + (a_row_in_a[p] ? a_row : 0) * k + a_load_col;
  }
  const std::int64_t b_col = block_col + b_load_col;
  const bool b_col_in_b = b_col < n;
  const float* b_next = b + static_cast<std::int64_t>(b_load_row) * n + (b_col_in_b ? b_col : 0);
  const std::int64_t b_pass_step = static_cast<std::int64_t>(kBRowsPerPass) * n;
  const std::int64_t b_step = static_cast<std::int64_t>(kBlockK) * n;

  float sums[kThreadM][kThreadN] = {}; // this thread's kThreadM x kThreadN elements of C, in registers
  // k_tile is an int: k is at most 65536, and the 64-bit offsets live in the walked pointers.
  for (int k_tile = 0; k_tile < k; k_tile += kBlockK) {
    // Each thread loads kAPasses elements of the A tile and kBPasses of the B tile: zeros past an edge.
    const bool a_col_in_a = k_tile + a_load_col < k;
#pragma unroll
    for (int p = 0; p < kAPasses; ++p)
      tile_a[a_load_row + p * kARowsPerPass][a_load_col] = (a_row_in_a[p] && a_col_in_a) ? *a_next[p] : 0.0f;
#pragma unroll
    for (int p = 0; p < kBPasses; ++p) {
      const int b_row = b_load_row + p * kBRowsPerPass;
      tile_b[b_row][b_load_col] = (k_tile + b_row < k && b_col_in_b) ? b_next[p * b_pass_step] : 0.0f;
    }
    // Barrier 1: both tiles are complete before anyone reads them.
    __syncthreads();
    // LAB 08.thread_tile: per i of the step: kThreadM of A, kThreadN of B into registers, their outer product
#pragma unroll
    for (int i = 0; i < kBlockK; ++i) {
      // kThreadM + kThreadN reads from shared memory serve kThreadM·kThreadN multiply-adds, from registers.
      float fragment_a[kThreadM]; // column i of the A tile, this thread's rows
      float fragment_b[kThreadN]; // row i of the B tile, this thread's columns
#pragma unroll
      for (int r = 0; r < kThreadM; ++r) fragment_a[r] = tile_a[thread_row * kThreadM + r][i];
#pragma unroll
      for (int cc = 0; cc < kThreadN; ++cc) fragment_b[cc] = tile_b[i][thread_col * kThreadN + cc];
#pragma unroll
      for (int r = 0; r < kThreadM; ++r)
#pragma unroll
        for (int cc = 0; cc < kThreadN; ++cc) sums[r][cc] += fragment_a[r] * fragment_b[cc];
    }
    // END LAB
    // Barrier 2: everyone has finished reading these tiles before the next step overwrites them.
    __syncthreads();
#pragma unroll
    for (int p = 0; p < kAPasses; ++p) a_next[p] += kBlockK;
    b_next += b_step;
  }
  // LAB 08.store: each of the kThreadM x kThreadN sums to its element of C, if inside C
  // LAB-STUB: static_cast<void>(sums), static_cast<void>(thread_row), static_cast<void>(thread_col);
#pragma unroll
  for (int r = 0; r < kThreadM; ++r) {
    const std::int64_t row = block_row + thread_row * kThreadM + r;
    if (row >= m) continue;
#pragma unroll
    for (int cc = 0; cc < kThreadN; ++cc) {
      const std::int64_t col = block_col + thread_col * kThreadN + cc;
      if (col < n) c[row * n + col] = sums[r][cc];
    }
  }
  // END LAB
}

/// The kernel's instances, one per `--params` set.
const cs::KernelTable<void (*)(const float*, const float*, float*, std::int64_t, std::int64_t, std::int64_t)>
    kKernels = {
        {"128x64x16/8x4", matmul_2d_register_tiling<128, 64, 16, 8, 4>},
        {"128x128x16/8x8", matmul_2d_register_tiling<128, 128, 16, 8, 8>},
        {"64x64x16/4x4", matmul_2d_register_tiling<64, 64, 16, 4, 4>},
};

/// The stage's own option.
struct StageOptions {
  std::string params = "128x64x16/8x4"; ///< `--params`: block rows x columns x step along K / thread tile
};

/// Declares `--params` on @p cli: the parameter sets the kernel is instantiated for.
void add_stage_options(cs::CommandLine& cli, StageOptions& options) {
  cli.add_choice("params", &options.params, kKernels.params(),
                 "block tile of C (rows x columns) x step along K / thread tile of C (rows x columns)");
}

/// Plans the launch: ceil(n / BN) x ceil(m / BM) blocks of (BM / TM)·(BN / TN) threads.
cs::MatmulLaunch plan_launch(const StageOptions& options, const cs::MatmulShape& shape) {
  const std::string params = options.params;
  const cs::TileSizes tile = cs::tile_sizes_of(params, "BMxBNxBK/TMxTN");
  const std::int64_t blocks_x = (shape.n + tile.block_n - 1) / tile.block_n;
  const std::int64_t blocks_y = (shape.m + tile.block_m - 1) / tile.block_m;
  const dim3 grid = cs::grid_of(blocks_x, blocks_y);
  const int thread_cols = tile.block_n / tile.thread_n; // threads across the block's tile of C
  const int threads = (tile.block_m / tile.thread_m) * thread_cols;
  const dim3 block(static_cast<unsigned>(threads));
  const std::int64_t k_steps = (shape.k + tile.block_k - 1) / tile.block_k;
  // Each block loads its BM rows of A and BN columns of B once, BK at a time, for BM x BN elements of C.
  const std::int64_t loads_per_element =
      (k_steps * tile.block_k * (tile.block_m + tile.block_n) + tile.block_m * tile.block_n / 2) /
      (tile.block_m * tile.block_n);
  const int reads = tile.thread_m + tile.thread_n;
  const int products = tile.thread_m * tile.thread_n;
  cs::MatmulLaunch launch;
  launch.name = "register2d_" + params;
  launch.what = "a " + std::to_string(tile.thread_m) + "x" + std::to_string(tile.thread_n) +
                " tile of C per thread, outer products in registers";
  launch.grid = grid;
  launch.block = block;
  launch.shared_bytes = sizeof(float) * tile.block_k * (tile.block_m + tile.block_n);
  launch.notes = {
      "block (x, y) owns a " + std::to_string(tile.block_m) + "-row x " + std::to_string(tile.block_n) +
          "-column tile of C; thread t computes " + std::to_string(tile.thread_m) + " x " +
          std::to_string(tile.thread_n) + " elements of it, from row " + std::to_string(tile.thread_m) +
          " x (t / " + std::to_string(thread_cols) + "), column " + std::to_string(tile.thread_n) +
          " x (t % " + std::to_string(thread_cols) + ")",
      "shared-memory reads per value along K: " + std::to_string(tile.thread_m) + " of A + " +
          std::to_string(tile.thread_n) + " of B (into registers) for " + std::to_string(products) +
          " multiply-adds (stage 04: 2 reads per multiply-add)",
      "registers per thread: " + std::to_string(products) + " sums + " + std::to_string(reads) +
          " fragment values; each thread loads " + std::to_string(tile.block_m * tile.block_k / threads) +
          " elements of the A tile and " + std::to_string(tile.block_k * tile.block_n / threads) +
          " of the B tile per step",
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

} // namespace stage08

/// Hands the kernel's launch and the stage's option to the host flow every matmul stage shares.
int main(int argc, char** argv) {
  stage08::StageOptions options;
  return cs::run_matmul_stage(
      {"08_register_tile_2d",
       "C = A*B on the GPU, each thread computing a 2-D tile of C as outer products in registers.",
       [&](cs::CommandLine& cli) { stage08::add_stage_options(cli, options); },
       [&](const cs::MatmulShape& shape) { return stage08::plan_launch(options, shape); }},
      argc, argv);
}
