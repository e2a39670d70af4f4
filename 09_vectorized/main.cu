// 09_vectorized: stage 08's register tiles, with every access to memory 16 bytes wide where it can be.
//
// Stage 08 moves every float on its own: 4-byte loads from global memory, 4-byte stores and reads in
// shared memory. Here each load brings a quad, four consecutive columns of a row of A or B (one 16-byte
// load when every row starts on a 16-byte boundary, as the host checks; four guarded 4-byte loads
// otherwise), and the A tile is stored transposed, so that a thread's TM values of A lie side by side
// like its TN values of B: both are read from shared memory as float4s, and C is written in quads.
//
// Run:  09_vectorized --size 4096 --params 128x128x16/8x8   (the default: an 8 x 8 tile per thread)
//       09_vectorized --size 4096 --params 128x64x16/8x4    (stage 08's default set)
//       09_vectorized --size 4096 --params 64x64x16/4x4     (4 x 4: little to gain from wider accesses)
//       09_vectorized --size 4099                           (n and k not multiples of 4: the 4-byte path)
//       (no options: the original tutorial's 1000 x 1000 x 1000; --plan: print the launch and exit, no
//       GPU needed; --help: every option)
// Everything but the kernel and its launch is the host flow every matmul stage shares
// (common/matmul_flow.cu: parse, generate, copy, time, verify, cuBLAS, report).
/// @file
/// @brief Stage 09: 16-byte loads and reads, the A tile transposed (chapter: 09_vectorized/README.md).
#include "kernel_table.cuh"
#include "matmul_flow.cuh"
#include "quads.cuh"

#include <cstdint>
#include <string>

// This stage's own names (every matmul stage has a StageOptions and a plan_launch of its own).
namespace stage09 {

/// C = A·B where each thread computes a kThreadM × kThreadN tile of C as a sum of outer products,
/// moving four floats per access wherever it can (A is m×k, B is k×n, C is m×n, all row-major).
///
/// Block (blockIdx.x, blockIdx.y) owns the kBlockM × kBlockN tile of C whose top-left element is
/// C[blockIdx.y·kBlockM][blockIdx.x·kBlockN], and walks along K in steps of kBlockK, staging a
/// kBlockM × kBlockK tile of A and a kBlockK × kBlockN tile of B in shared memory; every thread loads
/// several quads (four consecutive columns of a row) of each in a fixed number of passes (zero past
/// an edge), and reaches both barriers of every step. The A tile is stored transposed,
/// tile_a[i][row], so that the kThreadM values of A a thread needs per value along K lie side by
/// side, as its kThreadN values of B do. Thread t owns rows (t / (kBlockN / kThreadN))·kThreadM .. +
/// kThreadM and columns (t % (kBlockN / kThreadN))·kThreadN .. + kThreadN of the block's tile: per
/// value along K it reads them from shared memory as float4s and adds their outer product,
/// kThreadM·kThreadN multiply-adds from registers, and at the end writes its tile to C in quads.
/// Sizes and offsets are 64-bit whatever the problem (m·k, k·n and m·n can pass 2^31).
///
/// @tparam kBlockM rows of C per block.
/// @tparam kBlockN columns of C per block.
/// @tparam kBlockK the step along K: columns of the A tile, rows of the B tile.
/// @tparam kThreadM rows of C per thread.
/// @tparam kThreadN columns of C per thread; a block is (kBlockM / kThreadM)·(kBlockN / kThreadN)
///         threads (1-D).
/// @tparam kAligned every row of A, B and C starts on a 16-byte boundary (cs::rows_are_16_byte_aligned,
///         checked by the host before the launch): a quad is one 16-byte access, else four 4-byte ones.
template <int kBlockM, int kBlockN, int kBlockK, int kThreadM, int kThreadN, bool kAligned>
__global__ void __launch_bounds__((kBlockM / kThreadM) * (kBlockN / kThreadN))
    matmul_vectorized(const float* a, const float* b, float* c, std::int64_t m, std::int64_t n,
                      std::int64_t k) {
  constexpr int kThreads = (kBlockM / kThreadM) * (kBlockN / kThreadN);
  static_assert(kBlockM % kThreadM == 0 && kBlockN % kThreadN == 0, "a thread's tile must tile the block's");
  static_assert(kBlockK % 4 == 0 && kThreadM % 4 == 0 && kThreadN % 4 == 0, "tiles load and read in quads");
  // Loading in quads: the A tile in passes of kThreads / (kBlockK / 4) rows, the B tile in passes of
  // kThreads / (kBlockN / 4).
  constexpr int kAQuadsPerRow = kBlockK / 4;
  constexpr int kARowsPerPass = kThreads / kAQuadsPerRow;
  constexpr int kAPasses = kBlockM / kARowsPerPass;
  constexpr int kBQuadsPerRow = kBlockN / 4;
  constexpr int kBRowsPerPass = kThreads / kBQuadsPerRow;
  constexpr int kBPasses = kBlockK / kBRowsPerPass;
  static_assert(kThreads % kAQuadsPerRow == 0 && kBlockM % kARowsPerPass == 0,
                "the A tile loads in whole passes");
  static_assert(kThreads % kBQuadsPerRow == 0 && kBlockK % kBRowsPerPass == 0,
                "the B tile loads in whole passes");
  // 16-byte aligned, so that any quad of a row of either tile can be read or written as a float4.
  __shared__ __align__(16) float tile_a[kBlockK][kBlockM]; // transposed: tile_a[i][row] = A[row][k_tile + i]
  __shared__ __align__(16) float tile_b[kBlockK][kBlockN]; // tile_b[i][col] = B[k_tile + i][col]

  // Computing: this thread's kThreadM rows x kThreadN columns of the block's tile of C.
  const int thread_col = threadIdx.x % (kBlockN / kThreadN);
  const int thread_row = threadIdx.x / (kBlockN / kThreadN);
  // Loading: one quad of the A tile and one of the B tile per pass, each in its own layout.
  const int a_load_row = threadIdx.x / kAQuadsPerRow;
  const int a_load_col = threadIdx.x % kAQuadsPerRow * 4;
  const int b_load_row = threadIdx.x / kBQuadsPerRow;
  const int b_load_col = threadIdx.x % kBQuadsPerRow * 4;

  // The offsets are computed once and then walked: a pointer into A per pass (its rows are
  // kARowsPerPass·k apart) and one into B (its passes kBRowsPerPass·n apart), each moving one step
  // along K per tile. A load outside A or B walks row or column 0 and never dereferences it.
  const std::int64_t block_row = static_cast<std::int64_t>(blockIdx.y) * kBlockM;
  const std::int64_t block_col = static_cast<std::int64_t>(blockIdx.x) * kBlockN;
  const float* a_next[kAPasses];
  bool a_row_in_a[kAPasses];
#pragma unroll
  for (int p = 0; p < kAPasses; ++p) {
    const std::int64_t a_row = block_row + a_load_row + p * kARowsPerPass;
    a_row_in_a[p] = a_row < m;
    a_next[p] = a + (a_row_in_a[p] ? a_row : 0) * k + a_load_col;
  }
  const std::int64_t b_col = block_col + b_load_col;
  const bool b_col_in_b = b_col < n;
  const float* b_next = b + static_cast<std::int64_t>(b_load_row) * n + (b_col_in_b ? b_col : 0);
  const std::int64_t b_pass_step = static_cast<std::int64_t>(kBRowsPerPass) * n;
  const std::int64_t b_step = static_cast<std::int64_t>(kBlockK) * n;

  float sums[kThreadM][kThreadN] = {}; // this thread's kThreadM x kThreadN elements of C, in registers
  // k_tile is an int: k is at most 65536, and the 64-bit offsets live in the walked pointers.
  for (int k_tile = 0; k_tile < k; k_tile += kBlockK) {
    // Each thread loads kAPasses quads of the A tile and kBPasses of the B tile: zeros past an edge.
    // LAB 09.transpose_a: per pass, a quad of a row of A (load_quad), stored down a column of tile_a
    // LAB-STUB: static_cast<void>(tile_a);
#pragma unroll
    for (int p = 0; p < kAPasses; ++p) {
      // Four consecutive columns of a row of A, stored into four rows of the transposed tile.
      const float4 quad = cs::load_quad<kAligned>(a_next[p], a_row_in_a[p], k_tile + a_load_col, k);
      const int a_row = a_load_row + p * kARowsPerPass;
      tile_a[a_load_col + 0][a_row] = quad.x;
      tile_a[a_load_col + 1][a_row] = quad.y;
      tile_a[a_load_col + 2][a_row] = quad.z;
      tile_a[a_load_col + 3][a_row] = quad.w;
    }
    // END LAB
#pragma unroll
    for (int p = 0; p < kBPasses; ++p) {
      // Four consecutive columns of a row of B, stored as they are: one 16-byte store.
      const int b_row = b_load_row + p * kBRowsPerPass;
      *reinterpret_cast<float4*>(&tile_b[b_row][b_load_col]) =
          cs::load_quad<kAligned>(b_next + p * b_pass_step, k_tile + b_row < k, b_col, n);
    }
    // Barrier 1: both tiles are complete before anyone reads them.
    __syncthreads();
    // LAB 09.quad_fragments: per i of the step: row i of each tile in float4 reads, their outer product
#pragma unroll
    for (int i = 0; i < kBlockK; ++i) {
      // kThreadM / 4 + kThreadN / 4 16-byte reads from shared memory serve kThreadM·kThreadN multiply-adds.
      float fragment_a[kThreadM]; // column i of the A tile (row i of tile_a), this thread's rows
      float fragment_b[kThreadN]; // row i of the B tile, this thread's columns
#pragma unroll
      for (int r = 0; r < kThreadM; r += 4) {
        const float4 quad = *reinterpret_cast<const float4*>(&tile_a[i][thread_row * kThreadM + r]);
        fragment_a[r + 0] = quad.x;
        fragment_a[r + 1] = quad.y;
        fragment_a[r + 2] = quad.z;
        fragment_a[r + 3] = quad.w;
      }
#pragma unroll
      for (int cc = 0; cc < kThreadN; cc += 4) {
        const float4 quad = *reinterpret_cast<const float4*>(&tile_b[i][thread_col * kThreadN + cc]);
        fragment_b[cc + 0] = quad.x;
        fragment_b[cc + 1] = quad.y;
        fragment_b[cc + 2] = quad.z;
        fragment_b[cc + 3] = quad.w;
      }
#pragma unroll
      for (int r = 0; r < kThreadM; ++r)
#pragma unroll
        for (int cc = 0; cc < kThreadN; ++cc) sums[r][cc] += fragment_a[r] * fragment_b[cc];
    }
    // END LAB
    // Barrier 2: everyone has finished reading these tiles before the next step overwrites them.
    __syncthreads();
#pragma unroll
    for (int p = 0; p < kAPasses; ++p) a_next[p] += kBlockK;
    b_next += b_step;
  }
  // The thread's tile goes to C a quad at a time, only the columns inside C (store_quad drops the rest).
#pragma unroll
  for (int r = 0; r < kThreadM; ++r) {
    const std::int64_t row = block_row + thread_row * kThreadM + r;
    if (row >= m) continue;
#pragma unroll
    for (int cc = 0; cc < kThreadN; cc += 4) {
      const std::int64_t col = block_col + thread_col * kThreadN + cc;
      const float4 quad = make_float4(sums[r][cc], sums[r][cc + 1], sums[r][cc + 2], sums[r][cc + 3]);
      if (col < n) cs::store_quad<kAligned>(c + row * n + col, quad, col, n);
    }
  }
}

/// The kernel's instances, one per `--params` set: for rows on 16-byte boundaries, and for the others.
const cs::KernelTable<void (*)(const float*, const float*, float*, std::int64_t, std::int64_t, std::int64_t)>
    kKernels = {
        {"128x64x16/8x4", matmul_vectorized<128, 64, 16, 8, 4, true>,
         matmul_vectorized<128, 64, 16, 8, 4, false>},
        {"128x128x16/8x8", matmul_vectorized<128, 128, 16, 8, 8, true>,
         matmul_vectorized<128, 128, 16, 8, 8, false>},
        {"64x64x16/4x4", matmul_vectorized<64, 64, 16, 4, 4, true>,
         matmul_vectorized<64, 64, 16, 4, 4, false>},
};

/// The stage's own option.
struct StageOptions {
  std::string params = "128x128x16/8x8"; ///< `--params`: block rows x columns x step along K / thread tile
};

/// Declares `--params` on @p cli: the parameter sets the kernel is instantiated for.
void add_stage_options(cs::CommandLine& cli, StageOptions& options) {
  cli.add_choice("params", &options.params, kKernels.params(),
                 "block tile of C (rows x columns) x step along K / thread tile of C (rows x columns)");
}

/// Plans the launch: ceil(n / BN) x ceil(m / BM) blocks of (BM / TM)·(BN / TN) threads.
cs::MatmulLaunch plan_launch(const StageOptions& options, const cs::MatmulShape& shape) {
  const std::string params = options.params;
  const cs::TileSizes tile = cs::tile_sizes_of(params, "BMxBNxBK/TMxTN");
  const std::int64_t blocks_x = (shape.n + tile.block_n - 1) / tile.block_n;
  const std::int64_t blocks_y = (shape.m + tile.block_m - 1) / tile.block_m;
  const dim3 grid = cs::grid_of(blocks_x, blocks_y);
  const int thread_cols = tile.block_n / tile.thread_n; // threads across the block's tile of C
  const int threads = (tile.block_m / tile.thread_m) * thread_cols;
  const dim3 block(static_cast<unsigned>(threads));
  const std::int64_t k_steps = (shape.k + tile.block_k - 1) / tile.block_k;
  // Each block loads its BM rows of A and BN columns of B once, BK at a time, for BM x BN elements of C.
  const std::int64_t loads_per_element =
      (k_steps * tile.block_k * (tile.block_m + tile.block_n) + tile.block_m * tile.block_n / 2) /
      (tile.block_m * tile.block_n);
  const int reads = tile.thread_m + tile.thread_n;
  const int products = tile.thread_m * tile.thread_n;
  // cudaMalloc aligns A, B and C themselves, so n and k decide whether every row is 16-byte aligned.
  const bool quads_are_16_bytes = shape.n % 4 == 0 && shape.k % 4 == 0;
  cs::MatmulLaunch launch;
  launch.name = "vectorized_" + params;
  launch.what = "a " + std::to_string(tile.thread_m) + "x" + std::to_string(tile.thread_n) +
                " tile of C per thread, " + (quads_are_16_bytes ? "16-byte" : "4-byte") +
                " loads, the A tile transposed";
  launch.grid = grid;
  launch.block = block;
  launch.shared_bytes = sizeof(float) * tile.block_k * (tile.block_m + tile.block_n);
  launch.notes = {
      "block (x, y) owns a " + std::to_string(tile.block_m) + "-row x " + std::to_string(tile.block_n) +
          "-column tile of C; thread t computes " + std::to_string(tile.thread_m) + " x " +
          std::to_string(tile.thread_n) + " elements of it, from row " + std::to_string(tile.thread_m) +
          " x (t / " + std::to_string(thread_cols) + "), column " + std::to_string(tile.thread_n) +
          " x (t % " + std::to_string(thread_cols) + ")",
      "shared-memory reads per value along K: " + std::to_string(tile.thread_m / 4) + " + " +
          std::to_string(tile.thread_n / 4) + " float4s, " + std::to_string(tile.thread_m) + " of A + " +
          std::to_string(tile.thread_n) + " of B, for " + std::to_string(products) +
          " multiply-adds (stage 08: " + std::to_string(reads) + " single floats)",
      "registers per thread: " + std::to_string(products) + " sums + " + std::to_string(reads) +
          " fragment values; each thread loads " + std::to_string(tile.block_m * tile.block_k / threads / 4) +
          " quads of the A tile and " + std::to_string(tile.block_k * tile.block_n / threads / 4) +
          " of the B tile per step, 4 floats each",
      "global loads per element of C: about K/" + std::to_string(tile.block_m) + " + K/" +
          std::to_string(tile.block_n) + " = " + std::to_string(loads_per_element) + ", in steps of " +
          std::to_string(tile.block_k) +
          " along K (stage 04, tile 32: 2K/32 = " + std::to_string(2 * ((shape.k + 31) / 32)) + ")",
      quads_are_16_bytes ? "n and k are multiples of 4, so every row starts on a 16-byte boundary: a quad is "
                           "one 16-byte load or store"
                         : "n or k is not a multiple of 4, so rows start anywhere: a quad is four guarded "
                           "4-byte loads or stores"};
  launch.index_width_from_host = false;
  launch.run = [=](const cs::MatmulArgs& p) {
    const auto kernel = kKernels.find(params, cs::rows_are_16_byte_aligned(p));
    kernel<<<grid, block>>>(p.a, p.b, p.c, p.m, p.n, p.k);
    CUDA_CHECK_LAUNCH();
  };
  return launch;
}

} // namespace stage09

/// Hands the kernel's launch and the stage's option to the host flow every matmul stage shares.
int main(int argc, char** argv) {
  stage09::StageOptions options;
  return cs::run_matmul_stage(
      {"09_vectorized",
       "C = A*B on the GPU, each thread computing a 2-D tile of C, with 16-byte loads, stores and reads.",
       [&](cs::CommandLine& cli) { stage09::add_stage_options(cli, options); },
       [&](const cs::MatmulShape& shape) { return stage09::plan_launch(options, shape); }},
      argc, argv);
}
