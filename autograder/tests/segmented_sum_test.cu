// The segmented sum suite (lab 17): one float per segment, segments as
// cub::DeviceSegmentedReduce takes them (offsets[s] to offsets[s + 1]). Exact by construction:
// small integers whose partial sums are exact in float give one right answer per segment in any
// order, compared bitwise. Elements outside every segment are NaN, so one that reaches a result
// shows; empty segments sum to +0.0; realistic data is held to the tree bound of each segment.
#include "segmented.hpp"

#include <reduce/device_buffer.cuh>
#include <reduce/generators.hpp>
#include <reduce/lab_entry_points.cuh>
#include <reduce/reference.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <string>
#include <tuple>
#include <vector>

namespace reduce::testing {
namespace {

/// Every segmented test: skips without a GPU, else calls reduce::segmented_sum through the
/// contract runner.
class SegmentedSumTest : public ContractTest {
 protected:
  /// The lab's results for \p host cut at \p offsets.
  std::vector<float> run(const std::vector<float>& host, const std::vector<std::int64_t>& offsets) {
    return run_segmented(runner(), SegmentedLab{&segmented_sum_workspace_bytes, &segmented_sum},
                         ResultKind::kSegments, host, offsets);
  }
};

/// Exact integers inside the segments, NaN outside them (never to be read).
std::vector<float> exact_inside(std::size_t n, const std::vector<std::int64_t>& offsets,
                                std::uint64_t seed) {
  std::vector<float> x(n, kNaN);
  for (std::size_t s = 0; s + 1 < offsets.size(); ++s)
    for (std::int64_t i = offsets[s]; i < offsets[s + 1]; ++i)
      x[i] = static_cast<float>(1 + (mix(seed, static_cast<std::uint64_t>(i)) & 7)) *
             ((mix(seed, static_cast<std::uint64_t>(i)) & 8) ? -1.0f : 1.0f);
  return x;
}

/// Each segment's sum in double (exact for exact_inside()).
std::vector<double> segment_sums(const std::vector<float>& x,
                                 const std::vector<std::int64_t>& offsets) {
  std::vector<double> sums(offsets.size() - 1, 0.0);
  for (std::size_t s = 0; s < sums.size(); ++s)
    for (std::int64_t i = offsets[s]; i < offsets[s + 1]; ++i) sums[s] += x[i];
  return sums;
}

/// Every segment bitwise, the first few differences described.
void expect_segments(const std::vector<float>& got, const std::vector<double>& want,
                     const std::vector<std::int64_t>& offsets, const std::string& what) {
  ASSERT_EQ(got.size(), want.size());
  int reported = 0;
  std::size_t wrong = 0;
  for (std::size_t s = 0; s < want.size(); ++s) {
    if (bits(got[s]) == bits(static_cast<float>(want[s]))) continue;
    ++wrong;
    if (reported++ < 5)
      ADD_FAILURE() << what << ": segment " << s << " [" << offsets[s] << ", " << offsets[s + 1]
                    << ") gave " << describe(got[s]) << ", expected exactly " << want[s]
                    << (std::isnan(got[s]) ? " (NaN: never written, or an element outside the "
                                             "segments was read)"
                                           : "");
  }
  EXPECT_EQ(wrong, 0u) << what << ": " << wrong << " of " << want.size() << " segments wrong";
}

// ---- segments of one length, across the three strategies ------------------------------------

class SegmentedSumUniform : public SegmentedSumTest,
                            public ::testing::WithParamInterface<SegmentShape> {};

TEST_P(SegmentedSumUniform, ExactPerSegment) {
  const auto [segments, length] = GetParam();
  const std::vector<std::int64_t> offsets = uniform_offsets(segments, length, 3);
  const std::vector<float> host = exact_inside(segments * length + 7, offsets, input_seed(length));
  expect_segments(run(host, offsets), segment_sums(host, offsets), offsets,
                  std::to_string(segments) + " segments of " + std::to_string(length));
}

INSTANTIATE_TEST_SUITE_P(Shapes, SegmentedSumUniform, segment_shapes(), segment_shape_name);

// ---- ragged: every length at once, empty segments and gaps ---------------------------------

TEST_F(SegmentedSumTest, RaggedLengthsAndGaps) {
  std::vector<std::int64_t> offsets{5};
  const std::size_t lengths[] = {0, 1, 31, 32, 33, 0, 1024, 1025, 70000, 0, (1u << 18) + 3, 7};
  for (int round = 0; round < 40; ++round)
    for (std::size_t k = 0; k < std::size(lengths); ++k) {
      const std::size_t length = lengths[(k + round) % std::size(lengths)] / (round % 3 + 1);
      offsets.push_back(offsets.back() + static_cast<std::int64_t>(length));
    }
  const std::vector<float> host = exact_inside(offsets.back() + 11, offsets, input_seed(0x5E6));
  expect_segments(run(host, offsets), segment_sums(host, offsets), offsets, "ragged segments");
}

TEST_F(SegmentedSumTest, EmptySegmentsArePositiveZero) {
  const std::vector<std::int64_t> offsets{4, 4, 4, 9, 9};
  std::vector<float> host(12, kNaN);
  for (int i = 4; i < 9; ++i) host[i] = -0.0f;
  const std::vector<float> got = run(host, offsets);
  for (std::size_t s : {0, 1, 3})
    EXPECT_EQ(bits(got[s]), bits(0.0f))
        << "segment " << s << " is empty: its sum is +0.0f, got " << describe(got[s]);
}

TEST_F(SegmentedSumTest, NoSegmentsWritesNothing) {
  const std::vector<float> got = run({1.0f, 2.0f}, {0});
  EXPECT_TRUE(got.empty());
}

// ---- realistic data within each segment's tree bound -----------------------------------------

TEST_F(SegmentedSumTest, RealisticDataWithinBound) {
  const std::vector<std::int64_t> offsets = {0, 100, 5000, 5001, 300000, 1500000};
  const std::vector<float> host = make_data(Data::kMixedSign, offsets.back(), input_seed(0x8));
  const std::vector<float> got = run(host, offsets);
  for (std::size_t s = 0; s + 1 < offsets.size(); ++s) {
    const std::vector<float> part(host.begin() + offsets[s], host.begin() + offsets[s + 1]);
    const double exact = reference_sum(part);
    const double bound =
        sum_error_bound(segment_tree_depth(part.size()), part.size(), absolute_sum(part));
    EXPECT_LE(std::fabs(got[s] - exact), bound)
        << "segment " << s << " of " << part.size() << ": got " << got[s] << ", reference " << exact
        << ", bound " << bound;
  }
}

// ---- no cached answers ----------------------------------------------------------------------

TEST_F(SegmentedSumTest, EveryCallComputesAfresh) {
  const std::vector<std::int64_t> offsets = uniform_offsets(300, 3000);
  for (std::uint64_t k = 0; k < 3; ++k) {
    const std::vector<float> host = exact_inside(offsets.back(), offsets, input_seed(13, k));
    expect_segments(run(host, offsets), segment_sums(host, offsets), offsets,
                    "input " + std::to_string(k));
  }
}

}  // namespace
}  // namespace reduce::testing
