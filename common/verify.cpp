/// @file verify.cpp
/// @brief Implementation of the reference, the comparison and the matmul check.
#include "verify.hpp"

#include "matrix.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <list>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <thread>

namespace cs {

std::string CheckResult::summary() const {
  if (!checked) return "not checked (--check=none)";
  char line[256];
  std::snprintf(line, sizeof line,
                "%s: %lld compared, %lld scanned, max rel err %.2e (tol %.2e), "
                "rel norm err %.2e",
                mode.c_str(), static_cast<long long>(compared), static_cast<long long>(scanned),
                max_rel_error, tolerance, rel_norm_error);
  std::string text = line;
  if (!passed) {
    std::snprintf(line, sizeof line, "; %lld never written, %lld NaN/Inf, %lld out of tolerance; first: ",
                  static_cast<long long>(unwritten), static_cast<long long>(non_finite),
                  static_cast<long long>(out_of_tolerance));
    text += line + first_failure;
  }
  return text;
}

Comparison::Comparison(double tolerance, std::int64_t cols, std::string name)
    : tolerance_(tolerance), cols_(std::max<std::int64_t>(cols, 1)), name_(std::move(name)) {
  result_.checked = true;
  result_.tolerance = tolerance;
}

std::string Comparison::where(std::int64_t index) const {
  if (cols_ == 1) return name_ + "[" + std::to_string(index) + "]";
  return name_ + "[" + std::to_string(index / cols_) + "][" + std::to_string(index % cols_) + "]";
}

void Comparison::fail(std::int64_t index, double got, const char* why) {
  if (!result_.first_failure.empty()) return;
  char value[64];
  std::snprintf(value, sizeof value, "%.9g", got);
  result_.first_failure = where(index) + " = " + value + " (" + why + ")";
}

void Comparison::scan(const float* values, std::int64_t count) {
  // Large results (a C of 2^31 elements is 8.6 GB) are scanned in slices on several threads; each
  // slice counts its own and remembers its first bad element, and the slices are read back in order,
  // so the counts and the first failure named are the same as one pass would give.
  struct Slice {
    std::int64_t begin = 0, end = 0, unwritten = 0, non_finite = 0, first_bad = -1;
  };
  const auto scan_slice = [values](Slice& slice) {
    for (std::int64_t i = slice.begin; i < slice.end; ++i) {
      const float v = values[i];
      if (std::isfinite(v)) continue;
      if (is_poison(v))
        ++slice.unwritten;
      else
        ++slice.non_finite;
      if (slice.first_bad < 0) slice.first_bad = i;
    }
  };
  constexpr std::int64_t kElementsPerThread = std::int64_t{1} << 26; // below this, one thread
  const std::int64_t threads = std::clamp<std::int64_t>(
      std::min<std::int64_t>(count / kElementsPerThread, std::thread::hardware_concurrency()), 1, 8);
  std::vector<Slice> slices(static_cast<std::size_t>(threads));
  for (std::int64_t t = 0; t < threads; ++t) {
    slices[t].begin = count * t / threads;
    slices[t].end = count * (t + 1) / threads;
  }
  std::vector<std::thread> workers;
  for (std::int64_t t = 1; t < threads; ++t) workers.emplace_back(scan_slice, std::ref(slices[t]));
  scan_slice(slices[0]);
  for (std::thread& worker : workers) worker.join();
  ScanCounts counts;
  counts.scanned = count;
  for (const Slice& slice : slices) {
    counts.unwritten += slice.unwritten;
    counts.non_finite += slice.non_finite;
    if (slice.first_bad >= 0 && counts.first_bad < 0) {
      counts.first_bad = slice.first_bad;
      counts.first_bad_value = values[slice.first_bad];
    }
  }
  add_scan(counts);
}

void Comparison::add_scan(const ScanCounts& counts) {
  result_.unwritten += counts.unwritten;
  result_.non_finite += counts.non_finite;
  if (counts.first_bad >= 0)
    fail(counts.first_bad, counts.first_bad_value,
         is_poison(counts.first_bad_value) ? "never written" : "NaN or Inf");
  result_.scanned += counts.scanned;
}

void Comparison::compare(std::int64_t index, double got, double want, double scale) {
  ++result_.compared;
  if (!std::isfinite(got)) {
    // Already counted by scan() when the caller scanned; count it here otherwise.
    if (result_.scanned == 0) {
      if (is_poison(static_cast<float>(got)))
        ++result_.unwritten;
      else
        ++result_.non_finite;
    }
    fail(index, got, is_poison(static_cast<float>(got)) ? "never written" : "NaN or Inf");
    result_.max_rel_error = std::numeric_limits<double>::infinity();
    return;
  }
  const double diff = std::fabs(got - want);
  const double rel = scale > 0 ? diff / scale : (diff == 0 ? 0.0 : std::numeric_limits<double>::infinity());
  if (!(rel <= tolerance_)) {
    ++result_.out_of_tolerance;
    char why[96];
    std::snprintf(why, sizeof why, "expected %.9g, rel err %.2e > tol %.2e", want, rel, tolerance_);
    fail(index, got, why);
  }
  result_.max_rel_error = std::max(result_.max_rel_error, rel);
  sum_sq_diff_ += diff * diff;
  sum_sq_want_ += want * want;
}

CheckResult Comparison::finish(const std::string& mode) const {
  CheckResult r = result_;
  r.mode = mode;
  r.rel_norm_error = sum_sq_want_ > 0 ? std::sqrt(sum_sq_diff_ / sum_sq_want_)
                                      : (sum_sq_diff_ == 0 ? 0.0 : std::numeric_limits<double>::infinity());
  r.passed =
      r.unwritten == 0 && r.non_finite == 0 && r.out_of_tolerance == 0 && (r.compared > 0 || r.scanned > 0);
  return r;
}

double fp32_sum_tolerance(std::int64_t terms) {
  const double ku = static_cast<double>(std::max<std::int64_t>(terms, 1)) * std::ldexp(1.0, -24);
  return ku / (1.0 - ku);
}

double tensor_core_sum_tolerance(std::int64_t terms) {
  const double two_k_two_u =
      2.0 * static_cast<double>(std::max<std::int64_t>(terms, 1)) * std::ldexp(1.0, -23);
  return two_k_two_u / (1.0 - two_k_two_u);
}

std::vector<double> reference_matmul(const HostMatrix& a, const HostMatrix& b, const MatmulShape& s) {
  // i-k-j order: the inner loop walks a row of B and a row of C, both contiguous. A large product's
  // rows of C are shared out among threads (each row is its own, summed in the same order as by one).
  std::vector<double> c(static_cast<std::size_t>(s.m * s.n), 0.0);
  const auto rows = [&](std::int64_t first, std::int64_t last) {
    for (std::int64_t i = first; i < last; ++i) {
      double* c_row = &c[i * s.n];
      for (std::int64_t k = 0; k < s.k; ++k) {
        const double a_ik = a[i * s.k + k];
        const float* b_row = &b[k * s.n];
        for (std::int64_t j = 0; j < s.n; ++j) c_row[j] += a_ik * static_cast<double>(b_row[j]);
      }
    }
  };
  constexpr double kTermsPerThread = 1 << 25; // below this, one thread
  const std::int64_t threads = std::clamp<std::int64_t>(
      std::min<std::int64_t>(
          static_cast<std::int64_t>(static_cast<double>(s.m) * s.n * s.k / kTermsPerThread),
          std::thread::hardware_concurrency()),
      1, std::min<std::int64_t>(8, std::max<std::int64_t>(s.m, 1)));
  if (threads == 1) {
    rows(0, s.m);
    return c;
  }
  std::vector<std::thread> workers;
  for (std::int64_t t = 0; t < threads; ++t)
    workers.emplace_back(rows, s.m * t / threads, s.m * (t + 1) / threads);
  for (std::thread& worker : workers) worker.join();
  return c;
}

namespace {

// A full check's reference and each element's scale, kept for the next checks of the same problem in
// this process: a test that runs every instance of a kernel over the same sizes (several `--params`
// sets in one process) checks each against the same A and B, and computing the reference was most of
// its time. A problem is the same when its shape and every bit of A and B are (compared, not hashed).
struct FullReference {
  MatmulShape shape;
  HostMatrix a, b;
  std::vector<double> want, scale;
  std::size_t bytes() const {
    return (a.size() + b.size()) * sizeof(float) + (want.size() + scale.size()) * sizeof(double);
  }
  bool is_for(const HostMatrix& other_a, const HostMatrix& other_b, const MatmulShape& s) const {
    const auto same = [](const HostMatrix& x, const HostMatrix& y) {
      return x.size() == y.size() &&
             (x.empty() || std::memcmp(x.data(), y.data(), x.size() * sizeof(float)) == 0);
    };
    return shape.m == s.m && shape.n == s.n && shape.k == s.k && same(a, other_a) && same(b, other_b);
  }
};

std::shared_ptr<const FullReference> full_reference(const HostMatrix& a, const HostMatrix& b,
                                                    const MatmulShape& s) {
  constexpr std::size_t kKeptBytes = std::size_t{512} << 20; // the newest problems' references, up to this
  static std::mutex mutex;
  static std::list<std::shared_ptr<const FullReference>> kept; // the most recently used first
  {
    const std::lock_guard<std::mutex> lock(mutex);
    for (auto it = kept.begin(); it != kept.end(); ++it) {
      if (!(*it)->is_for(a, b, s)) continue;
      kept.splice(kept.begin(), kept, it);
      return kept.front();
    }
  }
  // The reference and, alongside it, each element's scale Σ|a·b| (the same loops on |a|, |b|).
  auto reference = std::make_shared<FullReference>();
  reference->shape = s;
  reference->want = reference_matmul(a, b, s);
  HostMatrix abs_a(a.size()), abs_b(b.size());
  std::transform(a.begin(), a.end(), abs_a.begin(), [](float v) { return std::fabs(v); });
  std::transform(b.begin(), b.end(), abs_b.begin(), [](float v) { return std::fabs(v); });
  reference->scale = reference_matmul(abs_a, abs_b, s);
  reference->a = a;
  reference->b = b;
  const std::lock_guard<std::mutex> lock(mutex);
  kept.push_front(reference);
  std::size_t bytes = 0;
  for (const auto& entry : kept) bytes += entry->bytes();
  while (kept.size() > 1 && bytes > kKeptBytes) {
    bytes -= kept.back()->bytes();
    kept.pop_back();
  }
  if (reference->bytes() > kKeptBytes) kept.clear(); // too large to keep: used once
  return reference;
}

// Compares the elements of C at @p picked (value_of(p): the p-th one's value) with their references.
template <typename ValueOf>
void compare_elements(Comparison& cmp, const HostMatrix& a, const HostMatrix& b,
                      const std::vector<std::int64_t>& picked, const ValueOf& value_of,
                      const MatmulShape& s) {
  // The picked elements' references, all at once with k outermost: row k of B is read once for all
  // picks, in order, instead of once per pick down a column (n floats apart, a cache miss each). For a
  // B of 2^31 elements the picks still touch most of B, so the rows are shared out in slices among
  // threads, each summing its slice's terms for every pick (in double, in order of k), and the slices'
  // sums are added in order of the slices.
  const std::size_t count = picked.size();
  constexpr double kTermsPerThread = 1 << 22; // below this, one thread
  const std::int64_t threads = std::clamp<std::int64_t>(
      std::min<std::int64_t>(static_cast<std::int64_t>(static_cast<double>(count) * s.k / kTermsPerThread),
                             std::thread::hardware_concurrency()),
      1, std::min<std::int64_t>(8, s.k));
  std::vector<std::vector<double>> sums(static_cast<std::size_t>(threads),
                                        std::vector<double>(2 * count, 0.0));
  const auto sum_slice = [&](std::int64_t t) {
    double* const want = sums[t].data();
    double* const scale = want + count;
    for (std::int64_t k = s.k * t / threads; k < s.k * (t + 1) / threads; ++k) {
      const float* const b_row = &b[k * s.n];
      for (std::size_t p = 0; p < count; ++p) {
        const double term =
            static_cast<double>(a[picked[p] / s.n * s.k + k]) * static_cast<double>(b_row[picked[p] % s.n]);
        want[p] += term;
        scale[p] += std::fabs(term);
      }
    }
  };
  std::vector<std::thread> workers;
  for (std::int64_t t = 1; t < threads; ++t) workers.emplace_back(sum_slice, t);
  sum_slice(0);
  for (std::thread& worker : workers) worker.join();
  std::vector<double> want(count, 0.0), scale(count, 0.0);
  for (const std::vector<double>& slice : sums)
    for (std::size_t p = 0; p < count; ++p) {
      want[p] += slice[p];
      scale[p] += slice[count + p];
    }
  for (std::size_t p = 0; p < count; ++p) cmp.compare(picked[p], value_of(p), want[p], scale[p]);
}

} // namespace

bool full_check_is_cheap(const MatmulShape& s) {
  return static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.k) <=
         static_cast<double>(1LL << 30);
}

CheckMode resolved_check(CheckMode mode, const MatmulShape& shape) {
  if (mode != CheckMode::kAuto) return mode;
  return full_check_is_cheap(shape) ? CheckMode::kFull : CheckMode::kSample;
}

CheckResult verify_matmul(const HostMatrix& a, const HostMatrix& b, const HostMatrix& c, const MatmulShape& s,
                          CheckMode mode, std::uint64_t seed, Accumulation accumulation) {
  if (mode == CheckMode::kNone) {
    CheckResult none;
    none.mode = "none";
    none.passed = true;
    return none;
  }
  mode = resolved_check(mode, s);

  const double tolerance =
      accumulation == Accumulation::kTensorCore ? tensor_core_sum_tolerance(s.k) : fp32_sum_tolerance(s.k);
  Comparison cmp(tolerance, s.n, "C");
  cmp.scan(c.data(), s.m * s.n);

  if (mode == CheckMode::kFull) {
    const std::shared_ptr<const FullReference> reference = full_reference(a, b, s);
    const std::vector<double>& want = reference->want;
    const std::vector<double>& scale = reference->scale;
    for (std::int64_t i = 0; i < s.m * s.n; ++i) cmp.compare(i, c[i], want[i], scale[i]);
    return cmp.finish("full");
  }

  // Sampled: the borders and random elements (sampled_elements), against their references.
  const std::vector<std::int64_t> picked = sampled_elements(s, seed);
  compare_elements(
      cmp, a, b, picked, [&](std::size_t p) { return c[picked[p]]; }, s);
  return cmp.finish("sample");
}

std::vector<std::int64_t> sampled_elements(const MatmulShape& s, std::uint64_t seed) {
  // The four borders, where off-by-one tiles go wrong, plus random interior elements.
  std::set<std::int64_t> picks;
  const auto edge = [&](std::int64_t length, auto&& index_of) {
    const std::int64_t count = std::min<std::int64_t>(length, 1024);
    for (std::int64_t t = 0; t < count; ++t)
      picks.insert(index_of(count == 1 ? 0 : t * (length - 1) / (count - 1)));
  };
  edge(s.n, [&](std::int64_t j) { return j; });                   // first row
  edge(s.n, [&](std::int64_t j) { return (s.m - 1) * s.n + j; }); // last row
  edge(s.m, [&](std::int64_t i) { return i * s.n; });             // first column
  edge(s.m, [&](std::int64_t i) { return i * s.n + s.n - 1; });   // last column
  std::mt19937_64 engine(seed ^ 0x5eed5a3b1eULL);
  for (int t = 0; t < 1024; ++t)
    picks.insert(static_cast<std::int64_t>(engine() % static_cast<std::uint64_t>(s.m * s.n)));
  return std::vector<std::int64_t>(picks.begin(), picks.end());
}

CheckResult verify_matmul_elements(const HostMatrix& a, const HostMatrix& b,
                                   const std::vector<std::int64_t>& picked, const std::vector<float>& values,
                                   const MatmulShape& s, Accumulation accumulation, const ScanCounts* scan) {
  const double tolerance =
      accumulation == Accumulation::kTensorCore ? tensor_core_sum_tolerance(s.k) : fp32_sum_tolerance(s.k);
  Comparison cmp(tolerance, s.n, "C");
  if (scan != nullptr) cmp.add_scan(*scan);
  compare_elements(
      cmp, a, b, picked, [&](std::size_t p) { return values[p]; }, s);
  return cmp.finish("sample");
}

} // namespace cs
