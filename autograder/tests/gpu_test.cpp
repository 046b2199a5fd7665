#include "gpu_test.hpp"

#include <cstdio>
#include <cstdlib>
#include <string>

namespace reduce::testing {

std::uint64_t test_seed() {
  static const std::uint64_t seed = [] {
    const char* env = std::getenv("REDUCE_SEED");
    const std::uint64_t value = env != nullptr ? std::stoull(env, nullptr, 0) : 20261122ull;
    std::printf("[ seed     ] REDUCE_SEED=%llu\n", static_cast<unsigned long long>(value));
    return value;
  }();
  return seed;
}

bool enough_device_memory(std::size_t bytes) {
  const std::size_t margin = std::size_t{512} << 20;
  return free_device_memory() >= bytes + margin;
}

}  // namespace reduce::testing
