/// @file mt_jump.cpp
/// @brief The Mersenne Twister of mt_jump.hpp and its jump ahead.
#include "mt_jump.hpp"

#include <algorithm>
#include <array>
#include <cstddef>
#include <stdexcept>
#include <vector>

namespace cs {

namespace {

// std::mt19937_64's parameters ([rand.predef]): word size 64, degree n = 312, middle word m = 156,
// separation point r = 31 (the upper 33 bits of the oldest word, the lower 31 of the next), the
// twist matrix a and the tempering shifts and masks.
constexpr int kN = Mt19937_64::kWords;
constexpr int kM = 156;
constexpr std::uint64_t kTwist = 0xB5026F5AA96619E9ull;
constexpr std::uint64_t kUpper = 0xFFFFFFFF80000000ull;
constexpr std::uint64_t kLower = 0x000000007FFFFFFFull;
constexpr int kDegree = 19937; // n·64 − r: the bits of state that matter

// One step of the recurrence: the new word from the oldest, the next and the middle one. The twist
// matrix is added where y is odd, as a mask (all ones times y's lowest bit), not a choice: the
// compiler then makes the 312 steps of a block vector instructions on any x86-64 (a choice needs
// SSE4.1's 64-bit compare to be), and a block takes a third of the time.
std::uint64_t twist(std::uint64_t oldest, std::uint64_t next, std::uint64_t middle) {
  const std::uint64_t y = (oldest & kUpper) | (next & kLower);
  return middle ^ (y >> 1) ^ (kTwist & (std::uint64_t{0} - (y & 1u)));
}

// The state as the recurrence sees it one step at a time: 312 words in a ring, `oldest` the next
// one a step replaces. The jump steps states like this, and adds them word by word.
struct Ring {
  std::uint64_t words[kN] = {};
  int oldest = 0;
  void step() {
    const int next = oldest + 1 == kN ? 0 : oldest + 1;
    const int middle = oldest + kM < kN ? oldest + kM : oldest + kM - kN;
    words[oldest] = twist(words[oldest], words[next], words[middle]);
    oldest = next;
  }
};

// A polynomial over GF(2): bit i of word i / 64 is the coefficient of x^i.
using Poly = std::vector<std::uint64_t>;

bool bit(const Poly& p, std::int64_t i) {
  return static_cast<std::size_t>(i / 64) < p.size() &&
         (p[static_cast<std::size_t>(i / 64)] >> (i % 64) & 1u);
}

void flip(Poly& p, std::int64_t i) {
  p[static_cast<std::size_t>(i / 64)] ^= std::uint64_t{1} << (i % 64);
}

// p ^= q · x^shift; the terms of q · x^shift must all fit in p.
void add_shifted(Poly& p, const Poly& q, std::int64_t shift) {
  const std::size_t words = static_cast<std::size_t>(shift / 64);
  const int bits = static_cast<int>(shift % 64);
  for (std::size_t w = 0; w < q.size(); ++w) {
    if (q[w] == 0) continue;
    const std::uint64_t high = bits != 0 ? q[w] >> (64 - bits) : 0;
    if (w + words >= p.size() || (high != 0 && w + words + 1 >= p.size()))
      throw std::logic_error("Mt19937_64: a polynomial outgrew its storage");
    p[w + words] ^= q[w] << bits;
    if (high != 0) p[w + words + 1] ^= high;
  }
}

// The 64 bits of p from bit `first` on (zero past its end).
std::uint64_t bits_from(const Poly& p, std::int64_t first) {
  const std::size_t word = static_cast<std::size_t>(first / 64);
  const int shift = static_cast<int>(first % 64);
  std::uint64_t low = word < p.size() ? p[word] >> shift : 0;
  if (shift != 0 && word + 1 < p.size()) low |= p[word + 1] << (64 - shift);
  return low;
}

int parity(std::uint64_t v) {
  v ^= v >> 32;
  v ^= v >> 16;
  v ^= v >> 8;
  v ^= v >> 4;
  v ^= v >> 2;
  v ^= v >> 1;
  return static_cast<int>(v & 1u);
}

// Bit k of v at bit 2k of the result: the square of a polynomial over GF(2) is its coefficients
// spread apart, since (a + b)^2 = a^2 + b^2 there. v holds 32 coefficients.
std::uint64_t spread(std::uint32_t v) {
  std::uint64_t x = v;
  x = (x | x << 16) & 0x0000FFFF0000FFFFull;
  x = (x | x << 8) & 0x00FF00FF00FF00FFull;
  x = (x | x << 4) & 0x0F0F0F0F0F0F0F0Full;
  x = (x | x << 2) & 0x3333333333333333ull;
  x = (x | x << 1) & 0x5555555555555555ull;
  return x;
}

} // namespace

Mt19937_64::Mt19937_64(std::seed_seq& sequence) {
  // [rand.eng.mers] seed(q): 2 words of 32 bits from q per state word, low half first; a state
  // whose bits that matter are all zero is replaced by 2^63 in the oldest word.
  std::array<std::uint32_t, 2 * kN> halves{};
  sequence.generate(halves.begin(), halves.end());
  bool zero = true;
  for (int i = 0; i < kN; ++i) {
    words_[i] = halves[2 * i] | static_cast<std::uint64_t>(halves[2 * i + 1]) << 32;
    zero = zero && (i == 0 ? (words_[i] & kUpper) == 0 : words_[i] == 0);
  }
  if (zero) words_[0] = std::uint64_t{1} << 63;
  ready_ = kN; // the state itself: the first output needs a new block
}

void Mt19937_64::next_block() {
  // Word k of the new block from words k, k + 1 and k + m of the old one, which are already new
  // where k + 1 or k + m wrapped round: the three stretches of the standard library's twist.
  int k = 0;
  for (; k < kN - kM; ++k) words_[k] = twist(words_[k], words_[k + 1], words_[k + kM]);
  for (; k < kN - 1; ++k) words_[k] = twist(words_[k], words_[k + 1], words_[k + kM - kN]);
  words_[kN - 1] = twist(words_[kN - 1], words_[0], words_[kM - 1]);
  ready_ = 0;
}

void Mt19937_64::draw(std::uint64_t* out, std::int64_t count) {
  while (count > 0) {
    if (ready_ == kWords) next_block();
    const int taken = static_cast<int>(std::min<std::int64_t>(count, kWords - ready_));
    for (int i = 0; i < taken; ++i) out[i] = temper(words_[ready_ + i]); // one loop: vector instructions
    ready_ += taken;
    out += taken;
    count -= taken;
  }
}

namespace {

// φ, the characteristic polynomial of the recurrence (degree 19937), by Berlekamp–Massey from the
// lowest bit of 2·19937 outputs: the shortest linear recurrence those bits obey. Every bit of every
// output is a linear function of the state, so it obeys φ, and from a state with any live bit set
// no shorter recurrence fits (φ is primitive: that is how the generator's period was proved).
Poly characteristic_polynomial() {
  std::seed_seq one{1u};
  Mt19937_64 engine(one);
  constexpr std::int64_t kBits = 2 * kDegree;
  const std::size_t words = static_cast<std::size_t>(kBits / 64 + 2);
  // The bits in reverse order (bit kBits − 1 − j is s_j), so that the sum over the recurrence's
  // taps, c_0·s_j + c_1·s_{j−1} + ... + c_L·s_{j−L}, is one AND of C with a stretch of them.
  Poly reversed(words, 0);
  for (std::int64_t j = 0; j < kBits; ++j)
    if (engine() & 1u) flip(reversed, kBits - 1 - j);
  Poly connection(words, 0), previous(words, 0);
  connection[0] = previous[0] = 1; // C(x) = B(x) = 1
  std::int64_t length = 0, gap = 1;
  for (std::int64_t j = 0; j < kBits; ++j) {
    std::uint64_t sum = 0; // the discrepancy, 64 terms at a time
    const std::int64_t first = kBits - 1 - j;
    for (std::int64_t w = 0; w * 64 <= length; ++w)
      sum ^= connection[static_cast<std::size_t>(w)] & bits_from(reversed, first + w * 64);
    if (parity(sum) == 0) {
      ++gap;
    } else if (2 * length <= j) {
      const Poly before = connection;
      add_shifted(connection, previous, gap);
      length = j + 1 - length;
      previous = before;
      gap = 1;
    } else {
      add_shifted(connection, previous, gap);
      ++gap;
    }
  }
  if (length != kDegree) throw std::logic_error("Mt19937_64: the recurrence found is not of degree 19937");
  // φ(x) = x^L·C(1/x): the coefficients of the connection polynomial in reverse order.
  Poly phi(static_cast<std::size_t>(kDegree / 64 + 1), 0);
  for (std::int64_t i = 0; i <= kDegree; ++i)
    if (bit(connection, i)) flip(phi, kDegree - i);
  return phi;
}

// φ, computed once per process (thread-safe: a function-local static).
const Poly& phi() {
  static const Poly polynomial = characteristic_polynomial();
  return polynomial;
}

} // namespace

void Mt19937_64::jump_ahead(std::uint64_t count) {
  // Words of the current block not handed out yet are skipped as they are.
  const std::uint64_t in_block = static_cast<std::uint64_t>(kN - ready_);
  if (count <= in_block) {
    ready_ += static_cast<int>(count);
    return;
  }
  count -= in_block; // from the state the block ends in: words_, oldest first
  const Poly& characteristic = phi();
  // g = x^count mod φ, by squaring and multiplying by x along the bits of count from the top.
  const std::size_t words = characteristic.size();
  Poly g(words, 0), square(2 * words + 1, 0);
  g[0] = 1;
  int top = 63;
  while ((count >> top & 1u) == 0) --top;
  for (int b = top; b >= 0; --b) {
    if (b != top) {
      // g = g^2 mod φ: spread the coefficients, then cancel every term of degree 19937 or more.
      std::fill(square.begin(), square.end(), 0);
      for (std::size_t w = 0; w < words; ++w) {
        square[2 * w] = spread(static_cast<std::uint32_t>(g[w]));
        square[2 * w + 1] = spread(static_cast<std::uint32_t>(g[w] >> 32));
      }
      for (std::int64_t d = 2 * (kDegree - 1); d >= kDegree; --d)
        if (bit(square, d)) add_shifted(square, characteristic, d - kDegree);
      std::copy(square.begin(), square.begin() + static_cast<std::ptrdiff_t>(words), g.begin());
    }
    if (count >> b & 1u) {
      // g = g·x mod φ.
      Poly shifted(words + 1, 0);
      add_shifted(shifted, g, 1);
      if (bit(shifted, kDegree)) add_shifted(shifted, characteristic, 0);
      std::copy(shifted.begin(), shifted.begin() + static_cast<std::ptrdiff_t>(words), g.begin());
    }
  }
  // T^count·state = g(T)·state, by Horner's rule: from the zero state, for each coefficient from the
  // top, one step of the recurrence, then the state itself added where the coefficient is 1.
  Ring sum;
  for (std::int64_t d = kDegree - 1; d >= 0; --d) {
    sum.step();
    if (bit(g, d))
      for (int i = 0; i < kN; ++i)
        sum.words[sum.oldest + i < kN ? sum.oldest + i : sum.oldest + i - kN] ^= words_[i];
  }
  // Back to the block's order: the oldest word first, all of it handed out.
  for (int i = 0; i < kN; ++i)
    words_[i] = sum.words[sum.oldest + i < kN ? sum.oldest + i : sum.oldest + i - kN];
  ready_ = kN;
}

} // namespace cs
