// The argmax suite: run on every lab that implements reduce::argmax (lab 13). The answer is an
// index, so every check is exact. Semantics as numpy/torch: the first index of the largest element;
// +0.0 and -0.0 tie; the first NaN's index if any element is NaN; n == 0 has no answer and must
// throw std::invalid_argument before anything is queued. Ties placed across warps and blocks catch
// a tie-break that depends on which block finishes first; the largest element at warp and block
// boundaries and in the tail catches index bugs; an input longer than 2^31 with its maximum above
// index 2^31 catches a 32-bit int index, and one longer than 2^32 with its maximum above 2^32 a
// 32-bit unsigned index (both in mapped memory, on any GPU).
#include "argmax_checks.hpp"
#include "gpu_test.hpp"
#include "mapped_input.hpp"

#include <reduce/device_buffer.cuh>
#include <reduce/generators.hpp>
#include <reduce/lab_entry_points.cuh>
#include <reduce/reference.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace reduce::testing {
namespace {

/// Every argmax test: skips without a GPU, else calls reduce::argmax through the contract runner.
class ArgmaxTest : public ArgmaxLabTest {
 protected:
  ArgmaxTest() : ArgmaxLabTest(ArgmaxLab{&argmax_workspace_bytes, &argmax}) {}
};

const std::vector<std::size_t> kSizes = {1,        2,        31,    32,    33,
                                         255,      256,      257,   1023,  1024,
                                         1025,     65535,    65536, 65537, (1u << 20) + 7,
                                         1u << 24, 300000000};

// ---- empty input -----------------------------------------------------------------------------

TEST_F(ArgmaxTest, EmptyInputThrowsInvalidArgument) {
  DeviceBuffer<float> in(1);
  in.fill_bytes(0x3F);
  DeviceBuffer<unsigned char> workspace(argmax_workspace_bytes(0));
  DeviceBuffer<std::int64_t>& out = runner().index_output();
  const Stream& stream = runner().stream();
  out.fill_bytes(kPoisonByte, stream.get());
  stream.synchronize();
  EXPECT_THROW(argmax(in.data(), 0, out.data(), Workspace{workspace.data(), workspace.bytes()},
                      stream.get()),
               std::invalid_argument)
      << "the argmax of no elements is undefined: throw std::invalid_argument for n == 0";
  stream.synchronize();
  EXPECT_EQ(out.to_host()[0], kPoisonIndex)
      << "argmax(n == 0) must throw before queuing anything, but the output was written";
}

// ---- the semantics table ---------------------------------------------------------------------

/// One row of the semantics table.
using Case = TableCase<std::int64_t>;

class ArgmaxSemantics : public ArgmaxTest, public ::testing::WithParamInterface<Case> {};

TEST_P(ArgmaxSemantics, MatchesNumpy) {
  const Case& c = GetParam();
  ASSERT_EQ(reference_argmax(c.values), c.expected)
      << "the test table and the CPU reference disagree";
  expect_index(run(c.values), c.expected, &c.values, c.values.size());
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ArgmaxSemantics,
    ::testing::Values(Case{"all_negative", {-3.0f, -1.0f, -2.0f}, 1}, Case{"single", {-7.0f}, 0},
                      Case{"tie_first_wins", {1.0f, 5.0f, 5.0f, 2.0f}, 1},
                      Case{"all_equal", {4.0f, 4.0f, 4.0f, 4.0f}, 0},
                      Case{"minus_zero_ties_plus_zero", {-1.0f, -0.0f, 0.0f}, 1},
                      Case{"plus_zero_ties_minus_zero", {0.0f, -0.0f}, 0},
                      Case{"all_minus_inf", {-kInf, -kInf, -kInf}, 0},
                      Case{"plus_inf_ties", {1.0f, kInf, kInf}, 1},
                      Case{"nan_first", {kNaN, kInf, 2.0f}, 0},
                      Case{"nan_beats_inf", {kInf, 2.0f, kNaN}, 2},
                      Case{"first_of_two_nans", {1.0f, kNaN, 5.0f, kNaN}, 1},
                      Case{"negative_nan", {-5.0f, from_bits(0xFFC00000u), 3.0f}, 1}),
    NameField());

// ---- whole arrays over the size list ---------------------------------------------------------

class ArgmaxRandom : public ArgmaxTest, public ::testing::WithParamInterface<std::size_t> {};

TEST_P(ArgmaxRandom, MatchesReference) {
  const std::size_t n = GetParam();
  // Inputs written on the GPU (no host copy of 3 x 10^8 floats); the expected index and the
  // values a message names come from the generators' per-index functions.
  {
    SCOPED_TRACE("random signs and magnitudes");
    const std::uint64_t seed = input_seed(1, n);
    const auto value_at = [seed](std::size_t i) { return signed_mix_at(seed, i, 0.001, 0.0); };
    const DeviceBuffer<float> in = signed_mix_on_device(n, seed, 0.001, 0.0);
    expect_index(run(in.data(), n), streamed_argmax(n, value_at), value_at, n);
  }
  {
    SCOPED_TRACE("all negative (a start value of 0 would never be beaten)");
    const std::uint64_t seed = input_seed(2, n);
    const auto value_at = [seed](std::size_t i) { return all_negative_at(seed, i); };
    const DeviceBuffer<float> in = all_negative_on_device(n, seed);
    expect_index(run(in.data(), n), streamed_argmax(n, value_at), value_at, n);
  }
}

INSTANTIATE_TEST_SUITE_P(Sizes, ArgmaxRandom, ::testing::ValuesIn(kSizes),
                         ::testing::PrintToStringParamName());

// ---- the largest element where index bugs live -----------------------------------------------

class ArgmaxSentinel : public ArgmaxTest, public ::testing::WithParamInterface<std::size_t> {};

TEST_P(ArgmaxSentinel, FindsTheOnlyLargest) {
  const std::size_t n = GetParam();
  std::vector<float> host = all_negative(n, input_seed(7, n));
  std::vector<Change> sentinels;
  for (std::size_t p : boundary_positions(n))
    if (p < n) sentinels.push_back({p, 1.0f});
  const std::vector<std::int64_t> got = run_variants(host, sentinels);
  for (std::size_t k = 0; k < sentinels.size(); ++k) {
    const std::size_t p = sentinels[k].at;
    SCOPED_TRACE("largest element at index " + std::to_string(p) + " of " + std::to_string(n));
    const float saved = host[p];
    host[p] = 1.0f;
    expect_index(got[k], static_cast<std::int64_t>(p), &host, n);
    host[p] = saved;
  }
}

INSTANTIATE_TEST_SUITE_P(Sizes, ArgmaxSentinel,
                         ::testing::Values<std::size_t>(1025, 65537, (1u << 20) + 7),
                         ::testing::PrintToStringParamName());

// ---- ties ------------------------------------------------------------------------------------

class ArgmaxTies : public ArgmaxTest, public ::testing::WithParamInterface<std::size_t> {};

TEST_P(ArgmaxTies, FirstIndexWins) {
  const std::size_t n = GetParam();
  // Sets of tied places, listed in no particular order: in the same warp, across warps, across
  // blocks, first and last, and ones whose first member sits in a later block than others'.
  const std::vector<std::vector<std::size_t>> sets = {{5, 6},
                                                      {31, 32},
                                                      {33, 300},
                                                      {n - 1, 1000, 257},
                                                      {n - 1, n / 2},
                                                      {n - 2, n - 1},
                                                      {0, n - 1},
                                                      {n / 2 + 1, n / 2, n - 1},
                                                      {2048, 70000, 1u << 20}};
  for (const auto& positions : sets) {
    std::vector<std::size_t> in_range;
    for (std::size_t p : positions) {
      if (p < n) in_range.push_back(p);
    }
    if (in_range.size() < 2) continue;
    const std::int64_t first =
        static_cast<std::int64_t>(*std::min_element(in_range.begin(), in_range.end()));
    std::string where;
    for (std::size_t p : in_range) where += std::to_string(p) + " ";
    SCOPED_TRACE("the largest value at indices " + where + "of " + std::to_string(n));
    const std::vector<float> host = ties(n, input_seed(in_range[0]), 10.0f, in_range);
    ASSERT_EQ(reference_argmax(host), first);
    expect_index(run(host), first, &host, n);
  }
  {
    SCOPED_TRACE("every element equal");
    const std::vector<float> host(n, -2.5f);
    expect_index(run(host), 0, &host, n);
  }
  {
    SCOPED_TRACE("every element -inf");
    const std::vector<float> host(n, -kInf);
    expect_index(run(host), 0, &host, n);
  }
  {
    SCOPED_TRACE("every element +inf");
    const std::vector<float> host(n, kInf);
    expect_index(run(host), 0, &host, n);
  }
}

INSTANTIATE_TEST_SUITE_P(Sizes, ArgmaxTies,
                         ::testing::Values<std::size_t>(1000, 65537, (1u << 20) + 7, 1u << 24),
                         ::testing::PrintToStringParamName());

class ArgmaxSignedZeros : public ArgmaxTest, public ::testing::WithParamInterface<std::size_t> {};

TEST_P(ArgmaxSignedZeros, TieAndFirstWins) {
  const std::size_t n = GetParam();
  for (const auto& [early, late] : {std::pair{-0.0f, 0.0f}, std::pair{0.0f, -0.0f}}) {
    for (const auto& [p, q] : {std::pair<std::size_t, std::size_t>{3, n - 1},
                               std::pair<std::size_t, std::size_t>{n / 2, n / 2 + 1},
                               std::pair<std::size_t, std::size_t>{40, 1500}}) {
      if (q >= n || p >= q) continue;
      SCOPED_TRACE(std::string(std::signbit(early) ? "-0.0" : "+0.0") + " at " + std::to_string(p) +
                   ", " + (std::signbit(late) ? "-0.0" : "+0.0") + " at " + std::to_string(q) +
                   ", negatives elsewhere: +0.0 and -0.0 tie");
      std::vector<float> host = all_negative(n, input_seed(p));
      host[p] = early;
      host[q] = late;
      expect_index(run(host), static_cast<std::int64_t>(p), &host, n);
    }
  }
  {
    SCOPED_TRACE("+0.0 and -0.0 at random: the first element is a maximum");
    const std::vector<float> host = signed_zeros(n, input_seed(17));
    expect_index(run(host), 0, &host, n);
  }
}

INSTANTIATE_TEST_SUITE_P(Sizes, ArgmaxSignedZeros,
                         ::testing::Values<std::size_t>(33, 2049, (1u << 20) + 7),
                         ::testing::PrintToStringParamName());

// ---- NaN -------------------------------------------------------------------------------------

class ArgmaxNaN : public ArgmaxTest, public ::testing::WithParamInterface<std::size_t> {};

TEST_P(ArgmaxNaN, FirstNaNWins) {
  const std::size_t n = GetParam();
  std::vector<float> base = all_negative(n, input_seed(5 * n));
  place(base, {n / 3}, kInf);  // a NaN must beat +inf
  for (const std::vector<std::size_t>& nans : std::vector<std::vector<std::size_t>>{
           {0}, {n / 2}, {n - 1}, {n - 1, n / 2, 37}, {n - 1, 1024, 1023}, {n - 2, n - 1}}) {
    std::vector<float> host = base;
    std::vector<std::size_t> in_range;
    for (std::size_t p : nans) {
      if (p < n) in_range.push_back(p);
    }
    if (in_range.empty()) continue;
    place(host, in_range, kNaN);
    const std::int64_t first =
        static_cast<std::int64_t>(*std::min_element(in_range.begin(), in_range.end()));
    std::string where;
    for (std::size_t p : in_range) where += std::to_string(p) + " ";
    SCOPED_TRACE("NaN at indices " + where + "of " + std::to_string(n));
    ASSERT_EQ(reference_argmax(host), first);
    expect_index(run(host), first, &host, n);
  }
}

INSTANTIATE_TEST_SUITE_P(Sizes, ArgmaxNaN,
                         ::testing::Values<std::size_t>(1, 2, 33, 1025, 65537, (1u << 20) + 7),
                         ::testing::PrintToStringParamName());

// ---- no cached or hard-coded answers, no writes to the input ---------------------------------

TEST_F(ArgmaxTest, EveryCallComputesAfresh) {
  const std::size_t n = (1u << 20) + 7;
  const RotatingInputs inputs(
      3, [n](std::uint64_t k) { return signed_mix(n, input_seed(31, k), 0.0, 0.0); });
  for (int call : kRotation) {
    SCOPED_TRACE("input " + std::to_string(call));
    expect_index(run(inputs.device(call), n), reference_argmax(inputs.host(call)),
                 &inputs.host(call), n);
  }
  inputs.expect_unmodified();
}

// ---- beyond 2^31 and 2^32 elements, in a few hundred MiB -------------------------------------

/// The body of AboveInt32Range and AboveUint32Range: \p width's input in mapped memory,
/// -1 - (j mod 1000) over each period: all negative, the largest (-1) at the start of every
/// period. Every answer but the first lies past the boundary, where a 32-bit index goes wrong:
/// an int one turns negative past 2^31, an unsigned one wraps at 2^32 and reads the element
/// 2^32 before it, a periodic value, or stores the answer mod 2^32; a count cut to 32 bits
/// never comes there.
void expect_argmax_past(ContractRunner& runner, const ArgmaxLab& lab, const IndexWidth& width) {
  REDUCE_REQUIRE_MAPPED_INPUT();
  const std::size_t two31 = kPastInt32.boundary;
  const std::size_t n = width.n, boundary = width.boundary;
  MappedInput in(n, [](std::size_t j) { return -1.0f - static_cast<float>(j % 1000); },
                 {two31, boundary + 3, boundary + 7, n - 1});
  const auto value_at = [&in](std::size_t i) { return in.at(i); };
  const std::string past = std::string(width.boundary_name) + " + ";
  SCOPED_TRACE("n = " + std::string(width.n_name) + ": " + width.why);
  {
    SCOPED_TRACE("-1 at every multiple of 1000 in each period: the first is index 0");
    expect_index(runner.run(lab, in.data(), n), 0, value_at, n);
  }
  // An answer past the boundary, where the element an index that wraps there reads holds
  // another value.
  const auto expect_past = [&](std::size_t want) {
    ASSERT_GE(want, boundary);
    ASSERT_NE(bits(in.at(want % boundary)), bits(in.at(want)));
    expect_index(runner.run(lab, in.data(), n), static_cast<std::int64_t>(want), value_at, n);
  };
  {
    SCOPED_TRACE("4 at index 2^31 and the largest element, 5, at " + past + "7");
    in.set(two31, 4.0f);
    in.set(boundary + 7, 5.0f);
    expect_past(boundary + 7);
  }
  {
    SCOPED_TRACE("a tie at the last index: still " + past + "7");
    in.set(n - 1, 5.0f);
    expect_past(boundary + 7);
  }
  {
    SCOPED_TRACE("a NaN at the last index, then one at " + past + "3");
    in.set(n - 1, kNaN);
    expect_past(n - 1);
    in.set(boundary + 3, kNaN);
    expect_past(boundary + 3);
  }
}

TEST_F(ArgmaxTest, AboveInt32Range) {
  expect_argmax_past(runner(), lab(), kPastInt32);
}

TEST_F(ArgmaxTest, AboveUint32Range) {
  expect_argmax_past(runner(), lab(), kPastUint32);
}

}  // namespace
}  // namespace reduce::testing
