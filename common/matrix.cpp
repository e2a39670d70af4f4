/// @file matrix.cpp
/// @brief Implementation of the random matrix generator and the poison helpers.
#include "matrix.hpp"

#include <cstring>
#include <random>

namespace cs {

namespace {

// The generator of random_matrix(), each value passed through @p finish on its way into the matrix.
template <typename Finish>
std::vector<float> generate(std::int64_t rows, std::int64_t cols, std::uint64_t seed, Operand which,
                            Finish finish) {
  // Mix the operand into the seed so that A and B (same --seed) are independent streams.
  std::seed_seq sequence{static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32),
                         static_cast<std::uint32_t>(which)};
  std::mt19937_64 engine(sequence);
  std::vector<float> values(static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols));
  for (float& v : values) {
    const auto top24 = static_cast<std::int32_t>(engine() >> 40); // 0 .. 2^24 - 1
    v = finish(static_cast<float>(top24) / 8388608.0f - 1.0f);    // k / 2^23 - 1, exact
  }
  return values;
}

} // namespace

std::vector<float> random_matrix(std::int64_t rows, std::int64_t cols, std::uint64_t seed, Operand which) {
  return generate(rows, cols, seed, which, [](float v) { return v; });
}

float round_to_bf16(float value) {
  std::uint32_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  // Add half of the lowest kept bit's place (less one, plus the kept bit itself for ties to even),
  // then drop the 16 low bits: a carry out of the significand moves the exponent, as it should.
  bits += 0x7FFFu + ((bits >> 16) & 1u);
  bits &= 0xFFFF0000u;
  float rounded = 0;
  std::memcpy(&rounded, &bits, sizeof rounded);
  return rounded;
}

std::vector<float> random_bf16_matrix(std::int64_t rows, std::int64_t cols, std::uint64_t seed,
                                      Operand which) {
  return generate(rows, cols, seed, which, round_to_bf16); // random_matrix()'s values, rounded as they come
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
