/// @file mt_jump.hpp
/// @brief std::mt19937_64's algorithm written out, with a jump ahead: the generator of
/// random_matrix() can start a slice of its stream anywhere, so a large matrix is drawn on several
/// threads and still holds exactly the values one long draw gives.
#pragma once

#include <cstdint>
#include <random>

namespace cs {

/// The 64-bit Mersenne Twister of the C++ standard ([rand.eng.mers], the parameters of
/// std::mt19937_64), whose output sequence the standard fixes, plus jump_ahead().
///
/// The state is the last 312 words of the recurrence. Each step makes the next word from three of
/// them, a linear map T over GF(2) (bits, XOR for addition); each output is the new word, tempered.
/// Skipping J outputs is applying T^J to the state. The sequence of any output bit obeys a linear
/// recurrence whose characteristic polynomial φ has degree 19937 (the generator's period is
/// 2^19937 − 1), found once by the Berlekamp–Massey algorithm from 2·19937 bits of output. Then
/// T^J = g(T) with g = x^J mod φ, of degree below 19937: computed by repeated squaring, and applied
/// to the state by Horner's rule, about 20000 steps of the generator whatever J is.
class Mt19937_64 {
 public:
  /// Seeded from @p sequence exactly as std::mt19937_64's constructor from a seed sequence.
  explicit Mt19937_64(std::seed_seq& sequence);

  /// The next output: the value std::mt19937_64, seeded the same, gives at this place.
  std::uint64_t operator()() {
    if (ready_ == kWords) next_block();
    return temper(words_[ready_++]);
  }

  /// The next @p count outputs into @p out: the same values as @p count calls of operator(), made a
  /// block of 312 at a time (about a fifth of the time, for a matrix of millions).
  void draw(std::uint64_t* out, std::int64_t count);

  /// Moves on by @p count outputs as if they had been drawn, in a time that does not grow with
  /// @p count (a few hundredths of a second for 2^31, after the first call, which also finds φ).
  void jump_ahead(std::uint64_t count);

  /// The words of the state (312).
  static constexpr int kWords = 312;

 private:
  static std::uint64_t temper(std::uint64_t z) {
    z ^= (z >> 29) & 0x5555555555555555ull;
    z ^= (z << 17) & 0x71D67FFFEDA60000ull;
    z ^= (z << 37) & 0xFFF7EEE000000000ull;
    return z ^ (z >> 43);
  }
  void next_block(); // the recurrence 312 times: the next 312 words, in place

  // The words drawn 312 at a time, as the standard library does it: words_ holds the last block made,
  // ready_ of which have been handed out. When all have (ready_ == 312), words_ is the state: the
  // last 312 words of the recurrence, the oldest first.
  std::uint64_t words_[kWords] = {};
  int ready_ = kWords;
};

} // namespace cs
