// 04_shared_tiled: each block stages its inputs in shared memory, one tile at a time.
//
// Stage 03's threads read the same rows of A and columns of B over and over from global memory.
// Here a block owns a square TILE x TILE tile of C (--tile 8, 16 or 32) and walks along K in steps
// of TILE: every thread loads one element of an A tile and one of a B tile into shared memory, a
// barrier, every thread adds the TILE products it needs from there, a second barrier before the
// tiles are overwritten. Each element loaded from global memory now serves TILE threads.
//
// Run:  04_shared_tiled --size 4096 --tile 16   (no options: the original tutorial's 1000 x 1000 x 1000;
//       --plan: print the launch and exit, no GPU needed; --help: every option)
// Everything but the kernel and its launch is the host flow every matmul stage shares
// (common/matmul_flow.cu: parse, generate, copy, time, verify, cuBLAS, report).
/// @file
/// @brief Stage 04: shared-memory tiles walking along K (chapter: 04_shared_tiled/README.md).
#include "matmul_flow.cuh"

#include <cstdint>
#include <string>

// This stage's own names (every matmul stage has a StageOptions and a plan_launch of its own).
namespace stage04 {

/// C = A·B with one thread per element of C (A is m×k, B is k×n, C is m×n, all row-major).
///
/// Block (blockIdx.x, blockIdx.y) owns the blockDim.y × blockDim.x tile of C whose top-left
/// element is C[blockIdx.y·blockDim.y][blockIdx.x·blockDim.x]; thread (threadIdx.x, threadIdx.y)
/// computes the element threadIdx.y rows down and threadIdx.x columns across, if it lies in C.
/// A and B reach it through shared memory in kTile × kTile tiles: every thread runs every step
/// along K and loads its share of the tiles (zeros past an edge), since all must reach each barrier.
///
/// Thread 0 of each block stamps clock64() into @p block_stamps at its start and end (null: none).
///
/// @tparam kTile the tile width, 8, 16 or 32; a block is kTile × kTile threads.
/// @tparam Index `int` when every index of the problem fits in 32 bits, else `std::int64_t` (m·n,
///         m·k and k·n can pass 2^31): 32-bit index arithmetic is cheaper on a GPU, and the host
///         picks it whenever it is safe (chapter 02).
template <int kTile, typename Index>
__global__ void matmul_shared_tiled(const float* a, const float* b, float* c, Index m, Index n, Index k,
                                    long long* block_stamps) {
  // LAB 04.tiles: two kTile x kTile tiles in shared memory, one for A and one for B
  __shared__ float tile_a[kTile][kTile]; // A[this block's rows][k_tile .. k_tile + kTile)
  __shared__ float tile_b[kTile][kTile]; // B[k_tile .. k_tile + kTile)[this block's columns]
  // END LAB
  cs::stamp_block_start(block_stamps);
  // LAB 04.tile_loop: each k-tile: load an element of each tile (0 past an edge), barrier, multiply, barrier
  const int local_row = threadIdx.y;
  const int local_col = threadIdx.x;
  const Index row = static_cast<Index>(blockIdx.y) * blockDim.y + threadIdx.y;
  const Index col = static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x;
  float sum = 0.0f;
  for (Index k_tile = 0; k_tile < k; k_tile += kTile) {
    const Index a_col = k_tile + local_col;
    const Index b_row = k_tile + local_row;
    // Each thread loads one element of each tile: a zero past the edge of A or B.
    tile_a[local_row][local_col] = (row < m && a_col < k) ? a[row * k + a_col] : 0.0f;
    tile_b[local_row][local_col] = (b_row < k && col < n) ? b[b_row * n + col] : 0.0f;
    // Barrier 1: both tiles are complete before anyone reads them.
    __syncthreads();
    // Row local_row of the A tile times column local_col of the B tile, all from shared memory.
#pragma unroll
    for (int i = 0; i < kTile; ++i) sum += tile_a[local_row][i] * tile_b[i][local_col];
    // Barrier 2: everyone has finished reading these tiles before the next step overwrites them.
    __syncthreads();
  }
  if (row < m && col < n) c[row * n + col] = sum;
  // END LAB
  cs::stamp_block_end(block_stamps);
}

/// The stage's own option.
struct StageOptions {
  int tile = 32; ///< `--tile`: 8, 16 or 32; a block is tile x tile threads
};

/// Declares `--tile` on @p cli: the widths the kernel is instantiated for.
void add_stage_options(cs::CommandLine& cli, StageOptions& options) {
  cli.add_int_choice("tile", &options.tile, {8, 16, 32},
                     "width of the square tiles of A, B and C; a block is TILE x TILE threads");
}

/// Plans the launch: ceil(n / tile) x ceil(m / tile) blocks of tile x tile threads.
cs::MatmulLaunch plan_launch(const StageOptions& options, const cs::MatmulShape& shape) {
  const int tile = options.tile;
  const std::int64_t blocks_x = (shape.n + tile - 1) / tile;
  const std::int64_t blocks_y = (shape.m + tile - 1) / tile;
  const dim3 grid = cs::grid_of(blocks_x, blocks_y);
  const dim3 block(static_cast<unsigned>(tile), static_cast<unsigned>(tile));
  const std::int64_t k_steps = (shape.k + tile - 1) / tile;
  cs::MatmulLaunch launch;
  launch.name = "tiled" + std::to_string(tile);
  launch.what = "one thread per element of C, square tiles of A and B in shared memory";
  launch.grid = grid;
  launch.block = block;
  launch.shared_bytes = 2 * sizeof(float) * tile * tile;
  launch.notes = {"block (x, y) owns a " + std::to_string(block.y) + "-row x " + std::to_string(block.x) +
                      "-column tile of C: x across the columns of C, y down its rows",
                  "global loads per element of C: 2K/TILE = " + std::to_string(2 * k_steps) +
                      " (one of A and one of B per step along K), naive 2K = " + std::to_string(2 * shape.k)};
  launch.block_clocks = true;
  launch.run = [=](const cs::MatmulArgs& p) {
    cs::with_index_type(p, [&](auto m, auto n, auto k) {
      if (tile == 8) matmul_shared_tiled<8><<<grid, block>>>(p.a, p.b, p.c, m, n, k, p.block_stamps);
      if (tile == 16) matmul_shared_tiled<16><<<grid, block>>>(p.a, p.b, p.c, m, n, k, p.block_stamps);
      if (tile == 32) matmul_shared_tiled<32><<<grid, block>>>(p.a, p.b, p.c, m, n, k, p.block_stamps);
    });
    CUDA_CHECK_LAUNCH();
  };
  return launch;
}

} // namespace stage04

/// Hands the kernel's launch and the stage's option to the host flow every matmul stage shares.
int main(int argc, char** argv) {
  stage04::StageOptions options;
  return cs::run_matmul_stage(
      {"04_shared_tiled", "C = A*B on the GPU, each block stepping along K through shared-memory tiles.",
       [&](cs::CommandLine& cli) { stage04::add_stage_options(cli, options); },
       [&](const cs::MatmulShape& shape) { return stage04::plan_launch(options, shape); }},
      argc, argv);
}
