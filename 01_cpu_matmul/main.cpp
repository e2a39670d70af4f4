// 01_cpu_matmul: the triple loop, and why its order matters.
//
// C = A·B on the CPU, as the original tutorials begin: three nested loops over row-major 1-D arrays,
// C[i][j] += A[i][k]·B[k][j]. In the textbook i-j-k order the inner loop walks B down a column,
// n floats apart, so nearly every step touches a new cache line. Swapping the two inner loops
// (i-k-j) walks B and C along rows instead: the same arithmetic and the same result up to
// rounding, several times faster. Memory access order matters before any GPU appears; stage 02
// meets the same lesson again as coalescing.
/// @file
/// @brief Stage 01: the triple loop on the CPU, i-j-k then i-k-j (chapter: 01_cpu_matmul/README.md).
#include "cli.hpp"
#include "cpu_timer.hpp"
#include "exit_codes.hpp"
#include "matrix.hpp"
#include "report.hpp"
#include "verify.hpp"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

/// i-j-k: one output element at a time. The inner loop reads a row of A (contiguous) and a
/// column of B (a stride of n floats: a new cache line almost every step).
void matmul_ijk(const float* a, const float* b, float* c, std::int64_t m, std::int64_t n, std::int64_t k,
                cs::Progress& progress) {
  for (std::int64_t row = 0; row < m; ++row) {
    for (std::int64_t col = 0; col < n; ++col) {
      float sum = 0.0f;
      for (std::int64_t i = 0; i < k; ++i) sum += a[row * k + i] * b[i * n + col];
      c[row * n + col] = sum;
    }
    progress.update(row + 1);
  }
}

/// i-k-j: one row of C at a time. The inner loop adds A[row][i] times row i of B to row `row` of
/// C: both rows contiguous, so every cache line is used whole and the compiler can vectorize.
void matmul_ikj(const float* a, const float* b, float* c, std::int64_t m, std::int64_t n, std::int64_t k,
                cs::Progress& progress) {
  for (std::int64_t row = 0; row < m; ++row) {
    // LAB 01.ikj: zero this row of C, then add A[row][i] times row i of B to it, for i = 0 .. k-1
    // LAB-STUB: static_cast<void>(a), static_cast<void>(b), static_cast<void>(c), static_cast<void>(n + k);
    float* c_row = c + row * n;
    for (std::int64_t col = 0; col < n; ++col) c_row[col] = 0.0f;
    for (std::int64_t i = 0; i < k; ++i) {
      const float a_value = a[row * k + i];
      const float* b_row = b + i * n;
      for (std::int64_t col = 0; col < n; ++col) c_row[col] += a_value * b_row[col];
    }
    // END LAB
    progress.update(row + 1);
  }
}

/// Either loop order, as run_loop() takes it.
using MatmulLoop = void (*)(const float*, const float*, float*, std::int64_t, std::int64_t, std::int64_t,
                            cs::Progress&);

/// Poisons C, runs @p loop warmup + reps times, verifies the last result.
cs::Measurement run_loop(const std::string& name, const std::string& what, MatmulLoop loop,
                         const cs::HostMatrix& a, const cs::HostMatrix& b, const cs::MatmulShape& shape,
                         const cs::RunOptions& run) {
  cs::HostMatrix c(static_cast<std::size_t>(shape.m * shape.n));
  cs::poison(c);
  std::vector<double> samples_ms;
  for (int rep = 0; rep < run.warmup + run.reps; ++rep) {
    cs::Progress progress("01_cpu_matmul " + name + " run " + std::to_string(rep + 1), shape.m);
    const cs::CpuTimer timer;
    loop(a.data(), b.data(), c.data(), shape.m, shape.n, shape.k, progress);
    const double elapsed_ms = timer.elapsed_ms();
    progress.finish();
    if (rep >= run.warmup) samples_ms.push_back(elapsed_ms);
  }
  cs::Measurement m;
  m.name = name;
  m.what = what;
  m.time = cs::summarize(samples_ms);
  m.rate = cs::matmul_gflops(shape, m.time.median_ms);
  m.check = cs::verify_matmul(a, b, c, shape, run.check, run.seed);
  return m;
}

/// The host flow: parse, generate, time both loop orders, verify each, report.
int main(int argc, char** argv) {
  // 1. Parse the command line: bad input stops here with exit code 2.
  cs::MatmulShape shape;
  cs::RunOptions run;
  run.warmup = 0;
  run.reps = 3;
  cs::CommandLine cli("01_cpu_matmul", "C = A*B on the CPU: the i-j-k triple loop, then i-k-j.");
  cs::add_shape_options(cli, shape);
  cs::add_run_options(cli, run, /*gpu=*/false);
  cs::parse_or_exit(cli, argc, argv);

  // 2. Generate A (m x k) and B (k x n): seeded, uniform in [-1, 1).
  const cs::HostMatrix a = cs::random_matrix(shape.m, shape.k, run.seed, cs::Operand::kA);
  const cs::HostMatrix b = cs::random_matrix(shape.k, shape.n, run.seed, cs::Operand::kB);
  std::printf("01_cpu_matmul: C (%lld x %lld) = A (%lld x %lld) * B (%lld x %lld), %d timed run(s) each\n",
              static_cast<long long>(shape.m), static_cast<long long>(shape.n),
              static_cast<long long>(shape.m), static_cast<long long>(shape.k),
              static_cast<long long>(shape.k), static_cast<long long>(shape.n), run.reps);

  // 3. Time both loop orders on the same inputs; verify each against the double reference.
  cs::Measurement ijk = run_loop("ijk", "textbook order: B read down a column", matmul_ijk, a, b, shape, run);
  cs::Measurement ikj =
      run_loop("ikj", "inner loops swapped: B read along a row", matmul_ikj, a, b, shape, run);

  // 4. Report. The headline is i-k-j; the speed-up is the lesson. A wrong result can be produced at
  //    any speed, so a loop that fails its check gets no rate, and then no speed-up is claimed.
  std::string failed;
  for (cs::Measurement* m : {&ijk, &ikj}) {
    if (!m->check.checked || m->check.passed) continue;
    m->rate = NAN;
    failed += (failed.empty() ? "" : " and ") + m->name;
  }
  cs::Report report("01_cpu_matmul", cs::to_string(shape), "GFLOP/s", "");
  report.add(ijk);
  report.add(ikj);
  if (!failed.empty()) {
    std::printf(
        "\n%s failed its check: no speed is compared, since a wrong result says nothing about speed\n",
        failed.c_str());
  } else {
    const double speedup = ijk.time.median_ms / ikj.time.median_ms;
    std::printf("\ni-k-j is %.1fx faster than i-j-k: same arithmetic, different memory access order\n",
                speedup);
    report.add_field("speedup_ikj_over_ijk", cs::format_number(speedup, "%.2f"));
  }
  return report.finish(run);
}
