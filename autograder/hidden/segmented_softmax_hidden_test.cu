// Hidden tests of the segmented softmax statistics (lab 17): segment layouts and value ranges
// drawn from the run's seed (lengths the student cannot know, from empty to past the split-row
// size; centres from -90 to 90 so that exp(x) alone overflows or underflows), a million short
// rows, and work on the caller's stream only. Elements before and after the segments are NaN.
#include "segmented.hpp"

#include <reduce_runner/lab_runner.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace reduce::testing {
namespace {

class HiddenSegmentedSoftmax : public ContractTest {
 protected:
  void check(const std::vector<float>& host, const std::vector<std::int64_t>& offsets,
             const std::string& what) {
    expect_softmax(run_softmax(runner(), host, offsets), host, offsets,
                   what + " (REDUCE_SEED=" + std::to_string(test_seed()) + ")");
  }
};

class HiddenSegmentedSoftmaxDrawn : public HiddenSegmentedSoftmax,
                                    public ::testing::WithParamInterface<int> {};

TEST_P(HiddenSegmentedSoftmaxDrawn, MaximumExactSumWithinBound) {
  const std::uint64_t seed = input_seed(131 * GetParam());
  const std::size_t segments = 1 + mix(seed, 0x50F) % 300;
  const std::vector<std::int64_t> offsets = drawn_offsets(seed, segments);
  const float centre = static_cast<float>(static_cast<int>(mix(seed, 1) % 181) - 90);
  const float spread = static_cast<float>(1 + mix(seed, 2) % 40);
  std::vector<float> host(static_cast<std::size_t>(offsets.back()) + 9, kNaN);
  for (std::int64_t i = offsets[0]; i < offsets.back(); ++i)
    host[i] = centre + spread * (static_cast<float>(mix(seed ^ 0xE1, i) % 1025) / 512.0f - 1.0f);
  check(host, offsets,
        "draw " + std::to_string(GetParam()) + ": " + std::to_string(segments) + " segments over " +
            std::to_string(offsets.back()) + " elements, values " + std::to_string(centre) +
            " +- " + std::to_string(spread));
}

INSTANTIATE_TEST_SUITE_P(Draws, HiddenSegmentedSoftmaxDrawn, ::testing::Range(0, 6));

TEST_F(HiddenSegmentedSoftmax, ManyShortSegments) {
  // A million rows of lengths 0 to 40, each with its maximum at a drawn place.
  std::vector<std::int64_t> offsets{0};
  const std::uint64_t lengths = input_seed();
  for (std::size_t s = 0; s < (1u << 20); ++s)
    offsets.push_back(offsets.back() + static_cast<std::int64_t>(mix(lengths, s) % 41));
  std::vector<float> host(offsets.back());
  const std::uint64_t values = input_seed(3);
  for (std::size_t i = 0; i < host.size(); ++i)
    host[i] = -static_cast<float>(mix(values, i) % 64) / 4.0f;
  check(host, offsets, "2^20 segments of 0 to 40 elements");
}

TEST_F(HiddenSegmentedSoftmax, QueuesOnTheGivenStream) {
  const std::vector<std::int64_t> offsets{0, 100, 5000, 400000, 400001};
  std::vector<float> host(offsets.back());
  const std::uint64_t values = input_seed(5);
  for (std::size_t i = 0; i < host.size(); ++i)
    host[i] = static_cast<float>(mix(values, i) % 50) / 5.0f;
  runner::LabRunner& lab = runner::LabRunner::of_process();
  lab.set_stage_inputs(true);
  for (int round = 0; round < 3; ++round)
    check(host, offsets,
          "round " + std::to_string(round) +
              ": the input was copied on the caller's stream right before the call");
  lab.set_stage_inputs(false);
}

}  // namespace
}  // namespace reduce::testing
