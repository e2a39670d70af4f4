// broken_matmul: shows that the checks bite.
//
// Copies of stage 04's tiled kernel with one safeguard removed each: the bounds checks and the
// zero-fill at the edges (as the original tutorial had it), the barrier after the tile loads, or
// the barrier after the products. Run at a size that is a multiple of no tile, the first is caught
// by the same verification the stages use. A missing barrier is a race: whether it corrupts a
// given run depends on timing, so it is caught by compute-sanitizer racecheck instead, which sees
// the hazard whether or not it bit. The teaching kernels stay clean; these copies exist to fail.
#include "cli.hpp"
#include "cuda_check.cuh"
#include "device_info.cuh"
#include "gpu_timer.cuh"
#include "matrix.hpp"
#include "report.hpp"
#include "verify.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

/// Which safeguard a copy of the tiled kernel lacks.
enum class Breakage {
  kNone,                   ///< the correct kernel: the control, showing the harness itself passes
  kNoBoundsChecks,         ///< loads and store unguarded, as if every size were a multiple of the tile
  kNoBarrierAfterLoads,    ///< threads read the tiles before the others have finished loading them
  kNoBarrierAfterProducts, ///< threads load the next tiles while others still read these
};

/// Tile width of the broken copies: 16 x 16 threads, eight warps, so the races cross warps.
constexpr int kTile = 16;

/// Stage 04's tiled kernel (see 04_shared_tiled/main.cu) with the safeguard @p kBreakage names
/// removed at compile time; with Breakage::kNone it is the correct kernel.
template <Breakage kBreakage>
__global__ void broken_tiled_matmul(const float* a, const float* b, float* c, std::int64_t m, std::int64_t n,
                                    std::int64_t k) {
  __shared__ float tile_a[kTile][kTile];
  __shared__ float tile_b[kTile][kTile];
  const int local_row = threadIdx.y;
  const int local_col = threadIdx.x;
  const std::int64_t row = static_cast<std::int64_t>(blockIdx.y) * kTile + local_row;
  const std::int64_t col = static_cast<std::int64_t>(blockIdx.x) * kTile + local_col;
  float sum = 0.0f;
  for (std::int64_t k_tile = 0; k_tile < k; k_tile += kTile) {
    const std::int64_t a_col = k_tile + local_col;
    const std::int64_t b_row = k_tile + local_row;
    if constexpr (kBreakage == Breakage::kNoBoundsChecks) {
      // Broken: past the right edge of A this reads the next row's elements, past the bottom of A
      // or B whatever lies beyond the matrix, instead of zeros.
      tile_a[local_row][local_col] = a[row * k + a_col];
      tile_b[local_row][local_col] = b[b_row * n + col];
    } else {
      tile_a[local_row][local_col] = (row < m && a_col < k) ? a[row * k + a_col] : 0.0f;
      tile_b[local_row][local_col] = (b_row < k && col < n) ? b[b_row * n + col] : 0.0f;
    }
    if constexpr (kBreakage != Breakage::kNoBarrierAfterLoads) __syncthreads();
    for (int i = 0; i < kTile; ++i) sum += tile_a[local_row][i] * tile_b[i][local_col];
    if constexpr (kBreakage != Breakage::kNoBarrierAfterProducts) __syncthreads();
  }
  // Broken too in kNoBoundsChecks: a column past the right edge of C lands in the next row.
  if (kBreakage == Breakage::kNoBoundsChecks || (row < m && col < n)) c[row * n + col] = sum;
}

/// Launches the copy of the kernel that @p breakage names on a grid covering C and checks the launch.
void launch_broken(Breakage breakage, const float* a, const float* b, float* c,
                   const cs::MatmulShape& shape) {
  const dim3 block(kTile, kTile);
  const dim3 grid(static_cast<unsigned>((shape.n + kTile - 1) / kTile),
                  static_cast<unsigned>((shape.m + kTile - 1) / kTile));
  switch (breakage) {
    case Breakage::kNone:
      broken_tiled_matmul<Breakage::kNone><<<grid, block>>>(a, b, c, shape.m, shape.n, shape.k);
      break;
    case Breakage::kNoBoundsChecks:
      broken_tiled_matmul<Breakage::kNoBoundsChecks><<<grid, block>>>(a, b, c, shape.m, shape.n, shape.k);
      break;
    case Breakage::kNoBarrierAfterLoads:
      broken_tiled_matmul<Breakage::kNoBarrierAfterLoads>
          <<<grid, block>>>(a, b, c, shape.m, shape.n, shape.k);
      break;
    case Breakage::kNoBarrierAfterProducts:
      broken_tiled_matmul<Breakage::kNoBarrierAfterProducts>
          <<<grid, block>>>(a, b, c, shape.m, shape.n, shape.k);
      break;
  }
  CUDA_CHECK_LAUNCH();
}

/// Elements to allocate beyond a rows × cols matrix so that the unguarded kernel, whose grid and
/// k-loop overhang every edge by less than a tile, stays inside the allocation: its furthest
/// access is below (rows + kTile) · cols + kTile.
std::int64_t overhang_elements(std::int64_t cols) {
  return kTile * cols + kTile;
}

/// Allocates a device copy of @p matrix (rows × @p cols) followed, unless @p exact, by
/// overhang_elements(cols) elements of @p beyond: what an unguarded kernel reads past the edge.
float* upload_with_overhang(const cs::HostMatrix& matrix, std::int64_t cols, bool exact,
                            const cs::HostMatrix& beyond) {
  const std::size_t extra = exact ? 0 : static_cast<std::size_t>(overhang_elements(cols));
  float* device = nullptr;
  CUDA_CHECK(cudaMalloc(&device, (matrix.size() + extra) * sizeof(float)));
  CUDA_CHECK(cudaMemcpy(device, matrix.data(), matrix.size() * sizeof(float), cudaMemcpyHostToDevice));
  if (extra > 0)
    CUDA_CHECK(
        cudaMemcpy(device + matrix.size(), beyond.data(), extra * sizeof(float), cudaMemcpyHostToDevice));
  return device;
}

/// Parses, runs the chosen copy through the stages' verification, and reports: exit 0 when the
/// result passes, 1 when the check catches it.
int main(int argc, char** argv) {
  // 1. Parse. The default size is a multiple of no tile along any dimension.
  cs::MatmulShape shape;
  shape.m = 37;
  shape.n = 29;
  shape.k = 53;
  cs::RunOptions run;
  run.warmup = 0;
  run.reps = 1;
  std::string variant = "no-bounds-checks";
  bool exact_buffers = false;
  cs::CommandLine cli("broken_matmul",
                      "Deliberately broken copies of the tiled kernel, to show that the checks catch them.");
  cs::add_shape_options(cli, shape);
  cli.add_choice("variant", &variant,
                 {"correct", "no-bounds-checks", "no-barrier-after-loads", "no-barrier-after-products"},
                 "which safeguard the kernel lacks (correct: none, the control)");
  cli.add_flag("exact-buffers", &exact_buffers,
               "allocate A, B and C exactly, with no room past them (for memcheck: the unguarded "
               "kernel then reads and writes outside its allocations)");
  cs::add_run_options(cli, run, /*gpu=*/true);
  cs::parse_or_exit(cli, argc, argv);
  const Breakage breakage = variant == "correct"                  ? Breakage::kNone
                            : variant == "no-bounds-checks"       ? Breakage::kNoBoundsChecks
                            : variant == "no-barrier-after-loads" ? Breakage::kNoBarrierAfterLoads
                                                                  : Breakage::kNoBarrierAfterProducts;

  // 2. The GPU.
  const cs::DeviceInfo device = cs::pick_device(run.device);
  std::printf(
      "broken_matmul --variant %s on %s, C (%lld x %lld) = A (%lld x %lld) * B (%lld x %lld), "
      "tile %d\n",
      variant.c_str(), device.name.c_str(), static_cast<long long>(shape.m), static_cast<long long>(shape.n),
      static_cast<long long>(shape.m), static_cast<long long>(shape.k), static_cast<long long>(shape.k),
      static_cast<long long>(shape.n), kTile);

  // 3. Inputs, and what lies beyond them: other data, never zeros, as in a real allocation.
  const cs::HostMatrix a = cs::random_matrix(shape.m, shape.k, run.seed, cs::Operand::kA);
  const cs::HostMatrix b = cs::random_matrix(shape.k, shape.n, run.seed, cs::Operand::kB);
  const cs::HostMatrix beyond_a = cs::random_matrix(1, overhang_elements(shape.k), run.seed, cs::Operand::kX);
  const cs::HostMatrix beyond_b = cs::random_matrix(1, overhang_elements(shape.n), run.seed, cs::Operand::kY);
  cs::HostMatrix beyond_c(static_cast<std::size_t>(overhang_elements(shape.n)));
  cs::poison(beyond_c);

  // 4. Device buffers; C poisoned, so an element no thread writes fails the check.
  const std::size_t c_count = static_cast<std::size_t>(shape.m * shape.n);
  cs::HostMatrix c(c_count);
  cs::poison(c);
  float* d_a = upload_with_overhang(a, shape.k, exact_buffers, beyond_a);
  float* d_b = upload_with_overhang(b, shape.n, exact_buffers, beyond_b);
  float* d_c = upload_with_overhang(c, shape.n, exact_buffers, beyond_c);

  // 5. Run (and time, to report like a stage), copy back, verify.
  const cs::TimingStats time =
      cs::time_with_events(run, [&] { launch_broken(breakage, d_a, d_b, d_c, shape); });
  CUDA_CHECK(cudaMemcpy(c.data(), d_c, c_count * sizeof(float), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaFree(d_a));
  CUDA_CHECK(cudaFree(d_b));
  CUDA_CHECK(cudaFree(d_c));
  cs::Measurement result;
  result.name = variant;
  result.what = "stage 04's tiled kernel, tile " + std::to_string(kTile) + ", variant " + variant;
  result.time = time;
  result.rate = cs::matmul_gflops(shape, time.median_ms);
  result.check = cs::verify_matmul(a, b, c, shape, run.check, run.seed);

  // 6. Report. For a broken variant, "Result = FAIL" is the expected outcome: the check caught it.
  cs::Report report("broken_matmul", cs::to_string(shape), "GFLOP/s", "");
  report.add(result);
  return report.finish(run);
}
