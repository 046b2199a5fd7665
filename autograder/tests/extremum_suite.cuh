/// \file
/// \brief The maximum and minimum suites, written once: maximum_test.cu and minimum_test.cu each
/// define REDUCE_EXTREMUM_MAXIMUM or REDUCE_EXTREMUM_MINIMUM and include this file. Inputs and
/// expected values are written for the maximum and passed through mirror() (extremum.cuh).
#pragma once

#include "extremum.cuh"
#include "mapped_input.hpp"

#include <reduce/device_buffer.cuh>
#include <reduce/generators.hpp>
#include <reduce/lab_entry_points.cuh>
#include <reduce/reference.hpp>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace reduce::testing {
namespace {

/// Every test's fixture: skips without a GPU, else calls the maximum or the minimum through the
/// contract runner.
class REDUCE_EXTREMUM_PICK(MaximumTest, MinimumTest) : public FloatLabTest {
 protected:
  REDUCE_EXTREMUM_PICK(MaximumTest, MinimumTest)() : FloatLabTest(Traits::lab()) {}
};

/// The fixture under one name, for the parameterised suites to derive from.
using ExtremumTest = REDUCE_EXTREMUM_PICK(MaximumTest, MinimumTest);

/// The sizes of the whole-array tests: warp and block boundaries, the tail, 2^24, 3 x 10^8.
const std::vector<std::size_t> kSizes = {1,        2,        31,    32,    33,
                                         255,      256,      257,   1023,  1024,
                                         1025,     65535,    65536, 65537, (1u << 20) + 7,
                                         1u << 24, 300000000};

// ---- empty input -----------------------------------------------------------------------------

TEST_F(REDUCE_EXTREMUM_PICK(MaximumTest, MinimumTest),
       REDUCE_EXTREMUM_PICK(EmptyInputIsNegativeInfinity, EmptyInputIsPositiveInfinity)) {
  DeviceBuffer<float> in(1);
  in.fill_bytes(0x3F);  // a value that must not be read
  const float got = run(in.data(), 0);
  if (bits(got) != bits(Traits::kIdentity)) {
    const std::string identity = spell(Traits::kIdentity);
    ADD_FAILURE() << "the " << Traits::kName << " of no elements is " << identity
                  << ", the identity of " << Traits::kOp << "; got " << describe(got)
                  << (got == 0.0f ? ": the output started at 0 instead of " + identity : "");
  }
}

// ---- the semantics table ---------------------------------------------------------------------

/// One row of the table, written for the maximum (the minimum's is its mirror()).
using Case = TableCase<float>;

class REDUCE_EXTREMUM_PICK(MaximumSemantics, MinimumSemantics)
    : public ExtremumTest, public ::testing::WithParamInterface<Case> {};

TEST_P(REDUCE_EXTREMUM_PICK(MaximumSemantics, MinimumSemantics),
       REDUCE_EXTREMUM_PICK(MatchesIeeeMaximum, MatchesIeeeMinimum)) {
  const Case& c = GetParam();
  const std::vector<float> values = mirror(c.values);
  const float expected = mirror(c.expected);
  const float reference = Traits::reference(values);
  ASSERT_TRUE(bits(reference) == bits(expected) || (std::isnan(expected) && std::isnan(reference)))
      << "the test table and the CPU reference disagree";
  expect_result(run(values), expected, values.size());
}

REDUCE_EXTREMUM_INSTANTIATE(
    Cases, REDUCE_EXTREMUM_PICK(MaximumSemantics, MinimumSemantics),
    ::testing::Values(
        Case{REDUCE_EXTREMUM_PICK("all_negative", "all_positive"), {-3.0f, -1.0f, -2.0f}, -1.0f},
        Case{REDUCE_EXTREMUM_PICK("single_negative", "single_positive"), {-7.0f}, -7.0f},
        Case{REDUCE_EXTREMUM_PICK("minus_zero_then_plus_zero", "plus_zero_then_minus_zero"),
             {-0.0f, 0.0f},
             0.0f},
        Case{REDUCE_EXTREMUM_PICK("plus_zero_then_minus_zero", "minus_zero_then_plus_zero"),
             {0.0f, -0.0f},
             0.0f},
        Case{REDUCE_EXTREMUM_PICK("only_minus_zeros", "only_plus_zeros"),
             {-0.0f, -0.0f, -0.0f},
             -0.0f},
        Case{REDUCE_EXTREMUM_PICK("negatives_and_minus_zero", "positives_and_plus_zero"),
             {-1.0f, -0.0f, -2.0f},
             -0.0f},
        Case{REDUCE_EXTREMUM_PICK("all_minus_inf", "all_plus_inf"), {-kInf, -kInf}, -kInf},
        Case{REDUCE_EXTREMUM_PICK("plus_inf", "minus_inf"), {1.0f, kInf, -kInf}, kInf},
        Case{"nan_first", {kNaN, 1.0f, 2.0f}, kNaN}, Case{"nan_middle", {1.0f, kNaN, 2.0f}, kNaN},
        Case{"nan_last", {1.0f, 2.0f, kNaN}, kNaN},
        Case{REDUCE_EXTREMUM_PICK("nan_and_inf", "nan_and_minus_inf"), {kInf, kNaN}, kNaN},
        Case{"negative_nan", {-5.0f, from_bits(0xFFC00000u)}, kNaN}),
    NameField());

// ---- whole arrays over the size list ---------------------------------------------------------

class REDUCE_EXTREMUM_PICK(MaximumAllNegative, MinimumAllPositive)
    : public ExtremumTest, public ::testing::WithParamInterface<std::size_t> {};

TEST_P(REDUCE_EXTREMUM_PICK(MaximumAllNegative, MinimumAllPositive),
       REDUCE_EXTREMUM_PICK(IsTheLeastNegative, IsTheSmallestPositive)) {
  const std::size_t n = GetParam();
  // mirror(all_negative(n, seed)), written on the GPU: no host copy of 3 x 10^8 floats.
  const std::uint64_t seed = input_seed(n);
  const DeviceBuffer<float> in = all_negative_on_device(n, seed, Traits::kMirrored);
  const float want =
      Traits::streamed(n, [seed](std::size_t i) { return mirror(all_negative_at(seed, i)); });
  expect_result(run(in.data(), n), want, n);
}

REDUCE_EXTREMUM_INSTANTIATE(Sizes, REDUCE_EXTREMUM_PICK(MaximumAllNegative, MinimumAllPositive),
                            ::testing::ValuesIn(kSizes), ::testing::PrintToStringParamName());

class REDUCE_EXTREMUM_PICK(MaximumRandom, MinimumRandom)
    : public ExtremumTest, public ::testing::WithParamInterface<std::size_t> {};

TEST_P(REDUCE_EXTREMUM_PICK(MaximumRandom, MinimumRandom), MatchesReferenceBitwise) {
  const std::size_t n = GetParam();
  // Random signs, 12 decades of magnitude, 1 % signed zeros (symmetric: not mirrored):
  // signed_mix(n, seed, 0.01, 0.0), written on the GPU.
  const std::uint64_t seed = input_seed(n);
  const DeviceBuffer<float> in = signed_mix_on_device(n, seed, 0.01, 0.0);
  const float want =
      Traits::streamed(n, [seed](std::size_t i) { return signed_mix_at(seed, i, 0.01, 0.0); });
  expect_result(run(in.data(), n), want, n);
}

REDUCE_EXTREMUM_INSTANTIATE(Sizes, REDUCE_EXTREMUM_PICK(MaximumRandom, MinimumRandom),
                            ::testing::ValuesIn(kSizes), ::testing::PrintToStringParamName());

// ---- the largest (smallest) element where index bugs live ------------------------------------

class REDUCE_EXTREMUM_PICK(MaximumSentinel, MinimumSentinel)
    : public ExtremumTest, public ::testing::WithParamInterface<std::size_t> {};

TEST_P(REDUCE_EXTREMUM_PICK(MaximumSentinel, MinimumSentinel),
       REDUCE_EXTREMUM_PICK(FindsTheOnlyLargest, FindsTheOnlySmallest)) {
  const std::size_t n = GetParam();
  const std::vector<float> host = mirror(all_negative(n, input_seed(7, n)));
  std::vector<Change> sentinels;
  for (std::size_t p : boundary_positions(n))
    if (p < n) sentinels.push_back({p, mirror(1.0f)});
  const std::vector<float> got = run_variants(host, sentinels);
  for (std::size_t k = 0; k < sentinels.size(); ++k) {
    SCOPED_TRACE(std::string(Traits::kLargest) + " element at index " +
                 std::to_string(sentinels[k].at) + " of " + std::to_string(n));
    expect_result(got[k], mirror(1.0f), n);
  }
  expect_result(run(host), Traits::reference(host), n);
}

REDUCE_EXTREMUM_INSTANTIATE(Sizes, REDUCE_EXTREMUM_PICK(MaximumSentinel, MinimumSentinel),
                            ::testing::Values<std::size_t>(1025, 65537, (1u << 20) + 7),
                            ::testing::PrintToStringParamName());

// ---- NaN at the first, middle and last place (and at the boundaries) -------------------------

class REDUCE_EXTREMUM_PICK(MaximumNaN, MinimumNaN)
    : public ExtremumTest, public ::testing::WithParamInterface<std::size_t> {};

TEST_P(REDUCE_EXTREMUM_PICK(MaximumNaN, MinimumNaN), PropagatesFromAnyPlace) {
  const std::size_t n = GetParam();
  std::vector<float> host = mirror(all_negative(n, input_seed(3 * n)));
  place(host, {n - 1}, mirror(kInf));  // a NaN must beat the infinity that wins otherwise too
  std::vector<Change> nans;
  for (std::size_t p : boundary_positions(n))
    if (p < n)
      for (std::uint32_t nan_bits : {0x7FC00000u, 0xFFC00000u, 0x7F800001u})
        nans.push_back({p, from_bits(nan_bits)});
  const std::vector<float> got = run_variants(host, nans);
  for (std::size_t k = 0; k < nans.size(); ++k) {
    SCOPED_TRACE("NaN " + describe(nans[k].value) + " at index " + std::to_string(nans[k].at) +
                 " of " + std::to_string(n));
    expect_result(got[k], kNaN, n);
  }
}

REDUCE_EXTREMUM_INSTANTIATE(Sizes, REDUCE_EXTREMUM_PICK(MaximumNaN, MinimumNaN),
                            ::testing::Values<std::size_t>(1, 2, 33, 257, 1025, 65537,
                                                           (1u << 20) + 7),
                            ::testing::PrintToStringParamName());

TEST_F(REDUCE_EXTREMUM_PICK(MaximumTest, MinimumTest), ManyNaNs) {
  const std::size_t n = (1u << 20) + 7;
  std::vector<float> host = mirror(all_negative(n, input_seed()));
  for (std::size_t i = 0; i < n; i += 1000) host[i] = kNaN;
  expect_result(run(host), kNaN, n);
}

// ---- signed zeros and infinities -------------------------------------------------------------

class REDUCE_EXTREMUM_PICK(MaximumSignedZeros, MinimumSignedZeros)
    : public ExtremumTest, public ::testing::WithParamInterface<std::size_t> {};

TEST_P(REDUCE_EXTREMUM_PICK(MaximumSignedZeros, MinimumSignedZeros),
       REDUCE_EXTREMUM_PICK(PlusZeroBeatsMinusZero, MinusZeroBeatsPlusZero)) {
  const std::size_t n = GetParam();
  const float loser = mirror(-0.0f), winner = mirror(0.0f);  // -0.0 and +0.0 for the maximum
  const std::string is = std::string(": the ") + Traits::kName + " is ";
  {
    SCOPED_TRACE("only " + spell(loser) + is + spell(loser));
    expect_result(run(std::vector<float>(n, loser)), loser, n);
  }
  {
    SCOPED_TRACE(std::string(Traits::kNegative) + " numbers and one " + spell(loser) +
                 " at the end" + is + spell(loser));
    std::vector<float> host = mirror(all_negative(n, input_seed(5)));
    host[n - 1] = loser;
    expect_result(run(host), loser, n);
  }
  {
    SCOPED_TRACE("+0.0 and -0.0 at random" + is + spell(winner));
    const std::vector<float> host = signed_zeros(n, input_seed(9));  // symmetric: not mirrored
    expect_result(run(host), Traits::reference(host), n);
  }
  std::vector<Change> winners;
  for (std::size_t p : {std::size_t{0}, n / 2, n - 1}) winners.push_back({p, winner});
  const std::vector<float> got = run_variants(std::vector<float>(n, loser), winners);
  for (std::size_t k = 0; k < winners.size(); ++k) {
    SCOPED_TRACE("one " + spell(winner) + " among " + spell(loser) + " at index " +
                 std::to_string(winners[k].at));
    expect_result(got[k], winner, n);
  }
}

REDUCE_EXTREMUM_INSTANTIATE(Sizes, REDUCE_EXTREMUM_PICK(MaximumSignedZeros, MinimumSignedZeros),
                            ::testing::Values<std::size_t>(2, 33, 1025, (1u << 20) + 7),
                            ::testing::PrintToStringParamName());

TEST_F(REDUCE_EXTREMUM_PICK(MaximumTest, MinimumTest), Infinities) {
  const std::size_t n = (1u << 20) + 7;
  const float losing_inf = mirror(-kInf), winning_inf = mirror(kInf);
  {
    SCOPED_TRACE("only " + spell(losing_inf));
    expect_result(run(std::vector<float>(n, losing_inf)), losing_inf, n);
  }
  {
    SCOPED_TRACE(spell(losing_inf) + " everywhere but one " + spell(mirror(-1e30f)) +
                 " at the end");
    std::vector<float> host(n, losing_inf);
    host[n - 1] = mirror(-1e30f);
    expect_result(run(host), mirror(-1e30f), n);
  }
  {
    SCOPED_TRACE("random values with +-inf and +-0.0 mixed in");
    const std::vector<float> host = signed_mix(n, input_seed(11), 0.01, 0.001);
    expect_result(run(host), Traits::reference(host), n);
  }
  {
    SCOPED_TRACE("one " + spell(winning_inf) + " among " + Traits::kNegative + "s");
    std::vector<float> host = mirror(all_negative(n, input_seed(13)));
    host[n / 3] = winning_inf;
    expect_result(run(host), winning_inf, n);
  }
}

// ---- no cached or hard-coded answers, no writes to the input ---------------------------------

TEST_F(REDUCE_EXTREMUM_PICK(MaximumTest, MinimumTest), EveryCallComputesAfresh) {
  const std::size_t n = (1u << 20) + 7;
  const RotatingInputs inputs(3, [n](std::uint64_t k) {
    return k == 1 ? mirror(all_negative(n, input_seed(31, k)))
                  : signed_mix(n, input_seed(31, k), 0.0, 0.0);
  });
  for (int call : kRotation) {
    SCOPED_TRACE("input " + std::to_string(call));
    expect_result(run(inputs.device(call), n), Traits::reference(inputs.host(call)), n);
  }
  inputs.expect_unmodified();
}

// ---- beyond 2^31 and 2^32 elements, in a few hundred MiB -------------------------------------

/// The body of AboveInt32Range and AboveUint32Range: \p width's input in mapped memory,
/// -(1 + (j mod 1000)) over each period for the maximum (its mirror image for the minimum): the
/// largest (-1) at the start of every period. Every later answer lies past the boundary, where an
/// index that wraps there reads the periodic value of the element boundary before it instead, and
/// a count cut to 32 bits never comes: neither sees it.
void expect_extremum_past(ContractRunner& runner, const FloatLab& lab, const IndexWidth& width) {
  REDUCE_REQUIRE_MAPPED_INPUT();
  const std::size_t two31 = kPastInt32.boundary;
  const std::size_t n = width.n, boundary = width.boundary;
  MappedInput in(n, [](std::size_t j) { return mirror(-(1.0f + static_cast<float>(j % 1000))); },
                 {two31, boundary + 7, boundary + 1000, n - 1});
  const std::string past = std::string(width.boundary_name) + " + ";
  SCOPED_TRACE("n = " + std::string(width.n_name) + ": " + width.why);
  {
    SCOPED_TRACE("all " + std::string(Traits::kNegative));
    expect_result(runner.run(lab, in.data(), n), mirror(-1.0f), n);
  }
  // The answer, at index \p at past the boundary, where an index that wraps there reads
  // another value.
  const auto expect_past = [&](std::size_t at, float want) {
    ASSERT_GE(at, boundary);
    ASSERT_NE(bits(in.at(at % boundary)), bits(in.at(at)));
    expect_result(runner.run(lab, in.data(), n), want, n);
  };
  {
    SCOPED_TRACE(std::string(Traits::kLargest) + " element at index " + past + "7, " +
                 spell(mirror(4.0f)) + " at 2^31: an index that wraps at " + width.boundary_name +
                 " reads index 7 instead");
    in.set(two31, mirror(4.0f));
    in.set(boundary + 7, mirror(5.0f));
    expect_past(boundary + 7, mirror(5.0f));
  }
  {
    SCOPED_TRACE(std::string(Traits::kLarger) + " still at the last index");
    in.set(n - 1, mirror(6.0f));
    expect_past(n - 1, mirror(6.0f));
  }
  {
    SCOPED_TRACE("a NaN at index " + past + "1000");
    in.set(boundary + 1000, kNaN);
    expect_past(boundary + 1000, kNaN);
  }
}

TEST_F(REDUCE_EXTREMUM_PICK(MaximumTest, MinimumTest), AboveInt32Range) {
  expect_extremum_past(runner(), lab(), kPastInt32);
}

TEST_F(REDUCE_EXTREMUM_PICK(MaximumTest, MinimumTest), AboveUint32Range) {
  expect_extremum_past(runner(), lab(), kPastUint32);
}

}  // namespace
}  // namespace reduce::testing
