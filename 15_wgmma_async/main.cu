// 15_wgmma_async: the tensor cores multiply one k-tile while the warps fetch the next.
//
// Stage 14 issued a k-tile's wgmma, committed them and waited for them at once: while the tensor
// cores worked, the warps only waited, and while the warps waited for copies, passed the barrier and
// started the next copies, the tensor cores had nothing to do. Here the wait keeps one group in
// flight: step t issues tile t's wgmma and waits only for tile t - 1's, so tile t's products run
// while the warps go round to step t + 1. A buffer is then in use for two steps, by the group that
// may still be running and by the one just issued, so the ring copies kStages - 2 tiles ahead
// instead of kStages - 1, into the buffer of tile t - 2, whose products have surely finished.
//
// Run:  15_wgmma_async --size 4096                        (256x128x64/s4, the default: four warpgroups)
//       15_wgmma_async --size 4096 --params 128x256x64/s4 (two warpgroups, 64 x 256 each)
//       15_wgmma_async --size 4099                        (n, k not multiples of 8: 2-byte copies)
//       (--plan: print the launch and exit, no GPU needed; --help: every option)
// Everything but the kernel and its launch is the host flow every matmul stage shares
// (common/matmul_flow.cu: parse, generate, copy, time, verify, cuBLAS, report). wgmma exists on
// compute capability 9.0 alone (the sm_90a target): on any other GPU the stage exits 77.
/// @file
/// @brief Stage 15: stage 14's wgmma left running while the warps go on, one group in flight
/// (chapter: 15_wgmma_async/README.md).
#include "matmul_flow.cuh"
#include "wgmma.cuh"

#include <cuda_bf16.h>

#include <cstdint>
#include <cstdio>
#include <string>

// This stage's own names (every matmul stage has a StageOptions and a plan_launch of its own).
namespace stage15 {

using bf16 = __nv_bfloat16; ///< bfloat16: a float's sign, 8-bit exponent and top 7 significand bits

/// Whether every row of A (k bf16), B (n bf16) and C (n floats) starts on a 16-byte boundary, so
/// that 8 consecutive bf16 starting at a multiple of 8 are one 16-byte copy: n and k multiples of 8,
/// and the three matrices themselves 16-byte aligned.
bool rows_are_16_byte_aligned(const bf16* a, const bf16* b, const float* c, std::int64_t n, std::int64_t k) {
  const auto misaligned = [](const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 != 0; };
  return n % 8 == 0 && k % 8 == 0 && !misaligned(a) && !misaligned(b) && !misaligned(c);
}

/// Starts copying 16 bytes (8 bf16) from @p from in global memory to @p to in shared memory, both
/// 16-byte aligned, and returns without waiting: cp.async, which does not pass through registers.
/// When @p in_matrix is false nothing is read and the 16 bytes at @p to are zero-filled; the copy
/// is then handed @p fallback, any valid address of the same matrix.
__device__ __forceinline__ void copy_async_16(bf16* to, const bf16* from, bool in_matrix,
                                              const bf16* fallback) {
  const unsigned shared_to = static_cast<unsigned>(__cvta_generic_to_shared(to));
  const int read_bytes = in_matrix ? 16 : 0;
  from = in_matrix ? from : fallback;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(shared_to), "l"(from), "r"(read_bytes)
               : "memory");
}

/// Closes the group of copies this thread has started since its last commit.
__device__ __forceinline__ void commit_copies() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}

/// Waits until at most kPending of this thread's committed groups of copies are still in flight.
template <int kPending>
__device__ __forceinline__ void wait_for_copies() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending) : "memory");
}

/// Orders this thread's earlier writes to shared memory (its cp.async copies and its plain stores,
/// made through the "generic proxy") before later reads of it by the tensor cores' wgmma, which read
/// shared memory through the "async proxy": a write one proxy made is not promised to be seen by the
/// other without this fence. Every thread that wrote a tile runs it before the barrier that hands
/// the tile over.
__device__ __forceinline__ void fence_for_tensor_cores() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

/// A wgmma matrix descriptor: where a tile of bf16 in shared memory starts and how the tensor core
/// walks it, in 64 bits. The tile is made of 8-row groups of 128-byte rows stored with the 128-byte
/// swizzle (see swizzled()); @p group_bytes apart from one group to the next (bits 32-45, in units of
/// 16 bytes), @p stripe_bytes apart from one 64-column stripe to the next (bits 16-29: B's tile, whose
/// 128-byte rows run along N, is read across stripes; A's 16 columns lie inside one row, and the
/// field is not used: 16 by convention), the start address in bits 0-13 and the swizzle mode in bits
/// 62-63 (1: 128 bytes). The swizzle is applied to the address
/// bits, so every tile starts on a 1024-byte boundary (base offset 0, bits 49-51).
__device__ __forceinline__ std::uint64_t matrix_descriptor(const bf16* tile, int stripe_bytes,
                                                           int group_bytes) {
  const auto address = static_cast<std::uint64_t>(__cvta_generic_to_shared(tile));
  return (address & 0x3FFFF) >> 4 | static_cast<std::uint64_t>(stripe_bytes >> 4) << 16 |
         static_cast<std::uint64_t>(group_bytes >> 4) << 32 | 1ull << 62;
}

/// Makes this thread's earlier reads and writes of the registers a wgmma accumulates into ordered
/// before the next wgmma: every thread of the warpgroup, before the first wgmma of a batch.
__device__ __forceinline__ void fence_sums() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}

/// Closes the batch of wgmma this warpgroup has issued since its last commit into one group.
__device__ __forceinline__ void commit_products() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}

/// Waits until at most kPending of this warpgroup's committed groups of wgmma are still running:
/// then the older groups have read their tiles and written their sums.
template <int kPending>
__device__ __forceinline__ void wait_for_products() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(kPending) : "memory");
}

/// Writes @p low and @p high to columns col and col + 1 of a row, at @p to (the address of column
/// col), dropping the columns at or past @p row_length. kAligned: row_length is even (a multiple of
/// 8), so col + 1 is inside whenever col is, and @p to is 8-byte aligned: one 8-byte store.
/// Otherwise two guarded 4-byte stores.
template <bool kAligned>
__device__ __forceinline__ void store_pair(float* to, float low, float high, std::int64_t col,
                                           std::int64_t row_length) {
  if (kAligned) {
    if (col < row_length) *reinterpret_cast<float2*>(to) = make_float2(low, high);
  } else {
    if (col < row_length) to[0] = low;
    if (col + 1 < row_length) to[1] = high;
  }
}

/// Block rows per group in the order blocks take their tiles of C (see matmul_wgmma).
constexpr int kGroupRows = 8;

/// Where chunk @p chunk (16 bytes, 8 bf16) of row @p row of a swizzled tile of @p rows rows is kept,
/// as an index of bf16 from the tile's start. The tile is stored in stripes of 64 columns (128
/// bytes), one after another, each @p rows rows of 128 bytes; inside its stripe, chunk c of a row is
/// at chunk c XOR (row % 8): stage 13's swizzle, the one wgmma's 128-byte mode undoes. A row of A's
/// tile (64 bf16) is one stripe; B's tile, 64 rows of kBlockN, is kBlockN / 64 stripes (chapter 14
/// has the picture).
__device__ __forceinline__ int swizzled(int row, int chunk, int rows) {
  return chunk / 8 * rows * 64 + row * 64 + (chunk % 8 ^ row % 8) * 8;
}

/// C = A·B with stage 14's tiles and wgmma, one group of them left in flight: one warpgroup per 64
/// rows of the block's tile (A is m×k, B is k×n, both bf16; C is m×n, FP32; all row-major).
///
/// The grid is 1-D: block b owns the kBlockM × kBlockN tile of C that the launch order gives it
/// (groups of kGroupRows rows of tiles, down a column of a group before the next, as in stage 14).
/// Shared memory (dynamic, from its first 1024-byte boundary) is a ring of kStages buffers, each an
/// A tile, kBlockM rows of kBlockK bf16, and a B tile, kBlockK rows of kBlockN bf16, both swizzled
/// (see swizzled()). Every thread copies its chunks of each k-tile to their swizzled places, zeros
/// past an edge: with cp.async when every row is 16-byte aligned, else element by element. Warpgroup
/// g owns rows 64g .. 64g + 63 of the block's tile and all its columns: for each 16 along K it
/// issues one wgmma on the descriptors of its 64 x 16 of A and of the 16 x kBlockN of B. A step of
/// the ring waits for its tile, fences, passes the one barrier, starts the copy of the tile
/// kStages - 2 ahead, issues its wgmma, commits them, and waits until only they are still running:
/// the products of one tile overlap the next step's wait, barrier and copies. Every thread reaches
/// every barrier; only the stores to C are guarded. Sizes and offsets are 64-bit whatever the problem.
///
/// @tparam kBlockM rows of C per block, 64 per warpgroup.
/// @tparam kBlockN columns of C per block: the N of each wgmma (128 or 256).
/// @tparam kBlockK the step along K (64: a row of the A tile is 128 bytes, the swizzle's width).
/// @tparam kStages buffers in the ring: the k-tile being multiplied, the one before it (whose wgmma
///         may still be running) and kStages - 2 on their way.
/// @tparam kAligned every row of A, B and C starts on a 16-byte boundary (rows_are_16_byte_aligned,
///         checked by the host before the launch): a chunk is one 16-byte cp.async and a pair of C one
///         8-byte store; otherwise a chunk is eight 2-byte loads and stores, and a pair two 4-byte stores.
template <int kBlockM, int kBlockN, int kBlockK, int kStages, bool kAligned>
__global__ void __launch_bounds__(kBlockM / 64 * 128, 1)
    matmul_wgmma(const bf16* a, const bf16* b, float* c, std::int64_t m, std::int64_t n, std::int64_t k) {
  constexpr int kThreads = kBlockM / 64 * 128; // a warpgroup of 128 threads per 64 rows
  static_assert(kBlockM % 64 == 0, "a warpgroup's wgmma covers 64 rows");
  static_assert(kBlockK == 64 && kBlockN % 64 == 0, "swizzled rows are whole 128-byte stripes");
  static_assert(kStages >= 3, "a ring with one tile on its way besides the two being multiplied");
  // Loading in chunks of 8 bf16 (16 bytes): the A tile in passes of kThreads / (kBlockK / 8) rows,
  // the B tile in passes of kThreads / (kBlockN / 8).
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
  // (A[row][k_tile + i] at swizzled(row, i / 8, kBlockM) + i % 8), then the B tile, kBlockK rows of
  // kBlockN (B[k_tile + i][col] at swizzled(i, col / 8, kBlockK) + col % 8). Both tiles are multiples
  // of 1024 bytes, so every tile starts on a 1024-byte boundary.
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
  // Loading: one chunk of the A tile and one of the B tile per pass, each in its own layout.
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
  // Each thread copies kAPasses chunks of the A tile and kBPasses of the B tile: zeros past an edge.
  const auto copy_tile_async = [&](std::int64_t k_tile, int stage) {
    bf16* const tile_a = shared + stage * kStageElements;
    bf16* const tile_b = tile_a + kTileAElements;
#pragma unroll
    for (int p = 0; p < kAPasses; ++p) {
      // Eight consecutive columns of a row of A, copied to their swizzled chunk.
      const int a_row = a_load_row + p * kARowsPerPass;
      const std::int64_t a_col = k_tile + a_load_col;
      bf16* const to = &tile_a[swizzled(a_row, a_load_col / 8, kBlockM)];
      if constexpr (kAligned) {
        // k % 8 == 0: the chunk is all inside the row or all past it, one test for its 16 bytes.
        copy_async_16(to, a_next[p], a_row_in_a[p] && a_col < k, a);
      } else {
        // Rows only 2-byte aligned: eight loads and stores, each inside A or zero.
#pragma unroll
        for (int e = 0; e < 8; ++e)
          to[e] = a_row_in_a[p] && a_col + e < k ? a_next[p][e] : __float2bfloat16(0.0f);
      }
      a_next[p] += kBlockK;
    }
#pragma unroll
    for (int p = 0; p < kBPasses; ++p) {
      // Eight consecutive columns of a row of B, copied to their swizzled chunk.
      const int b_row = b_load_row + p * kBRowsPerPass;
      bf16* const to = &tile_b[swizzled(b_row, b_load_col / 8, kBlockK)];
      const bf16* const from = b_next + p * b_pass_step;
      const bool b_row_in_b = k_tile + b_row < k;
      if constexpr (kAligned) {
        copy_async_16(to, from, b_row_in_b && b_col_in_b, b);
      } else {
#pragma unroll
        for (int e = 0; e < 8; ++e) to[e] = b_row_in_b && b_col + e < n ? from[e] : __float2bfloat16(0.0f);
      }
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
    // LAB 15.wgmma: as 14.wgmma, but the group is committed and left running: no wait here
    // LAB-STUB: static_cast<void>(tile_a), static_cast<void>(tile_b);
    fence_sums();
#pragma unroll
    for (int i = 0; i < kBlockK; i += 16) {
      // A: 64 rows from column i: 2i bytes into each 128-byte row; 8-row groups 1024 bytes apart.
      // B: 16 rows from row i: 128·i bytes into each stripe; 8-row groups 1024 bytes apart, stripes
      // kBlockK rows of 128 bytes apart.
      const std::uint64_t a_tile = matrix_descriptor(tile_a + i, 16, 1024);
      const std::uint64_t b_tile = matrix_descriptor(tile_b + i * 64, kBlockK * 128, 1024);
      cs::wgmma_64xNx16<kBlockN>(sums, a_tile, b_tile);
    }
    commit_products();
    // END LAB
  };

  // LAB 15.pipeline: as 14.pipeline, one group in flight: copy t + kStages - 2, wait for t - 1 after t
  // LAB-STUB: static_cast<void>(k_tiles);
  // Before the loop: tiles 0 .. kStages - 3 on their way, a group of copies each (an empty group
  // past the last tile, so that as many groups are in flight at every step).
#pragma unroll
  for (int s = 0; s < kStages - 2; ++s) {
    if (s < k_tiles) copy_tile_async(static_cast<std::int64_t>(s) * kBlockK, s);
    commit_copies();
  }
  int read_stage = 0;            // the buffer tile t is in
  int write_stage = kStages - 2; // the buffer tile t + kStages - 2 goes to: the one step t - 2 read
  for (int t = 0; t < k_tiles; ++t) {
    // This thread's copies of tile t have landed (the kStages - 3 younger groups may still fly), and
    // are ordered before the tensor cores' reads of them.
    wait_for_copies<kStages - 3>();
    fence_for_tensor_cores();
    // The one barrier: everyone's copies of tile t are in, and every warpgroup's products of tile
    // t - 2 have finished (each waited for them at the end of step t - 1), so their buffer is free.
    __syncthreads();
    // Tile t + kStages - 2 on its way while tiles t - 1 and t multiply.
    if (t + kStages - 2 < k_tiles)
      copy_tile_async(static_cast<std::int64_t>(t + kStages - 2) * kBlockK, write_stage);
    commit_copies();
    multiply_stage(read_stage);
    // Tile t's products may run on; tile t - 1's have finished.
    wait_for_products<1>();
    read_stage = read_stage + 1 == kStages ? 0 : read_stage + 1;
    write_stage = write_stage + 1 == kStages ? 0 : write_stage + 1;
  }
  // The last tile's products too, before the sums are read.
  wait_for_products<0>();
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
      store_pair<kAligned>(c + row * n + col, sums[4 * j + 2 * half], sums[4 * j + 2 * half + 1], col, n);
    }
  }
}

/// The stage's own option.
struct StageOptions {
  std::string params = "256x128x64/s4"; ///< `--params`: block tile, buffers
};

/// Declares `--params` on @p cli: the parameter sets the kernel is instantiated for.
void add_stage_options(cs::CommandLine& cli, StageOptions& options) {
  cli.add_choice(
      "params", &options.params,
      {"128x256x64/s4", "128x256x64/s3", "128x128x64/s3", "128x128x64/s4", "256x128x64/s3", "256x128x64/s4"},
      "block tile of C (rows x columns) x step along K / shared-memory buffers in the ring "
      "(a warpgroup per 64 rows)");
}

/// The sizes a `--params` set names, "BMxBNxBK/sS".
struct TileSizes {
  int block_m = 0; ///< BM: rows of C per block
  int block_n = 0; ///< BN: columns of C per block
  int block_k = 0; ///< BK: the step along K
  int stages = 0;  ///< S: shared-memory buffers in the ring
};

/// Reads the sizes out of a `--params` set (one of the choices add_stage_options offers).
TileSizes tile_sizes_of(const std::string& params) {
  TileSizes sizes;
  std::sscanf(params.c_str(), "%dx%dx%d/s%d", &sizes.block_m, &sizes.block_n, &sizes.block_k, &sizes.stages);
  return sizes;
}

/// Plans the launch: a 1-D grid of ceil(m / BM)·ceil(n / BN) blocks of BM / 64 warpgroups.
cs::Bf16MatmulLaunch plan_launch(const StageOptions& options, const cs::MatmulShape& shape) {
  const std::string params = options.params;
  const TileSizes tile = tile_sizes_of(params);
  const std::int64_t blocks_x = (shape.n + tile.block_n - 1) / tile.block_n;
  const std::int64_t blocks_y = (shape.m + tile.block_m - 1) / tile.block_m;
  const dim3 grid = cs::grid_of(blocks_x * blocks_y);
  const int warpgroups = tile.block_m / 64;
  const dim3 block(static_cast<unsigned>(warpgroups * 128));
  const std::int64_t k_steps = (shape.k + tile.block_k - 1) / tile.block_k;
  // Each block loads its BM rows of A and BN columns of B once, BK at a time, for BM x BN elements of C.
  const std::int64_t loads_per_element =
      (k_steps * tile.block_k * (tile.block_m + tile.block_n) + tile.block_m * tile.block_n / 2) /
      (tile.block_m * tile.block_n);
  // The ring: S buffers of an A tile and a B tile, bf16, swizzled, no padding; 1024 bytes more, to
  // start it on a 1024-byte boundary.
  const std::size_t buffer_bytes = sizeof(bf16) * (tile.block_m * tile.block_k + tile.block_k * tile.block_n);
  const std::size_t shared_bytes = tile.stages * buffer_bytes + 1024;
  // cudaMalloc aligns A, B and C themselves, so n and k decide whether every row is 16-byte aligned.
  const bool chunks_are_16_bytes = shape.n % 8 == 0 && shape.k % 8 == 0;
  cs::Bf16MatmulLaunch launch;
  launch.name = "wgmma_async_" + params;
  launch.what = "stage 14's wgmma, one group left running while the warps go on";
  launch.grid = grid;
  launch.block = block;
  launch.shared_bytes = shared_bytes;
  launch.notes = {
      "block b owns a " + std::to_string(tile.block_m) + "-row x " + std::to_string(tile.block_n) +
          "-column tile of C, taken in groups of " + std::to_string(kGroupRows) +
          " rows of tiles, down each column of a group before the next; warpgroup g (4 warps) owns its "
          "rows 64g .. 64g + 63, warp w of it 16 of those",
      "per 16 along K a warpgroup issues one wgmma.mma_async m64n" + std::to_string(tile.block_n) +
          "k16 on two shared-memory descriptors (A 64 x 16, B 16 x " + std::to_string(tile.block_n) +
          ", 128-byte swizzle); a lane holds " + std::to_string(tile.block_n / 2) + " FP32 sums",
      "shared memory: a ring of " + std::to_string(tile.stages) + " buffers of " +
          std::to_string(buffer_bytes) +
          " bytes (an A tile and a B tile, bf16, swizzled, B in stripes of 64 columns); step t waits for "
          "tile t, fences, passes one barrier, starts copying tile t + " +
          std::to_string(tile.stages - 2) + ", issues tile t's wgmma and waits for tile t - 1's",
      "global loads per element of C: about K/" + std::to_string(tile.block_m) + " + K/" +
          std::to_string(tile.block_n) + " = " + std::to_string(loads_per_element) + " bf16, in steps of " +
          std::to_string(tile.block_k) + " along K",
      chunks_are_16_bytes
          ? "n and k are multiples of 8, so every row starts on a 16-byte boundary: a chunk of 8 bf16 "
            "is one 16-byte cp.async, a pair of C one 8-byte store"
          : "n or k is not a multiple of 8, so rows start anywhere (bf16 rows of odd length are 2-byte "
            "aligned): a chunk is eight 2-byte loads and stores, a pair of C two 4-byte stores"};
  launch.index_width_from_host = false;
  launch.run = [=](const cs::Bf16MatmulArgs& p) {
    // More than 48 KB of dynamic shared memory per block needs the kernel's opt-in, before its launch.
    const auto launch_with_shared_memory = [&](auto kernel) {
      CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                      static_cast<int>(shared_bytes)));
      kernel<<<grid, block, shared_bytes>>>(p.a, p.b, p.c, p.m, p.n, p.k);
    };
    // The 16-byte path only when every row of A, B and C starts on a 16-byte boundary.
    const bool aligned = rows_are_16_byte_aligned(p.a, p.b, p.c, p.n, p.k);
    if (params == "128x256x64/s4" && aligned) launch_with_shared_memory(matmul_wgmma<128, 256, 64, 4, true>);
    if (params == "128x256x64/s4" && !aligned)
      launch_with_shared_memory(matmul_wgmma<128, 256, 64, 4, false>);
    if (params == "128x256x64/s3" && aligned) launch_with_shared_memory(matmul_wgmma<128, 256, 64, 3, true>);
    if (params == "128x256x64/s3" && !aligned)
      launch_with_shared_memory(matmul_wgmma<128, 256, 64, 3, false>);
    if (params == "128x128x64/s3" && aligned) launch_with_shared_memory(matmul_wgmma<128, 128, 64, 3, true>);
    if (params == "128x128x64/s3" && !aligned)
      launch_with_shared_memory(matmul_wgmma<128, 128, 64, 3, false>);
    if (params == "128x128x64/s4" && aligned) launch_with_shared_memory(matmul_wgmma<128, 128, 64, 4, true>);
    if (params == "128x128x64/s4" && !aligned)
      launch_with_shared_memory(matmul_wgmma<128, 128, 64, 4, false>);
    if (params == "256x128x64/s3" && aligned) launch_with_shared_memory(matmul_wgmma<256, 128, 64, 3, true>);
    if (params == "256x128x64/s3" && !aligned)
      launch_with_shared_memory(matmul_wgmma<256, 128, 64, 3, false>);
    if (params == "256x128x64/s4" && aligned) launch_with_shared_memory(matmul_wgmma<256, 128, 64, 4, true>);
    if (params == "256x128x64/s4" && !aligned)
      launch_with_shared_memory(matmul_wgmma<256, 128, 64, 4, false>);
    CUDA_CHECK_LAUNCH();
  };
  return launch;
}

} // namespace stage15

/// Hands the kernel's launch and the stage's option to the host flow every matmul stage shares, as
/// a bf16 stage: bf16 A and B, FP32 C, compute capability 9.0 exactly (sm_90a code).
int main(int argc, char** argv) {
  stage15::StageOptions options;
  return cs::run_matmul_stage(
      cs::Bf16MatmulStage{"15_wgmma_async",
                          "C = A*B on the GPU's tensor cores: wgmma.mma_async on swizzled tiles in shared "
                          "memory, a warpgroup per 64 rows.",
                          [&](cs::CommandLine& cli) { stage15::add_stage_options(cli, options); },
                          [&](const cs::MatmulShape& shape) { return stage15::plan_launch(options, shape); },
                          90, "wgmma, an sm_90a instruction", true},
      argc, argv);
}
