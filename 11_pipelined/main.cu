// 11_pipelined: the next tiles are on their way while this one multiplies.
//
// Stage 10's warps load a k-tile, wait at a barrier, multiply, and wait at another before the next
// loads: while a tile is in flight the block has nothing to do. Here shared memory is a ring of S
// buffers (the /sS of --params), and each k-tile is copied S - 1 steps ahead by cp.async, straight
// from global into shared memory: a step waits for its own tile, passes one barrier, starts the next
// copy and multiplies. With the loads hidden, a 128 x 256 tile (one block per SM) pays; blocks take
// their tiles of C in groups of rows, so that those running at once share rows of A and columns of B.
//
// Run:  11_pipelined --size 4096                                   (128x256x32/64x64/16x8/s2, the default)
//       11_pipelined --size 4096 --params 128x256x16/64x64/16x8/s3 (a shorter step, three buffers)
//       11_pipelined --size 4096 --params 128x128x16/64x32/8x8/s3  (stage 10's tiles, pipelined)
//       11_pipelined --size 4099                                   (n, k not multiples of 4: 4-byte copies)
//       (--plan: print the launch and exit, no GPU needed; --help: every option)
// Everything but the kernel and its launch is the host flow every matmul stage shares
// (common/matmul_flow.cu: parse, generate, copy, time, verify, cuBLAS, report).
/// @file
/// @brief Stage 11: warp tiles fed by a cp.async pipeline through a ring of shared-memory buffers
/// (chapter: 11_pipelined/README.md).
#include "cp_async.cuh"
#include "kernel_table.cuh"
#include "matmul_flow.cuh"
#include "quads.cuh"
#include "thread_tile.cuh"

#include <cstdint>
#include <string>

// This stage's own names (every matmul stage has a StageOptions and a plan_launch of its own).
namespace stage11 {

/// Block rows per group in the order blocks take their tiles of C.
constexpr int kGroupRows = 8;

/// C = A·B (A m×k, B k×n, C m×n, FP32, row-major) with stage 10's block, warp and thread tiles, the
/// k-tiles copied by cp.async into a ring of kStages buffers, kStages - 1 ahead of the one being
/// multiplied (chapter 11). The grid is 1-D, the tiles of C taken in groups of kGroupRows rows;
/// every thread reaches every barrier, and only the stores to C are guarded; sizes and offsets are
/// 64-bit whatever the problem.
///
/// @tparam kBlockM rows of C per block.
/// @tparam kBlockN columns of C per block.
/// @tparam kBlockK the step along K: columns of the A tile, rows of the B tile.
/// @tparam kWarpM rows of C per warp.
/// @tparam kWarpN columns of C per warp; a block is (kBlockM / kWarpM)·(kBlockN / kWarpN) warps (1-D).
/// @tparam kThreadM rows of C per thread: kThreadM / 4 pieces of 4 rows, kSubM rows apart.
/// @tparam kThreadN columns of C per thread: kThreadN / 4 pieces of 4 columns, kSubN columns apart.
/// @tparam kStages buffers in the ring: the k-tile being multiplied and kStages - 1 on their way.
/// @tparam kAligned every row of A, B and C starts on a 16-byte boundary (cs::rows_are_16_byte_aligned,
///         checked by the host before the launch): 16 bytes of B are one cp.async, a quad of C one
///         16-byte store; otherwise four 4-byte ones. A is always copied 4 bytes at a time, transposed.
template <int kBlockM, int kBlockN, int kBlockK, int kWarpM, int kWarpN, int kThreadM, int kThreadN,
          int kStages, bool kAligned>
__global__ void __launch_bounds__((kBlockM / kWarpM) * (kBlockN / kWarpN) * 32,
                                  cs::min_blocks_per_sm(kThreadM, kThreadN))
    matmul_pipelined(const float* a, const float* b, float* c, std::int64_t m, std::int64_t n,
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
  static_assert(kStages >= 2, "a pipeline needs at least two buffers");
  // Loading 16 bytes at a time: the A tile in passes of kARowsPerPass rows, the B tile of kBRowsPerPass.
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
  // The ring of kStages buffers, in dynamic shared memory (more than the 48 KB a static array may
  // have), 16-byte aligned. Buffer s: the transposed A tile, kBlockK rows of kTileAStride floats
  // (tile_a[i·kTileAStride + row] = A[row][k_tile + i], each row padded by 4 floats so that the
  // copies down its columns spread over more banks), then the B tile, kBlockK rows of kBlockN.
  constexpr int kTileAStride = kBlockM + 4;
  constexpr int kTileAFloats = kBlockK * kTileAStride;
  constexpr int kStageFloats = kTileAFloats + kBlockK * kBlockN;
  extern __shared__ float4 shared_quads[];
  float* const shared = reinterpret_cast<float*>(shared_quads);

  // The launch order: block b's tile of C is in row first_row + in_group % rows_in_group and column
  // in_group / rows_in_group of the tiles (the last group may have fewer rows).
  const int blocks_n = static_cast<int>((n + kBlockN - 1) / kBlockN);
  const int blocks_m = static_cast<int>((m + kBlockM - 1) / kBlockM);
  const int blocks_per_group = kGroupRows * blocks_n;
  const int group = blockIdx.x / blocks_per_group;
  const int first_row = group * kGroupRows;
  const int rows_in_group = min(blocks_m - first_row, kGroupRows);
  const int in_group = blockIdx.x - group * blocks_per_group;
  const int block_row_index = first_row + in_group % rows_in_group;
  const int block_col_index = in_group / rows_in_group;

  // Computing: block -> warp -> lane. This warp's tile of the block's tile, and this lane's place in
  // the warp's sub-tile (rows first: in this kernel that order compiles to two registers fewer).
  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  const int warp_row = warp / kWarpsN;
  const int warp_col = warp % kWarpsN;
  const int lane_row = lane / kLaneCols;
  const int lane_col = lane % kLaneCols;
  // The first row and column of this thread's first 4 x 4 piece, in the block's tile of C.
  const int thread_row = warp_row * kWarpM + lane_row * 4;
  const int thread_col = warp_col * kWarpN + lane_col * 4;
  // Loading: 16 bytes of the A tile and 16 of the B tile per pass, each in its own layout.
  const int a_load_row = threadIdx.x / kAQuadsPerRow;
  const int a_load_col = threadIdx.x % kAQuadsPerRow * 4;
  const int b_load_row = threadIdx.x / kBQuadsPerRow;
  const int b_load_col = threadIdx.x % kBQuadsPerRow * 4;

  // The offsets are computed once and then walked: a pointer into A per pass (its rows are
  // kARowsPerPass·k apart) and one into B (its passes kBRowsPerPass·n apart), each moving one step
  // along K per tile. A copy from outside A or B is handed row or column 0 and reads nothing.
  const std::int64_t block_row = static_cast<std::int64_t>(block_row_index) * kBlockM;
  const std::int64_t block_col = static_cast<std::int64_t>(block_col_index) * kBlockN;
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
  const int k_tiles = static_cast<int>((k + kBlockK - 1) / kBlockK);

  // Starts copying the k-tile at k_tile into buffer `stage`, and walks the pointers on to the next.
  // Each thread copies kAPasses times 16 bytes of the A tile and kBPasses of the B tile: zeros past an edge.
  const auto copy_tile_async = [&](std::int64_t k_tile, int stage) {
    float* const tile_a = shared + stage * kStageFloats;
    float* const tile_b = tile_a + kTileAFloats;
    // LAB 11.copy_tile: per pass: cp.async a quad of A into 4 rows of tile_a, a quad of B as it is
    // LAB-STUB: static_cast<void>(tile_b), static_cast<void>(kBPasses), static_cast<void>(b_pass_step);
    // LAB-STUB: static_cast<void>(b_next), static_cast<void>(b_step);
#pragma unroll
    for (int p = 0; p < kAPasses; ++p) {
      // Four consecutive columns of a row of A, copied into four rows of the transposed tile.
      const int a_row = a_load_row + p * kARowsPerPass;
      const std::int64_t a_col = k_tile + a_load_col;
      if constexpr (kAligned) {
        // k % 4 == 0: the quad is all inside the row or all past it, one test for its four copies.
        const bool in_a = a_row_in_a[p] && a_col < k;
        const float* const from = in_a ? a_next[p] : a;
#pragma unroll
        for (int e = 0; e < 4; ++e)
          cs::copy_async<4>(&tile_a[(a_load_col + e) * kTileAStride + a_row], from + e, in_a, from + e);
      } else {
#pragma unroll
        for (int e = 0; e < 4; ++e)
          cs::copy_async<4>(&tile_a[(a_load_col + e) * kTileAStride + a_row], a_next[p] + e,
                            a_row_in_a[p] && a_col + e < k, a);
      }
      a_next[p] += kBlockK;
    }
#pragma unroll
    for (int p = 0; p < kBPasses; ++p) {
      // 16 bytes of a row of B, copied as they are (one cp.async when aligned).
      const int b_row = b_load_row + p * kBRowsPerPass;
      float* const to = &tile_b[b_row * kBlockN + b_load_col];
      cs::copy_chunk_async<kAligned>(to, b_next + p * b_pass_step, k_tile + b_row < k, b_col, n, b);
    }
    b_next += b_step;
    // END LAB
  };

  float sums[kThreadM][kThreadN] = {}; // this thread's kThreadM x kThreadN elements of C, in registers
  // Multiplies the k-tile in buffer `stage` into the sums: stage 10's warp fragments.
  const auto multiply_stage = [&](int stage) {
    const float* const tile_a = shared + stage * kStageFloats;
    const float* const tile_b = tile_a + kTileAFloats;
#pragma unroll
    for (int i = 0; i < kBlockK; ++i) {
      // A warp's lanes read kSubM consecutive floats of tile_a[i] and kSubN of tile_b[i] at a time:
      // no bank conflicts. kThreadM / 4 + kThreadN / 4 reads serve kThreadM·kThreadN multiply-adds.
      float fragment_a[kThreadM]; // column i of the A tile (row i of tile_a), this thread's rows
      float fragment_b[kThreadN]; // row i of the B tile, this thread's columns
#pragma unroll
      for (int r = 0; r < kThreadM; r += 4) {
        const float4 quad =
            *reinterpret_cast<const float4*>(&tile_a[i * kTileAStride + thread_row + r / 4 * kSubM]);
        fragment_a[r + 0] = quad.x;
        fragment_a[r + 1] = quad.y;
        fragment_a[r + 2] = quad.z;
        fragment_a[r + 3] = quad.w;
      }
#pragma unroll
      for (int cc = 0; cc < kThreadN; cc += 4) {
        const float4 quad =
            *reinterpret_cast<const float4*>(&tile_b[i * kBlockN + thread_col + cc / 4 * kSubN]);
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
  };

  // LAB 11.pipeline: copy tiles ahead; each step: wait for tile t, barrier, copy t + kStages - 1, multiply t
  // LAB-STUB: static_cast<void>(k_tiles);
  // Before the loop: tiles 0 .. kStages - 2 on their way, a group of copies each (an empty group
  // past the last tile, so that as many groups are in flight at every step).
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < k_tiles) copy_tile_async(static_cast<std::int64_t>(s) * kBlockK, s);
    cs::commit_copies();
  }
  int read_stage = 0;            // the buffer tile t is in
  int write_stage = kStages - 1; // the buffer tile t + kStages - 1 goes to: the one step t - 1 read
  for (int t = 0; t < k_tiles; ++t) {
    // This thread's copies of tile t have landed (the kStages - 2 younger groups may still fly).
    cs::wait_for_copies<kStages - 2>();
    // The one barrier: everyone's copies of tile t are in, and everyone has finished step t - 1,
    // whose buffer the copy below overwrites.
    __syncthreads();
    // Tile t + kStages - 1 on its way while tile t multiplies.
    if (t + kStages - 1 < k_tiles)
      copy_tile_async(static_cast<std::int64_t>(t + kStages - 1) * kBlockK, write_stage);
    cs::commit_copies();
    multiply_stage(read_stage);
    read_stage = read_stage + 1 == kStages ? 0 : read_stage + 1;
    write_stage = write_stage + 1 == kStages ? 0 : write_stage + 1;
  }
  // END LAB
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
        {"128x256x32/64x64/16x8/s2", matmul_pipelined<128, 256, 32, 64, 64, 16, 8, 2, true>,
         matmul_pipelined<128, 256, 32, 64, 64, 16, 8, 2, false>},
        {"128x256x16/64x64/16x8/s3", matmul_pipelined<128, 256, 16, 64, 64, 16, 8, 3, true>,
         matmul_pipelined<128, 256, 16, 64, 64, 16, 8, 3, false>},
        {"128x128x16/64x32/8x8/s3", matmul_pipelined<128, 128, 16, 64, 32, 8, 8, 3, true>,
         matmul_pipelined<128, 128, 16, 64, 32, 8, 8, 3, false>},
};

/// The stage's own option.
struct StageOptions {
  std::string params = "128x256x32/64x64/16x8/s2"; ///< `--params`: block, warp and thread tiles, buffers
};

/// Declares `--params` on @p cli: the parameter sets the kernel is instantiated for.
void add_stage_options(cs::CommandLine& cli, StageOptions& options) {
  cli.add_choice("params", &options.params, kKernels.params(),
                 "block tile of C (rows x columns) x step along K / warp tile / thread tile of C (rows x "
                 "columns) / shared-memory buffers in the ring");
}

/// Plans the launch: a 1-D grid of ceil(m / BM)·ceil(n / BN) blocks of (BM / WM)·(BN / WN) warps.
cs::MatmulLaunch plan_launch(const StageOptions& options, const cs::MatmulShape& shape) {
  const std::string params = options.params;
  const cs::TileSizes tile = cs::tile_sizes_of(params, "BMxBNxBK/WMxWN/TMxTN/sS");
  const std::int64_t blocks_x = (shape.n + tile.block_n - 1) / tile.block_n;
  const std::int64_t blocks_y = (shape.m + tile.block_m - 1) / tile.block_m;
  const dim3 grid = cs::grid_of(blocks_x * blocks_y);
  const int warp_cols = tile.block_n / tile.warp_n; // warps across the block's tile of C
  const int threads = (tile.block_m / tile.warp_m) * warp_cols * 32;
  const dim3 block(static_cast<unsigned>(threads));
  // The ring: S buffers of a transposed, padded A tile and a B tile.
  const std::size_t buffer_bytes = sizeof(float) * tile.block_k * (tile.block_m + 4 + tile.block_n);
  const std::size_t shared_bytes = tile.stages * buffer_bytes;
  cs::MatmulLaunch launch;
  launch.name = "pipelined_" + params;
  launch.what = "stage 10's tiles, " + std::to_string(tile.stages) +
                " shared-memory buffers: the next k-tiles copied by cp.async while one multiplies";
  launch.grid = grid;
  launch.block = block;
  launch.shared_bytes = shared_bytes;
  launch.notes = {
      "block b owns a " + std::to_string(tile.block_m) + " x " + std::to_string(tile.block_n) +
          " tile of C, the tiles taken in groups of " + std::to_string(kGroupRows) +
          " rows, down each column of a group before the next; a warp owns " + std::to_string(tile.warp_m) +
          " x " + std::to_string(tile.warp_n) + " of it, a thread " + std::to_string(tile.thread_m) + " x " +
          std::to_string(tile.thread_n) +
          (cs::min_blocks_per_sm(tile.thread_m, tile.thread_n) == 2 ? " (two blocks per SM)"
                                                                    : " (one block per SM)"),
      "shared memory: a ring of " + std::to_string(tile.stages) + " buffers of " +
          std::to_string(buffer_bytes) +
          " bytes (an A tile and a B tile); step t waits for tile t, passes one barrier, starts copying tile "
          "t + " +
          std::to_string(tile.stages - 1) + " and multiplies tile t",
      shape.n % 4 == 0 && shape.k % 4 == 0
          ? "n and k are multiples of 4: a quad of B is one 16-byte copy (of A, four 4-byte ones, "
            "transposed), of C one 16-byte store"
          : "n or k is not a multiple of 4: a quad is four 4-byte copies or guarded stores"};
  launch.index_width_from_host = false;
  launch.run = [=](const cs::MatmulArgs& p) {
    cs::launch_with_shared_memory(kKernels.find(params, cs::rows_are_16_byte_aligned(p)), grid, block,
                                  shared_bytes, p.a, p.b, p.c, p.m, p.n, p.k);
  };
  return launch;
}

} // namespace stage11

/// Hands the kernel's launch and the stage's option to the host flow every matmul stage shares, on a
/// GPU of compute capability 8.0 or later (cp.async).
int main(int argc, char** argv) {
  stage11::StageOptions options;
  return cs::run_matmul_stage(
      {"11_pipelined",
       "C = A*B on the GPU, stage 10's warp tiles fed by a cp.async pipeline through shared memory.",
       [&](cs::CommandLine& cli) { stage11::add_stage_options(cli, options); },
       [&](const cs::MatmulShape& shape) { return stage11::plan_launch(options, shape); }, 80, "cp.async"},
      argc, argv);
}
