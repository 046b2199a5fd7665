// NVML through dlopen (clock_watch.hpp): the few entry points the watch needs, declared by their
// documented C signatures (nvmlReturn_t is an int, 0 for success; nvmlDevice_t a pointer).
#include "clock_watch.hpp"

#include <dlfcn.h>

namespace reduce::bench {

ClockWatch::ClockWatch(const std::string& bus_id) {
  library_ = ::dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (library_ == nullptr) {
    source_ = "none: libnvidia-ml.so.1 not found";
    return;
  }
  using Init = int (*)();
  using ByBusId = int (*)(const char*, void**);
  const auto init = reinterpret_cast<Init>(::dlsym(library_, "nvmlInit_v2"));
  const auto by_bus_id =
      reinterpret_cast<ByBusId>(::dlsym(library_, "nvmlDeviceGetHandleByPciBusId_v2"));
  // The name NVML 12.2 gave the call; older drivers have only its former one, same signature.
  void* read = ::dlsym(library_, "nvmlDeviceGetCurrentClocksEventReasons");
  if (read == nullptr) read = ::dlsym(library_, "nvmlDeviceGetCurrentClocksThrottleReasons");
  if (init == nullptr || by_bus_id == nullptr || read == nullptr) {
    source_ = "none: libnvidia-ml.so.1 lacks the calls it needs";
    return;
  }
  if (init() != 0) {
    source_ = "none: nvmlInit failed";
    return;
  }
  shutdown_ = reinterpret_cast<int (*)()>(::dlsym(library_, "nvmlShutdown"));
  if (by_bus_id(bus_id.c_str(), &device_) != 0) {
    source_ = "none: NVML does not know the GPU at " + bus_id;
    return;
  }
  read_ = reinterpret_cast<ReadReasons>(read);
  source_ = "nvml";
}

ClockWatch::~ClockWatch() {
  if (shutdown_ != nullptr) shutdown_();
  if (library_ != nullptr) ::dlclose(library_);
}

std::uint64_t ClockWatch::reasons() const {
  unsigned long long reasons = 0;
  if (read_ == nullptr || read_(device_, &reasons) != 0) return 0;
  return reasons;
}

}  // namespace reduce::bench
