// 13_ldmatrix_swizzle: the warp loads its fragments with ldmatrix, from tiles stored swizzled.
//
// Stage 12's lanes gather their fragments one register at a time: four 32-bit reads per piece of A,
// and for B, whose pairs lie down a column, two 16-bit reads per register. Here ldmatrix loads four
// 8 x 8 matrices of bf16 for the whole warp in one instruction, straight into the fragment layout
// mma.sync wants, and its .trans form turns B's columns into pairs on the way. Its eight-row reads
// need each row's 16-byte chunk in a different bank group: instead of padding every row, the tiles
// are stored swizzled, chunk c of row r kept at chunk c XOR (r % 8) of that row, on write and on read.
//
// Run:  13_ldmatrix_swizzle --size 4096                                (128x128x64/64x64/s3, the default)
//       13_ldmatrix_swizzle --size 4096 --params 128x256x64/64x64/s3   (eight warps, one block per SM)
//       13_ldmatrix_swizzle --size 4096 --params 128x128x64/64x64/s4   (a ring of four: one block per SM)
//       13_ldmatrix_swizzle --size 4099                                (n, k not multiples of 8: 2-byte
//       copies)
//       (--plan: print the launch and exit, no GPU needed; --help: every option)
// Everything but the kernel and its launch is the host flow every matmul stage shares
// (common/matmul_flow.cu: parse, generate, copy, time, verify, cuBLAS, report).
/// @file
/// @brief Stage 13: stage 12's mma.sync fed by ldmatrix from XOR-swizzled shared-memory tiles
/// (chapter: 13_ldmatrix_swizzle/README.md).
#include "matmul_flow.cuh"

#include <cuda_bf16.h>

#include <cstdint>
#include <cstdio>
#include <string>

// This stage's own names (every matmul stage has a StageOptions and a plan_launch of its own).
namespace stage13 {

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

/// Four 8 x 8 matrices of bf16 from shared memory into the warp's registers, one instruction for the
/// whole warp: lanes 8j .. 8j + 7 each give @p row, the address of one 16-byte row of matrix j, and
/// every lane gets in @p fragment[j] its pair of matrix j: row lane / 4, columns 2·(lane % 4) and
/// 2·(lane % 4) + 1, the layout of an mma fragment. kTranspose (ldmatrix .trans): the pair is column
/// lane / 4, rows 2·(lane % 4) and 2·(lane % 4) + 1 instead, so a matrix stored row by row arrives
/// as the column-major fragment B needs.
template <bool kTranspose>
__device__ __forceinline__ void load_matrices(unsigned (&fragment)[4], const bf16* row) {
  const unsigned shared_row = static_cast<unsigned>(__cvta_generic_to_shared(row));
  if constexpr (kTranspose)
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(fragment[0]), "=r"(fragment[1]), "=r"(fragment[2]), "=r"(fragment[3])
                 : "r"(shared_row));
  else
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(fragment[0]), "=r"(fragment[1]), "=r"(fragment[2]), "=r"(fragment[3])
                 : "r"(shared_row));
}

/// sums += A·B for one 16 x 8 piece of C, by the whole warp: mma.sync.aligned.m16n8k16 with bf16 A
/// (16 x 16, row-major) and B (16 x 8, column-major: pairs run down K), FP32 sums. With g = lane / 4
/// and q = lane % 4, this lane holds
///   @p a:    a[0] = A[g][2q, 2q+1],   a[1] = A[g+8][2q, 2q+1],
///            a[2] = A[g][2q+8, 2q+9], a[3] = A[g+8][2q+8, 2q+9]
///   @p b:    b[0] = B[2q, 2q+1][g], b[1] = B[2q+8, 2q+9][g]
///   @p sums: sums[0, 1] = C[g][2q, 2q+1], sums[2, 3] = C[g+8][2q, 2q+1]
/// Every lane must reach it with its own fragments (.sync, .aligned): a warp-wide instruction.
__device__ __forceinline__ void mma_16x8x16(float (&sums)[4], const unsigned (&a)[4],
                                            const unsigned (&b)[2]) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(sums[0]), "+f"(sums[1]), "+f"(sums[2]), "+f"(sums[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
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

/// Block rows per group in the order blocks take their tiles of C (see matmul_ldmatrix_swizzle).
constexpr int kGroupRows = 8;

/// Where chunk @p chunk (16 bytes, 8 bf16) of row @p row of a swizzled tile is kept, as an index of
/// bf16 from the tile's start: chunk @p chunk XOR (row % 8) of the same row, whose length is
/// @p row_elements bf16 (a multiple of 64: 128 bytes). The XOR permutes the chunks inside each
/// 128-byte stretch of a row, so that chunk c of 8 consecutive rows, which an ldmatrix reads at once,
/// lies in 8 different groups of 4 banks. Every write to a tile and every read from it goes through
/// here (chapter 13 has the picture).
__device__ __forceinline__ int swizzled(int row, int chunk, int row_elements) {
  return row * row_elements + (chunk ^ (row % 8)) * 8;
}

/// C = A·B with stage 11's block and warp tiles and cp.async ring, the warp's products done by the
/// tensor cores (A is m×k, B is k×n, both bf16; C is m×n, FP32; all row-major).
///
/// The grid is 1-D: block b owns the kBlockM × kBlockN tile of C that the launch order gives it
/// (groups of kGroupRows rows of tiles, down a column of a group before the next, as in stage 11).
/// Shared memory (dynamic) is a ring of kStages buffers, each an A tile, kBlockM rows of kBlockK
/// bf16, and a B tile, kBlockK rows of kBlockN bf16, both as in global memory but for the order of
/// the 16-byte chunks in a row: swizzled (see swizzled()), with no padding. Every thread copies its
/// chunks (8 consecutive bf16 of a row) of each k-tile to their swizzled places, zeros past an edge:
/// with cp.async when every row is 16-byte aligned, else element by element; the ring's steps are
/// stage 11's. Warp w owns a kWarpM × kWarpN tile of the block's tile, kWarpM / 16 × kWarpN / 8
/// pieces of 16 × 8, each summed by mma_16x8x16 in four FP32 registers per lane. For each 16 along K
/// the warp loads the fragments of A for each row of pieces with one ldmatrix (four 8 × 8 matrices:
/// the piece's 16 × 16), those of B for each two columns of pieces with one ldmatrix .trans, and
/// issues one mma per piece. Every thread reaches every barrier; only the stores to C are guarded.
/// Sizes and offsets are 64-bit whatever the problem.
///
/// @tparam kBlockM rows of C per block.
/// @tparam kBlockN columns of C per block.
/// @tparam kBlockK the step along K: columns of the A tile, rows of the B tile (64: a row of the A
///         tile is then 128 bytes, what the swizzle permutes).
/// @tparam kWarpM rows of C per warp (a multiple of 16).
/// @tparam kWarpN columns of C per warp (a multiple of 16: B is loaded two pieces at a time); a block
///         is (kBlockM / kWarpM)·(kBlockN / kWarpN) warps.
/// @tparam kStages buffers in the ring: the k-tile being multiplied and kStages - 1 on their way.
/// @tparam kAligned every row of A, B and C starts on a 16-byte boundary (rows_are_16_byte_aligned,
///         checked by the host before the launch): a chunk is one 16-byte cp.async and a pair of C one
///         8-byte store; otherwise a chunk is eight 2-byte loads and stores, and a pair two 4-byte stores.
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
  static_assert(kWarpM % 16 == 0 && kWarpN % 16 == 0,
                "a warp's tile is made of 16 x 8 pieces, B's loaded in pairs");
  static_assert(kBlockK % 64 == 0 && kBlockN % 64 == 0, "swizzled rows are whole 128-byte stretches");
  static_assert(kStages >= 2, "a pipeline needs at least two buffers");
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
      bf16* const to = &tile_a[swizzled(a_row, a_load_col / 8, kBlockK)];
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
      bf16* const to = &tile_b[swizzled(b_row, b_load_col / 8, kBlockN)];
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
      // LAB 13.ldmatrix: one ldmatrix per piece of A, one .trans per two pieces of B, swizzled addresses
      // LAB-STUB: static_cast<void>(tile_a), static_cast<void>(tile_b);
#pragma unroll
      for (int pm = 0; pm < kPiecesM; ++pm) {
        // Matrices 0-3: rows 0-7 and 8-15 of the piece at columns i .. i + 7, then at i + 8 .. i + 15,
        // which are a[0] .. a[3]; lane l gives row l % 16 of the piece, chunk i / 8 + l / 16.
        const int row = warp_row * kWarpM + pm * 16 + lane % 16;
        load_matrices<false>(fragment_a[pm], &tile_a[swizzled(row, i / 8 + lane / 16, kBlockK)]);
      }
#pragma unroll
      for (int pn = 0; pn < kPiecesN; pn += 2) {
        // Matrices 0-3: rows i .. i + 7 and i + 8 .. i + 15 of piece pn's 8 columns, then of piece
        // pn + 1's, which are its b[0], b[1] and the next piece's; lane l gives row i + l % 16,
        // chunk (first column) / 8 + l / 16. Transposed: B's pairs run down its columns.
        const int col = warp_col * kWarpN + pn * 8;
        load_matrices<true>(fragment_b[pn / 2],
                            &tile_b[swizzled(i + lane % 16, col / 8 + lane / 16, kBlockN)]);
      }
      // END LAB
#pragma unroll
      for (int pm = 0; pm < kPiecesM; ++pm)
#pragma unroll
        for (int pn = 0; pn < kPiecesN; ++pn) {
          const unsigned b[2] = {fragment_b[pn / 2][pn % 2 * 2], fragment_b[pn / 2][pn % 2 * 2 + 1]};
          mma_16x8x16(sums[pm][pn], fragment_a[pm], b);
        }
    }
  };

  // LAB 13.pipeline: as 11.pipeline, the ring's steps: wait, barrier, copy t + kStages - 1, multiply t
  // LAB-STUB: static_cast<void>(k_tiles);
  // Before the loop: tiles 0 .. kStages - 2 on their way, a group of copies each (an empty group
  // past the last tile, so that as many groups are in flight at every step).
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < k_tiles) copy_tile_async(static_cast<std::int64_t>(s) * kBlockK, s);
    commit_copies();
  }
  int read_stage = 0;            // the buffer tile t is in
  int write_stage = kStages - 1; // the buffer tile t + kStages - 1 goes to: the one step t - 1 read
  for (int t = 0; t < k_tiles; ++t) {
    // This thread's copies of tile t have landed (the kStages - 2 younger groups may still fly).
    wait_for_copies<kStages - 2>();
    // The one barrier: everyone's copies of tile t are in, and everyone has finished step t - 1,
    // whose buffer the copy below overwrites.
    __syncthreads();
    // Tile t + kStages - 1 on its way while tile t multiplies.
    if (t + kStages - 1 < k_tiles)
      copy_tile_async(static_cast<std::int64_t>(t + kStages - 1) * kBlockK, write_stage);
    commit_copies();
    multiply_stage(read_stage);
    read_stage = read_stage + 1 == kStages ? 0 : read_stage + 1;
    write_stage = write_stage + 1 == kStages ? 0 : write_stage + 1;
  }
  // END LAB
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
        store_pair<kAligned>(c + row * n + col, sums[pm][pn][2 * half], sums[pm][pn][2 * half + 1], col, n);
      }
    }
  }
}

/// The stage's own option.
struct StageOptions {
  std::string params = "128x128x64/64x64/s3"; ///< `--params`: block and warp tiles, buffers
};

/// Declares `--params` on @p cli: the parameter sets the kernel is instantiated for.
void add_stage_options(cs::CommandLine& cli, StageOptions& options) {
  cli.add_choice("params", &options.params,
                 {"128x128x64/64x64/s3", "128x256x64/64x64/s3", "128x128x64/64x64/s4", "256x128x64/64x64/s3"},
                 "block tile of C (rows x columns) x step along K / warp tile of C (rows x columns) / "
                 "shared-memory buffers in the ring");
}

/// The sizes a `--params` set names, "BMxBNxBK/WMxWN/sS".
struct TileSizes {
  int block_m = 0; ///< BM: rows of C per block
  int block_n = 0; ///< BN: columns of C per block
  int block_k = 0; ///< BK: the step along K
  int warp_m = 0;  ///< WM: rows of C per warp
  int warp_n = 0;  ///< WN: columns of C per warp
  int stages = 0;  ///< S: shared-memory buffers in the ring
};

/// Reads the sizes out of a `--params` set (one of the choices add_stage_options offers).
TileSizes tile_sizes_of(const std::string& params) {
  TileSizes sizes;
  std::sscanf(params.c_str(), "%dx%dx%d/%dx%d/s%d", &sizes.block_m, &sizes.block_n, &sizes.block_k,
              &sizes.warp_m, &sizes.warp_n, &sizes.stages);
  return sizes;
}

/// Plans the launch: a 1-D grid of ceil(m / BM)·ceil(n / BN) blocks of (BM / WM)·(BN / WN) warps.
cs::Bf16MatmulLaunch plan_launch(const StageOptions& options, const cs::MatmulShape& shape) {
  const std::string params = options.params;
  const TileSizes tile = tile_sizes_of(params);
  const std::int64_t blocks_x = (shape.n + tile.block_n - 1) / tile.block_n;
  const std::int64_t blocks_y = (shape.m + tile.block_m - 1) / tile.block_m;
  const dim3 grid = cs::grid_of(blocks_x * blocks_y);
  const int warp_cols = tile.block_n / tile.warp_n; // warps across the block's tile of C
  const int threads = (tile.block_m / tile.warp_m) * warp_cols * 32;
  const dim3 block(static_cast<unsigned>(threads));
  const int pieces = (tile.warp_m / 16) * (tile.warp_n / 8);
  const std::int64_t k_steps = (shape.k + tile.block_k - 1) / tile.block_k;
  // Each block loads its BM rows of A and BN columns of B once, BK at a time, for BM x BN elements of C.
  const std::int64_t loads_per_element =
      (k_steps * tile.block_k * (tile.block_m + tile.block_n) + tile.block_m * tile.block_n / 2) /
      (tile.block_m * tile.block_n);
  // The ring: S buffers of an A tile and a B tile, bf16, swizzled, no padding.
  const std::size_t buffer_bytes = sizeof(bf16) * (tile.block_m * tile.block_k + tile.block_k * tile.block_n);
  const std::size_t shared_bytes = tile.stages * buffer_bytes;
  // cudaMalloc aligns A, B and C themselves, so n and k decide whether every row is 16-byte aligned.
  const bool chunks_are_16_bytes = shape.n % 8 == 0 && shape.k % 8 == 0;
  cs::Bf16MatmulLaunch launch;
  launch.name = "ldmatrix_swizzle_" + params;
  launch.what = "stage 12's mma.sync, fragments by ldmatrix from XOR-swizzled tiles";
  launch.grid = grid;
  launch.block = block;
  launch.shared_bytes = shared_bytes;
  launch.notes = {
      "block b owns a " + std::to_string(tile.block_m) + "-row x " + std::to_string(tile.block_n) +
          "-column tile of C, taken in groups of " + std::to_string(kGroupRows) +
          " rows of tiles, down each column of a group before the next; warp w owns " +
          std::to_string(tile.warp_m) + " x " + std::to_string(tile.warp_n) + " elements of it, from row " +
          std::to_string(tile.warp_m) + " x (w / " + std::to_string(warp_cols) + "), column " +
          std::to_string(tile.warp_n) + " x (w % " + std::to_string(warp_cols) + ")",
      "a warp's tile is " + std::to_string(tile.warp_m / 16) + " x " + std::to_string(tile.warp_n / 8) +
          " pieces of 16 x 8, each one mma.sync m16n8k16 per 16 along K; a lane holds 4 sums of each: " +
          std::to_string(4 * pieces) + " FP32 registers per thread",
      "per 16 along K a warp loads its fragments with " + std::to_string(tile.warp_m / 16) +
          " ldmatrix.x4 (A) + " + std::to_string(tile.warp_n / 16) + " ldmatrix.x4.trans (B) for " +
          std::to_string(pieces) +
          " mma; chunk c of row r is kept at chunk c ^ (r % 8): each 8-row read hits 32 different banks",
      "shared memory: a ring of " + std::to_string(tile.stages) + " buffers of " +
          std::to_string(buffer_bytes) +
          " bytes (an A tile and a B tile, bf16, swizzled); step t waits for tile t, passes one barrier, " +
          "starts copying tile t + " + std::to_string(tile.stages - 1) + " and multiplies tile t",
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
    if (params == "128x256x64/64x64/s3" && aligned)
      launch_with_shared_memory(matmul_ldmatrix_swizzle<128, 256, 64, 64, 64, 3, true>);
    if (params == "128x256x64/64x64/s3" && !aligned)
      launch_with_shared_memory(matmul_ldmatrix_swizzle<128, 256, 64, 64, 64, 3, false>);
    if (params == "128x128x64/64x64/s3" && aligned)
      launch_with_shared_memory(matmul_ldmatrix_swizzle<128, 128, 64, 64, 64, 3, true>);
    if (params == "128x128x64/64x64/s3" && !aligned)
      launch_with_shared_memory(matmul_ldmatrix_swizzle<128, 128, 64, 64, 64, 3, false>);
    if (params == "128x128x64/64x64/s4" && aligned)
      launch_with_shared_memory(matmul_ldmatrix_swizzle<128, 128, 64, 64, 64, 4, true>);
    if (params == "128x128x64/64x64/s4" && !aligned)
      launch_with_shared_memory(matmul_ldmatrix_swizzle<128, 128, 64, 64, 64, 4, false>);
    if (params == "256x128x64/64x64/s3" && aligned)
      launch_with_shared_memory(matmul_ldmatrix_swizzle<256, 128, 64, 64, 64, 3, true>);
    if (params == "256x128x64/64x64/s3" && !aligned)
      launch_with_shared_memory(matmul_ldmatrix_swizzle<256, 128, 64, 64, 64, 3, false>);
    CUDA_CHECK_LAUNCH();
  };
  return launch;
}

} // namespace stage13

/// Hands the kernel's launch and the stage's option to the host flow every matmul stage shares, as
/// a bf16 stage: bf16 A and B, FP32 C, compute capability 8.0 or later.
int main(int argc, char** argv) {
  stage13::StageOptions options;
  return cs::run_matmul_stage(
      cs::Bf16MatmulStage{
          "13_ldmatrix_swizzle",
          "C = A*B on the GPU's tensor cores: stage 12's mma.sync fed by ldmatrix from XOR-swizzled tiles.",
          [&](cs::CommandLine& cli) { stage13::add_stage_options(cli, options); },
          [&](const cs::MatmulShape& shape) { return stage13::plan_launch(options, shape); }, 80,
          "bf16 mma.sync, ldmatrix and cp.async"},
      argc, argv);
}
