// Hidden tests of the argmax contract: run by the grader (course_graded_test) on every lab that
// implements reduce::argmax (lab 13), never shipped in the student release. They check what the
// public suite (autograder/tests/argmax_test.cu) leaves to chance: prime and 3 x 2^k +- 1 sizes
// with the answer in the tail (beyond the unrolled part of a grid-stride loop), windows of one
// allocation whose neighbours would win (an index relative to anything but the window's first
// float, or a float read outside it, shows), a first NaN with its sign bit set or signalling, and
// ties at places drawn from the seed whose value changes while the buffer's ends stay the same.
//
// Semantics as numpy/torch: the first index of the largest element, +0.0 and -0.0 tie, the
// first NaN's index if any element is NaN. Every expected index is exact.
#include "argmax_checks.hpp"
#include "gpu_test.hpp"

#include <reduce/device_buffer.cuh>
#include <reduce/generators.hpp>
#include <reduce/lab_entry_points.cuh>
#include <reduce/reference.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace reduce::testing {
namespace {

/// Every hidden test: a GPU, and reduce::argmax through the contract runner.
class HiddenArgmax : public ArgmaxLabTest {
 protected:
  HiddenArgmax() : ArgmaxLabTest(ArgmaxLab{&argmax_workspace_bytes, &argmax}) {}

  /// Runs the lab on \p host and expects \p want, which the CPU reference must confirm.
  void expect_argmax(const std::vector<float>& host, std::size_t want) {
    ASSERT_EQ(reference_argmax(host), static_cast<std::int64_t>(want)) << "the test's own table";
    expect_index(run(host), static_cast<std::int64_t>(want), &host, host.size());
  }
};

// ---- prime and 3 x 2^k +- 1 sizes, the answer in the tail -------------------------------------

class HiddenArgmaxSizes : public HiddenArgmax, public ::testing::WithParamInterface<std::size_t> {};

TEST_P(HiddenArgmaxSizes, AnswerInTheTail) {
  const std::size_t n = GetParam();
  const std::vector<float> base = all_negative(n, input_seed(13 * n));
  const std::size_t window = std::min<std::size_t>(n, 4096);
  const std::size_t tail = n - 1 - mix(input_seed(), n) % window;  // among the last 4096
  const std::size_t head = mix(input_seed(), n + 1) % window;      // among the first 4096
  const auto with = [&](std::vector<std::pair<std::size_t, float>> changes) {
    std::vector<float> x = base;
    for (const auto& [p, v] : changes) x[p] = v;
    return x;
  };
  struct Case {
    std::string what;
    std::vector<float> input;
    std::size_t want;
  };
  std::vector<Case> cases;
  cases.push_back({"the largest element at the last index", with({{n - 1, 1.0f}}), n - 1});
  cases.push_back({"the largest element at index " + std::to_string(tail) + ", in the last 4096",
                   with({{tail, 1.0f}}), tail});
  if (head < n - 1) {
    cases.push_back({"ties at " + std::to_string(head) + " and the last index: the first wins",
                     with({{n - 1, 1.0f}, {head, 1.0f}}), head});
    cases.push_back({"-0.0 at " + std::to_string(head) + " ties +0.0 at the last index",
                     with({{n - 1, 0.0f}, {head, -0.0f}}), head});
  }
  cases.push_back(
      {"a NaN at the last index beats +inf at index 0", with({{0, kInf}, {n - 1, kNaN}}), n - 1});
  std::vector<std::vector<float>> inputs;
  for (const Case& c : cases) {
    ASSERT_EQ(reference_argmax(c.input), static_cast<std::int64_t>(c.want))
        << "the test's own table: " << c.what;
    inputs.push_back(c.input);
  }
  const std::vector<std::int64_t> got = run_inputs(inputs);
  for (std::size_t k = 0; k < cases.size(); ++k) {
    SCOPED_TRACE(cases[k].what);
    expect_index(got[k], static_cast<std::int64_t>(cases[k].want), &cases[k].input, n);
  }
}

INSTANTIATE_TEST_SUITE_P(Sizes, HiddenArgmaxSizes,
                         ::testing::Values<std::size_t>(3, 7, 127, 3071, 3073, 8191, 65521, 131071,
                                                        196607, 196609, 999983, 3145727, 3145729,
                                                        16777213),
                         ::testing::PrintToStringParamName());

// ---- windows of one allocation: the index counts from the window's first float ----------------

TEST_F(HiddenArgmax, WindowsOfOneAllocation) {
  // Rising: the answer is the window's last index and the float after it is larger. Falling:
  // the answer is 0 and the float before it is larger. Flat: every element ties, the answer is
  // 0, and a float read before the window would have a negative index.
  const char* const kinds[] = {"rising", "falling", "flat"};
  for (int kind = 0; kind < 3; ++kind) {
    const std::vector<float> values = kind == 0   ? rising_negatives(kWindowSpan)
                                      : kind == 1 ? falling_negatives(kWindowSpan)
                                                  : std::vector<float>(kWindowSpan, -2.5f);
    DeviceBuffer<float> in(values);
    SCOPED_TRACE(std::string(kinds[kind]) +
                 " values: indices count from the window's first float, and nothing outside it "
                 "may be read");
    for_each_window(values, in, std::nullopt, [&](const Window& w) {
      const std::int64_t want = kind == 0 ? static_cast<std::int64_t>(w.n) - 1 : 0;
      expect_index(run(w.device, w.n), want, &w.host, w.n);
    });
  }
}

// ---- the first NaN has its sign bit set, or is signalling ---------------------------------------

TEST_F(HiddenArgmax, FirstNaNOfAnyKind) {
  const std::size_t n = 3 * (std::size_t{1} << 20) + 1;
  std::vector<float> host = all_negative(n, input_seed(0xA9A));
  host[n / 3] = kInf;
  const std::size_t first = 4096 + input_seed(0xA9B) % (n / 2);
  // Later NaNs of the usual kind: in the next float, a later block and the tail.
  for (std::size_t p : {first + 1, first + 70001, n - 1}) host[p] = kNaN;
  for (std::uint32_t nan_bits : {0xFFC00000u, 0x7F800001u, 0xFF800001u, 0xFFFFFFFFu}) {
    SCOPED_TRACE("the first NaN, " + describe(from_bits(nan_bits)) + ", at index " +
                 std::to_string(first) +
                 " (a NaN ordered by its bits as an integer, or with its "
                 "sign bit, loses to later NaNs and to +inf)");
    host[first] = from_bits(nan_bits);
    expect_argmax(host, first);
  }
}

// ---- ties that move and change value while the ends stay the same ----------------------------

TEST_F(HiddenArgmax, MovingTiesWithNewValues) {
  const std::size_t n = 3 * (std::size_t{1} << 22) + 1;
  const std::uint64_t seed = input_seed(0xA9C);
  DeviceBuffer<float> in = all_negative_on_device(n, seed);
  std::vector<std::size_t> previous;
  for (int k = 0; k < 12; ++k) {
    const float value = static_cast<float>(1 + (5 * k) % 12);  // 1..12, scrambled
    std::vector<std::size_t> places;
    for (int j = 0; j < 3; ++j)
      places.push_back(64 + mix(input_seed(0xA9D), 3 * k + j) % (n - 128));
    for (std::size_t p : previous) set_element(in.data(), p, all_negative_at(seed, p));
    for (std::size_t p : places) set_element(in.data(), p, value);
    const std::size_t first = *std::min_element(places.begin(), places.end());
    SCOPED_TRACE("round " + std::to_string(k) + ": " + std::to_string(value) + " at indices " +
                 std::to_string(places[0]) + ", " + std::to_string(places[1]) + " and " +
                 std::to_string(places[2]) +
                 ", the same pointer, n and ends as every other round: the first wins");
    expect_index(run(in.data(), n), static_cast<std::int64_t>(first), in.data(), n);
    previous = places;
  }
}

}  // namespace
}  // namespace reduce::testing
