// 12_bf16_inputs: A and B in bfloat16, half the bytes; the products still FP32, on the CUDA cores.
//
// Stage 11 runs as fast as FP32 multiply-adds on the CUDA cores go. The tensor cores, which the next
// stages use, take 16-bit inputs, and this stage changes only what that format brings: A and B are
// bfloat16 (a float's sign and exponent, 7 bits of significand; C and the sums stay FP32), so a
// k-tile is half the bytes and 16 bytes of a row are 8 elements. cp.async cannot copy 2 bytes, so A
// is no longer transposed on its way in: its tile keeps A's rows, and a thread
// reads a pair of A along a row for two steps along K. Each element is widened to FP32 in the
// register it is read into, and the multiply-adds are stage 11's, on the same units.
//
// Run:  12_bf16_inputs --size 4096                                   (128x256x32/64x64/16x8/s2, the default)
//       12_bf16_inputs --size 4096 --params 128x256x32/64x64/16x8/s3 (three buffers)
//       12_bf16_inputs --size 4096 --params 128x128x32/64x32/8x8/s3  (stage 10's block and warp tiles)
//       12_bf16_inputs --size 4099                                   (n, k not multiples of 8: 2-byte copies)
//       (--plan: print the launch and exit, no GPU needed; --help: every option)
// Everything but the kernel and its launch is the host flow every matmul stage shares
// (common/matmul_flow.cu: parse, generate, copy, time, verify, cuBLAS, report).
/// @file
/// @brief Stage 12: stage 11's tiles and ring with bf16 A and B, widened to FP32 for the CUDA cores
/// (chapter: 12_bf16_inputs/README.md).
#include "bf16.cuh"
#include "cp_async.cuh"
#include "kernel_table.cuh"
#include "matmul_flow.cuh"
#include "quads.cuh"
#include "thread_tile.cuh"

#include <cuda_bf16.h>

#include <cstdint>
#include <string>

// This stage's own names (every matmul stage has a StageOptions and a plan_launch of its own).
namespace stage12 {

/// Block rows per group in the order blocks take their tiles of C.
constexpr int kGroupRows = 8;

using bf16 = __nv_bfloat16; ///< bfloat16: a float's sign, 8-bit exponent and top 7 significand bits

/// C = A·B (A m×k, B k×n, bf16; C m×n, FP32; row-major) with stage 11's block, warp and thread tiles
/// and ring, every product widened to FP32 (chapter 12). The grid is 1-D, the tiles of C taken in
/// groups of kGroupRows rows; every thread reaches every barrier, and only the stores to C are
/// guarded; sizes and offsets are 64-bit whatever the problem.
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
///         checked by the host before the launch): 16 bytes of A or B are one cp.async, a quad of C
///         one 16-byte store; otherwise eight 2-byte loads and stores, and four 4-byte stores.
template <int kBlockM, int kBlockN, int kBlockK, int kWarpM, int kWarpN, int kThreadM, int kThreadN,
          int kStages, bool kAligned>
__global__ void __launch_bounds__((kBlockM / kWarpM) * (kBlockN / kWarpN) * 32,
                                  cs::min_blocks_per_sm(kThreadM, kThreadN))
    matmul_bf16_inputs(const bf16* a, const bf16* b, float* c, std::int64_t m, std::int64_t n,
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
  static_assert(kBlockK % 8 == 0 && kThreadM % 4 == 0 && kThreadN % 4 == 0,
                "tiles load in chunks of 8 and are read in pairs along K and quads of B");
  static_assert(kStages >= 2, "a pipeline needs at least two buffers");
  // Loading 16 bytes at a time: the A tile in passes of kARowsPerPass rows, the B tile of kBRowsPerPass.
  constexpr int kAChunksPerRow = kBlockK / 8;
  constexpr int kARowsPerPass = kThreads / kAChunksPerRow;
  constexpr int kAPasses = kBlockM / kARowsPerPass;
  constexpr int kBChunksPerRow = kBlockN / 8;
  constexpr int kBRowsPerPass = kThreads / kBChunksPerRow;
  constexpr int kBPasses = kBlockK / kBRowsPerPass;
  static_assert(kThreads % kAChunksPerRow == 0 && kBlockM % kARowsPerPass == 0,
                "the A tile loads in whole passes");
  static_assert(kThreads % kBChunksPerRow == 0 && kBlockK % kBRowsPerPass == 0,
                "the B tile loads in whole passes");
  // The ring of kStages buffers, in dynamic shared memory, 16-byte aligned. Buffer s: the A tile,
  // kBlockM rows of kTileAStride bf16 (tile_a[row·kTileAStride + i] = A[row][k_tile + i]), then the
  // B tile, kBlockK rows of kTileBStride (tile_b[i·kTileBStride + col] = B[k_tile + i][col]).
  constexpr int kTileAStride = kBlockK;
  constexpr int kTileBStride = kBlockN;
  constexpr int kTileAElements = kBlockM * kTileAStride;
  constexpr int kStageElements = kTileAElements + kBlockK * kTileBStride;
  extern __shared__ float4 shared_quads[];
  bf16* const shared = reinterpret_cast<bf16*>(shared_quads);

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
  const int a_load_row = threadIdx.x / kAChunksPerRow;
  const int a_load_col = threadIdx.x % kAChunksPerRow * 8;
  const int b_load_row = threadIdx.x / kBChunksPerRow;
  const int b_load_col = threadIdx.x % kBChunksPerRow * 8;

  // The offsets are computed once and then walked: a pointer into A per pass (its rows are
  // kARowsPerPass·k apart) and one into B (its passes kBRowsPerPass·n apart), each moving one step
  // along K per tile. A copy from outside A or B is handed row or column 0 and reads nothing.
  const std::int64_t block_row = static_cast<std::int64_t>(block_row_index) * kBlockM;
  const std::int64_t block_col = static_cast<std::int64_t>(block_col_index) * kBlockN;
  const bf16* a_next[kAPasses];
  bool a_row_in_a[kAPasses];
#pragma unroll
  for (int p = 0; p < kAPasses; ++p) {
    const std::int64_t a_row = block_row + a_load_row + p * kARowsPerPass;
    a_row_in_a[p] = a_row < m;
    a_next[p] = a + (a_row_in_a[p] ? a_row : 0) * k + a_load_col;
  }
  const std::int64_t b_col = block_col + b_load_col;
  const bool b_col_in_b = b_col < n;
  const bf16* b_next = b + static_cast<std::int64_t>(b_load_row) * n + (b_col_in_b ? b_col : 0);
  const std::int64_t b_pass_step = static_cast<std::int64_t>(kBRowsPerPass) * n;
  const std::int64_t b_step = static_cast<std::int64_t>(kBlockK) * n;
  const int k_tiles = static_cast<int>((k + kBlockK - 1) / kBlockK);

  // Starts copying the k-tile at k_tile into buffer `stage`, and walks the pointers on to the next.
  // Each thread copies kAPasses times 16 bytes of the A tile and kBPasses of the B tile: zeros past an edge.
  const auto copy_tile_async = [&](std::int64_t k_tile, int stage) {
    bf16* const tile_a = shared + stage * kStageElements;
    bf16* const tile_b = tile_a + kTileAElements;
#pragma unroll
    for (int p = 0; p < kAPasses; ++p) {
      // 16 bytes of a row of A, copied as they are (one cp.async when aligned).
      const int a_row = a_load_row + p * kARowsPerPass;
      bf16* const to = &tile_a[a_row * kTileAStride + a_load_col];
      cs::copy_chunk_async<kAligned>(to, a_next[p], a_row_in_a[p], k_tile + a_load_col, k, a);
      a_next[p] += kBlockK;
    }
#pragma unroll
    for (int p = 0; p < kBPasses; ++p) {
      // 16 bytes of a row of B, copied as they are (one cp.async when aligned).
      const int b_row = b_load_row + p * kBRowsPerPass;
      bf16* const to = &tile_b[b_row * kTileBStride + b_load_col];
      cs::copy_chunk_async<kAligned>(to, b_next + p * b_pass_step, k_tile + b_row < k, b_col, n, b);
    }
    b_next += b_step;
  };

  float sums[kThreadM][kThreadN] = {}; // this thread's kThreadM x kThreadN elements of C, in registers
  // Multiplies the k-tile in buffer `stage` into the sums: two steps along K per read of A.
  const auto multiply_stage = [&](int stage) {
    const bf16* const tile_a = shared + stage * kStageElements;
    const bf16* const tile_b = tile_a + kTileAElements;
#pragma unroll
    for (int i = 0; i < kBlockK; i += 2) {
      float2 fragment_a[kThreadM];   // A[row][i], A[row][i + 1] of the tile, this thread's rows
      float fragment_b[2][kThreadN]; // rows i and i + 1 of the B tile, this thread's columns
      // LAB 12.widen: per row a pair of A along K, per 4 columns a quad of B in rows i and i + 1, widened
      // LAB-STUB: static_cast<void>(tile_a), static_cast<void>(tile_b);
#pragma unroll
      for (int r = 0; r < kThreadM; ++r) // one 32-bit read per row: a pair lies along a row of A
        fragment_a[r] = cs::widen_pair(&tile_a[(thread_row + r / 4 * kSubM + r % 4) * kTileAStride + i]);
#pragma unroll
      for (int j = 0; j < 2; ++j) {
#pragma unroll
        for (int cc = 0; cc < kThreadN; cc += 4) { // one 64-bit read per 4 columns of a row of B
          const float4 quad = cs::widen_quad(&tile_b[(i + j) * kTileBStride + thread_col + cc / 4 * kSubN]);
          fragment_b[j][cc + 0] = quad.x;
          fragment_b[j][cc + 1] = quad.y;
          fragment_b[j][cc + 2] = quad.z;
          fragment_b[j][cc + 3] = quad.w;
        }
      }
      // END LAB
#pragma unroll
      for (int r = 0; r < kThreadM; ++r)
#pragma unroll
        for (int cc = 0; cc < kThreadN; ++cc) {
          sums[r][cc] += fragment_a[r].x * fragment_b[0][cc];
          sums[r][cc] += fragment_a[r].y * fragment_b[1][cc];
        }
    }
  };

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
const cs::KernelTable<void (*)(const bf16*, const bf16*, float*, std::int64_t, std::int64_t, std::int64_t)>
    kKernels = {
        {"128x256x32/64x64/16x8/s2", matmul_bf16_inputs<128, 256, 32, 64, 64, 16, 8, 2, true>,
         matmul_bf16_inputs<128, 256, 32, 64, 64, 16, 8, 2, false>},
        {"128x256x32/64x64/16x8/s3", matmul_bf16_inputs<128, 256, 32, 64, 64, 16, 8, 3, true>,
         matmul_bf16_inputs<128, 256, 32, 64, 64, 16, 8, 3, false>},
        {"128x128x32/64x32/8x8/s3", matmul_bf16_inputs<128, 128, 32, 64, 32, 8, 8, 3, true>,
         matmul_bf16_inputs<128, 128, 32, 64, 32, 8, 8, 3, false>},
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
cs::Bf16MatmulLaunch plan_launch(const StageOptions& options, const cs::MatmulShape& shape) {
  const std::string params = options.params;
  const cs::TileSizes tile = cs::tile_sizes_of(params, "BMxBNxBK/WMxWN/TMxTN/sS");
  const std::int64_t blocks_x = (shape.n + tile.block_n - 1) / tile.block_n;
  const std::int64_t blocks_y = (shape.m + tile.block_m - 1) / tile.block_m;
  const dim3 grid = cs::grid_of(blocks_x * blocks_y);
  const int warp_cols = tile.block_n / tile.warp_n; // warps across the block's tile of C
  const int threads = (tile.block_m / tile.warp_m) * warp_cols * 32;
  const dim3 block(static_cast<unsigned>(threads));
  // The ring: S buffers of an A tile and a B tile, bf16.
  const std::size_t buffer_bytes = sizeof(bf16) * (tile.block_m * tile.block_k + tile.block_k * tile.block_n);
  const std::size_t shared_bytes = tile.stages * buffer_bytes;
  cs::Bf16MatmulLaunch launch;
  launch.name = "bf16_inputs_" + params;
  launch.what = "stage 11's tiles and ring, bf16 in: each element widened to FP32 for the CUDA cores";
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
      shape.n % 8 == 0 && shape.k % 8 == 0
          ? "n and k are multiples of 8: a chunk of 8 bf16 is one 16-byte cp.async, a quad of C one 16-byte "
            "store"
          : "n or k is not a multiple of 8: a chunk is eight 2-byte loads and stores, a quad of C four "
            "4-byte stores"};
  launch.index_width_from_host = false;
  launch.run = [=](const cs::Bf16MatmulArgs& p) {
    cs::launch_with_shared_memory(kKernels.find(params, cs::rows_are_16_byte_aligned(p)), grid, block,
                                  shared_bytes, p.a, p.b, p.c, p.m, p.n, p.k);
  };
  return launch;
}

} // namespace stage12

/// Hands the kernel's launch and the stage's option to the host flow every matmul stage shares, as
/// a bf16 stage whose sums are FP32 multiply-adds: bf16 A and B, FP32 C, compute capability 8.0 or
/// later (cp.async).
int main(int argc, char** argv) {
  stage12::StageOptions options;
  return cs::run_matmul_stage(
      cs::Bf16MatmulStage{"12_bf16_inputs",
                          "C = A*B on the GPU: bf16 A and B widened to FP32 for the CUDA cores, fed by stage "
                          "11's cp.async ring.",
                          [&](cs::CommandLine& cli) { stage12::add_stage_options(cli, options); },
                          [&](const cs::MatmulShape& shape) { return stage12::plan_launch(options, shape); },
                          80, "cp.async", false, false},
      argc, argv);
}
