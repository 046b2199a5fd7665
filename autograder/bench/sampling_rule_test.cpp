// The graded rows' stopping rule (sampling_rule.hpp), on made-up samples.
#include "sampling_rule.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace reduce::bench {
namespace {

/// \p k samples of \p base, every other one \p spread higher.
std::vector<double> alternating(int k, double base, double spread) {
  std::vector<double> v;
  for (int i = 0; i < k; ++i) v.push_back(i % 2 == 0 ? base : base + spread);
  return v;
}

TEST(SamplingRule, NoiseIsTheInterquartileRangeOverItsNormalWidth) {
  EXPECT_EQ(relative_noise({1.0, 1.0, 1.0, 1.0, 1.0}), 0.0);
  EXPECT_EQ(relative_noise({1.0, 2.0, 3.0}), 0.0) << "too few samples to say";
  // 1..9: quartiles 3 and 7, median 5.
  EXPECT_DOUBLE_EQ(relative_noise({9, 1, 8, 2, 7, 3, 6, 4, 5}), 4.0 / 1.349 / 5.0);
  // An outlier moves the standard deviation, not the quartiles.
  EXPECT_DOUBLE_EQ(relative_noise({9, 1, 8, 2, 7, 3, 6, 4, 5}),
                   relative_noise({900, 1, 8, 2, 7, 3, 6, 4, 5}));
}

TEST(SamplingRule, AQuietRowStopsAtTenSamples) {
  const std::vector<double> quiet = alternating(10, 1.0, 0.001);  // 0.1 % apart
  EXPECT_TRUE(sampling_done(quiet, 0.003));
  EXPECT_FALSE(sampling_done(alternating(9, 1.0, 0.001), 0.003)) << "fewer than ten";
}

TEST(SamplingRule, ANoisyRowSamplesOnUntilItsMedianIsKnown) {
  // 20 % apart: noise about 0.14; the median's error would be within 0.5 % only from about 800
  // samples, so a row of short samples stops at the cap of 100, or when its time is up.
  EXPECT_FALSE(sampling_done(alternating(10, 1.0, 0.2), 0.003));
  EXPECT_FALSE(sampling_done(alternating(99, 1.0, 0.2), 0.029));
  EXPECT_TRUE(sampling_done(alternating(100, 1.0, 0.2), 0.029));
  EXPECT_TRUE(sampling_done(alternating(40, 1.0, 0.2), 0.031)) << "its time is up";
  // 2 % apart: noise about 0.0147; its median's error 0.0147 / sqrt(k) is within 0.005 from 9 on.
  EXPECT_TRUE(sampling_done(alternating(10, 1.0, 0.02), 0.003));
}

TEST(SamplingRule, ALongRowStopsOnTimeAsBefore) {
  EXPECT_TRUE(sampling_done(alternating(5, 50.0, 10.0), 0.25)) << "five samples and 0.25 s";
  EXPECT_TRUE(sampling_done(alternating(3, 400.0, 100.0), 1.2)) << "a slow lab: three and 1 s";
  EXPECT_FALSE(sampling_done(alternating(2, 600.0, 100.0), 1.2));
}

}  // namespace
}  // namespace reduce::bench
