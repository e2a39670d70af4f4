// Unit tests of common/: the generator, the comparison, the reference, the parser, the timing
// summary, the no-GPU message. Each case is its own CTest test: `test_common <case>`. No
// framework: a failed EXPECT prints the condition and the case fails with exit code 1.
#include "cli.hpp"
#include "device_info.cuh" // no_gpu_message() is host code: it needs no CUDA to build or run
#include "matrix.hpp"
#include "mt_jump.hpp"
#include "report.hpp"
#include "verify.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace {

int g_failures = 0;

#define EXPECT(condition)                                                                 \
  do {                                                                                    \
    if (!(condition)) {                                                                   \
      std::fprintf(stderr, "%s:%d: EXPECT failed: %s\n", __FILE__, __LINE__, #condition); \
      ++g_failures;                                                                       \
    }                                                                                     \
  } while (0)

// A correct float result for a shape: the double reference rounded to float.
cs::HostMatrix correct_product(const cs::HostMatrix& a, const cs::HostMatrix& b, const cs::MatmulShape& s) {
  const std::vector<double> r = cs::reference_matmul(a, b, s);
  return cs::HostMatrix(r.begin(), r.end());
}

struct Problem {
  cs::MatmulShape shape;
  cs::HostMatrix a, b, c;
};

Problem make_problem(std::int64_t m, std::int64_t n, std::int64_t k) {
  Problem p;
  p.shape = {m, n, k};
  p.a = cs::random_matrix(m, k, 7, cs::Operand::kA);
  p.b = cs::random_matrix(k, n, 7, cs::Operand::kB);
  p.c = correct_product(p.a, p.b, p.shape);
  return p;
}

void generator_reproduces_for_a_seed() {
  EXPECT(cs::random_matrix(13, 17, 42, cs::Operand::kA) == cs::random_matrix(13, 17, 42, cs::Operand::kA));
  // Pinned values: the same on every platform (mt19937_64 is fixed by the standard, the float
  // conversion is ours). If these change, every published figure's inputs changed.
  const cs::HostMatrix a = cs::random_matrix(1, 3, 2024, cs::Operand::kA);
  EXPECT(a[0] == -0.430720448f && a[1] == -0.241333604f && a[2] == -0.8285923f);
  const cs::HostMatrix b = cs::random_matrix(1, 2, 2024, cs::Operand::kB);
  EXPECT(b[0] == -0.420702815f && b[1] == -0.420525312f);
}

void generator_is_the_standard_engine_and_jumps() {
  // cs::Mt19937_64 gives std::mt19937_64's outputs from the same seed sequence, also after drawing
  // some and jumping some: inside a block of 312 words, across blocks, and far ahead.
  std::seed_seq standard_seed{2024u, 0u, 2u};
  std::mt19937_64 standard(standard_seed);
  std::vector<std::uint64_t> stream(1200000);
  for (std::uint64_t& word : stream) word = standard();
  for (const std::uint64_t drawn : {0, 1, 311, 312, 700})
    for (const std::uint64_t skipped : {0, 1, 6, 311, 312, 313, 1000, 77777, 1000003}) {
      std::seed_seq seed{2024u, 0u, 2u};
      cs::Mt19937_64 engine(seed);
      bool same = true;
      for (std::uint64_t i = 0; i < drawn; ++i) same = same && engine() == stream[i];
      engine.jump_ahead(skipped);
      for (std::uint64_t i = drawn + skipped; i < drawn + skipped + 400; ++i)
        same = same && engine() == stream[i];
      // Then draw(): a few, a block and more, from where the calls left off, inside a block or not.
      std::vector<std::uint64_t> drawn_at_once(5 + 312 + 400);
      engine.draw(drawn_at_once.data(), 5);
      engine.draw(drawn_at_once.data() + 5, 312 + 400);
      for (std::size_t i = 0; i < drawn_at_once.size(); ++i)
        same = same && drawn_at_once[i] == stream[drawn + skipped + 400 + i];
      EXPECT(same);
    }
  // 2^24 + 5 ahead in two jumps, against the standard engine's own discard().
  std::seed_seq seed{7u};
  cs::Mt19937_64 engine(seed);
  engine.jump_ahead(std::uint64_t{1} << 23);
  engine.jump_ahead((std::uint64_t{1} << 23) + 5);
  std::seed_seq again{7u};
  std::mt19937_64 discarding(again);
  discarding.discard((std::uint64_t{1} << 24) + 5);
  bool same = true;
  for (int i = 0; i < 1000; ++i) same = same && engine() == discarding();
  EXPECT(same);
}

void generator_slices_give_one_draw() {
  // A matrix of 2^25 + 7 values is drawn in two slices on two threads: every value must be the one
  // a single draw of std::mt19937_64 gives, the slice boundary included.
  const std::int64_t rows = 4099, cols = 8187; // 33558513 values
  const cs::HostMatrix sliced = cs::random_matrix(rows, cols, 11, cs::Operand::kB);
  std::seed_seq seed{11u, 0u, static_cast<std::uint32_t>(cs::Operand::kB)};
  std::mt19937_64 one_draw(seed);
  std::int64_t different = 0;
  for (const float value : sliced) {
    const auto top24 = static_cast<std::int32_t>(one_draw() >> 40);
    different += value != static_cast<float>(top24) / 8388608.0f - 1.0f;
  }
  EXPECT(different == 0);
  // And rounded to bf16, the same values rounded.
  const cs::HostMatrix bf16 = cs::random_bf16_matrix(rows, cols, 11, cs::Operand::kB);
  different = 0;
  for (std::size_t i = 0; i < bf16.size(); ++i) different += bf16[i] != cs::round_to_bf16(sliced[i]);
  EXPECT(different == 0);
}

void generator_differs_across_seeds_and_operands() {
  const auto a1 = cs::random_matrix(8, 8, 1, cs::Operand::kA);
  const auto a2 = cs::random_matrix(8, 8, 2, cs::Operand::kA);
  const auto b1 = cs::random_matrix(8, 8, 1, cs::Operand::kB);
  EXPECT(a1 != a2);
  EXPECT(a1 != b1);
  int same = 0;
  for (std::size_t i = 0; i < a1.size(); ++i) same += a1[i] == a2[i];
  EXPECT(same < 4);
}

void generator_range_and_non_symmetry() {
  const std::int64_t n = 64;
  const auto a = cs::random_matrix(n, n, 3, cs::Operand::kA);
  float lo = 1, hi = -1;
  int negative = 0;
  for (const float v : a) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    negative += v < 0;
  }
  EXPECT(lo >= -1.0f && hi < 1.0f);
  EXPECT(negative > 1000 && negative < 3000); // about half of 4096
  int symmetric_pairs = 0;
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = i + 1; j < n; ++j) symmetric_pairs += a[i * n + j] == a[j * n + i];
  EXPECT(symmetric_pairs < 5);
}

void poison_is_recognised() {
  cs::HostMatrix v(5, 1.0f);
  cs::poison(v);
  for (const float x : v) EXPECT(cs::is_poison(x) && std::isnan(x));
  const float computed_nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT(!cs::is_poison(computed_nan));
  EXPECT(!cs::is_poison(0.0f));
}

void comparison_passes_a_correct_result() {
  const Problem p = make_problem(37, 23, 101);
  const cs::CheckResult r = cs::verify_matmul(p.a, p.b, p.c, p.shape, cs::CheckMode::kFull, 1);
  EXPECT(r.checked && r.passed);
  EXPECT(r.compared == 37 * 23 && r.scanned == 37 * 23);
  EXPECT(r.max_rel_error <= r.tolerance);
}

void comparison_catches_a_planted_nan() {
  Problem p = make_problem(16, 16, 16);
  p.c[5 * 16 + 9] = std::numeric_limits<float>::quiet_NaN();
  const cs::CheckResult r = cs::verify_matmul(p.a, p.b, p.c, p.shape, cs::CheckMode::kFull, 1);
  EXPECT(!r.passed);
  EXPECT(r.non_finite == 1 && r.unwritten == 0);
  EXPECT(r.first_failure.find("C[5][9]") != std::string::npos);
  p.c[5 * 16 + 9] = std::numeric_limits<float>::infinity();
  EXPECT(!cs::verify_matmul(p.a, p.b, p.c, p.shape, cs::CheckMode::kFull, 1).passed);
}

// A full check keeps the references of the problems it checked (several instances of a kernel, one
// problem): an A or a B that differs in one element, at the same shape, must not find the old one.
void comparison_keeps_no_stale_reference() {
  Problem p = make_problem(37, 23, 101);
  EXPECT(cs::verify_matmul(p.a, p.b, p.c, p.shape, cs::CheckMode::kFull, 1).passed);
  EXPECT(cs::verify_matmul(p.a, p.b, p.c, p.shape, cs::CheckMode::kFull, 1).passed); // kept
  const float a_was = p.a[5 * 101 + 7];
  p.a[5 * 101 + 7] = -a_was;
  EXPECT(!cs::verify_matmul(p.a, p.b, p.c, p.shape, cs::CheckMode::kFull, 1).passed);
  p.a[5 * 101 + 7] = a_was;
  p.b[99 * 23 + 22] = -p.b[99 * 23 + 22];
  EXPECT(!cs::verify_matmul(p.a, p.b, p.c, p.shape, cs::CheckMode::kFull, 1).passed);
  EXPECT(cs::verify_matmul(p.a, p.b, correct_product(p.a, p.b, p.shape), p.shape, cs::CheckMode::kFull, 1)
             .passed);
}

// The reference shares a large product's rows out among threads: each element the same sum, in the
// same order, as one thread's loop gives.
void reference_on_threads_is_one_threads_sum() {
  const cs::MatmulShape s{301, 257, 450}; // 35 million terms: several threads
  const cs::HostMatrix a = cs::random_matrix(s.m, s.k, 3, cs::Operand::kA);
  const cs::HostMatrix b = cs::random_matrix(s.k, s.n, 3, cs::Operand::kB);
  const std::vector<double> got = cs::reference_matmul(a, b, s);
  std::int64_t different = 0;
  for (std::int64_t i = 0; i < s.m; i += 37)
    for (std::int64_t j = 0; j < s.n; ++j) {
      double sum = 0;
      for (std::int64_t k = 0; k < s.k; ++k) sum += static_cast<double>(a[i * s.k + k]) * b[k * s.n + j];
      different += got[i * s.n + j] != sum;
    }
  EXPECT(different == 0);
}

void comparison_catches_a_wrong_element() {
  Problem p = make_problem(16, 16, 16);
  p.c[3 * 16 + 4] *= 1.001f; // off in the third digit
  const cs::CheckResult r = cs::verify_matmul(p.a, p.b, p.c, p.shape, cs::CheckMode::kFull, 1);
  EXPECT(!r.passed);
  EXPECT(r.out_of_tolerance == 1);
  EXPECT(r.first_failure.find("C[3][4]") != std::string::npos);
}

void comparison_catches_an_unwritten_element() {
  Problem p = make_problem(9, 11, 5);
  cs::HostMatrix untouched(1);
  cs::poison(untouched);
  p.c[8 * 11 + 10] = untouched[0]; // the last element, as an edge block that forgot it
  const cs::CheckResult r = cs::verify_matmul(p.a, p.b, p.c, p.shape, cs::CheckMode::kFull, 1);
  EXPECT(!r.passed);
  EXPECT(r.unwritten == 1);
  EXPECT(r.first_failure.find("never written") != std::string::npos);
}

void comparison_catches_a_lost_term() {
  // The subtle bug: one k-step skipped (an off-by-one tile edge). K = 1024, so a correct sum may
  // be off by ~1024·2⁻²⁴ of Σ|a·b|; dropping a term is off by ~1/1024 of it.
  Problem p = make_problem(4, 4, 1024);
  const std::int64_t row = 2, col = 1, lost = 1023;
  p.c[row * 4 + col] -= p.a[row * 1024 + lost] * p.b[lost * 4 + col];
  const cs::CheckResult r = cs::verify_matmul(p.a, p.b, p.c, p.shape, cs::CheckMode::kFull, 1);
  EXPECT(!r.passed);
  EXPECT(r.out_of_tolerance == 1);
}

void sampled_check_passes_a_correct_result() {
  const Problem p = make_problem(300, 200, 50);
  const cs::CheckResult r = cs::verify_matmul(p.a, p.b, p.c, p.shape, cs::CheckMode::kSample, 5);
  EXPECT(r.passed && r.mode == "sample");
  EXPECT(r.scanned == 300 * 200);
  EXPECT(r.compared > 1000 && r.compared < 300 * 200);
}

void sampled_check_in_slices_passes_and_catches() {
  // K = 50000 with about 1600 picks: enough terms for the sampled reference to be summed in slices of
  // K on several threads where the machine has them. A correct result passes; a corner off by 100
  // (past the bound, K·u·Σ|a·b| ≈ 37 here) fails, and only it.
  Problem p = make_problem(40, 40, 50000);
  EXPECT(cs::verify_matmul(p.a, p.b, p.c, p.shape, cs::CheckMode::kSample, 5).passed);
  p.c[39 * 40 + 39] -= 100.0f;
  const cs::CheckResult r = cs::verify_matmul(p.a, p.b, p.c, p.shape, cs::CheckMode::kSample, 5);
  EXPECT(!r.passed && r.out_of_tolerance == 1);
  EXPECT(r.first_failure.rfind("C[39][39] = ", 0) == 0);
}

void sampled_check_catches_a_wrong_border() {
  Problem p = make_problem(300, 200, 50);
  p.c[299 * 200 + 199] += 0.5f; // the bottom-right corner: always sampled
  EXPECT(!cs::verify_matmul(p.a, p.b, p.c, p.shape, cs::CheckMode::kSample, 5).passed);
  p = make_problem(300, 200, 50);
  p.c[150 * 200 + 199] += 0.5f; // the middle of the last column
  EXPECT(!cs::verify_matmul(p.a, p.b, p.c, p.shape, cs::CheckMode::kSample, 5).passed);
}

void elements_check_agrees_with_the_sampled_one() {
  // The yardstick's check: the picked elements alone (sampled_elements, gathered on the device), no
  // scan. The same picks as the sampled check, in order; a correct result passes, a wrong picked
  // element fails (and is named), a poisoned one fails as never written.
  Problem p = make_problem(300, 200, 50);
  const std::vector<std::int64_t> picked = cs::sampled_elements(p.shape, 5);
  const auto values_of = [&](const cs::HostMatrix& c) {
    std::vector<float> values;
    for (const std::int64_t index : picked) values.push_back(c[index]);
    return values;
  };
  const cs::CheckResult right = cs::verify_matmul_elements(p.a, p.b, picked, values_of(p.c), p.shape);
  EXPECT(right.passed && right.scanned == 0);
  EXPECT(right.compared == cs::verify_matmul(p.a, p.b, p.c, p.shape, cs::CheckMode::kSample, 5).compared);
  p.c[299 * 200 + 199] += 0.5f; // the bottom-right corner: always picked
  const cs::CheckResult wrong = cs::verify_matmul_elements(p.a, p.b, picked, values_of(p.c), p.shape);
  EXPECT(!wrong.passed && wrong.out_of_tolerance == 1);
  EXPECT(wrong.first_failure.rfind("C[299][199] = ", 0) == 0);
  p = make_problem(300, 200, 50);
  cs::poison(p.c);
  const cs::CheckResult unwritten = cs::verify_matmul_elements(p.a, p.b, picked, values_of(p.c), p.shape);
  EXPECT(!unwritten.passed && unwritten.unwritten == static_cast<std::int64_t>(picked.size()));
}

void elements_check_counts_a_scan_made_elsewhere() {
  // A stage's sampled check: the picked elements copied back, every element scanned on the GPU
  // (ScanCounts). The scan's counts and its first bad element are the check's, and a picked element
  // that is bad is not counted twice.
  Problem p = make_problem(300, 200, 50);
  const std::vector<std::int64_t> picked = cs::sampled_elements(p.shape, 5);
  std::vector<float> values;
  for (const std::int64_t index : picked) values.push_back(p.c[index]);
  cs::ScanCounts clean;
  clean.scanned = 300 * 200;
  const cs::CheckResult right =
      cs::verify_matmul_elements(p.a, p.b, picked, values, p.shape, cs::Accumulation::kFp32, &clean);
  EXPECT(right.passed && right.scanned == 300 * 200);
  cs::ScanCounts found = clean;
  found.unwritten = 2;
  found.first_bad = 123 * 200 + 77;
  cs::HostMatrix untouched(1);
  cs::poison(untouched);
  found.first_bad_value = untouched[0];
  values.back() = untouched[0]; // the last pick poisoned too: one of the scan's two
  const cs::CheckResult r =
      cs::verify_matmul_elements(p.a, p.b, picked, values, p.shape, cs::Accumulation::kFp32, &found);
  EXPECT(!r.passed && r.unwritten == 2 && r.non_finite == 0);
  EXPECT(r.first_failure.rfind("C[123][77] = ", 0) == 0);
  EXPECT(r.first_failure.find("never written") != std::string::npos);
}

void check_auto_resolves_by_size() {
  // --check auto: a full check up to 2^30 multiply-adds, a sampled one past that; the others stay.
  cs::MatmulShape small, large;
  small.m = small.n = small.k = 1024; // 2^30
  large.m = 1024;
  large.n = 1024;
  large.k = 1025;
  EXPECT(cs::resolved_check(cs::CheckMode::kAuto, small) == cs::CheckMode::kFull);
  EXPECT(cs::resolved_check(cs::CheckMode::kAuto, large) == cs::CheckMode::kSample);
  EXPECT(cs::resolved_check(cs::CheckMode::kFull, large) == cs::CheckMode::kFull);
  EXPECT(cs::resolved_check(cs::CheckMode::kNone, small) == cs::CheckMode::kNone);
}

void sampled_check_catches_an_unwritten_interior() {
  Problem p = make_problem(300, 200, 50);
  cs::HostMatrix untouched(1);
  cs::poison(untouched);
  p.c[123 * 200 + 77] = untouched[0]; // unlikely to be sampled, but every element is scanned
  const cs::CheckResult r = cs::verify_matmul(p.a, p.b, p.c, p.shape, cs::CheckMode::kSample, 5);
  EXPECT(!r.passed && r.unwritten == 1);
}

// ---- The tensor-core tolerance (verify.hpp, tensor_core_sum_tolerance) ---------------------------
//
// A model of how a tensor core adds (the block FMA the tolerance's derivation assumes): b products of
// bf16 values, exact, and the accumulator are each cut to the bits at or above 2^(E - 24), where 2^E
// bounds the largest of them (24 significant bits kept for the largest, truncation toward zero for
// every one), added exactly, and the sum truncated to FP32. Real tensor cores keep as many bits or
// more, so their error is at most the model's.

// x truncated toward zero to a float (round toward zero, as the tensor core's last step).
double truncate_to_float(double x) {
  float f = static_cast<float>(x); // to nearest
  if (std::fabs(static_cast<double>(f)) > std::fabs(x)) f = std::nextafter(f, 0.0f);
  return f;
}

// One block FMA: accumulator + Σ products, in the model above.
double block_fma(double accumulator, const std::vector<double>& products) {
  double largest = std::fabs(accumulator);
  for (const double p : products) largest = std::max(largest, std::fabs(p));
  if (largest == 0) return 0;
  int e = 0;
  std::frexp(largest, &e); // largest < 2^e
  const double place = std::ldexp(1.0, e - 24);
  double sum = std::trunc(accumulator / place) * place; // exact: at most 2^24 units of `place`
  for (const double p : products) sum += std::trunc(p / place) * place;
  return truncate_to_float(sum);
}

// The K products of one element summed by block FMAs of `block` products, in the order `order`
// (a permutation of 0 .. K-1), or as a tree: blocks summed separately in pairs of partial sums.
double tensor_core_sum(const std::vector<double>& products, const std::vector<std::size_t>& order,
                       std::size_t block, bool tree) {
  std::vector<double> partials;
  double accumulator = 0;
  for (std::size_t start = 0; start < order.size(); start += block) {
    std::vector<double> chunk;
    for (std::size_t i = start; i < std::min(order.size(), start + block); ++i)
      chunk.push_back(products[order[i]]);
    if (tree)
      partials.push_back(block_fma(0, chunk));
    else
      accumulator = block_fma(accumulator, chunk);
  }
  if (!tree) return accumulator;
  while (partials.size() > 1) { // pairs of partial sums, each one FP32 addition truncated
    std::vector<double> next;
    for (std::size_t i = 0; i + 1 < partials.size(); i += 2)
      next.push_back(block_fma(partials[i], {partials[i + 1]}));
    if (partials.size() % 2) next.push_back(partials.back());
    partials = next;
  }
  return partials.empty() ? 0 : partials[0];
}

// bf16 values of three kinds: uniform in [-1, 1] (the stages' inputs), all positive (no
// cancellation: the sum grows fastest), and spread over 2^-20 .. 1 (small terms lose the most bits
// when aligned to a large one).
std::vector<double> bf16_values(std::size_t count, int kind, std::mt19937_64& engine) {
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::uniform_int_distribution<int> exponent(-20, 0);
  std::vector<double> values(count);
  for (double& v : values) {
    float x = uniform(engine);
    if (kind == 1) x = std::fabs(x);
    if (kind == 2) x = std::ldexp(x, exponent(engine));
    v = cs::round_to_bf16(x);
  }
  return values;
}

void scan_in_slices_counts_as_one_pass() {
  // Large enough (2^27 + 5 elements) to be scanned on two threads or more where the machine has them:
  // the counts and the first bad element named are those of one pass.
  cs::HostMatrix values((std::size_t{1} << 27) + 5, 1.0f);
  cs::HostMatrix one_poison(1);
  cs::poison(one_poison);
  values[values.size() - 1] = one_poison[0];                               // never written, in the last slice
  values[values.size() / 2 + 1] = std::numeric_limits<float>::quiet_NaN(); // computed NaN, a later slice
  values[12345] = one_poison[0];                                           // the first bad element
  cs::Comparison cmp(1e-6, 1000, "C");
  cmp.scan(values.data(), static_cast<std::int64_t>(values.size()));
  const cs::CheckResult r = cmp.finish("full");
  EXPECT(r.unwritten == 2 && r.non_finite == 1 && !r.passed);
  EXPECT(r.scanned == static_cast<std::int64_t>(values.size()));
  EXPECT(r.first_failure.rfind("C[12][345] = ", 0) == 0);
}

void tensor_core_tolerance_holds_in_every_order() {
  // Many element sums, in the model, in many orders and block sizes: every error within the bound.
  std::mt19937_64 engine(11);
  double worst = 0;
  for (const std::int64_t k : {1, 2, 3, 16, 17, 100, 1000, 4096, 5003}) {
    for (int kind = 0; kind < 3; ++kind) {
      for (int trial = 0; trial < 4; ++trial) {
        const std::vector<double> a = bf16_values(static_cast<std::size_t>(k), kind, engine);
        const std::vector<double> b = bf16_values(static_cast<std::size_t>(k), kind, engine);
        std::vector<double> products(a.size());
        double exact = 0, scale = 0;
        for (std::size_t i = 0; i < a.size(); ++i) {
          products[i] = a[i] * b[i]; // exact in double (and in FP32: 16 significant bits)
          exact += products[i];      // exact enough: double has 29 bits more than the model keeps
          scale += std::fabs(products[i]);
        }
        std::vector<std::size_t> order(a.size());
        for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
        std::vector<std::vector<std::size_t>> orders = {
            order, std::vector<std::size_t>(order.rbegin(), order.rend())};
        std::shuffle(order.begin(), order.end(), engine);
        orders.push_back(order);
        for (const auto& o : orders)
          for (const std::size_t block : {2, 4, 8, 16, 32})
            for (const bool tree : {false, true}) {
              const double error = std::fabs(tensor_core_sum(products, o, block, tree) - exact) / scale;
              const double bound = cs::tensor_core_sum_tolerance(k);
              EXPECT(error <= bound);
              worst = std::max(worst, error / bound);
            }
      }
    }
  }
  std::printf("largest error in the model: %.3f of the bound\n", worst);
}

void tensor_core_tolerance_catches_a_dropped_or_doubled_term() {
  // A 48 x 40 product summed in the model (blocks of 16, in order): the check passes it, and fails it
  // when one k-term is dropped from, or added twice to, every element (K = 16, 300, 2000), or a
  // whole k-tile of 32 terms is (K = 4100). A worst-case bound grows like K·Σ|a·b|, about K²/4 with
  // these inputs, while a term stays below 1: past K of about 2000 one lost term can hide under it
  // (chapter 13 says so), a lost tile cannot.
  for (const std::int64_t k : {16, 300, 2000, 4100}) {
    const cs::MatmulShape shape{48, 40, k};
    const cs::HostMatrix a = cs::random_bf16_matrix(shape.m, shape.k, 3, cs::Operand::kA);
    const cs::HostMatrix b = cs::random_bf16_matrix(shape.k, shape.n, 3, cs::Operand::kB);
    const std::int64_t first = k / 2,
                       terms = k > 2000 ? 32 : 1; // the k-terms a wrong kernel drops or doubles
    cs::HostMatrix c(48 * 40), dropped(c.size()), doubled(c.size());
    for (std::int64_t i = 0; i < shape.m; ++i)
      for (std::int64_t j = 0; j < shape.n; ++j) {
        std::vector<double> products(static_cast<std::size_t>(k));
        for (std::int64_t t = 0; t < k; ++t)
          products[t] = static_cast<double>(a[i * k + t]) * b[t * shape.n + j];
        std::vector<std::size_t> order(products.size());
        for (std::size_t t = 0; t < order.size(); ++t) order[t] = t;
        const double sum = tensor_core_sum(products, order, 16, false);
        double lost = 0;
        for (std::int64_t t = first; t < first + terms; ++t) lost += products[t];
        c[i * shape.n + j] = static_cast<float>(sum);
        dropped[i * shape.n + j] = static_cast<float>(sum - lost);
        doubled[i * shape.n + j] = static_cast<float>(sum + lost);
      }
    const auto check = [&](const cs::HostMatrix& result) {
      return cs::verify_matmul(a, b, result, shape, cs::CheckMode::kFull, 1, cs::Accumulation::kTensorCore);
    };
    EXPECT(check(c).passed);
    EXPECT(!check(dropped).passed);
    EXPECT(!check(doubled).passed);
    std::printf(
        "K = %lld: correct max rel err %.2e; %lld term(s) dropped %.2e, doubled %.2e; tolerance %.2e\n",
        static_cast<long long>(k), check(c).max_rel_error, static_cast<long long>(terms),
        check(dropped).max_rel_error, check(doubled).max_rel_error, cs::tensor_core_sum_tolerance(k));
  }
}

void bf16_inputs_are_bf16_values() {
  // Every generated value is exactly a bfloat16 (its 16 low bits are zero), in [-1, 1], and the
  // rounding is to nearest, ties to even.
  const cs::HostMatrix v = cs::random_bf16_matrix(64, 64, 9, cs::Operand::kA);
  for (const float x : v) {
    std::uint32_t bits = 0;
    std::memcpy(&bits, &x, sizeof bits);
    EXPECT((bits & 0xFFFFu) == 0);
    EXPECT(x >= -1.0f && x <= 1.0f);
  }
  EXPECT(cs::round_to_bf16(1.0f + std::ldexp(1.0f, -8)) == 1.0f);                            // a tie: to even
  EXPECT(cs::round_to_bf16(1.0f + 3 * std::ldexp(1.0f, -8)) == 1.0f + std::ldexp(1.0f, -6)); // a tie: to even
  EXPECT(cs::round_to_bf16(1.0f + std::ldexp(1.0f, -8) + std::ldexp(1.0f, -20)) ==
         1.0f + std::ldexp(1.0f, -7));
  EXPECT(cs::round_to_bf16(-0.3f) == -0.30078125f);
}

void tolerance_grows_with_k() {
  EXPECT(cs::fp32_sum_tolerance(1) < cs::fp32_sum_tolerance(1000));
  EXPECT(cs::fp32_sum_tolerance(1000) < cs::fp32_sum_tolerance(65536));
  EXPECT(std::fabs(cs::fp32_sum_tolerance(1024) - 1024.0 / 16777216.0) < 1e-7);
}

void reference_matches_hand_computed() {
  // [1 2 3; 4 5 6] (2x3) times [7 8; 9 10; 11 12] (3x2) = [58 64; 139 154]
  const cs::HostMatrix a = {1, 2, 3, 4, 5, 6}, b = {7, 8, 9, 10, 11, 12};
  const std::vector<double> c = cs::reference_matmul(a, b, {2, 2, 3});
  EXPECT(c == (std::vector<double>{58, 64, 139, 154}));
}

// Runs the parser over a command line given as one string.
cs::CommandLine::Outcome parse(cs::CommandLine& cli, const std::vector<std::string>& args) {
  std::vector<const char*> argv = {"prog"};
  for (const std::string& a : args) argv.push_back(a.c_str());
  return cli.parse(static_cast<int>(argv.size()), argv.data());
}

void parser_accepts_good_input() {
  cs::MatmulShape shape;
  cs::RunOptions run;
  int block = 256;
  cs::CommandLine cli("prog", "test");
  cs::add_shape_options(cli, shape);
  cs::add_run_options(cli, run, true);
  cli.add_int("block", &block, 1, 1024, "threads per block");
  EXPECT(parse(cli, {"--m", "5", "--n=6", "--k", "7", "--block=128", "--reps", "4", "--seed",
                     "9223372036854775807", "--check", "sample", "--json"}) ==
         cs::CommandLine::Outcome::kRun);
  EXPECT(shape.m == 5 && shape.n == 6 && shape.k == 7 && block == 128 && run.reps == 4);
  EXPECT(run.seed == 9223372036854775807ULL && run.check == cs::CheckMode::kSample && run.json);
}

void parser_rejects_bad_input() {
  const std::vector<std::vector<std::string>> bad = {{"--size", "0"},
                                                     {"--size", "-3"},
                                                     {"--size", "x"},
                                                     {"--size", "65537"},
                                                     {"--size"},
                                                     {"--size="},
                                                     {"--m", "1.5"},
                                                     {"--m", "1e3"},
                                                     {"--m", " 5"},
                                                     {"--m", "+5"},
                                                     {"--n", "99999999999999999999"},
                                                     {"--block", "0"},
                                                     {"--block", "1025"},
                                                     {"--nope"},
                                                     {"--json=yes"},
                                                     {"--check", "partial"},
                                                     {"--seed", "-1"},
                                                     {"positional"},
                                                     {"-x"},
                                                     {"--"}};
  for (const auto& args : bad) {
    cs::MatmulShape shape;
    cs::RunOptions run;
    int block = 256;
    cs::CommandLine cli("prog", "test");
    cs::add_shape_options(cli, shape);
    cs::add_run_options(cli, run, true);
    cli.add_int("block", &block, 1, 1024, "threads per block");
    bool threw = false;
    try {
      parse(cli, args);
    } catch (const cs::UsageError& e) {
      threw = true;
      // The message names the option (or the argument) it rejects.
      EXPECT(std::string(e.what()).find(args[0].substr(0, args[0].find('='))) != std::string::npos);
    }
    if (!threw) std::fprintf(stderr, "accepted bad input starting with '%s'\n", args[0].c_str());
    EXPECT(threw);
  }
}

void parser_list_option() {
  // An option allowed a list (the matmul flow's --params) checks each value and holds the first;
  // set_value() picks another; without a list, or a list of one, it is an ordinary option.
  std::string params = "a";
  cs::CommandLine cli("prog", "test");
  cli.add_choice("params", &params, {"a", "b", "c"}, "parameter set");
  cli.allow_list("params");
  const char* argv[] = {"prog", "--params", "c,a,b"};
  EXPECT(cli.parse(3, argv) == cs::CommandLine::Outcome::kRun);
  EXPECT(params == "c" && cli.list_values("params") == std::vector<std::string>({"c", "a", "b"}));
  cli.set_value("params", "b");
  EXPECT(params == "b");
  for (const char* bad : {"c,x", "c,", ",c", "c,,a", ""}) {
    std::string target = "a";
    cs::CommandLine other("prog", "test");
    other.add_choice("params", &target, {"a", "b", "c"}, "parameter set");
    other.allow_list("params");
    const char* bad_argv[] = {"prog", "--params", bad};
    bool threw = false;
    try {
      other.parse(3, bad_argv);
    } catch (const cs::UsageError&) {
      threw = true;
    }
    EXPECT(threw);
  }
  std::string plain = "a";
  cs::CommandLine one("prog", "test");
  one.add_choice("params", &plain, {"a", "b"}, "parameter set");
  one.allow_list("params");
  const char* one_argv[] = {"prog", "--params", "b"};
  EXPECT(one.parse(3, one_argv) == cs::CommandLine::Outcome::kRun);
  EXPECT(plain == "b" && one.list_values("params") == std::vector<std::string>({"b"}));
  std::string untouched = "a";
  cs::CommandLine none("prog", "test");
  none.add_choice("params", &untouched, {"a", "b"}, "parameter set");
  none.allow_list("params");
  const char* none_argv[] = {"prog"};
  EXPECT(none.parse(1, none_argv) == cs::CommandLine::Outcome::kRun);
  EXPECT(untouched == "a" && none.list_values("params").empty());
}

void parser_size_and_dims() {
  cs::MatmulShape shape;
  cs::RunOptions run;
  cs::CommandLine cli("prog", "test");
  cs::add_shape_options(cli, shape);
  parse(cli, {"--m", "3", "--size", "10"}); // --m wins over --size whatever the order
  EXPECT(shape.m == 3 && shape.n == 10 && shape.k == 10);
}

void parser_help() {
  cs::MatmulShape shape;
  cs::RunOptions run;
  cs::CommandLine cli("prog", "test summary");
  cs::add_shape_options(cli, shape);
  cs::add_run_options(cli, run, false);
  EXPECT(parse(cli, {"--m", "3", "--help"}) == cs::CommandLine::Outcome::kHelp);
  const std::string help = cli.help();
  for (const char* option :
       {"--size", "--m", "--n", "--k", "--reps", "--warmup", "--seed", "--check", "--json", "--help"})
    EXPECT(help.find(option) != std::string::npos);
  EXPECT(help.find("default: 1000") != std::string::npos);
}

void timing_summary_median() {
  std::vector<double> odd = {5, 1, 3};
  const cs::TimingStats a = cs::summarize(odd);
  EXPECT(a.median_ms == 3 && a.min_ms == 1 && a.max_ms == 5 && a.reps == 3);
  std::vector<double> even = {4, 1, 3, 2};
  EXPECT(cs::summarize(even).median_ms == 2.5);
  EXPECT(std::fabs(cs::matmul_gflops({1000, 1000, 1000}, 1.0) - 2000.0) < 1e-9);
}

// What the runtime reports on a machine without a usable GPU: runtime 13.0, the error and the
// driver version of each case set by the test.
cs::GpuProbe probe(int driver_version, int error, const char* error_name = "", const char* error_text = "") {
  cs::GpuProbe p;
  p.driver_version = driver_version;
  p.runtime_version = 13000;
  p.error = error;
  p.error_name = error_name;
  p.error_text = error_text;
  return p;
}
const char* const kInsufficient = "cudaErrorInsufficientDriver";
const char* const kInsufficientText = "CUDA driver version is insufficient for CUDA runtime version";

void capability_message_or_later_and_exactly() {
  cs::DeviceInfo gpu;
  gpu.name = "NVIDIA H200";
  gpu.major = 9;
  gpu.minor = 0;
  // "or later": the capability itself and any newer one run; an older one is named with the need.
  EXPECT(cs::capability_message(gpu, 8, 0, "13_tensor_cores", "bf16 mma.sync", false).empty());
  EXPECT(cs::capability_message(gpu, 9, 0, "13_tensor_cores", "bf16 mma.sync", false).empty());
  gpu.name = "Tesla V100";
  gpu.major = 7;
  EXPECT(cs::capability_message(gpu, 8, 0, "13_tensor_cores", "bf16 mma.sync", false) ==
         "SKIP: no usable CUDA GPU: 13_tensor_cores needs compute capability 8.0 or later (bf16 mma.sync); "
         "Tesla V100 is 7.0");
  // "exactly" (sm_90a code): 9.0 runs; an older GPU and a newer one (10.0) are both turned away.
  gpu.name = "NVIDIA H100";
  gpu.major = 9;
  EXPECT(cs::capability_message(gpu, 9, 0, "15_wgmma", "wgmma, an sm_90a instruction", true).empty());
  gpu.name = "NVIDIA B200";
  gpu.major = 10;
  EXPECT(cs::capability_message(gpu, 9, 0, "15_wgmma", "wgmma, an sm_90a instruction", true) ==
         "SKIP: no usable CUDA GPU: 15_wgmma needs compute capability 9.0 exactly (wgmma, an sm_90a "
         "instruction); NVIDIA B200 is 10.0");
  gpu.name = "NVIDIA A100";
  gpu.major = 8;
  EXPECT(cs::capability_message(gpu, 9, 0, "15_wgmma", "wgmma, an sm_90a instruction", true) ==
         "SKIP: no usable CUDA GPU: 15_wgmma needs compute capability 9.0 exactly (wgmma, an sm_90a "
         "instruction); NVIDIA A100 is 8.0");
  gpu.minor = 9; // 8.9 is newer than 8.0 but older than 9.0
  EXPECT(!cs::capability_message(gpu, 9, 0, "15_wgmma", "wgmma", true).empty());
  EXPECT(cs::capability_message(gpu, 8, 0, "14_ldmatrix_swizzle", "ldmatrix", false).empty());
}

void no_gpu_message_usable_gpu_and_versions() {
  cs::GpuProbe usable = probe(13000, 0);
  usable.device_count = 1;
  EXPECT(cs::no_gpu_message(usable).empty());
  EXPECT(cs::cuda_version_text(12040) == "12.4");
  EXPECT(cs::cuda_version_text(13000) == "13.0");
  EXPECT(cs::cuda_version_text(13010) == "13.1");
  EXPECT(cs::cuda_version_text(11080) == "11.8");
}

void no_gpu_message_no_driver() {
  // cudaDriverGetVersion gives 0 when no driver is installed; the error is the same as for an
  // old driver, so the version tells the two apart.
  cs::GpuProbe none = probe(0, cs::kProbeInsufficientDriver, kInsufficient, kInsufficientText);
  const std::string expected =
      "SKIP: no usable CUDA GPU: no NVIDIA driver found on this machine (stage 01 runs without one)";
  EXPECT(cs::no_gpu_message(none) == expected);
  none.visible_devices = "";
  EXPECT(cs::no_gpu_message(none) == expected); // no driver: the variable is beside the point
  // The toolkit's stub libcuda on the library path also reads as version 0, with an error of its own.
  const cs::GpuProbe stub =
      probe(0, cs::kProbeStubLibrary, "cudaErrorStubLibrary", "CUDA driver is a stub library");
  EXPECT(cs::no_gpu_message(stub) ==
         "SKIP: no usable CUDA GPU: the libcuda loaded is the CUDA toolkit's stub, not a driver: take the "
         "toolkit's stubs directory off the library path (LD_LIBRARY_PATH)");
}

void no_gpu_message_old_driver() {
  const cs::GpuProbe old = probe(12040, cs::kProbeInsufficientDriver, kInsufficient, kInsufficientText);
  EXPECT(
      cs::no_gpu_message(old) ==
      "SKIP: no usable CUDA GPU: the NVIDIA driver supports up to CUDA 12.4, this program needs CUDA 13.0: "
      "update the driver");
  // The same error from a driver that is not older is not blamed on its age: the error by name.
  const cs::GpuProbe same = probe(13000, cs::kProbeInsufficientDriver, kInsufficient, kInsufficientText);
  EXPECT(cs::no_gpu_message(same) ==
         "SKIP: no usable CUDA GPU: cudaGetDeviceCount failed with cudaErrorInsufficientDriver (CUDA driver "
         "version is insufficient for CUDA runtime version); driver CUDA 13.0, runtime CUDA 13.0");
}

void no_gpu_message_no_device() {
  const std::string expected =
      "SKIP: no usable CUDA GPU: the NVIDIA driver (CUDA 13.0) reports no CUDA device";
  EXPECT(cs::no_gpu_message(probe(13000, cs::kProbeNoDevice, "cudaErrorNoDevice")) == expected);
  EXPECT(cs::no_gpu_message(probe(13000, 0)) == expected); // no error, but none counted
}

void no_gpu_message_visible_devices() {
  cs::GpuProbe hidden = probe(13000, cs::kProbeNoDevice, "cudaErrorNoDevice");
  hidden.visible_devices = "";
  EXPECT(cs::no_gpu_message(hidden) ==
         "SKIP: no usable CUDA GPU: the NVIDIA driver (CUDA 13.0) reports no CUDA device: "
         "CUDA_VISIBLE_DEVICES is set but empty, which hides them all");
  hidden.visible_devices = "7";
  EXPECT(cs::no_gpu_message(hidden) ==
         "SKIP: no usable CUDA GPU: the NVIDIA driver (CUDA 13.0) reports no CUDA device among "
         "CUDA_VISIBLE_DEVICES=\"7\", which hides every device it does not name");
}

void no_gpu_message_other_error() {
  const cs::GpuProbe other = probe(13000, 802, "cudaErrorSystemNotReady", "system not yet initialized");
  EXPECT(cs::no_gpu_message(other) ==
         "SKIP: no usable CUDA GPU: cudaGetDeviceCount failed with cudaErrorSystemNotReady (system not yet "
         "initialized); driver CUDA 13.0, runtime CUDA 13.0");
  // A driver that could not be asked is not taken for a missing one.
  const cs::GpuProbe unknown = probe(-1, cs::kProbeInsufficientDriver, kInsufficient, kInsufficientText);
  EXPECT(cs::no_gpu_message(unknown).find("failed with cudaErrorInsufficientDriver") != std::string::npos);
  EXPECT(cs::no_gpu_message(unknown).find("driver unknown, runtime CUDA 13.0") != std::string::npos);
}

const std::map<std::string, std::function<void()>> kCases = {
#define CASE(name) \
  { #name, name }
    CASE(generator_reproduces_for_a_seed),
    CASE(generator_is_the_standard_engine_and_jumps),
    CASE(generator_slices_give_one_draw),
    CASE(generator_differs_across_seeds_and_operands),
    CASE(generator_range_and_non_symmetry),
    CASE(poison_is_recognised),
    CASE(comparison_passes_a_correct_result),
    CASE(comparison_catches_a_planted_nan),
    CASE(comparison_keeps_no_stale_reference),
    CASE(reference_on_threads_is_one_threads_sum),
    CASE(comparison_catches_a_wrong_element),
    CASE(comparison_catches_an_unwritten_element),
    CASE(comparison_catches_a_lost_term),
    CASE(sampled_check_passes_a_correct_result),
    CASE(sampled_check_in_slices_passes_and_catches),
    CASE(sampled_check_catches_a_wrong_border),
    CASE(sampled_check_catches_an_unwritten_interior),
    CASE(elements_check_agrees_with_the_sampled_one),
    CASE(tolerance_grows_with_k),
    CASE(scan_in_slices_counts_as_one_pass),
    CASE(elements_check_counts_a_scan_made_elsewhere),
    CASE(check_auto_resolves_by_size),
    CASE(tensor_core_tolerance_holds_in_every_order),
    CASE(tensor_core_tolerance_catches_a_dropped_or_doubled_term),
    CASE(bf16_inputs_are_bf16_values),
    CASE(reference_matches_hand_computed),
    CASE(parser_accepts_good_input),
    CASE(parser_rejects_bad_input),
    CASE(parser_size_and_dims),
    CASE(parser_list_option),
    CASE(parser_help),
    CASE(timing_summary_median),
    CASE(capability_message_or_later_and_exactly),
    CASE(no_gpu_message_usable_gpu_and_versions),
    CASE(no_gpu_message_no_driver),
    CASE(no_gpu_message_old_driver),
    CASE(no_gpu_message_no_device),
    CASE(no_gpu_message_visible_devices),
    CASE(no_gpu_message_other_error),
#undef CASE
};

} // namespace

int main(int argc, char** argv) {
  if (argc >= 2 && std::strcmp(argv[1], "--count") == 0) {
    // The registered list (argv[2..]) must name exactly the cases compiled in.
    const int registered = argc - 2;
    bool all_known = true;
    for (int i = 2; i < argc; ++i) all_known = all_known && kCases.count(argv[i]) == 1;
    std::printf("%d registered, %zu compiled\n", registered, kCases.size());
    return all_known && registered == static_cast<int>(kCases.size()) ? 0 : 1;
  }
  if (argc != 2 || kCases.count(argv[1]) == 0) {
    std::fprintf(stderr, "usage: test_common <case>; cases:");
    for (const auto& entry : kCases) std::fprintf(stderr, " %s", entry.first.c_str());
    std::fprintf(stderr, "\n");
    return 2;
  }
  kCases.at(argv[1])();
  std::printf("%s: %s\n", argv[1], g_failures == 0 ? "ok" : "FAILED");
  return g_failures == 0 ? 0 : 1;
}
