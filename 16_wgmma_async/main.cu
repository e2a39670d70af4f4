// 16_wgmma_async: the tensor cores multiply one k-tile while the warps fetch the next.
//
// Stage 15 issued a k-tile's wgmma, committed them and waited for them at once: while the tensor
// cores worked, the warps only waited, and while the warps waited for copies, passed the barrier and
// started the next copies, the tensor cores had nothing to do. Here the wait keeps one group in
// flight: step t issues tile t's wgmma and waits only for tile t - 1's, so tile t's products run
// while the warps go round to step t + 1. A buffer is then in use for two steps, by the group that
// may still be running and by the one just issued, so the ring copies kStages - 2 tiles ahead
// instead of kStages - 1, into the buffer of tile t - 2, whose products have surely finished.
//
// Run:  16_wgmma_async --size 4096                        (256x128x64/s4, the default: four warpgroups)
//       16_wgmma_async --size 4096 --params 128x256x64/s4 (two warpgroups, 64 x 256 each)
//       16_wgmma_async --size 4099                        (n, k not multiples of 8: 2-byte copies)
//       (--plan: print the launch and exit, no GPU needed; --help: every option)
// Everything but the kernel and its launch is the host flow every matmul stage shares
// (common/matmul_flow.cu: parse, generate, copy, time, verify, cuBLAS, report). wgmma exists on
// compute capability 9.0 alone (the sm_90a target): on any other GPU the stage exits 77.
/// @file
/// @brief Stage 16: stage 15's wgmma left running while the warps go on, one group in flight
/// (chapter: 16_wgmma_async/README.md).
#include "cp_async.cuh"
#include "kernel_table.cuh"
#include "matmul_flow.cuh"
#include "store_pair.cuh"
#include "swizzle.cuh"
#include "wgmma.cuh"

#include <cuda_bf16.h>

#include <cstdint>
#include <string>

// This stage's own names (every matmul stage has a StageOptions and a plan_launch of its own).
namespace stage16 {

/// Block rows per group in the order blocks take their tiles of C.
constexpr int kGroupRows = 8;

using bf16 = __nv_bfloat16; ///< bfloat16: a float's sign, 8-bit exponent and top 7 significand bits

/// C = A·B (A m×k, B k×n, bf16; C m×n, FP32; row-major) with stage 15's tiles and wgmma, one group
/// of them left running while the warps go on to the next step (chapter 16). The grid is 1-D,
/// the tiles of C taken in groups of kGroupRows rows; every thread reaches every barrier, and only
/// the stores to C are guarded; sizes and offsets are 64-bit whatever the problem.
///
/// @tparam kBlockM rows of C per block, 64 per warpgroup.
/// @tparam kBlockN columns of C per block: the N of each wgmma (128 or 256).
/// @tparam kBlockK the step along K (64: a row of the A tile is 128 bytes, the swizzle's width).
/// @tparam kStages buffers in the ring: the k-tile being multiplied, the one before it (whose wgmma
///         may still be running) and kStages - 2 on their way.
/// @tparam kAligned every row of A, B and C starts on a 16-byte boundary (cs::rows_are_16_byte_aligned,
///         checked by the host before the launch): 16 bytes of A or B are one cp.async, a pair of C
///         one 8-byte store; otherwise eight 2-byte loads and stores, and two 4-byte stores.
template <int kBlockM, int kBlockN, int kBlockK, int kStages, bool kAligned>
__global__ void __launch_bounds__(kBlockM / 64 * 128, 1)
    matmul_wgmma(const bf16* a, const bf16* b, float* c, std::int64_t m, std::int64_t n, std::int64_t k) {
  constexpr int kThreads = kBlockM / 64 * 128; // a warpgroup of 128 threads per 64 rows
  static_assert(kBlockM % 64 == 0, "a warpgroup's wgmma covers 64 rows");
  static_assert(kBlockK == 64 && kBlockN % 64 == 0, "swizzled rows are whole 128-byte stripes");
  static_assert(kStages >= 3, "a ring with one tile on its way besides the two being multiplied");
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
  // The ring of kStages buffers, in dynamic shared memory from its first 1024-byte boundary (the
  // host asks for 1024 bytes more). Buffer s: the A tile, kBlockM rows of kBlockK bf16
  // (A[row][k_tile + i] at swizzled_in_stripes(row, i / 8, kBlockM) + i % 8), then the B tile, kBlockK
  // rows of kBlockN (B[k_tile + i][col] at swizzled_in_stripes(i, col / 8, kBlockK) + col % 8). Both
  // tiles are multiples of 1024 bytes, so every tile starts on a 1024-byte boundary.
  constexpr int kTileAElements = kBlockM * kBlockK;
  constexpr int kStageElements = kTileAElements + kBlockK * kBlockN;
  extern __shared__ float4 shared_quads[];
  const unsigned shared_start = static_cast<unsigned>(__cvta_generic_to_shared(shared_quads));
  bf16* const shared =
      reinterpret_cast<bf16*>(reinterpret_cast<char*>(shared_quads) + (-shared_start & 1023));

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

  // Computing: block -> warpgroup -> warp -> lane. This warpgroup's 64 rows of the block's tile,
  // this warp's 16 of them, and this lane's place in each 16 x 8 piece: g = lane / 4 picks its rows,
  // q = lane % 4 its pair of columns.
  const int warpgroup = threadIdx.x / 128;
  const int warp = threadIdx.x % 128 / 32;
  const int lane = threadIdx.x % 32;
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
      bf16* const to = &tile_a[cs::swizzled_in_stripes(a_row, a_load_col / 8, kBlockM)];
      cs::copy_chunk_async<kAligned>(to, a_next[p], a_row_in_a[p], k_tile + a_load_col, k, a);
      a_next[p] += kBlockK;
    }
#pragma unroll
    for (int p = 0; p < kBPasses; ++p) {
      // 16 bytes of a row of B, copied to their swizzled chunk (one cp.async when aligned).
      const int b_row = b_load_row + p * kBRowsPerPass;
      bf16* const to = &tile_b[cs::swizzled_in_stripes(b_row, b_load_col / 8, kBlockK)];
      cs::copy_chunk_async<kAligned>(to, b_next + p * b_pass_step, k_tile + b_row < k, b_col, n, b);
    }
    b_next += b_step;
  };

  float sums[kBlockN / 2] = {}; // this lane's 2 x 2 elements of each 16 x 8 piece of the warp's 16 rows
  // Issues the products of the k-tile in buffer `stage`, 16 along K at a time, and commits them as
  // one group; they run on while the warpgroup goes on.
  const auto multiply_stage = [&](int stage) {
    // This warpgroup's 64 rows of the A tile (a whole number of 8-row groups: 1024-byte aligned).
    const bf16* const tile_a = shared + stage * kStageElements + warpgroup * 64 * kBlockK;
    const bf16* const tile_b = shared + stage * kStageElements + kTileAElements;
    cs::fence_sums(); // wgmma.fence: the sums' registers are ready for the tensor cores
#pragma unroll
    for (int i = 0; i < kBlockK; i += 16) {
      // A: 64 rows from column i: 2i bytes into each 128-byte row; 8-row groups 1024 bytes apart.
      // B: 16 rows from row i: 128·i bytes into each stripe; 8-row groups 1024 bytes apart, stripes
      // kBlockK rows of 128 bytes apart.
      const std::uint64_t a_tile = cs::matrix_descriptor(tile_a + i, 16, 1024);
      const std::uint64_t b_tile = cs::matrix_descriptor(tile_b + i * 64, kBlockK * 128, 1024);
      cs::wgmma_64xNx16<kBlockN>(sums, a_tile, b_tile); // wgmma.mma_async.sync.aligned.m64nNk16
    }
    cs::commit_products(); // wgmma.commit_group
  };

  // LAB 16.pipeline: one group in flight: copy t + kStages - 2, wait for tile t - 1's products after t's
  // LAB-STUB: static_cast<void>(k_tiles);
  // Before the loop: tiles 0 .. kStages - 3 on their way, a group of copies each (an empty group
  // past the last tile, so that as many groups are in flight at every step).
#pragma unroll
  for (int s = 0; s < kStages - 2; ++s) {
    if (s < k_tiles) copy_tile_async(static_cast<std::int64_t>(s) * kBlockK, s);
    cs::commit_copies();
  }
  int read_stage = 0;            // the buffer tile t is in
  int write_stage = kStages - 2; // the buffer tile t + kStages - 2 goes to: the one step t - 2 read
  for (int t = 0; t < k_tiles; ++t) {
    // This thread's copies of tile t have landed (the kStages - 3 younger groups may still fly), and
    // are ordered before the tensor cores' reads of them.
    cs::wait_for_copies<kStages - 3>();
    cs::fence_for_async_proxy(); // fence.proxy.async: the tensor cores read what cp.async wrote
    // The one barrier: everyone's copies of tile t are in, and every warpgroup's products of tile
    // t - 2 have finished (each waited for them at the end of step t - 1), so their buffer is free.
    __syncthreads();
    // Tile t + kStages - 2 on its way while tiles t - 1 and t multiply.
    if (t + kStages - 2 < k_tiles)
      copy_tile_async(static_cast<std::int64_t>(t + kStages - 2) * kBlockK, write_stage);
    cs::commit_copies();
    multiply_stage(read_stage);
    // Tile t's products may run on; tile t - 1's have finished.
    cs::wait_for_products<1>(); // wgmma.wait_group 1
    read_stage = read_stage + 1 == kStages ? 0 : read_stage + 1;
    write_stage = write_stage + 1 == kStages ? 0 : write_stage + 1;
  }
  // The last tile's products too, before the sums are read.
  cs::wait_for_products<0>();
  // END LAB
  // Each 16 x 8 piece goes to C a pair at a time (rows g and g + 8 of the warp's 16, columns 2q,
  // 2q + 1), only the columns inside C (store_pair drops the rest).
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const std::int64_t row = block_row + warpgroup * 64 + warp * 16 + g + 8 * half;
    if (row >= m) continue;
#pragma unroll
    for (int j = 0; j < kBlockN / 8; ++j) {
      const std::int64_t col = block_col + j * 8 + 2 * q;
      cs::store_pair<kAligned>(c + row * n + col, sums[4 * j + 2 * half], sums[4 * j + 2 * half + 1], col, n);
    }
  }
}

/// The kernel's instances, one per `--params` set: for rows on 16-byte boundaries, and for the others.
const cs::KernelTable<void (*)(const bf16*, const bf16*, float*, std::int64_t, std::int64_t, std::int64_t)>
    kKernels = {
        {"128x256x64/s4", matmul_wgmma<128, 256, 64, 4, true>, matmul_wgmma<128, 256, 64, 4, false>},
        {"128x256x64/s3", matmul_wgmma<128, 256, 64, 3, true>, matmul_wgmma<128, 256, 64, 3, false>},
        {"128x128x64/s3", matmul_wgmma<128, 128, 64, 3, true>, matmul_wgmma<128, 128, 64, 3, false>},
        {"128x128x64/s4", matmul_wgmma<128, 128, 64, 4, true>, matmul_wgmma<128, 128, 64, 4, false>},
        {"256x128x64/s3", matmul_wgmma<256, 128, 64, 3, true>, matmul_wgmma<256, 128, 64, 3, false>},
        {"256x128x64/s4", matmul_wgmma<256, 128, 64, 4, true>, matmul_wgmma<256, 128, 64, 4, false>},
};

/// The stage's own option.
struct StageOptions {
  std::string params = "256x128x64/s4"; ///< `--params`: block tile, buffers
};

/// Declares `--params` on @p cli: the parameter sets the kernel is instantiated for.
void add_stage_options(cs::CommandLine& cli, StageOptions& options) {
  cli.add_choice("params", &options.params, kKernels.params(),
                 "block tile of C (rows x columns) x step along K / shared-memory buffers in the ring "
                 "(a warpgroup per 64 rows)");
}

/// Plans the launch: a 1-D grid of ceil(m / BM)·ceil(n / BN) blocks of BM / 64 warpgroups.
cs::Bf16MatmulLaunch plan_launch(const StageOptions& options, const cs::MatmulShape& shape) {
  const std::string params = options.params;
  const cs::TileSizes tile = cs::tile_sizes_of(params, "BMxBNxBK/sS");
  const std::int64_t blocks_x = (shape.n + tile.block_n - 1) / tile.block_n;
  const std::int64_t blocks_y = (shape.m + tile.block_m - 1) / tile.block_m;
  const dim3 grid = cs::grid_of(blocks_x * blocks_y);
  const dim3 block(static_cast<unsigned>(tile.block_m / 64 * 128));
  // The ring: S buffers of an A tile and a B tile, bf16, swizzled, no padding; 1024 bytes more, to
  // start it on a 1024-byte boundary.
  const std::size_t buffer_bytes = sizeof(bf16) * (tile.block_m * tile.block_k + tile.block_k * tile.block_n);
  const std::size_t shared_bytes = tile.stages * buffer_bytes + 1024;
  cs::Bf16MatmulLaunch launch;
  launch.name = "wgmma_async_" + params;
  launch.what = "stage 15's wgmma, one group left running while the warps go on";
  launch.grid = grid;
  launch.block = block;
  launch.shared_bytes = shared_bytes;
  launch.notes = {
      "block b owns a " + std::to_string(tile.block_m) + " x " + std::to_string(tile.block_n) +
          " tile of C, the tiles taken in groups of " + std::to_string(kGroupRows) +
          " rows, down each column of a group before the next; warpgroup g (4 warps) owns its rows 64g .. "
          "64g + 63: per 16 along K one wgmma.mma_async m64n" +
          std::to_string(tile.block_n) + "k16 on two shared-memory descriptors, " +
          std::to_string(tile.block_n / 2) + " FP32 sums per thread",
      "shared memory: a ring of " + std::to_string(tile.stages) + " buffers of " +
          std::to_string(buffer_bytes) +
          " bytes (an A tile and a B tile, B in stripes of 64 columns, 128-byte swizzle); step t waits for "
          "tile t, fences, passes one barrier, starts copying tile t + " +
          std::to_string(tile.stages - 2) + ", issues tile t's wgmma and waits for tile t - 1's",
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

} // namespace stage16

/// Hands the kernel's launch and the stage's option to the host flow every matmul stage shares, as
/// a bf16 stage: bf16 A and B, FP32 C, compute capability 9.0 exactly (sm_90a code).
int main(int argc, char** argv) {
  stage16::StageOptions options;
  return cs::run_matmul_stage(
      cs::Bf16MatmulStage{"16_wgmma_async",
                          "C = A*B on the GPU's tensor cores: wgmma.mma_async on swizzled tiles in shared "
                          "memory, a warpgroup per 64 rows.",
                          [&](cs::CommandLine& cli) { stage16::add_stage_options(cli, options); },
                          [&](const cs::MatmulShape& shape) { return stage16::plan_launch(options, shape); },
                          90, "wgmma, an sm_90a instruction", true},
      argc, argv);
}
