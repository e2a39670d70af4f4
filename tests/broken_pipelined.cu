// broken_pipelined: shows that a missing barrier in stage 11's pipeline is caught.
//
// A copy of stage 11's kernel (11_pipelined/main.cu) with one parameter set, 128x128x16/64x32/8x8/s3,
// and, in the broken variant, without the one barrier of each step. That barrier does two things:
// everyone's cp.async copies of tile t have landed before anyone reads tile t, and everyone has
// finished reading the buffer of step t - 1 before the copy of tile t + 2 overwrites it. Without
// it, a fast warp reads a tile other threads' copies have not filled yet, and copies into a buffer
// slower warps are still reading. Whether that corrupts a given run depends on timing, so the test
// is compute-sanitizer racecheck, which tracks cp.async copies into shared memory and reports the
// hazard whether or not it bit. The teaching kernel stays clean; this copy exists to fail.
#include "cli.hpp"
#include "cuda_check.cuh"
#include "device_buffer.cuh"
#include "device_info.cuh"
#include "gpu_timer.cuh"
#include "matrix.hpp"
#include "report.hpp"
#include "verify.hpp"

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

/// Which safeguard the copy of the pipelined kernel lacks.
enum class Breakage {
  kNone,          ///< the correct kernel: the control, showing the harness itself passes
  kNoSwapBarrier, ///< no barrier between a step's wait for its tile and the copy into a freed buffer
};

// The parameter set of the copies: 128 x 128 block tiles of 8 warps, 64 x 32 warp tiles, 8 x 8 per
// thread, a step of 16 along K, a ring of 3 buffers (stage 11's 128x128x16/64x32/8x8/s3).
constexpr int kBlockM = 128;
constexpr int kBlockN = 128;
constexpr int kBlockK = 16;
constexpr int kWarpM = 64;
constexpr int kWarpN = 32;
constexpr int kThreadM = 8;
constexpr int kThreadN = 8;
constexpr int kStages = 3;
constexpr int kThreads = (kBlockM / kWarpM) * (kBlockN / kWarpN) * 32;
constexpr int kGroupRows = 8;
/// Dynamic shared memory per block: the ring of kStages buffers, each an A tile and a B tile.
constexpr int kSharedBytes = kStages * kBlockK * (kBlockM + 4 + kBlockN) * 4;

/// Whether every row of A, B and C starts on a 16-byte boundary (as in stage 11).
bool rows_are_16_byte_aligned(const float* a, const float* b, const float* c, std::int64_t n,
                              std::int64_t k) {
  const auto misaligned = [](const float* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 != 0; };
  return n % 4 == 0 && k % 4 == 0 && !misaligned(a) && !misaligned(b) && !misaligned(c);
}

/// Starts a cp.async copy of kBytes from global to shared memory, zero-filled when @p in_matrix is
/// false (as in stage 11).
template <int kBytes>
__device__ __forceinline__ void copy_async(float* to, const float* from, bool in_matrix,
                                           const float* fallback) {
  const unsigned shared_to = static_cast<unsigned>(__cvta_generic_to_shared(to));
  const int read_bytes = in_matrix ? kBytes : 0;
  from = in_matrix ? from : fallback;
  if constexpr (kBytes == 16)
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(shared_to), "l"(from),
                 "r"(read_bytes)
                 : "memory");
  else
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(shared_to), "l"(from), "r"(read_bytes)
                 : "memory");
}

/// Closes this thread's group of copies (as in stage 11).
__device__ __forceinline__ void commit_copies() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}

/// Waits until at most kPending of this thread's groups of copies are in flight (as in stage 11).
template <int kPending>
__device__ __forceinline__ void wait_for_copies() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending) : "memory");
}

/// Writes the columns of @p quad that lie inside the row (as in stage 11).
template <bool kAligned>
__device__ __forceinline__ void store_quad(float* to, float4 quad, std::int64_t col,
                                           std::int64_t row_length) {
  if (kAligned) {
    if (col < row_length) *reinterpret_cast<float4*>(to) = quad;
  } else {
    if (col < row_length) to[0] = quad.x;
    if (col + 1 < row_length) to[1] = quad.y;
    if (col + 2 < row_length) to[2] = quad.z;
    if (col + 3 < row_length) to[3] = quad.w;
  }
}

/// Stage 11's pipelined kernel (see 11_pipelined/main.cu) with the parameter set above, and without
/// the barrier of each step when @p kBreakage is Breakage::kNoSwapBarrier; with Breakage::kNone it
/// is the correct kernel.
template <Breakage kBreakage, bool kAligned>
__global__ void __launch_bounds__(kThreads, 2)
    broken_pipelined_matmul(const float* a, const float* b, float* c, std::int64_t m, std::int64_t n,
                            std::int64_t k) {
  constexpr int kWarpsN = kBlockN / kWarpN;
  constexpr int kLaneRows = kWarpM / kThreadM;
  constexpr int kLaneCols = kWarpN / kThreadN;
  constexpr int kSubM = 4 * kLaneRows;
  constexpr int kSubN = 4 * kLaneCols;
  constexpr int kAQuadsPerRow = kBlockK / 4;
  constexpr int kARowsPerPass = kThreads / kAQuadsPerRow;
  constexpr int kAPasses = kBlockM / kARowsPerPass;
  constexpr int kBQuadsPerRow = kBlockN / 4;
  constexpr int kBRowsPerPass = kThreads / kBQuadsPerRow;
  constexpr int kBPasses = kBlockK / kBRowsPerPass;
  constexpr int kTileAStride = kBlockM + 4;
  constexpr int kTileAFloats = kBlockK * kTileAStride;
  constexpr int kStageFloats = kTileAFloats + kBlockK * kBlockN;
  extern __shared__ float4 shared_quads[];
  float* const shared = reinterpret_cast<float*>(shared_quads);

  const int blocks_n = static_cast<int>((n + kBlockN - 1) / kBlockN);
  const int blocks_m = static_cast<int>((m + kBlockM - 1) / kBlockM);
  const int blocks_per_group = kGroupRows * blocks_n;
  const int group = blockIdx.x / blocks_per_group;
  const int first_row = group * kGroupRows;
  const int rows_in_group = min(blocks_m - first_row, kGroupRows);
  const int in_group = blockIdx.x - group * blocks_per_group;
  const int block_row_index = first_row + in_group % rows_in_group;
  const int block_col_index = in_group / rows_in_group;

  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  const int warp_row = warp / kWarpsN;
  const int warp_col = warp % kWarpsN;
  const int lane_row = lane / kLaneCols;
  const int lane_col = lane % kLaneCols;
  const int thread_row = warp_row * kWarpM + lane_row * 4;
  const int thread_col = warp_col * kWarpN + lane_col * 4;
  const int a_load_row = threadIdx.x / kAQuadsPerRow;
  const int a_load_col = threadIdx.x % kAQuadsPerRow * 4;
  const int b_load_row = threadIdx.x / kBQuadsPerRow;
  const int b_load_col = threadIdx.x % kBQuadsPerRow * 4;

  const std::int64_t block_row = static_cast<std::int64_t>(block_row_index) * kBlockM;
  const std::int64_t block_col = static_cast<std::int64_t>(block_col_index) * kBlockN;
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
  const int k_tiles = static_cast<int>((k + kBlockK - 1) / kBlockK);

  const auto copy_tile_async = [&](std::int64_t k_tile, int stage) {
    float* const tile_a = shared + stage * kStageFloats;
    float* const tile_b = tile_a + kTileAFloats;
#pragma unroll
    for (int p = 0; p < kAPasses; ++p) {
      const int a_row = a_load_row + p * kARowsPerPass;
      const std::int64_t a_col = k_tile + a_load_col;
      if constexpr (kAligned) {
        const bool in_a = a_row_in_a[p] && a_col < k;
        const float* const from = in_a ? a_next[p] : a;
#pragma unroll
        for (int e = 0; e < 4; ++e)
          copy_async<4>(&tile_a[(a_load_col + e) * kTileAStride + a_row], from + e, in_a, from + e);
      } else {
#pragma unroll
        for (int e = 0; e < 4; ++e)
          copy_async<4>(&tile_a[(a_load_col + e) * kTileAStride + a_row], a_next[p] + e,
                        a_row_in_a[p] && a_col + e < k, a);
      }
      a_next[p] += kBlockK;
    }
#pragma unroll
    for (int p = 0; p < kBPasses; ++p) {
      const int b_row = b_load_row + p * kBRowsPerPass;
      float* const to = &tile_b[b_row * kBlockN + b_load_col];
      const float* const from = b_next + p * b_pass_step;
      const bool b_row_in_b = k_tile + b_row < k;
      if constexpr (kAligned) {
        copy_async<16>(to, from, b_row_in_b && b_col_in_b, b);
      } else {
#pragma unroll
        for (int e = 0; e < 4; ++e) copy_async<4>(to + e, from + e, b_row_in_b && b_col + e < n, b);
      }
    }
    b_next += b_step;
  };

  float sums[kThreadM][kThreadN] = {};
  const auto multiply_stage = [&](int stage) {
    const float* const tile_a = shared + stage * kStageFloats;
    const float* const tile_b = tile_a + kTileAFloats;
#pragma unroll
    for (int i = 0; i < kBlockK; ++i) {
      float fragment_a[kThreadM];
      float fragment_b[kThreadN];
#pragma unroll
      for (int r = 0; r < kThreadM; r += 4) {
        const float4 quad =
            *reinterpret_cast<const float4*>(&tile_a[i * kTileAStride + thread_row + r / 4 * kSubM]);
        fragment_a[r + 0] = quad.x;
        fragment_a[r + 1] = quad.y;
        fragment_a[r + 2] = quad.z;
        fragment_a[r + 3] = quad.w;
      }
#pragma unroll
      for (int cc = 0; cc < kThreadN; cc += 4) {
        const float4 quad =
            *reinterpret_cast<const float4*>(&tile_b[i * kBlockN + thread_col + cc / 4 * kSubN]);
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
  };

#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < k_tiles) copy_tile_async(static_cast<std::int64_t>(s) * kBlockK, s);
    commit_copies();
  }
  int read_stage = 0;
  int write_stage = kStages - 1;
  for (int t = 0; t < k_tiles; ++t) {
    wait_for_copies<kStages - 2>();
    // Broken in kNoSwapBarrier: this thread's copies of tile t have landed, but nobody waits for
    // the others' (read-after-write), nor for the warps still reading the buffer of step t - 1,
    // into which the copy below goes (write-after-read).
    if constexpr (kBreakage != Breakage::kNoSwapBarrier) __syncthreads();
    if (t + kStages - 1 < k_tiles)
      copy_tile_async(static_cast<std::int64_t>(t + kStages - 1) * kBlockK, write_stage);
    commit_copies();
    multiply_stage(read_stage);
    read_stage = read_stage + 1 == kStages ? 0 : read_stage + 1;
    write_stage = write_stage + 1 == kStages ? 0 : write_stage + 1;
  }
#pragma unroll
  for (int r = 0; r < kThreadM; ++r) {
    const std::int64_t row = block_row + thread_row + r / 4 * kSubM + r % 4;
    if (row >= m) continue;
#pragma unroll
    for (int cc = 0; cc < kThreadN; cc += 4) {
      const std::int64_t col = block_col + thread_col + cc / 4 * kSubN;
      const float4 quad = make_float4(sums[r][cc], sums[r][cc + 1], sums[r][cc + 2], sums[r][cc + 3]);
      if (col < n) store_quad<kAligned>(c + row * n + col, quad, col, n);
    }
  }
}

/// Launches the copy @p kBreakage names, on the 16-byte path when every row is aligned, on a 1-D
/// grid covering C, after raising its dynamic shared-memory limit; checks the launch.
template <Breakage kBreakage>
void launch_copy(const float* a, const float* b, float* c, const cs::MatmulShape& shape) {
  const auto kernel = rows_are_16_byte_aligned(a, b, c, shape.n, shape.k)
                          ? broken_pipelined_matmul<kBreakage, true>
                          : broken_pipelined_matmul<kBreakage, false>;
  const std::int64_t blocks = ((shape.m + kBlockM - 1) / kBlockM) * ((shape.n + kBlockN - 1) / kBlockN);
  CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSharedBytes));
  kernel<<<static_cast<unsigned>(blocks), kThreads, kSharedBytes>>>(a, b, c, shape.m, shape.n, shape.k);
  CUDA_CHECK_LAUNCH();
}

/// Parses, runs the chosen copy through the stages' verification, and reports: exit 0 when the
/// result passes, 1 when the check catches it.
int main(int argc, char** argv) {
  // 1. Parse. The default size is a multiple of no tile, and has 4 k-tiles: the ring goes round,
  //    so step 1 copies tile 3 into the buffer step 0 read.
  cs::MatmulShape shape;
  shape.m = 37;
  shape.n = 29;
  shape.k = 53;
  cs::RunOptions run;
  run.warmup = 0;
  run.reps = 1;
  std::string variant = "no-swap-barrier";
  cs::CommandLine cli(
      "broken_pipelined",
      "A deliberately broken copy of the pipelined kernel, to show that racecheck catches it.");
  cs::add_shape_options(cli, shape);
  cli.add_choice("variant", &variant, {"correct", "no-swap-barrier"},
                 "which safeguard the kernel lacks (correct: none, the control)");
  cs::add_run_options(cli, run, /*gpu=*/true);
  cs::parse_or_exit(cli, argc, argv);
  const Breakage breakage = variant == "correct" ? Breakage::kNone : Breakage::kNoSwapBarrier;

  // 2. The GPU.
  const cs::DeviceInfo device = cs::pick_device(run.device);
  std::printf(
      "broken_pipelined --variant %s on %s, C (%lld x %lld) = A (%lld x %lld) * B (%lld x %lld), "
      "128x128x16/64x32/8x8/s3\n",
      variant.c_str(), device.name.c_str(), static_cast<long long>(shape.m), static_cast<long long>(shape.n),
      static_cast<long long>(shape.m), static_cast<long long>(shape.k), static_cast<long long>(shape.k),
      static_cast<long long>(shape.n));

  // 3. Inputs, and device buffers; C poisoned, so an element no thread writes fails the check.
  const cs::HostMatrix a = cs::random_matrix(shape.m, shape.k, run.seed, cs::Operand::kA);
  const cs::HostMatrix b = cs::random_matrix(shape.k, shape.n, run.seed, cs::Operand::kB);
  const cs::DeviceBuffer<float> d_a(a);
  const cs::DeviceBuffer<float> d_b(b);
  cs::DeviceBuffer<float> d_c(static_cast<std::size_t>(shape.m * shape.n));
  d_c.poison();

  // 4. Run (and time, to report like a stage), copy back, verify.
  const cs::TimingStats time = cs::time_with_events(run, [&] {
    if (breakage == Breakage::kNone) launch_copy<Breakage::kNone>(d_a.get(), d_b.get(), d_c.get(), shape);
    if (breakage == Breakage::kNoSwapBarrier)
      launch_copy<Breakage::kNoSwapBarrier>(d_a.get(), d_b.get(), d_c.get(), shape);
  });
  cs::HostMatrix c = cs::poisoned_matrix(d_c.size());
  d_c.to_host(c);
  cs::Measurement result;
  result.name = variant;
  result.what = "stage 11's pipelined kernel, 128x128x16/64x32/8x8/s3, variant " + variant;
  result.time = time;
  result.rate = cs::matmul_gflops(shape, time.median_ms);
  result.check = cs::verify_matmul(a, b, c, shape, run.check, run.seed);

  // 5. Report. For the broken variant either outcome may come: a race need not bite in a given run.
  cs::Report report("broken_pipelined", cs::to_string(shape), "GFLOP/s", "");
  report.add(result);
  return report.finish(run);
}
