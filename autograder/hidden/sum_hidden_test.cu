// Hidden tests of the sum contract: run by the grader (reduce-grade, in course_graded_test) on
// every lab that implements reduce::sum, and on their own entry points for lab 18's sums
// (HiddenSum, sum_hidden_suite.hpp), never shipped in the student release. They check what the
// public suite (autograder/tests/sum_test.cu) leaves to chance: sizes the student cannot know in
// advance (a keyed hash of REDUCE_SEED, fresh for every run: input_seed()), inputs that are not
// 16-byte aligned, a workspace reused across sizes, calls on the same buffer with new contents,
// results that must not accumulate across calls, work queued on the caller's stream only, and
// inputs whose only non-zero elements sit in the tail.
//
// Every input is exact by construction (small integers whose partial sums are exact in float),
// so any summation order gives one right answer and results are compared bitwise.
#include "sum_hidden_suite.hpp"

#include <reduce/cuda_check.cuh>
#include <reduce/device_buffer.cuh>
#include <reduce/generators.hpp>
#include <reduce/lab_entry_points.cuh>
#include <reduce/reference.hpp>
#include <reduce_runner/lab_runner.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

namespace reduce::testing {
namespace {

/// Bitwise comparison with the facts a student needs to reproduce the failure.
void expect_exact(float got, double expected, const std::string& what) {
  const float want = static_cast<float>(expected);
  EXPECT_EQ(bits(got), bits(want))
      << what << ": got " << got << ", expected exactly " << want << " (difference "
      << static_cast<double>(got) - expected << ", REDUCE_SEED=" << test_seed()
      << "). The input's partial sums are exact in float, so every correct order gives this "
         "result.";
}

/// Exact integers in [-8, 8] \ {0} from (seed, index): no zero, so every element matters.
float exact_value(std::uint64_t seed, std::size_t i) {
  const std::uint64_t r = mix(seed, i);
  const float magnitude = static_cast<float>(1 + (r & 7));
  return (r & 8) != 0 ? magnitude : -magnitude;
}

// ---- sizes the student cannot know: drawn from the run's seed --------------------------------

class HiddenSumRandomSize : public HiddenSum, public ::testing::WithParamInterface<int> {};

TEST_P(HiddenSumRandomSize, ExactForASizeDrawnFromTheSeed) {
  const std::size_t n = drawn_size(GetParam());
  const std::vector<float> host = exact_integers(n, input_seed(0xA11CEull + n));
  const DeviceBuffer<float> in(host);
  expect_exact(run(in.data(), n), reference_sum(host), "n = " + std::to_string(n));
}

INSTANTIATE_TEST_SUITE_P(Draws, HiddenSumRandomSize, ::testing::Range(0, 8));

// ---- inputs that are not 16-byte aligned -------------------------------------------------------

class HiddenSumMisaligned
    : public HiddenSum,
      public ::testing::WithParamInterface<std::tuple<std::size_t, std::size_t>> {};

TEST_P(HiddenSumMisaligned, ReadsFromAnyFloatOffset) {
  const auto [offset, n] = GetParam();
  std::vector<float> host(n + 4, 100.0f);  // the floats around the input must not be read
  const std::uint64_t seed = input_seed(offset);
  for (std::size_t i = 0; i < n; ++i) host[offset + i] = exact_value(seed, i);
  const DeviceBuffer<float> buffer(host);
  const std::vector<float> input(host.begin() + offset, host.begin() + offset + n);
  expect_exact(run(buffer.data() + offset, n), reference_sum(input),
               "input at a float offset of " + std::to_string(offset) + " (" +
                   std::to_string(offset * 4) + " bytes past a 256-byte boundary), n = " +
                   std::to_string(n) + "; vector loads need an aligned head first");
}

std::string misaligned_name(
    const ::testing::TestParamInfo<std::tuple<std::size_t, std::size_t>>& info) {
  return "offset" + std::to_string(std::get<0>(info.param)) + "_n" +
         std::to_string(std::get<1>(info.param));
}

INSTANTIATE_TEST_SUITE_P(Offsets, HiddenSumMisaligned,
                         ::testing::Combine(::testing::Values<std::size_t>(1, 2, 3),
                                            ::testing::Values<std::size_t>(1000, (1u << 20) + 3)),
                         misaligned_name);

// ---- one workspace and one output reused across two sizes -------------------------------------

class HiddenSumWorkspaceReuse
    : public HiddenSum,
      public ::testing::WithParamInterface<std::tuple<std::size_t, std::size_t>> {};

TEST_P(HiddenSumWorkspaceReuse, AlternatingSizesOnTheSameBuffers) {
  const auto [n1, n2] = GetParam();
  const std::size_t n_max = std::max(n1, n2);
  // Any prefix of an exact input is exact too (its magnitudes add up to less).
  const std::vector<float> host = exact_integers(n_max, input_seed(0xB0B));
  const DeviceBuffer<float> in(host);
  const double expected[2] = {reference_sum(std::vector<float>(host.begin(), host.begin() + n1)),
                              reference_sum(std::vector<float>(host.begin(), host.begin() + n2))};
  // One workspace for both sizes, poisoned once: what a previous call left in it is garbage to
  // the next one.
  const cudaStream_t stream = runner().stream().get();
  DeviceBuffer<float>& out = runner().float_output();
  DeviceBuffer<unsigned char> workspace(
      std::max(lab().workspace_bytes(n1), lab().workspace_bytes(n2)));
  workspace.fill_bytes(kPoisonByte, stream);
  const Workspace ws{workspace.data(), workspace.bytes()};
  for (int call_index = 0; call_index < 6; ++call_index) {
    const std::size_t n = call_index % 2 == 0 ? n1 : n2;
    out.fill_bytes(kPoisonByte, stream);
    lab().run(in.data(), n, out.data(), ws, stream);
    expect_exact(runner().float_result(), expected[call_index % 2],
                 "call " + std::to_string(call_index) + " with n = " + std::to_string(n) +
                     " after n = " + std::to_string(call_index % 2 == 0 ? n2 : n1) +
                     " on the same workspace (initialise what you use)");
  }
}

std::string reuse_name(const ::testing::TestParamInfo<std::tuple<std::size_t, std::size_t>>& info) {
  return std::to_string(std::get<0>(info.param)) + "_and_" +
         std::to_string(std::get<1>(info.param));
}

INSTANTIATE_TEST_SUITE_P(
    Pairs, HiddenSumWorkspaceReuse,
    ::testing::Values(std::make_tuple(std::size_t{(1u << 20) + 7}, std::size_t{1000}),
                      std::make_tuple(std::size_t{70001}, std::size_t{3000017}),
                      std::make_tuple(std::size_t{257}, std::size_t{65537})),
    reuse_name);

// ---- large exact sums around the float budget ------------------------------------------------

class HiddenSumLarge : public HiddenSum, public ::testing::WithParamInterface<std::size_t> {};

TEST_P(HiddenSumLarge, ExactBeyondTwoToTheTwentyFour) {
  const std::size_t n = GetParam();
  const std::vector<float> host = exact_integers(n, input_seed(0x1A26E));
  const DeviceBuffer<float> in(host);
  expect_exact(run(in.data(), n), reference_sum(host), "n = " + std::to_string(n));
}

INSTANTIATE_TEST_SUITE_P(Sizes, HiddenSumLarge,
                         ::testing::Values<std::size_t>((1u << 24) + 1, (1u << 25) - 1),
                         ::testing::PrintToStringParamName());

// ---- only the tail is non-zero ----------------------------------------------------------------

class HiddenSumTail : public HiddenSum,
                      public ::testing::WithParamInterface<std::tuple<std::size_t, std::size_t>> {};

TEST_P(HiddenSumTail, OnlyTheLastElementsAreNonZero) {
  const auto [n, tail] = GetParam();
  std::vector<float> host(n, 0.0f);
  const std::uint64_t seed = input_seed(0x7A11);
  for (std::size_t i = n - tail; i < n; ++i) host[i] = exact_value(seed, i);
  const DeviceBuffer<float> in(host);
  expect_exact(run(in.data(), n), reference_sum(host),
               "n = " + std::to_string(n) + ", non-zero only in the last " + std::to_string(tail) +
                   " elements (a kernel that drops the tail of the last block returns 0)");
}

std::string tail_name(const ::testing::TestParamInfo<std::tuple<std::size_t, std::size_t>>& info) {
  return "n" + std::to_string(std::get<0>(info.param)) + "_last" +
         std::to_string(std::get<1>(info.param));
}

INSTANTIATE_TEST_SUITE_P(
    Tails, HiddenSumTail,
    ::testing::Values(std::make_tuple(std::size_t{(1u << 20) + 7}, std::size_t{7}),
                      std::make_tuple(std::size_t{(1u << 20) + 255}, std::size_t{255}),
                      std::make_tuple(std::size_t{5000011}, std::size_t{300}),
                      std::make_tuple(std::size_t{(1u << 22) + 1}, std::size_t{1})),
    tail_name);

// ---- the same buffer with new contents: no cached answers ------------------------------------

TEST_F(HiddenSum, SameBufferNewContents) {
  const std::size_t n = 3000017;
  DeviceBuffer<float> in(n);
  for (std::uint64_t round = 0; round < 4; ++round) {
    const std::vector<float> host = exact_integers(n, input_seed(7, round));
    in.copy_from_host(host.data(), n);
    expect_exact(run(in.data(), n), reference_sum(host),
                 "round " + std::to_string(round) +
                     ": same pointer and n, new contents (a "
                     "result must never be reused from an earlier call)");
  }
}

// ---- calls must not accumulate into the output ------------------------------------------------

TEST_F(HiddenSum, RepeatedCallsDoNotAccumulate) {
  const std::size_t n = 100003;
  const std::vector<float> host = exact_integers(n, input_seed(0xACC));
  const DeviceBuffer<float> in(host);
  DeviceBuffer<unsigned char> workspace(lab().workspace_bytes(n));
  const double expected = reference_sum(host);
  const cudaStream_t stream = runner().stream().get();
  expect_exact(run(in.data(), n), expected, "first call");
  for (int again = 1; again <= 3; ++again) {
    // The output keeps the previous result: a lab that adds into it without resetting it first
    // returns a multiple.
    workspace.fill_bytes(kPoisonByte, stream);
    lab().run(in.data(), n, runner().float_output().data(),
              Workspace{workspace.data(), workspace.bytes()}, stream);
    expect_exact(runner().float_result(), expected,
                 "call " + std::to_string(again + 1) + " without clearing the output in between");
  }
}

// ---- all work on the caller's stream ---------------------------------------------------------

TEST_F(HiddenSum, QueuesOnTheGivenStream) {
  // The lab's process copies the input on the lab's stream right before each call, into a
  // buffer it poisoned first. A lab that launches on the legacy default stream, or on a stream
  // of its own, is not ordered after that copy and reads poison or a half-copied input, even
  // when it waits for the whole device before returning.
  const std::size_t n = std::size_t{1} << 24;
  const std::vector<float> host = exact_integers(n, input_seed(0x57AE));
  const DeviceBuffer<float> in(host);
  runner::LabRunner& lab = runner::LabRunner::of_process();
  lab.set_stage_inputs(true);
  for (int round = 0; round < 3; ++round) {
    expect_exact(run(in.data(), n), reference_sum(host),
                 "round " + std::to_string(round) +
                     ": the input was copied on the caller's stream right before the call; "
                     "queue every kernel and copy on the stream argument");
  }
  lab.set_stage_inputs(false);
}

// ---- sentinels at places drawn from the seed ---------------------------------------------------

TEST_F(HiddenSum, SentinelsAtRandomPlaces) {
  const std::size_t n = 3000017;
  DeviceBuffer<float> in(n);
  in.fill_bytes(0);
  const float value = -3.0f, zero = 0.0f;
  for (std::uint64_t k = 0; k < 6; ++k) {
    const std::size_t p = static_cast<std::size_t>(mix(input_seed(0x5E47), k) % n);
    copy_to_device(in.data() + p, &value, 1);
    expect_exact(run(in.data(), n), -3.0,
                 "one -3 at index " + std::to_string(p) + " of " + std::to_string(n) +
                     " (0: never read, -6: read twice)");
    copy_to_device(in.data() + p, &zero, 1);
  }
}

// ---- all negative ------------------------------------------------------------------------------

TEST_F(HiddenSum, AllNegative) {
  const std::size_t n = (1u << 21) + 13;
  std::vector<float> host(n);
  const std::uint64_t seed = input_seed();
  for (std::size_t i = 0; i < n; ++i) host[i] = -static_cast<float>(1 + (mix(seed, i) & 3));
  const DeviceBuffer<float> in(host);
  expect_exact(run(in.data(), n), reference_sum(host),
               "all-negative input, n = " + std::to_string(n));
}

}  // namespace
}  // namespace reduce::testing
