// 14_ldmatrix_swizzle: the warp loads its fragments with ldmatrix, from tiles stored swizzled.
//
// Stage 13's lanes gather their fragments one register at a time: four 32-bit reads per piece of A,
// and for B, whose pairs lie down a column, two 16-bit reads per register. Here ldmatrix loads four
// 8 x 8 matrices of bf16 for the whole warp in one instruction, straight into the fragment layout
// mma.sync wants, and its .trans form turns B's columns into pairs on the way. Its eight-row reads
// need each row's 16-byte chunk in a different bank group: instead of padding every row, the tiles
// are stored swizzled, chunk c of row r kept at chunk c XOR (r % 8) of that row, on write and on read.
//
// Run:  14_ldmatrix_swizzle --size 4096                                (128x128x64/64x64/s3, the default)
//       14_ldmatrix_swizzle --size 4096 --params 128x256x64/64x64/s3   (eight warps, one block per SM)
//       14_ldmatrix_swizzle --size 4096 --params 128x128x64/64x64/s4   (a ring of four: one block per SM)
//       14_ldmatrix_swizzle --size 4099                                (n, k not multiples of 8: 2-byte
//       copies)
//       (--plan: print the launch and exit, no GPU needed; --help: every option)
// Everything but the kernel and its launch is the host flow every matmul stage shares
// (common/matmul_flow.cu: parse, generate, copy, time, verify, cuBLAS, report).
/// @file
/// @brief Stage 14: stage 13's mma.sync fed by ldmatrix from XOR-swizzled shared-memory tiles
/// (chapter: 14_ldmatrix_swizzle/README.md).
#include "cp_async.cuh"
#include "kernel_table.cuh"
#include "ldmatrix.cuh"
#include "matmul_flow.cuh"
#include "mma_sync.cuh"
#include "store_pair.cuh"
#include "swizzle.cuh"

#include <cuda_bf16.h>

#include <cstdint>
#include <string>

// This stage's own names (every matmul stage has a StageOptions and a plan_launch of its own).
namespace stage14 {

/// Block rows per group in the order blocks take their tiles of C.
constexpr int kGroupRows = 8;

using bf16 = __nv_bfloat16; ///< bfloat16: a float's sign, 8-bit exponent and top 7 significand bits

/// C = A·B (A m×k, B k×n, bf16; C m×n, FP32; row-major) with stage 13's tiles, ring and mma.sync, the
/// fragments loaded by ldmatrix from tiles stored swizzled (chapter 14). The grid is 1-D,
/// the tiles of C taken in groups of kGroupRows rows; every thread reaches every barrier, and only
/// the stores to C are guarded; sizes and offsets are 64-bit whatever the problem.
///
/// @tparam kBlockM rows of C per block.
/// @tparam kBlockN columns of C per block.
/// @tparam kBlockK the step along K: columns of the A tile, rows of the B tile (64: a row of the A
///         tile is then 128 bytes, what the swizzle permutes).
/// @tparam kWarpM rows of C per warp.
/// @tparam kWarpN columns of C per warp (B is loaded two pieces at a time); a block is (kBlockM /
/// kWarpM)·(kBlockN / kWarpN) warps (1-D).
/// @tparam kStages buffers in the ring: the k-tile being multiplied and kStages - 1 on their way.
/// @tparam kAligned every row of A, B and C starts on a 16-byte boundary (cs::rows_are_16_byte_aligned,
///         checked by the host before the launch): 16 bytes of A or B are one cp.async, a pair of C
///         one 8-byte store; otherwise eight 2-byte loads and stores, and two 4-byte stores.
template <int kBlockM, int kBlockN, int kBlockK, int kWarpM, int kWarpN, int kStages, bool kAligned>
__global__ void __launch_bounds__((kBlockM / kWarpM) * (kBlockN / kWarpN) * 32, 1)
    matmul_ldmatrix_swizzle(const bf16* a, const bf16* b, float* c, std::int64_t m, std::int64_t n,
                            std::int64_t k) {
  constexpr int kWarpsN = kBlockN / kWarpN; // warps across the block's tile of C
  constexpr int kThreads = (kBlockM / kWarpM) * kWarpsN * 32;
  // A warp's tile in pieces of 16 x 8, one mma each per 16 along K.
  constexpr int kPiecesM = kWarpM / 16;
  constexpr int kPiecesN = kWarpN / 8;
  static_assert(kBlockM % kWarpM == 0 && kBlockN % kWarpN == 0, "a warp's tile must tile the block's");
  static_assert(kWarpM % 16 == 0 && kWarpN % 16 == 0 && kBlockK % 16 == 0, "whole pieces, B's in pairs");
  static_assert(kBlockK % 64 == 0 && kBlockN % 64 == 0, "swizzled rows are whole 128-byte stretches");
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
  // kBlockM rows of kBlockK bf16 (A[row][k_tile + i] at swizzled(row, i / 8, kBlockK) + i % 8), then
  // the B tile, kBlockK rows of kBlockN (B[k_tile + i][col] at swizzled(i, col / 8, kBlockN) + col % 8).
  constexpr int kTileAElements = kBlockM * kBlockK;
  constexpr int kStageElements = kTileAElements + kBlockK * kBlockN;
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
  // the pieces of C: g = lane / 4 picks its rows, q = lane % 4 its pair of columns.
  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  const int warp_row = warp / kWarpsN;
  const int warp_col = warp % kWarpsN;
  const int g = lane / 4;
  const int q = lane % 4;
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
      // 16 bytes of a row of A, copied to their swizzled chunk (one cp.async when aligned).
      const int a_row = a_load_row + p * kARowsPerPass;
      bf16* const to = &tile_a[cs::swizzled(a_row, a_load_col / 8, kBlockK)];
      cs::copy_chunk_async<kAligned>(to, a_next[p], a_row_in_a[p], k_tile + a_load_col, k, a);
      a_next[p] += kBlockK;
    }
#pragma unroll
    for (int p = 0; p < kBPasses; ++p) {
      // 16 bytes of a row of B, copied to their swizzled chunk (one cp.async when aligned).
      const int b_row = b_load_row + p * kBRowsPerPass;
      bf16* const to = &tile_b[cs::swizzled(b_row, b_load_col / 8, kBlockN)];
      cs::copy_chunk_async<kAligned>(to, b_next + p * b_pass_step, k_tile + b_row < k, b_col, n, b);
    }
    b_next += b_step;
  };

  float sums[kPiecesM][kPiecesN][4] = {}; // this lane's 4 elements of each of the warp's 16 x 8 pieces
  // Multiplies the k-tile in buffer `stage` into the sums: 16 along K at a time, the fragments by
  // ldmatrix, one mma per piece.
  const auto multiply_stage = [&](int stage) {
    const bf16* const tile_a = shared + stage * kStageElements;
    const bf16* const tile_b = tile_a + kTileAElements;
#pragma unroll
    for (int i = 0; i < kBlockK; i += 16) {
      unsigned fragment_a[kPiecesM][4] = {};     // this lane's 8 elements of each 16 x 16 piece of A
      unsigned fragment_b[kPiecesN / 2][4] = {}; // its 4 elements of each 16 x 8 piece of B, two pieces a row
      // LAB 14.ldmatrix: one ldmatrix per piece of A, one .trans per two pieces of B, swizzled addresses
      // LAB-STUB: static_cast<void>(tile_a), static_cast<void>(tile_b);
#pragma unroll
      for (int pm = 0; pm < kPiecesM; ++pm) {
        // Matrices 0-3: rows 0-7 and 8-15 of the piece at columns i .. i + 7, then at i + 8 .. i + 15,
        // which are a[0] .. a[3]; lane l gives row l % 16 of the piece, chunk i / 8 + l / 16.
        const int row = warp_row * kWarpM + pm * 16 + lane % 16;
        cs::load_matrices<false>(fragment_a[pm],
                                 &tile_a[cs::swizzled(row, i / 8 + lane / 16, kBlockK)]); // ldmatrix.x4
      }
#pragma unroll
      for (int pn = 0; pn < kPiecesN; pn += 2) {
        // Matrices 0-3: rows i .. i + 7 and i + 8 .. i + 15 of piece pn's 8 columns, then of piece
        // pn + 1's, which are its b[0], b[1] and the next piece's; lane l gives row i + l % 16,
        // chunk (first column) / 8 + l / 16. Transposed: B's pairs run down its columns.
        const int col = warp_col * kWarpN + pn * 8;
        cs::load_matrices<true>(fragment_b[pn / 2],
                                &tile_b[cs::swizzled(i + lane % 16, col / 8 + lane / 16, kBlockN)]);
      }
      // END LAB
#pragma unroll
      for (int pm = 0; pm < kPiecesM; ++pm)
#pragma unroll
        for (int pn = 0; pn < kPiecesN; ++pn) { // mma.sync.aligned.m16n8k16: the warp's product of one piece
          const unsigned b[2] = {fragment_b[pn / 2][pn % 2 * 2], fragment_b[pn / 2][pn % 2 * 2 + 1]};
          cs::mma_16x8x16(sums[pm][pn], fragment_a[pm], b);
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
  // Each piece goes to C a pair at a time (rows g and g + 8, columns 2q, 2q + 1), only the columns
  // inside C (store_pair drops the rest).
#pragma unroll
  for (int pm = 0; pm < kPiecesM; ++pm) {
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const std::int64_t row = block_row + warp_row * kWarpM + pm * 16 + g + 8 * half;
      if (row >= m) continue;
#pragma unroll
      for (int pn = 0; pn < kPiecesN; ++pn) {
        const std::int64_t col = block_col + warp_col * kWarpN + pn * 8 + 2 * q;
        cs::store_pair<kAligned>(c + row * n + col, sums[pm][pn][2 * half], sums[pm][pn][2 * half + 1], col,
                                 n);
      }
    }
  }
}

/// The kernel's instances, one per `--params` set: for rows on 16-byte boundaries, and for the others.
const cs::KernelTable<void (*)(const bf16*, const bf16*, float*, std::int64_t, std::int64_t, std::int64_t)>
    kKernels = {
        {"128x256x64/64x64/s3", matmul_ldmatrix_swizzle<128, 256, 64, 64, 64, 3, true>,
         matmul_ldmatrix_swizzle<128, 256, 64, 64, 64, 3, false>},
        {"128x128x64/64x64/s3", matmul_ldmatrix_swizzle<128, 128, 64, 64, 64, 3, true>,
         matmul_ldmatrix_swizzle<128, 128, 64, 64, 64, 3, false>},
        {"128x128x64/64x64/s4", matmul_ldmatrix_swizzle<128, 128, 64, 64, 64, 4, true>,
         matmul_ldmatrix_swizzle<128, 128, 64, 64, 64, 4, false>},
        {"256x128x64/64x64/s3", matmul_ldmatrix_swizzle<256, 128, 64, 64, 64, 3, true>,
         matmul_ldmatrix_swizzle<256, 128, 64, 64, 64, 3, false>},
};

/// The stage's own option.
struct StageOptions {
  std::string params = "128x128x64/64x64/s3"; ///< `--params`: block and warp tiles, buffers
};

/// Declares `--params` on @p cli: the parameter sets the kernel is instantiated for.
void add_stage_options(cs::CommandLine& cli, StageOptions& options) {
  cli.add_choice("params", &options.params, kKernels.params(),
                 "block tile of C (rows x columns) x step along K / warp tile of C (rows x columns) / "
                 "shared-memory buffers in the ring");
}

/// Plans the launch: a 1-D grid of ceil(m / BM)·ceil(n / BN) blocks of (BM / WM)·(BN / WN) warps.
cs::Bf16MatmulLaunch plan_launch(const StageOptions& options, const cs::MatmulShape& shape) {
  const std::string params = options.params;
  const cs::TileSizes tile = cs::tile_sizes_of(params, "BMxBNxBK/WMxWN/sS");
  const std::int64_t blocks_x = (shape.n + tile.block_n - 1) / tile.block_n;
  const std::int64_t blocks_y = (shape.m + tile.block_m - 1) / tile.block_m;
  const dim3 grid = cs::grid_of(blocks_x * blocks_y);
  const int warp_cols = tile.block_n / tile.warp_n; // warps across the block's tile of C
  const int threads = (tile.block_m / tile.warp_m) * warp_cols * 32;
  const dim3 block(static_cast<unsigned>(threads));
  // The ring: S buffers of an A tile and a B tile, bf16, swizzled, no padding.
  const std::size_t buffer_bytes = sizeof(bf16) * (tile.block_m * tile.block_k + tile.block_k * tile.block_n);
  const std::size_t shared_bytes = tile.stages * buffer_bytes;
  cs::Bf16MatmulLaunch launch;
  launch.name = "ldmatrix_swizzle_" + params;
  launch.what = "stage 13's mma.sync, fragments by ldmatrix from XOR-swizzled tiles";
  launch.grid = grid;
  launch.block = block;
  launch.shared_bytes = shared_bytes;
  launch.notes = {
      "block b owns a " + std::to_string(tile.block_m) + " x " + std::to_string(tile.block_n) +
          " tile of C, the tiles taken in groups of " + std::to_string(kGroupRows) +
          " rows, down each column of a group before the next; a warp owns " + std::to_string(tile.warp_m) +
          " x " + std::to_string(tile.warp_n) + " of it: " + std::to_string(tile.warp_m / 16) + " x " +
          std::to_string(tile.warp_n / 8) + " pieces of 16 x 8, one mma.sync m16n8k16 each per 16 along K, " +
          "the fragments by " + std::to_string(tile.warp_m / 16) + " ldmatrix.x4 (A) + " +
          std::to_string(tile.warp_n / 16) + " ldmatrix.x4.trans (B)",
      "shared memory: a ring of " + std::to_string(tile.stages) + " buffers of " +
          std::to_string(buffer_bytes) +
          " bytes (an A tile and a B tile, chunk c of row r kept at chunk c ^ (r % 8)); step t waits for "
          "tile t, passes one "
          "barrier, starts copying tile t + " +
          std::to_string(tile.stages - 1) + " and multiplies tile t",
      shape.n % 8 == 0 && shape.k % 8 == 0
          ? "n and k are multiples of 8: a chunk of 8 bf16 is one 16-byte cp.async, a pair of C one 8-byte "
            "store"
          : "n or k is not a multiple of 8: a chunk is eight 2-byte loads and stores, a pair of C two 4-byte "
            "stores"};
  launch.index_width_from_host = false;
  launch.run = [=](const cs::Bf16MatmulArgs& p) {
    cs::launch_with_shared_memory(kKernels.find(params, cs::rows_are_16_byte_aligned(p)), grid, block,
                                  shared_bytes, p.a, p.b, p.c, p.m, p.n, p.k);
  };
  return launch;
}

} // namespace stage14

/// Hands the kernel's launch and the stage's option to the host flow every matmul stage shares, as
/// a bf16 stage: bf16 A and B, FP32 C, compute capability 8.0 or later.
int main(int argc, char** argv) {
  stage14::StageOptions options;
  return cs::run_matmul_stage(
      cs::Bf16MatmulStage{
          "14_ldmatrix_swizzle",
          "C = A*B on the GPU's tensor cores: stage 13's mma.sync fed by ldmatrix from XOR-swizzled tiles.",
          [&](cs::CommandLine& cli) { stage14::add_stage_options(cli, options); },
          [&](const cs::MatmulShape& shape) { return stage14::plan_launch(options, shape); }, 80,
          "bf16 mma.sync, ldmatrix and cp.async"},
      argc, argv);
}
