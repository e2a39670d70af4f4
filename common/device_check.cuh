/// @file device_check.cuh
/// @brief A result checked where it lies, on the GPU: scanned there for the poison pattern, NaN and
/// ±Inf, and only the elements a sampled check compares copied back.
///
/// A C of 2^31 elements is 8.6 GB: copying it to the host, into memory touched for the first time,
/// costs seconds, and a sampled check reads only a few thousand of its elements. The scan of every
/// element (has the kernel written it, is it finite) reads C once at the GPU's bandwidth instead.
#pragma once

#include "verify.hpp"

#include <cstdint>
#include <vector>

namespace cs {

/// Scans the @p count floats at @p d_values (device memory) for the poison pattern (kPoisonBits),
/// other NaNs and ±Inf, on the GPU: the counts and the lowest bad index with its value, as
/// Comparison::scan finds them on the host.
ScanCounts scan_on_device(const float* d_values, std::int64_t count);

/// The elements at @p picked of the device array @p d_values, gathered on the GPU and copied back, in
/// the order of @p picked.
std::vector<float> gather_to_host(const float* d_values, const std::vector<std::int64_t>& picked);

} // namespace cs
