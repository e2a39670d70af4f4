// 18_warp_specialized: one warpgroup copies, the others multiply, and barriers hand the buffers over.
//
// In stage 17 every warp still met every other at a block barrier each k-tile, only so that thread
// 0 knew the buffer it was about to fill was free; and thread 0, which issued the copies, belonged
// to a warpgroup that multiplied. Nsight Compute's first stall was that barrier. Here the roles are
// split. Warpgroup 0, the producer, only copies: its thread 0 fills the ring buffer after buffer,
// waiting for each to be free. The other warpgroups, the consumers, only multiply: each waits for
// its tile's barrier, issues its wgmma, and once the products of the tile before have finished,
// each of its warps arrives on that buffer's second barrier, "freed", on which the producer waits.
// No thread waits for the whole block any more. The producer needs few registers, the consumers
// many: setmaxnreg moves them (the producer keeps 40, the consumers take the rest).
//
// Run:  18_warp_specialized --size 4096                        (128x256x64/s4: two consumers)
//       18_warp_specialized --size 4096 --params 256x128x64/s4 (four consumers)
//       18_warp_specialized --size 4099                        (rows not 16-byte aligned: padded copies)
//       (--plan: print the launch and exit, no GPU needed; --help: every option)
// Everything but the kernel and its launch is the host flow every matmul stage shares
// (common/matmul_flow.cu: parse, generate, copy, time, verify, cuBLAS, report). wgmma exists on
// compute capability 9.0 alone (the sm_90a target): on any other GPU the stage exits 77.
/// @file
/// @brief Stage 18: stage 17 with a producer warpgroup and consumer warpgroups, full and empty
/// barriers, and setmaxnreg (chapter: 18_warp_specialized/README.md).
#include "kernel_table.cuh"
#include "matmul_flow.cuh"
#include "mbarrier.cuh"
#include "registers.cuh"
#include "store_pair.cuh"
#include "tma.cuh"
#include "tma_inputs.cuh"
#include "wgmma.cuh"

#include <cuda.h>
#include <cuda_bf16.h>

#include <cstdint>
#include <memory>
#include <string>

// This stage's own names (every matmul stage has a StageOptions and a plan_launch of its own).
namespace stage18 {

/// Block rows per group in the order blocks take their tiles of C.
constexpr int kGroupRows = 8;

using bf16 = __nv_bfloat16; ///< bfloat16: a float's sign, 8-bit exponent and top 7 significand bits

/// C = A·B (A m×k, B k×n, bf16; C m×n, FP32; row-major) with stage 17's tiles, TMA copies and wgmma,
/// warpgroup 0 the producer that copies, warpgroups 1 .. kBlockM / 64 the consumers that multiply 64
/// rows each, a `landed` and a `freed` mbarrier per buffer between them (chapter 18). The grid is 1-D,
/// the tiles of C taken in groups of kGroupRows rows; no block barrier after the barriers are set
/// up, and only the stores to C are guarded; sizes and offsets are 64-bit whatever the problem.
///
/// @tparam kBlockM rows of C per block, 64 per consumer warpgroup.
/// @tparam kBlockN columns of C per block: the N of each wgmma (128 or 256).
/// @tparam kBlockK the step along K (64: a row of the A tile is 128 bytes, the swizzle's width).
/// @tparam kStages buffers in the ring: the producer may fill every buffer the consumers have freed.
/// @tparam kAligned every row of A, B and C starts on a 16-byte boundary (cs::rows_are_16_byte_aligned,
///         checked by the host before the launch): a pair of C is one 8-byte store; otherwise two
///         4-byte stores.
template <int kBlockM, int kBlockN, int kBlockK, int kStages, bool kAligned>
__global__ void __launch_bounds__((kBlockM / 64 + 1) * 128, 1)
    matmul_wgmma(const __grid_constant__ CUtensorMap a_map, const __grid_constant__ CUtensorMap b_map,
                 float* c, std::int64_t m, std::int64_t n, std::int64_t k) {
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
  const int warpgroup = threadIdx.x / 128 - 1; // -1: the producer
  const int warp = threadIdx.x % 128 / 32;
  const int lane = threadIdx.x % 32;
  const int g = lane / 4;
  const int q = lane % 4;
  const std::int64_t block_row = static_cast<std::int64_t>(block_row_index) * kBlockM;
  const std::int64_t block_col = static_cast<std::int64_t>(block_col_index) * kBlockN;
  const int k_tiles = static_cast<int>((k + kBlockK - 1) / kBlockK);

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

  if (warpgroup < 0) {
    // The producer: keeps 40 registers, and its thread 0 copies every k-tile into the next buffer
    // once the consumers have freed it. The other 127 threads have nothing more to do.
    cs::release_registers<kProducerRegisters>(); // setmaxnreg.dec
    if (copier) {
      // LAB 18.producer: wait until the next buffer is freed, copy the next k-tile into it
      // LAB-STUB: static_cast<void>(k_tiles), static_cast<void>(copy_tile);
      // On a fresh barrier the wait for parity 1 returns at once (the phase before its first counts
      // as completed), so the first round finds every buffer free.
      int stage = 0, phase = 0;
      for (int t = 0; t < k_tiles; ++t) {
        cs::wait_for_phase(&freed[stage], phase ^ 1); // mbarrier.try_wait.parity
        copy_tile(t * kBlockK, stage);
        if (++stage == kStages) {
          stage = 0;
          phase ^= 1;
        }
      }
      // END LAB
    }
    return;
  }
  // A consumer: takes the registers the producer gave back, then walks the k-tiles.
  cs::claim_registers<kConsumerRegisters>(); // setmaxnreg.inc
  // LAB 18.consumer: wait for each tile, multiply it, free the buffer of the tile before
  // LAB-STUB: static_cast<void>(multiply_stage);
  int stage = 0, phase = 0, previous = 0;
  for (int t = 0; t < k_tiles; ++t) {
    cs::wait_for_phase(&landed[stage], phase);
    multiply_stage(stage);
    // Tile t's products may run on; tile t - 1's have finished, so its buffer is free: each warp
    // says so (lane 0 for the warp) once it has waited.
    cs::wait_for_products<1>();                           // wgmma.wait_group 1
    if (t > 0 && lane == 0) cs::arrive(&freed[previous]); // mbarrier.arrive
    previous = stage;
    if (++stage == kStages) {
      stage = 0;
      phase ^= 1;
    }
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
const cs::KernelTable<void (*)(CUtensorMap, CUtensorMap, float*, std::int64_t, std::int64_t, std::int64_t)>
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
  std::string params = "128x256x64/s4"; ///< `--params`: block tile, buffers
};

/// Declares `--params` on @p cli: the parameter sets the kernel is instantiated for.
void add_stage_options(cs::CommandLine& cli, StageOptions& options) {
  cli.add_choice("params", &options.params, kKernels.params(),
                 "block tile of C (rows x columns) x step along K / shared-memory buffers in the ring "
                 "(a warpgroup per 64 rows)");
}

/// Plans the launch: a 1-D grid of ceil(m / BM)·ceil(n / BN) blocks of BM / 64 + 1 warpgroups.
cs::Bf16MatmulLaunch plan_launch(const StageOptions& options, const cs::MatmulShape& shape) {
  const std::string params = options.params;
  const cs::TileSizes tile = cs::tile_sizes_of(params, "BMxBNxBK/sS");
  const std::int64_t blocks_x = (shape.n + tile.block_n - 1) / tile.block_n;
  const std::int64_t blocks_y = (shape.m + tile.block_m - 1) / tile.block_m;
  const dim3 grid = cs::grid_of(blocks_x * blocks_y);
  const int warpgroups = tile.block_m / 64 + 1; // the consumers and the producer
  const dim3 block(static_cast<unsigned>(warpgroups * 128));
  // The ring: S buffers of an A tile and a B tile, bf16, swizzled by the TMA; 1024 bytes more, to
  // start it on a 1024-byte boundary.
  const std::size_t buffer_bytes = sizeof(bf16) * (tile.block_m * tile.block_k + tile.block_k * tile.block_n);
  const std::size_t shared_bytes = tile.stages * buffer_bytes + 1024;
  cs::Bf16MatmulLaunch launch;
  launch.name = "specialized_" + params;
  launch.what = "stage 17's TMA copies and wgmma, a producer warpgroup and consumer warpgroups, setmaxnreg";
  launch.grid = grid;
  launch.block = block;
  launch.shared_bytes = shared_bytes + 2 * tile.stages * sizeof(std::uint64_t); // and the barriers
  // The plan's notes: who owns which part of C, the ring and its barriers, how A, B and C move.
  const std::string wgmma = "per 16 along K one wgmma.mma_async m64n" + std::to_string(tile.block_n) +
                            "k16, " + std::to_string(tile.block_n / 2) + " FP32 sums per thread";
  const std::string c_out = shape.n % 8 == 0 && shape.k % 8 == 0
                                ? "a pair of C is one 8-byte store"
                                : "n or k is not a multiple of 8: a pair of C is two 4-byte stores";
  launch.notes = {
      "block b owns a " + std::to_string(tile.block_m) + " x " + std::to_string(tile.block_n) +
          " tile of C, the tiles taken in groups of " + std::to_string(kGroupRows) +
          " rows, down each column of a group before the next; warpgroup 0 copies, consumer warpgroup g " +
          "(warpgroup g + 1) owns rows 64g .. 64g + 63: " + wgmma,
      "shared memory: a ring of " + std::to_string(tile.stages) + " buffers of " +
          std::to_string(buffer_bytes) + " bytes and two mbarriers each (landed, freed); the producer's " +
          "thread 0 copies a k-tile with " + std::to_string(1 + tile.block_n / 64) +
          " TMA boxes once its buffer is freed; a consumer waits for landed, issues its wgmma, waits for " +
          "the k-tile before's and frees its buffer",
      "registers (setmaxnreg): the producer keeps 40 per thread, the " + std::to_string(warpgroups - 1) +
          " consumers share the rest of the " + std::to_string(cs::launch_registers(warpgroups * 128)) +
          " per thread the launch reserves",
      cs::input_maps_note(shape) + "; " + c_out};
  launch.index_width_from_host = false;
  // The padded copies of A and B, where their rows need them: allocated at the first run, kept.
  const auto padded = std::make_shared<cs::PaddedInputs>();
  launch.run = [=](const cs::Bf16MatmulArgs& p) {
    // Tensor maps of A in boxes of BM rows x 64 columns and of B in boxes of 64 x 64 (tma_inputs.cuh).
    const cs::InputMaps maps = cs::input_maps(p, tile.block_m, tile.block_k, *padded);
    cs::launch_with_shared_memory(kKernels.find(params, cs::rows_are_16_byte_aligned(p)), grid, block,
                                  shared_bytes, maps.a, maps.b, p.c, p.m, p.n, p.k);
  };
  return launch;
}

} // namespace stage18

/// Hands the kernel's launch and the stage's option to the host flow every matmul stage shares, as
/// a bf16 stage: bf16 A and B, FP32 C, compute capability 9.0 exactly (sm_90a code).
int main(int argc, char** argv) {
  stage18::StageOptions options;
  return cs::run_matmul_stage(
      cs::Bf16MatmulStage{"18_warp_specialized",
                          "C = A*B on the GPU's tensor cores: a producer warpgroup copies tiles with TMA, "
                          "consumer warpgroups multiply them with wgmma, mbarriers hand the buffers over.",
                          [&](cs::CommandLine& cli) { stage18::add_stage_options(cli, options); },
                          [&](const cs::MatmulShape& shape) { return stage18::plan_launch(options, shape); },
                          90, "wgmma and TMA, in sm_90a code", true},
      argc, argv);
}
