/// @file matrix.cpp
/// @brief Implementation of the random matrix generator and the poison helpers.
#include "matrix.hpp"

#include "mt_jump.hpp"

#include <algorithm>
#include <cstring>
#include <random>

namespace cs {

namespace {

// The generator of random_matrix(), each value passed through @p finish on its way into the matrix.
// A large matrix is drawn in slices on several threads, each slice's engine jumped ahead to where
// the slice starts (Mt19937_64::jump_ahead): the values are those of one long draw, whatever the
// number of slices, and a 2^31-element B takes a fraction of the time one thread takes. The matrix
// is not zeroed first (HostMatrix): each thread is the first to write its slice.
template <typename Finish>
HostMatrix generate(std::int64_t rows, std::int64_t cols, std::uint64_t seed, Operand which, Finish finish) {
  HostMatrix values(static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols));
  on_slices(static_cast<std::int64_t>(values.size()), [&](std::int64_t begin, std::int64_t end) {
    // Mix the operand into the seed so that A and B (same --seed) are independent streams.
    std::seed_seq sequence{static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32),
                           static_cast<std::uint32_t>(which)};
    Mt19937_64 engine(sequence);
    engine.jump_ahead(static_cast<std::uint64_t>(begin));
    std::uint64_t draws[Mt19937_64::kWords]; // drawn a block at a time, then made floats
    for (std::int64_t first = begin; first < end; first += Mt19937_64::kWords) {
      const std::int64_t count = std::min<std::int64_t>(Mt19937_64::kWords, end - first);
      engine.draw(draws, count);
      for (std::int64_t i = 0; i < count; ++i) {
        const auto top24 = static_cast<std::int32_t>(draws[i] >> 40); // 0 .. 2^24 - 1
        values[static_cast<std::size_t>(first + i)] =
            finish(static_cast<float>(top24) / 8388608.0f - 1.0f); // k / 2^23 - 1, exact
      }
    }
  });
  return values;
}

} // namespace

HostMatrix random_matrix(std::int64_t rows, std::int64_t cols, std::uint64_t seed, Operand which) {
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

HostMatrix random_bf16_matrix(std::int64_t rows, std::int64_t cols, std::uint64_t seed, Operand which) {
  return generate(rows, cols, seed, which, round_to_bf16); // random_matrix()'s values, rounded as they come
}

void poison(HostMatrix& values) {
  on_slices(static_cast<std::int64_t>(values.size()), [&](std::int64_t begin, std::int64_t end) {
    std::memset(values.data() + begin, kPoisonByte, static_cast<std::size_t>(end - begin) * sizeof(float));
  });
}

HostMatrix poisoned_matrix(std::size_t count) {
  HostMatrix values(count);
  poison(values);
  return values;
}

bool is_poison(float value) {
  std::uint32_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  return bits == kPoisonBits;
}

} // namespace cs
