/// @file matrix.cpp
/// @brief Implementation of the random matrix generator and the poison helpers.
#include "matrix.hpp"

#include <cstring>
#include <random>

namespace cs {

std::vector<float> random_matrix(std::int64_t rows, std::int64_t cols, std::uint64_t seed, Operand which) {
  // Mix the operand into the seed so that A and B (same --seed) are independent streams.
  std::seed_seq sequence{static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32),
                         static_cast<std::uint32_t>(which)};
  std::mt19937_64 engine(sequence);
  std::vector<float> values(static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols));
  for (float& v : values) {
    const auto top24 = static_cast<std::int32_t>(engine() >> 40); // 0 .. 2^24 - 1
    v = static_cast<float>(top24) / 8388608.0f - 1.0f;            // k / 2^23 - 1, exact
  }
  return values;
}

void poison(std::vector<float>& values) {
  std::memset(values.data(), kPoisonByte, values.size() * sizeof(float));
}

bool is_poison(float value) {
  std::uint32_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  return bits == kPoisonBits;
}

} // namespace cs
