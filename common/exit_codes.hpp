/// @file exit_codes.hpp
/// @brief The exit codes every stage uses, so scripts and CTest can tell the outcomes apart.
#pragma once

namespace cs {

/// Process exit codes shared by every stage.
enum ExitCode : int {
  kExitPass = 0,               ///< Ran and every check passed.
  kExitVerificationFailed = 1, ///< Ran, but a result did not match the reference.
  kExitBadInput = 2,           ///< The command line was rejected before any GPU work.
  kExitCudaError = 3,          ///< A CUDA call failed.
  kExitNoGpu = 77,             ///< No usable GPU or driver; CTest reports the test as skipped.
};

} // namespace cs
