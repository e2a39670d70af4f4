// 21_unaligned_rows: C's rows off 16-byte boundaries leave through shared memory a row at a time,
// and A and B are padded in one launch.
//
// Where C has no tensor map (n or k not a multiple of 8), stage 20 stored C as stage 19 did: one
// store of a warp touched 8 rows, 32 bytes of each, with a shuffle for rows 4 bytes off an 8-byte
// boundary; at 4099^3 those stores were a quarter of the kernel's time (an H100, a throw-away build
// without them). Here each warp writes its 16 rows of a 32-column piece into its own part of a
// staging buffer and reads them back a row at a time, lane i with column i: one store of 128
// consecutive bytes per row, wherever the row starts, and __syncwarp the only barrier. The padded
// copies of A and B are one launch, read four bytes at a time where a row allows.
//
// Run:  21_unaligned_rows --size 4099                        (128x256x64/s4: two consumers)
//       21_unaligned_rows --size 4099 --params 256x128x64/s3 (four consumers)
//       (--plan: print the launch and exit, no GPU needed; --help: every option)
// Everything but the kernel and its launch is the host flow every matmul stage shares
// (common/matmul_flow.cu: parse, generate, copy, time, verify, cuBLAS, report). wgmma exists on
// compute capability 9.0 alone (the sm_90a target): on any other GPU the stage exits 77.
/// @file
/// @brief Stage 21: stage 20 with C's rows off 16-byte boundaries stored a whole row of a warp's
/// piece at a time, and one launch padding A and B (chapter: 21_unaligned_rows/README.md).
#include "device_buffer.cuh"
#include "matmul_flow.cuh"
#include "tensor_map.cuh"
#include "wgmma.cuh"

#include <cuda.h>
#include <cuda_bf16.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

// This stage's own names (every matmul stage has a StageOptions and a plan_launch of its own).
namespace stage21 {

using bf16 = __nv_bfloat16; ///< bfloat16: a float's sign, 8-bit exponent and top 7 significand bits

/// Whether every row of A (k bf16), B (n bf16) and C (n floats) starts on a 16-byte boundary, as a
/// tensor map needs of A and B: n and k multiples of 8, and the three matrices themselves 16-byte
/// aligned.
bool rows_are_16_byte_aligned(const bf16* a, const bf16* b, const float* c, std::int64_t n, std::int64_t k) {
  const auto misaligned = [](const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 != 0; };
  return n % 8 == 0 && k % 8 == 0 && !misaligned(a) && !misaligned(b) && !misaligned(c);
}

/// Whether the rows of the bf16 matrix at @p matrix, @p row_length elements each, start on 128-byte
/// boundaries: the row length a multiple of 64 and the matrix 128-byte aligned. A tensor map needs
/// 16 bytes; at 128 every 64-column row of a box is one whole 128-byte line of memory, and the copies
/// run at full speed (rows 16 bytes past a line took 1.6 times as long: chapter 16).
bool rows_fill_128_byte_lines(const bf16* matrix, std::int64_t row_length) {
  return row_length % 64 == 0 && reinterpret_cast<std::uintptr_t>(matrix) % 128 == 0;
}

/// The address of @p pointer in shared memory, as the instructions below take it.
__device__ __forceinline__ unsigned shared_address(const void* pointer) {
  return static_cast<unsigned>(__cvta_generic_to_shared(pointer));
}

/// Sets up the mbarrier at @p barrier (8 bytes of shared memory): its phase completes when
/// @p arrivals threads have arrived and every byte they said to expect has landed; then the next
/// phase begins. One thread, before anyone uses it.
__device__ __forceinline__ void init_barrier(std::uint64_t* barrier, int arrivals) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(shared_address(barrier)), "r"(arrivals)
               : "memory");
}

/// Makes the barriers' initialisation visible to the tensor memory accelerator, which counts bytes
/// on them through the "async proxy": after init_barrier, before the block barrier that lets the
/// barriers be used.
__device__ __forceinline__ void fence_barrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}

/// Arrives on @p barrier and tells it that @p bytes more are to land in its current phase.
__device__ __forceinline__ void arrive_expecting(std::uint64_t* barrier, int bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(shared_address(barrier)),
               "r"(bytes)
               : "memory");
}

/// Arrives on @p barrier (one of the arrivals its phase waits for), expecting no bytes.
__device__ __forceinline__ void arrive(std::uint64_t* barrier) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(shared_address(barrier)) : "memory");
}

/// Gives back registers: every thread of this warpgroup keeps kRegisters (a multiple of 8 in
/// [24, 256]). Executed by all four warps of the warpgroup.
template <int kRegisters>
__device__ __forceinline__ void release_registers() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(kRegisters));
}

/// Takes registers: every thread of this warpgroup may use kRegisters (a multiple of 8 in
/// [24, 256]), once the other warpgroups have given enough back. All four warps of the warpgroup.
template <int kRegisters>
__device__ __forceinline__ void claim_registers() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(kRegisters));
}

/// Waits until the phase of @p barrier whose parity is @p phase (0 or 1: its 1st, 3rd, ... phase
/// or its 2nd, 4th, ...) has completed. try_wait returns false after a while if not; then again.
__device__ __forceinline__ void wait_for_phase(std::uint64_t* barrier, int phase) {
  unsigned done = 0;
  while (!done)
    asm volatile(
        "{\n.reg .pred done;\n"
        "mbarrier.try_wait.parity.shared::cta.b64 done, [%1], %2;\n"
        "selp.u32 %0, 1, 0, done;\n}\n"
        : "=r"(done)
        : "r"(shared_address(barrier)), "r"(phase)
        : "memory");
}

/// Starts the tensor memory accelerator copying the box of the matrix @p map describes whose first
/// element is at column @p col, row @p row (past the matrix's edges too: what lies outside is zero)
/// to @p to in shared memory, laid out and swizzled as the map says; the bytes count on @p barrier
/// as they land. One thread issues it; the map must be a kernel parameter (__grid_constant__).
__device__ __forceinline__ void copy_box(void* to, const CUtensorMap& map, int col, int row,
                                         std::uint64_t* barrier) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3}], [%4];\n" ::"r"(shared_address(to)),
      "l"(reinterpret_cast<std::uint64_t>(&map)), "r"(col), "r"(row), "r"(shared_address(barrier))
      : "memory");
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

/// Waits until the 128 threads of consumer warpgroup @p warpgroup (0, 1, ...) have all arrived:
/// named barrier 1 + warpgroup (barrier 0 is __syncthreads'), which the other warpgroups never touch.
__device__ __forceinline__ void sync_warpgroup(int warpgroup) {
  asm volatile("bar.sync %0, 128;\n" ::"r"(1 + warpgroup) : "memory");
}

/// Orders this thread's earlier writes to shared memory before what the async proxy (the TMA) does
/// next: ordinary stores and TMA reads are different proxies, and without it a TMA store issued
/// after a barrier may still read what was there before. Every thread that wrote, before the barrier.
__device__ __forceinline__ void fence_shared_for_tma() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

/// Starts the tensor memory accelerator writing the box at @p from in shared memory (laid out and
/// swizzled as @p map says) to the matrix @p map describes, its first element at column @p col, row
/// @p row; what falls outside the matrix is not written. One thread issues it, into its bulk group.
__device__ __forceinline__ void store_box(const CUtensorMap& map, const void* from, int col, int row) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];\n" ::"l"(
                   reinterpret_cast<std::uint64_t>(&map)),
               "r"(shared_address(from)), "r"(col), "r"(row)
               : "memory");
}

/// Closes this thread's TMA stores since the last commit into one bulk group.
__device__ __forceinline__ void commit_stores() {
  asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
}

/// Waits until at most kPending of this thread's bulk groups have still to read their shared memory:
/// the older ones' buffers may be written again (their writes to C may still be on their way).
template <int kPending>
__device__ __forceinline__ void wait_stores_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(kPending) : "memory");
}

/// Waits until every bulk group of this thread is complete, its writes to C done: before the block
/// ends, so that no store is still reading shared memory the block gives back.
__device__ __forceinline__ void wait_stores_done() {
  asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory");
}

/// Sets the flag at @p flag in global memory to @p value, a release at GPU scope: what this thread
/// wrote before (and what its warp wrote before a __syncwarp and a __threadfence) is seen by any
/// thread that reads the value with read_flag.
__device__ __forceinline__ void raise_flag(int* flag, int value) {
  asm volatile("st.release.gpu.global.b32 [%0], %1;\n" ::"l"(flag), "r"(value) : "memory");
}

/// Waits until the flag at @p flag is raised (nonzero), then fences: this thread's later reads see
/// what was written before it was raised (a relaxed read in the loop and a fence after it make an
/// acquire at GPU scope, without one for every read of the loop).
__device__ __forceinline__ void wait_for_flag(const int* flag) {
  int value = 0;
  do asm volatile("ld.relaxed.gpu.global.b32 %0, [%1];\n" : "=r"(value) : "l"(flag) : "memory");
  while (value == 0);
  __threadfence();
}

/// Rows of tiles per group in the order the tiles of C are taken (see matmul_wgmma).
constexpr int kGroupRows = 8;

/// C = A·B with stage 17's tiles, wgmma, TMA copies and roles, in stage 18's persistent grid, the
/// last round's tiles split along K: block b of G takes the whole tiles b, b + G, ... below
/// @p whole_tiles (of C in stage 14's order), then piece b of the remaining tiles, each cut into
/// @p parts pieces along K (tile whole_tiles + b / parts, piece b % parts); warpgroup 0 copies, warpgroups 1
/// .. kBlockM / 64 each multiply 64 rows of the tile (A is m×k, B is k×n, both bf16; C is m×n, FP32; all
/// row-major). A and B come as tensor maps, C as a pointer; @p partials holds a tile's sums for each block
/// (gridDim.x x kBlockM x kBlockN floats) and @p arrived a flag for each consumer warp of each block (zero
/// before the launch, and left zero after it). C also comes as a tensor map, used where kAligned.
///
/// Shared memory is stage 16's ring of kStages
/// buffers with two mbarriers per buffer: `landed` (its phase completes when the buffer's tile has
/// landed: one arrival, the producer's, and the tile's bytes) and `freed` (its phase completes when
/// every consumer warp is done with the buffer). The producer gives back all but 40 registers; its
/// thread 0 walks the k-tiles of the block's tiles, one after the other: it waits until the next
/// buffer is freed, then copies the k-tile into it as stage 16 did. Each consumer takes the
/// registers the producer gave back, and walks the same k-tiles: it waits for a k-tile's `landed`
/// phase, issues its wgmma, waits until only they are still running, and then each of its warps
/// arrives on `freed` of the k-tile before, whose products have finished; at a tile's end it waits
/// for the last products, frees their buffer too, and stores the tile while the producer copies
/// on. Both sides carry the ring's buffer and phase from one tile to the next. A tile split between
/// blocks: a block holding a later piece writes its sums to its slot of @p partials instead of C
/// and raises its warps' flags; the block holding the first piece waits for the next parts - 1
/// blocks' flags, adds their slots in order and stores the tile. The blocks must all run at once
/// (the grid is at most one block per SM). There is no block barrier after the barriers
/// are set up. Sizes and offsets are 64-bit whatever the problem. A consumer stores a tile through
/// two staging buffers of its own (64 rows x 32 columns each) and TMA stores, writing one buffer
/// while the TMA reads the other, and goes on to the next tile while the TMA writes C (without a
/// tensor map of C, each warp its own rows through its part of them, a row per store).
///
/// @tparam kBlockM rows of C per block, 64 per consumer warpgroup.
/// @tparam kBlockN columns of C per block: the N of each wgmma (128 or 256).
/// @tparam kBlockK the step along K (64: a row of the A tile is 128 bytes, the swizzle's width).
/// @tparam kStages buffers in the ring: the producer may fill every buffer the consumers have freed.
/// @tparam kAligned every row of A, B and C starts on a 16-byte boundary (rows_are_16_byte_aligned,
///         checked by the host before the launch): C leaves through @p c_map and the TMA; otherwise
///         a row of a warp's piece at a time (store_rows).
template <int kBlockM, int kBlockN, int kBlockK, int kStages, bool kAligned>
__global__ void __launch_bounds__((kBlockM / 64 + 1) * 128, 1)
    matmul_wgmma(const __grid_constant__ CUtensorMap a_map, const __grid_constant__ CUtensorMap b_map,
                 const __grid_constant__ CUtensorMap c_map, float* c, std::int64_t m, std::int64_t n,
                 std::int64_t k, int whole_tiles, int parts, float* partials, int* arrived) {
  static_assert(kBlockM % 64 == 0, "a warpgroup's wgmma covers 64 rows");
  static_assert(kBlockK == 64 && kBlockN % 64 == 0, "swizzled rows are whole 128-byte stripes");
  static_assert(kStages >= 2, "a ring with a tile on its way besides the one being multiplied");
  // Registers: the launch reserves the same number for every thread (the most 65536 allow, in
  // steps of 8); the producer gives all but 40 back, the consumers share them out.
  constexpr int kConsumers = kBlockM / 64;
  constexpr int kThreads = (kConsumers + 1) * 128;
  constexpr int kLaunchRegisters = 65536 / kThreads / 8 * 8 > 248 ? 248 : 65536 / kThreads / 8 * 8;
  constexpr int kProducerRegisters = 40;
  constexpr int kConsumerRegisters =
      (kLaunchRegisters * kThreads - kProducerRegisters * 128) / (kConsumers * 128) / 8 * 8 > 240
          ? 240
          : (kLaunchRegisters * kThreads - kProducerRegisters * 128) / (kConsumers * 128) / 8 * 8;
  // The ring of kStages buffers, in dynamic shared memory from its first 1024-byte boundary (the
  // host asks for 1024 bytes more). Buffer s: the A tile, kBlockM rows of kBlockK bf16, then the B
  // tile, kBlockN / 64 stripes of kBlockK rows of 64 bf16; in every 8 rows of 128 bytes, chunk c of
  // row r is kept at chunk c XOR (r % 8). Both tiles are multiples of 1024 bytes, so every tile
  // starts on a 1024-byte boundary, as the swizzle needs.
  constexpr int kTileAElements = kBlockM * kBlockK;
  constexpr int kStageElements = kTileAElements + kBlockK * kBlockN;
  constexpr int kStageBytes = kStageElements * static_cast<int>(sizeof(bf16)); // what lands per tile
  extern __shared__ float4 shared_quads[];
  const unsigned shared_start = static_cast<unsigned>(__cvta_generic_to_shared(shared_quads));
  bf16* const shared =
      reinterpret_cast<bf16*>(reinterpret_cast<char*>(shared_quads) + (-shared_start & 1023));
  // After the ring, two staging buffers per consumer warpgroup, each a piece of C of 64 rows x 32
  // FP32 columns (8 KB: 128-byte rows, swizzled as A's tiles are), 1024-byte aligned.
  constexpr int kPieceFloats = 64 * 32;
  float* const staging = reinterpret_cast<float*>(shared + kStages * kStageElements);
  // Two mbarriers per buffer: phase j of landed[s] completes when the (j + 1)-th tile copied into
  // buffer s has landed whole; phase j of freed[s] when every consumer warp is done with it.
  __shared__ std::uint64_t landed[kStages];
  __shared__ std::uint64_t freed[kStages];

  // The order of the tiles: tile t of C is in row first_row + in_group % rows_in_group and column
  // in_group / rows_in_group of the tiles (the last group may have fewer rows). take_tile(t) points
  // block_row and block_col, which the copies and the stores read, at tile t's first row and column.
  const int blocks_n = static_cast<int>((n + kBlockN - 1) / kBlockN);
  const int blocks_m = static_cast<int>((m + kBlockM - 1) / kBlockM);
  const int tiles = blocks_m * blocks_n;
  std::int64_t block_row = 0, block_col = 0;
  const auto take_tile = [&](int tile) {
    const int blocks_per_group = kGroupRows * blocks_n;
    const int group = tile / blocks_per_group;
    const int first_row = group * kGroupRows;
    const int rows_in_group = min(blocks_m - first_row, kGroupRows);
    const int in_group = tile - group * blocks_per_group;
    block_row = static_cast<std::int64_t>(first_row + in_group % rows_in_group) * kBlockM;
    block_col = static_cast<std::int64_t>(in_group / rows_in_group) * kBlockN;
  };
  // The block's work, piece by piece: for_each_piece(work) calls work(tile, k_begin, k_end) for
  // k-tiles k_begin .. k_end - 1 of each tile it takes, in order. First the whole tiles b, b + G,
  // ... below whole_tiles, as stage 18 took them; then, in the last round, piece b % parts of tile
  // whole_tiles + b / parts: its k-tiles from k_tiles·p / parts to k_tiles·(p + 1) / parts (the host
  // makes parts at most k_tiles, so no piece is empty). Blocks past the last piece have none.
  const int k_tiles = static_cast<int>((k + kBlockK - 1) / kBlockK);
  const auto for_each_piece = [&](auto&& work) {
    for (int tile = blockIdx.x; tile < whole_tiles; tile += gridDim.x) work(tile, 0, k_tiles);
    if (static_cast<int>(blockIdx.x) < (tiles - whole_tiles) * parts) {
      const int piece = blockIdx.x % parts;
      work(whole_tiles + blockIdx.x / parts, k_tiles * piece / parts, k_tiles * (piece + 1) / parts);
    }
  };

  // Computing: block -> warpgroup -> warp -> lane. This warpgroup's 64 rows of the block's tile,
  // this warp's 16 of them, and this lane's place in each 16 x 8 piece: g = lane / 4 picks its rows,
  // q = lane % 4 its pair of columns.
  const int warpgroup = threadIdx.x / 128 - 1; // -1: the producer
  const int warp = threadIdx.x % 128 / 32;
  const int lane = threadIdx.x % 32;
  const int g = lane / 4;
  const int q = lane % 4;

  // Thread 0 sets up the barriers (landed: one arrival, the copier's; freed: one per consumer warp)
  // and makes them visible to the copies.
  const bool copier = threadIdx.x == 0;
  if (copier) {
    for (int s = 0; s < kStages; ++s) {
      init_barrier(&landed[s], 1);
      init_barrier(&freed[s], kConsumers * 4);
    }
    fence_barrier_init();
  }
  __syncthreads();

  // Thread 0 only: starts copying the k-tile at k_tile into buffer `stage`: the bytes to expect,
  // then the A tile (columns k_tile .. k_tile + 63 of its rows) and each stripe of the B tile
  // (rows k_tile .. k_tile + 63, 64 columns each), zeros where they reach past A or B.
  const auto copy_tile = [&](int k_tile, int stage) {
    bf16* const tile_a = shared + stage * kStageElements;
    bf16* const tile_b = tile_a + kTileAElements;
    // LAB 21.copy: as 16.copy
    // LAB-STUB: static_cast<void>(k_tile), static_cast<void>(tile_a), static_cast<void>(tile_b);
    // LAB-STUB: static_cast<void>(kStageBytes);
    arrive_expecting(&landed[stage], kStageBytes);
    copy_box(tile_a, a_map, k_tile, static_cast<int>(block_row), &landed[stage]);
#pragma unroll
    for (int stripe = 0; stripe < kBlockN / 64; ++stripe)
      copy_box(tile_b + stripe * kBlockK * 64, b_map, static_cast<int>(block_col) + stripe * 64, k_tile,
               &landed[stage]);
    // END LAB
  };

  float sums[kBlockN / 2]; // this lane's 2 x 2 elements of each 16 x 8 piece of the warp's 16 rows
  // Issues the products of the k-tile in buffer `stage`, 16 along K at a time, and commits them as
  // one group; they run on while the warpgroup goes on.
  const auto multiply_stage = [&](int stage) {
    // This warpgroup's 64 rows of the A tile (a whole number of 8-row groups: 1024-byte aligned).
    const bf16* const tile_a = shared + stage * kStageElements + warpgroup * 64 * kBlockK;
    const bf16* const tile_b = shared + stage * kStageElements + kTileAElements;
    // LAB 21.wgmma: as 16.wgmma
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

  // Stores this warpgroup's sums without a tensor map of C, warp by warp: the warp's 16 rows of piece
  // p (columns 32p .. 32p + 31) go into its own 2 KB of staging buffer p % 2, swizzled as the TMA's
  // pieces (no bank conflicts), and come back a row at a time, lane i with column i: one 128-byte
  // store per row, of the rows and columns inside C. The warp reads only what it wrote: __syncwarp
  // orders its lanes' writes before their reads (and a piece's reads before the writes two later).
  const auto store_rows = [&] {
    // LAB 21.rows: each piece of the warp's 16 rows through its part of a staging buffer, a row per store
    // LAB-STUB: static_cast<void>(staging), static_cast<void>(kPieceFloats);
    // LAB-STUB: static_cast<void>(g), static_cast<void>(q), static_cast<void>(sums);
    float* const mine = staging + warpgroup * 2 * kPieceFloats + warp * 16 * 32;
    const std::int64_t first_row = block_row + warpgroup * 64 + warp * 16;
    // All 16 rows' loads at once, but 4 where four consumers leave each thread too few registers.
    constexpr int kRowsAtOnce = kConsumers > 2 ? 4 : 16;
#pragma unroll
    for (int piece = 0; piece < kBlockN / 32; ++piece) {
      float* const buffer = mine + (piece % 2) * kPieceFloats;
#pragma unroll
      for (int eight = 0; eight < 4; ++eight) {
        const int j = piece * 4 + eight; // the 16 x 8 piece of the warp's sums
#pragma unroll
        for (int half = 0; half < 2; ++half) {
          const int row = g + 8 * half, col = eight * 8 + 2 * q;
          char* const at =
              reinterpret_cast<char*>(buffer) + row * 128 + ((col / 4) ^ (row % 8)) * 16 + (col % 4) * 4;
          *reinterpret_cast<float2*>(at) = make_float2(sums[4 * j + 2 * half], sums[4 * j + 2 * half + 1]);
        }
      }
      __syncwarp();
      const std::int64_t col = block_col + 32 * piece + lane;
#pragma unroll kRowsAtOnce
      for (int row = 0; row < 16; ++row) {
        const float sum = *reinterpret_cast<const float*>(reinterpret_cast<const char*>(buffer) + row * 128 +
                                                          ((lane / 4) ^ (row % 8)) * 16 + (lane % 4) * 4);
        if (first_row + row < m && col < n) c[(first_row + row) * n + col] = sum;
      }
    }
    // END LAB
  };
  // Hands this warpgroup's sums, its 64 rows of the tile at block_row, block_col, to the TMA, 32
  // columns at a time: piece p (columns 32p .. 32p + 31) goes into staging buffer p % 2, written only
  // once the TMA has read that buffer's piece before (two pieces ago, or the last tile's); every
  // thread writes its pairs, fences, and after a barrier one thread issues the piece's store, a box
  // of 64 rows x 32 columns (the TMA drops what lies past C). Without a tensor map of C (rows off
  // 16-byte boundaries: kAligned false) it stores a row at a time (store_rows).
  const auto store_tile = [&] {
    if constexpr (!kAligned) return store_rows();
    // LAB 21.store: as 20.store
    // LAB-STUB: static_cast<void>(staging), static_cast<void>(kPieceFloats), static_cast<void>(c_map);
    float* const mine = staging + warpgroup * 2 * kPieceFloats;
    const int first_row = static_cast<int>(block_row) + warpgroup * 64,
              first_col = static_cast<int>(block_col);
    const bool issuer = threadIdx.x % 128 == 0;
#pragma unroll
    for (int piece = 0; piece < kBlockN / 32; ++piece) {
      float* const buffer = mine + (piece % 2) * kPieceFloats;
      if (issuer) wait_stores_read<1>(); // the store two pieces ago has read this buffer
      sync_warpgroup(warpgroup);
#pragma unroll
      for (int eight = 0; eight < 4; ++eight) {
        const int j = piece * 4 + eight; // the 16 x 8 piece of the warp's sums
#pragma unroll
        for (int half = 0; half < 2; ++half) {
          const int row = warp * 16 + g + 8 * half, col = eight * 8 + 2 * q;
          char* const at =
              reinterpret_cast<char*>(buffer) + row * 128 + ((col / 4) ^ (row % 8)) * 16 + (col % 4) * 4;
          *reinterpret_cast<float2*>(at) = make_float2(sums[4 * j + 2 * half], sums[4 * j + 2 * half + 1]);
        }
      }
      fence_shared_for_tma();
      sync_warpgroup(warpgroup);
      if (issuer) {
        store_box(c_map, buffer, first_col + 32 * piece, first_row);
        commit_stores();
      }
    }
    // END LAB
  };
  // A split tile's sums, warp by warp: the slot of block b holds, for each of its consumer warps
  // and each 4 of a lane's sums, the 32 lanes' float4s side by side (one 512-byte store per warp);
  // arrived[b·W + w] is raised when warp w (of W consumer warps) has written its part.
  constexpr int kConsumerWarps = kConsumers * 4;
  const int consumer_warp = warpgroup * 4 + warp;
  const auto slot_of = [&](int block) {
    return reinterpret_cast<float4*>(partials) +
           (static_cast<std::int64_t>(block) * kConsumerWarps + consumer_warp) * (kBlockN / 8) * 32 + lane;
  };
  // A later piece of a split tile: this warp's sums go to the block's slot, and once every lane's
  // have been written (the fence makes them visible to the GPU, __syncwarp waits for the lanes),
  // lane 0 raises the warp's flag.
  const auto hand_over = [&] {
    // LAB 21.hand_over: as 19.hand_over
    // LAB-STUB: static_cast<void>(slot_of), static_cast<void>(consumer_warp);
    float4* const slot = slot_of(blockIdx.x);
#pragma unroll
    for (int j = 0; j < kBlockN / 8; ++j)
      slot[j * 32] = make_float4(sums[4 * j], sums[4 * j + 1], sums[4 * j + 2], sums[4 * j + 3]);
    __threadfence();
    __syncwarp();
    if (lane == 0) raise_flag(&arrived[blockIdx.x * kConsumerWarps + consumer_warp], 1);
    // END LAB
  };
  // The first piece of a split tile: the later ones are held by the next parts - 1 blocks. For each
  // in order, this warp waits for its counterpart's flag, adds the slot to its sums and lowers the
  // flag again for the next launch.
  const auto gather = [&] {
    // LAB 21.gather: as 19.gather
    // LAB-STUB: static_cast<void>(slot_of), static_cast<void>(parts);
    for (int block = blockIdx.x + 1; block < static_cast<int>(blockIdx.x) + parts; ++block) {
      int* const flag = &arrived[block * kConsumerWarps + consumer_warp];
      wait_for_flag(flag);
      const float4* const slot = slot_of(block);
#pragma unroll
      for (int j = 0; j < kBlockN / 8; ++j) {
        const float4 more = __ldcg(slot + j * 32);
        sums[4 * j] += more.x;
        sums[4 * j + 1] += more.y;
        sums[4 * j + 2] += more.z;
        sums[4 * j + 3] += more.w;
      }
      __syncwarp();
      if (lane == 0) *flag = 0;
    }
    // END LAB
  };

  if (warpgroup < 0) {
    // The producer: keeps 40 registers, and its thread 0 copies every k-tile of the block's tiles
    // into the next buffer once the consumers have freed it. The other 127 threads have nothing
    // more to do.
    release_registers<kProducerRegisters>();
    if (copier) {
      // LAB 21.producer: as 19.producer
      // LAB-STUB: static_cast<void>(for_each_piece), static_cast<void>(copy_tile);
      // LAB-STUB: static_cast<void>(take_tile);
      // On a fresh barrier the wait for parity 1 returns at once (the phase before its first counts
      // as completed), so the first round finds every buffer free. The buffer and the phase run on
      // from one piece to the next: the first k-tiles of the next go into the buffers the
      // consumers free first, while they still store (or hand over) the piece before.
      int stage = 0, phase = 0;
      for_each_piece([&](int tile, int k_begin, int k_end) {
        take_tile(tile);
        for (int t = k_begin; t < k_end; ++t) {
          wait_for_phase(&freed[stage], phase ^ 1);
          copy_tile(t * kBlockK, stage);
          if (++stage == kStages) {
            stage = 0;
            phase ^= 1;
          }
        }
      });
      // END LAB
    }
    return;
  }
  // A consumer: takes the registers the producer gave back, then walks the block's pieces and
  // their k-tiles in the producer's order.
  claim_registers<kConsumerRegisters>();
  // LAB 21.consumer: as 19.consumer
  // LAB-STUB: static_cast<void>(multiply_stage), static_cast<void>(store_tile);
  // LAB-STUB: static_cast<void>(for_each_piece), static_cast<void>(take_tile);
  // LAB-STUB: static_cast<void>(hand_over), static_cast<void>(gather);
  int stage = 0, phase = 0, previous = 0;
  for_each_piece([&](int tile, int k_begin, int k_end) {
    take_tile(tile);
#pragma unroll
    for (float& sum : sums) sum = 0.0f; // a new tile of C, or a new piece of one
    for (int t = k_begin; t < k_end; ++t) {
      wait_for_phase(&landed[stage], phase);
      multiply_stage(stage);
      // k-tile t's products may run on; k-tile t - 1's have finished, so its buffer is free: each
      // warp says so (lane 0 for the warp) once it has waited.
      wait_for_products<1>();
      if (t > k_begin && lane == 0) arrive(&freed[previous]);
      previous = stage;
      if (++stage == kStages) {
        stage = 0;
        phase ^= 1;
      }
    }
    // The last k-tile's products too, before the sums are read; then its buffer is free as well,
    // and the producer may fill it with the next piece's while this one is stored.
    wait_for_products<0>();
    if (lane == 0) arrive(&freed[previous]);
    if (k_begin > 0) return hand_over(); // a later piece of a split tile: its first piece stores it
    if (k_end < k_tiles) gather();       // the first piece of a split tile: add the later ones
    store_tile();
  });
  // END LAB
  if (kAligned && threadIdx.x % 128 == 0) wait_stores_done(); // the last pieces' stores, before the end
}

/// Copies A (@p a_rows x @p a_cols) and B, bf16, row-major, into rows of @p a_pitch and @p b_pitch
/// elements, zeros after each row's end, in one launch (blocks below @p a_blocks copy A). A thread
/// writes two 16-byte chunks, 256 apart, and reads each as four 4-byte words where it lies inside its
/// row on a 4-byte boundary (for an odd row length, every other row), else element by element.
__global__ void pad_rows_of_both(const bf16* a, bf16* a_padded, std::int64_t a_rows, std::int64_t a_cols,
                                 std::int64_t a_pitch, const bf16* b, bf16* b_padded, std::int64_t b_rows,
                                 std::int64_t b_cols, std::int64_t b_pitch, std::int64_t a_blocks) {
  // LAB 21.pad: two chunks of A's or B's padded rows per thread, four bytes at a time where they can be
  // LAB-STUB: static_cast<void>(a), static_cast<void>(a_padded), static_cast<void>(a_rows);
  // LAB-STUB: static_cast<void>(a_cols), static_cast<void>(a_pitch), static_cast<void>(b);
  // LAB-STUB: static_cast<void>(b_padded), static_cast<void>(b_rows), static_cast<void>(b_cols);
  // LAB-STUB: static_cast<void>(b_pitch), static_cast<void>(a_blocks);
  const bool of_b = blockIdx.x >= a_blocks;
  const bf16* const from = of_b ? b : a;
  bf16* const to = of_b ? b_padded : a_padded;
  const std::int64_t cols = of_b ? b_cols : a_cols, pitch = of_b ? b_pitch : a_pitch;
  const std::int64_t chunks = (of_b ? b_rows : a_rows) * (pitch / 8);
  const std::int64_t first_chunk = (blockIdx.x - (of_b ? a_blocks : 0)) * 2 * blockDim.x + threadIdx.x;
  uint4 eight[2]; // the two chunks, 8 bf16 each
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const std::int64_t chunk = first_chunk + h * blockDim.x;
    const std::int64_t row = chunk / (pitch / 8), col = chunk % (pitch / 8) * 8, at = row * cols + col;
    if (chunk < chunks && col + 8 <= cols && reinterpret_cast<std::uintptr_t>(from + at) % 4 == 0) {
      const unsigned* const words = reinterpret_cast<const unsigned*>(from + at);
      eight[h] = make_uint4(__ldg(words), __ldg(words + 1), __ldg(words + 2), __ldg(words + 3));
    } else {
      alignas(16) bf16 elements[8];
#pragma unroll
      for (int e = 0; e < 8; ++e)
        elements[e] = chunk < chunks && col + e < cols ? from[at + e] : __float2bfloat16(0.0f);
      eight[h] = *reinterpret_cast<const uint4*>(elements);
    }
  }
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const std::int64_t chunk = first_chunk + h * blockDim.x;
    if (chunk < chunks) reinterpret_cast<uint4*>(to)[chunk] = eight[h];
  }
  // END LAB
}

/// Pads A and B with one launch of pad_rows_of_both, allocating each buffer at its first use; a
/// pitch of 0 leaves that matrix out (its rows need no copy).
void pad_copies(const bf16* a, std::int64_t a_rows, std::int64_t a_cols, std::int64_t a_pitch,
                cs::DeviceBuffer<bf16>& a_padded, const bf16* b, std::int64_t b_rows, std::int64_t b_cols,
                std::int64_t b_pitch, cs::DeviceBuffer<bf16>& b_padded) {
  if (a_padded.size() != static_cast<std::size_t>(a_rows * a_pitch))
    a_padded = cs::DeviceBuffer<bf16>(static_cast<std::size_t>(a_rows * a_pitch));
  if (b_padded.size() != static_cast<std::size_t>(b_rows * b_pitch))
    b_padded = cs::DeviceBuffer<bf16>(static_cast<std::size_t>(b_rows * b_pitch));
  const std::int64_t a_blocks = (a_rows * a_pitch / 8 + 511) / 512,
                     b_blocks = (b_rows * b_pitch / 8 + 511) / 512;
  if (a_blocks + b_blocks == 0) return;
  pad_rows_of_both<<<cs::grid_of(a_blocks + b_blocks), 256>>>(
      a, a_padded.get(), a_rows, a_cols, a_pitch, b, b_padded.get(), b_rows, b_cols, b_pitch, a_blocks);
  CUDA_CHECK_LAUNCH();
}

/// A tensor map of a row-major bf16 matrix of @p rows x @p cols at @p matrix, its rows @p pitch
/// elements apart (16-byte aligned, as the matrix itself), for copies of boxes of @p box_rows rows
/// by 64 columns (128 bytes: the widest box the 128-byte swizzle takes), landing in shared memory
/// with that swizzle; the parts of a box outside the matrix land as zeros. Encoded on the host by
/// the driver's cuTensorMapEncodeTiled (common/tensor_map.cuh), which checks every limit.
CUtensorMap tensor_map_of(const bf16* matrix, std::int64_t rows, std::int64_t cols, std::int64_t pitch,
                          int box_rows) {
  CUtensorMap map;
  const cuuint64_t sizes[2] = {static_cast<cuuint64_t>(cols), static_cast<cuuint64_t>(rows)}; // inner first
  const cuuint64_t row_pitch_bytes[1] = {static_cast<cuuint64_t>(pitch) * sizeof(bf16)};      // the outer's
  const cuuint32_t box[2] = {64, static_cast<cuuint32_t>(box_rows)};
  const cuuint32_t element_steps[2] = {1, 1}; // every element of the box, none skipped
  CU_CHECK(cs::tensor_map_encoder()(&map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, const_cast<bf16*>(matrix),
                                    sizes, row_pitch_bytes, box, element_steps, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                    CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                                    CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
  return map;
}

/// A tensor map of C (@p rows x @p cols FP32, row-major, rows on 16-byte boundaries) for TMA stores
/// of boxes of 64 rows x 32 columns (128 bytes) with the 128-byte swizzle; the parts of a box outside
/// C are not written. Encoded by cuTensorMapEncodeTiled, which checks every limit.
CUtensorMap c_map_of(float* c, std::int64_t rows, std::int64_t cols) {
  CUtensorMap map;
  const cuuint64_t sizes[2] = {static_cast<cuuint64_t>(cols), static_cast<cuuint64_t>(rows)};
  const cuuint64_t row_pitch_bytes[1] = {static_cast<cuuint64_t>(cols) * sizeof(float)};
  const cuuint32_t box[2] = {32, 64};
  const cuuint32_t element_steps[2] = {1, 1};
  CU_CHECK(cs::tensor_map_encoder()(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, c, sizes, row_pitch_bytes, box,
                                    element_steps, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                                    CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
  return map;
}

/// The stage's own options.
struct StageOptions {
  std::string params = "128x256x64/s4"; ///< `--params`: block tile, buffers
  int blocks = 0;                       ///< `--blocks`: blocks in the grid, 0: one per SM
  std::string split = "auto";           ///< `--split`: when the last round's tiles are split along K
};

/// Declares `--params` on @p cli, the parameter sets the kernel is instantiated for, `--blocks` and
/// `--split`.
void add_stage_options(cs::CommandLine& cli, StageOptions& options) {
  cli.add_int("blocks", &options.blocks, 0, 65535,
              "blocks in the persistent grid, at most one per SM (the blocks wait for each other); 0: one "
              "per SM of the GPU");
  cli.add_choice(
      "split", &options.split, {"auto", "always", "never"},
      "split the last round's tiles along K among the blocks: where it saves each block enough "
      "k-tiles, wherever the round leaves blocks idle, or never (whole tiles, stage 18's schedule)");
  cli.add_choice("params", &options.params,
                 {"128x256x64/s4", "128x256x64/s3", "128x128x64/s3", "128x128x64/s4", "256x128x64/s3"},
                 "block tile of C (rows x columns) x step along K / shared-memory buffers in the ring "
                 "(a warpgroup per 64 rows; 256x128x64/s4 and its 64 KB of staging buffers do not fit)");
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

/// The streaming multiprocessors of the GPU this process uses, read from the device (never assumed:
/// an H100 SXM and an H200 have 132, an H100 PCIe 114); 0 when there is no GPU to ask (`--plan` on
/// a machine without one).
int multiprocessors() {
  int device = 0, count = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) {
    static_cast<void>(cudaGetLastError()); // no GPU, or no driver: nothing to launch on
    return 0;
  }
  return count;
}

/// A split of the last round must save each block at least this many k-tiles to be taken by
/// `--split auto`: a split tile's sums go through the scratch buffer and back, and the block that
/// gathers them waits for the slowest of the blocks it gathers from. Nor does `auto` split where
/// there are fewer tiles than blocks: there every piece is short, and at 1024^3 (32 tiles in four
/// pieces of 4 k-tiles) the split was measured 6% slower than whole tiles (chapter 19).
constexpr std::int64_t kSplitSavesAtLeast = 4;

/// How the tiles are shared out among the blocks.
struct Schedule {
  std::int64_t blocks = 0;       ///< blocks in the grid
  std::int64_t whole_tiles = 0;  ///< tiles taken whole, b, b + G, ... (a multiple of the blocks, or all)
  std::int64_t parts = 1;        ///< pieces each of the other tiles is split into along K
  std::int64_t most_k_tiles = 0; ///< the most k-tiles a block takes
};

/// The schedule of @p tiles tiles of @p k_tiles k-tiles each on at most @p blocks blocks: the full
/// rounds in whole tiles, as stage 18 took them, and the L tiles of the last round, if any, split
/// into min(G / L, k_tiles) pieces along K, one per block. Whole tiles only where that is fewer than
/// two pieces, with `never`, or (`auto`) where there is no full round or the split saves a block
/// fewer than kSplitSavesAtLeast k-tiles.
Schedule schedule_of(std::int64_t tiles, std::int64_t k_tiles, std::int64_t blocks,
                     const std::string& split) {
  const std::int64_t rounds = tiles / blocks, last = tiles % blocks;
  const Schedule whole{std::min(blocks, tiles), tiles, 1, (rounds + (last > 0)) * k_tiles};
  const std::int64_t parts = last > 0 ? std::min(blocks / last, k_tiles) : 1;
  if (split == "never" || parts < 2) return whole;
  const std::int64_t most = rounds * k_tiles + (k_tiles + parts - 1) / parts;
  if (split == "auto" && (rounds == 0 || whole.most_k_tiles - most < kSplitSavesAtLeast)) return whole;
  return {blocks, rounds * blocks, parts, most};
}

/// Plans the launch: a persistent 1-D grid of at most one block per SM, of BM / 64 + 1 warpgroups,
/// and the schedule of the tiles (schedule_of), tiles = ceil(m / BM)·ceil(n / BN).
cs::Bf16MatmulLaunch plan_launch(const StageOptions& options, const cs::MatmulShape& shape) {
  const std::string params = options.params;
  const TileSizes tile = tile_sizes_of(params);
  const std::int64_t blocks_x = (shape.n + tile.block_n - 1) / tile.block_n;
  const std::int64_t blocks_y = (shape.m + tile.block_m - 1) / tile.block_m;
  const std::int64_t tiles = blocks_x * blocks_y;
  cs::grid_of(tiles); // the kernel counts tiles in an int
  const int sms = multiprocessors();
  const std::int64_t k_steps = (shape.k + tile.block_k - 1) / tile.block_k;
  // The blocks: one per SM, or --blocks but no more than the SMs; with no GPU to ask and no
  // --blocks, the plan assumes one block per tile.
  const std::int64_t blocks = options.blocks > 0 ? (sms > 0 ? std::min(options.blocks, sms) : options.blocks)
                              : sms > 0          ? sms
                                                 : tiles;
  const Schedule schedule = schedule_of(tiles, k_steps, blocks, options.split);
  const dim3 grid = cs::grid_of(schedule.blocks);
  const int warpgroups = tile.block_m / 64 + 1; // the consumers and the producer
  const dim3 block(static_cast<unsigned>(warpgroups * 128));
  // Each block loads its BM rows of A and BN columns of B once, BK at a time, for BM x BN elements of C.
  const std::int64_t loads_per_element =
      (k_steps * tile.block_k * (tile.block_m + tile.block_n) + tile.block_m * tile.block_n / 2) /
      (tile.block_m * tile.block_n);
  // The ring: S buffers of an A tile and a B tile, bf16, swizzled, no padding; then two staging
  // buffers of 64 x 32 floats per consumer warpgroup; 1024 bytes more, to start on a 1024-byte
  // boundary.
  const std::size_t buffer_bytes = sizeof(bf16) * (tile.block_m * tile.block_k + tile.block_k * tile.block_n);
  const std::size_t staging_bytes = static_cast<std::size_t>(tile.block_m / 64) * 2 * 64 * 32 * sizeof(float);
  const std::size_t shared_bytes = tile.stages * buffer_bytes + staging_bytes + 1024;
  // cudaMalloc aligns A, B and C themselves (256 bytes), so n and k decide where their rows start.
  const bool whole_lines = shape.n % 64 == 0 && shape.k % 64 == 0;
  cs::Bf16MatmulLaunch launch;
  launch.name = "unaligned_rows_" + params;
  launch.what = "stage 20's kernel, C's rows off 16-byte boundaries stored a row at a time";
  launch.grid = grid;
  launch.block = block;
  launch.shared_bytes = shared_bytes + 2 * tile.stages * sizeof(std::uint64_t); // and the barriers
  launch.notes = {
      std::to_string(tiles) + " tiles of C, " + std::to_string(tile.block_m) + " rows x " +
          std::to_string(tile.block_n) + " columns, for " +
          (options.blocks > 0 ? std::to_string(blocks) + " blocks (--blocks, at most one per SM)"
           : sms > 0          ? std::to_string(sms) + " SMs (read from the GPU)"
                     : std::string("the SMs of the GPU (none found: the plan shows one block per tile)")) +
          ", the tiles taken in groups of " + std::to_string(kGroupRows) +
          " rows of tiles, down each column of a group before the next; warpgroup 0 copies, consumer "
          "warpgroup g (warpgroup g + 1, 4 warps) owns rows 64g .. 64g + 63, warp w of it 16 of those",
      schedule.whole_tiles == tiles
          ? "every block takes whole tiles, b, b + G, b + 2G, ... of the grid's G = " +
                std::to_string(schedule.blocks) + " (at most " + std::to_string(schedule.most_k_tiles) +
                " k-tiles each): " +
                (tiles % blocks == 0        ? std::string("the tiles divide among the blocks")
                 : options.split == "never" ? std::string("--split never")
                 : tiles % blocks * 2 > blocks || k_steps < 2
                     ? std::string("the last round leaves too few blocks idle to split its tiles in two")
                 : tiles < blocks ? std::string("fewer tiles than blocks (--split always splits them)")
                                  : "a split would save a block fewer than " +
                                        std::to_string(kSplitSavesAtLeast) + " k-tiles")
          : "block b of G = " + std::to_string(schedule.blocks) +
                " takes the whole tiles b, b + G, ... below " + std::to_string(schedule.whole_tiles) +
                "; the last round's " + std::to_string(tiles - schedule.whole_tiles) +
                " tiles are split into " + std::to_string(schedule.parts) +
                " pieces along K each, one per block (block b: piece b % " + std::to_string(schedule.parts) +
                " of tile " + std::to_string(schedule.whole_tiles) + " + b / " +
                std::to_string(schedule.parts) + "): at most " + std::to_string(schedule.most_k_tiles) +
                " k-tiles per block instead of " + std::to_string((tiles + blocks - 1) / blocks * k_steps) +
                "; a tile's pieces are summed through a scratch buffer of G x " +
                std::to_string(tile.block_m) + " x " + std::to_string(tile.block_n) + " floats (" +
                std::to_string(schedule.blocks * tile.block_m * tile.block_n * 4 / 1024) +
                " KB) and a flag per consumer warp of each block",
      "per 16 along K a consumer issues one wgmma.mma_async m64n" + std::to_string(tile.block_n) +
          "k16 on two shared-memory descriptors (A 64 x 16, B 16 x " + std::to_string(tile.block_n) +
          ", 128-byte swizzle); a lane holds " + std::to_string(tile.block_n / 2) + " FP32 sums",
      "shared memory: a ring of " + std::to_string(tile.stages) + " buffers of " +
          std::to_string(buffer_bytes) +
          " bytes and two mbarriers each (landed, freed); the producer's "
          "thread 0 copies a k-tile with " +
          std::to_string(1 + tile.block_n / 64) + " TMA boxes (A " + std::to_string(tile.block_m) +
          " x 64, B 64 x 64 per stripe) once its buffer is freed; a "
          "consumer waits for landed, issues its wgmma, waits for the k-tile before's and frees its buffer; "
          "at a tile's end it frees the last one too and stores C (by the TMA where it can) while the "
          "producer copies the "
          "next tile's",
      "registers (setmaxnreg): the producer keeps 40 per thread, the " + std::to_string(warpgroups - 1) +
          " consumers share the rest of the " + std::to_string(65536 / (warpgroups * 128) / 8 * 8) +
          " per thread the launch reserves",
      "global loads per element of C: about K/" + std::to_string(tile.block_m) + " + K/" +
          std::to_string(tile.block_n) + " = " + std::to_string(loads_per_element) + " bf16, in steps of " +
          std::to_string(tile.block_k) + " along K",
      std::string(whole_lines
                      ? "n and k are multiples of 64, so the rows of A and B fill whole 128-byte lines: the "
                        "tensor maps take A and B where they are"
                      : "n or k is not a multiple of 64: A or B (or both) is first copied into rows padded "
                        "to a multiple of 64, as a tensor map needs 16-byte rows and runs at full speed on "
                        "whole 128-byte lines (in every timed run; both copies one launch, each thread two "
                        "16-byte chunks, read four bytes at a time where the row allows)") +
          (shape.n % 8 == 0 && shape.k % 8 == 0
               ? "; C out: each consumer warpgroup writes its 64 rows 32 columns at a time into one of its "
                 "two staging buffers (" +
                     std::to_string(staging_bytes / 1024) +
                     " KB in all), and one thread stores the piece with a TMA box of 64 x 32; the warpgroup "
                     "goes on as soon as the TMA has read the buffer"
               : "; n or k is not a multiple of 8: no tensor map of C; each warp writes its 16 rows 32 "
                 "columns at a time into its own 2 KB of a staging buffer and stores them a row at a time, "
                 "128 consecutive bytes per store")};
  launch.index_width_from_host = false;
  // The padded copies of A and B, when their rows need them: allocated at the first run, kept.
  const auto padded_a = std::make_shared<cs::DeviceBuffer<bf16>>(0);
  const auto padded_b = std::make_shared<cs::DeviceBuffer<bf16>>(0);
  // The scratch buffer and the flags for split tiles, when the schedule splits any: allocated at
  // the first run and kept, the flags zeroed then; every launch leaves them zero.
  const std::size_t partial_count =
      schedule.whole_tiles < tiles ? static_cast<std::size_t>(schedule.blocks * tile.block_m * tile.block_n)
                                   : 0;
  const std::size_t flag_count = static_cast<std::size_t>(schedule.blocks * tile.block_m / 64 * 4);
  const auto partials = std::make_shared<cs::DeviceBuffer<float>>(0);
  const auto arrived = std::make_shared<cs::DeviceBuffer<int>>(0);
  const int whole_tiles = static_cast<int>(schedule.whole_tiles), parts = static_cast<int>(schedule.parts);
  launch.run = [=](const cs::Bf16MatmulArgs& p) {
    if (partials->size() < partial_count) {
      *partials = cs::DeviceBuffer<float>(partial_count);
      *arrived = cs::DeviceBuffer<int>(flag_count);
      CUDA_CHECK(cudaMemset(arrived->get(), 0, arrived->bytes()));
    }
    // Tensor maps of A and of B where they are when their rows fill whole 128-byte lines, else of
    // copies with rows padded to a multiple of 64; A in boxes of BM rows x 64 columns, B of 64 x 64.
    const bool aligned = rows_are_16_byte_aligned(p.a, p.b, p.c, p.n, p.k);
    const bool a_in_place = rows_fill_128_byte_lines(p.a, p.k),
               b_in_place = rows_fill_128_byte_lines(p.b, p.n);
    const std::int64_t a_pitch = a_in_place ? p.k : (p.k + 63) / 64 * 64,
                       b_pitch = b_in_place ? p.n : (p.n + 63) / 64 * 64;
    pad_copies(p.a, p.m, p.k, a_in_place ? 0 : a_pitch, *padded_a, p.b, p.k, p.n, b_in_place ? 0 : b_pitch,
               *padded_b);
    const bf16* const a = a_in_place ? p.a : padded_a->get();
    const bf16* const b = b_in_place ? p.b : padded_b->get();
    const CUtensorMap a_map = tensor_map_of(a, p.m, p.k, a_pitch, tile.block_m);
    const CUtensorMap b_map = tensor_map_of(b, p.k, p.n, b_pitch, tile.block_k);
    const CUtensorMap c_map = aligned ? c_map_of(p.c, p.m, p.n) : CUtensorMap{};
    // More than 48 KB of dynamic shared memory per block needs the kernel's opt-in, before its launch.
    const auto launch_with_shared_memory = [&](auto kernel) {
      CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                      static_cast<int>(shared_bytes)));
      kernel<<<grid, block, shared_bytes>>>(a_map, b_map, c_map, p.c, p.m, p.n, p.k, whole_tiles, parts,
                                            partials->get(), arrived->get());
    };
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
    CUDA_CHECK_LAUNCH();
  };
  return launch;
}

} // namespace stage21

/// Hands the kernel's launch and the stage's option to the host flow every matmul stage shares, as
/// a bf16 stage: bf16 A and B, FP32 C, compute capability 9.0 exactly (sm_90a code).
int main(int argc, char** argv) {
  stage21::StageOptions options;
  return cs::run_matmul_stage(
      cs::Bf16MatmulStage{
          "21_unaligned_rows",
          "C = A*B on the GPU's tensor cores: one block per SM walks the tiles of C (the last round "
          "split along K), and C leaves through shared memory by TMA stores behind the next tile.",
          [&](cs::CommandLine& cli) { stage21::add_stage_options(cli, options); },
          [&](const cs::MatmulShape& shape) { return stage21::plan_launch(options, shape); }, 90,
          "wgmma and TMA, in sm_90a code", true},
      argc, argv);
}
