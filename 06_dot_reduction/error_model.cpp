// 06_dot_reduction: the error model's arithmetic (see error_model.hpp for what each function means).
/// @file
/// @brief Stage 06's error model: summation orders, rounding depth, error bounds, exact sums.
#include "error_model.hpp"

#include "verify.hpp"

#include <algorithm>
#include <cmath>
#include <thread>

// ---------------------------------------------------------------------------------------------
// Launch shapes, and the summation order each one implies
// ---------------------------------------------------------------------------------------------

std::int64_t grid_threads(const SummationShape& shape) {
  return shape.blocks * shape.threads_per_block;
}

std::int64_t products_per_thread(const SummationShape& shape, std::int64_t n) {
  const std::int64_t threads = grid_threads(shape);
  const std::int64_t singles = n - 4 * shape.vector_groups;
  return 4 * ((shape.vector_groups + threads - 1) / threads) + (singles + threads - 1) / threads;
}

namespace {

/// log2 of a power of two.
int log2_exact(std::int64_t power_of_two) {
  int bits = 0;
  while ((std::int64_t{1} << bits) < power_of_two) ++bits;
  return bits;
}

/// Sums @p values[0 .. count) with the halving tree (count a power of two), in place, adding the
/// magnitude of every intermediate sum to @p node_magnitudes. Returns the total.
double halving_tree(double* values, int count, double* node_magnitudes) {
  for (int half = count / 2; half > 0; half /= 2) {
    for (int lane = 0; lane < half; ++lane) {
      values[lane] += values[lane + half];
      *node_magnitudes += std::fabs(values[lane]);
    }
  }
  return values[0];
}

} // namespace

int tree_levels(const SummationShape& shape) {
  return shape.tree == BlockTree::kHalving ? log2_exact(shape.threads_per_block) : 2 * log2_exact(kWarpSize);
}

std::int64_t rounding_depth(const SummationShape& shape, std::int64_t n) {
  return 1 + products_per_thread(shape, n) + tree_levels(shape) + shape.blocks;
}

// ---------------------------------------------------------------------------------------------
// The reference and the error bounds
// ---------------------------------------------------------------------------------------------

namespace {

// reference_dot's pairwise tree. In its top @p levels_in_parallel levels the two halves of a node
// are summed at once, the left on a new thread and the right on this one, as long as the halves are
// long (2^22 products or more); the tree, and so every sum, is the same either way.
DotReference pairwise_dot(const float* a, const float* b, std::int64_t count, int levels_in_parallel) {
  if (count <= 256) {
    DotReference sum;
    for (std::int64_t i = 0; i < count; ++i) {
      const double product = static_cast<double>(a[i]) * static_cast<double>(b[i]);
      sum.value += product;
      sum.magnitude += std::fabs(product);
    }
    return sum;
  }
  const std::int64_t half = count / 2;
  DotReference left, right;
  if (levels_in_parallel > 0 && half >= (std::int64_t{1} << 22)) {
    std::thread worker([&] { left = pairwise_dot(a, b, half, levels_in_parallel - 1); });
    right = pairwise_dot(a + half, b + half, count - half, levels_in_parallel - 1);
    worker.join();
  } else {
    left = pairwise_dot(a, b, half, 0);
    right = pairwise_dot(a + half, b + half, count - half, 0);
  }
  return {left.value + right.value, left.magnitude + right.magnitude};
}

} // namespace

DotReference reference_dot(const float* a, const float* b, std::int64_t count) {
  return pairwise_dot(a, b, count, 3); // 2^3 = 8 threads at most
}

ErrorBound summation_error_bound(const cs::HostMatrix& a, const cs::HostMatrix& b,
                                 const SummationShape& shape) {
  const std::int64_t n = static_cast<std::int64_t>(a.size());
  const std::int64_t threads = grid_threads(shape);
  std::vector<double> running(static_cast<std::size_t>(threads), 0.0); // each thread's running sum
  double node_magnitudes = 0, magnitude = 0;
  const auto add_product = [&](std::int64_t thread, std::int64_t i) {
    const double product = static_cast<double>(a[i]) * static_cast<double>(b[i]);
    running[thread] += product;
    node_magnitudes += std::fabs(running[thread]);
    magnitude += std::fabs(product);
  };
  // Group g of 4 elements goes to thread g mod threads, its elements in order; then element
  // 4·groups + j goes to thread j mod threads. Every thread sees its elements in increasing order.
  std::int64_t thread = 0;
  for (std::int64_t group = 0; group < shape.vector_groups; ++group) {
    for (std::int64_t k = 0; k < 4; ++k) add_product(thread, 4 * group + k);
    if (++thread == threads) thread = 0;
  }
  thread = 0;
  for (std::int64_t i = 4 * shape.vector_groups; i < n; ++i) {
    add_product(thread, i);
    if (++thread == threads) thread = 0;
  }

  // The tree inside each block, then the block sums.
  const int block_threads = shape.threads_per_block;
  std::vector<double> level(static_cast<std::size_t>(block_threads));
  std::vector<double> block_sums(static_cast<std::size_t>(shape.blocks));
  for (std::int64_t block = 0; block < shape.blocks; ++block) {
    std::copy_n(running.begin() + block * block_threads, block_threads, level.begin());
    if (shape.tree == BlockTree::kHalving) {
      block_sums[block] = halving_tree(level.data(), block_threads, &node_magnitudes);
    } else {
      std::vector<double> warp_sums(kWarpSize, 0.0);
      for (int warp = 0; warp < block_threads / kWarpSize; ++warp)
        warp_sums[warp] = halving_tree(level.data() + warp * kWarpSize, kWarpSize, &node_magnitudes);
      block_sums[block] = halving_tree(warp_sums.data(), kWarpSize, &node_magnitudes);
    }
  }
  if (shape.block_sums == BlockSums::kHostInOrder) {
    double total = 0;
    for (const double block_sum : block_sums) {
      total += block_sum;
      node_magnitudes += std::fabs(total);
    }
  } else {
    double positive = 0, negative = 0;
    for (const double block_sum : block_sums) (block_sum > 0 ? positive : negative) += std::fabs(block_sum);
    node_magnitudes += static_cast<double>(shape.blocks - 1) * std::max(positive, negative);
  }

  ErrorBound result;
  result.depth = rounding_depth(shape, n);
  const double gamma = cs::fp32_sum_tolerance(result.depth); // γ_h = h·u / (1 − h·u)
  result.bound = (1.0 + std::ldexp(1.0, -10)) * (1.0 + gamma) * kUnitRoundoff *
                 (node_magnitudes + (1.0 + static_cast<double>(result.depth) * gamma) * magnitude);
  result.classical = gamma * magnitude;
  return result;
}

std::vector<ErrorBound> summation_error_bounds(const cs::HostMatrix& a, const cs::HostMatrix& b,
                                               const std::vector<SummationShape>& shapes) {
  std::vector<ErrorBound> bounds(shapes.size());
  std::vector<std::thread> workers;
  for (std::size_t v = 0; v < shapes.size(); ++v)
    workers.emplace_back([&, v] { bounds[v] = summation_error_bound(a, b, shapes[v]); });
  for (std::thread& worker : workers) worker.join();
  return bounds;
}

// ---------------------------------------------------------------------------------------------
// The book's answer, exactly
// ---------------------------------------------------------------------------------------------

Uint128 operator+(Uint128 a, Uint128 b) {
  Uint128 sum;
  sum.low = a.low + b.low; // modulo 2^64: it wrapped exactly when the result is below an addend
  sum.high = a.high + b.high + (sum.low < a.low ? 1 : 0);
  return sum;
}

Uint128 multiply(std::uint64_t a, std::uint64_t b) {
  // Schoolbook multiplication in 32-bit halves: each partial product of two halves fits in 64 bits.
  constexpr std::uint64_t kLow32 = 0xffffffffu;
  const std::uint64_t a_low = a & kLow32, a_high = a >> 32;
  const std::uint64_t b_low = b & kLow32, b_high = b >> 32;
  const std::uint64_t low_low = a_low * b_low;
  const std::uint64_t high_low = a_high * b_low;
  const std::uint64_t low_high = a_low * b_high;
  const std::uint64_t high_high = a_high * b_high;
  // The middle column: bits 32..95 of the product, with the carry out of the low 64 bits.
  const std::uint64_t middle = (low_low >> 32) + (high_low & kLow32) + (low_high & kLow32);
  Uint128 product;
  product.low = (middle << 32) | (low_low & kLow32);
  product.high = high_high + (high_low >> 32) + (low_high >> 32) + (middle >> 32);
  return product;
}

Uint128 operator*(Uint128 a, std::uint64_t b) {
  Uint128 product = multiply(a.low, b);
  product.high += a.high * b; // the part of high·b·2^64 that stays below 2^128
  return product;
}

bool operator==(Uint128 a, Uint128 b) {
  return a.high == b.high && a.low == b.low;
}

std::string to_decimal(Uint128 value) {
  // Long division by 10, 32 bits at a time from the top: the remainder (< 10) times 2^32 plus the
  // next 32 bits always fits in 64 bits.
  std::string digits;
  do {
    std::uint64_t pieces[4] = {value.high >> 32, value.high & 0xffffffffu, value.low >> 32,
                               value.low & 0xffffffffu};
    std::uint64_t remainder = 0;
    for (std::uint64_t& piece : pieces) {
      const std::uint64_t current = (remainder << 32) | piece;
      piece = current / 10;
      remainder = current % 10;
    }
    value.high = (pieces[0] << 32) | pieces[1];
    value.low = (pieces[2] << 32) | pieces[3];
    digits.insert(digits.begin(), static_cast<char>('0' + remainder));
  } while (value.high != 0 || value.low != 0);
  return digits;
}

double to_double(Uint128 value) {
  if (value.high == 0) return static_cast<double>(value.low);
  // Shift right until the value fits in 64 bits, keeping any bit shifted out as a "sticky" 1 in the
  // lowest bit: a double keeps 53 bits, so that bit only tells the conversion that the value lies
  // above the 64-bit number, which is all round-to-nearest needs. Scaling back is exact.
  int shift = 1; // the bits of high: the value is below 2^(64 + shift)
  while (shift < 64 && (value.high >> shift) != 0) ++shift;
  const std::uint64_t kept_low = shift == 64 ? 0 : value.low >> shift;
  const std::uint64_t dropped = shift == 64 ? value.low : value.low & ((std::uint64_t{1} << shift) - 1);
  const std::uint64_t top = (value.high << (64 - shift)) | kept_low | (dropped != 0 ? 1 : 0);
  return std::ldexp(static_cast<double>(top), shift);
}

Uint128 book_exact_dot(std::int64_t n) {
  auto first = static_cast<std::uint64_t>(n - 1), second = static_cast<std::uint64_t>(n),
       third = static_cast<std::uint64_t>(2 * n - 1);
  if (first % 3 == 0)
    first /= 3;
  else if (second % 3 == 0)
    second /= 3;
  else
    third /= 3;
  return multiply(first, second) * third;
}
