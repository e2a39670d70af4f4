/// @file cli.hpp
/// @brief A small GNU-style long-option parser (`--name value` or `--name=value`).
///
/// Every stage declares its options against a CommandLine, then calls parse_or_exit(): bad input
/// prints `error: <option and allowed range>` on stderr and exits with kExitBadInput (2) before
/// any GPU work is done; `--help` prints every option with its default and exits 0.
#pragma once

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace cs {

/// Thrown by CommandLine::parse() for input that must be rejected; what() is the message
/// without the leading "error: ".
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Parses a whole decimal integer in [min, max]; throws UsageError naming @p option otherwise.
std::int64_t parse_integer(const std::string& option, const std::string& text, std::int64_t min,
                           std::int64_t max);

/// The declared options of one program and the parser that fills them in.
class CommandLine {
 public:
  /// @param program name printed in the usage line (the stage directory's name)
  /// @param summary one sentence saying what the program shows
  CommandLine(std::string program, std::string summary);

  /// An integer option `--name N`, accepted in [min, max]; @p target holds the default.
  void add_int(const std::string& name, int* target, int min, int max, const std::string& help);
  /// A 64-bit integer option `--name N`, accepted in [min, max]; @p target holds the default.
  void add_int(const std::string& name, std::int64_t* target, std::int64_t min, std::int64_t max,
               const std::string& help);
  /// An option whose value must be one of @p choices; @p target holds the default.
  void add_choice(const std::string& name, std::string* target, std::vector<std::string> choices,
                  const std::string& help);
  /// An integer option whose value must be one of @p choices; @p target holds the default.
  void add_int_choice(const std::string& name, int* target, std::vector<int> choices,
                      const std::string& help);
  /// A flag `--name` with no value; sets @p target to true.
  void add_flag(const std::string& name, bool* target, const std::string& help);
  /// An option with its own value parser: @p apply throws UsageError for a bad value.
  void add_custom(const std::string& name, const std::string& value_name, const std::string& default_text,
                  const std::string& help, std::function<void(const std::string& value)> apply);
  /// An option `--name ROWSxCOLS` (e.g. 16x16, 8x32): two integers, each at least 1, whose
  /// product is at most @p max_product; @p rows and @p cols hold the default.
  void add_rows_x_cols(const std::string& name, int* rows, int* cols, int max_product,
                       const std::string& help);
  /// A check run once after all options are read (cross-option rules); throws UsageError.
  void add_validator(std::function<void()> validate);
  /// Lets the option @p name, declared before, take a comma-separated list of its values, each
  /// checked as a value of its own; the option then holds the first. For a program that runs its
  /// work once per value (the matmul flow, for `--params`): list_values() and set_value().
  void allow_list(const std::string& name);
  /// The values a list option was given, in order; empty when it was not given.
  std::vector<std::string> list_values(const std::string& name) const;
  /// Sets the list option @p name to one of its values again, as if only it had been given.
  void set_value(const std::string& name, const std::string& value);
  /// Whether an option @p name was declared.
  bool has_option(const std::string& name) const { return find(name) != nullptr; }

  /// What parse() decided.
  enum class Outcome {
    kRun,  ///< every option was read: go on
    kHelp, ///< `--help` or `-h` came first: print help() and exit 0
  };
  /// Reads argv; throws UsageError on any bad input. Returns kHelp when `--help` was given.
  Outcome parse(int argc, const char* const* argv);
  /// The text `--help` prints.
  std::string help() const;

 private:
  struct Option {
    std::string name, value_name, default_text, help;
    bool takes_value = true;
    std::function<void(const std::string&)> apply;
  };
  const Option* find(const std::string& name) const;
  void add(Option option);

  std::string program_, summary_;
  std::vector<Option> options_;
  std::vector<std::function<void()>> validators_;
  struct ListOption {
    std::string name;
    std::function<void(const std::string&)> apply_one; ///< the option's own parser, for one value
    std::vector<std::string> values;                   ///< what it was given
  };
  std::vector<ListOption> lists_;
};

/// Parses or ends the process: `--help` prints the help and exits 0; bad input prints
/// `error: ...` on stderr and exits 2.
void parse_or_exit(CommandLine& cli, int argc, char** argv);

/// How much of a result to check against the CPU reference.
enum class CheckMode {
  kAuto,   ///< full when the reference is cheap, sampled otherwise
  kFull,   ///< every element
  kSample, ///< borders and random elements, plus a NaN/unwritten scan of every element
  kNone    ///< no check at all (timing only); the result is reported as not checked
};

/// Options every stage shares.
struct RunOptions {
  int warmup = 3;                     ///< untimed runs before timing
  int reps = 20;                      ///< timed repetitions (median reported)
  std::uint64_t seed = 2024;          ///< seed for every random input
  CheckMode check = CheckMode::kAuto; ///< how much to verify
  bool json = false;                  ///< also print a JSON object of the results
  int device = 0;                     ///< CUDA device index (GPU stages)
  bool warm_l2 = false;               ///< time with what the run before left in the L2 (GPU stages)
};

/// Declares `--warmup`, `--reps`, `--seed`, `--check`, `--json` (and `--device` and `--warm-l2` when
/// @p gpu) on @p cli; the values already in @p run are the defaults.
void add_run_options(CommandLine& cli, RunOptions& run, bool gpu);

/// The shape of C = A·B: A is m×k, B is k×n, C is m×n (all row-major).
struct MatmulShape {
  std::int64_t m = 1000; ///< rows of A and C
  std::int64_t n = 1000; ///< columns of B and C
  std::int64_t k = 1000; ///< columns of A, rows of B
};

/// Largest matrix dimension any stage accepts.
constexpr std::int64_t kMaxDimension = 65536;

/// Declares `--size` (m = n = k), `--m`, `--n` and `--k` on @p cli. `--m`/`--n`/`--k` win over
/// `--size` whatever their order.
void add_shape_options(CommandLine& cli, MatmulShape& shape);

/// Declares `--also MxNxK[,MxNxK...]` on @p cli: problems to run after the one the shape options
/// give, appended to @p more in order. One process then runs several sizes one after another, as
/// separate runs would, but with one GPU context: the tests run a parameter set's sizes this way.
void add_more_shapes_option(CommandLine& cli, std::vector<MatmulShape>& more);

/// True when every index a matrix-product kernel of @p shape computes fits in a 32-bit int: the
/// element counts m·k, k·n and m·n, and @p threads_launched (a 1-D grid's thread numbers run past
/// m·n up to the end of the last block). Kernels templated on their index type use `int` then.
bool fits_int32_indices(const MatmulShape& shape, std::int64_t threads_launched = 0);

/// "MxNxK" as text, e.g. "1000x1000x1000".
std::string to_string(const MatmulShape& shape);

} // namespace cs
