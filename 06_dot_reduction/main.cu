// 06_dot_reduction: N products, one number — the book's dot product, then as fast as cuBLAS.
//
// Until now every thread wrote an output element of its own. A dot product ends in one number, so
// the threads have to combine their work: inside a block through shared memory or warp shuffles,
// across blocks through the host or atomics. Four kernels side by side on the same data, timed
// against cublasSdot; each result is checked against a double sum with a bound that follows its own
// summation tree (the error model is in error_model.hpp, with its own tests).
//
// The variants, each with the command that runs it beside cublasSdot; with no --variant all of
// them run, on the book's N = 33*1024 and a[i] = i, b[i] = 2i:
//   book        the book's kernel, min(32, ceil(N/block)) blocks         06_dot_reduction --variant book
//   sm_grid     the same kernel, a grid that fills the GPU               06_dot_reduction --variant sm_grid
//   atomic      the same block sum, one atomicAdd per block              06_dot_reduction --variant atomic
//   shuffle     float4 loads, warp shuffles, full grid, atomicAdd        06_dot_reduction --variant shuffle
//   cublasSdot  the library: the yardstick, always runs                  06_dot_reduction
// --plan prints each variant's grid, block, shared memory and loads per element, and exits without
// touching a GPU.
/// @file
/// @brief Stage 06: the dot product, from the book to warp shuffles (chapter: 06_dot_reduction/README.md).
#include "cli.hpp"
#include "cuda_check.cuh"
#include "device_info.cuh"
#include "error_model.hpp"
#include "exit_codes.hpp"
#include "gpu_timer.cuh"
#include "matrix.hpp"
#include "report.hpp"
#include "verify.hpp"

#include <cublas_v2.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <new>
#include <string>
#include <vector>

constexpr unsigned kFullWarp = 0xffffffffu; ///< shuffle mask: every lane of the warp takes part
constexpr int kMinThreadsPerBlock = 32;     ///< one whole warp: the shuffles need it
/// The most threads a block may have, on every GPU that CUDA 13 supports (compute capability 7.5
/// and later): `--block` is checked against it before any GPU work, with no device query.
constexpr int kMaxThreadsPerBlock = 1024;
constexpr std::int64_t kBookElements = 33 * 1024;  ///< the book's N
constexpr int kBookThreadsPerBlock = 256;          ///< the book's threadsPerBlock
constexpr std::int64_t kBookMaxBlocks = 32;        ///< the book's min(32, ...)
constexpr std::int64_t kBookExactFloats = 1 << 24; ///< every integer up to 2^24 is an exact float

// ---------------------------------------------------------------------------------------------
// Kernels
// ---------------------------------------------------------------------------------------------

/// The book's work for one block, for any N and any grid: each thread adds its products, then the
/// block adds its threads' sums with the halving tree. Leaves the block's sum in cache[0].
///
/// The loop lets fewer threads than elements cover the vector: a thread starts at its index in the
/// grid and steps by the number of threads in the grid (64-bit: N may pass 2^31). The tree adds the
/// upper half of the cache onto the lower half, halving the active threads at every step, which
/// needs blockDim.x to be a power of two: with 384 threads the steps 192, 96, 48, 24, 12, 6, 3, 1
/// leave 3 sums before the last step, and cache[2] is silently dropped. The barrier sits outside
/// the `if`, so every thread of the block reaches it.
__device__ void book_block_sum(const float* __restrict__ a, const float* __restrict__ b, std::int64_t n,
                               float* cache) {
  const std::int64_t grid_threads = static_cast<std::int64_t>(blockDim.x) * gridDim.x;
  float sum = 0.0f;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += grid_threads)
    sum += a[i] * b[i];
  cache[threadIdx.x] = sum;
  __syncthreads(); // every thread's sum is in the cache before anyone reads a neighbour's
  // LAB 06.book_tree: per level, the lower half of the active threads adds the upper half; then a barrier
  for (unsigned half = blockDim.x / 2; half != 0; half /= 2) {
    if (threadIdx.x < half) cache[threadIdx.x] += cache[threadIdx.x + half];
    __syncthreads(); // this level is complete before the next one reads it
  }
  // END LAB
}

/// Variants "book" and "sm_grid": the book's kernel. Block b writes its sum to partial_sums[b];
/// the host copies the partial sums back and adds them. Dynamic shared memory: blockDim.x floats.
__global__ void dot_book(const float* __restrict__ a, const float* __restrict__ b, std::int64_t n,
                         float* partial_sums) {
  extern __shared__ float cache[];
  book_block_sum(a, b, n, cache);
  if (threadIdx.x == 0) partial_sums[blockIdx.x] = cache[0];
}

/// Variant "atomic": the same block sum, added straight into *result by thread 0 of each block.
/// *result must be zero before the launch. Floating-point atomicAdd on global memory is native
/// since compute capability 2.0; the blocks add in whatever order they finish, so the last bits of
/// the result can differ from run to run. Dynamic shared memory: blockDim.x floats.
__global__ void dot_atomic(const float* __restrict__ a, const float* __restrict__ b, std::int64_t n,
                           float* result) {
  extern __shared__ float cache[];
  book_block_sum(a, b, n, cache);
  if (threadIdx.x == 0) atomicAdd(result, cache[0]);
}

/// Sum of @p value over the 32 lanes of the warp, valid in lane 0. Each step adds the value held
/// `offset` lanes higher (16, 8, 4, 2, 1): the halving tree again, in registers, with no shared
/// memory and no barrier. __shfl_down_sync names the lanes that take part, which is what makes it
/// correct on GPUs whose warps' threads are scheduled independently (Volta and later).
__device__ float warp_sum(float value) {
  // LAB 06.warp_sum: add the value held 16, 8, 4, 2 and 1 lanes higher, with __shfl_down_sync
  // LAB-STUB: static_cast<void>(kFullWarp);
  for (int offset = kWarpSize / 2; offset > 0; offset /= 2)
    value += __shfl_down_sync(kFullWarp, value, offset);
  // END LAB
  return value;
}

/// Variant "shuffle": the fast one. Each thread reads 16 bytes of a and of b per load (float4) and
/// adds many products in a register; the first @p vector_groups groups of 4 elements are read that
/// way (the host passes N/4 when both vectors are 16-byte aligned, 0 otherwise), the elements after
/// them one at a time. Each warp then sums with shuffles, warp 0 sums the warps' sums the same way,
/// and thread 0 adds the block's sum into *result (zero before the launch). blockDim.x must be a
/// multiple of 32.
__global__ void dot_shuffle(const float* __restrict__ a, const float* __restrict__ b, std::int64_t n,
                            std::int64_t vector_groups, float* result) {
  // LAB 06.shuffle: float4 loads, then single elements, into one running sum; warp sums; warp 0 adds them
  const std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::int64_t grid_threads = static_cast<std::int64_t>(blockDim.x) * gridDim.x;
  const float4* a4 = reinterpret_cast<const float4*>(a);
  const float4* b4 = reinterpret_cast<const float4*>(b);
  float sum = 0.0f;
  for (std::int64_t group = first; group < vector_groups; group += grid_threads) {
    const float4 x = a4[group];
    const float4 y = b4[group];
    sum = fmaf(x.x, y.x, sum); // the four products in element order: one running sum per thread
    sum = fmaf(x.y, y.y, sum);
    sum = fmaf(x.z, y.z, sum);
    sum = fmaf(x.w, y.w, sum);
  }
  for (std::int64_t i = 4 * vector_groups + first; i < n; i += grid_threads) sum = fmaf(a[i], b[i], sum);

  __shared__ float warp_sums[kMaxThreadsPerBlock / kWarpSize];
  const unsigned lane = threadIdx.x % kWarpSize;
  const unsigned warp = threadIdx.x / kWarpSize;
  sum = warp_sum(sum);
  if (lane == 0) warp_sums[warp] = sum;
  __syncthreads(); // every warp's sum is written before warp 0 reads them
  if (warp == 0) {
    const unsigned warps = blockDim.x / kWarpSize;
    sum = warp_sum(lane < warps ? warp_sums[lane] : 0.0f);
    if (lane == 0) atomicAdd(result, sum);
  }
  // END LAB
}

// ---------------------------------------------------------------------------------------------
// Launch shapes (SummationShape, in error_model.hpp, also records the order each one adds in)
// ---------------------------------------------------------------------------------------------

/// Blocks of @p threads_per_block threads needed to give every thread @p elements_per_thread
/// elements, but no more than @p cap.
std::int64_t blocks_for(std::int64_t n, std::int64_t elements_per_thread, int threads_per_block,
                        std::int64_t cap) {
  const std::int64_t per_block = elements_per_thread * threads_per_block;
  return std::max<std::int64_t>(1, std::min(cap, (n + per_block - 1) / per_block));
}

/// The launch shapes of the four variants, for N elements in blocks of `threads_per_block` threads.
struct DotPlan {
  SummationShape book;    ///< at most kBookMaxBlocks blocks, as the book
  SummationShape sm_grid; ///< as many blocks as the GPU keeps resident, unless N needs fewer
  SummationShape atomic;  ///< sm_grid's grid, the block sums added by atomicAdd
  SummationShape shuffle; ///< the same for the shuffle kernel, at least one float4 per thread
};

/// Plans the four launches. @p book_capacity and @p shuffle_capacity are the blocks of each kernel
/// the GPU keeps resident at once (SMs x blocks per SM); 0 when not known (no GPU asked: `--plan`),
/// and then each grid is as many blocks as N needs, the most it can be.
DotPlan plan_variants(std::int64_t n, int threads_per_block, std::int64_t book_capacity,
                      std::int64_t shuffle_capacity) {
  const std::int64_t unknown = std::numeric_limits<std::int64_t>::max();
  DotPlan plan;
  plan.book.threads_per_block = threads_per_block;
  plan.book.blocks = blocks_for(n, 1, threads_per_block, kBookMaxBlocks);
  plan.sm_grid = plan.book;
  plan.sm_grid.blocks = blocks_for(n, 1, threads_per_block, book_capacity > 0 ? book_capacity : unknown);
  plan.atomic = plan.sm_grid;
  plan.atomic.block_sums = BlockSums::kAtomicAnyOrder;
  plan.shuffle.threads_per_block = threads_per_block;
  plan.shuffle.blocks =
      blocks_for(n, 4, threads_per_block, shuffle_capacity > 0 ? shuffle_capacity : unknown);
  plan.shuffle.tree = BlockTree::kWarpShuffle;
  plan.shuffle.block_sums = BlockSums::kAtomicAnyOrder;
  return plan;
}

/// Shared memory per block of each kernel: the book's dynamic cache of one float per thread, or the
/// shuffle kernel's static array of one float per warp of the largest block.
std::size_t shared_bytes_of(const SummationShape& shape) {
  return shape.tree == BlockTree::kWarpShuffle
             ? kMaxThreadsPerBlock / kWarpSize * sizeof(float)
             : static_cast<std::size_t>(shape.threads_per_block) * sizeof(float);
}

/// Prints the launch plan of one variant, without a GPU: its grid (with @p capped, "up to": the GPU
/// may keep fewer blocks resident), its block, its shared memory and its loads per element.
void print_plan(const char* name, const SummationShape& shape, bool capped, const char* sums) {
  std::printf("  %-8s grid %s%lld blocks, block %d threads, %zu bytes of shared memory per block\n", name,
              capped ? "up to " : "", static_cast<long long>(shape.blocks), shape.threads_per_block,
              shared_bytes_of(shape));
  std::printf("  %-8s per element: 1 load of a and 1 of b, %s; %s\n", "",
              shape.tree == BlockTree::kWarpShuffle
                  ? "as float4, 4 elements per load (the last N mod 4 one by one)"
                  : "one float per load",
              sums);
}

/// Blocks of @p kernel that fit on one SM at once with @p threads_per_block threads.
template <typename Kernel>
int resident_blocks_per_sm(Kernel kernel, int threads_per_block, std::size_t dynamic_shared_bytes) {
  int blocks = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, threads_per_block,
                                                           dynamic_shared_bytes));
  return blocks;
}

// ---------------------------------------------------------------------------------------------
// Running and timing the variants
// ---------------------------------------------------------------------------------------------

/// The inputs on the device and the outputs the variants write.
struct DeviceData {
  const float* a = nullptr;      ///< first vector, n floats
  const float* b = nullptr;      ///< second vector, n floats
  std::int64_t n = 0;            ///< elements in each
  float* partial_sums = nullptr; ///< one per block (book, sm_grid)
  float* result = nullptr;       ///< one float (atomic, shuffle, cublasSdot)
};

/// One variant's measurement, the value it computed, and the summation order it used.
struct VariantRun {
  cs::Measurement measurement; ///< time and (after verification) its check
  float value = 0;             ///< the dot product of its last timed run
  SummationShape shape;        ///< its launch shape and summation order
  bool known_order = true;     ///< false for the library, whose order is not known
};

/// Book and sm_grid: the book's kernel with @p shape's grid; each run launches it, copies the
/// partial sums back and adds them on the host in float, as the book does. The events bracket all
/// three: the stop event is enqueued only after the host loop has finished.
VariantRun run_partial_sums(const std::string& name, const std::string& what, const DeviceData& data,
                            const SummationShape& shape, const cs::RunOptions& run) {
  const std::size_t partial_bytes = static_cast<std::size_t>(shape.blocks) * sizeof(float);
  const std::size_t shared_bytes = shared_bytes_of(shape);
  CUDA_CHECK(cudaMemset(data.partial_sums, cs::kPoisonByte, partial_bytes));
  std::vector<float> partial_sums(static_cast<std::size_t>(shape.blocks));
  VariantRun result;
  result.shape = shape;
  result.measurement.time = cs::time_with_events(run, [&] {
    dot_book<<<static_cast<unsigned>(shape.blocks), shape.threads_per_block, shared_bytes>>>(
        data.a, data.b, data.n, data.partial_sums);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaMemcpy(partial_sums.data(), data.partial_sums, partial_bytes, cudaMemcpyDeviceToHost));
    float sum = 0.0f;
    for (const float partial : partial_sums) sum += partial;
    result.value = sum;
  });
  result.measurement.name = name;
  result.measurement.what = what;
  return result;
}

/// Atomic and shuffle: one launch after zeroing the result; both inside the timed region.
template <typename Launch>
VariantRun run_one_pass(const std::string& name, const std::string& what, const DeviceData& data,
                        const SummationShape& shape, const cs::RunOptions& run, Launch&& launch) {
  CUDA_CHECK(cudaMemset(data.result, cs::kPoisonByte, sizeof(float)));
  VariantRun result;
  result.shape = shape;
  result.measurement.time = cs::time_with_events(run, [&] {
    CUDA_CHECK(cudaMemsetAsync(data.result, 0, sizeof(float)));
    launch();
    CUDA_CHECK_LAUNCH();
  });
  CUDA_CHECK(cudaMemcpy(&result.value, data.result, sizeof(float), cudaMemcpyDeviceToHost));
  result.measurement.name = name;
  result.measurement.what = what;
  return result;
}

/// The yardstick: cublasSdot on the same vectors, result left in device memory (device pointer
/// mode), so the call returns without waiting for the GPU and the events time only its kernels.
VariantRun run_cublas(cublasHandle_t handle, const DeviceData& data, const cs::RunOptions& run) {
  CUDA_CHECK(cudaMemset(data.result, cs::kPoisonByte, sizeof(float)));
  VariantRun result;
  result.known_order = false;
  result.measurement.time = cs::time_with_events(
      run, [&] { CUBLAS_CHECK(cublasSdot_64(handle, data.n, data.a, 1, data.b, 1, data.result)); });
  CUDA_CHECK(cudaMemcpy(&result.value, data.result, sizeof(float), cudaMemcpyDeviceToHost));
  result.measurement.name = "cublasSdot";
  result.measurement.what = "cublasSdot_64 in device pointer mode; time = the library's kernel(s)";
  result.measurement.is_yardstick = true;
  return result;
}

/// Reads `--block`: the halving tree needs a power of two, the shuffles whole warps.
int parse_threads_per_block(const std::string& text) {
  const std::string rule = "--block must be a power of two in [" + std::to_string(kMinThreadsPerBlock) +
                           ", " + std::to_string(kMaxThreadsPerBlock) + "]";
  const bool digits = !text.empty() && text.size() <= 9 &&
                      std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (!digits) throw cs::UsageError(rule + ", got '" + text + "'");
  const long value = std::stol(text);
  if (value < kMinThreadsPerBlock || value > kMaxThreadsPerBlock || (value & (value - 1)) != 0)
    throw cs::UsageError(rule + ", got " + text);
  return static_cast<int>(value);
}

/// The run's configuration beyond the shared run options.
struct DotOptions {
  std::int64_t n = kBookElements;               ///< elements in each vector
  int threads_per_block = kBookThreadsPerBlock; ///< `--block`
  std::string inputs = "auto";                  ///< auto, book or random
  std::string variant = "all";                  ///< all or one variant's name
};

/// The host flow: parse, pick the GPU, generate, allocate and copy, run and time every variant,
/// verify each against the double reference, report.
int main(int argc, char** argv) {
  // 1. Parse the command line: bad input stops here with exit code 2, before any GPU work.
  DotOptions options;
  cs::RunOptions run;
  cs::CommandLine cli("06_dot_reduction",
                      "dot(a, b) four ways: the book's kernel, a full grid, one atomic pass, warp "
                      "shuffles; against cublasSdot.");
  cli.add_int("n", &options.n, 1, kMaxElements, "elements in each vector (the book: 33*1024 = 33792)");
  cli.add_custom(
      "block", "N", std::to_string(options.threads_per_block),
      "threads per block: a power of two in [32, 1024] (the halving tree needs a power of "
      "two, the shuffles whole warps)",
      [&options](const std::string& v) { options.threads_per_block = parse_threads_per_block(v); });
  cli.add_choice("inputs", &options.inputs, {"auto", "book", "random"},
                 "book: a[i] = i, b[i] = 2i; random: seeded, uniform in [-1, 1); auto: book up to "
                 "N = 2^24 (where i is an exact float), random above");
  cli.add_choice("variant", &options.variant, {"all", "book", "sm_grid", "atomic", "shuffle"},
                 "which kernel(s) to run; cublasSdot always runs as the yardstick");
  cs::add_run_options(cli, run, /*gpu=*/true);
  bool plan_only = false;
  cli.add_flag("plan", &plan_only, "print each variant's launch plan and exit, without touching a GPU");
  cs::parse_or_exit(cli, argc, argv);
  const std::int64_t n = options.n;
  const int block_threads = options.threads_per_block;
  const bool book_inputs = options.inputs == "book" || (options.inputs == "auto" && n <= kBookExactFloats);
  const auto wanted = [&options](const char* name) {
    return options.variant == "all" || options.variant == name;
  };

  if (plan_only) {
    // Without a GPU the resident blocks are not known: the full grids are given as "up to".
    const DotPlan plan = plan_variants(n, block_threads, 0, 0);
    std::printf("06_dot_reduction: dot(a, b), N = %lld floats each, %d threads per block\n",
                static_cast<long long>(n), block_threads);
    if (wanted("book")) print_plan("book", plan.book, false, "the block sums added on the host");
    if (wanted("sm_grid")) print_plan("sm_grid", plan.sm_grid, true, "the block sums added on the host");
    if (wanted("atomic")) print_plan("atomic", plan.atomic, true, "one atomicAdd per block");
    if (wanted("shuffle")) print_plan("shuffle", plan.shuffle, true, "one atomicAdd per block");
    std::printf("  %-8s the library's own launch\n", "cublas");
    return cs::kExitPass;
  }

  // 2. Pick the GPU and say what it is.
  const cs::DeviceInfo info = cs::pick_device(run.device);
  cs::print_device_info(info);

  // 3. Generate the inputs: the book's a[i] = i, b[i] = 2i (rounded to float above 2^24), or
  //    seeded random values whose products have both signs, so the sum cancels.
  const std::size_t vector_bytes = static_cast<std::size_t>(n) * sizeof(float);
  cs::HostMatrix a, b;
  try {
    if (book_inputs) {
      a.resize(static_cast<std::size_t>(n));
      b.resize(static_cast<std::size_t>(n));
      cs::on_slices(n, [&](std::int64_t begin, std::int64_t end) { // large N: on several threads
        for (std::int64_t i = begin; i < end; ++i) {
          a[i] = static_cast<float>(i);
          b[i] = static_cast<float>(2 * i);
        }
      });
    } else {
      a = cs::random_matrix(1, n, run.seed, cs::Operand::kX);
      b = cs::random_matrix(1, n, run.seed, cs::Operand::kY);
    }
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr,
                 "error: the two input vectors need %.1f GiB of host memory, which is not available\n",
                 2.0 * vector_bytes / 1073741824.0);
    return cs::kExitBadInput;
  }
  const std::string inputs_text =
      book_inputs ? "book, a[i] = i and b[i] = 2i" : "random, seed " + std::to_string(run.seed);
  std::printf(
      "\n06_dot_reduction: dot(a, b), N = %lld floats each; inputs %s; %d threads per block; "
      "%d timed run(s) each\n",
      static_cast<long long>(n), inputs_text.c_str(), block_threads, run.reps);

  // 4. Launch shapes. book: at most 32 blocks, as the book. sm_grid and atomic: as many blocks as the
  //    GPU keeps resident at once (SMs x blocks per SM, from the occupancy calculator), unless N
  //    needs fewer. shuffle: the same for its own kernel, with at least one float4 per thread.
  const std::size_t shared_bytes = static_cast<std::size_t>(block_threads) * sizeof(float);
  const int book_per_sm = resident_blocks_per_sm(dot_book, block_threads, shared_bytes);
  const int shuffle_per_sm = resident_blocks_per_sm(dot_shuffle, block_threads, 0);
  const std::int64_t book_capacity = static_cast<std::int64_t>(info.sm_count) * book_per_sm;
  const std::int64_t shuffle_capacity = static_cast<std::int64_t>(info.sm_count) * shuffle_per_sm;

  const DotPlan plan = plan_variants(n, block_threads, book_capacity, shuffle_capacity);
  const SummationShape& book_shape = plan.book;
  const SummationShape& grid_shape = plan.sm_grid;
  const SummationShape& atomic_shape = plan.atomic;
  SummationShape shuffle_shape = plan.shuffle;

  // 5. Allocate and copy. cudaMalloc returns 256-byte aligned memory, so the shuffle kernel reads all
  //    but the last N mod 4 elements as float4 (were it not aligned, it would read them one by one).
  const std::size_t partial_bytes =
      static_cast<std::size_t>(std::max(book_shape.blocks, grid_shape.blocks)) * sizeof(float);
  const std::size_t library_room = std::size_t{64} << 20; // cuBLAS handle and workspace
  cs::require_device_memory(info, 2 * vector_bytes + partial_bytes + library_room, "the two input vectors");
  float *device_a = nullptr, *device_b = nullptr, *partial_sums = nullptr, *result = nullptr;
  CUDA_CHECK(cudaMalloc(&device_a, vector_bytes));
  CUDA_CHECK(cudaMalloc(&device_b, vector_bytes));
  CUDA_CHECK(cudaMalloc(&partial_sums, partial_bytes));
  CUDA_CHECK(cudaMalloc(&result, sizeof(float)));
  CUDA_CHECK(cudaMemcpy(device_a, a.data(), vector_bytes, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(device_b, b.data(), vector_bytes, cudaMemcpyHostToDevice));
  const DeviceData data{device_a, device_b, n, partial_sums, result};
  const auto address = [](const float* p) { return reinterpret_cast<std::uintptr_t>(p); };
  const bool aligned = (address(device_a) | address(device_b)) % sizeof(float4) == 0;
  shuffle_shape.vector_groups = aligned ? n / 4 : 0;

  // What each variant is, and exactly what its time includes.
  const std::string book_what =
      "the book's kernel, min(32, ceil(N/block)) blocks; time = kernel + copy of the partial sums + host sum";
  const std::string grid_what =
      "the book's kernel, a grid that fills the GPU; time = kernel + copy of the partial sums + host sum";
  const std::string atomic_what =
      "the book's block sum, then one atomicAdd per block; time = memset of the result + kernel";
  const std::string shuffle_what =
      "float4 loads, warp shuffles, full grid, atomicAdd; time = memset of the result + kernel";
  // One line per variant: its grid, how much of the GPU it can fill, and what its time includes.
  const auto describe = [&](const char* name, const SummationShape& shape, std::int64_t capacity,
                            const std::string& what) {
    std::printf(
        "  %-8s %7lld blocks x %4d threads, on at most %lld of %d SMs (%.1f%% of the %lld "
        "blocks the GPU keeps resident), up to %lld products per thread\n"
        "           %s\n",
        name, static_cast<long long>(shape.blocks), shape.threads_per_block,
        static_cast<long long>(std::min<std::int64_t>(shape.blocks, info.sm_count)), info.sm_count,
        100.0 * static_cast<double>(shape.blocks) / static_cast<double>(capacity),
        static_cast<long long>(capacity), static_cast<long long>(products_per_thread(shape, n)),
        what.c_str());
  };
  std::printf("launch shapes:\n");
  if (wanted("book")) describe("book", book_shape, book_capacity, book_what);
  if (wanted("sm_grid")) describe("sm_grid", grid_shape, book_capacity, grid_what);
  if (wanted("atomic")) describe("atomic", atomic_shape, book_capacity, atomic_what);
  if (wanted("shuffle")) describe("shuffle", shuffle_shape, shuffle_capacity, shuffle_what);
  std::printf("  %-8s the library's own launch; time = its kernel(s), the result left in device memory\n",
              "cublas");

  // 6. Warm up and time each variant; each copies its result back after its timed runs.
  cublasHandle_t handle = nullptr;
  CUBLAS_CHECK(cublasCreate(&handle));
  CUBLAS_CHECK(cublasSetPointerMode(handle, CUBLAS_POINTER_MODE_DEVICE));
  std::vector<VariantRun> runs;
  if (wanted("book")) runs.push_back(run_partial_sums("book", book_what, data, book_shape, run));
  if (wanted("sm_grid")) runs.push_back(run_partial_sums("sm_grid", grid_what, data, grid_shape, run));
  if (wanted("atomic"))
    runs.push_back(run_one_pass("atomic", atomic_what, data, atomic_shape, run, [&] {
      dot_atomic<<<static_cast<unsigned>(atomic_shape.blocks), block_threads, shared_bytes>>>(
          data.a, data.b, data.n, data.result);
    }));
  if (wanted("shuffle"))
    runs.push_back(run_one_pass("shuffle", shuffle_what, data, shuffle_shape, run, [&] {
      dot_shuffle<<<static_cast<unsigned>(shuffle_shape.blocks), block_threads>>>(
          data.a, data.b, data.n, shuffle_shape.vector_groups, data.result);
    }));
  runs.push_back(run_cublas(handle, data, run));

  CUBLAS_CHECK(cublasDestroy(handle));
  CUDA_CHECK(cudaFree(device_a));
  CUDA_CHECK(cudaFree(device_b));
  CUDA_CHECK(cudaFree(partial_sums));
  CUDA_CHECK(cudaFree(result));

  // 7. Verify each result against the double reference, with the bound its summation order allows.
  if (run.check != cs::CheckMode::kNone) {
    const DotReference reference = reference_dot(a.data(), b.data(), n);
    std::printf("\nreference (pairwise sum in double of the float inputs): %.9e, sum of |a*b| %.9e\n",
                reference.value, reference.magnitude);
    // The bounds of the variants whose summation order is known, all at once (one walk over the N
    // products each).
    std::vector<SummationShape> known_shapes;
    for (const VariantRun& variant : runs)
      if (variant.known_order) known_shapes.push_back(variant.shape);
    const std::vector<ErrorBound> known_bounds = summation_error_bounds(a, b, known_shapes);
    std::size_t next_bound = 0;
    for (VariantRun& variant : runs) {
      // Each variant's bound, divided by Σ|a·b|: the tolerance on |got − want| / Σ|a·b|. With
      // Σ|a·b| = 0 every product is 0 and the result must be exactly 0.
      double bound = 0, classical = 0;
      std::int64_t depth = 0;
      if (variant.known_order) {
        const ErrorBound& error = known_bounds[next_bound++];
        bound = error.bound;
        classical = error.classical;
        depth = error.depth;
      } else {
        // The library's order is unknown: only the order-free γ_N applies, and it says nothing once
        // N·u nears 1 (N ≥ 2^23); past that the yardstick's result is shown, not judged.
        depth = n;
        classical = n < (std::int64_t{1} << 23) ? cs::fp32_sum_tolerance(n) * reference.magnitude
                                                : reference.magnitude;
        bound = classical;
      }
      const double tolerance = reference.magnitude > 0 ? bound / reference.magnitude : 0.0;
      cs::Comparison comparison(tolerance, 1, "dot");
      comparison.scan(&variant.value, 1);
      comparison.compare(0, variant.value, reference.value, reference.magnitude);
      variant.measurement.check = comparison.finish("full");
      std::printf(
          "  %-10s got %.9e, |got - want| %.3e, bound %.3e (%s; gamma_h*sum|ab| with h = %lld: %.3e)\n",
          variant.measurement.name.c_str(), variant.value, std::fabs(variant.value - reference.value), bound,
          variant.known_order ? "its summation tree" : "any order", static_cast<long long>(depth), classical);
    }
  }

  // The book's own check: the closed form, exactly, and how many of its digits a float kept.
  if (book_inputs) {
    const Uint128 exact = book_exact_dot(n);
    const double exact_value = to_double(exact);
    std::printf("\nbook inputs: 2*sum(i^2, i < N) = (N-1)*N*(2N-1)/3 = %s (exact, 128-bit integers)\n",
                to_decimal(exact).c_str());
    if (exact_value > 0) {
      const int exponent = static_cast<int>(std::floor(std::log2(exact_value)));
      std::printf(
          "  a float keeps 24 significant bits (about 7.2 decimal digits): next to this value one "
          "float step is 2^%d = %.0f\n",
          exponent - 23, std::ldexp(1.0, exponent - 23));
    }
    if (n - 1 > kBookExactFloats)
      std::printf(
          "  above 2^24 the inputs are no longer exactly i and 2i (float rounds them), so the "
          "verdicts above use the double sum of the stored inputs\n");
    for (const VariantRun& variant : runs) {
      if (exact_value > 0)
        std::printf("  %-10s %.9e  relative error vs exact %.2e\n", variant.measurement.name.c_str(),
                    variant.value, std::fabs(variant.value - exact_value) / exact_value);
      else
        std::printf("  %-10s %.9e (exact: 0)\n", variant.measurement.name.c_str(), variant.value);
    }
  }

  // 8. Report: GB/s over the 2·N·4 bytes read, % of theoretical bandwidth, % of cublasSdot.
  const double bytes_read = 2.0 * static_cast<double>(vector_bytes);
  const double library_gbs = bytes_read / (runs.back().measurement.time.median_ms * 1e6);
  cs::Report report("06_dot_reduction", std::to_string(n), "GB/s", "cublasSdot");
  for (VariantRun& variant : runs) {
    cs::Measurement& m = variant.measurement;
    m.rate = bytes_read / (m.time.median_ms * 1e6);
    m.pct_peak = 100.0 * m.rate / info.peak_bandwidth_gbs;
    m.pct_yardstick = 100.0 * m.rate / library_gbs;
    report.add(m);
  }
  report.add_field("inputs", book_inputs ? "book" : "random");
  report.add_field("block", std::to_string(block_threads));
  return report.finish(run);
}
