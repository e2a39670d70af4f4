/// @file device_buffer.cuh
/// @brief An array in device memory that frees itself when its scope ends (RAII).
#pragma once

#include "cuda_check.cuh"
#include "matrix.hpp"

#include <cstddef>
#include <utility>
#include <vector>

namespace cs {

/// @p count elements of @p T in device memory: allocated by the constructor, freed by the
/// destructor, so no path out of a function (an early return, an exit after an error) can forget
/// a cudaFree or run one twice. Move-only, like std::unique_ptr.
template <typename T>
class DeviceBuffer {
 public:
  /// Allocates room for @p count elements (uninitialized, as cudaMalloc leaves them; none for 0).
  explicit DeviceBuffer(std::size_t count) : count_(count) {
    if (count_ > 0) CUDA_CHECK(cudaMalloc(&data_, bytes()));
  }
  /// Allocates room for @p host and copies it over.
  template <typename Allocator>
  explicit DeviceBuffer(const std::vector<T, Allocator>& host) : DeviceBuffer(host.size()) {
    CUDA_CHECK(cudaMemcpy(data_, host.data(), bytes(), cudaMemcpyHostToDevice));
  }
  ~DeviceBuffer() { cudaFree(data_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  /// Takes over @p other's allocation; @p other is left empty.
  DeviceBuffer(DeviceBuffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), count_(std::exchange(other.count_, 0)) {}
  /// Frees this allocation and takes over @p other's.
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(count_, other.count_);
    return *this;
  }

  /// The device pointer, to pass to kernels and CUDA calls.
  T* get() const { return data_; }
  /// Elements in the buffer.
  std::size_t size() const { return count_; }
  /// Bytes in the buffer.
  std::size_t bytes() const { return count_ * sizeof(T); }

  /// Copies the whole buffer back to the host.
  std::vector<T> to_host() const {
    std::vector<T> host(count_);
    to_host(host);
    return host;
  }
  /// Copies the whole buffer back into @p host, resized to fit: memory a caller already holds, which
  /// for gigabytes saves allocating (and the system zeroing) it again.
  template <typename Allocator>
  void to_host(std::vector<T, Allocator>& host) const {
    host.resize(count_);
    CUDA_CHECK(cudaMemcpy(host.data(), data_, bytes(), cudaMemcpyDeviceToHost));
  }
  /// Sets every byte to kPoisonByte, so that an element no kernel writes reads back as the poison
  /// pattern (matrix.hpp) and fails verification.
  void poison() { CUDA_CHECK(cudaMemset(data_, kPoisonByte, bytes())); }

 private:
  T* data_ = nullptr;
  std::size_t count_ = 0;
};

} // namespace cs
