/// \file
/// \brief What every GPU test suite shares: skipping without a GPU, and running a lab honestly.
#pragma once

#include <reduce/device_buffer.cuh>
#include <reduce/device_info.cuh>

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

/// Skips the current test with a message when no CUDA device is present.
#define REDUCE_REQUIRE_GPU()                                              \
  do {                                                                    \
    if (!::reduce::has_gpu()) GTEST_SKIP() << "no CUDA device: GPU test skipped"; \
  } while (0)

namespace reduce::testing {

/// Byte written over outputs and workspaces before every call: 0xFF makes every float a NaN,
/// so an output the lab never wrote cannot pass for a result.
inline constexpr int kPoisonByte = 0xFF;

/// Bit pattern of a float, for bitwise comparisons (NaN == NaN, +0 != -0).
inline std::uint32_t bits(float v) {
  std::uint32_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

/// Seed for the random inputs of this run: REDUCE_SEED if set (to reproduce a failure),
/// else fixed. Printed once so every log carries it.
std::uint64_t test_seed();

/// Skips the current test unless \p bytes of device memory are free (with a margin).
bool enough_device_memory(std::size_t bytes);

/// Writes \p v to element \p i of a device array; returns once it has landed.
inline void set_element(float* device, std::size_t i, float v) { copy_to_device(device + i, &v, 1); }

}  // namespace reduce::testing
