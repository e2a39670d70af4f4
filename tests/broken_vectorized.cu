// broken_vectorized: shows that the checks catch a 16-byte load that ignores the right edge.
//
// A copy of stage 09's kernel (09_vectorized/main.cu: its default parameter set, its 16-byte path)
// whose quad loads can drop the test `col < row_length`, as if n and k were multiples of the tile.
// At 133 x 68 x 76 (n and k multiples of 4, n a multiple of no block's columns) the last quads of a
// row then read the start of the next row, and past the last row, outside the matrix: memcheck
// reports those reads whatever they return. The verification sees them only through the values
// they bring: one of B past the edge goes into a column of C past n, which is never stored, and
// one of A past the edge is multiplied by a zero of the B tile (its rows past k are still zero-
// filled). So the result is right unless such a value is not finite, 0 * NaN being NaN. Here NaN
// lies past A and B, as in a buffer poisoned and not yet written, and the check reports FAIL.
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

/// Stage 09's load_quad on its 16-byte path (kAligned), with the right-edge guard switchable:
/// kCheckRowEnd = false reads the quad even when col is at or past @p row_length.
template <bool kCheckRowEnd>
__device__ __forceinline__ float4 load_quad(const float* from, bool row_in_matrix, std::int64_t col,
                                            std::int64_t row_length) {
  float4 quad = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  if (row_in_matrix && (!kCheckRowEnd || col < row_length)) quad = *reinterpret_cast<const float4*>(from);
  return quad;
}

/// Stage 09's matmul_vectorized on its 16-byte path, for the 128x128x16/8x8 set (a block of 256
/// threads, a thread tile of 8 x 8), with the right-edge guard of the loads switchable: with
/// kCheckRowEnd it is the stage's kernel, the control; without, the broken copy. Its stores keep
/// their guard, so everything it writes lies inside C.
template <bool kCheckRowEnd>
__global__ void __launch_bounds__(256)
    broken_vectorized_matmul(const float* a, const float* b, float* c, std::int64_t m, std::int64_t n,
                             std::int64_t k) {
  constexpr int kBlockM = 128, kBlockN = 128, kBlockK = 16, kThreadM = 8, kThreadN = 8;
  constexpr int kThreads = (kBlockM / kThreadM) * (kBlockN / kThreadN);
  constexpr int kAQuadsPerRow = kBlockK / 4;
  constexpr int kARowsPerPass = kThreads / kAQuadsPerRow;
  constexpr int kAPasses = kBlockM / kARowsPerPass;
  constexpr int kBQuadsPerRow = kBlockN / 4;
  constexpr int kBRowsPerPass = kThreads / kBQuadsPerRow;
  constexpr int kBPasses = kBlockK / kBRowsPerPass;
  __shared__ __align__(16) float tile_a[kBlockK][kBlockM];
  __shared__ __align__(16) float tile_b[kBlockK][kBlockN];

  const int thread_col = threadIdx.x % (kBlockN / kThreadN);
  const int thread_row = threadIdx.x / (kBlockN / kThreadN);
  const int a_load_row = threadIdx.x / kAQuadsPerRow;
  const int a_load_col = threadIdx.x % kAQuadsPerRow * 4;
  const int b_load_row = threadIdx.x / kBQuadsPerRow;
  const int b_load_col = threadIdx.x % kBQuadsPerRow * 4;

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
  // Broken: nor does it move a column past the edge of B back to column 0, so those loads really
  // read past the end of the row.
  const bool b_col_in_b = b_col < n || !kCheckRowEnd;
  const float* b_next = b + static_cast<std::int64_t>(b_load_row) * n + (b_col_in_b ? b_col : 0);
  const std::int64_t b_pass_step = static_cast<std::int64_t>(kBRowsPerPass) * n;
  const std::int64_t b_step = static_cast<std::int64_t>(kBlockK) * n;

  float sums[kThreadM][kThreadN] = {};
  for (int k_tile = 0; k_tile < k; k_tile += kBlockK) {
#pragma unroll
    for (int p = 0; p < kAPasses; ++p) {
      const float4 quad = load_quad<kCheckRowEnd>(a_next[p], a_row_in_a[p], k_tile + a_load_col, k);
      const int a_row = a_load_row + p * kARowsPerPass;
      tile_a[a_load_col + 0][a_row] = quad.x;
      tile_a[a_load_col + 1][a_row] = quad.y;
      tile_a[a_load_col + 2][a_row] = quad.z;
      tile_a[a_load_col + 3][a_row] = quad.w;
    }
#pragma unroll
    for (int p = 0; p < kBPasses; ++p) {
      const int b_row = b_load_row + p * kBRowsPerPass;
      *reinterpret_cast<float4*>(&tile_b[b_row][b_load_col]) =
          load_quad<kCheckRowEnd>(b_next + p * b_pass_step, k_tile + b_row < k, b_col, n);
    }
    __syncthreads();
#pragma unroll
    for (int i = 0; i < kBlockK; ++i) {
      float fragment_a[kThreadM];
      float fragment_b[kThreadN];
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
    __syncthreads();
#pragma unroll
    for (int p = 0; p < kAPasses; ++p) a_next[p] += kBlockK;
    b_next += b_step;
  }
#pragma unroll
  for (int r = 0; r < kThreadM; ++r) {
    const std::int64_t row = block_row + thread_row * kThreadM + r;
    if (row >= m) continue;
#pragma unroll
    for (int cc = 0; cc < kThreadN; cc += 4) {
      const std::int64_t col = block_col + thread_col * kThreadN + cc;
      const float4 quad = make_float4(sums[r][cc], sums[r][cc + 1], sums[r][cc + 2], sums[r][cc + 3]);
      if (col < n) *reinterpret_cast<float4*>(c + row * n + col) = quad;
    }
  }
}

/// Floats past a row that the broken copy can read: less than a block's columns (B) or a step
/// along K (A) beyond the end of the last row.
constexpr std::size_t kOverhang = 128 + 16;

/// @p matrix, followed (unless @p exact) by kOverhang NaNs: what the unguarded loads meet past it.
cs::HostMatrix with_overhang(const cs::HostMatrix& matrix, bool exact) {
  cs::HostMatrix padded = matrix;
  cs::HostMatrix beyond(exact ? 0 : kOverhang);
  cs::poison(beyond);
  padded.insert(padded.end(), beyond.begin(), beyond.end());
  return padded;
}

/// Parses, runs the chosen copy through the stages' verification, and reports: exit 0 when the
/// result passes, 1 when the check catches it.
int main(int argc, char** argv) {
  // 1. Parse. The default size runs the 16-byte path (n and k multiples of 4), and its n is a
  //    multiple of no block's columns.
  cs::MatmulShape shape;
  shape.m = 133;
  shape.n = 68;
  shape.k = 76;
  cs::RunOptions run;
  run.warmup = 0;
  run.reps = 1;
  std::string variant = "no-row-end-check";
  bool exact_buffers = false;
  cs::CommandLine cli("broken_vectorized",
                      "A copy of stage 09's kernel whose 16-byte loads ignore the right edge, to show that "
                      "the checks catch it.");
  cs::add_shape_options(cli, shape);
  cli.add_choice("variant", &variant, {"correct", "no-row-end-check"},
                 "correct: the stage's kernel (the control); no-row-end-check: its loads read past the "
                 "ends of the rows");
  cli.add_flag("exact-buffers", &exact_buffers,
               "allocate A and B exactly, with nothing past them (for memcheck: the unguarded loads then "
               "read outside the allocations)");
  cs::add_run_options(cli, run, /*gpu=*/true);
  cli.add_validator([&] {
    if (shape.n % 4 != 0 || shape.k % 4 != 0)
      throw cs::UsageError("--n and --k must be multiples of 4: this copy is the 16-byte path only");
  });
  cs::parse_or_exit(cli, argc, argv);
  const bool check_row_end = variant == "correct";

  // 2. The GPU.
  const cs::DeviceInfo device = cs::pick_device(run.device);
  std::printf("broken_vectorized --variant %s on %s, C (%lld x %lld) = A (%lld x %lld) * B (%lld x %lld)\n",
              variant.c_str(), device.name.c_str(), static_cast<long long>(shape.m),
              static_cast<long long>(shape.n), static_cast<long long>(shape.m),
              static_cast<long long>(shape.k), static_cast<long long>(shape.k),
              static_cast<long long>(shape.n));

  // 3. Inputs on the device (cudaMalloc: 16-byte aligned), each followed by NaNs unless exact; C
  //    poisoned, so an element no thread writes fails the check.
  const cs::HostMatrix a = cs::random_matrix(shape.m, shape.k, run.seed, cs::Operand::kA);
  const cs::HostMatrix b = cs::random_matrix(shape.k, shape.n, run.seed, cs::Operand::kB);
  const cs::DeviceBuffer<float> d_a(with_overhang(a, exact_buffers));
  const cs::DeviceBuffer<float> d_b(with_overhang(b, exact_buffers));
  cs::DeviceBuffer<float> d_c(static_cast<std::size_t>(shape.m * shape.n));
  d_c.poison();

  // 4. Run (and time, to report like a stage), copy back, verify.
  const dim3 grid(static_cast<unsigned>((shape.n + 127) / 128), static_cast<unsigned>((shape.m + 127) / 128));
  const cs::TimingStats time = cs::time_with_events(run, [&] {
    if (check_row_end)
      broken_vectorized_matmul<true>
          <<<grid, 256>>>(d_a.get(), d_b.get(), d_c.get(), shape.m, shape.n, shape.k);
    else
      broken_vectorized_matmul<false>
          <<<grid, 256>>>(d_a.get(), d_b.get(), d_c.get(), shape.m, shape.n, shape.k);
    CUDA_CHECK_LAUNCH();
  });
  cs::HostMatrix c = cs::poisoned_matrix(d_c.size());
  d_c.to_host(c);
  cs::Measurement result;
  result.name = variant;
  result.what = "stage 09's kernel, 128x128x16/8x8, 16-byte path, variant " + variant;
  result.time = time;
  result.rate = cs::matmul_gflops(shape, time.median_ms);
  result.check = cs::verify_matmul(a, b, c, shape, run.check, run.seed);

  // 5. Report. For the broken variant, "Result = FAIL" is the expected outcome: the check caught it.
  cs::Report report("broken_vectorized", cs::to_string(shape), "GFLOP/s", "");
  report.add(result);
  return report.finish(run);
}
