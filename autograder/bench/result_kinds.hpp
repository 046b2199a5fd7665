/// \file
/// \brief What the benchmark needs to know of a result kind (runner.hpp's ResultKind), beside
/// what the protocol says of it (result_bytes, per_segment).
#pragma once

#include "runner.hpp"

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace reduce::bench {

/// Whether one call's result is an int64 index (argmax), else one float.
constexpr bool is_index(ResultKind kind) {
  return kind == ResultKind::kIndex;
}

/// Floats one call writes per segment of a segmented kind: 1 (a sum), 2 (softmax's pair).
constexpr std::size_t floats_per_segment(ResultKind kind) {
  return result_bytes(kind) / sizeof(float);
}

/// A result of \p kind as read back into an int64 (a float's bits, or an index), as a number.
inline double decode_result(ResultKind kind, std::int64_t bits) {
  if (is_index(kind)) return static_cast<double>(bits);
  float f;
  const auto word = static_cast<std::uint32_t>(bits);
  std::memcpy(&f, &word, sizeof f);
  return f;
}

}  // namespace reduce::bench
