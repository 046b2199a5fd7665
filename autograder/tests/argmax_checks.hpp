/// \file
/// \brief The exact index comparison of the argmax suites, public and hidden, with a message
/// that says what a wrong index suggests.
#pragma once

#include "gpu_test.hpp"

#include <reduce/cuda_check.cuh>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace reduce::testing {

/// Exact comparison with a message that says what the wrong index suggests; \p value_at reads
/// the input at an index (from the host copy or from device memory).
inline void expect_index(std::int64_t got, std::int64_t want,
                         const std::function<float(std::size_t)>& value_at, std::size_t n) {
  if (got == want) return;
  const bool in_range = got >= 0 && static_cast<std::size_t>(got) < n;
  const float got_value = in_range ? value_at(static_cast<std::size_t>(got)) : 0.0f;
  const float want_value = value_at(static_cast<std::size_t>(want));
  std::string hint;
  const std::int64_t two32 = std::int64_t{1} << 32;
  if (got == kPoisonIndex) {
    hint = "-1 is the poison pattern: the output was never written.";
  } else if (want >= two32 && got == want % two32) {
    hint =
        "That is the expected index mod 2^32: a 32-bit index wraps at 2^32, even an unsigned "
        "one (and the element read there was the one 2^32 before it).";
  } else if (!in_range) {
    hint =
        "The index is outside [0, n): above 2^31 elements a 32-bit (int) index wraps to a "
        "negative number; otherwise a poisoned workspace index was read.";
  } else if (std::isnan(want_value) && !std::isnan(got_value)) {
    hint =
        "The input holds a NaN: argmax must return the first NaN's index (numpy/torch). A "
        "comparison `v > best` is false for NaN, so a NaN never wins unless handled.";
  } else if (std::isnan(got_value)) {
    hint = "That is a NaN, but not the first one: among NaNs the smallest index wins.";
  } else if (got_value == want_value) {
    hint = got > want ? "Same value, later index: on ties argmax returns the first index "
                        "(+0.0 and -0.0 tie too). Break ties by the smaller index wherever "
                        "two pairs meet (lanes, warps, blocks), and never replace the kept "
                        "pair with an equal value found later."
                      : "Same value, but an index before the first occurrence cannot hold "
                        "it: the index was computed wrongly.";
  } else {
    hint =
        "Not the largest element: it was never read, or its index was lost on the way "
        "(check the tail, the shuffles of the index, the second pass).";
  }
  ADD_FAILURE() << "n = " << n << ": got index " << got << ", expected " << want << " (value "
                << (in_range ? std::to_string(got_value) : std::string("out of range"))
                << " there, expected " << want_value << "). " << hint;
}

/// expect_index() reading values from a host copy of the input.
inline void expect_index(std::int64_t got, std::int64_t want, const std::vector<float>* host,
                         std::size_t n) {
  expect_index(got, want, [host](std::size_t i) { return (*host)[i]; }, n);
}

/// expect_index() reading values from the device input.
inline void expect_index(std::int64_t got, std::int64_t want, const float* device, std::size_t n) {
  expect_index(
      got, want,
      [device](std::size_t i) {
        float v = 0.0f;
        REDUCE_CUDA_CHECK(cudaMemcpy(&v, device + i, sizeof v, cudaMemcpyDeviceToHost));
        return v;
      },
      n);
}

}  // namespace reduce::testing
