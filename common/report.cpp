/// @file report.cpp
/// @brief Implementation of the stage report.
#include "report.hpp"

#include "exit_codes.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <sstream>

namespace cs {

TimingStats summarize(std::vector<double>& samples_ms) {
  TimingStats stats;
  if (samples_ms.empty()) return stats;
  std::sort(samples_ms.begin(), samples_ms.end());
  const std::size_t n = samples_ms.size();
  stats.median_ms = n % 2 ? samples_ms[n / 2] : 0.5 * (samples_ms[n / 2 - 1] + samples_ms[n / 2]);
  stats.min_ms = samples_ms.front();
  stats.max_ms = samples_ms.back();
  stats.reps = static_cast<int>(n);
  return stats;
}

double matmul_gflops(const MatmulShape& s, double ms) {
  return 2.0 * static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.k) / (ms * 1e6);
}

std::string format_number(double value, const char* format) {
  if (std::isnan(value)) return "-";
  char text[64];
  std::snprintf(text, sizeof text, format, value);
  return text;
}

Report::Report(std::string stage, std::string sizes, std::string unit, std::string yardstick)
    : stage_(std::move(stage)),
      sizes_(std::move(sizes)),
      unit_(std::move(unit)),
      yardstick_(std::move(yardstick)) {}

void Report::add(const Measurement& m) {
  rows_.push_back(m);
  if (!m.is_yardstick) headline_ = m.name;
}

void Report::add_field(const std::string& key, const std::string& value) {
  fields_.emplace_back(key, value);
}

namespace {

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) continue;
    out += c;
  }
  return out + "\"";
}

std::string json_number(double v) {
  if (!std::isfinite(v)) return "null";
  char text[64];
  std::snprintf(text, sizeof text, "%.6g", v);
  return text;
}

const char* verdict(const CheckResult& c) {
  if (!c.checked) return "UNCHECKED";
  return c.passed ? "PASS" : "FAIL";
}

// @p text right-aligned in @p width columns, as printf's "%<width>s" would print it.
std::string pad(const std::string& text, std::size_t width) {
  return text.size() >= width ? text : std::string(width - text.size(), ' ') + text;
}

} // namespace

int Report::finish(const RunOptions& run) const {
  bool all_passed = true, any_unchecked = false;
  for (const Measurement& m : rows_) {
    if (m.is_yardstick) continue;
    if (!m.check.checked)
      any_unchecked = true;
    else if (!m.check.passed)
      all_passed = false;
  }
  const std::string result = !all_passed ? "FAIL" : (any_unchecked ? "UNCHECKED" : "PASS");

  // The readable table; the "% <yardstick>" column only where there is a yardstick (not stage 01).
  const bool has_yardstick = !yardstick_.empty();
  const auto yardstick_cell = [&](const std::string& text) {
    return has_yardstick ? " " + pad(text, 9) : "";
  };
  std::printf("\n%-14s %11s %21s %10s %7s%s %10s  %s\n", "variant", "median ms", "min..max ms", unit_.c_str(),
              "% peak", yardstick_cell("% " + yardstick_).c_str(), "max err", "check");
  for (const Measurement& m : rows_) {
    const std::string spread =
        format_number(m.time.min_ms, "%.4g") + ".." + format_number(m.time.max_ms, "%.4g");
    std::printf("%-14s %11s %21s %10s %7s%s %10s  %s\n", m.name.c_str(),
                format_number(m.time.median_ms, "%.4g").c_str(), spread.c_str(),
                format_number(m.rate, "%.1f").c_str(), format_number(m.pct_peak, "%.1f").c_str(),
                yardstick_cell(format_number(m.pct_yardstick, "%.1f")).c_str(),
                m.check.checked ? format_number(m.check.max_rel_error, "%.1e").c_str() : "-",
                m.is_yardstick && !m.check.checked ? "(yardstick)" : verdict(m.check));
  }
  for (const Measurement& m : rows_)
    if (m.check.checked) std::printf("  %s check: %s\n", m.name.c_str(), m.check.summary().c_str());

  const Measurement* head = nullptr;
  for (const Measurement& m : rows_)
    if (m.name == headline_) head = &m;

  if (run.json) {
    std::ostringstream js;
    js << "{\"stage\":" << json_string(stage_) << ",\"sizes\":" << json_string(sizes_)
       << ",\"unit\":" << json_string(unit_) << ",\"yardstick\":" << json_string(yardstick_)
       << ",\"headline\":" << json_string(headline_) << ",\"result\":" << json_string(result);
    for (const auto& [key, value] : fields_) js << "," << json_string(key) << ":" << json_string(value);
    js << ",\"variants\":[";
    for (std::size_t i = 0; i < rows_.size(); ++i) {
      const Measurement& m = rows_[i];
      js << (i ? "," : "") << "{\"name\":" << json_string(m.name) << ",\"what\":" << json_string(m.what)
         << ",\"median_ms\":" << json_number(m.time.median_ms) << ",\"min_ms\":" << json_number(m.time.min_ms)
         << ",\"max_ms\":" << json_number(m.time.max_ms) << ",\"reps\":" << m.time.reps
         << ",\"rate\":" << json_number(m.rate) << ",\"pct_peak\":" << json_number(m.pct_peak)
         << ",\"pct_yardstick\":" << json_number(m.pct_yardstick)
         << ",\"yardstick\":" << (m.is_yardstick ? "true" : "false")
         << ",\"check\":" << json_string(verdict(m.check))
         << ",\"max_rel_error\":" << json_number(m.check.checked ? m.check.max_rel_error : NAN)
         << ",\"tolerance\":" << json_number(m.check.checked ? m.check.tolerance : NAN) << "}";
    }
    js << "]}";
    std::printf("%s\n", js.str().c_str());
  }

  // The last line: one variant's numbers, key=value, then the verdict of the whole run.
  std::ostringstream line;
  line << "RESULT stage=" << stage_ << " size=" << sizes_;
  if (head != nullptr) {
    line << " variant=" << head->name << " time_ms=" << format_number(head->time.median_ms, "%.4g")
         << " rate=" << format_number(head->rate, "%.4g") << " unit=" << unit_
         << " pct_peak=" << format_number(head->pct_peak, "%.3g");
    if (!yardstick_.empty())
      line << " pct_" << yardstick_ << "=" << format_number(head->pct_yardstick, "%.3g");
    line << " max_rel_err="
         << (head->check.checked ? format_number(head->check.max_rel_error, "%.2e") : std::string("-"));
  }
  for (const auto& [key, value] : fields_) line << " " << key << "=" << value;
  line << " Result = " << result;
  std::printf("%s\n", line.str().c_str());
  std::fflush(stdout);
  return all_passed ? kExitPass : kExitVerificationFailed;
}

} // namespace cs
