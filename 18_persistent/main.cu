// 18_persistent: one block per SM, each walking tile after tile of C, its ring running on across them.
//
// In stage 17 a block owned one tile of C and ended: each of the 512 blocks of a 4096^3 problem
// filled its ring from empty (the first wgmma waits for a copy from memory), stored its C while the
// tensor cores had nothing to do, and left the SM to a block that started again from nothing. Here
// the grid has one block per SM (the count read from the GPU), and block b takes tiles b, b + G,
// b + 2G, ... of stage 17's order (G blocks). The producer's loop and the consumers' loop each run
// over the block's tiles and their k-tiles as one sequence, the ring's buffer and phase carried from
// one tile to the next: the consumers hand the last buffer of a tile back before they store its C,
// and while they store it the producer is already copying the next tile's first k-tiles.
//
// Run:  18_persistent --size 4096                        (128x256x64/s4: two consumers)
//       18_persistent --size 4096 --params 256x128x64/s4 (four consumers)
//       18_persistent --size 4099                        (rows not 16-byte aligned: padded copies)
//       (--plan: print the launch and exit, no GPU needed; --help: every option)
// Everything but the kernel and its launch is the host flow every matmul stage shares
// (common/matmul_flow.cu: parse, generate, copy, time, verify, cuBLAS, report). wgmma exists on
// compute capability 9.0 alone (the sm_90a target): on any other GPU the stage exits 77.
/// @file
/// @brief Stage 18: stage 17 in a persistent grid, one block per SM walking tiles of C, the ring
/// running on from one tile to the next (chapter: 18_persistent/README.md).
#include "device_buffer.cuh"
#include "matmul_flow.cuh"
#include "tensor_map.cuh"
#include "wgmma.cuh"

#include <cuda.h>
#include <cuda_bf16.h>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

// This stage's own names (every matmul stage has a StageOptions and a plan_launch of its own).
namespace stage18 {

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

/// Rows of tiles per group in the order the tiles of C are taken (see matmul_wgmma).
constexpr int kGroupRows = 8;

/// C = A·B with stage 17's tiles, wgmma, TMA copies and roles, in a persistent grid: block b of G
/// takes tiles b, b + G, b + 2G, ... of C in stage 14's order; warpgroup 0 copies, warpgroups
/// 1 .. kBlockM / 64 each multiply 64 rows of the tile (A is m×k, B is k×n, both bf16; C is m×n,
/// FP32; all row-major). A and B come as tensor maps, C as a pointer.
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
/// on. Both sides carry the ring's buffer and phase from one tile to the next. There is no block
/// barrier after the barriers are set up. Sizes and offsets are 64-bit whatever the problem.
///
/// @tparam kBlockM rows of C per block, 64 per consumer warpgroup.
/// @tparam kBlockN columns of C per block: the N of each wgmma (128 or 256).
/// @tparam kBlockK the step along K (64: a row of the A tile is 128 bytes, the swizzle's width).
/// @tparam kStages buffers in the ring: the producer may fill every buffer the consumers have freed.
/// @tparam kAligned every row of A, B and C starts on a 16-byte boundary (rows_are_16_byte_aligned,
///         checked by the host before the launch): a pair of C is one 8-byte store; otherwise two
///         4-byte stores.
template <int kBlockM, int kBlockN, int kBlockK, int kStages, bool kAligned>
__global__ void __launch_bounds__((kBlockM / 64 + 1) * 128, 1)
    matmul_wgmma(const __grid_constant__ CUtensorMap a_map, const __grid_constant__ CUtensorMap b_map,
                 float* c, std::int64_t m, std::int64_t n, std::int64_t k) {
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

  // Computing: block -> warpgroup -> warp -> lane. This warpgroup's 64 rows of the block's tile,
  // this warp's 16 of them, and this lane's place in each 16 x 8 piece: g = lane / 4 picks its rows,
  // q = lane % 4 its pair of columns.
  const int warpgroup = threadIdx.x / 128 - 1; // -1: the producer
  const int warp = threadIdx.x % 128 / 32;
  const int lane = threadIdx.x % 32;
  const int g = lane / 4;
  const int q = lane % 4;
  const int k_tiles = static_cast<int>((k + kBlockK - 1) / kBlockK);

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
    // LAB 18.copy: as 16.copy
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
    // LAB 18.wgmma: as 16.wgmma
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

  // Stores this warpgroup's sums, its 64 rows of the tile at block_row, block_col: each 16 x 8 piece
  // goes to C a pair at a time (rows g and g + 8 of the warp's 16, columns 2q, 2q + 1), only the
  // columns inside C (store_pair drops the rest).
  const auto store_tile = [&] {
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
  };

  if (warpgroup < 0) {
    // The producer: keeps 40 registers, and its thread 0 copies every k-tile of the block's tiles
    // into the next buffer once the consumers have freed it. The other 127 threads have nothing
    // more to do.
    release_registers<kProducerRegisters>();
    if (copier) {
      // LAB 18.producer: for each of the block's tiles, its k-tiles into the ring, which runs on
      // LAB-STUB: static_cast<void>(k_tiles), static_cast<void>(copy_tile);
      // LAB-STUB: static_cast<void>(tiles), static_cast<void>(take_tile);
      // On a fresh barrier the wait for parity 1 returns at once (the phase before its first counts
      // as completed), so the first round finds every buffer free. The buffer and the phase run on
      // from one tile to the next: the first k-tiles of the next tile go into the buffers the
      // consumers free first, while they still store the tile before.
      int stage = 0, phase = 0;
      for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
        take_tile(tile);
        for (int t = 0; t < k_tiles; ++t) {
          wait_for_phase(&freed[stage], phase ^ 1);
          copy_tile(t * kBlockK, stage);
          if (++stage == kStages) {
            stage = 0;
            phase ^= 1;
          }
        }
      }
      // END LAB
    }
    return;
  }
  // A consumer: takes the registers the producer gave back, then walks the block's tiles and
  // their k-tiles in the producer's order.
  claim_registers<kConsumerRegisters>();
  // LAB 18.consumer: for each tile: its k-tiles as stage 17's, then the last buffer freed too
  // LAB-STUB: static_cast<void>(multiply_stage), static_cast<void>(store_tile);
  // LAB-STUB: static_cast<void>(tiles), static_cast<void>(take_tile);
  int stage = 0, phase = 0, previous = 0;
  for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    take_tile(tile);
#pragma unroll
    for (float& sum : sums) sum = 0.0f; // a new tile of C
    for (int t = 0; t < k_tiles; ++t) {
      wait_for_phase(&landed[stage], phase);
      multiply_stage(stage);
      // k-tile t's products may run on; k-tile t - 1's have finished, so its buffer is free: each
      // warp says so (lane 0 for the warp) once it has waited.
      wait_for_products<1>();
      if (t > 0 && lane == 0) arrive(&freed[previous]);
      previous = stage;
      if (++stage == kStages) {
        stage = 0;
        phase ^= 1;
      }
    }
    // The last k-tile's products too, before the sums are read; then its buffer is free as well,
    // and the producer may fill it with the next tile's while this one is stored.
    wait_for_products<0>();
    if (lane == 0) arrive(&freed[previous]);
    store_tile();
  }
  // END LAB
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

/// The stage's own options.
struct StageOptions {
  std::string params = "128x256x64/s4"; ///< `--params`: block tile, buffers
  int blocks = 0;                       ///< `--blocks`: blocks in the grid, 0: one per SM
};

/// Declares `--params` on @p cli, the parameter sets the kernel is instantiated for, and `--blocks`.
void add_stage_options(cs::CommandLine& cli, StageOptions& options) {
  cli.add_int("blocks", &options.blocks, 0, 65535,
              "blocks in the persistent grid (fewer if there are fewer tiles); 0: one per SM of the GPU");
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

/// Plans the launch: a persistent 1-D grid of min(tiles, SMs) blocks of BM / 64 + 1 warpgroups,
/// where tiles = ceil(m / BM)·ceil(n / BN).
cs::Bf16MatmulLaunch plan_launch(const StageOptions& options, const cs::MatmulShape& shape) {
  const std::string params = options.params;
  const TileSizes tile = tile_sizes_of(params);
  const std::int64_t blocks_x = (shape.n + tile.block_n - 1) / tile.block_n;
  const std::int64_t blocks_y = (shape.m + tile.block_m - 1) / tile.block_m;
  const std::int64_t tiles = blocks_x * blocks_y;
  cs::grid_of(tiles); // the kernel counts tiles in an int
  const int sms = multiprocessors();
  const int blocks = options.blocks > 0 ? options.blocks : sms;
  const dim3 grid = cs::grid_of(blocks > 0 && blocks < tiles ? blocks : tiles);
  const int warpgroups = tile.block_m / 64 + 1; // the consumers and the producer
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
  // cudaMalloc aligns A, B and C themselves (256 bytes), so n and k decide where their rows start.
  const bool chunks_are_16_bytes = shape.n % 8 == 0 && shape.k % 8 == 0;
  const bool whole_lines = shape.n % 64 == 0 && shape.k % 64 == 0;
  cs::Bf16MatmulLaunch launch;
  launch.name = "persistent_" + params;
  launch.what =
      "stage 17's producer and consumers in a persistent grid, the ring running on from tile to tile";
  launch.grid = grid;
  launch.block = block;
  launch.shared_bytes = shared_bytes + 2 * tile.stages * sizeof(std::uint64_t); // and the barriers
  launch.notes = {
      std::to_string(tiles) + " tiles of C, " + std::to_string(tile.block_m) + " rows x " +
          std::to_string(tile.block_n) + " columns, for " +
          (options.blocks > 0 ? std::to_string(options.blocks) + " blocks (--blocks)"
           : sms > 0          ? std::to_string(sms) + " SMs (read from the GPU)"
                     : std::string("the SMs of the GPU (none found: the plan shows one block per tile)")) +
          ": block b of the grid's G takes tiles b, b + G, b + 2G, ..., the tiles taken in groups of " +
          std::to_string(kGroupRows) +
          " rows of tiles, down each column of a group before the next; warpgroup 0 copies, consumer "
          "warpgroup g (warpgroup g + 1, 4 warps) owns rows 64g .. 64g + 63, warp w of it 16 of those",
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
          "at a tile's end it frees the last one too and stores C while the producer copies the next tile's",
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
                        "whole 128-byte lines (in every timed run)") +
          (chunks_are_16_bytes ? "; a pair of C is one 8-byte store"
                               : "; n or k is not a multiple of 8, so a pair of C is two 4-byte stores")};
  launch.index_width_from_host = false;
  // The padded copies of A and B, when their rows need them: allocated at the first run, kept.
  const auto padded_a = std::make_shared<cs::DeviceBuffer<bf16>>(0);
  const auto padded_b = std::make_shared<cs::DeviceBuffer<bf16>>(0);
  launch.run = [=](const cs::Bf16MatmulArgs& p) {
    // Tensor maps of A and of B where they are when their rows fill whole 128-byte lines, else of
    // copies with rows padded to a multiple of 64; A in boxes of BM rows x 64 columns, B of 64 x 64.
    const bool aligned = rows_are_16_byte_aligned(p.a, p.b, p.c, p.n, p.k);
    const bool a_in_place = rows_fill_128_byte_lines(p.a, p.k),
               b_in_place = rows_fill_128_byte_lines(p.b, p.n);
    const std::int64_t a_pitch = a_in_place ? p.k : (p.k + 63) / 64 * 64,
                       b_pitch = b_in_place ? p.n : (p.n + 63) / 64 * 64;
    const bf16* const a = a_in_place ? p.a : cs::padded_copy(p.a, p.m, p.k, a_pitch, *padded_a);
    const bf16* const b = b_in_place ? p.b : cs::padded_copy(p.b, p.k, p.n, b_pitch, *padded_b);
    const CUtensorMap a_map = tensor_map_of(a, p.m, p.k, a_pitch, tile.block_m);
    const CUtensorMap b_map = tensor_map_of(b, p.k, p.n, b_pitch, tile.block_k);
    // More than 48 KB of dynamic shared memory per block needs the kernel's opt-in, before its launch.
    const auto launch_with_shared_memory = [&](auto kernel) {
      CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                      static_cast<int>(shared_bytes)));
      kernel<<<grid, block, shared_bytes>>>(a_map, b_map, p.c, p.m, p.n, p.k);
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
    if (params == "256x128x64/s4" && aligned) launch_with_shared_memory(matmul_wgmma<256, 128, 64, 4, true>);
    if (params == "256x128x64/s4" && !aligned)
      launch_with_shared_memory(matmul_wgmma<256, 128, 64, 4, false>);
    CUDA_CHECK_LAUNCH();
  };
  return launch;
}

} // namespace stage18

/// Hands the kernel's launch and the stage's option to the host flow every matmul stage shares, as
/// a bf16 stage: bf16 A and B, FP32 C, compute capability 9.0 exactly (sm_90a code).
int main(int argc, char** argv) {
  stage18::StageOptions options;
  return cs::run_matmul_stage(
      cs::Bf16MatmulStage{"18_persistent",
                          "C = A*B on the GPU's tensor cores: one block per SM walks tile after tile of C, a "
                          "producer warpgroup copying with TMA, consumer warpgroups multiplying with wgmma.",
                          [&](cs::CommandLine& cli) { stage18::add_stage_options(cli, options); },
                          [&](const cs::MatmulShape& shape) { return stage18::plan_launch(options, shape); },
                          90, "wgmma and TMA, in sm_90a code", true},
      argc, argv);
}
