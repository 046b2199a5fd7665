/// \file
/// \brief What lab 17's suites share: offsets of uniform segments, calls through the contract
/// runner, and the softmax check (the maximum exactly, the sum within its bound).
#pragma once

#include "gpu_test.hpp"

#include <reduce/device_buffer.cuh>
#include <reduce/generators.hpp>
#include <reduce/lab_entry_points.cuh>
#include <reduce/reference.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

namespace reduce::testing {

/// Offsets of \p segments segments of \p length each, starting at \p start.
inline std::vector<std::int64_t> uniform_offsets(std::size_t segments, std::size_t length,
                                                 std::size_t start = 0) {
  std::vector<std::int64_t> offsets(segments + 1);
  for (std::size_t s = 0; s <= segments; ++s)
    offsets[s] = static_cast<std::int64_t>(start + s * length);
  return offsets;
}

/// (segments, length) shapes of the uniform tests: every tier and the lengths at its edges.
using SegmentShape = std::tuple<std::size_t, std::size_t>;

/// The uniform tests' shapes, for INSTANTIATE_TEST_SUITE_P.
inline auto segment_shapes() {
  return ::testing::Values(SegmentShape{1, 1}, SegmentShape{4096, 32}, SegmentShape{3000, 33},
                           SegmentShape{1000, 1024}, SegmentShape{1000, 1025},
                           SegmentShape{64, 65537}, SegmentShape{3, (1u << 18) + 1},
                           SegmentShape{2, 1u << 20}, SegmentShape{1, (1u << 22) + 5});
}

/// A shape's test name: "<segments>_of_<length>".
inline std::string segment_shape_name(const ::testing::TestParamInfo<SegmentShape>& info) {
  return std::to_string(std::get<0>(info.param)) + "_of_" + std::to_string(std::get<1>(info.param));
}

/// Segment lengths drawn from \p seed, log-uniform up to 2^21, a fifth of them empty, starting
/// a few elements in (the hidden suites' layouts).
inline std::vector<std::int64_t> drawn_offsets(std::uint64_t seed, std::size_t segments) {
  std::vector<std::int64_t> offsets(1, static_cast<std::int64_t>(mix(seed, 0) % 5));
  for (std::size_t s = 0; s < segments; ++s) {
    const std::uint64_t r = mix(seed, s + 1);
    std::size_t length = r % 5 == 0 ? 0 : (std::size_t{1} << (r >> 8) % 21);
    length += length > 0 ? (r >> 16) % length : 0;
    offsets.push_back(offsets.back() + static_cast<std::int64_t>(length));
  }
  return offsets;
}

/// Runs \p lab, an entry point of \p kind, through \p runner on \p host cut at \p offsets (both
/// copied to the device here); returns the kind's floats per segment (floats_per_segment()).
inline std::vector<float> run_segmented(ContractRunner& runner, const SegmentedLab& lab,
                                        ResultKind kind, const std::vector<float>& host,
                                        const std::vector<std::int64_t>& offsets) {
  const DeviceBuffer<float> in(host.empty() ? std::vector<float>{0.0f} : host);
  const DeviceBuffer<std::int64_t> off(offsets);
  return runner.run(lab, kind, in.data(), host.size(), off.data(), offsets.size() - 1);
}

/// Floats of segmented_softmax's result per segment: its (maximum, sum).
inline constexpr std::size_t kSoftmaxFloats = runner::floats_per_segment(ResultKind::kSegmentPairs);

/// The lab's softmax statistics of \p host cut at \p offsets: (maximum, sum) per segment.
inline std::vector<float> run_softmax(ContractRunner& runner, const std::vector<float>& host,
                                      const std::vector<std::int64_t>& offsets) {
  return run_segmented(runner, SegmentedLab{&segmented_softmax_workspace_bytes, &segmented_softmax},
                       ResultKind::kSegmentPairs, host, offsets);
}

/// Checks softmax's statistics of every segment: the maximum exactly (by value), the sum of
/// exp(x - m) within softmax_sum_error_bound() of the double reference, (-inf, +0) for an empty
/// segment. Reports the first few wrong segments and returns how many were wrong.
inline std::size_t expect_softmax(const std::vector<float>& got, const std::vector<float>& host,
                                  const std::vector<std::int64_t>& offsets,
                                  const std::string& what) {
  const std::size_t segments = offsets.size() - 1;
  EXPECT_EQ(got.size(), kSoftmaxFloats * segments) << what;
  if (got.size() != kSoftmaxFloats * segments) return segments;
  std::size_t wrong = 0;
  for (std::size_t s = 0; s < segments; ++s) {
    const std::int64_t begin = offsets[s], end = offsets[s + 1];
    float m = -std::numeric_limits<float>::infinity();
    for (std::int64_t i = begin; i < end; ++i) m = std::max(m, host[i]);
    double sum = 0, weighted = 0;
    for (std::int64_t i = begin; i < end; ++i) {
      const double y = static_cast<double>(host[i]) - m, t = std::exp(y);
      sum += t;
      weighted += t * -y;
    }
    const auto length = static_cast<std::size_t>(end - begin);
    const double bound =
        length == 0 ? 0 : softmax_sum_error_bound(segment_tree_depth(length), sum, weighted);
    const float got_max = got[kSoftmaxFloats * s], got_sum = got[kSoftmaxFloats * s + 1];
    const bool ok = got_max == m &&  // by value: the maximum of -0 and +0 may be either
                    (length == 0 ? bits(got_sum) == bits(0.0f)
                                 : std::fabs(static_cast<double>(got_sum) - sum) <= bound);
    if (ok) continue;
    if (wrong++ < 5)
      ADD_FAILURE() << what << ": segment " << s << " [" << begin << ", " << end << ") gave ("
                    << describe(got_max) << ", " << describe(got_sum) << "), expected (" << m
                    << ", " << sum << " within " << bound << ")"
                    << (std::isnan(got_max) || std::isnan(got_sum)
                            ? " (NaN: never written, or an element outside the segments reached it)"
                        : got_max == m ? " (the maximum is right: wherever two pairs combine, "
                                         "rescale the sum of the smaller maximum by exp(its "
                                         "maximum - the larger one))"
                                       : "");
  }
  EXPECT_EQ(wrong, 0u) << what << ": " << wrong << " of " << segments << " segments wrong";
  return wrong;
}

}  // namespace reduce::testing
