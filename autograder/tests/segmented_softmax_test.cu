// The segmented softmax suite (lab 17): per segment, the maximum m (exact, compared bitwise) and
// the sum of exp(x - m) (within softmax_sum_error_bound of the double reference), segments as
// cub::DeviceSegmentedReduce takes them. The inputs are built so that each classic mistake shows:
// values near 100 overflow exp unless m is subtracted; ascending rows move the maximum at every
// element; a maximum in the last element catches a dropped tail; regions whose maxima differ
// catch partials combined without rescaling. Elements outside every segment are NaN.
#include "segmented.hpp"

#include <reduce/generators.hpp>

#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

namespace reduce::testing {
namespace {

class SegmentedSoftmaxTest : public ContractTest {
 protected:
  /// Runs the lab on \p host cut at \p offsets and checks every segment.
  void check(const std::vector<float>& host, const std::vector<std::int64_t>& offsets,
             const std::string& what) {
    expect_softmax(run_softmax(runner(), host, offsets), host, offsets, what);
  }
};

/// Values from \p low to \p high inside the segments (multiples of 1/64), NaN outside them.
std::vector<float> values_inside(std::size_t n, const std::vector<std::int64_t>& offsets,
                                 std::uint64_t seed, float low, float high) {
  std::vector<float> x(n, kNaN);
  const auto steps = static_cast<std::uint64_t>((high - low) * 64) + 1;
  for (std::size_t s = 0; s + 1 < offsets.size(); ++s)
    for (std::int64_t i = offsets[s]; i < offsets[s + 1]; ++i)
      x[i] = low + static_cast<float>(mix(seed, static_cast<std::uint64_t>(i)) % steps) / 64.0f;
  return x;
}

// ---- segments of one length, across the three strategies ------------------------------------

class SegmentedSoftmaxUniform : public SegmentedSoftmaxTest,
                                public ::testing::WithParamInterface<SegmentShape> {};

TEST_P(SegmentedSoftmaxUniform, MaximumExactSumWithinBound) {
  const auto [segments, length] = GetParam();
  const std::vector<std::int64_t> offsets = uniform_offsets(segments, length, 3);
  check(values_inside(segments * length + 7, offsets, input_seed(length), -8.0f, 8.0f), offsets,
        std::to_string(segments) + " segments of " + std::to_string(length));
}

INSTANTIATE_TEST_SUITE_P(Shapes, SegmentedSoftmaxUniform, segment_shapes(), segment_shape_name);

// ---- the classic mistakes ---------------------------------------------------------------------

TEST_F(SegmentedSoftmaxTest, LargeValuesNeedTheMaximumSubtracted) {
  // exp(100) overflows float: only exp(x - m) stays finite.
  const std::vector<std::int64_t> offsets = uniform_offsets(40, 5000);
  check(values_inside(offsets.back(), offsets, input_seed(0x100), 60.0f, 100.0f), offsets,
        "values from 60 to 100");
}

TEST_F(SegmentedSoftmaxTest, AscendingRowsMoveTheMaximumEveryElement) {
  const std::size_t lengths[] = {32, 1000, 40000, 300000};
  std::vector<std::int64_t> offsets{0};
  for (std::size_t length : lengths) offsets.push_back(offsets.back() + length);
  std::vector<float> host(offsets.back());
  for (std::size_t s = 0; s < std::size(lengths); ++s)
    for (std::int64_t i = offsets[s]; i < offsets[s + 1]; ++i)
      host[i] = -10.0f + 20.0f * static_cast<float>(i - offsets[s]) / lengths[s];
  check(host, offsets, "ascending from -10 to 10");
}

TEST_F(SegmentedSoftmaxTest, MaximumInTheLastElement) {
  // Every element is -40 (exp(-40 - m) is negligible) but the last: a dropped tail loses it all.
  std::vector<std::int64_t> offsets{0};
  for (std::size_t length : {1, 31, 33, 1023, 1025, 4097, 262145, 262147, 1048583})
    offsets.push_back(offsets.back() + static_cast<std::int64_t>(length));
  std::vector<float> host(offsets.back(), -40.0f);
  for (std::size_t s = 1; s < offsets.size(); ++s) host[offsets[s] - 1] = static_cast<float>(s);
  check(host, offsets, "-40 everywhere but a maximum in the last element");
}

TEST_F(SegmentedSoftmaxTest, RegionsWithDifferentMaxima) {
  // Each run of 700 elements sits 3/4 above the previous one, so every warp, block and chunk
  // has its own maximum: partials added without rescaling are far off.
  const std::vector<std::int64_t> offsets = {0, 2000, 70000, 500000, 1700000};
  std::vector<float> host(offsets.back());
  const std::uint64_t seed = input_seed();
  for (std::size_t i = 0; i < host.size(); ++i)
    host[i] = static_cast<float>(i % 70000 / 700) * 0.75f - 30.0f -
              static_cast<float>(mix(seed, i) % 16) / 8.0f;
  check(host, offsets, "regions of 700 elements, each 0.75 above the last");
}

TEST_F(SegmentedSoftmaxTest, TiedMaxima) {
  const std::vector<std::int64_t> offsets = uniform_offsets(50, 3000);
  std::vector<float> host(offsets.back(), 2.5f);
  check(host, offsets, "every element 2.5");
}

// ---- ragged: every length at once, empty segments and gaps ---------------------------------

TEST_F(SegmentedSoftmaxTest, RaggedLengthsAndGaps) {
  std::vector<std::int64_t> offsets{5};
  const std::size_t lengths[] = {0, 1, 31, 32, 33, 0, 1024, 1025, 70000, 0, (1u << 18) + 3, 7};
  for (int round = 0; round < 20; ++round)
    for (std::size_t k = 0; k < std::size(lengths); ++k) {
      const std::size_t length = lengths[(k + round) % std::size(lengths)] / (round % 3 + 1);
      offsets.push_back(offsets.back() + static_cast<std::int64_t>(length));
    }
  check(values_inside(offsets.back() + 11, offsets, input_seed(0x5E6), -20.0f, 20.0f), offsets,
        "ragged segments");
}

TEST_F(SegmentedSoftmaxTest, EmptySegmentsAreMinusInfinityAndZero) {
  const std::vector<std::int64_t> offsets{4, 4, 4, 9, 9};
  std::vector<float> host(12, kNaN);
  for (int i = 4; i < 9; ++i) host[i] = -1.0f;
  check(host, offsets, "empty segments around one of five elements");
}

TEST_F(SegmentedSoftmaxTest, NoSegmentsWritesNothing) {
  EXPECT_TRUE(run_softmax(runner(), {1.0f, 2.0f}, {0}).empty());
}

// ---- no cached answers ----------------------------------------------------------------------

TEST_F(SegmentedSoftmaxTest, EveryCallComputesAfresh) {
  const std::vector<std::int64_t> offsets = uniform_offsets(300, 3000);
  for (std::uint64_t k = 0; k < 3; ++k)
    check(values_inside(offsets.back(), offsets, input_seed(13, k), -5.0f, 5.0f), offsets,
          "input " + std::to_string(k));
}

}  // namespace
}  // namespace reduce::testing
