/// @file cli.cpp
/// @brief Implementation of the command-line parser.
#include "cli.hpp"

#include "exit_codes.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <memory>
#include <sstream>

namespace cs {

std::int64_t parse_integer(const std::string& option, const std::string& text, std::int64_t min,
                           std::int64_t max) {
  const std::string range = "an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "]";
  const bool digits_only = !text.empty() && text.size() <= 20 &&
                           std::all_of(text.begin() + (text[0] == '-' ? 1 : 0), text.end(),
                                       [](char c) { return c >= '0' && c <= '9'; }) &&
                           text != "-";
  if (!digits_only) throw UsageError("--" + option + " must be " + range + ", got '" + text + "'");
  errno = 0;
  char* end = nullptr;
  const long long value = std::strtoll(text.c_str(), &end, 10);
  if (errno == ERANGE || *end != '\0' || value < min || value > max)
    throw UsageError("--" + option + " must be " + range + ", got " + text);
  return value;
}

CommandLine::CommandLine(std::string program, std::string summary)
    : program_(std::move(program)), summary_(std::move(summary)) {}

void CommandLine::add(Option option) {
  if (find(option.name) != nullptr) throw std::logic_error("option declared twice: " + option.name);
  options_.push_back(std::move(option));
}

const CommandLine::Option* CommandLine::find(const std::string& name) const {
  for (const Option& option : options_)
    if (option.name == name) return &option;
  return nullptr;
}

void CommandLine::add_int(const std::string& name, int* target, int min, int max, const std::string& help) {
  add({name, "N", std::to_string(*target),
       help + " [" + std::to_string(min) + ".." + std::to_string(max) + "]", true,
       [=](const std::string& v) { *target = static_cast<int>(parse_integer(name, v, min, max)); }});
}

void CommandLine::add_int(const std::string& name, std::int64_t* target, std::int64_t min, std::int64_t max,
                          const std::string& help) {
  add({name, "N", std::to_string(*target),
       help + " [" + std::to_string(min) + ".." + std::to_string(max) + "]", true,
       [=](const std::string& v) { *target = parse_integer(name, v, min, max); }});
}

void CommandLine::add_choice(const std::string& name, std::string* target, std::vector<std::string> choices,
                             const std::string& help) {
  std::string list;
  for (const std::string& c : choices) list += (list.empty() ? "" : "|") + c;
  add({name, list, *target, help, true, [=](const std::string& v) {
         if (std::find(choices.begin(), choices.end(), v) == choices.end())
           throw UsageError("--" + name + " must be one of " + list + ", got '" + v + "'");
         *target = v;
       }});
}

void CommandLine::add_int_choice(const std::string& name, int* target, std::vector<int> choices,
                                 const std::string& help) {
  std::string list;
  for (const int c : choices) list += (list.empty() ? "" : "|") + std::to_string(c);
  add({name, list, std::to_string(*target), help, true, [=](const std::string& v) {
         for (const int c : choices)
           if (v == std::to_string(c)) {
             *target = c;
             return;
           }
         throw UsageError("--" + name + " must be one of " + list + ", got '" + v + "'");
       }});
}

void CommandLine::add_flag(const std::string& name, bool* target, const std::string& help) {
  add({name, "", "off", help, false, [=](const std::string&) { *target = true; }});
}

void CommandLine::add_custom(const std::string& name, const std::string& value_name,
                             const std::string& default_text, const std::string& help,
                             std::function<void(const std::string&)> apply) {
  add({name, value_name, default_text, help, true, std::move(apply)});
}

void CommandLine::add_rows_x_cols(const std::string& name, int* rows, int* cols, int max_product,
                                  const std::string& help) {
  const std::string range = "two integers >= 1 with ROWS*COLS <= " + std::to_string(max_product);
  add({name, "ROWSxCOLS", std::to_string(*rows) + "x" + std::to_string(*cols), help + " [" + range + "]",
       true, [=](const std::string& text) {
         const UsageError bad("--" + name + " must be ROWSxCOLS, " + range + ", got '" + text + "'");
         const std::size_t times = text.find('x');
         if (times == std::string::npos) throw bad;
         std::int64_t r = 0, c = 0;
         try {
           r = parse_integer(name, text.substr(0, times), 1, max_product);
           c = parse_integer(name, text.substr(times + 1), 1, max_product);
         } catch (const UsageError&) {
           throw bad;
         }
         if (r * c > max_product) throw bad;
         *rows = static_cast<int>(r);
         *cols = static_cast<int>(c);
       }});
}

void CommandLine::add_validator(std::function<void()> validate) {
  validators_.push_back(std::move(validate));
}

CommandLine::Outcome CommandLine::parse(int argc, const char* const* argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") return Outcome::kHelp;
    if (arg.rfind("--", 0) != 0 || arg.size() == 2)
      throw UsageError("unexpected argument '" + arg + "' (options start with --; see --help)");
    const std::size_t equals = arg.find('=');
    const std::string name = arg.substr(2, equals == std::string::npos ? std::string::npos : equals - 2);
    const Option* option = find(name);
    if (option == nullptr) throw UsageError("unknown option '--" + name + "' (see --help)");
    if (!option->takes_value) {
      if (equals != std::string::npos) throw UsageError("--" + name + " takes no value");
      option->apply("");
      continue;
    }
    std::string value;
    if (equals != std::string::npos) {
      value = arg.substr(equals + 1);
    } else {
      if (i + 1 >= argc) throw UsageError("--" + name + " needs a value (" + option->value_name + ")");
      value = argv[++i];
    }
    option->apply(value);
  }
  for (const auto& validate : validators_) validate();
  return Outcome::kRun;
}

void CommandLine::allow_list(const std::string& name) {
  const auto option =
      std::find_if(options_.begin(), options_.end(), [&](const Option& o) { return o.name == name; });
  if (option == options_.end() || !option->takes_value)
    throw std::logic_error("no option with a value: " + name);
  const std::size_t index = lists_.size();
  lists_.push_back({name, option->apply, {}});
  option->help += "; a comma-separated list runs each in turn";
  option->apply = [this, name, index](const std::string& text) {
    std::vector<std::string> values;
    std::size_t start = 0;
    for (;;) {
      const std::size_t comma = text.find(',', start);
      values.push_back(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
      if (values.back().empty()) throw UsageError("--" + name + " has an empty item in '" + text + "'");
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    for (const std::string& value : values) lists_[index].apply_one(value); // each checked
    lists_[index].apply_one(values.front());
    lists_[index].values = values;
  };
}

std::vector<std::string> CommandLine::list_values(const std::string& name) const {
  for (const ListOption& list : lists_)
    if (list.name == name) return list.values;
  throw std::logic_error("not a list option: " + name);
}

void CommandLine::set_value(const std::string& name, const std::string& value) {
  for (const ListOption& list : lists_)
    if (list.name == name) return list.apply_one(value);
  throw std::logic_error("not a list option: " + name);
}

std::string CommandLine::help() const {
  std::ostringstream out;
  out << "usage: " << program_ << " [options]\n\n" << summary_ << "\n\noptions:\n";
  for (const Option& o : options_) {
    std::string left = "  --" + o.name + (o.value_name.empty() ? "" : " " + o.value_name);
    if (left.size() < 28)
      left.resize(28, ' ');
    else
      left += "\n" + std::string(28, ' ');
    out << left << o.help << " (default: " << o.default_text << ")\n";
  }
  out << "  --help                    print this help and exit\n";
  out << "\nexit codes: 0 pass, 1 verification failed, 2 bad input, 3 CUDA error, 77 no usable GPU\n";
  return out.str();
}

void parse_or_exit(CommandLine& cli, int argc, char** argv) {
  try {
    if (cli.parse(argc, argv) == CommandLine::Outcome::kHelp) {
      std::cout << cli.help();
      std::exit(kExitPass);
    }
  } catch (const UsageError& e) {
    std::cerr << "error: " << e.what() << "\n";
    std::exit(kExitBadInput);
  }
}

void add_run_options(CommandLine& cli, RunOptions& run, bool gpu) {
  cli.add_int("warmup", &run.warmup, 0, 100, "untimed runs before timing");
  cli.add_int("reps", &run.reps, 1, 1000, "timed repetitions; the median is reported");
  cli.add_custom("seed", "N", std::to_string(run.seed), "seed of the random inputs [0..2^63-1]",
                 [&run](const std::string& v) {
                   run.seed = static_cast<std::uint64_t>(
                       parse_integer("seed", v, 0, std::numeric_limits<std::int64_t>::max()));
                 });
  cli.add_custom("check", "auto|full|sample|none", "auto",
                 "verification against the CPU reference: auto = full when cheap, else sampled",
                 [&run](const std::string& v) {
                   if (v == "auto")
                     run.check = CheckMode::kAuto;
                   else if (v == "full")
                     run.check = CheckMode::kFull;
                   else if (v == "sample")
                     run.check = CheckMode::kSample;
                   else if (v == "none")
                     run.check = CheckMode::kNone;
                   else
                     throw UsageError("--check must be one of auto|full|sample|none, got '" + v + "'");
                 });
  cli.add_flag("json", &run.json, "also print the results as one JSON object");
  if (!gpu) return;
  cli.add_int("device", &run.device, 0, 63, "CUDA device index");
  cli.add_flag("warm-l2", &run.warm_l2,
               "time each run with what the one before left in the L2 (by default the L2 is emptied before "
               "each timed run: the inputs come from memory, as at a first call)");
}

void add_shape_options(CommandLine& cli, MatmulShape& shape) {
  // --size fills in whatever --m/--n/--k did not set, once all options are read.
  auto size = std::make_shared<std::int64_t>(0);
  auto explicit_dims = std::make_shared<int>(0); // bit 0: m, bit 1: n, bit 2: k
  cli.add_custom("size", "N", "-", "square problem: m = n = k = N [1.." + std::to_string(kMaxDimension) + "]",
                 [size](const std::string& v) { *size = parse_integer("size", v, 1, kMaxDimension); });
  const std::string range = " [1.." + std::to_string(kMaxDimension) + "]";
  cli.add_custom("m", "N", std::to_string(shape.m), "rows of A and C" + range,
                 [&shape, explicit_dims](const std::string& v) {
                   shape.m = parse_integer("m", v, 1, kMaxDimension);
                   *explicit_dims |= 1;
                 });
  cli.add_custom("n", "N", std::to_string(shape.n), "columns of B and C" + range,
                 [&shape, explicit_dims](const std::string& v) {
                   shape.n = parse_integer("n", v, 1, kMaxDimension);
                   *explicit_dims |= 2;
                 });
  cli.add_custom("k", "N", std::to_string(shape.k), "columns of A, rows of B" + range,
                 [&shape, explicit_dims](const std::string& v) {
                   shape.k = parse_integer("k", v, 1, kMaxDimension);
                   *explicit_dims |= 4;
                 });
  cli.add_validator([&shape, size, explicit_dims] {
    if (*size == 0) return;
    if (!(*explicit_dims & 1)) shape.m = *size;
    if (!(*explicit_dims & 2)) shape.n = *size;
    if (!(*explicit_dims & 4)) shape.k = *size;
  });
}

void add_more_shapes_option(CommandLine& cli, std::vector<MatmulShape>& more) {
  const std::string range = std::to_string(kMaxDimension);
  cli.add_custom(
      "also", "MxNxK,...", "-",
      "more problems, run one after another after the first, each as a run of its own (each dimension "
      "in [1.." +
          range + "]; the exit code is the worst)",
      [&more, range](const std::string& v) {
        std::size_t start = 0;
        while (true) {
          const std::size_t comma = std::min(v.find(',', start), v.size());
          const std::string item = v.substr(start, comma - start);
          const std::size_t x1 = item.find('x'), x2 = x1 == std::string::npos ? x1 : item.find('x', x1 + 1);
          if (x2 == std::string::npos)
            throw UsageError("--also takes problems as MxNxK separated by commas, got '" + v + "'");
          MatmulShape shape;
          shape.m = parse_integer("also", item.substr(0, x1), 1, kMaxDimension);
          shape.n = parse_integer("also", item.substr(x1 + 1, x2 - x1 - 1), 1, kMaxDimension);
          shape.k = parse_integer("also", item.substr(x2 + 1), 1, kMaxDimension);
          more.push_back(shape);
          if (comma == v.size()) break;
          start = comma + 1;
        }
      });
}

bool fits_int32_indices(const MatmulShape& s, std::int64_t threads_launched) {
  const std::int64_t largest = std::max({s.m * s.k, s.k * s.n, s.m * s.n, threads_launched});
  return largest <= std::numeric_limits<std::int32_t>::max();
}

std::string to_string(const MatmulShape& shape) {
  return std::to_string(shape.m) + "x" + std::to_string(shape.n) + "x" + std::to_string(shape.k);
}

} // namespace cs
