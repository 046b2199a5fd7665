// The graded rows' stopping rule and their samples' figure (sampling_rule.hpp), on made-up
// samples; the clocks' watch (clock_watch.hpp) on whatever machine runs the test.
#include "sampling_rule.hpp"
#include "clock_watch.hpp"

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

TEST(SamplingRule, AQuietRowStopsAtSixSamples) {
  const std::vector<double> quiet = alternating(6, 1.0, 0.001);  // 0.1 % apart
  EXPECT_TRUE(sampling_done(quiet, 0.003));
  EXPECT_FALSE(sampling_done(alternating(5, 1.0, 0.001), 0.003)) << "fewer than six";
}

TEST(SamplingRule, ANoisyRowSamplesOnUntilItsMedianIsKnown) {
  // 20 % apart: noise about 0.14; the median's error would be within 0.5 % only from about 800
  // samples, so a row of short samples stops at the cap of 100, or when its time is up.
  EXPECT_FALSE(sampling_done(alternating(10, 1.0, 0.2), 0.003));
  EXPECT_FALSE(sampling_done(alternating(99, 1.0, 0.2), 0.029));
  EXPECT_TRUE(sampling_done(alternating(100, 1.0, 0.2), 0.029));
  EXPECT_TRUE(sampling_done(alternating(40, 1.0, 0.2), 0.031)) << "its time is up";
  // 2 % apart: noise about 0.0147; its median's error 0.0147 / sqrt(k) is within 0.005 from 9 on.
  EXPECT_FALSE(sampling_done(alternating(8, 1.0, 0.02), 0.003));
  EXPECT_TRUE(sampling_done(alternating(10, 1.0, 0.02), 0.003));
}

TEST(SamplingRule, ALongRowStopsOnTimeAsBefore) {
  EXPECT_TRUE(sampling_done(alternating(5, 30.0, 0.01), 0.15)) << "five samples and 0.1 s";
  EXPECT_FALSE(sampling_done(alternating(5, 10.0, 5.0), 0.05)) << "five noisy samples, 0.05 s";
  EXPECT_TRUE(sampling_done(alternating(3, 400.0, 100.0), 1.2)) << "a slow lab: three and 1 s";
  EXPECT_FALSE(sampling_done(alternating(2, 600.0, 100.0), 1.2));
}

TEST(GradedSampler, SamplesTakenAtSlowedClocksAreLeftOutAndCounted) {
  GradedSampler sampler(/*calls=*/4);
  bool done = false;
  int requests = 0;
  // Every third request (4 calls of 1 ms) ran at the power cap and took twice as long.
  while (!done) {
    const bool capped = ++requests % 3 == 0;
    done = sampler.add(capped ? 8.0 : 4.0, capped ? 8.0 : 4.0, capped ? 0x4 : 0x1);
  }
  const GradedSamples& s = sampler.samples();
  EXPECT_EQ(s.calls, 4);
  EXPECT_EQ(s.host_ms.size(), 6u) << "a quiet row stops at six samples at full clocks";
  EXPECT_EQ(s.throttled, 2) << "requests 3 and 6 of 8";
  EXPECT_EQ(s.slowdown, 0x4u) << "idle (0x1) is no slowdown";
  EXPECT_FALSE(s.throttled_figure);
  for (double ms : s.host_ms) EXPECT_EQ(ms, 1.0) << "no slowed sample in the figure";
  ASSERT_EQ(s.event_ms.size(), s.host_ms.size());
}

TEST(GradedSampler, ClocksThatStaySlowedGiveAFigureThatSaysSo) {
  GradedSampler sampler(/*calls=*/1);
  int requests = 0;
  while (!sampler.add(2.0, 2.0, 0x20 | 0x40)) ++requests;
  const GradedSamples& s = sampler.samples();
  EXPECT_EQ(requests + 1, 100) << "stopped at the rule's cap of samples (0.2 s here)";
  EXPECT_TRUE(s.throttled_figure);
  EXPECT_EQ(s.throttled, 100);
  EXPECT_EQ(s.host_ms.size(), 100u) << "the figure is made of every sample";
  EXPECT_EQ(s.slowdown, 0x60u);
}

TEST(GradedSampler, ASlowRowAtSlowedClocksStopsOnTime) {
  GradedSampler sampler(/*calls=*/1);
  int requests = 1;
  while (!sampler.add(300.0, 300.0, 0x4)) ++requests;
  EXPECT_EQ(requests, 4) << "1.2 s: past enough_seconds";
  EXPECT_TRUE(sampler.samples().throttled_figure);
}

TEST(GradedSampler, AFewSlowedSamplesNeverEndTheRowEarly) {
  GradedSampler sampler(/*calls=*/1);
  // Ten slowed samples first, then full clocks: enough of those, so the slowed stay out.
  for (int i = 0; i < 10; ++i) EXPECT_FALSE(sampler.add(0.2, 0.2, 0x8)) << i;
  EXPECT_FALSE(sampler.samples().throttled_figure);
  int more = 0;
  while (!sampler.add(0.1, 0.1, 0)) ++more;
  EXPECT_EQ(more + 1, 6);
  EXPECT_FALSE(sampler.samples().throttled_figure);
  EXPECT_EQ(sampler.samples().throttled, 10);
  for (double ms : sampler.samples().host_ms) EXPECT_EQ(ms, 0.1);
}

TEST(GradedSampler, WithoutAWatchItSamplesAsTheRuleAlone) {
  GradedSampler sampler(/*calls=*/2);
  std::vector<double> alone;
  for (int i = 0;; ++i) {
    const double ms = i % 2 == 0 ? 2.0 : 2.4;
    alone.push_back(ms / 2);
    if (sampler.add(ms, ms, 0)) break;
  }
  EXPECT_EQ(sampler.samples().host_ms, alone);
  EXPECT_EQ(sampler.samples().throttled, 0);
}

TEST(ClockWatch, ReadsTheDriversReasonsOrNothingAndSaysWhich) {
  const ClockWatch watch("00000000:00:00.0");  // no GPU sits at bus 0, device 0
  EXPECT_FALSE(watch.available()) << watch.source();
  EXPECT_EQ(watch.reasons(), 0u);
  EXPECT_EQ(watch.source().rfind("none: ", 0), 0u) << watch.source();
}

}  // namespace
}  // namespace reduce::bench
