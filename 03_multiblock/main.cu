// 03_multiblock: the same arithmetic, organised as tiles of C.
//
// Stage 02 numbered its threads along the rows of C. Here the grid and the blocks are 2-D: block
// (x, y) owns a rows x cols rectangle of C (--block, 16x16 by default), and thread (x, y) in it
// computes one element of that rectangle, with the same k-loop as before. It is a reorganisation,
// not a speed-up: every thread still reads a whole row of A and column of B from global memory.
// But a block that owns a tile of C is the shape stage 04 needs to share its inputs.
//
// Run:  03_multiblock --size 4096 --block 8x32   (no options: the original tutorial's 1000 x 1000 x 1000;
//       --plan: print the launch and exit, no GPU needed; --help: every option)
// Everything but the kernel and its launch is the host flow every matmul stage shares
// (common/matmul_flow.cu: parse, generate, copy, time, verify, cuBLAS, report).
/// @file
/// @brief Stage 03: a 2-D grid of 2-D blocks, a tile of C each (chapter: 03_multiblock/README.md).
#include "matmul_flow.cuh"

#include <cstdint>
#include <string>

// This stage's own names (every matmul stage has a StageOptions and a plan_launch of its own).
namespace stage03 {

/// C = A·B with one thread per element of C (A is m×k, B is k×n, C is m×n, all row-major).
///
/// Block (blockIdx.x, blockIdx.y) owns the blockDim.y × blockDim.x tile of C whose top-left
/// element is C[blockIdx.y·blockDim.y][blockIdx.x·blockDim.x]; thread (threadIdx.x, threadIdx.y)
/// computes the element threadIdx.y rows down and threadIdx.x columns across, if it lies in C.
/// A grid has at most 65535 blocks along y: a taller C goes on along z (gridDim.z is 1 otherwise),
/// so the block's row of tiles is blockIdx.z·gridDim.y + blockIdx.y.
///
/// Thread 0 of each block stamps clock64() into @p block_stamps at its start and end (null: none).
///
/// @tparam Index `int` when every index of the problem fits in 32 bits, else `std::int64_t` (m·n,
///         m·k and k·n can pass 2^31): 32-bit index arithmetic is cheaper on a GPU, and the host
///         picks it whenever it is safe (chapter 02).
template <typename Index>
__global__ void matmul_multiblock(const float* a, const float* b, float* c, Index m, Index n, Index k,
                                  long long* block_stamps) {
  cs::stamp_block_start(block_stamps);
  // LAB 03.kernel: row from the y indices, column from the x ones; the same k-loop, only inside C
  const Index block_row = static_cast<Index>(blockIdx.z) * gridDim.y + blockIdx.y; // z: see below
  const Index row = block_row * blockDim.y + threadIdx.y;
  const Index col = static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (row < m && col < n) {
    float sum = 0.0f;
    for (Index i = 0; i < k; ++i) sum += a[row * k + i] * b[i * n + col];
    c[row * n + col] = sum;
  }
  // END LAB
  cs::stamp_block_end(block_stamps);
}

/// The stage's own option.
struct StageOptions {
  int block_rows = 16; ///< `--block ROWSxCOLS`: rows of the tile (threads along y)
  int block_cols = 16; ///< `--block ROWSxCOLS`: columns of the tile (threads along x)
};

/// Declares `--block` on @p cli.
void add_stage_options(cs::CommandLine& cli, StageOptions& options) {
  cli.add_rows_x_cols("block", &options.block_rows, &options.block_cols, cs::kMaxThreadsPerBlock,
                      "rows x columns of the tile of C a block owns, one thread each");
}

/// Plans the launch: blocks of cols x rows threads, columns of C along x and rows along y (at most
/// 65535 along y, the rest along z).
/// <!-- LAB-ANSWER 03.grid: How many blocks, along x and along y, cover C? -->
/// The grid is ceil(n / cols) x ceil(m / rows) blocks.
/// <!-- END LAB-ANSWER -->
cs::MatmulLaunch plan_launch(const StageOptions& options, const cs::MatmulShape& shape) {
  // LAB 03.grid: enough blocks to cover C: columns along x, rows along y; the last ones may overhang C
  // LAB-STUB: const std::int64_t blocks_x = 1;
  // LAB-STUB: const std::int64_t blocks_y = 1;
  const std::int64_t blocks_x = (shape.n + options.block_cols - 1) / options.block_cols;
  const std::int64_t blocks_y = (shape.m + options.block_rows - 1) / options.block_rows;
  // END LAB
  const std::int64_t grid_y = blocks_y < cs::kMaxGridY ? blocks_y : cs::kMaxGridY;
  const dim3 grid(cs::grid_of(blocks_x, grid_y).x, grid_y, (blocks_y + grid_y - 1) / grid_y);
  const dim3 block(static_cast<unsigned>(options.block_cols), static_cast<unsigned>(options.block_rows));
  cs::MatmulLaunch launch;
  launch.name = "multiblock";
  launch.what = "one thread per element of C, a 2-D block per tile of C";
  launch.grid = grid;
  launch.block = block;
  launch.notes = {"block (x, y) owns a " + std::to_string(block.y) + "-row x " + std::to_string(block.x) +
                      "-column tile of C: x across the columns of C, y down its rows",
                  "global loads per element of C: 2K = " + std::to_string(2 * shape.k) +
                      " (a row of A and a column of B, no reuse but what the caches catch)"};
  launch.block_clocks = true;
  launch.run = [=](const cs::MatmulArgs& p) {
    cs::with_index_type(p, [&](auto m, auto n, auto k) {
      matmul_multiblock<<<grid, block>>>(p.a, p.b, p.c, m, n, k, p.block_stamps);
    });
    CUDA_CHECK_LAUNCH();
  };
  return launch;
}

} // namespace stage03

/// Hands the kernel's launch and the stage's option to the host flow every matmul stage shares.
int main(int argc, char** argv) {
  stage03::StageOptions options;
  return cs::run_matmul_stage(
      {"03_multiblock", "C = A*B on the GPU, one thread per element of C, each 2-D block owning a tile of C.",
       [&](cs::CommandLine& cli) { stage03::add_stage_options(cli, options); },
       [&](const cs::MatmulShape& shape) { return stage03::plan_launch(options, shape); }},
      argc, argv);
}
