/// \file
/// \brief RAII ownership of device memory: no bare cudaMalloc/cudaFree in lab or test code.
#pragma once

#include <reduce/cuda_check.cuh>

#include <cstddef>
#include <utility>
#include <vector>

namespace reduce {

/// Copies \p count elements from host memory to \p device and returns once they are there.
/// cudaMemcpy from pageable host memory may return before its DMA has landed, and kernels on a
/// non-blocking Stream do not wait for the legacy stream it ran on: without the device-wide wait,
/// a lab launched right after the copy can read the old contents.
template <typename T>
void copy_to_device(T* device, const T* host, std::size_t count) {
  if (count == 0) return;
  REDUCE_CUDA_CHECK(cudaMemcpy(device, host, count * sizeof(T), cudaMemcpyHostToDevice));
  REDUCE_CUDA_CHECK(cudaDeviceSynchronize());
}

/// An array of \p T in device memory, freed when the buffer goes out of scope. Move-only.
template <typename T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;

  /// Allocates \p count elements (uninitialised). A count of zero allocates nothing.
  explicit DeviceBuffer(std::size_t count) : count_(count) {
    if (count_ > 0) REDUCE_CUDA_CHECK(cudaMalloc(&data_, count_ * sizeof(T)));
  }

  /// Allocates and copies \p host to the device.
  explicit DeviceBuffer(const std::vector<T>& host) : DeviceBuffer(host.size()) {
    copy_from_host(host.data(), host.size());
  }

  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  /// Takes over the allocation of \p other, which is left empty.
  DeviceBuffer(DeviceBuffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), count_(std::exchange(other.count_, 0)) {}
  /// Frees this buffer, then takes over the allocation of \p other, which is left empty.
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    if (this != &other) {
      release();
      data_ = std::exchange(other.data_, nullptr);
      count_ = std::exchange(other.count_, 0);
    }
    return *this;
  }
  ~DeviceBuffer() { release(); }

  /// Device pointer to the first element (null when empty).
  T* data() noexcept { return data_; }
  /// Device pointer to the first element (null when empty).
  const T* data() const noexcept { return data_; }
  /// Number of elements.
  std::size_t size() const noexcept { return count_; }
  /// Size in bytes.
  std::size_t bytes() const noexcept { return count_ * sizeof(T); }

  /// Copies \p count elements from host memory to the start of the buffer; returns once they
  /// are on the device (copy_to_device()).
  void copy_from_host(const T* host, std::size_t count) { copy_to_device(data_, host, count); }

  /// Copies the whole buffer back to a host vector (synchronous).
  std::vector<T> to_host() const {
    std::vector<T> host(count_);
    if (count_ > 0)
      REDUCE_CUDA_CHECK(cudaMemcpy(host.data(), data_, bytes(), cudaMemcpyDeviceToHost));
    return host;
  }

  /// Sets every byte to \p byte on \p stream (used to poison outputs and scratch memory).
  void fill_bytes(int byte, cudaStream_t stream = nullptr) {
    if (count_ > 0) REDUCE_CUDA_CHECK(cudaMemsetAsync(data_, byte, bytes(), stream));
  }

 private:
  void release() noexcept {
    if (data_ != nullptr) cudaFree(data_);  // errors here cannot be reported from a destructor
    data_ = nullptr;
    count_ = 0;
  }

  T* data_ = nullptr;
  std::size_t count_ = 0;
};

/// An owned CUDA stream.
class Stream {
 public:
  /// Creates a non-blocking stream.
  Stream() { REDUCE_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  ~Stream() { cudaStreamDestroy(stream_); }
  /// The raw handle.
  cudaStream_t get() const noexcept { return stream_; }
  /// Waits for all work queued on the stream and reports any error it raised.
  void synchronize() const { REDUCE_CUDA_CHECK(cudaStreamSynchronize(stream_)); }

 private:
  cudaStream_t stream_ = nullptr;
};

}  // namespace reduce
