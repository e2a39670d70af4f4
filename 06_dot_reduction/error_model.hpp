// 06_dot_reduction: the floating-point error model behind the stage's checks (host C++ only).
//
// Float addition is not associative, so each variant of the dot product gets a slightly different
// answer, and a fair check must know how far each one may drift. This file describes a launch shape
// as the summation order it implies (SummationShape), walks that order on the host to bound the
// error of a float result (summation_error_bound), computes the reference the results are judged
// against (reference_dot), and the exact answer for the book's inputs a[i] = i, b[i] = 2i
// (book_exact_dot), in 128-bit integers made of two 64-bit halves. test_error_model.cpp tests it.
/// @file
/// @brief Stage 06's error model: summation orders, rounding depth, error bounds, exact sums.
#pragma once

#include "matrix.hpp"

#include <cstdint>
#include <string>
#include <vector>

constexpr int kWarpSize = 32; ///< threads in a warp, and lanes in a shuffle tree
/// Most elements accepted: 2^33, 64 GiB of inputs, held on the host too; it also keeps every
/// variant's longest chain of roundings h below 2^23 + 2^11, so h·2^-24 < 1 and the error bounds
/// below stay meaningful.
constexpr std::int64_t kMaxElements = std::int64_t{1} << 33;
constexpr double kUnitRoundoff = 1.0 / (1 << 24); ///< u = 2^-24, half a float step at 1.0

// ---------------------------------------------------------------------------------------------
// Launch shapes, and the summation order each one implies
// ---------------------------------------------------------------------------------------------

/// How the products are added inside one block.
enum class BlockTree {
  kHalving,     ///< the book's shared-memory tree over all threads of the block
  kWarpShuffle, ///< a 32-lane shuffle tree per warp, then one over the warps' sums (zero-padded to 32)
};

/// How the blocks' sums are added together.
enum class BlockSums {
  kHostInOrder,    ///< copied back and added on the host in block order (book, sm_grid)
  kAtomicAnyOrder, ///< atomicAdd into one float, in whatever order the blocks finish
};

/// How a variant spreads the N products over threads and adds them back together: its launch
/// configuration, and the order that its error bound (summation_error_bound) walks.
struct SummationShape {
  std::int64_t blocks = 1;                        ///< blocks in the grid, and block sums added at the end
  int threads_per_block = kWarpSize;              ///< a power of two in [32, 1024]
  std::int64_t vector_groups = 0;                 ///< leading groups of 4 elements read with float4 loads
  BlockTree tree = BlockTree::kHalving;           ///< the tree inside a block
  BlockSums block_sums = BlockSums::kHostInOrder; ///< how the block sums meet
};

/// Threads in the whole grid.
std::int64_t grid_threads(const SummationShape& shape);

/// The most products any one thread adds: its float4 groups times 4, plus its single elements.
std::int64_t products_per_thread(const SummationShape& shape, std::int64_t n);

/// Levels of the tree inside a block: log2 of the block for the halving tree, 5 + 5 for the
/// shuffle trees (one over the lanes of a warp, one over the warps' sums).
int tree_levels(const SummationShape& shape);

/// h, the longest chain of roundings any product meets on its way to the result: its own rounding
/// (or the fused multiply-add), the thread's running sum, the block tree, and the additions of the
/// block sums (in any order a block sum can be the first of B).
std::int64_t rounding_depth(const SummationShape& shape, std::int64_t n);

// ---------------------------------------------------------------------------------------------
// The reference and the error bounds
// ---------------------------------------------------------------------------------------------

/// The double-precision reference and the scale the error is measured against.
struct DotReference {
  double value = 0;     ///< Σ a·b
  double magnitude = 0; ///< Σ |a·b|
};

/// Pairwise sum of the products a[i]·b[i] in double. Each product of two floats is exact in double
/// (24 + 24 significant bits fit in 53), and pairwise summation keeps the reference's own error
/// below (log2(count) + 256)·2^-53 of the magnitude: 2^-20 or less of any float bound below. The
/// top levels of a long sum's tree are split among up to 8 threads: the same tree, the same sums.
DotReference reference_dot(const float* a, const float* b, std::int64_t count);

/// A variant's error bound, and the coarser classical one for comparison.
struct ErrorBound {
  double bound = 0;       ///< on |float result − exact dot product|, from the summation tree
  double classical = 0;   ///< γ_h·Σ|a·b|: the same guarantee, knowing only the depth h
  std::int64_t depth = 0; ///< h, the longest chain of roundings
};

/// A rigorous bound on the error of a float dot product that adds the products in the order
/// @p shape describes, found by walking that order on the host.
///
/// Every float addition, or fused multiply-add, rounds its result s to s·(1 + δ) with |δ| ≤ u, so
/// it adds an error of at most u·|s|. Summing |s| over every addition of the variant's tree — each
/// thread's running sums, each level of the block tree, and the additions of the block sums (the
/// host's running sum in block order; for atomics, in an unknown order, each of the B − 1 sums lies
/// between −(sum of the negative block sums) and +(sum of the positive ones)) — with the exact
/// values gives the first-order bound u·Σ|s|. Three corrections make it rigorous: each product may
/// be rounded once before it is added (u·Σ|a·b|, when the compiler does not fuse it into an FMA);
/// the inputs of an addition carry the error already made below it, at most γ_h times the products
/// under it, which sums to h·γ_h·Σ|a·b| over all additions; and every error then passes through at
/// most h more roundings, growing by at most (1 + u)^h ≤ 1 + γ_h. The factor 1 + 2^-10 covers the
/// double rounding of this computation and of the reference, both below 2^-20 of the bound.
///
/// The classical bound γ_h·Σ|a·b| holds for any tree of depth h but, with random signs, Σ|a·b|
/// grows like N while the dot product grows like √N: at N = 2^28 it would accept a result of 0.
/// The running sums here grow like √(length) too, which makes this bound tens of times tighter.
ErrorBound summation_error_bound(const cs::HostMatrix& a, const cs::HostMatrix& b,
                                 const SummationShape& shape);

/// summation_error_bound() for each of @p shapes, each on a thread of its own (every one a walk over
/// all N products): the same bounds, in the order of @p shapes.
std::vector<ErrorBound> summation_error_bounds(const cs::HostMatrix& a, const cs::HostMatrix& b,
                                               const std::vector<SummationShape>& shapes);

// ---------------------------------------------------------------------------------------------
// The book's answer, exactly
// ---------------------------------------------------------------------------------------------

/// An unsigned 128-bit integer as two 64-bit halves, high·2^64 + low: exact sums and products past
/// 2^64 in standard C++. Arithmetic wraps modulo 2^128, like the built-in unsigned types.
struct Uint128 {
  std::uint64_t high = 0; ///< the upper 64 bits
  std::uint64_t low = 0;  ///< the lower 64 bits
};

/// @p a + @p b, modulo 2^128.
Uint128 operator+(Uint128 a, Uint128 b);

/// The full product of two 64-bit integers, exactly.
Uint128 multiply(std::uint64_t a, std::uint64_t b);

/// @p a · @p b, modulo 2^128.
Uint128 operator*(Uint128 a, std::uint64_t b);

/// Whether @p a and @p b are the same integer.
bool operator==(Uint128 a, Uint128 b);

/// Decimal digits of @p value, e.g. "340282366920938463463374607431768211455" for 2^128 − 1.
std::string to_decimal(Uint128 value);

/// @p value rounded to the nearest double (ties to even), as a built-in conversion would round it.
double to_double(Uint128 value);

/// The book's answer for a[i] = i, b[i] = 2i: 2·Σ_{i<N} i² = (N−1)·N·(2N−1)/3, exactly. The product
/// passes 2^64 once N is above about 2·10^6, so it is formed in 128-bit integers (N ≤ 2^33 keeps it
/// below 2^101); one of N−1, N, 2N−1 is a multiple of 3, and it is divided by 3 first. @p n ≥ 1.
Uint128 book_exact_dot(std::int64_t n);
