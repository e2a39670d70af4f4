// 05_transpose: from strided writes to a conflict-free shared-memory tile, at copy speed.
//
// A transpose does no arithmetic: every float is read once and written once, so the only
// question is how close it gets to the speed of copying the same bytes. The naive kernel reads
// rows (coalesced) and writes columns (strided). Staging a tile in shared memory makes both
// sides coalesced, but reading a column of the tile hits one shared-memory bank 32 times until
// one padding column spreads it over all 32. Last, a tile of 64 input rows with eight elements
// per thread writes each output row in 256-byte pieces and keeps enough loads in flight to come
// close to the device-to-device cudaMemcpy beside it.
//
// The variants (the table kVariants below), each with the command that runs it beside the
// memcpy yardstick; with no --kernel all of them run, at 8192 x 8192:
//   memcpy        the driver's device-to-device copy: the yardstick   05_transpose
//   copy          32 x 32 threads, one element each, no transpose       05_transpose --kernel copy
//   copy_32x8     32 x 8 threads, four elements each, no transpose      05_transpose --kernel copy_32x8
//   naive         reads rows, writes columns                            05_transpose --kernel naive
//   tiled         a 32 x 32 shared tile: 32-way bank conflicts          05_transpose --kernel tiled
//   tiled_padded  a 32 x 33 shared tile: no bank conflicts              05_transpose --kernel tiled_padded
//   padded_64x32  a 64 x 33 tile, 32 x 8 threads, eight elements each   05_transpose --kernel padded_64x32
// --plan prints each variant's grid, block, shared memory and accesses per element, and exits
// without touching a GPU.
/// @file
/// @brief Stage 05: transposes from naive to a padded shared tile (chapter: 05_transpose/README.md).
#include "cli.hpp"
#include "cuda_check.cuh"
#include "device_info.cuh"
#include "exit_codes.hpp"
#include "gpu_timer.cuh"
#include "matrix.hpp"
#include "report.hpp"
#include "verify.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

/// Edge of the square tile each block moves: 32 floats, one warp across, one float per
/// shared-memory bank.
constexpr int kTile = 32;
/// Thread rows of the blocks that sweep a tile: 32 x 8 threads cover the 32 x 32 tile in 4 passes.
constexpr int kSweepRows = 8;
/// Elements each thread of a sweeping block moves in a kTile x kTile tile.
constexpr int kElementsPerThread = kTile / kSweepRows;
static_assert(kTile % kSweepRows == 0, "the sweep must cover the tile in whole passes");
/// Input rows of the last kernel's tile (its columns are kTile): 64, so that each row the tile
/// becomes in the output is 64 floats, 256 bytes, long.
constexpr int kTallTileRows = 64;
/// kTile-row halves of the tall tile: the store side turns one half, one warp wide, at a time.
constexpr int kTallTileHalves = kTallTileRows / kTile;
/// Elements each of the kTile x kSweepRows threads moves in the tall tile: 64 x 32 / 256 = 8.
constexpr int kTallElementsPerThread = kTallTileRows / kSweepRows;
static_assert(kTallTileRows % kTile == 0, "the tall tile must be whole kTile-row halves");
static_assert(kTallTileRows % kSweepRows == 0 && kTile % kSweepRows == 0,
              "the sweep must cover the tall tile in whole passes, both ways");

// ---------------------------------------------------------------------------------------------
// 1. The ceiling: copy the matrix with the same tiling, no transpose.
// ---------------------------------------------------------------------------------------------

/// Copies @p in to @p out (both @p height x @p width, row-major), one element per thread, with
/// kTile x kTile threads per block. A warp reads and writes 32 consecutive floats: 128 bytes,
/// both sides coalesced. Whatever the transposing kernels lose against this is the transpose's
/// fault.
__global__ void copy_one_per_thread(const float* __restrict__ in, float* __restrict__ out, int width,
                                    int height) {
  const int col = blockIdx.x * kTile + threadIdx.x;
  const int row = blockIdx.y * kTile + threadIdx.y;
  if (col < width && row < height) {
    const std::int64_t index = static_cast<std::int64_t>(row) * width + col; // can pass 2^31
    out[index] = in[index];
  }
}

/// The same copy with kTile x kSweepRows threads per block, each moving kElementsPerThread
/// elements of one column of the tile: all of its loads are issued before its first store, so
/// four loads per thread are in flight at once: more work per thread, without the transpose.
__global__ void copy_four_per_thread(const float* __restrict__ in, float* __restrict__ out, int width,
                                     int height) {
  const int col = blockIdx.x * kTile + threadIdx.x;
  const int first_row = blockIdx.y * kTile + threadIdx.y;
  float values[kElementsPerThread] = {};
#pragma unroll
  for (int pass = 0; pass < kElementsPerThread; ++pass) {
    const int row = first_row + pass * kSweepRows;
    if (col < width && row < height) values[pass] = in[static_cast<std::int64_t>(row) * width + col];
  }
#pragma unroll
  for (int pass = 0; pass < kElementsPerThread; ++pass) {
    const int row = first_row + pass * kSweepRows;
    if (col < width && row < height) out[static_cast<std::int64_t>(row) * width + col] = values[pass];
  }
}

// ---------------------------------------------------------------------------------------------
// 2. Naive: in[row][col] goes straight to out[col][row].
// ---------------------------------------------------------------------------------------------

/// Transposes @p in (@p height x @p width) into @p out (@p width x @p height), one element per
/// thread. A warp reads 32 neighbours of one input row (one 128-byte line) but writes them to 32
/// different output rows, @p height floats apart: 32 separate memory transactions per store.
__global__ void transpose_naive(const float* __restrict__ in, float* __restrict__ out, int width,
                                int height) {
  const int col = blockIdx.x * kTile + threadIdx.x;
  const int row = blockIdx.y * kTile + threadIdx.y;
  if (col < width && row < height)
    out[static_cast<std::int64_t>(col) * height + row] = in[static_cast<std::int64_t>(row) * width + col];
}

// ---------------------------------------------------------------------------------------------
// 3 and 4. Through a shared-memory tile: unpadded (kPadding 0), then padded (kPadding 1).
// ---------------------------------------------------------------------------------------------

/// Transposes through a kTile x (kTile + @p kPadding) shared tile, one element per thread,
/// kTile x kTile threads per block. Block (bx, by) reads input tile (by, bx) row by row and
/// writes it as output tile (bx, by), again row by row: coalesced on both sides. The turn
/// happens in shared memory, where each warp reads a *column* of the tile. With kPadding 0 the
/// 32 floats of a column are 32 floats apart and all sit in one bank (a 32-way conflict, the
/// warp's read is replayed 32 times); with kPadding 1 they are 33 apart and fall in 32
/// different banks.
template <int kPadding>
__global__ void transpose_tiled(const float* __restrict__ in, float* __restrict__ out, int width,
                                int height) {
  // LAB 05.tiled: a kTile x (kTile + kPadding) shared tile: load rows of the input, barrier, store it turned
  __shared__ float tile[kTile][kTile + kPadding];

  // Each thread loads one element of the input tile; a warp loads one row of it.
  const int in_col = blockIdx.x * kTile + threadIdx.x;
  const int in_row = blockIdx.y * kTile + threadIdx.y;
  if (in_col < width && in_row < height)
    tile[threadIdx.y][threadIdx.x] = in[static_cast<std::int64_t>(in_row) * width + in_col];

  // Every thread reaches the barrier, edge blocks included: it is outside both ifs.
  __syncthreads();

  // The output tile (bx, by): threadIdx.x now runs along an output row, i.e. down an input
  // column, so the warp reads tile column threadIdx.y. The guard uses the *output* coordinates;
  // it admits exactly the elements the load above stored.
  const int out_col = blockIdx.y * kTile + threadIdx.x;
  const int out_row = blockIdx.x * kTile + threadIdx.y;
  if (out_col < height && out_row < width)
    out[static_cast<std::int64_t>(out_row) * height + out_col] = tile[threadIdx.x][threadIdx.y];
  // END LAB
}

// ---------------------------------------------------------------------------------------------
// 5. A taller tile, more work per thread: kTile x kSweepRows threads sweep a padded 64 x 32 tile.
// ---------------------------------------------------------------------------------------------

/// Transposes through a padded kTallTileRows x (kTile + 1) shared tile (64 input rows x 32 input
/// columns), moved by kTile x kSweepRows threads, kTallElementsPerThread elements each. Block
/// (bx, by) reads input rows by*64 .. by*64+63 at columns bx*32 .. bx*32+31 and writes them as
/// output rows bx*32 .. bx*32+31 at columns by*64 .. by*64+63.
///
/// Two things add up here. The writes are the side a transpose pays for: the blocks running at
/// the same time read neighbouring pieces of the same input rows, but each writes its own 32
/// output rows, so DRAM sees the output as many separate segments, one per output row of each
/// tile. 64 input rows make each segment 64 floats, 256 bytes, instead of 128. And each thread
/// issues its 8 loads before the barrier, twice the bytes in flight of the 4-per-thread sweep,
/// with 8 blocks of 256 threads still filling an SM (64 x 33 floats = 8448 bytes of shared
/// memory per block).
///
/// Shared memory stays conflict-free: a warp writes 32 neighbours of one tile row, and reads 32
/// rows of one tile column, 33 words apart, which fall in 32 different banks.
__global__ void transpose_tall_tile(const float* __restrict__ in, float* __restrict__ out, int width,
                                    int height) {
  // LAB 05.tall_tile: a 64 x (32 + 1) shared tile: 8 loads a thread, barrier, store it turned, half by half
  // LAB-STUB: static_cast<void>(kTallTileHalves), static_cast<void>(kTallElementsPerThread);
  __shared__ float tile[kTallTileRows][kTile + 1];

  // Load: each warp reads one 128-byte piece of an input row; thread row ty takes tile rows
  // ty, ty+8, ..., ty+56. The 8 loads do not depend on each other, so all 8 can be in flight.
  const int in_col = blockIdx.x * kTile + threadIdx.x;
#pragma unroll
  for (int pass = 0; pass < kTallElementsPerThread; ++pass) {
    const int tile_row = threadIdx.y + pass * kSweepRows;
    const int in_row = blockIdx.y * kTallTileRows + tile_row;
    if (in_col < width && in_row < height)
      tile[tile_row][threadIdx.x] = in[static_cast<std::int64_t>(in_row) * width + in_col];
  }

  __syncthreads(); // outside every branch: all 256 threads arrive

  // Store, one 32-row half of the tile at a time: threadIdx.x runs along an output row, i.e. down
  // the half's 32 tile rows, and thread row ty writes output rows ty, ty+8, ty+16, ty+24 of the
  // block. The two halves of an output row are neighbours: 256 contiguous bytes per output row.
  // The guard uses the output coordinates; it admits exactly the elements the load stored.
#pragma unroll
  for (int half = 0; half < kTallTileHalves; ++half) {
    const int half_row = half * kTile + threadIdx.x; // the tile row this thread reads
    const int out_col = blockIdx.y * kTallTileRows + half_row;
#pragma unroll
    for (int pass = 0; pass < kTile / kSweepRows; ++pass) {
      const int tile_col = threadIdx.y + pass * kSweepRows; // becomes the output row
      const int out_row = blockIdx.x * kTile + tile_col;
      if (out_col < height && out_row < width)
        out[static_cast<std::int64_t>(out_row) * height + out_col] = tile[half_row][tile_col];
    }
  }
  // END LAB
}

// ---------------------------------------------------------------------------------------------
// Host side: the shape, the variants and their launch shapes, the reference and the check.
// ---------------------------------------------------------------------------------------------

/// The matrix being transposed: the input is height x width (rows x columns, row-major), the
/// output width x height.
struct TransposeShape {
  std::int64_t width = 8192;  ///< columns of the input, rows of the output
  std::int64_t height = 8192; ///< rows of the input, columns of the output
};

/// Every kernel above takes (in, out, width, height).
using TransposeKernel = void (*)(const float* in, float* out, int width, int height);

/// One variant of the chapter: a kernel and the shape it is launched with, or the yardstick.
struct Variant {
  const char* name;       ///< short name, also the value of `--kernel`
  TransposeKernel kernel; ///< nullptr for the cudaMemcpy yardstick
  dim3 threads;           ///< threads per block
  int tile_rows;          ///< input rows one block covers
  int tile_cols;          ///< input columns one block covers
  bool transposes;        ///< false: a copy, checked against the input itself
  int shared_floats;      ///< floats of shared memory per block: the tile the block turns, if any
  const char* what;       ///< what it is or what it changes

  /// The cudaMemcpy yardstick: it always runs, and never fails the run.
  bool is_yardstick() const { return kernel == nullptr; }
};

// clang-format off
/// The variants, in the order the chapter tells them. The yardstick comes first so that every
/// kernel can be given as a percentage of it.
const Variant kVariants[] = {
  // name           kernel                  threads per block         tile (rows, cols)     transposes  shared floats
  {"memcpy",        nullptr,                dim3(),                   0,             0,     false,      0,
                    "cudaMemcpy device to device of the same bytes"},
  {"copy",          copy_one_per_thread,    dim3(kTile, kTile),       kTile,         kTile, false,      0,
                    "32x32 threads, 1 element each, no transpose: the ceiling"},
  {"copy_32x8",     copy_four_per_thread,   dim3(kTile, kSweepRows),  kTile,         kTile, false,      0,
                    "32x8 threads, 4 elements each, no transpose"},
  {"naive",         transpose_naive,        dim3(kTile, kTile),       kTile,         kTile, true,       0,
                    "reads coalesced, writes strided by the height"},
  {"tiled",         transpose_tiled<0>,     dim3(kTile, kTile),       kTile,         kTile, true,       kTile * kTile,
                    "32x32 shared tile: coalesced both ways, 32-way bank conflicts"},
  {"tiled_padded",  transpose_tiled<1>,     dim3(kTile, kTile),       kTile,         kTile, true,       kTile * (kTile + 1),
                    "32x33 shared tile: no bank conflicts"},
  {"padded_64x32",  transpose_tall_tile,    dim3(kTile, kSweepRows),  kTallTileRows, kTile, true,       kTallTileRows * (kTile + 1),
                    "64-row padded tile (64x33), 32x8 threads, 8 elements each"},
};
// clang-format on

/// The grid of @p variant: one block per tile of the input, ceil(width / tile_cols) x
/// ceil(height / tile_rows) blocks (at most 2048 x 2048 for 65536 x 65536).
dim3 grid_of(const Variant& variant, const TransposeShape& shape) {
  return dim3(static_cast<unsigned>((shape.width + variant.tile_cols - 1) / variant.tile_cols),
              static_cast<unsigned>((shape.height + variant.tile_rows - 1) / variant.tile_rows));
}

/// Enqueues one run of @p variant: its kernel on its grid (grid_of), or, for the yardstick, the
/// driver's device-to-device copy of the same bytes.
void launch(const Variant& variant, const float* in, float* out, const TransposeShape& shape) {
  if (variant.is_yardstick()) {
    const std::size_t bytes = static_cast<std::size_t>(shape.width * shape.height) * sizeof(float);
    CUDA_CHECK(cudaMemcpyAsync(out, in, bytes, cudaMemcpyDeviceToDevice));
    return;
  }
  variant.kernel<<<grid_of(variant, shape), variant.threads>>>(in, out, static_cast<int>(shape.width),
                                                               static_cast<int>(shape.height));
  CUDA_CHECK_LAUNCH();
}

/// Prints the launch plan of @p variant, one line: its grid, its block, its shared memory, and what
/// each element costs (global accesses, shared-memory accesses, elements per thread). No GPU needed.
void print_plan(const Variant& variant, const TransposeShape& shape) {
  if (variant.is_yardstick()) {
    std::printf("  %-13s cudaMemcpy device to device of %lld bytes, the yardstick\n", variant.name,
                static_cast<long long>(shape.width * shape.height) * static_cast<long long>(sizeof(float)));
    return;
  }
  const dim3 grid = grid_of(variant, shape);
  const int elements_per_thread =
      variant.tile_rows * variant.tile_cols / static_cast<int>(variant.threads.x * variant.threads.y);
  std::printf(
      "  %-13s grid (x, y) = (%u, %u) blocks, block (x, y) = (%u, %u) threads, %zu bytes of shared "
      "memory per block\n",
      variant.name, grid.x, grid.y, variant.threads.x, variant.threads.y,
      static_cast<std::size_t>(variant.shared_floats) * sizeof(float));
  std::printf("  %-13s per element: 1 global load and 1 global store%s; %d element%s per thread\n", "",
              variant.shared_floats > 0 ? ", 1 shared-memory store and 1 shared-memory load" : "",
              elements_per_thread, elements_per_thread == 1 ? "" : "s");
}

/// "ROWSxCOLS" of the input, e.g. "8192x8192".
std::string to_string(const TransposeShape& shape) {
  return std::to_string(shape.height) + "x" + std::to_string(shape.width);
}

/// Declares `--size` (width = height = N), `--width` and `--height` on @p cli. `--width` and `--height`
/// win over `--size` whatever their order.
void add_transpose_options(cs::CommandLine& cli, TransposeShape& shape) {
  // --size fills in whichever of --width and --height was not given, once all options are read.
  auto square_size = std::make_shared<std::int64_t>(0);
  auto width_given = std::make_shared<bool>(false);
  auto height_given = std::make_shared<bool>(false);
  const std::string range = " [1.." + std::to_string(cs::kMaxDimension) + "]";
  cli.add_custom("size", "N", "-", "square matrix: width = height = N" + range,
                 [square_size](const std::string& v) {
                   *square_size = cs::parse_integer("size", v, 1, cs::kMaxDimension);
                 });
  cli.add_custom("width", "N", std::to_string(shape.width),
                 "columns of the input, rows of the output" + range,
                 [&shape, width_given](const std::string& v) {
                   shape.width = cs::parse_integer("width", v, 1, cs::kMaxDimension);
                   *width_given = true;
                 });
  cli.add_custom("height", "N", std::to_string(shape.height),
                 "rows of the input, columns of the output" + range,
                 [&shape, height_given](const std::string& v) {
                   shape.height = cs::parse_integer("height", v, 1, cs::kMaxDimension);
                   *height_given = true;
                 });
  cli.add_validator([&shape, square_size, width_given, height_given] {
    if (*square_size == 0) return;
    if (!*width_given) shape.width = *square_size;
    if (!*height_given) shape.height = *square_size;
  });
}

/// The CPU transpose, the reference every transposing kernel must reproduce bit for bit:
/// out[col][row] = in[row][col], walked in 64 x 64 blocks so the rows read and the rows written
/// both stay in cache.
cs::HostMatrix cpu_transpose(const cs::HostMatrix& in, const TransposeShape& shape) {
  constexpr std::int64_t kBlock = 64;
  cs::HostMatrix out(in.size());
  for (std::int64_t row0 = 0; row0 < shape.height; row0 += kBlock) {
    const std::int64_t row_end = std::min(row0 + kBlock, shape.height);
    for (std::int64_t col0 = 0; col0 < shape.width; col0 += kBlock) {
      const std::int64_t col_end = std::min(col0 + kBlock, shape.width);
      for (std::int64_t row = row0; row < row_end; ++row)
        for (std::int64_t col = col0; col < col_end; ++col)
          out[col * shape.height + row] = in[row * shape.width + col];
    }
  }
  return out;
}

/// Checks @p got (rows x cols) against @p want with no tolerance at all: a transpose only moves
/// floats, so every bit must arrive (tolerance 0, scale 1). Every element is first scanned for
/// NaN and the never-written poison pattern. kFull and kAuto compare every element; kSample
/// compares the four borders (up to 1024 elements each) and 4096 random ones drawn from @p seed.
cs::CheckResult verify_exact(const cs::HostMatrix& got, const cs::HostMatrix& want, std::int64_t rows,
                             std::int64_t cols, cs::CheckMode mode, std::uint64_t seed) {
  if (mode == cs::CheckMode::kNone) {
    cs::CheckResult none;
    none.mode = "none";
    none.passed = true;
    return none;
  }
  cs::Comparison comparison(0.0, cols, "out");
  const std::int64_t count = rows * cols;
  comparison.scan(got.data(), count);
  if (mode != cs::CheckMode::kSample) {
    for (std::int64_t i = 0; i < count; ++i) comparison.compare(i, got[i], want[i], 1.0);
    return comparison.finish("full, exact");
  }
  // Sampled: the borders, where a wrong bounds check shows, and random interior elements.
  std::set<std::int64_t> picks;
  const auto edge = [&picks](std::int64_t length, auto&& index_of) {
    const std::int64_t samples = std::min<std::int64_t>(length, 1024);
    for (std::int64_t t = 0; t < samples; ++t)
      picks.insert(index_of(samples == 1 ? 0 : t * (length - 1) / (samples - 1)));
  };
  edge(cols, [&](std::int64_t c) { return c; });                     // first row
  edge(cols, [&](std::int64_t c) { return (rows - 1) * cols + c; }); // last row
  edge(rows, [&](std::int64_t r) { return r * cols; });              // first column
  edge(rows, [&](std::int64_t r) { return r * cols + cols - 1; });   // last column
  std::mt19937_64 engine(seed ^ 0x7a05e5ULL);
  for (int t = 0; t < 4096; ++t)
    picks.insert(static_cast<std::int64_t>(engine() % static_cast<std::uint64_t>(count)));
  for (const std::int64_t index : picks) comparison.compare(index, got[index], want[index], 1.0);
  return comparison.finish("sample, exact");
}

/// Runs one variant: poisons the output, times it with events (its own warm-up runs first, so
/// module loading and first-touch costs stay out), copies the result back and checks it.
/// Fills in the time and the bandwidth; the caller adds the percentage of the yardstick.
cs::Measurement measure(const Variant& variant, const float* device_in, float* device_out,
                        const TransposeShape& shape, const cs::HostMatrix& input,
                        const cs::HostMatrix& transposed, const cs::DeviceInfo& info,
                        const cs::RunOptions& run) {
  const std::int64_t elements = shape.width * shape.height;
  const std::size_t matrix_bytes = static_cast<std::size_t>(elements) * sizeof(float);

  // Poison: an element the kernel never writes reads back as 0xFFFFFFFF and fails the check.
  CUDA_CHECK(cudaMemset(device_out, cs::kPoisonByte, matrix_bytes));
  cs::Measurement m;
  m.name = variant.name;
  m.what = variant.what;
  m.is_yardstick = variant.is_yardstick();
  m.time = cs::time_with_events(run, [&] { launch(variant, device_in, device_out, shape); });

  // Bandwidth: every element read once and written once, in decimal gigabytes per second.
  const double bytes_moved = 2.0 * static_cast<double>(matrix_bytes);
  m.rate = bytes_moved / (m.time.median_ms * 1e6);
  m.pct_peak = 100.0 * m.rate / info.peak_bandwidth_gbs;

  cs::HostMatrix result(static_cast<std::size_t>(elements));
  CUDA_CHECK(cudaMemcpy(result.data(), device_out, matrix_bytes, cudaMemcpyDeviceToHost));
  if (variant.transposes)
    m.check = verify_exact(result, transposed, shape.width, shape.height, run.check, run.seed);
  else
    m.check = verify_exact(result, input, shape.height, shape.width, run.check, run.seed);
  return m;
}

/// Parses, runs the memcpy yardstick and the chosen kernels on one random matrix, and reports.
int main(int argc, char** argv) {
  std::vector<std::string> kernel_choices = {"all"};
  for (const Variant& v : kVariants)
    if (!v.is_yardstick()) kernel_choices.push_back(v.name);

  // 1. Parse the command line: bad input stops here with exit code 2, before any GPU work.
  TransposeShape shape;
  std::string kernel = "all";
  cs::RunOptions run;
  cs::CommandLine cli("05_transpose",
                      "out = transpose(in) for a height x width float matrix: a copy, the naive "
                      "kernel, shared tiles without and with padding, and a 64 x 32 tile at 8 "
                      "elements per thread, beside cudaMemcpy.");
  add_transpose_options(cli, shape);
  cli.add_choice("kernel", &kernel, kernel_choices,
                 "run only this kernel (the memcpy yardstick always runs)");
  cs::add_run_options(cli, run, /*gpu=*/true);
  bool plan_only = false;
  cli.add_flag("plan", &plan_only, "print each variant's launch plan and exit, without touching a GPU");
  cs::parse_or_exit(cli, argc, argv);
  if (plan_only) {
    std::printf("05_transpose: in %lld x %lld (rows x cols) -> out %lld x %lld\n",
                static_cast<long long>(shape.height), static_cast<long long>(shape.width),
                static_cast<long long>(shape.width), static_cast<long long>(shape.height));
    for (const Variant& variant : kVariants)
      if (variant.is_yardstick() || kernel == "all" || kernel == variant.name) print_plan(variant, shape);
    return cs::kExitPass;
  }

  // 2. Pick the device and make sure both matrices fit.
  const cs::DeviceInfo info = cs::pick_device(run.device);
  cs::print_device_info(info);
  const std::int64_t elements = shape.width * shape.height;
  const std::size_t matrix_bytes = static_cast<std::size_t>(elements) * sizeof(float);
  cs::require_device_memory(info, 2 * matrix_bytes, "the input and output matrices");

  const double matrix_mib = static_cast<double>(matrix_bytes) / (1024.0 * 1024.0);
  const double l2_mib = info.l2_bytes / (1024.0 * 1024.0);
  std::printf(
      "\n05_transpose: in %lld x %lld (rows x cols) -> out %lld x %lld, %.1f MiB each; "
      "%d timed run(s) per variant after %d warm-up(s)\n",
      static_cast<long long>(shape.height), static_cast<long long>(shape.width),
      static_cast<long long>(shape.width), static_cast<long long>(shape.height), matrix_mib, run.reps,
      run.warmup);
  std::printf("GB/s counts the bytes read plus the bytes written, in decimal GB (1e9 bytes)\n");
  // The figures measure DRAM only when the data cannot stay in the L2 cache between runs.
  if (2 * matrix_mib <= l2_mib)
    std::printf(
        "note: in + out (%.1f MiB) fit in the %.0f MiB L2, so these figures measure the "
        "cache, not DRAM; use --size 8192 for memory bandwidth\n",
        2 * matrix_mib, l2_mib);
  else
    std::printf("in + out = %.1f MiB, %.1fx the %.0f MiB L2: the figures measure DRAM\n", 2 * matrix_mib,
                2 * matrix_mib / l2_mib, l2_mib);

  // 3. Generate the input (seeded, uniform in [-1, 1), non-symmetric) and the CPU transpose.
  const cs::HostMatrix input = cs::random_matrix(shape.height, shape.width, run.seed, cs::Operand::kA);
  const cs::HostMatrix transposed =
      run.check == cs::CheckMode::kNone ? cs::HostMatrix() : cpu_transpose(input, shape);

  // 4. Allocate and copy the input once; every variant reads it and overwrites the output.
  float* device_in = nullptr;
  float* device_out = nullptr;
  CUDA_CHECK(cudaMalloc(&device_in, matrix_bytes));
  CUDA_CHECK(cudaMalloc(&device_out, matrix_bytes));
  CUDA_CHECK(cudaMemcpy(device_in, input.data(), matrix_bytes, cudaMemcpyHostToDevice));

  // 5. Each variant: poison, warm up, time, copy back, verify.
  cs::Report report("05_transpose", to_string(shape), "GB/s", "memcpy");
  double memcpy_rate = 0;
  double tiled_rate = 0, tiled_padded_rate = 0;
  for (const Variant& variant : kVariants) {
    if (!variant.is_yardstick() && kernel != "all" && kernel != variant.name) continue;
    cs::Measurement m = measure(variant, device_in, device_out, shape, input, transposed, info, run);
    if (variant.is_yardstick()) memcpy_rate = m.rate;
    m.pct_yardstick = 100.0 * m.rate / memcpy_rate;
    if (m.name == "tiled") tiled_rate = m.rate;
    if (m.name == "tiled_padded") tiled_padded_rate = m.rate;
    report.add(m);
  }
  CUDA_CHECK(cudaFree(device_in));
  CUDA_CHECK(cudaFree(device_out));

  // 6. Report. The headline is the last kernel run (padded_64x32 when all run).
  report.add_field("memcpy_gbs", cs::format_number(memcpy_rate, "%.1f"));
  if (tiled_rate > 0 && tiled_padded_rate > 0) {
    const double padding_gain = tiled_padded_rate / tiled_rate;
    std::printf("\none padding column: %.2fx the bandwidth of the unpadded tile\n", padding_gain);
    report.add_field("padded_over_unpadded", cs::format_number(padding_gain, "%.2f"));
  }
  return report.finish(run);
}
