// Unit tests of common/: the generator, the comparison, the reference, the parser, the timing
// summary, the no-GPU message. Each case is its own CTest test: `test_common <case>`. No
// framework: a failed EXPECT prints the condition and the case fails with exit code 1.
#include "cli.hpp"
#include "device_info.cuh" // no_gpu_message() is host code: it needs no CUDA to build or run
#include "matrix.hpp"
#include "report.hpp"
#include "verify.hpp"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
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
std::vector<float> correct_product(const std::vector<float>& a, const std::vector<float>& b,
                                   const cs::MatmulShape& s) {
  const std::vector<double> r = cs::reference_matmul(a, b, s);
  return std::vector<float>(r.begin(), r.end());
}

struct Problem {
  cs::MatmulShape shape;
  std::vector<float> a, b, c;
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
  const std::vector<float> a = cs::random_matrix(1, 3, 2024, cs::Operand::kA);
  EXPECT(a[0] == -0.430720448f && a[1] == -0.241333604f && a[2] == -0.8285923f);
  const std::vector<float> b = cs::random_matrix(1, 2, 2024, cs::Operand::kB);
  EXPECT(b[0] == -0.420702815f && b[1] == -0.420525312f);
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
  std::vector<float> v(5, 1.0f);
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
  std::vector<float> untouched(1);
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

void sampled_check_catches_a_wrong_border() {
  Problem p = make_problem(300, 200, 50);
  p.c[299 * 200 + 199] += 0.5f; // the bottom-right corner: always sampled
  EXPECT(!cs::verify_matmul(p.a, p.b, p.c, p.shape, cs::CheckMode::kSample, 5).passed);
  p = make_problem(300, 200, 50);
  p.c[150 * 200 + 199] += 0.5f; // the middle of the last column
  EXPECT(!cs::verify_matmul(p.a, p.b, p.c, p.shape, cs::CheckMode::kSample, 5).passed);
}

void sampled_check_catches_an_unwritten_interior() {
  Problem p = make_problem(300, 200, 50);
  std::vector<float> untouched(1);
  cs::poison(untouched);
  p.c[123 * 200 + 77] = untouched[0]; // unlikely to be sampled, but every element is scanned
  const cs::CheckResult r = cs::verify_matmul(p.a, p.b, p.c, p.shape, cs::CheckMode::kSample, 5);
  EXPECT(!r.passed && r.unwritten == 1);
}

void tolerance_grows_with_k() {
  EXPECT(cs::fp32_sum_tolerance(1) < cs::fp32_sum_tolerance(1000));
  EXPECT(cs::fp32_sum_tolerance(1000) < cs::fp32_sum_tolerance(65536));
  EXPECT(std::fabs(cs::fp32_sum_tolerance(1024) - 1024.0 / 16777216.0) < 1e-7);
}

void reference_matches_hand_computed() {
  // [1 2 3; 4 5 6] (2x3) times [7 8; 9 10; 11 12] (3x2) = [58 64; 139 154]
  const std::vector<float> a = {1, 2, 3, 4, 5, 6}, b = {7, 8, 9, 10, 11, 12};
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
    CASE(generator_differs_across_seeds_and_operands),
    CASE(generator_range_and_non_symmetry),
    CASE(poison_is_recognised),
    CASE(comparison_passes_a_correct_result),
    CASE(comparison_catches_a_planted_nan),
    CASE(comparison_catches_a_wrong_element),
    CASE(comparison_catches_an_unwritten_element),
    CASE(comparison_catches_a_lost_term),
    CASE(sampled_check_passes_a_correct_result),
    CASE(sampled_check_catches_a_wrong_border),
    CASE(sampled_check_catches_an_unwritten_interior),
    CASE(tolerance_grows_with_k),
    CASE(reference_matches_hand_computed),
    CASE(parser_accepts_good_input),
    CASE(parser_rejects_bad_input),
    CASE(parser_size_and_dims),
    CASE(parser_help),
    CASE(timing_summary_median),
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
