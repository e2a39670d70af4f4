// 02_naive_kernel: the two outer loops of stage 01 become threads.
//
// One thread per element of C, numbered along the rows of C: a 1-D grid of 1-D blocks (256
// threads by default, as in the original tutorial), and thread idx runs stage 01's k-loop for
// C[idx / n][idx % n] alone, reading A and B straight from global memory. Neighbouring threads
// read neighbouring elements of B (coalesced) and the same element of A (a broadcast). Thread 0 of
// every block stamps clock64() as the original tutorial did; CUDA events give the real time.
//
// Run:  02_naive_kernel --size 4096 --block 1024   (no options: the original tutorial's 1000 x 1000 x 1000;
//       --plan: print the launch and exit, no GPU needed; --help: every option)
// Everything but the kernel and its launch is the host flow every matmul stage shares
// (common/matmul_flow.cu: parse, generate, copy, time, verify, cuBLAS, report).
/// @file
/// @brief Stage 02: one thread per element of C (chapter: 02_naive_kernel/README.md).
#include "matmul_flow.cuh"

#include <cstdint>
#include <string>

// This stage's own names (every matmul stage has a StageOptions and a plan_launch of its own).
namespace stage02 {

/// C = A·B with one thread per element of C (A is m×k, B is k×n, C is m×n, all row-major).
///
/// Threads are numbered along the rows of C: thread idx computes C[idx / n][idx % n]. The 32
/// threads of a warp therefore share a row (they all read the same A[row][i]: one broadcast) and
/// take consecutive columns (they read B[i][col .. col+31]: one coalesced 128-byte line), except
/// where a warp straddles the end of a row. The grid is rounded up to whole blocks; the threads
/// past the last element do no work.
///
/// Thread 0 of each block stamps clock64() into @p block_stamps at its start and end (null: none).
///
/// @tparam Index `int` when every index of the problem fits in 32 bits, else `std::int64_t` (m·n,
///         m·k and k·n can pass 2^31): 32-bit index arithmetic is cheaper on a GPU, and the host
///         picks it whenever it is safe (chapter 02).
template <typename Index>
__global__ void matmul_naive(const float* a, const float* b, float* c, Index m, Index n, Index k,
                             long long* block_stamps) {
  cs::stamp_block_start(block_stamps);
  // LAB 02.kernel: thread idx of the grid computes element idx of C (row-major), if in C: stage 01's k-loop
  const Index idx = static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x;
  const Index row = idx / n;
  const Index col = idx % n;
  if (row < m) {
    float sum = 0.0f;
    for (Index i = 0; i < k; ++i) sum += a[row * k + i] * b[i * n + col];
    c[row * n + col] = sum;
  }
  // END LAB
  cs::stamp_block_end(block_stamps);
}

/// The stage's own option.
struct StageOptions {
  int threads_per_block = 256; ///< `--block`: threads in each 1-D block
};

/// Declares `--block` on @p cli.
void add_stage_options(cs::CommandLine& cli, StageOptions& options) {
  cli.add_int("block", &options.threads_per_block, 1, cs::kMaxThreadsPerBlock, "threads per 1-D block");
}

/// Plans the launch: one thread per element of C, rounded up to whole blocks of `--block` threads.
cs::MatmulLaunch plan_launch(const StageOptions& options, const cs::MatmulShape& shape) {
  const std::int64_t threads = options.threads_per_block;
  const std::int64_t blocks = (shape.m * shape.n + threads - 1) / threads;
  const dim3 grid = cs::grid_of(blocks);
  const dim3 block(static_cast<unsigned>(threads));
  cs::MatmulLaunch launch;
  launch.name = "naive";
  launch.what = "one thread per element of C, 1-D blocks of " + std::to_string(threads) + " threads";
  launch.grid = grid;
  launch.block = block;
  launch.notes = {"thread idx computes C[idx / n][idx % n]",
                  "global loads per element of C: 2K = " + std::to_string(2 * shape.k) +
                      " (a row of A and a column of B, no reuse but what the caches catch)"};
  launch.block_clocks = true;
  launch.run = [=](const cs::MatmulArgs& p) {
    cs::with_index_type(p, [&](auto m, auto n, auto k) {
      matmul_naive<<<grid, block>>>(p.a, p.b, p.c, m, n, k, p.block_stamps);
    });
    CUDA_CHECK_LAUNCH();
  };
  return launch;
}

} // namespace stage02

/// Hands the kernel's launch and the stage's option to the host flow every matmul stage shares.
int main(int argc, char** argv) {
  stage02::StageOptions options;
  return cs::run_matmul_stage(
      {"02_naive_kernel", "C = A*B on the GPU, one thread per element of C in a 1-D grid of 1-D blocks.",
       [&](cs::CommandLine& cli) { stage02::add_stage_options(cli, options); },
       [&](const cs::MatmulShape& shape) { return stage02::plan_launch(options, shape); }},
      argc, argv);
}
