#include <reduce/cuda_check.cuh>
#include <reduce/device_info.cuh>

namespace reduce {

double DeviceInfo::theoretical_bandwidth_gbps() const {
  return 2.0 * memory_clock_khz * 1e3 * (memory_bus_bits / 8.0) / 1e9;
}

bool has_gpu() noexcept {
  int count = 0;
  const bool ok = cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
  cudaGetLastError();  // clear the error a machine without a driver leaves behind
  return ok;
}

DeviceInfo query_device(int ordinal) {
  DeviceInfo info;
  info.ordinal = ordinal;
  cudaDeviceProp prop{};
  REDUCE_CUDA_CHECK(cudaGetDeviceProperties(&prop, ordinal));
  info.name = prop.name;
  info.global_memory_bytes = prop.totalGlobalMem;
  auto attribute = [ordinal](cudaDeviceAttr attr) {
    int value = 0;
    REDUCE_CUDA_CHECK(cudaDeviceGetAttribute(&value, attr, ordinal));
    return value;
  };
  info.compute_major = attribute(cudaDevAttrComputeCapabilityMajor);
  info.compute_minor = attribute(cudaDevAttrComputeCapabilityMinor);
  info.sm_count = attribute(cudaDevAttrMultiProcessorCount);
  info.max_threads_per_sm = attribute(cudaDevAttrMaxThreadsPerMultiProcessor);
  info.l2_bytes = static_cast<std::size_t>(attribute(cudaDevAttrL2CacheSize));
  info.memory_clock_khz = attribute(cudaDevAttrMemoryClockRate);
  info.memory_bus_bits = attribute(cudaDevAttrGlobalMemoryBusWidth);
  return info;
}

std::size_t free_device_memory() {
  std::size_t free_bytes = 0, total_bytes = 0;
  REDUCE_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  return free_bytes;
}

}  // namespace reduce
