// Hidden tests of the segmented sum (lab 17): segment layouts drawn from the run's seed (lengths
// the student cannot know, from empty to past the split-row size), a million short rows, and
// work on the caller's stream only. Inputs are exact by construction and compared bitwise;
// elements before and after the segments are NaN.
#include "segmented.hpp"

#include <reduce/device_buffer.cuh>
#include <reduce/generators.hpp>
#include <reduce/lab_entry_points.cuh>
#include <reduce_runner/lab_runner.hpp>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace reduce::testing {
namespace {

class HiddenSegmentedSum : public ContractTest {
 protected:
  std::vector<float> run(const std::vector<float>& host, const std::vector<std::int64_t>& offsets) {
    return run_segmented(runner(), SegmentedLab{&segmented_sum_workspace_bytes, &segmented_sum},
                         ResultKind::kSegments, host, offsets);
  }

  /// Checks every segment bitwise against its exact sum.
  void expect_exact(const std::vector<float>& host, const std::vector<std::int64_t>& offsets,
                    const std::string& what) {
    const std::vector<float> got = run(host, offsets);
    std::size_t wrong = 0;
    for (std::size_t s = 0; s + 1 < offsets.size(); ++s) {
      double sum = 0;
      for (std::int64_t i = offsets[s]; i < offsets[s + 1]; ++i) sum += host[i];
      if (bits(got[s]) == bits(static_cast<float>(sum))) continue;
      if (wrong++ < 3)
        ADD_FAILURE() << what << " (REDUCE_SEED=" << test_seed() << "): segment " << s << " ["
                      << offsets[s] << ", " << offsets[s + 1] << ") gave " << describe(got[s])
                      << ", expected exactly " << sum;
    }
    EXPECT_EQ(wrong, 0u) << what;
  }
};

/// drawn_offsets() for \p seed, exact integers inside, NaN before and after (never to be read).
void drawn_layout(std::uint64_t seed, std::size_t segments, std::vector<float>& host,
                  std::vector<std::int64_t>& offsets) {
  offsets = drawn_offsets(seed, segments);
  host.assign(static_cast<std::size_t>(offsets.back()) + 9, kNaN);
  for (std::int64_t i = offsets[0]; i < offsets.back(); ++i)
    host[i] = static_cast<float>(static_cast<int>(mix(seed ^ 0xE1, i) % 17) - 8);
}

class HiddenSegmentedSumDrawn : public HiddenSegmentedSum,
                                public ::testing::WithParamInterface<int> {};

TEST_P(HiddenSegmentedSumDrawn, ExactPerSegment) {
  std::vector<float> host;
  std::vector<std::int64_t> offsets;
  const std::size_t segments = 1 + input_seed(0x5E9) % 300;
  drawn_layout(input_seed(97 * GetParam()), segments, host, offsets);
  expect_exact(host, offsets,
               "draw " + std::to_string(GetParam()) + ": " + std::to_string(segments) +
                   " segments over " + std::to_string(offsets.back()) + " elements");
}

INSTANTIATE_TEST_SUITE_P(Draws, HiddenSegmentedSumDrawn, ::testing::Range(0, 6));

TEST_F(HiddenSegmentedSum, ManyShortSegments) {
  // A million rows of lengths 0 to 40: the warp-per-row tier at scale.
  std::vector<std::int64_t> offsets{0};
  const std::uint64_t lengths = input_seed();
  for (std::size_t s = 0; s < (1u << 20); ++s)
    offsets.push_back(offsets.back() + static_cast<std::int64_t>(mix(lengths, s) % 41));
  std::vector<float> host(offsets.back());
  const std::uint64_t values = input_seed(3);
  for (std::size_t i = 0; i < host.size(); ++i)
    host[i] = static_cast<float>(1 + mix(values, i) % 4);
  expect_exact(host, offsets, "2^20 segments of 0 to 40 elements");
}

TEST_F(HiddenSegmentedSum, QueuesOnTheGivenStream) {
  std::vector<std::int64_t> offsets{0, 100, 5000, 400000, 400001};
  std::vector<float> host(offsets.back());
  const std::uint64_t values = input_seed(5);
  for (std::size_t i = 0; i < host.size(); ++i)
    host[i] = static_cast<float>(1 + mix(values, i) % 3);
  runner::LabRunner& lab = runner::LabRunner::of_process();
  lab.set_stage_inputs(true);
  for (int round = 0; round < 3; ++round)
    expect_exact(host, offsets,
                 "round " + std::to_string(round) +
                     ": the input was copied on the caller's stream right before the call");
  lab.set_stage_inputs(false);
}

}  // namespace
}  // namespace reduce::testing
