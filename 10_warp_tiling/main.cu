// 10_warp_tiling: a tile for each warp, between the block's tile and the thread's.
//
// Stage 09's threads own 8 x 8 tiles of C side by side, so the lanes of a warp read their values of
// B from shared memory 32 bytes apart, and lanes four apart need the same banks. Here the block's
// tile is cut into warp tiles (64 x 32 by default), and in each the 32 lanes own 4 x 4 pieces side
// by side, the pattern repeated 2 x 2 times: a thread still computes 8 x 8 elements of C, and a warp
// reads 32 consecutive floats of A and 16 of B at a time, without a bank conflict. The transposed
// A tile's rows are padded by 4 floats, which spreads its stores over more banks.
//
// Run:  10_warp_tiling --size 4096                                 (128x128x16/64x32/8x8, the default)
//       10_warp_tiling --size 4096 --params 128x128x16/32x64/8x8   (the warp tile on its side: 4 x 8 lanes)
//       10_warp_tiling --size 4096 --params 64x64x16/32x32/4x8     (a smaller block and thread tile)
//       10_warp_tiling --size 4099                                 (n and k not multiples of 4: 4-byte loads)
//       (no options: the original tutorial's 1000 x 1000 x 1000; --plan: print the launch and exit, no
//       GPU needed; --help: every option)
// Everything but the kernel and its launch is the host flow every matmul stage shares
// (common/matmul_flow.cu: parse, generate, copy, time, verify, cuBLAS, report).
/// @file
/// @brief Stage 10: block, warp and thread tiles, conflict-free reads (chapter: 10_warp_tiling/README.md).
#include "kernel_table.cuh"
#include "matmul_flow.cuh"
#include "quads.cuh"

#include <cstdint>
#include <string>

// This stage's own names (every matmul stage has a StageOptions and a plan_launch of its own).
namespace stage10 {

/// C = A·B with three levels of tiles, the block's, a warp's and a thread's, every access 16 bytes
/// wide where it can be (A is m×k, B is k×n, C is m×n, all row-major).
///
/// Block (blockIdx.x, blockIdx.y) owns the kBlockM × kBlockN tile of C whose top-left element is
/// C[blockIdx.y·kBlockM][blockIdx.x·kBlockN], and walks along K in steps of kBlockK, staging a
/// kBlockM × kBlockK tile of A and a kBlockK × kBlockN tile of B in shared memory; every thread loads
/// several quads (four consecutive columns of a row) of each in a fixed number of passes (zero past
/// an edge), and reaches both barriers of every step. The A tile is stored transposed,
/// tile_a[i][row], each of its rows padded by 4 floats. Warp w owns a kWarpM × kWarpN tile of the
/// block's tile: warp row w / (kBlockN / kWarpN), warp column w % (kBlockN / kWarpN). Its 32 lanes
/// form a kLaneRows × kLaneCols grid (kWarpM / kThreadM × kWarpN / kThreadN), a 4 × 4 piece of C
/// each, and the warp repeats that kSubM × kSubN sub-tile (4·kLaneRows × 4·kLaneCols) over its tile:
/// a thread owns kThreadM / 4 × kThreadN / 4 pieces, kSubM rows and kSubN columns apart. Per value
/// along K it reads a float4 of A per row of pieces and one of B per column of pieces, and adds
/// their outer product, kThreadM·kThreadN multiply-adds from registers; the lanes of a warp read
/// consecutive quads of a row of each tile, so two of them share a bank only to read the same
/// float. At the end it writes its pieces to C in quads. Sizes and offsets are 64-bit whatever the problem
/// (m·k, k·n and m·n can pass 2^31).
///
/// @tparam kBlockM rows of C per block.
/// @tparam kBlockN columns of C per block.
/// @tparam kBlockK the step along K: columns of the A tile, rows of the B tile.
/// @tparam kWarpM rows of C per warp.
/// @tparam kWarpN columns of C per warp; a block is (kBlockM / kWarpM)·(kBlockN / kWarpN) warps (1-D).
/// @tparam kThreadM rows of C per thread: kThreadM / 4 pieces of 4 rows, kSubM rows apart.
/// @tparam kThreadN columns of C per thread: kThreadN / 4 pieces of 4 columns, kSubN columns apart.
/// @tparam kAligned every row of A, B and C starts on a 16-byte boundary (cs::rows_are_16_byte_aligned,
///         checked by the host before the launch): a quad is one 16-byte access, else four 4-byte ones.
template <int kBlockM, int kBlockN, int kBlockK, int kWarpM, int kWarpN, int kThreadM, int kThreadN,
          bool kAligned>
__global__ void __launch_bounds__((kBlockM / kWarpM) * (kBlockN / kWarpN) * 32)
    matmul_warp_tiling(const float* a, const float* b, float* c, std::int64_t m, std::int64_t n,
                       std::int64_t k) {
  constexpr int kWarpsN = kBlockN / kWarpN; // warps across the block's tile of C
  constexpr int kThreads = (kBlockM / kWarpM) * kWarpsN * 32;
  // A warp's lanes: kLaneRows x kLaneCols of them, a 4 x 4 piece of C each, make a kSubM x kSubN
  // sub-tile, which the warp repeats kThreadM / 4 x kThreadN / 4 times over its tile.
  constexpr int kLaneRows = kWarpM / kThreadM;
  constexpr int kLaneCols = kWarpN / kThreadN;
  constexpr int kSubM = 4 * kLaneRows;
  constexpr int kSubN = 4 * kLaneCols;
  static_assert(kBlockM % kWarpM == 0 && kBlockN % kWarpN == 0, "a warp's tile must tile the block's");
  static_assert(kWarpM % kThreadM == 0 && kWarpN % kThreadN == 0 && kLaneRows * kLaneCols == 32,
                "the 32 lanes' tiles must tile the warp's");
  static_assert(kBlockK % 4 == 0 && kThreadM % 4 == 0 && kThreadN % 4 == 0, "tiles load and read in quads");
  // Loading in quads: the A tile in passes of kThreads / (kBlockK / 4) rows, the B tile in passes of
  // kThreads / (kBlockN / 4).
  constexpr int kAQuadsPerRow = kBlockK / 4;
  constexpr int kARowsPerPass = kThreads / kAQuadsPerRow;
  constexpr int kAPasses = kBlockM / kARowsPerPass;
  constexpr int kBQuadsPerRow = kBlockN / 4;
  constexpr int kBRowsPerPass = kThreads / kBQuadsPerRow;
  constexpr int kBPasses = kBlockK / kBRowsPerPass;
  static_assert(kThreads % kAQuadsPerRow == 0 && kBlockM % kARowsPerPass == 0,
                "the A tile loads in whole passes");
  static_assert(kThreads % kBQuadsPerRow == 0 && kBlockK % kBRowsPerPass == 0,
                "the B tile loads in whole passes");
  // 16-byte aligned, so that any quad of a row of either tile can be read or written as a float4.
  // Each row of the transposed A tile is padded by 4 floats (16 bytes): the quads stored down its
  // columns then spread over more banks.
  __shared__ __align__(16) float tile_a[kBlockK][kBlockM + 4]; // tile_a[i][row] = A[row][k_tile + i]
  __shared__ __align__(16) float tile_b[kBlockK][kBlockN];     // tile_b[i][col] = B[k_tile + i][col]

  // Computing: block -> warp -> lane. This warp's tile of the block's tile, and this lane's place in
  // the warp's sub-tile.
  // LAB 10.warp_layout: the warp's place in the block's tile, the lane's in the warp's sub-tile
  // LAB-STUB: const int thread_col = 0;
  // LAB-STUB: const int thread_row = 0;
  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  const int warp_col = warp % kWarpsN;
  const int warp_row = warp / kWarpsN;
  const int lane_col = lane % kLaneCols;
  const int lane_row = lane / kLaneCols;
  // The first column and row of this thread's first 4 x 4 piece, in the block's tile of C.
  const int thread_col = warp_col * kWarpN + lane_col * 4;
  const int thread_row = warp_row * kWarpM + lane_row * 4;
  // END LAB
  // Loading: one quad of the A tile and one of the B tile per pass, each in its own layout.
  const int a_load_row = threadIdx.x / kAQuadsPerRow;
  const int a_load_col = threadIdx.x % kAQuadsPerRow * 4;
  const int b_load_row = threadIdx.x / kBQuadsPerRow;
  const int b_load_col = threadIdx.x % kBQuadsPerRow * 4;

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
    // Each thread loads kAPasses quads of the A tile and kBPasses of the B tile: zeros past an edge.
#pragma unroll
    for (int p = 0; p < kAPasses; ++p) {
      // Four consecutive columns of a row of A, stored into four rows of the transposed tile.
      const float4 quad = cs::load_quad<kAligned>(a_next[p], a_row_in_a[p], k_tile + a_load_col, k);
      const int a_row = a_load_row + p * kARowsPerPass;
      tile_a[a_load_col + 0][a_row] = quad.x;
      tile_a[a_load_col + 1][a_row] = quad.y;
      tile_a[a_load_col + 2][a_row] = quad.z;
      tile_a[a_load_col + 3][a_row] = quad.w;
    }
#pragma unroll
    for (int p = 0; p < kBPasses; ++p) {
      // Four consecutive columns of a row of B, stored as they are: one 16-byte store.
      const int b_row = b_load_row + p * kBRowsPerPass;
      *reinterpret_cast<float4*>(&tile_b[b_row][b_load_col]) =
          cs::load_quad<kAligned>(b_next + p * b_pass_step, k_tile + b_row < k, b_col, n);
    }
    // Barrier 1: both tiles are complete before anyone reads them.
    __syncthreads();
    // LAB 10.warp_fragments: per i: one float4 of each tile per piece, then the outer product
#pragma unroll
    for (int i = 0; i < kBlockK; ++i) {
      // A warp's lanes read kSubM consecutive floats of tile_a[i] and kSubN of tile_b[i] at a time:
      // no bank conflicts. kThreadM / 4 + kThreadN / 4 reads serve kThreadM·kThreadN multiply-adds.
      float fragment_a[kThreadM]; // column i of the A tile (row i of tile_a), this thread's rows
      float fragment_b[kThreadN]; // row i of the B tile, this thread's columns
#pragma unroll
      for (int r = 0; r < kThreadM; r += 4) {
        const float4 quad = *reinterpret_cast<const float4*>(&tile_a[i][thread_row + r / 4 * kSubM]);
        fragment_a[r + 0] = quad.x;
        fragment_a[r + 1] = quad.y;
        fragment_a[r + 2] = quad.z;
        fragment_a[r + 3] = quad.w;
      }
#pragma unroll
      for (int cc = 0; cc < kThreadN; cc += 4) {
        const float4 quad = *reinterpret_cast<const float4*>(&tile_b[i][thread_col + cc / 4 * kSubN]);
        fragment_b[cc + 0] = quad.x;
        fragment_b[cc + 1] = quad.y;
        fragment_b[cc + 2] = quad.z;
        fragment_b[cc + 3] = quad.w;
      }
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
  // The thread's pieces go to C a quad at a time, only the columns inside C (store_quad drops the rest).
#pragma unroll
  for (int r = 0; r < kThreadM; ++r) {
    const std::int64_t row = block_row + thread_row + r / 4 * kSubM + r % 4;
    if (row >= m) continue;
#pragma unroll
    for (int cc = 0; cc < kThreadN; cc += 4) {
      const std::int64_t col = block_col + thread_col + cc / 4 * kSubN;
      const float4 quad = make_float4(sums[r][cc], sums[r][cc + 1], sums[r][cc + 2], sums[r][cc + 3]);
      if (col < n) cs::store_quad<kAligned>(c + row * n + col, quad, col, n);
    }
  }
}

/// The kernel's instances, one per `--params` set: for rows on 16-byte boundaries, and for the others.
const cs::KernelTable<void (*)(const float*, const float*, float*, std::int64_t, std::int64_t, std::int64_t)>
    kKernels = {
        {"128x128x16/32x64/8x8", matmul_warp_tiling<128, 128, 16, 32, 64, 8, 8, true>,
         matmul_warp_tiling<128, 128, 16, 32, 64, 8, 8, false>},
        {"128x128x16/64x32/8x8", matmul_warp_tiling<128, 128, 16, 64, 32, 8, 8, true>,
         matmul_warp_tiling<128, 128, 16, 64, 32, 8, 8, false>},
        {"64x64x16/32x32/4x8", matmul_warp_tiling<64, 64, 16, 32, 32, 4, 8, true>,
         matmul_warp_tiling<64, 64, 16, 32, 32, 4, 8, false>},
};

/// The stage's own option.
struct StageOptions {
  std::string params = "128x128x16/64x32/8x8"; ///< `--params`: the block's, a warp's and a thread's tiles
};

/// Declares `--params` on @p cli: the parameter sets the kernel is instantiated for.
void add_stage_options(cs::CommandLine& cli, StageOptions& options) {
  cli.add_choice(
      "params", &options.params, kKernels.params(),
      "block tile of C (rows x columns) x step along K / warp tile / thread tile of C (rows x columns)");
}

/// Plans the launch: ceil(n / BN) x ceil(m / BM) blocks of (BM / WM)·(BN / WN) warps.
cs::MatmulLaunch plan_launch(const StageOptions& options, const cs::MatmulShape& shape) {
  const std::string params = options.params;
  const cs::TileSizes tile = cs::tile_sizes_of(params, "BMxBNxBK/WMxWN/TMxTN");
  const std::int64_t blocks_x = (shape.n + tile.block_n - 1) / tile.block_n;
  const std::int64_t blocks_y = (shape.m + tile.block_m - 1) / tile.block_m;
  const dim3 grid = cs::grid_of(blocks_x, blocks_y);
  const int warp_cols = tile.block_n / tile.warp_n; // warps across the block's tile of C
  const int threads = (tile.block_m / tile.warp_m) * warp_cols * 32;
  const dim3 block(static_cast<unsigned>(threads));
  const int lane_cols = tile.warp_n / tile.thread_n; // lanes across a warp's sub-tile
  const int lane_rows = tile.warp_m / tile.thread_m;
  const std::int64_t k_steps = (shape.k + tile.block_k - 1) / tile.block_k;
  // Each block loads its BM rows of A and BN columns of B once, BK at a time, for BM x BN elements of C.
  const std::int64_t loads_per_element =
      (k_steps * tile.block_k * (tile.block_m + tile.block_n) + tile.block_m * tile.block_n / 2) /
      (tile.block_m * tile.block_n);
  const int reads = tile.thread_m + tile.thread_n;
  const int products = tile.thread_m * tile.thread_n;
  // cudaMalloc aligns A, B and C themselves, so n and k decide whether every row is 16-byte aligned.
  const bool quads_are_16_bytes = shape.n % 4 == 0 && shape.k % 4 == 0;
  cs::MatmulLaunch launch;
  launch.name = "warp_tiling_" + params;
  launch.what = "a " + std::to_string(tile.warp_m) + "x" + std::to_string(tile.warp_n) +
                " tile of C per warp, " + std::to_string(tile.thread_m) + "x" +
                std::to_string(tile.thread_n) + " per thread in 4x4 pieces, " +
                (quads_are_16_bytes ? "16-byte" : "4-byte") + " loads";
  launch.grid = grid;
  launch.block = block;
  launch.shared_bytes = sizeof(float) * tile.block_k * (tile.block_m + 4 + tile.block_n);
  launch.notes = {
      "block (x, y) owns a " + std::to_string(tile.block_m) + "-row x " + std::to_string(tile.block_n) +
          "-column tile of C; warp w owns " + std::to_string(tile.warp_m) + " x " +
          std::to_string(tile.warp_n) + " elements of it, from row " + std::to_string(tile.warp_m) +
          " x (w / " + std::to_string(warp_cols) + "), column " + std::to_string(tile.warp_n) + " x (w % " +
          std::to_string(warp_cols) + ")",
      "a warp's 32 lanes, " + std::to_string(lane_rows) + " down x " + std::to_string(lane_cols) +
          " across, own 4 x 4 pieces; lane l's start at row 4 x (l / " + std::to_string(lane_cols) +
          "), column 4 x (l % " + std::to_string(lane_cols) + ") of the warp's tile and repeat " +
          std::to_string(4 * lane_rows) + " rows and " + std::to_string(4 * lane_cols) + " columns apart: " +
          std::to_string(tile.thread_m) + " x " + std::to_string(tile.thread_n) + " elements per thread",
      "shared-memory reads per value along K: " + std::to_string(tile.thread_m / 4) + " + " +
          std::to_string(tile.thread_n / 4) + " float4s, " + std::to_string(tile.thread_m) + " of A + " +
          std::to_string(tile.thread_n) + " of B, for " + std::to_string(products) +
          " multiply-adds; a warp reads " + std::to_string(4 * lane_rows) + " consecutive floats of A and " +
          std::to_string(4 * lane_cols) + " of B at a time: no bank conflicts",
      "registers per thread: " + std::to_string(products) + " sums + " + std::to_string(reads) +
          " fragment values; each thread loads " + std::to_string(tile.block_m * tile.block_k / threads / 4) +
          " quads of the A tile and " + std::to_string(tile.block_k * tile.block_n / threads / 4) +
          " of the B tile per step, 4 floats each",
      "global loads per element of C: about K/" + std::to_string(tile.block_m) + " + K/" +
          std::to_string(tile.block_n) + " = " + std::to_string(loads_per_element) + ", in steps of " +
          std::to_string(tile.block_k) +
          " along K (stage 04, tile 32: 2K/32 = " + std::to_string(2 * ((shape.k + 31) / 32)) + ")",
      quads_are_16_bytes ? "n and k are multiples of 4, so every row starts on a 16-byte boundary: a quad is "
                           "one 16-byte load or store"
                         : "n or k is not a multiple of 4, so rows start anywhere: a quad is four guarded "
                           "4-byte loads or stores"};
  launch.index_width_from_host = false;
  launch.run = [=](const cs::MatmulArgs& p) {
    const auto kernel = kKernels.find(params, cs::rows_are_16_byte_aligned(p));
    kernel<<<grid, block>>>(p.a, p.b, p.c, p.m, p.n, p.k);
    CUDA_CHECK_LAUNCH();
  };
  return launch;
}

} // namespace stage10

/// Hands the kernel's launch and the stage's option to the host flow every matmul stage shares.
int main(int argc, char** argv) {
  stage10::StageOptions options;
  return cs::run_matmul_stage(
      {"10_warp_tiling",
       "C = A*B on the GPU, tiles of C per block, per warp and per thread, with conflict-free shared reads.",
       [&](cs::CommandLine& cli) { stage10::add_stage_options(cli, options); },
       [&](const cs::MatmulShape& shape) { return stage10::plan_launch(options, shape); }},
      argc, argv);
}
