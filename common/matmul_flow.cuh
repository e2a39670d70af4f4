/// @file matmul_flow.cuh
/// @brief The host side of every matrix-multiply stage, written once.
///
/// A GPU program is mostly the same few steps around its kernel: parse the command line, pick the
/// GPU, generate the inputs, allocate device memory and copy them over, launch (warmed up and
/// timed), copy the result back, verify it, and report. run_matmul_stage() is those steps, in that
/// order, for C = A·B; a stage's `main.cu` holds only what is its own, the kernel and how to launch
/// it for a given problem (a MatmulLaunch), and hands that over as a MatmulStage. Chapter 02 walks
/// through the flow step by step.
#pragma once

#include "cli.hpp"
#include "cuda_check.cuh"
#include "gpu_timer.cuh"

#include <cuda_bf16.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace cs {

/// Most threads in one block. This and the grid limits below hold on every GPU CUDA 13 supports.
constexpr int kMaxThreadsPerBlock = 1024;
/// Most blocks along x of a grid (2^31 − 1).
constexpr std::int64_t kMaxGridX = 2147483647;
/// Most blocks along y (and z) of a grid.
constexpr std::int64_t kMaxGridY = 65535;

/// A grid of @p blocks_x × @p blocks_y blocks. Throws UsageError when CUDA cannot launch that
/// many (x ≤ kMaxGridX, y ≤ kMaxGridY), so the problem is rejected before any GPU work.
dim3 grid_of(std::int64_t blocks_x, std::int64_t blocks_y = 1);

/// One problem on the device, as a stage's launch function receives it: C = A·B with A m×k,
/// B k×n and C m×n, row-major, in device memory. A and B hold @p Input: `float` for the FP32 stages
/// (MatmulArgs), `__nv_bfloat16` for the tensor-core stages (Bf16MatmulArgs); C is FP32 in both.
template <typename Input>
struct MatmulArgsOf {
  const Input* a = nullptr;          ///< A, m × k
  const Input* b = nullptr;          ///< B, k × n
  float* c = nullptr;                ///< C, m × n (poisoned before the first launch)
  std::int64_t m = 0;                ///< rows of A and C
  std::int64_t n = 0;                ///< columns of B and C
  std::int64_t k = 0;                ///< columns of A, rows of B
  long long* block_stamps = nullptr; ///< room for clock64() stamps, 2 per block (MatmulLaunch::block_clocks)
  bool int32_indices = false;        ///< every index of this launch fits in an `int` (launch_fits_int32)
};
/// The problem of an FP32 stage: A, B and C in FP32.
using MatmulArgs = MatmulArgsOf<float>;
/// The problem of a tensor-core stage: A and B in bfloat16, C in FP32.
using Bf16MatmulArgs = MatmulArgsOf<__nv_bfloat16>;

/// Calls @p launch with the sizes of @p p as three `int`s when every index of the launch fits in
/// 32 bits, else as three `std::int64_t`s, so that a kernel templated on its index type is
/// instantiated for the one the host picked: `with_index_type(p, [&](auto m, auto n, auto k) {
/// kernel<<<grid, block>>>(p.a, p.b, p.c, m, n, k); })`. Chapter 02 says why it pays.
template <typename Input, typename Launch>
void with_index_type(const MatmulArgsOf<Input>& p, Launch&& launch) {
  if (p.int32_indices)
    launch(static_cast<int>(p.m), static_cast<int>(p.n), static_cast<int>(p.k));
  else
    launch(p.m, p.n, p.k);
}

/// Whether every row of A (k elements), B (n) and C (n floats) starts on a 16-byte boundary, so that
/// 16 bytes of a row that start at a multiple of 16 bytes are one load, copy or store: n and k
/// multiples of 16 / sizeof(Input) (4 floats, 8 bf16), and the three matrices themselves 16-byte
/// aligned (cudaMalloc aligns them to 256). A stage with a 16-byte path checks this before each launch.
template <typename Input>
bool rows_are_16_byte_aligned(const MatmulArgsOf<Input>& p) {
  constexpr std::int64_t kPerChunk = 16 / sizeof(Input);
  const auto misaligned = [](const void* pointer) {
    return reinterpret_cast<std::uintptr_t>(pointer) % 16 != 0;
  };
  return p.n % kPerChunk == 0 && p.k % kPerChunk == 0 && !misaligned(p.a) && !misaligned(p.b) &&
         !misaligned(p.c);
}

/// What a launch looks like, whatever the element type: its geometry and what the report calls it.
struct LaunchPlan {
  std::string name;               ///< the variant's name in the report, e.g. "tiled32"
  std::string what;               ///< what the variant is, one line for the report
  dim3 grid;                      ///< blocks in the grid
  dim3 block;                     ///< threads in each block
  std::size_t shared_bytes = 0;   ///< shared memory per block, static and dynamic (for the plan printout)
  std::vector<std::string> notes; ///< lines printed under the launch: who computes what, loads per element
  bool block_clocks = false;      ///< the kernel stamps clock64() per block, as the original tutorial did
  /// The kernel is templated on its index type and launched through with_index_type() (32-bit
  /// indices when they fit); false: it takes 64-bit sizes and offsets whatever the problem.
  bool index_width_from_host = true;
};

/// How a stage launches its kernel for one problem size: the launch geometry, what the report
/// calls it, and the launch itself.
template <typename Input>
struct MatmulLaunchOf : LaunchPlan {
  std::function<void(const MatmulArgsOf<Input>&)> run; ///< enqueues the kernel and checks the launch
};
/// The launch of an FP32 stage.
using MatmulLaunch = MatmulLaunchOf<float>;
/// The launch of a tensor-core stage (bf16 A and B).
using Bf16MatmulLaunch = MatmulLaunchOf<__nv_bfloat16>;

/// A matrix-multiply stage, as its `main()` hands it to run_matmul_stage().
template <typename Input>
struct MatmulStageOf {
  std::string name;    ///< the directory, the program and the report's stage, e.g. "04_shared_tiled"
  std::string summary; ///< one sentence for `--help`
  /// Declares the stage's own options (`--block`, `--tile`, ...) on the command line.
  std::function<void(CommandLine&)> add_options;
  /// Plans the launch for a problem; throws UsageError when the stage cannot launch it.
  std::function<MatmulLaunchOf<Input>(const MatmulShape&)> plan;
  /// The oldest GPU the kernel runs on, as 10 x major + minor (80: compute capability 8.0); on an
  /// older one the stage exits 77 with one line that names both. 0: any GPU CUDA 13 supports.
  int min_compute_capability = 0;
  /// What needs that capability, for that line (e.g. "bf16 mma.sync").
  std::string needs;
  /// The kernel is built for an architecture-specific target (sm_90a: wgmma, setmaxnreg), whose
  /// code runs on that one compute capability and on no later GPU: then any other capability exits 77.
  bool exactly_that_capability = false;
  /// bf16 stages: the products are summed on the tensor cores, checked with their tolerance and
  /// reported against the bf16 peak. false: FP32 multiply-adds on the CUDA cores (stage 12), the
  /// FP32 tolerance and peak. The FP32 stages ignore it.
  bool tensor_core_sums = true;
};
/// An FP32 stage.
using MatmulStage = MatmulStageOf<float>;
/// A bf16 stage: bf16 A and B, FP32 sums and C, checked with the tensor-core tolerance (verify.hpp;
/// the FP32 one where the sums are not the tensor cores') and measured against cuBLAS with the same types.
using Bf16MatmulStage = MatmulStageOf<__nv_bfloat16>;

/// Whether every index of @p launch on @p shape fits in 32 bits: the element counts of A, B and C,
/// and the number of threads launched.
bool launch_fits_int32(const LaunchPlan& launch, const MatmulShape& shape);

/// Prints the launch: grid, block, threads, shared memory, the stage's notes, the index width.
void print_launch(const LaunchPlan& launch, const MatmulShape& shape);

/// The whole host flow of a matrix-multiply stage: parse, pick the GPU, generate, allocate and
/// copy, warm up and time, copy back, verify, measure cuBLAS, report. Returns the exit code
/// (0 pass, 1 verification failed); bad input exits 2 before any GPU work, no GPU (or one older
/// than the stage needs) exits 77, a CUDA error exits 3. One flow for both element types
/// (matmul_flow.cu instantiates it for `float` and `__nv_bfloat16`).
template <typename Input>
int run_matmul_stage(const MatmulStageOf<Input>& stage, int argc, char** argv);

/// The FP32 stages' call, `run_matmul_stage({name, summary, options, plan}, argc, argv)`: a braced
/// list names no element type, so this overload gives it one.
inline int run_matmul_stage(const MatmulStage& stage, int argc, char** argv) {
  return run_matmul_stage<float>(stage, argc, argv);
}

} // namespace cs
