/// \file
/// \brief Which reasons hold the GPU's clocks down now (ClockWatch), read through NVML, so that a
/// graded row leaves out the samples a power or thermal limit slowed (sampling_rule.hpp).
#pragma once

#include <cstdint>
#include <string>

namespace reduce::bench {

/// NVML's view of one GPU, loaded at run time: libnvidia-ml.so.1 comes with the driver, not the
/// toolkit, and a machine without it still runs the benchmark, seeing no slowdown (as before
/// rows left throttled samples out).
class ClockWatch {
 public:
  /// The GPU at PCI bus id \p bus_id (cudaDeviceGetPCIBusId()'s form, as NVML takes it); without
  /// NVML, or where NVML does not know that GPU, a watch that reads 0 (available() false).
  explicit ClockWatch(const std::string& bus_id);
  ~ClockWatch();
  ClockWatch(const ClockWatch&) = delete;
  ClockWatch& operator=(const ClockWatch&) = delete;

  /// Whether reasons() reads the GPU.
  bool available() const { return read_ != nullptr; }
  /// What the watch reads: "nvml", or why it reads nothing.
  const std::string& source() const { return source_; }

  /// The clocks-event reasons active now (nvmlDeviceGetCurrentClocksEventReasons(), the bits of
  /// nvml.h's nvmlClocksEventReason*); 0 where unavailable or where a read fails.
  std::uint64_t reasons() const;

 private:
  using ReadReasons = int (*)(void* device, unsigned long long* reasons);
  void* library_ = nullptr;
  void* device_ = nullptr;
  ReadReasons read_ = nullptr;
  int (*shutdown_)() = nullptr;
  std::string source_;
};

}  // namespace reduce::bench
