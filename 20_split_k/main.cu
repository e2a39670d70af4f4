// 20_split_k: the tiles of the last round split along K among the blocks, their pieces summed at the end.
//
// In stage 19 each block took whole tiles, b, b + G, ...: when the tiles do not divide among the
// G blocks, the last round has fewer tiles than blocks, and the blocks without one wait. At 4099^3
// (561 tiles of 128 x 256, 132 SMs) 33 blocks take a fifth tile while 99 wait. Here the L tiles of
// that last round are split along K into P = G / L pieces each, one per block (4 pieces of about 16
// k-tiles at 4099^3), so every block does 4.25 tiles' worth. The block with a tile's first piece
// stores it: each block with a later piece writes its sums to its slot of a scratch buffer and
// raises a flag; the first waits for those flags and adds the slots to its own sums in order.
// And where n is odd, every other row of C starts 4 bytes past an 8-byte boundary: there a lane
// stores columns 2q + 1 and 2q + 2 as one 8-byte store, the second from the next lane by a shuffle
// (cs::store_row_of_pairs), where stage 19 made two 4-byte stores.
//
// Run:  20_split_k --size 4099                        (128x256x64/s4: two consumers)
//       20_split_k --size 4099 --split never          (whole tiles only: stage 19's schedule)
//       20_split_k --size 4096 --params 256x128x64/s4 (four consumers)
//       (--plan: print the launch and exit, no GPU needed; --help: every option)
// Everything but the kernel and its launch is the host flow every matmul stage shares
// (common/matmul_flow.cu: parse, generate, copy, time, verify, cuBLAS, report). wgmma exists on
// compute capability 9.0 alone (the sm_90a target): on any other GPU the stage exits 77.
/// @file
/// @brief Stage 20: stage 19 with the tiles of the last round split along K among the blocks, the
/// pieces summed through a scratch buffer and flags (chapter: 20_split_k/README.md).
#include "device_info.cuh"
#include "kernel_table.cuh"
#include "matmul_flow.cuh"
#include "mbarrier.cuh"
#include "registers.cuh"
#include "split_k.cuh"
#include "store_pair.cuh"
#include "tma.cuh"
#include "tma_inputs.cuh"
#include "wgmma.cuh"

#include <cuda.h>
#include <cuda_bf16.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>

// This stage's own names (every matmul stage has a StageOptions and a plan_launch of its own).
namespace stage20 {

/// Block rows per group in the order blocks take their tiles of C.
constexpr int kGroupRows = 8;

using bf16 = __nv_bfloat16; ///< bfloat16: a float's sign, 8-bit exponent and top 7 significand bits

/// C = A·B (A m×k, B k×n, bf16; C m×n, FP32; row-major) in stage 19's persistent grid, the last
/// round's tiles split along K: block b of G takes the whole tiles b, b + G, ... below @p whole_tiles,
/// then piece b % @p parts of tile whole_tiles + b / parts; a later piece's sums go to the block's
/// slot of @p partials and raise its warps' flags in @p arrived (zero before the launch and left zero
/// after it), and the first piece's block adds them and stores the tile (chapter 20). The blocks
/// must all run at once: the grid is at most one block per SM,
/// the tiles of C taken in groups of kGroupRows rows; no block barrier after the barriers are set
/// up, and only the stores to C are guarded; sizes and offsets are 64-bit whatever the problem.
///
/// @tparam kBlockM rows of C per block, 64 per consumer warpgroup.
/// @tparam kBlockN columns of C per block: the N of each wgmma (128 or 256).
/// @tparam kBlockK the step along K (64: a row of the A tile is 128 bytes, the swizzle's width).
/// @tparam kStages buffers in the ring: the producer may fill every buffer the consumers have freed.
/// @tparam kAligned every row of A, B and C starts on a 16-byte boundary (cs::rows_are_16_byte_aligned,
///         checked by the host before the launch): every row of C starts on an 8-byte boundary, and
///         no row needs the shuffle; otherwise the stores look at each row's address.
template <int kBlockM, int kBlockN, int kBlockK, int kStages, bool kAligned>
__global__ void __launch_bounds__((kBlockM / 64 + 1) * 128, 1)
    matmul_wgmma(const __grid_constant__ CUtensorMap a_map, const __grid_constant__ CUtensorMap b_map,
                 float* c, std::int64_t m, std::int64_t n, std::int64_t k, int whole_tiles, int parts,
                 float* partials, int* arrived) {
  static_assert(kBlockM % 64 == 0, "a warpgroup's wgmma covers 64 rows");
  static_assert(kBlockK == 64 && kBlockN % 64 == 0, "swizzled rows are whole 128-byte stripes");
  static_assert(kStages >= 2, "a ring with a tile on its way besides the one being multiplied");
  // Registers: the launch reserves the same number for every thread; the producer gives all but 40
  // back, the consumers share them out.
  constexpr int kConsumers = kBlockM / 64;
  constexpr int kProducerRegisters = 40;
  constexpr int kConsumerRegisters = cs::consumer_registers(kConsumers, kProducerRegisters);
  // The ring of kStages buffers, in dynamic shared memory from its first 1024-byte boundary (the
  // host asks for 1024 bytes more). Buffer s: the A tile, kBlockM rows of kBlockK bf16, then the B
  // tile, kBlockN / 64 stripes of kBlockK rows of 64 bf16; in every 8 rows of 128 bytes, chunk c of
  // row r is kept at chunk c XOR (r % 8), as the tensor map's 128-byte swizzle writes them. Both
  // tiles are multiples of 1024 bytes, so every tile starts on a 1024-byte boundary.
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
  // The block's work, piece by piece: for_each_piece(work) calls work(tile, k_begin, k_end) for
  // k-tiles k_begin .. k_end - 1 of each tile it takes, in order. First the whole tiles b, b + G,
  // ... below whole_tiles, as stage 19 took them; then, in the last round, piece b % parts of tile
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
  // this warp's 16 of them, and this lane's place in each 16 x 8 piece: g = lane / 4 picks its rows
  // (store_row_of_pairs, its columns).
  const int warpgroup = threadIdx.x / 128 - 1; // -1: the producer
  const int warp = threadIdx.x % 128 / 32;
  const int lane = threadIdx.x % 32;
  const int g = lane / 4;
  // Thread 0 sets up the barriers (landed: one arrival, the copier's; freed: one per consumer warp)
  // and makes them visible to the copies.
  const bool copier = threadIdx.x == 0;
  if (copier) {
    for (int s = 0; s < kStages; ++s) {
      cs::init_barrier(&landed[s], 1); // mbarrier.init
      cs::init_barrier(&freed[s], kConsumers * 4);
    }
    cs::fence_barrier_init(); // fence.mbarrier_init
  }
  __syncthreads();

  // Thread 0 only: starts copying the k-tile at k_tile into buffer `stage`: the bytes to expect,
  // then the A tile (columns k_tile .. k_tile + 63 of its rows) and each stripe of the B tile
  // (rows k_tile .. k_tile + 63, 64 columns each), zeros where they reach past A or B.
  const auto copy_tile = [&](int k_tile, int stage) {
    bf16* const tile_a = shared + stage * kStageElements;
    bf16* const tile_b = tile_a + kTileAElements;
    cs::arrive_expecting(&landed[stage], kStageBytes); // mbarrier.arrive.expect_tx
    cs::copy_box(tile_a, a_map, k_tile, static_cast<int>(block_row), &landed[stage]); // cp.async.bulk.tensor
#pragma unroll
    for (int stripe = 0; stripe < kBlockN / 64; ++stripe)
      cs::copy_box(tile_b + stripe * kBlockK * 64, b_map, static_cast<int>(block_col) + stripe * 64, k_tile,
                   &landed[stage]);
  };

  float sums[kBlockN / 2]; // this lane's 2 x 2 elements of each 16 x 8 piece of the warp's 16 rows
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

  // Stores this warpgroup's sums, its 64 rows of the tile at block_row, block_col, a row at a time
  // (rows g and g + 8 of the warp's 16): one 8-byte store per pair where the row allows it, only the
  // columns inside C. When n is odd, every other row of C starts 4 bytes past an 8-byte boundary,
  // and there the lanes realign their pairs by a shuffle (store_row_of_pairs).
  const auto store_tile = [&] {
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const std::int64_t row = block_row + warpgroup * 64 + warp * 16 + g + 8 * half;
      cs::store_row_of_pairs<kAligned>(c + row * n, sums, half, block_col, n, row < m);
    }
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
    // LAB 20.hand_over: write this warp's sums to the block's slot, then raise its flag
    // LAB-STUB: static_cast<void>(slot_of), static_cast<void>(consumer_warp);
    float4* const slot = slot_of(blockIdx.x);
#pragma unroll
    for (int j = 0; j < kBlockN / 8; ++j)
      slot[j * 32] = make_float4(sums[4 * j], sums[4 * j + 1], sums[4 * j + 2], sums[4 * j + 3]);
    __threadfence();
    __syncwarp();
    if (lane == 0) cs::raise_flag(&arrived[blockIdx.x * kConsumerWarps + consumer_warp], 1);
    // END LAB
  };
  // The first piece of a split tile: the later ones are held by the next parts - 1 blocks. For each
  // in order, this warp waits for its counterpart's flag, adds the slot to its sums and lowers the
  // flag again for the next launch.
  const auto gather = [&] {
    // LAB 20.gather: add the later pieces of the tile, block by block, each once its flag is raised
    // LAB-STUB: static_cast<void>(slot_of), static_cast<void>(parts);
    for (int block = blockIdx.x + 1; block < static_cast<int>(blockIdx.x) + parts; ++block) {
      int* const flag = &arrived[block * kConsumerWarps + consumer_warp];
      cs::wait_for_flag(flag); // ld.relaxed.gpu in a loop, then a fence
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
    // The producer: keeps 40 registers, and its thread 0 copies every k-tile of the block's pieces
    // into the next buffer once the consumers have freed it. The other 127 threads have nothing
    // more to do.
    cs::release_registers<kProducerRegisters>(); // setmaxnreg.dec
    if (copier) {
      // On a fresh barrier the wait for parity 1 returns at once (the phase before its first counts
      // as completed), so the first round finds every buffer free. The buffer and the phase run on
      // from one piece to the next: the first k-tiles of the next go into the buffers the
      // consumers free first, while they still store (or hand over) the piece before.
      int stage = 0, phase = 0;
      for_each_piece([&](int tile, int k_begin, int k_end) {
        take_tile(tile);
        for (int t = k_begin; t < k_end; ++t) {
          cs::wait_for_phase(&freed[stage], phase ^ 1); // mbarrier.try_wait.parity
          copy_tile(t * kBlockK, stage);
          if (++stage == kStages) {
            stage = 0;
            phase ^= 1;
          }
        }
      });
    }
    return;
  }
  // A consumer: takes the registers the producer gave back, then walks the block's pieces and
  // their k-tiles in the producer's order.
  cs::claim_registers<kConsumerRegisters>(); // setmaxnreg.inc
  // LAB 20.consumer: for each piece: its k-tiles as stage 19's, then hand over, gather or store
  // LAB-STUB: static_cast<void>(multiply_stage), static_cast<void>(store_tile);
  // LAB-STUB: static_cast<void>(for_each_piece), static_cast<void>(take_tile);
  // LAB-STUB: static_cast<void>(hand_over), static_cast<void>(gather);
  int stage = 0, phase = 0, previous = 0;
  for_each_piece([&](int tile, int k_begin, int k_end) {
    take_tile(tile);
#pragma unroll
    for (float& sum : sums) sum = 0.0f; // a new tile of C, or a new piece of one
    for (int t = k_begin; t < k_end; ++t) {
      cs::wait_for_phase(&landed[stage], phase);
      multiply_stage(stage);
      // k-tile t's products may run on; k-tile t - 1's have finished, so its buffer is free: each
      // warp says so (lane 0 for the warp) once it has waited.
      cs::wait_for_products<1>();                                 // wgmma.wait_group 1
      if (t > k_begin && lane == 0) cs::arrive(&freed[previous]); // mbarrier.arrive
      previous = stage;
      if (++stage == kStages) {
        stage = 0;
        phase ^= 1;
      }
    }
    // The last k-tile's products too, before the sums are read (pinned there: the shuffles below
    // read them, and ptxas would otherwise serialize every wgmma); then its buffer is free as well,
    // and the producer may fill it with the next piece's while this one is stored.
    cs::wait_for_products<0>();
    cs::pin_sums(sums);
    if (lane == 0) cs::arrive(&freed[previous]);
    if (k_begin > 0) return hand_over(); // a later piece of a split tile: its first piece stores it
    if (k_end < k_tiles) gather();       // the first piece of a split tile: add the later ones
    store_tile();
  });
  // END LAB
}

/// The kernel's instances, one per `--params` set: for rows on 16-byte boundaries, and for the others.
const cs::KernelTable<void (*)(CUtensorMap, CUtensorMap, float*, std::int64_t, std::int64_t, std::int64_t,
                               int, int, float*, int*)>
    kKernels = {
        {"128x256x64/s4", matmul_wgmma<128, 256, 64, 4, true>, matmul_wgmma<128, 256, 64, 4, false>},
        {"128x256x64/s3", matmul_wgmma<128, 256, 64, 3, true>, matmul_wgmma<128, 256, 64, 3, false>},
        {"128x128x64/s3", matmul_wgmma<128, 128, 64, 3, true>, matmul_wgmma<128, 128, 64, 3, false>},
        {"128x128x64/s4", matmul_wgmma<128, 128, 64, 4, true>, matmul_wgmma<128, 128, 64, 4, false>},
        {"256x128x64/s3", matmul_wgmma<256, 128, 64, 3, true>, matmul_wgmma<256, 128, 64, 3, false>},
        {"256x128x64/s4", matmul_wgmma<256, 128, 64, 4, true>, matmul_wgmma<256, 128, 64, 4, false>},
};

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
      "k-tiles, wherever the round leaves blocks idle, or never (whole tiles, stage 19's schedule)");
  cli.add_choice("params", &options.params, kKernels.params(),
                 "block tile of C (rows x columns) x step along K / shared-memory buffers in the ring "
                 "(a warpgroup per 64 rows)");
}

/// Plans the launch: a persistent 1-D grid of at most one block per SM, of BM / 64 + 1 warpgroups,
/// and the schedule of the tiles (cs::schedule_of), tiles = ceil(m / BM)·ceil(n / BN).
cs::Bf16MatmulLaunch plan_launch(const StageOptions& options, const cs::MatmulShape& shape) {
  const std::string params = options.params;
  const cs::TileSizes tile = cs::tile_sizes_of(params, "BMxBNxBK/sS");
  const std::int64_t blocks_x = (shape.n + tile.block_n - 1) / tile.block_n;
  const std::int64_t blocks_y = (shape.m + tile.block_m - 1) / tile.block_m;
  const std::int64_t tiles = blocks_x * blocks_y;
  cs::grid_of(tiles); // the kernel counts tiles in an int
  const int sms = cs::multiprocessor_count();
  const std::int64_t k_steps = (shape.k + tile.block_k - 1) / tile.block_k;
  // The blocks: one per SM, or --blocks but no more than the SMs; with no GPU to ask and no
  // --blocks, the plan assumes one block per tile.
  const std::int64_t blocks = options.blocks > 0 ? (sms > 0 ? std::min(options.blocks, sms) : options.blocks)
                              : sms > 0          ? sms
                                                 : tiles;
  const cs::Schedule schedule = cs::schedule_of(tiles, k_steps, blocks, options.split);
  const dim3 grid = cs::grid_of(schedule.blocks);
  const std::string grid_for =
      options.blocks > 0 ? std::to_string(blocks) + " blocks (--blocks, at most one per SM)"
      : sms > 0          ? std::to_string(sms) + " SMs (read from the GPU)"
                         : "the SMs of the GPU (none found: the plan shows one block per tile)";
  const int warpgroups = tile.block_m / 64 + 1; // the consumers and the producer
  const dim3 block(static_cast<unsigned>(warpgroups * 128));
  // The ring: S buffers of an A tile and a B tile, bf16, swizzled by the TMA; 1024 bytes more, to
  // start it on a 1024-byte boundary.
  const std::size_t buffer_bytes = sizeof(bf16) * (tile.block_m * tile.block_k + tile.block_k * tile.block_n);
  const std::size_t shared_bytes = tile.stages * buffer_bytes + 1024;
  cs::Bf16MatmulLaunch launch;
  launch.name = "split_k_" + params;
  launch.what = "stage 19's persistent grid, the last round's tiles split along K among the blocks";
  launch.grid = grid;
  launch.block = block;
  launch.shared_bytes = shared_bytes + 2 * tile.stages * sizeof(std::uint64_t); // and the barriers
  // The plan's notes: who owns which part of C, the ring and its barriers, how A, B and C move.
  const std::string wgmma = "per 16 along K one wgmma.mma_async m64n" + std::to_string(tile.block_n) +
                            "k16, " + std::to_string(tile.block_n / 2) + " FP32 sums per thread";
  const std::string c_out =
      shape.n % 2 == 0 ? "a pair of C is one 8-byte store"
                       : "n is odd: every other row of C starts 4 bytes past an 8-byte boundary, and "
                         "there a lane stores columns 2q + 1 and 2q + 2, the second from the next "
                         "lane (a shuffle), as one 8-byte store";
  launch.notes = {
      std::to_string(tiles) + " tiles of C, " + std::to_string(tile.block_m) + " rows x " +
          std::to_string(tile.block_n) + " columns, for " + grid_for + ", taken in groups of " +
          std::to_string(kGroupRows) + " rows, down each column of a group before the next",
      cs::schedule_note(schedule, tiles, k_steps, blocks, options.split, tile.block_m, tile.block_n),
      "warpgroup 0 copies, consumer warpgroup g (warpgroup g + 1) owns rows 64g .. 64g + 63: " + wgmma,
      "shared memory: a ring of " + std::to_string(tile.stages) + " buffers of " +
          std::to_string(buffer_bytes) + " bytes and two mbarriers each (landed, freed); the producer's " +
          "thread 0 copies a k-tile with " + std::to_string(1 + tile.block_n / 64) +
          " TMA boxes once its buffer is freed; a consumer waits for landed, issues its wgmma, waits for " +
          "the k-tile before's and frees its buffer; at a tile's end it frees the last one too and stores " +
          "C while the producer copies the next tile's",
      "registers (setmaxnreg): the producer keeps 40 per thread, the " + std::to_string(warpgroups - 1) +
          " consumers share the rest of the " + std::to_string(cs::launch_registers(warpgroups * 128)) +
          " per thread the launch reserves",
      cs::input_maps_note(shape) + "; " + c_out};
  launch.index_width_from_host = false;
  // The padded copies of A and B, where their rows need them: allocated at the first run, kept.
  const auto padded = std::make_shared<cs::PaddedInputs>();
  // The scratch buffer and the flags for split tiles, when the schedule splits any.
  const auto scratch = std::make_shared<cs::SplitScratch>();
  const std::size_t partial_count =
      schedule.whole_tiles < tiles ? static_cast<std::size_t>(schedule.blocks * tile.block_m * tile.block_n)
                                   : 0;
  const std::size_t flag_count = static_cast<std::size_t>(schedule.blocks * tile.block_m / 64 * 4);
  const int whole_tiles = static_cast<int>(schedule.whole_tiles), parts = static_cast<int>(schedule.parts);
  launch.run = [=](const cs::Bf16MatmulArgs& p) {
    scratch->reserve(partial_count, flag_count);
    // Tensor maps of A in boxes of BM rows x 64 columns and of B in boxes of 64 x 64 (tma_inputs.cuh).
    const cs::InputMaps maps = cs::input_maps(p, tile.block_m, tile.block_k, *padded);
    cs::launch_with_shared_memory(kKernels.find(params, cs::rows_are_16_byte_aligned(p)), grid, block,
                                  shared_bytes, maps.a, maps.b, p.c, p.m, p.n, p.k, whole_tiles, parts,
                                  scratch->partials(), scratch->flags());
  };
  return launch;
}

} // namespace stage20

/// Hands the kernel's launch and the stage's option to the host flow every matmul stage shares, as
/// a bf16 stage: bf16 A and B, FP32 C, compute capability 9.0 exactly (sm_90a code).
int main(int argc, char** argv) {
  stage20::StageOptions options;
  return cs::run_matmul_stage(
      cs::Bf16MatmulStage{
          "20_split_k",
          "C = A*B on the GPU's tensor cores: one block per SM walks whole tiles of C, and the "
          "tiles of the last round are split along K among the blocks, their pieces summed.",
          [&](cs::CommandLine& cli) { stage20::add_stage_options(cli, options); },
          [&](const cs::MatmulShape& shape) { return stage20::plan_launch(options, shape); }, 90,
          "wgmma and TMA, in sm_90a code", true},
      argc, argv);
}
