/// @file matrix.hpp
/// @brief Reproducible random inputs and the "never written" poison value.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include <thread>
#include <utility>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace cs {

/// std::allocator, except that a new element is default-initialized instead of value-initialized:
/// for a float, left as the memory had it instead of zeroed. A matrix of 2^31 floats (8.6 GB) is then
/// first written by the threads that fill it, at once, instead of zeroed by one thread beforehand
/// (about 5 s on the GPU machine, the most of a test of that size).
///
/// On Linux an allocation of 64 MiB or more is aligned to 2 MiB and marked for transparent huge
/// pages (madvise): its first touch then takes one page fault per 2 MiB instead of one per 4 KiB,
/// two million fewer for a matrix of 2^31 floats (a few seconds of the kernel's time). Where the
/// system declines, it has 4 KiB pages as before; nothing else changes.
template <typename T>
struct UninitializedAllocator : std::allocator<T> {
  static constexpr std::size_t kHugePage = std::size_t{2} << 20;  ///< the x86-64 huge page
  static constexpr std::size_t kHugeFrom = std::size_t{64} << 20; ///< from this many bytes
  /// The same allocator for another element type (as std::vector's implementation may ask).
  template <typename U>
  struct rebind {
    using other = UninitializedAllocator<U>; ///< the allocator for U
  };
  UninitializedAllocator() = default;
  /// Converts from the allocator of another element type (no state to copy).
  template <typename U>
  UninitializedAllocator(const UninitializedAllocator<U>&) noexcept {}
  /// Storage for @p count elements: std::allocator's, or on Linux whole huge pages for a large matrix.
  T* allocate(std::size_t count) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (count * sizeof(T) >= kHugeFrom) {
      const std::size_t whole_pages = (count * sizeof(T) + kHugePage - 1) / kHugePage * kHugePage;
      void* storage = std::aligned_alloc(kHugePage, whole_pages);
      if (storage == nullptr) throw std::bad_alloc();
      madvise(storage, whole_pages, MADV_HUGEPAGE); // a hint: declined, the pages are 4 KiB ones
      return static_cast<T*>(storage);
    }
#endif
    return std::allocator<T>::allocate(count);
  }
  /// Gives back what allocate() gave for @p count elements, the way it was taken.
  void deallocate(T* storage, std::size_t count) noexcept {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (count * sizeof(T) >= kHugeFrom) {
      std::free(storage);
      return;
    }
#endif
    std::allocator<T>::deallocate(storage, count);
  }
  /// A new element with no initial value: default-initialized (for a float, not written at all).
  template <typename U>
  void construct(U* place) noexcept {
    ::new (static_cast<void*>(place)) U;
  }
  /// A new element from @p args, as std::allocator makes it.
  template <typename U, typename... Args>
  void construct(U* place, Args&&... args) {
    ::new (static_cast<void*>(place)) U(std::forward<Args>(args)...);
  }
};

/// Calls `work(begin, end)` on slices of [0, @p count): one slice per 2^24 elements, at most 8, each
/// on a thread of its own, and returns when all are done (the same slicing on every machine; one
/// slice, on the calling thread, when the range is small). For work on the elements of a large
/// matrix in which each element is its own: generating, poisoning, converting.
template <typename Work>
void on_slices(std::int64_t count, const Work& work) {
  const std::int64_t slices = std::clamp<std::int64_t>(count >> 24, 1, 8);
  if (slices == 1) {
    work(std::int64_t{0}, count);
    return;
  }
  std::vector<std::thread> workers;
  for (std::int64_t t = 0; t < slices; ++t)
    workers.emplace_back(work, count * t / slices, count * (t + 1) / slices);
  for (std::thread& worker : workers) worker.join();
}

/// A matrix (or vector) of floats on the host, row-major: a std::vector whose new elements are not
/// zeroed (UninitializedAllocator). Every function that makes one writes every element.
using HostMatrix = std::vector<float, UninitializedAllocator<float>>;

/// Which input a generated matrix is, so A and B drawn from one seed still differ.
enum class Operand : std::uint64_t {
  kA = 1, ///< A of a matrix product
  kB = 2, ///< B of a matrix product
  kX = 3, ///< x of a dot product
  kY = 4, ///< y of a dot product
};

/// A rows × cols row-major matrix of floats uniform in [-1, 1), reproducible from @p seed.
///
/// The engine is std::mt19937_64, whose output sequence the C++ standard fixes (written out in
/// mt_jump.hpp, so that a large matrix is drawn in slices on several threads with exactly the
/// values of one draw), and the conversion to float is done here (the standard distributions are
/// not the same on every library): the top 24 bits of each draw become k / 2^23 − 1, so every value is an
/// exact float with no rounding and the same on every platform. Negative and positive values make the sums
/// cancel, which tests more than all-positive inputs, and independent entries make the matrix
/// non-symmetric (a kernel that swaps A[i][k] for A[k][i] fails).
HostMatrix random_matrix(std::int64_t rows, std::int64_t cols, std::uint64_t seed, Operand which);

/// @p value rounded to the nearest bfloat16 (ties to even), returned as the float of the same value.
///
/// bfloat16 is a float's top 16 bits: the same 8-bit exponent, 8 significant bits instead of 24. So
/// the rounding is integer arithmetic on the bits, the same on every platform, and the result
/// converts to and from bfloat16 exactly. NaN and ±Inf are not expected here (the generator makes
/// none).
float round_to_bf16(float value);

/// The matrix random_matrix() draws for the same arguments, each value rounded to bfloat16
/// (round_to_bf16): uniform in [-1, 1] with 8 significant bits, every value exactly a bfloat16.
/// The bf16 stages copy these values to the GPU as bfloat16 and check it against the double
/// reference of exactly these values, so rounding the inputs is never mistaken for an error.
HostMatrix random_bf16_matrix(std::int64_t rows, std::int64_t cols, std::uint64_t seed, Operand which);

/// The bit pattern used to poison outputs before every run: 0xFFFFFFFF, a NaN that arithmetic
/// never produces (the GPU's NaN is 0x7FFFFFFF, the x86 default 0xFFC00000), and the pattern
/// `cudaMemset(ptr, 0xFF, bytes)` writes. An element still holding it was never written.
constexpr std::uint32_t kPoisonBits = 0xFFFFFFFFu;

/// Byte value to pass to memset / cudaMemset to poison a float buffer.
constexpr int kPoisonByte = 0xFF;

/// Fills @p values with the poison pattern (a large matrix on several threads).
void poison(HostMatrix& values);

/// A matrix of @p count floats, every one poisoned (on several threads when it is large, so that
/// its memory is first touched by them at once): the host's copy of a result before it is copied
/// back.
HostMatrix poisoned_matrix(std::size_t count);

/// True when @p value holds exactly the poison bit pattern.
bool is_poison(float value);

} // namespace cs
