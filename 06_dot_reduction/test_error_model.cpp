// 06_dot_reduction: unit tests of the error model (error_model.hpp), on the CPU only.
//
// The exact integers against sums formed term by term and against figures computed independently;
// the rounding depth of each summation shape against hand-counted values; and the error bound
// against float sums computed on the host in each shape's order: it must hold for a correct sum
// and be violated by a sum that lost a product. Each case is its own CTest test:
// `test_06_error_model <case>`. A failed EXPECT prints the condition and the case exits 1.
/// @file
/// @brief Unit tests of stage 06's error model.
#include "error_model.hpp"

#include "matrix.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <vector>

namespace {

int g_failures = 0; ///< failed EXPECTs in the case that runs

/// Checks @p condition; when it is false, prints it with its file and line and fails the case.
#define EXPECT(condition)                                                                 \
  do {                                                                                    \
    if (!(condition)) {                                                                   \
      std::fprintf(stderr, "%s:%d: EXPECT failed: %s\n", __FILE__, __LINE__, #condition); \
      ++g_failures;                                                                       \
    }                                                                                     \
  } while (0)

constexpr std::uint64_t kMax64 = std::numeric_limits<std::uint64_t>::max(); ///< 2^64 − 1
constexpr std::uint64_t kSeed = 2024;                                       ///< the stage's default --seed

/// The book's inputs: a[i] = i, b[i] = 2i.
void book_inputs(std::int64_t n, cs::HostMatrix& a, cs::HostMatrix& b) {
  a.resize(static_cast<std::size_t>(n));
  b.resize(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    a[i] = static_cast<float>(i);
    b[i] = static_cast<float>(2 * i);
  }
}

/// The float dot product of @p a and @p b added in the order @p shape describes, as the stage's
/// kernels add it: each thread's running sum (a rounded product then an addition, or one fused
/// multiply-add), the tree of its block, then the block sums in @p block_order. @p skip, when not
/// negative, is an element left out: a deliberately wrong sum.
float float_dot(const cs::HostMatrix& a, const cs::HostMatrix& b, const SummationShape& shape, bool fused,
                const std::vector<std::int64_t>& block_order, std::int64_t skip = -1) {
  const std::int64_t n = static_cast<std::int64_t>(a.size());
  const std::int64_t threads = grid_threads(shape);
  std::vector<float> running(static_cast<std::size_t>(threads), 0.0f);
  const auto add = [&](std::int64_t thread, std::int64_t i) {
    if (i == skip) return;
    running[thread] = fused ? std::fma(a[i], b[i], running[thread]) : running[thread] + a[i] * b[i];
  };
  // The kernels' assignment: float4 group g to thread g mod threads, then element 4·groups + j to
  // thread j mod threads.
  for (std::int64_t group = 0; group < shape.vector_groups; ++group)
    for (std::int64_t k = 0; k < 4; ++k) add(group % threads, 4 * group + k);
  for (std::int64_t i = 4 * shape.vector_groups; i < n; ++i) add((i - 4 * shape.vector_groups) % threads, i);

  const auto halving = [](float* values, int count) {
    for (int half = count / 2; half > 0; half /= 2)
      for (int lane = 0; lane < half; ++lane) values[lane] += values[lane + half];
    return values[0];
  };
  std::vector<float> block_sums(static_cast<std::size_t>(shape.blocks));
  for (std::int64_t block = 0; block < shape.blocks; ++block) {
    float* level = running.data() + block * shape.threads_per_block;
    if (shape.tree == BlockTree::kHalving) {
      block_sums[block] = halving(level, shape.threads_per_block);
    } else {
      std::vector<float> warp_sums(kWarpSize, 0.0f);
      for (int warp = 0; warp < shape.threads_per_block / kWarpSize; ++warp)
        warp_sums[warp] = halving(level + warp * kWarpSize, kWarpSize);
      block_sums[block] = halving(warp_sums.data(), kWarpSize);
    }
  }
  float total = 0.0f;
  for (const std::int64_t block : block_order) total += block_sums[block];
  return total;
}

/// Blocks 0, 1, ..., count − 1: the host's order.
std::vector<std::int64_t> in_order(std::int64_t count) {
  std::vector<std::int64_t> order(static_cast<std::size_t>(count));
  for (std::int64_t i = 0; i < count; ++i) order[i] = i;
  return order;
}

/// A fixed scramble of the blocks, standing in for the order in which atomics happen to land:
/// odd blocks from the last down, then even blocks from the first up.
std::vector<std::int64_t> scrambled(std::int64_t count) {
  std::vector<std::int64_t> order;
  for (std::int64_t i = count - 1; i >= 0; --i)
    if (i % 2 == 1) order.push_back(i);
  for (std::int64_t i = 0; i < count; i += 2) order.push_back(i);
  return order;
}

/// The stage's shapes for @p n elements with 256 threads per block: "book" (at most 32 blocks),
/// "sm_grid" and "atomic" (1056 blocks, the H200's resident count), "shuffle" (at least one float4
/// group per thread, float4 loads over all but the last n mod 4 elements).
SummationShape stage_shape(const std::string& variant, std::int64_t n) {
  constexpr int kThreads = 256;
  const auto blocks_for = [n](std::int64_t per_thread, std::int64_t cap) {
    const std::int64_t per_block = per_thread * kThreads;
    return std::max<std::int64_t>(1, std::min(cap, (n + per_block - 1) / per_block));
  };
  SummationShape shape;
  shape.threads_per_block = kThreads;
  shape.blocks = blocks_for(1, variant == "book" ? 32 : 1056);
  if (variant == "atomic") shape.block_sums = BlockSums::kAtomicAnyOrder;
  if (variant == "shuffle") {
    shape.blocks = blocks_for(4, 1056);
    shape.vector_groups = n / 4;
    shape.tree = BlockTree::kWarpShuffle;
    shape.block_sums = BlockSums::kAtomicAnyOrder;
  }
  return shape;
}

/// Uint128 from its two halves.
Uint128 make(std::uint64_t high, std::uint64_t low) {
  Uint128 value;
  value.high = high;
  value.low = low;
  return value;
}

// ---------------------------------------------------------------------------------------------
// The cases
// ---------------------------------------------------------------------------------------------

/// The closed form (N−1)·N·(2N−1)/3 against 2·i² added term by term in 128-bit integers, at the
/// sizes the stage's tests run with book inputs (and a few around them).
void closed_form_matches_the_summed_products() {
  for (const std::int64_t n : {1, 2, 3, 4, 5, 6, 255, 256, 257, 33792, 1000003, 20000003}) {
    Uint128 sum;
    for (std::int64_t i = 0; i < n; ++i)
      sum = sum + multiply(static_cast<std::uint64_t>(i), static_cast<std::uint64_t>(2 * i));
    if (!(sum == book_exact_dot(n)))
      std::fprintf(stderr, "N = %lld: summed %s, closed form %s\n", static_cast<long long>(n),
                   to_decimal(sum).c_str(), to_decimal(book_exact_dot(n)).c_str());
    EXPECT(sum == book_exact_dot(n));
  }
}

/// The closed form at the largest sizes, past 2^64, against values computed independently with
/// arbitrary-precision integers.
void closed_form_at_the_largest_sizes() {
  EXPECT(to_decimal(book_exact_dot(1)) == "0");
  EXPECT(to_decimal(book_exact_dot(33792)) == "25723564731392"); // the book's N
  EXPECT(to_decimal(book_exact_dot(20000003)) == "5333335333333580000010");
  EXPECT(to_decimal(book_exact_dot(2147483651)) == "6602346899247124918084567050"); // past 2^31
  EXPECT(to_decimal(book_exact_dot(kMaxElements)) == "422550200002289490873592840192");
  EXPECT(book_exact_dot(kMaxElements).high < (std::uint64_t{1} << 37)); // below 2^101
}

/// Products and sums across the 64-bit boundary, and the decimal digits of the extremes.
void integers_past_64_bits() {
  EXPECT(multiply(kMax64, kMax64) == make(kMax64 - 1, 1)); // (2^64 − 1)^2 = 2^128 − 2^65 + 1
  EXPECT(multiply(std::uint64_t{1} << 32, std::uint64_t{1} << 32) == make(1, 0));
  EXPECT(multiply(0x123456789abcdefULL, 0xfedcba987654321ULL) ==
         make(0x121fa00ad77d74ULL, 0x22236d88fe5618cfULL));
  EXPECT(make(0, kMax64) + make(0, 1) == make(1, 0)); // the carry
  EXPECT(make(3, 5) * 7 == make(21, 35));
  EXPECT(to_decimal(make(0, 0)) == "0");
  EXPECT(to_decimal(make(0, 10)) == "10");
  EXPECT(to_decimal(make(0, kMax64)) == "18446744073709551615");
  EXPECT(to_decimal(make(1, 0)) == "18446744073709551616");
  EXPECT(to_decimal(make(kMax64, kMax64)) == "340282366920938463463374607431768211455");
}

/// to_double rounds to the nearest double, ties to even, with one rounding, not two.
void conversion_to_double_rounds_once() {
  const double two_64 = std::ldexp(1.0, 64);
  EXPECT(to_double(make(0, 12345)) == 12345.0);
  EXPECT(to_double(make(1, 0)) == two_64);
  EXPECT(to_double(make(kMax64, kMax64)) == std::ldexp(1.0, 128));
  // Above 2^64 doubles are 2^12 apart. 2^64 + 2^63 + 2^11 is a tie: to even, 2^64 + 2^63.
  const std::uint64_t two_63 = std::uint64_t{1} << 63;
  EXPECT(to_double(make(1, two_63 + 2048)) == two_64 + std::ldexp(1.0, 63));
  // One more is above the tie and rounds up; converting the low half first would round it to the
  // tie and then down.
  EXPECT(to_double(make(1, two_63 + 2049)) == two_64 + std::ldexp(1.0, 63) + 4096.0);
  EXPECT(to_double(book_exact_dot(33792)) == 25723564731392.0);
}

/// h = 1 + products per thread + tree levels + blocks, counted by hand for each variant's shape.
void rounding_depth_of_each_shape() {
  // book at the book's N: 32 blocks x 256 threads; 33792 = 4·8192 + 1024, so 5 products per thread.
  const SummationShape book = stage_shape("book", 33792);
  EXPECT(book.blocks == 32 && products_per_thread(book, 33792) == 5 && tree_levels(book) == 8);
  EXPECT(rounding_depth(book, 33792) == 1 + 5 + 8 + 32);
  // sm_grid at N = 1000003: 1056 blocks x 256 = 270336 threads, 4 products for some.
  const SummationShape grid = stage_shape("sm_grid", 1000003);
  EXPECT(grid.blocks == 1056 && products_per_thread(grid, 1000003) == 4);
  EXPECT(rounding_depth(grid, 1000003) == 1 + 4 + 8 + 1056);
  // shuffle at N = 1000003: 977 blocks (ceil(1000003 / 1024)), 250000 groups over 250112 threads:
  // one group (4 products) each at most, plus at most one of the 3 single elements; 5 + 5 levels.
  const SummationShape shuffle = stage_shape("shuffle", 1000003);
  EXPECT(shuffle.blocks == 977 && products_per_thread(shuffle, 1000003) == 4 + 1);
  EXPECT(tree_levels(shuffle) == 10 && rounding_depth(shuffle, 1000003) == 1 + 5 + 10 + 977);
  // One block of 1024 threads at N = 257: one product each, 10 levels.
  SummationShape wide;
  wide.threads_per_block = 1024;
  EXPECT(rounding_depth(wide, 257) == 1 + 1 + 10 + 1);
  // The largest N with the fewest threads (32 blocks of 32): 2^23 products per thread; h stays
  // below 2^23 + 2^11, as kMaxElements promises, so h·u < 1 and the bound means something.
  SummationShape fewest;
  fewest.blocks = 32;
  fewest.threads_per_block = 32;
  const std::int64_t h = rounding_depth(fewest, kMaxElements);
  EXPECT(h == 1 + (std::int64_t{1} << 23) + 5 + 32);
  EXPECT(h < (std::int64_t{1} << 23) + (1 << 11) && static_cast<double>(h) * kUnitRoundoff < 1.0);
}

/// The double reference is exact for the book's inputs at the book's N (every partial sum is an
/// integer below 2^53), and equals the closed form.
void reference_is_exact_for_the_book_inputs() {
  cs::HostMatrix a, b;
  book_inputs(33792, a, b);
  const DotReference reference = reference_dot(a.data(), b.data(), 33792);
  EXPECT(reference.value == 25723564731392.0 && reference.magnitude == 25723564731392.0);
  // Random inputs: the magnitude bounds the value, and both are what a plain double loop gives
  // to within the double rounding of the loop.
  const cs::HostMatrix x = cs::random_matrix(1, 4099, kSeed, cs::Operand::kX);
  const cs::HostMatrix y = cs::random_matrix(1, 4099, kSeed, cs::Operand::kY);
  const DotReference random = reference_dot(x.data(), y.data(), 4099);
  double value = 0, magnitude = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    value += static_cast<double>(x[i]) * y[i];
    magnitude += std::fabs(static_cast<double>(x[i]) * y[i]);
  }
  EXPECT(std::fabs(random.value) <= random.magnitude);
  EXPECT(std::fabs(random.value - value) <= 1e-12 * magnitude);
  EXPECT(std::fabs(random.magnitude - magnitude) <= 1e-12 * magnitude);
}

/// Float sums added in each variant's own order, with and without fused multiply-adds, in host
/// order and scrambled: every one lies within its bound of the reference.
void bound_holds_for_float_sums() {
  for (const std::int64_t n : {1, 2, 255, 257, 33792, 1000003}) {
    cs::HostMatrix a = cs::random_matrix(1, n, kSeed, cs::Operand::kX);
    cs::HostMatrix b = cs::random_matrix(1, n, kSeed, cs::Operand::kY);
    for (const bool book : {false, true}) {
      if (book) book_inputs(n, a, b);
      const DotReference reference = reference_dot(a.data(), b.data(), n);
      for (const char* variant : {"book", "sm_grid", "atomic", "shuffle"}) {
        const SummationShape shape = stage_shape(variant, n);
        const ErrorBound error = summation_error_bound(a, b, shape);
        EXPECT(error.depth == rounding_depth(shape, n));
        for (const bool fused : {false, true}) {
          for (const auto& order : {in_order(shape.blocks), scrambled(shape.blocks)}) {
            if (shape.block_sums == BlockSums::kHostInOrder && order != in_order(shape.blocks)) continue;
            const double got = float_dot(a, b, shape, fused, order);
            const bool within = std::fabs(got - reference.value) <= error.bound;
            if (!within)
              std::fprintf(stderr, "N = %lld, %s inputs, %s, fused %d: |%.9e - %.9e| > %.3e\n",
                           static_cast<long long>(n), book ? "book" : "random", variant, fused, got,
                           reference.value, error.bound);
            EXPECT(within);
          }
        }
      }
    }
  }
}

/// Inputs on which every addition of a thread's running sum rounds up by almost u·|s|: each thread
/// first adds 1, then products t = 2^-24·(1 + 2^-23), a little over half a float step at 1. The
/// error then nearly reaches the first-order bound, so the bound must hold with almost no room:
/// a bound too small by a few percent fails here, where random inputs leave it tens of times clear.
void bound_holds_when_every_addition_rounds_up() {
  const float t = std::ldexp(1.0f + std::ldexp(1.0f, -23), -24);
  SummationShape halving; // one block of one warp, sums in host order
  halving.threads_per_block = 32;
  SummationShape shuffle; // two blocks of two warps, float4 groups, shuffle trees, atomics
  shuffle.blocks = 2;
  shuffle.threads_per_block = 64;
  shuffle.tree = BlockTree::kWarpShuffle;
  shuffle.block_sums = BlockSums::kAtomicAnyOrder;
  for (SummationShape shape : {halving, shuffle}) {
    const std::int64_t threads = grid_threads(shape), n = threads * 1024;
    if (shape.tree == BlockTree::kWarpShuffle) shape.vector_groups = n / 4;
    const std::int64_t stride = shape.vector_groups > 0 ? 4 : 1; // element of each thread's first
    cs::HostMatrix a(static_cast<std::size_t>(n), 1.0f), b(static_cast<std::size_t>(n), t);
    for (std::int64_t thread = 0; thread < threads; ++thread) b[thread * stride] = 1.0f;
    const DotReference reference = reference_dot(a.data(), b.data(), n);
    const ErrorBound error = summation_error_bound(a, b, shape);
    for (const bool fused : {false, true}) {
      const double got = float_dot(a, b, shape, fused, scrambled(shape.blocks));
      const double error_made = std::fabs(got - reference.value);
      std::printf("%lld threads: error %.6e, bound %.6e (%.4f of it)\n", static_cast<long long>(threads),
                  error_made, error.bound, error_made / error.bound);
      EXPECT(error_made <= error.bound);
      EXPECT(error_made >= 0.95 * error.bound);
    }
  }
}

/// A sum that lost a product fails the bound: the largest one at any N, and, as a kernel that reads
/// only whole float4 groups would lose them, the last N mod 4 at the stage's odd test sizes 255
/// and 257.
void bound_catches_a_lost_product() {
  for (const std::int64_t n : {255, 257, 4099, 33792}) {
    const cs::HostMatrix a = cs::random_matrix(1, n, kSeed, cs::Operand::kX);
    const cs::HostMatrix b = cs::random_matrix(1, n, kSeed, cs::Operand::kY);
    const DotReference reference = reference_dot(a.data(), b.data(), n);
    std::int64_t largest = 0;
    for (std::int64_t i = 1; i < n; ++i)
      if (std::fabs(a[i] * b[i]) > std::fabs(a[largest] * b[largest])) largest = i;
    for (const char* variant : {"book", "sm_grid", "atomic", "shuffle"}) {
      const SummationShape shape = stage_shape(variant, n);
      const ErrorBound error = summation_error_bound(a, b, shape);
      const double got = float_dot(a, b, shape, true, in_order(shape.blocks), largest);
      EXPECT(std::fabs(got - reference.value) > error.bound);
    }
  }
  for (const std::int64_t n : {255, 257}) {
    const cs::HostMatrix a = cs::random_matrix(1, n, kSeed, cs::Operand::kX);
    const cs::HostMatrix b = cs::random_matrix(1, n, kSeed, cs::Operand::kY);
    const SummationShape shape = stage_shape("shuffle", n);
    const cs::HostMatrix whole_groups_a(a.begin(), a.begin() + 4 * (n / 4));
    const cs::HostMatrix whole_groups_b(b.begin(), b.begin() + 4 * (n / 4));
    const double got = float_dot(whole_groups_a, whole_groups_b, shape, true, in_order(shape.blocks));
    const DotReference reference = reference_dot(a.data(), b.data(), n);
    EXPECT(std::fabs(got - reference.value) > summation_error_bound(a, b, shape).bound);
  }
}

/// The bound that walks the order is far tighter than γ_h·Σ|a·b| on random inputs, whose dot
/// product grows like √N while Σ|a·b| grows like N; and at N = 2^20 the classical bound is
/// already a large part of the dot product itself.
void bound_is_tighter_than_the_classical_one() {
  const std::int64_t n = std::int64_t{1} << 20;
  const cs::HostMatrix a = cs::random_matrix(1, n, kSeed, cs::Operand::kX);
  const cs::HostMatrix b = cs::random_matrix(1, n, kSeed, cs::Operand::kY);
  for (const char* variant : {"book", "sm_grid", "atomic", "shuffle"}) {
    const ErrorBound error = summation_error_bound(a, b, stage_shape(variant, n));
    std::printf("%-8s h = %lld, bound %.3e, classical %.3e (%.0fx)\n", variant,
                static_cast<long long>(error.depth), error.bound, error.classical,
                error.classical / error.bound);
    EXPECT(error.bound * 4 < error.classical);
  }
}

/// The work shared among threads gives exactly the sums of one thread: the reference of 2^24 + 3
/// products (whose top levels run on threads) equals the same pairwise tree summed here on one, and
/// the bounds computed at once equal each computed alone.
void threads_change_no_sum() {
  const std::int64_t n = (std::int64_t{1} << 24) + 3;
  const cs::HostMatrix a = cs::random_matrix(1, n, kSeed, cs::Operand::kX);
  const cs::HostMatrix b = cs::random_matrix(1, n, kSeed, cs::Operand::kY);
  const auto pairwise = [&](const auto& self, std::int64_t first, std::int64_t count) -> DotReference {
    if (count <= 256) {
      DotReference sum;
      for (std::int64_t i = first; i < first + count; ++i) {
        const double product = static_cast<double>(a[i]) * static_cast<double>(b[i]);
        sum.value += product;
        sum.magnitude += std::fabs(product);
      }
      return sum;
    }
    const DotReference left = self(self, first, count / 2);
    const DotReference right = self(self, first + count / 2, count - count / 2);
    return {left.value + right.value, left.magnitude + right.magnitude};
  };
  const DotReference one_thread = pairwise(pairwise, 0, n);
  const DotReference reference = reference_dot(a.data(), b.data(), n);
  EXPECT(reference.value == one_thread.value && reference.magnitude == one_thread.magnitude);
  std::vector<SummationShape> shapes;
  for (const char* variant : {"book", "sm_grid", "atomic", "shuffle"})
    shapes.push_back(stage_shape(variant, n));
  const std::vector<ErrorBound> together = summation_error_bounds(a, b, shapes);
  for (std::size_t v = 0; v < shapes.size(); ++v) {
    const ErrorBound alone = summation_error_bound(a, b, shapes[v]);
    EXPECT(together[v].bound == alone.bound && together[v].classical == alone.classical &&
           together[v].depth == alone.depth);
  }
}

/// One entry of kCases: a case's name and its function.
#define CASE(name) \
  { #name, name }
/// Every case, by name.
const std::map<std::string, std::function<void()>> kCases = {
    CASE(closed_form_matches_the_summed_products),
    CASE(closed_form_at_the_largest_sizes),
    CASE(integers_past_64_bits),
    CASE(conversion_to_double_rounds_once),
    CASE(rounding_depth_of_each_shape),
    CASE(reference_is_exact_for_the_book_inputs),
    CASE(bound_holds_for_float_sums),
    CASE(bound_holds_when_every_addition_rounds_up),
    CASE(bound_catches_a_lost_product),
    CASE(bound_is_tighter_than_the_classical_one),
    CASE(threads_change_no_sum),
};
#undef CASE

} // namespace

/// Runs the case named on the command line; `--count <names...>` checks that the names registered
/// with CTest are exactly the cases compiled in.
int main(int argc, char** argv) {
  if (argc >= 2 && std::strcmp(argv[1], "--count") == 0) {
    const int registered = argc - 2;
    bool all_known = true;
    for (int i = 2; i < argc; ++i) all_known = all_known && kCases.count(argv[i]) == 1;
    std::printf("%d registered, %zu compiled\n", registered, kCases.size());
    return all_known && registered == static_cast<int>(kCases.size()) ? 0 : 1;
  }
  if (argc != 2 || kCases.count(argv[1]) == 0) {
    std::fprintf(stderr, "usage: test_06_error_model <case>; cases:");
    for (const auto& entry : kCases) std::fprintf(stderr, " %s", entry.first.c_str());
    std::fprintf(stderr, "\n");
    return 2;
  }
  kCases.at(argv[1])();
  std::printf("%s: %s\n", argv[1], g_failures == 0 ? "ok" : "FAILED");
  return g_failures == 0 ? 0 : 1;
}
