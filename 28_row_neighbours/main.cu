// 28_row_neighbours: the two tiles of a row of C on neighbouring blocks, where A is read twice.
//
// At 4096 x 128 x 4096 stage 27 takes 64 x 64 tiles: two columns of them, so that every row of A is
// read by two blocks. The tiles go to the blocks in groups of eight rows, a column at a time, so the
// two blocks that read a row are eight apart, and the launch's time depends on where A, B and C were
// allocated: by a fifth from one process to the next, where cuBLAS's does not move. Here a unit of
// work is a row's two tiles side by side, and blocks 2u and 2u + 1 take them: the two readers of a
// row are neighbours, and the time is the same in every process, and as short as the best of
// stage 27's. No cluster, no copy shared, the same instances: only which block takes which tile. The
// rule takes the neighbours for 64-row tiles where A is the larger input and C has two columns of
// tiles or more.
//
// Run:  28_row_neighbours --m 4096 --n 128 --k 4096   (64 x 64 tiles, a row's two on neighbouring blocks)
//       (--plan: print the launch and exit, no GPU needed; --help: every option)
// Everything but the kernel and its launch is the host flow every matmul stage shares
// (common/matmul_flow.cu: parse, generate, copy, time, verify, cuBLAS, report). wgmma exists on
// compute capability 9.0 alone (the sm_90a target): on any other GPU the stage exits 77.
/// @file
/// @brief Stage 28: stage 27's kernel and rule, with the two tiles of a row of C on neighbouring blocks
/// where A is the larger input and two blocks read each of its rows (chapter: 28_row_neighbours/README.md).
#include "cluster.cuh"
#include "device_info.cuh"
#include "kernel_table.cuh"
#include "matmul_flow.cuh"
#include "mbarrier.cuh"
#include "registers.cuh"
#include "split_k.cuh"
#include "store_pair.cuh"
#include "tma.cuh"
#include "tma_inputs.cuh"
#include "tma_store.cuh"
#include "wgmma.cuh"

#include <cuda.h>
#include <cuda_bf16.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

// This stage's own names (every matmul stage has a StageOptions and a plan_launch of its own).
namespace stage28 {

/// Block rows per group in the order blocks take their tiles of C.
constexpr int kGroupRows = 8;

using bf16 = __nv_bfloat16; ///< bfloat16: a float's sign, 8-bit exponent and top 7 significand bits

/// What the rule knows of an instance, fitted to its times over a grid of shapes (chapter 23, "The
/// rule"): its k-tiles' share of the tensor cores' peak with every SM busy, and what a tile costs it
/// beyond its k-tiles (storing it, and the ring running dry while the next tile's first k-tiles land).
struct Candidate {
  const char* params; ///< the instance's `--params` set
  double efficiency;  ///< its k-tiles' rate, as a share of the tensor cores' peak
  double tile_us;     ///< microseconds a tile (or a piece of one) takes beyond its k-tiles
};
/// The instances the rule chooses among, the larger tiles first (the first of two equal estimates
/// wins: a tile in buffers of 64 columns before its twin in buffers of 128). Stage 22's 256 x 128
/// tiles are left out: no shape of the grid runs them fastest. 64 x 128 in four buffers of 128
/// columns takes the figures of its twin in eight of 64: the two differ only in how evenly the SMs
/// stream A, which the estimate does not see.
constexpr Candidate kCandidates[] = {
    {"192x192x64/s4", 0.80, 4.0}, {"128x256x64/s4", 0.82, 3.1}, {"128x192x64/s4", 0.78, 2.4},
    {"128x128x64/s6", 0.78, 1.5}, {"64x256x64/s5", 0.79, 2.1},  {"64x128x64/s8", 0.66, 1.1},
    {"64x128x128/s4", 0.66, 1.1}, {"128x64x64/s8", 0.49, 0.9},  {"64x64x64/s8", 0.41, 0.8},
    {"64x64x128/s6", 0.46, 0.5},
};
/// The share of the memory's peak bandwidth that a copy reaches (cudaMemcpy of 1 GiB, device to device).
constexpr double kCopyShare = 0.90;

/// The GPU the rule plans for: its SMs, one SM's dense bf16 peak and the memory's copy rate. Read
/// from the GPU; without one (`--plan` on any machine), an H200's: 132 SMs at 1980 MHz, 4.8 TB/s, an L2
/// of 60 MiB.
struct Machine {
  int sms = 132;                              ///< streaming multiprocessors: blocks of the persistent grid
  double sm_flops_per_us = 2048.0 * 2 * 1980; ///< tensor-core multiply-adds per clock x 2 x MHz
  double bytes_per_us = kCopyShare * 4.8e6;   ///< the copy rate, bytes per microsecond
  double l2_bytes = 60.0 * (1 << 20);         ///< the L2 cache: a B of at most half of it is read once
  double fill_us = 4.5;   ///< a launch beyond its tiles: the grid's start, the first fill, the last stores
  double gather_us = 2.5; ///< a split tile's first block, per later piece: its flag, its sums from L2
  int pairs = 66;         ///< clusters of two blocks the GPU runs at once (read at the launch's plan)
  bool from_gpu = false;  ///< whether the figures are the GPU's
  std::string source = "an H200's figures: no GPU found"; ///< where the figures come from
};
/// The machine this process plans for: the GPU it uses, or an H200 without one.
Machine machine_of() {
  Machine machine;
  const cs::DeviceFigures figures = cs::device_figures();
  if (figures.sms == 0) return machine;
  machine.sms = figures.sms;
  machine.pairs = figures.sms / 2;
  machine.sm_flops_per_us = 2048.0 * 2 * figures.sm_clock_mhz;
  machine.bytes_per_us = kCopyShare * figures.peak_bandwidth_gbs * 1e3;
  machine.l2_bytes = figures.l2_bytes;
  machine.source = "read from the GPU";
  machine.from_gpu = true;
  return machine;
}

/// One way to run the problem, and what the rule expects of it.
struct Estimate {
  std::string params;       ///< the instance
  cs::TileSizes tile;       ///< its tile
  std::string split;        ///< "never" or "always", as `--split`
  int cluster = 1;          ///< blocks in a cluster: 2, pairs of tiles one above the other
  bool neighbours = false;  ///< a row's tiles two at a time on neighbouring blocks
  cs::Schedule schedule;    ///< the units (and pieces of units) each cluster takes
  std::int64_t tiles = 0;   ///< tiles of C
  std::int64_t units = 0;   ///< units of work: a tile, or a pair of tiles in one column
  std::int64_t k_tiles = 0; ///< k-tiles of each
  double edges_us = 0;      ///< before and after both: the fill, and a split tile's gather
  double products_us = 0;   ///< the busiest block's k-tiles and tiles
  double bytes_us = 0;      ///< A, B and C (and a split's partial sums) moved at the copy rate
  double time_us() const { return edges_us + std::max(products_us, bytes_us); } ///< the estimate
};

/// Whether rows of @p length bf16 are read where they are but are not whole 128-byte lines: a
/// multiple of 8 elements (the TMA reads them) and not of 64.
bool rows_straddle_lines(std::int64_t length) {
  return length % 8 == 0 && length % 64 != 0;
}

/// Whether tiles of @p tile may go in pairs: 128 x 256, two consumer warpgroups and four stripes of
/// B, two for each block to copy; 192 x 192 and 128 x 192, three stripes, two for the first block
/// and one for the second; or 64 x 128, one consumer warpgroup and two stripes, one each. (128 x 128
/// tiles in pairs run slower than alone: chapter 24.)
bool pairs_take(const cs::TileSizes& tile) {
  return (tile.block_m >= 128 && tile.block_n >= 192) || (tile.block_m == 64 && tile.block_n == 128);
}

/// Whether the L2 needs pairs at @p shape: A's rows or B's read where they are across lines, and at
/// least two rows of 128-row tiles, one for each block of a pair.
bool l2_needs_pairs(const cs::MatmulShape& shape) {
  return (rows_straddle_lines(shape.k) || rows_straddle_lines(shape.n)) && shape.m > 128;
}

/// Whether B wants pairs of 64-row tiles at @p shape: C of 65 to 128 rows, two rows of 64-row tiles
/// that a pair takes together, and B larger than the L2, so that the two rows of tiles read B once
/// between them only if they read it at once.
bool b_wants_pairs(const cs::MatmulShape& shape, double l2_bytes) {
  return shape.m > 64 && shape.m <= 128 && 2.0 * shape.k * shape.n > l2_bytes;
}

/// The blocks of a cluster for @p tile at @p shape, as `--cluster` says (@p option, 1 or 2) or, for
/// auto, 2 where pairs take the tiles and the L2 needs them (tiles of 128 rows or more, where C has
/// two rows of them), or B does (64-row tiles, @p l2_bytes the L2's size). Elsewhere a pair waits for
/// its slower block for nothing.
int cluster_for(const cs::TileSizes& tile, const cs::MatmulShape& shape, const std::string& option,
                double l2_bytes) {
  if (option != "auto") return std::stoi(option);
  int blocks = 1;
  if (pairs_take(tile) && tile.block_m >= 128)
    blocks = l2_needs_pairs(shape) && shape.m > tile.block_m ? 2 : 1;
  else if (pairs_take(tile))
    blocks = b_wants_pairs(shape, l2_bytes) ? 2 : 1;
  return blocks;
}

/// Whether tiles of @p tile, alone (a cluster of one, @p cluster), go to neighbouring blocks two at a
/// time at @p shape, a row's left tile to block 2u and its right tile to block 2u + 1: 64-row tiles
/// (the instances built for it) where A is the larger input and C has two columns of tiles or more,
/// so that each of A's rows is read by two blocks or more. Then the two readers of a row are
/// neighbours, not eight blocks apart (chapter 28).
bool takes_neighbours(const cs::TileSizes& tile, const cs::MatmulShape& shape, int cluster) {
  bool neighbours = false;
  // LAB 28.neighbours: neighbours where A is the larger input and two blocks read each of its rows
  // LAB-STUB: static_cast<void>(tile), static_cast<void>(shape), static_cast<void>(cluster);
  neighbours = cluster == 1 && tile.block_m == 64 && shape.m > shape.n && shape.n > tile.block_n;
  // END LAB
  return neighbours;
}

/// Whether @p tile at @p shape goes to neighbouring blocks, as `--neighbours` says (@p option: yes, no
/// or auto, the rule's takes_neighbours()), for a cluster of @p cluster.
bool neighbours_for(const cs::TileSizes& tile, const cs::MatmulShape& shape, const std::string& option,
                    int cluster) {
  return option == "auto" ? takes_neighbours(tile, shape, cluster) : option == "yes";
}

/// The rule's estimate for instance @p candidate with the split @p split ("never" or "always"), its
/// blocks in clusters as @p cluster_option says and on neighbouring blocks as @p neighbours_option.
Estimate estimate(const Candidate& candidate, const std::string& split, const std::string& cluster_option,
                  const std::string& neighbours_option, const cs::MatmulShape& shape,
                  const Machine& machine) {
  Estimate e;
  e.params = candidate.params;
  e.split = split;
  e.tile = cs::tile_sizes_of(e.params, "BMxBNxBK/sS");
  e.cluster = cluster_for(e.tile, shape, cluster_option, machine.l2_bytes);
  e.neighbours = neighbours_for(e.tile, shape, neighbours_option, e.cluster);
  const std::int64_t tile_rows = (shape.m + e.tile.block_m - 1) / e.tile.block_m;
  const std::int64_t tile_cols = (shape.n + e.tile.block_n - 1) / e.tile.block_n;
  e.tiles = tile_rows * tile_cols;
  // A unit: a tile, a pair one above the other (a cluster of two) or side by side (neighbours).
  const int unit = e.neighbours ? 2 : e.cluster;
  e.units =
      e.neighbours ? tile_rows * ((tile_cols + 1) / 2) : (tile_rows + e.cluster - 1) / e.cluster * tile_cols;
  e.k_tiles = (shape.k + e.tile.block_k - 1) / e.tile.block_k;
  // Units on clusters (or pairs of neighbours) as stage 23's tiles on blocks: a pair's two blocks take
  // the same k-tiles.
  const std::int64_t clusters =
      e.cluster == 2 ? std::min<std::int64_t>(machine.pairs, machine.sms / 2) : machine.sms / unit;
  e.schedule = cs::schedule_of(e.units, e.k_tiles, clusters, split);
  const double k_tile_flops = 2.0 * e.tile.block_m * e.tile.block_n * e.tile.block_k;
  const double k_tile_us = k_tile_flops / (machine.sm_flops_per_us * candidate.efficiency);
  // The busiest block's tiles: its whole tiles, and a piece of a split tile in the last round.
  const std::int64_t blocks = e.schedule.blocks;
  const std::int64_t busiest_tiles = (e.schedule.whole_tiles + blocks - 1) / blocks + (e.schedule.parts > 1);
  e.products_us = e.schedule.most_k_tiles * k_tile_us + busiest_tiles * candidate.tile_us;
  // Before the k-tiles flow and after they stop, neither the products nor the bytes hide: the launch
  // and the first fill, and the first piece of a split tile gathering the others' sums.
  e.edges_us = machine.fill_us + (e.schedule.parts - 1) * machine.gather_us;
  // The bytes: A and C once; B once per group of kGroupRows rows of tiles (a round's blocks take them
  // together: their reads of B meet in L2), or once if it fits in half the L2 (it stays there beside
  // the stream of A); a split tile's later pieces out to scratch and back.
  const double tile_bytes = 4.0 * e.tile.block_m * e.tile.block_n;
  const std::int64_t groups = 2.0 * shape.k * shape.n <= machine.l2_bytes / 2
                                  ? 1
                                  : ((tile_rows + e.cluster - 1) / e.cluster + kGroupRows - 1) / kGroupRows;
  const double split_bytes =
      2.0 * (e.units - e.schedule.whole_tiles) * unit * (e.schedule.parts - 1) * tile_bytes;
  const double bytes =
      2.0 * shape.m * shape.k + 2.0 * shape.k * shape.n * groups + 4.0 * shape.m * shape.n + split_bytes;
  e.bytes_us = bytes / machine.bytes_per_us;
  return e;
}

/// Whether @p candidate's tile reaches 64 rows or columns or more past C (a 128-row tile for 64 rows):
/// it multiplies zeros, and measured it runs far slower than even those products say (chapter 23).
bool overhangs(const Candidate& candidate, const cs::MatmulShape& shape) {
  const cs::TileSizes tile = cs::tile_sizes_of(candidate.params, "BMxBNxBK/sS");
  const auto whole_stripes = [](std::int64_t size) { return (size + 63) / 64 * 64; };
  return tile.block_m > whole_stripes(shape.m) || tile.block_n > whole_stripes(shape.n);
}

/// Whether @p candidate's tile spans all of C's columns: one column of tiles, each row of A read by
/// one block.
bool spans_columns(const Candidate& candidate, const cs::MatmulShape& shape) {
  return cs::tile_sizes_of(candidate.params, "BMxBNxBK/sS").block_n >= shape.n;
}

/// Whether A is larger than the L2: its rows stream through it, and a row that two blocks read (in
/// two columns of tiles) comes from memory once only while the two keep in step (chapter 23).
bool a_streams_through_l2(const cs::MatmulShape& shape, const Machine& machine) {
  return 2.0 * shape.m * shape.k > machine.l2_bytes;
}

/// Whether @p candidate keeps buffers of 64 columns of K where A is larger than the L2 at @p shape, while
/// its twin, the same tile in buffers of 128 columns, is among @p weighed. There the twin's copies,
/// half as many and twice as long, keep every SM streaming A at the same pace (chapter 27); where A
/// fits in the L2, the shorter ring is slower.
bool keeps_narrow_buffers(const Candidate& candidate, const std::vector<Candidate>& weighed,
                          const cs::MatmulShape& shape, const Machine& machine) {
  bool narrow = false;
  const cs::TileSizes tile = cs::tile_sizes_of(candidate.params, "BMxBNxBK/sS");
  narrow = a_streams_through_l2(shape, machine) && tile.block_k == 64 &&
           std::any_of(weighed.begin(), weighed.end(), [&](const Candidate& other) {
             const cs::TileSizes twin = cs::tile_sizes_of(other.params, "BMxBNxBK/sS");
             return twin.block_m == tile.block_m && twin.block_n == tile.block_n && twin.block_k == 128;
           });
  return narrow;
}

/// Keeps the candidates that meet @p preference, where any does (else all of them).
template <typename Preference>
void prefer(std::vector<Candidate>& candidates, Preference&& preference) {
  std::vector<Candidate> kept;
  std::copy_if(candidates.begin(), candidates.end(), std::back_inserter(kept), preference);
  if (!kept.empty()) candidates = kept;
}

/// The rule: the candidate `--params` forces, or every one narrowed by the rule's preferences in
/// turn (tiles that do not overhang C; where A is larger than the L2, one column of tiles, and of a
/// tile in buffers of 64 and of 128 columns of K the one of 128; where the L2 needs pairs and
/// `--cluster` is auto, tiles the rule puts in pairs there: alone, rows read across lines ask the L2
/// for twice the lines, which the estimate does not count), only what pairs take for `--cluster 2`
/// and 64-row tiles for `--neighbours yes`; split and whole (or as `--split` forces), each on
/// neighbouring blocks as @p neighbours says, sorted by estimate and of equal ones the least products
/// first: the first is the choice.
std::vector<Estimate> rank(const std::string& params, const std::string& split, const std::string& cluster,
                           const std::string& neighbours, const cs::MatmulShape& shape,
                           const Machine& machine) {
  const auto paired = [](const Candidate& candidate) {
    return pairs_take(cs::tile_sizes_of(candidate.params, "BMxBNxBK/sS"));
  };
  const auto short_rows = [](const Candidate& candidate) {
    return cs::tile_sizes_of(candidate.params, "BMxBNxBK/sS").block_m == 64;
  };
  std::vector<Candidate> candidates;
  for (const Candidate& candidate : kCandidates)
    if ((params == "auto" || params == candidate.params) && (cluster != "2" || paired(candidate)) &&
        (neighbours != "yes" || short_rows(candidate)))
      candidates.push_back(candidate);
  if (params == "auto") {
    prefer(candidates, [&](const Candidate& candidate) { return !overhangs(candidate, shape); });
    if (a_streams_through_l2(shape, machine))
      prefer(candidates, [&](const Candidate& candidate) { return spans_columns(candidate, shape); });
    const std::vector<Candidate> weighed = candidates;
    prefer(candidates, [&](const Candidate& candidate) {
      return !keeps_narrow_buffers(candidate, weighed, shape, machine);
    });
    if (cluster == "auto" && l2_needs_pairs(shape))
      prefer(candidates, [&](const Candidate& candidate) {
        return cluster_for(cs::tile_sizes_of(candidate.params, "BMxBNxBK/sS"), shape, cluster,
                           machine.l2_bytes) == 2;
      });
  }
  if (candidates.empty()) candidates.push_back({params.c_str(), 0.69, 4.2}); // none: refused below
  std::vector<Estimate> estimates;
  for (const Candidate& candidate : candidates)
    for (const char* way : {"never", "always"})
      if (split == "auto" || split == way)
        estimates.push_back(estimate(candidate, way, cluster, neighbours, shape, machine));
  // Where the bytes bound several alike, the one whose products leave the most room beside them.
  std::stable_sort(estimates.begin(), estimates.end(), [](const Estimate& a, const Estimate& b) {
    return a.time_us() != b.time_us() ? a.time_us() < b.time_us() : a.products_us < b.products_us;
  });
  return estimates;
}

/// The shared memory a block may have on compute capability 9.0: 227 KB.
constexpr int kSharedLimit = 227 * 1024;
/// Staging buffers of C (64 x 32 floats each) per consumer warpgroup beside a ring of @p ring_bytes,
/// for @p consumers warpgroups: two, so that one piece is written while the TMA reads the one
/// before, or one where two would pass kSharedLimit (with the 1024 bytes of alignment).
__host__ __device__ constexpr int staging_buffers(int ring_bytes, int consumers) {
  return ring_bytes + consumers * 2 * 64 * 32 * 4 + 1024 > kSharedLimit ? 1 : 2;
}

/// C = A·B (A m×k, B k×n, bf16; C m×n, FP32; row-major) in stage 19's persistent grid, in clusters of
/// kCluster blocks that take a unit of kCluster tiles one above the other (block r of the cluster the
/// r-th), the last round's units split along K: cluster c of G takes the whole units c, c + G, ...
/// below @p whole_tiles, then piece c % @p parts of unit whole_tiles + c / parts; a later piece's sums go to
/// the block's slot of @p partials and raise its warps' flags in @p arrived (zero before the launch and left
/// zero after it), and the first piece's block adds them and stores the tile: through staging_buffers() per
/// consumer warpgroup and TMA stores to @p c_map, behind the next tile's products, where rows are 16-byte
/// aligned, else each warp its 16 rows through its own part of them, a row per store (chapter 22). With
/// kNeighbours, a pair of neighbouring blocks 2c and 2c + 1 takes the units as a cluster does. The blocks
/// must all run at once: the grid is at most one block per SM,
/// the tiles of C taken in groups of kGroupRows rows; no block barrier after the barriers are set
/// up, and only the stores to C are guarded; sizes and offsets are 64-bit whatever the problem.
///
/// @tparam kBlockM rows of C per block, 64 per consumer warpgroup.
/// @tparam kBlockN columns of C per block: the N of each wgmma (64, 128, 192 or 256).
/// @tparam kBlockK columns of K a buffer holds (64 or 128): A in boxes of 64 columns (a row of each is
///         128 bytes, the swizzle's width), B's stripes kBlockK rows tall.
/// @tparam kStages buffers in the ring: the producer may fill every buffer the consumers have freed.
/// @tparam kAligned every row of A, B and C starts on a 16-byte boundary (cs::rows_are_16_byte_aligned,
///         checked by the host before the launch): C leaves through @p c_map and the TMA; otherwise
///         a row of a warp's piece at a time (store_rows).
/// @tparam kCluster blocks in a cluster (1 or 2): each copies its A tile and every kCluster-th stripe
///         of the B tile (of three stripes, the first block two), which the TMA lands in every block
///         of the cluster.
/// @tparam kNeighbours a unit is two tiles side by side, one row of C's tiles, and blocks 2c and 2c + 1
///         take them, the left and the right: the two blocks that read the unit's rows of A are
///         neighbours. Not a cluster: each block copies its own tiles (kCluster is 1).
template <int kBlockM, int kBlockN, int kBlockK, int kStages, bool kAligned, int kCluster = 1,
          bool kNeighbours = false>
__global__ void __launch_bounds__((kBlockM / 64 + 1) * 128, 1)
    matmul_wgmma(const __grid_constant__ CUtensorMap a_map, const __grid_constant__ CUtensorMap b_map,
                 const __grid_constant__ CUtensorMap c_map, float* c, std::int64_t m, std::int64_t n,
                 std::int64_t k, int whole_tiles, int parts, float* partials, int* arrived) {
  static_assert(kBlockM % 64 == 0, "a warpgroup's wgmma covers 64 rows");
  static_assert(kBlockK % 64 == 0 && kBlockN % 64 == 0, "swizzled rows are whole 128-byte stripes");
  static_assert(kStages >= 2, "a ring with a tile on its way besides the one being multiplied");
  static_assert(!kNeighbours || kCluster == 1, "neighbours are blocks alone, not a cluster");
  // Registers: the launch reserves the same number for every thread; the producer gives all but 40
  // back, the consumers share them out.
  constexpr int kConsumers = kBlockM / 64;
  constexpr int kProducerRegisters = 40;
  constexpr int kConsumerRegisters = cs::consumer_registers(kConsumers, kProducerRegisters);
  // The ring of kStages buffers, in dynamic shared memory from its first 1024-byte boundary (the
  // host asks for 1024 bytes more). Buffer s: the A tile, kBlockK / 64 boxes of kBlockM rows of 64
  // bf16, then the B tile, kBlockN / 64 stripes of kBlockK rows of 64 bf16; in every 8 rows of 128
  // bytes, chunk c of row r is kept at chunk c XOR (r % 8), as the tensor map's 128-byte swizzle
  // writes them. Both tiles are multiples of 1024 bytes, so every tile starts on a 1024-byte boundary.
  constexpr int kTileAElements = kBlockM * kBlockK;
  constexpr int kStageElements = kTileAElements + kBlockK * kBlockN;
  constexpr int kStageBytes = kStageElements * static_cast<int>(sizeof(bf16)); // what lands per tile
  extern __shared__ float4 shared_quads[];
  const unsigned shared_start = static_cast<unsigned>(__cvta_generic_to_shared(shared_quads));
  bf16* const shared =
      reinterpret_cast<bf16*>(reinterpret_cast<char*>(shared_quads) + (-shared_start & 1023));
  // After the ring, kStaging staging buffers per consumer warpgroup (two, or one where two do not fit
  // beside the ring), each a piece of C of 64 rows x 32 FP32 columns (8 KB: 128-byte rows, swizzled
  // as A's tiles are), 1024-byte aligned.
  constexpr int kPieceFloats = 64 * 32;
  constexpr int kStaging = staging_buffers(kStages * kStageBytes, kConsumers);
  float* const staging = reinterpret_cast<float*>(shared + kStages * kStageElements);
  // Two mbarriers per buffer: phase j of landed[s] completes when the (j + 1)-th tile copied into
  // buffer s has landed whole; phase j of freed[s] when every consumer warp is done with it.
  __shared__ std::uint64_t landed[kStages];
  __shared__ std::uint64_t freed[kStages];

  // The units of work: kCluster tiles one above the other, so that the blocks of a cluster need the
  // same B tile, or, for neighbours, two tiles side by side, so that the pair's blocks read the same
  // rows of A; unit u lies in row first_row + in_group % rows_in_group and column
  // in_group / rows_in_group of the units (the last group may have fewer rows). take_tile(u) points
  // block_row and block_col, which the copies and the stores read, at this block's tile of unit u:
  // the rank-th from the top, or from the left (past C's last row or column where C has too few:
  // zeros in, nothing out).
  constexpr int kUnit = kNeighbours ? 2 : kCluster; // tiles a unit, blocks that take it
  const int rank = kNeighbours    ? static_cast<int>(blockIdx.x % 2)
                   : kCluster > 1 ? static_cast<int>(cs::rank_in_cluster())
                                  : 0;
  const int cluster = blockIdx.x / kUnit, clusters = gridDim.x / kUnit;
  const int blocks_n = static_cast<int>((n + kBlockN - 1) / kBlockN);
  const int unit_rows = static_cast<int>(((m + kBlockM - 1) / kBlockM + kCluster - 1) / kCluster);
  const int unit_cols = (blocks_n + kUnit / kCluster - 1) / (kUnit / kCluster);
  const int tiles = unit_rows * unit_cols; // units, a tile each where kUnit is 1
  std::int64_t block_row = 0, block_col = 0;
  const auto take_tile = [&](int tile) {
    const int blocks_per_group = kGroupRows * unit_cols;
    const int group = tile / blocks_per_group;
    const int first_row = group * kGroupRows;
    const int rows_in_group = min(unit_rows - first_row, kGroupRows);
    const int in_group = tile - group * blocks_per_group;
    const std::int64_t unit_row = first_row + in_group % rows_in_group, unit_col = in_group / rows_in_group;
    block_row = (kNeighbours ? unit_row : unit_row * kCluster + rank) * kBlockM;
    block_col = (kNeighbours ? unit_col * 2 + rank : unit_col) * kBlockN;
  };
  // The cluster's work, piece by piece: for_each_piece(work) calls work(unit, k_begin, k_end) for
  // k-tiles k_begin .. k_end - 1 of each unit it takes, in order. First the whole units c, c + G,
  // ... below whole_tiles, as stage 19 took tiles; then, in the last round, piece c % parts of unit
  // whole_tiles + c / parts: its k-tiles from k_tiles·p / parts to k_tiles·(p + 1) / parts (the host
  // makes parts at most k_tiles, so no piece is empty). Clusters past the last piece have none.
  const int k_tiles = static_cast<int>((k + kBlockK - 1) / kBlockK);
  const auto for_each_piece = [&](auto&& work) {
    for (int tile = cluster; tile < whole_tiles; tile += clusters) work(tile, 0, k_tiles);
    if (cluster < (tiles - whole_tiles) * parts) {
      const int piece = cluster % parts;
      work(whole_tiles + cluster / parts, k_tiles * piece / parts, k_tiles * (piece + 1) / parts);
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
  // Thread 0 sets up the barriers (landed: one arrival, the copier's; freed: one per consumer warp of
  // the cluster, whose copies all land in this block's buffers) and makes them visible to the
  // copies; the cluster's barrier then waits for every block's, before any copy or arrival reaches
  // them from another block.
  const bool copier = threadIdx.x == 0;
  if (copier) {
    for (int s = 0; s < kStages; ++s) {
      cs::init_barrier(&landed[s], 1); // mbarrier.init
      cs::init_barrier(&freed[s], kConsumers * 4 * kCluster);
    }
    cs::fence_barrier_init(); // fence.mbarrier_init
  }
  if constexpr (kCluster > 1)
    cs::sync_cluster(); // barrier.cluster.arrive, barrier.cluster.wait
  else
    __syncthreads();

  // Thread 0 only: starts copying the k-tile at k_tile into buffer `stage`: the bytes to expect (the
  // whole buffer's), then the A tile (columns k_tile .. k_tile + kBlockK - 1 of its rows, a box of 64
  // columns at a time) and each stripe of the B tile (rows k_tile .. k_tile + kBlockK - 1, 64 columns
  // each), zeros where they reach past A or B. In a cluster,
  // stripes rank, rank + kCluster, ... only, each into every block of the cluster: the barrier
  // still expects the whole B tile, the other blocks' stripes counted as they land.
  const auto copy_tile = [&](int k_tile, int stage) {
    bf16* const tile_a = shared + stage * kStageElements;
    bf16* const tile_b = tile_a + kTileAElements;
    cs::arrive_expecting(&landed[stage], kStageBytes); // mbarrier.arrive.expect_tx
#pragma unroll
    for (int box = 0; box < kBlockK / 64; ++box) { // cp.async.bulk.tensor: 64 columns of A at a time
      cs::copy_box(tile_a + box * kBlockM * 64, a_map, k_tile + 64 * box, static_cast<int>(block_row),
                   &landed[stage]);
    }
#pragma unroll
    for (int stripe = 0; stripe < kBlockN / 64; ++stripe) {
      if constexpr (kCluster == 1)
        cs::copy_box(tile_b + stripe * kBlockK * 64, b_map, static_cast<int>(block_col) + stripe * 64, k_tile,
                     &landed[stage]);
      else if (stripe % kCluster == rank) // cp.async.bulk.tensor...multicast::cluster
        cs::copy_box_to_blocks(tile_b + stripe * kBlockK * 64, b_map,
                               static_cast<int>(block_col) + stripe * 64, k_tile, &landed[stage],
                               (1u << kCluster) - 1);
    }
  };

  float sums[kBlockN / 2]; // this lane's 2 x 2 elements of each 16 x 8 piece of the warp's 16 rows
  // Issues the products of the k-tile in buffer `stage`, 16 along K at a time, and commits them as
  // one group; they run on while the warpgroup goes on.
  const auto multiply_stage = [&](int stage) {
    // This warpgroup's 64 rows of the A tile (a whole number of 8-row groups: 1024-byte aligned).
    const bf16* const tile_a = shared + stage * kStageElements + warpgroup * 64 * 64;
    const bf16* const tile_b = shared + stage * kStageElements + kTileAElements;
    cs::fence_sums(); // wgmma.fence: the sums' registers are ready for the tensor cores
#pragma unroll
    for (int i = 0; i < kBlockK; i += 16) {
      // A: 64 rows from column i: box i / 64, 2·(i % 64) bytes into each 128-byte row; 8-row groups
      // 1024 bytes apart.
      // B: 16 rows from row i: 128·i bytes into each stripe; 8-row groups 1024 bytes apart, stripes
      // kBlockK rows of 128 bytes apart.
      const std::uint64_t a_tile = cs::matrix_descriptor(tile_a + i / 64 * kBlockM * 64 + i % 64, 16, 1024);
      const std::uint64_t b_tile = cs::matrix_descriptor(tile_b + i * 64, kBlockK * 128, 1024);
      cs::wgmma_64xNx16<kBlockN>(sums, a_tile, b_tile); // wgmma.mma_async.sync.aligned.m64nNk16
    }
    cs::commit_products(); // wgmma.commit_group
  };

  // Stores this warpgroup's sums without a tensor map of C, warp by warp: the warp's 16 rows of piece
  // p (columns 32p .. 32p + 31) go into its own 2 KB of staging buffer p % kStaging, swizzled as the
  // TMA's pieces (no bank conflicts), and come back a row at a time, lane i with column i: one
  // 128-byte store per row, of the rows and columns inside C. The warp reads only what it wrote:
  // __syncwarp orders its lanes' writes before their reads, and a piece's reads before the writes
  // of the next piece into the same buffer (two later; with one buffer, the next one).
  const auto store_rows = [&] {
    float* const mine = staging + warpgroup * kStaging * kPieceFloats + warp * 16 * 32;
    const std::int64_t first_row = block_row + warpgroup * 64 + warp * 16;
    // All 16 rows' loads at once, but 4 where four consumers leave each thread too few registers.
    constexpr int kRowsAtOnce = kConsumers > 2 ? 4 : 16;
#pragma unroll
    for (int piece = 0; piece < kBlockN / 32; ++piece) {
      float* const buffer = mine + (piece % kStaging) * kPieceFloats;
      if (kStaging == 1) __syncwarp(); // the piece before read back by every lane
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
  };
  // Hands this warpgroup's sums, its 64 rows of the tile at block_row, block_col, to the TMA, 32
  // columns at a time: piece p (columns 32p .. 32p + 31) goes into staging buffer p % kStaging,
  // written only once the TMA has read that buffer's piece before (kStaging pieces ago, or the last
  // tile's: with two buffers all stores but the newest read, with one every store); every
  // thread writes its pairs, fences, and after a barrier one thread issues the piece's store, a box
  // of 64 rows x 32 columns (the TMA drops what lies past C).
  const auto store_tile_by_tma = [&] {
    float* const mine = staging + warpgroup * kStaging * kPieceFloats;
    const int first_row = static_cast<int>(block_row) + warpgroup * 64,
              first_col = static_cast<int>(block_col);
    const bool issuer = threadIdx.x % 128 == 0;
#pragma unroll
    for (int piece = 0; piece < kBlockN / 32; ++piece) {
      float* const buffer = mine + (piece % kStaging) * kPieceFloats;
      // cp.async.bulk.wait_group.read: the store kStaging pieces ago has read this buffer.
      if (issuer) cs::wait_stores_read<kStaging - 1>();
      cs::sync_warpgroup(warpgroup); // bar.sync on the warpgroup's named barrier
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
      cs::fence_for_async_proxy(); // fence.proxy.async: the TMA reads what these stores wrote
      cs::sync_warpgroup(warpgroup);
      if (issuer) {
        cs::store_box(c_map, buffer, first_col + 32 * piece, first_row); // cp.async.bulk.tensor, to global
        cs::commit_stores();                                             // cp.async.bulk.commit_group
      }
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
    float4* const slot = slot_of(blockIdx.x);
#pragma unroll
    for (int j = 0; j < kBlockN / 8; ++j)
      slot[j * 32] = make_float4(sums[4 * j], sums[4 * j + 1], sums[4 * j + 2], sums[4 * j + 3]);
    __threadfence();
    __syncwarp();
    if (lane == 0) cs::raise_flag(&arrived[blockIdx.x * kConsumerWarps + consumer_warp], 1);
  };
  // The first piece of a split unit: the later ones are held by the next parts - 1 clusters (or pairs), this
  // tile's by their blocks of the same rank. For each in order, this warp waits for its
  // counterpart's flag, adds the slot to its sums and lowers the flag again for the next launch.
  const auto gather = [&] {
    for (int block = blockIdx.x + kUnit; block < static_cast<int>(blockIdx.x) + parts * kUnit;
         block += kUnit) {
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
  };

  // A consumer warp is done with buffer `stage` (lane 0 for the warp): it says so to every block of
  // the cluster, whose copies land in it (mbarrier.arrive on the barrier there).
  const auto free_buffer = [&](int stage) {
    if constexpr (kCluster == 1)
      cs::arrive(&freed[stage]); // mbarrier.arrive
    else
      for (int other = 0; other < kCluster; ++other) cs::arrive_in_block(&freed[stage], other);
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
    if constexpr (kCluster > 1) cs::sync_cluster(); // as every thread of the cluster does at the end
    return;
  }
  // A consumer: takes the registers the producer gave back, then walks the block's pieces and
  // their k-tiles in the producer's order.
  cs::claim_registers<kConsumerRegisters>(); // setmaxnreg.inc
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
      cs::wait_for_products<1>(); // wgmma.wait_group 1
      if (t > k_begin && lane == 0) free_buffer(previous);
      previous = stage;
      if (++stage == kStages) {
        stage = 0;
        phase ^= 1;
      }
    }
    // The last k-tile's products too, before the sums are read (pinned there, so that ptxas moves no
    // read of them above the wait and serializes no wgmma); then its buffer is free as well,
    // and the producer may fill it with the next piece's while this one is stored.
    cs::wait_for_products<0>();
    cs::pin_sums(sums);
    if (lane == 0) free_buffer(previous);
    if (k_begin > 0) return hand_over(); // a later piece of a split tile: its first piece stores it
    if (k_end < k_tiles) gather();       // the first piece of a split tile: add the later ones
    if constexpr (kAligned)
      store_tile_by_tma();
    else
      store_rows();
  });
  if (kAligned && threadIdx.x % 128 == 0) cs::wait_stores_done(); // the last pieces' stores, before the end
  // No block of a cluster leaves while the others may still arrive on its barriers.
  if constexpr (kCluster > 1) cs::sync_cluster();
}

/// The kernel's instances, one per `--params` set: for rows on 16-byte boundaries, and for the others.
/// The rule's candidates alone (stage 22's other four sets, which it never weighs, are left out: the
/// stage's compile waits for every instance): 128 x 256 in four buffers; 128 x 128 in six, the shared
/// memory that four leave unused; two of 64 rows (one consumer warpgroup) for short A, one of 64
/// columns for narrow C, and two of 64 x 64 for either (stage 25's in buffers of 128 columns of K);
/// tiles 192 columns wide, of 192 rows in four buffers (one staging buffer per consumer warpgroup) and
/// of 128 rows in four; and 64 x 128 in four buffers of 128 columns of K, for A that streams through
/// the L2.
const cs::KernelTable<void (*)(CUtensorMap, CUtensorMap, CUtensorMap, float*, std::int64_t, std::int64_t,
                               std::int64_t, int, int, float*, int*)>
    kKernels = {
        {"128x256x64/s4", matmul_wgmma<128, 256, 64, 4, true>, matmul_wgmma<128, 256, 64, 4, false>},
        {"128x128x64/s6", matmul_wgmma<128, 128, 64, 6, true>, matmul_wgmma<128, 128, 64, 6, false>},
        {"64x256x64/s5", matmul_wgmma<64, 256, 64, 5, true>, matmul_wgmma<64, 256, 64, 5, false>},
        {"64x128x64/s8", matmul_wgmma<64, 128, 64, 8, true>, matmul_wgmma<64, 128, 64, 8, false>},
        {"64x128x128/s4", matmul_wgmma<64, 128, 128, 4, true>, matmul_wgmma<64, 128, 128, 4, false>},
        {"128x64x64/s8", matmul_wgmma<128, 64, 64, 8, true>, matmul_wgmma<128, 64, 64, 8, false>},
        {"64x64x64/s8", matmul_wgmma<64, 64, 64, 8, true>, matmul_wgmma<64, 64, 64, 8, false>},
        {"64x64x128/s6", matmul_wgmma<64, 64, 128, 6, true>, matmul_wgmma<64, 64, 128, 6, false>},
        {"192x192x64/s4", matmul_wgmma<192, 192, 64, 4, true>, matmul_wgmma<192, 192, 64, 4, false>},
        {"128x192x64/s4", matmul_wgmma<128, 192, 64, 4, true>, matmul_wgmma<128, 192, 64, 4, false>},
};
/// The instances in clusters of two: the rule's candidates that pairs take.
const decltype(kKernels) kPairKernels = {
    {"128x256x64/s4", matmul_wgmma<128, 256, 64, 4, true, 2>, matmul_wgmma<128, 256, 64, 4, false, 2>},
    {"64x128x64/s8", matmul_wgmma<64, 128, 64, 8, true, 2>, matmul_wgmma<64, 128, 64, 8, false, 2>},
    {"64x128x128/s4", matmul_wgmma<64, 128, 128, 4, true, 2>, matmul_wgmma<64, 128, 128, 4, false, 2>},
    {"192x192x64/s4", matmul_wgmma<192, 192, 64, 4, true, 2>, matmul_wgmma<192, 192, 64, 4, false, 2>},
    {"128x192x64/s4", matmul_wgmma<128, 192, 64, 4, true, 2>, matmul_wgmma<128, 192, 64, 4, false, 2>},
};
/// The instances on neighbouring blocks: the rule's candidates of 64 rows.
const decltype(kKernels) kNeighbourKernels = {
    {"64x256x64/s5", matmul_wgmma<64, 256, 64, 5, true, 1, true>,
     matmul_wgmma<64, 256, 64, 5, false, 1, true>},
    {"64x128x64/s8", matmul_wgmma<64, 128, 64, 8, true, 1, true>,
     matmul_wgmma<64, 128, 64, 8, false, 1, true>},
    {"64x128x128/s4", matmul_wgmma<64, 128, 128, 4, true, 1, true>,
     matmul_wgmma<64, 128, 128, 4, false, 1, true>},
    {"64x64x64/s8", matmul_wgmma<64, 64, 64, 8, true, 1, true>, matmul_wgmma<64, 64, 64, 8, false, 1, true>},
    {"64x64x128/s6", matmul_wgmma<64, 64, 128, 6, true, 1, true>,
     matmul_wgmma<64, 64, 128, 6, false, 1, true>},
};

/// The stage's own options.
struct StageOptions {
  std::string params = "auto";     ///< `--params`: block tile, buffers; auto: the rule's choice
  int blocks = 0;                  ///< `--blocks`: blocks in the grid, 0: one per SM
  std::string split = "auto";      ///< `--split`: whether tiles are split along K; auto: the rule's choice
  std::string cluster = "auto";    ///< `--cluster`: blocks per cluster, 1 or 2; auto: the rule's choice
  std::string neighbours = "auto"; ///< `--neighbours`: a row's tiles on neighbouring blocks; auto: the rule's
};

/// What `--cluster 2` takes.
const std::string kPairsOnly =
    "--cluster 2 takes --params auto, 192x192x64/s4, 128x256x64/s4, 128x192x64/s4, 64x128x64/s8 or "
    "64x128x128/s4, got ";
/// What `--neighbours yes` takes.
const std::string kNeighboursOnly =
    "--neighbours yes takes --cluster auto or 1 and --params auto or a tile of 64 rows (64x256x64/s5, "
    "64x128x64/s8, 64x128x128/s4, 64x64x64/s8, 64x64x128/s6), got ";

/// Declares `--params` on @p cli, the parameter sets the kernel is instantiated for, `--blocks`,
/// `--split`, `--cluster` and `--neighbours`.
void add_stage_options(cs::CommandLine& cli, StageOptions& options) {
  cli.add_int("blocks", &options.blocks, 0, 65535,
              "blocks in the persistent grid, at most one per SM (the blocks wait for each other); 0: one "
              "per SM of the GPU");
  cli.add_choice("split", &options.split, {"auto", "always", "never"},
                 "split the tiles of the last round along K among the blocks: as the rule finds faster, "
                 "wherever the round leaves blocks idle, or never");
  cli.add_choice("cluster", &options.cluster, {"auto", "1", "2"},
                 "blocks per cluster, sharing their B tiles (2: 192 x 192, 128 x 256, 128 x 192 and 64 x 128 "
                 "tiles only); auto: 2 where A's or B's rows are read across 128-byte lines and C has two "
                 "rows of tiles, or 64-row tiles where B outgrows the L2 and C has two rows of them, else 1");
  cli.add_choice(
      "neighbours", &options.neighbours, {"auto", "yes", "no"},
      "a row's tiles two at a time on neighbouring blocks 2u and 2u + 1 (64-row tiles alone); auto: "
      "where A is the larger input and C has two columns of tiles or more, so that two blocks read "
      "each row of A");
  std::vector<std::string> sets = kKernels.params();
  sets.insert(sets.begin(), "auto");
  cli.add_choice("params", &options.params, sets,
                 "block tile of C (rows x columns) x step along K / shared-memory buffers in the ring "
                 "(a warpgroup per 64 rows); auto: the one the rule estimates fastest for the problem");
}

/// The dynamic shared memory of a block of @p tile: the ring, S buffers of an A tile and a B tile,
/// bf16, swizzled by the TMA; then staging_buffers() of 64 x 32 floats per consumer warpgroup; 1024
/// bytes more, to start on a 1024-byte boundary.
std::size_t shared_bytes_of(const cs::TileSizes& tile) {
  const int buffer_bytes =
      static_cast<int>(sizeof(bf16)) * (tile.block_m * tile.block_k + tile.block_k * tile.block_n);
  const int consumers = tile.block_m / 64;
  const int staging_bytes = consumers * staging_buffers(tile.stages * buffer_bytes, consumers) * 64 * 32 * 4;
  return static_cast<std::size_t>(tile.stages * buffer_bytes + staging_bytes + 1024);
}

/// Plans the launch: the rule's instance, schedule, cluster and neighbours (or those forced), then
/// stage 22's persistent 1-D grid of at most one block per SM, of BM / 64 + 1 warpgroups, in clusters
/// of two where the rule pairs the tiles, an even number of blocks where a row's tiles go to neighbours.
cs::Bf16MatmulLaunch plan_launch(const StageOptions& options, const cs::MatmulShape& shape) {
  Machine machine = machine_of();
  if (machine.from_gpu) { // how many pairs fit: a GPC's odd SM takes none (the largest block of a pair)
    const cs::TileSizes pair_tile = cs::tile_sizes_of("192x192x64/s4", "BMxBNxBK/sS");
    machine.pairs = cs::clusters_at_once(kPairKernels.find("192x192x64/s4", true), dim3(4 * 128),
                                         shared_bytes_of(pair_tile), 2);
  }
  if (options.blocks > 0) machine.sms = std::min(options.blocks, machine.sms);
  // One block makes no pair: it runs alone, and --cluster 2 is refused.
  if (machine.sms < 2 && options.cluster == "2")
    throw cs::UsageError("--cluster 2 takes two blocks or more: --blocks 0 or 2 to 65535, got 1");
  const std::string cluster_option = machine.sms < 2 ? "1" : options.cluster;
  if (machine.sms < 2 && options.neighbours == "yes")
    throw cs::UsageError("--neighbours yes takes two blocks or more: --blocks 0 or 2 to 65535, got 1");
  const std::string neighbours_option = machine.sms < 2 ? "no" : options.neighbours;
  const std::vector<Estimate> ranked =
      rank(options.params, options.split, cluster_option, neighbours_option, shape, machine);
  if (ranked.empty() ||
      (ranked.front().cluster == 2 && kPairKernels.find(ranked.front().params, true) == nullptr))
    throw cs::UsageError(kPairsOnly + options.params);
  if (ranked.front().neighbours && ranked.front().cluster == 2)
    throw cs::UsageError(kNeighboursOnly + "--cluster " + options.cluster);
  if (ranked.front().neighbours && kNeighbourKernels.find(ranked.front().params, true) == nullptr)
    throw cs::UsageError(kNeighboursOnly + "--params " + options.params);
  const Estimate& chosen = ranked.front();
  const std::string params = chosen.params;
  const cs::TileSizes tile = chosen.tile;
  const std::int64_t tiles = chosen.tiles;
  cs::grid_of(tiles); // the kernel counts tiles in an int
  const cs::Schedule schedule = chosen.schedule;
  const int cluster = chosen.cluster;
  const bool neighbours = chosen.neighbours;
  const int unit = neighbours ? 2 : cluster; // blocks that take a unit
  const dim3 grid = cs::grid_of(schedule.blocks * unit);
  const int warpgroups = tile.block_m / 64 + 1; // the consumers and the producer
  const dim3 block(static_cast<unsigned>(warpgroups * 128));
  const std::size_t shared_bytes = shared_bytes_of(tile);
  cs::Bf16MatmulLaunch launch;
  launch.name = "tiles_" + params + (schedule.parts > 1 ? "+split" : "") + (cluster > 1 ? "+pairs" : "") +
                (neighbours ? "+neighbours" : "");
  launch.what = "stage 27's kernel, a row's two tiles on neighbouring blocks where the rule takes them";
  launch.grid = grid;
  launch.block = block;
  launch.shared_bytes = shared_bytes + 2 * tile.stages * sizeof(std::uint64_t); // and the barriers
  // The plan's notes: the machine, every way the rule weighed (the chosen one first), the schedule.
  const auto us = [](double value) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1f", value);
    return std::string(text);
  };
  launch.notes = {"the rule plans for " + std::to_string(machine.sms) + " SMs, " +
                  us(machine.sm_flops_per_us / 1e6) + " TFLOP/s of bf16 products per SM at its peak and " +
                  us(machine.bytes_per_us / 1e6) + " TB/s of copies, " + std::to_string(machine.pairs) +
                  " clusters of two at once (" + machine.source + ")"};
  if (options.params == "auto" && a_streams_through_l2(shape, machine) &&
      std::any_of(std::begin(kCandidates), std::end(kCandidates),
                  [&](const Candidate& candidate) { return spans_columns(candidate, shape); }))
    launch.notes.push_back("A (" + us(2e-6 * shape.m * shape.k) + " MB) is larger than the L2 (" +
                           us(machine.l2_bytes / 1e6) + " MB): only tiles that span C's " +
                           std::to_string(shape.n) + " columns are weighed");
  if (options.params == "auto" && a_streams_through_l2(shape, machine))
    for (const Estimate& e : ranked)
      if (e.tile.block_k == 128 && e.split == ranked.front().split)
        launch.notes.push_back("A is larger than the L2: " + e.params +
                               " is weighed, its twin in buffers of 64 columns of K is not");
  for (const Estimate& e : ranked)
    launch.notes.push_back(
        (&e == &chosen ? "chosen: " : "weighed: ") + e.params + ", split " + e.split +
        (e.cluster > 1 ? ", in pairs (" + std::to_string(e.units) + " pairs)" : "") +
        (e.neighbours ? ", on neighbours (" + std::to_string(e.units) + " pairs)" : "") + ": " +
        std::to_string(e.tiles) + " tiles of " + std::to_string(e.k_tiles) + " k-tiles, at most " +
        std::to_string(e.schedule.most_k_tiles) + " k-tiles a block; products " + us(e.products_us) +
        " us, bytes " + us(e.bytes_us) + " us, edges " + us(e.edges_us) + " us: " + us(e.time_us()) + " us");
  const std::int64_t clusters = cluster > 1 ? std::min(machine.pairs, machine.sms / 2) : machine.sms / unit;
  launch.notes.push_back(cs::schedule_note(schedule, chosen.units, chosen.k_tiles, clusters, chosen.split,
                                           tile.block_m * cluster, tile.block_n * (neighbours ? 2 : 1)));
  launch.notes.push_back(
      cluster > 1
          ? "in clusters of two: each \"block\" above is a pair of blocks, each \"tile\" the two tiles one "
            "above the other that they take, block r of the pair the r-th; each copies its A tile and "
            "every other stripe of the B tile (of three, the first block two), landing in both"
      : neighbours ? "on neighbours: each \"block\" above is a pair of blocks 2u and 2u + 1, each \"tile\" a "
                     "row's two "
                     "tiles side by side, the left to block 2u and the right to 2u + 1, which read the same "
                     "rows of A; "
                     "every block alone (a cluster of one), its own copies of A and B"
                   : "every block alone (a cluster of one): its own copies of A and B");
  launch.notes.push_back(cs::input_maps_note(shape, true));
  launch.index_width_from_host = false;
  // The padded copies of A and B, where their rows need them: allocated at the first run, kept.
  const auto padded = std::make_shared<cs::PaddedInputs>();
  // The scratch buffer and the flags for split tiles, when the schedule splits any.
  const auto scratch = std::make_shared<cs::SplitScratch>();
  const std::size_t partial_count = schedule.whole_tiles < chosen.units
                                        ? static_cast<std::size_t>(grid.x) * tile.block_m * tile.block_n
                                        : 0;
  const std::size_t flag_count = static_cast<std::size_t>(grid.x) * tile.block_m / 64 * 4;
  const int whole_tiles = static_cast<int>(schedule.whole_tiles), parts = static_cast<int>(schedule.parts);
  launch.run = [=](const cs::Bf16MatmulArgs& p) {
    scratch->reserve(partial_count, flag_count);
    // Tensor maps of A in boxes of BM rows x 64 columns and of B in boxes of BK rows x 64, of each where
    // it is wherever the TMA can read its rows (tma_inputs.cuh).
    const cs::InputMaps maps = cs::input_maps(p, tile.block_m, tile.block_k, *padded, true);
    // And of C for the TMA's stores, where its rows allow one (tma_inputs.cuh).
    const bool aligned = cs::rows_are_16_byte_aligned(p);
    const CUtensorMap c_map = aligned ? cs::c_store_map(p.c, p.m, p.n) : CUtensorMap{};
    const auto kernel = cluster > 1  ? kPairKernels.find(params, aligned)
                        : neighbours ? kNeighbourKernels.find(params, aligned)
                                     : kKernels.find(params, aligned);
    cs::launch_in_clusters(kernel, grid, block, shared_bytes, cluster, maps.a, maps.b, c_map, p.c, p.m, p.n,
                           p.k, whole_tiles, parts, scratch->partials(), scratch->flags());
  };
  return launch;
}

} // namespace stage28

/// Hands the kernel's launch and the stage's option to the host flow every matmul stage shares, as
/// a bf16 stage: bf16 A and B, FP32 C, compute capability 9.0 exactly (sm_90a code).
int main(int argc, char** argv) {
  stage28::StageOptions options;
  return cs::run_matmul_stage(
      cs::Bf16MatmulStage{"28_row_neighbours",
                          "C = A*B on the GPU's tensor cores with stage 27's kernel and rule, a row's two "
                          "tiles on neighbouring "
                          "blocks where A is the larger input and two blocks read each of its rows.",
                          [&](cs::CommandLine& cli) { stage28::add_stage_options(cli, options); },
                          [&](const cs::MatmulShape& shape) { return stage28::plan_launch(options, shape); },
                          90, "wgmma and TMA, in sm_90a code", true},
      argc, argv);
}
