/// \file
/// \brief What the benchmarks and the grader need to know about the GPU.
#pragma once

#include <cstddef>
#include <string>

namespace reduce {

/// Properties of one CUDA device, read with cudaDeviceGetAttribute (CUDA 13 removed the clock
/// fields from cudaDeviceProp).
struct DeviceInfo {
  int ordinal = 0;                      ///< device number
  std::string name;                     ///< e.g. "NVIDIA H100 80GB HBM3"
  int compute_major = 0;                ///< compute capability, major
  int compute_minor = 0;                ///< compute capability, minor
  int sm_count = 0;                     ///< streaming multiprocessors
  int max_threads_per_sm = 0;           ///< resident threads per multiprocessor
  std::size_t l2_bytes = 0;             ///< L2 cache size
  std::size_t global_memory_bytes = 0;  ///< total device memory
  int memory_clock_khz = 0;             ///< peak memory clock
  int memory_bus_bits = 0;              ///< memory bus width
  /// Theoretical DRAM bandwidth in GB/s: 2 transfers per clock x bus width.
  double theoretical_bandwidth_gbps() const;
};

/// True when at least one CUDA device is usable. Never throws.
bool has_gpu() noexcept;

/// Reads the properties of device \p ordinal (throws reduce::CudaError on failure).
DeviceInfo query_device(int ordinal = 0);

/// Free device memory in bytes on the current device.
std::size_t free_device_memory();

}  // namespace reduce
