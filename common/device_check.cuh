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

/// The sampled check of C (m x n at @p d_c, device memory) against the double reference of the host
/// copies @p a and @p b: the elements sampled_elements() picks gathered and copied back, and, when
/// @p scan_every_element, every element of C scanned on the GPU first (scan_on_device), as
/// verify_matmul's sampled check scans a host copy. Without the scan it is the yardstick's check
/// (cuBLAS's C is checked to be the same product, not scanned).
CheckResult verify_matmul_on_device(const float* d_c, const HostMatrix& a, const HostMatrix& b,
                                    const MatmulShape& shape, std::uint64_t seed, Accumulation accumulation,
                                    bool scan_every_element);

} // namespace cs
