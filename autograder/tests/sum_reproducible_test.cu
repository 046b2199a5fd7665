// The reproducible sum (lab 18): the sum suite (sum_test.cu, run on reduce::sum_reproducible:
// course.json's `suites`), and the exact sum rounded once to float, ties to even, bit for bit
// (reduce::ExactSum) on inputs where any other result is easy to get: ill-conditioned and
// full-range data, the same data in other orders, a sum that a double accumulator rounds twice,
// subnormals, sums at the edge of the float range, infinities, NaN and signed zeros.
#include "accuracy.hpp"
#include "sum_suite.hpp"

#include <reduce/generators.hpp>

#include <cfloat>
#include <cmath>
#include <cstddef>
#include <string>
#include <tuple>
#include <vector>

namespace reduce::testing {
namespace {

// ---- the exact sum, rounded once, on data where rounding errors are large -------------------

class SumReproducibleData : public SumTest,
                            public ::testing::WithParamInterface<std::tuple<Data, std::size_t>> {};

TEST_P(SumReproducibleData, CorrectlyRounded) {
  const auto [kind, n] = GetParam();
  const std::vector<float> host = make_data(kind, n, input_seed(n * 5));
  expect_correctly_rounded(run(host), host, data_name(kind));
}

INSTANTIATE_TEST_SUITE_P(
    Data, SumReproducibleData,
    ::testing::Combine(::testing::Values(Data::kUniform, Data::kMixedSign, Data::kWideRange,
                                         Data::kLargeOffset, Data::kCancelling),
                       ::testing::Values<std::size_t>(1, 33, 1000, 65537, (1u << 20) + 7,
                                                      1u << 24)),
    data_and_size_name);

class SumReproducibleFullRange : public SumTest,
                                 public ::testing::WithParamInterface<std::size_t> {};

TEST_P(SumReproducibleFullRange, CorrectlyRounded) {
  const std::size_t n = GetParam();
  const std::vector<float> host = full_range(n, input_seed(n));
  expect_correctly_rounded(run(host), host, "magnitudes from 2^-149 to 2^100, random signs");
}

INSTANTIATE_TEST_SUITE_P(Sizes, SumReproducibleFullRange,
                         ::testing::Values<std::size_t>(2, 31, 1025, 65537, (1u << 20) + 7),
                         ::testing::PrintToStringParamName());

// ---- the same bits in any order --------------------------------------------------------------

class SumReproducibleOrder : public SumTest, public ::testing::WithParamInterface<std::size_t> {};

TEST_P(SumReproducibleOrder, SameBitsInAnyOrder) {
  const std::size_t n = GetParam();
  const std::vector<float> host = make_data(Data::kMixedSign, n, input_seed(3 * n));
  const float first = run(host);
  expect_correctly_rounded(first, host, "uniform in [-1, 1)");
  std::vector<float> reversed(host.rbegin(), host.rend());
  const float backwards = run(reversed);
  EXPECT_EQ(bits(backwards), bits(first))
      << "n = " << n << ": the same values in reverse order gave " << describe(backwards)
      << " after " << describe(first);
  for (std::uint64_t k = 0; k < 3; ++k) {
    const float again = run(shuffled(host, input_seed(k)));
    EXPECT_EQ(bits(again), bits(first))
        << "n = " << n << ": the same values shuffled (" << k << ") gave " << describe(again)
        << " after " << describe(first);
  }
}

INSTANTIATE_TEST_SUITE_P(Sizes, SumReproducibleOrder,
                         ::testing::Values<std::size_t>(1000, 65537, (1u << 20) + 7),
                         ::testing::PrintToStringParamName());

// ---- rounding: once, to nearest, ties to even -------------------------------------------------

/// Zeros with \p values written from position \p at on (wrapping): the values' sum, wherever the
/// lab's decomposition puts them.
std::vector<float> placed(std::size_t n, std::size_t at, const std::vector<float>& values) {
  std::vector<float> x(n, 0.0f);
  for (std::size_t k = 0; k < values.size(); ++k) x[(at + k * 7919) % n] = values[k];
  return x;
}

struct RoundingCase {
  const char* name;
  std::vector<float> values;
  float want;  // the exact sum rounded once (also checked against ExactSum)
};

void PrintTo(const RoundingCase& c, std::ostream* os) {
  *os << c.name;
}

const RoundingCase kRoundingCases[] = {
    // 1 + 2^-24 lies halfway between 1 and 1 + 2^-23: ties to even gives 1.
    {"tie_to_even_down", {1.0f, 0x1.0p-24f}, 1.0f},
    // 1 + 2^-23 + 2^-24 lies halfway between 1 + 2^-23 and 1 + 2^-22: even is 1 + 2^-22.
    {"tie_to_even_up", {1.0f, 0x1.0p-23f, 0x1.0p-24f}, 0x1.000004p0f},
    // Just above the tie: rounds up. In double, 1 + 2^-24 + 2^-60 is 1 + 2^-24 (2^-60 is below
    // double's precision there), which then rounds to 1 in float: rounded twice, wrongly.
    {"above_tie_double_rounding", {1.0f, 0x1.0p-24f, 0x1.0p-60f}, 0x1.000002p0f},
    {"below_tie_double_rounding", {1.0f, 0x1.0p-24f, -0x1.0p-60f}, 1.0f},
    {"negative_above_tie", {-1.0f, -0x1.0p-24f, -0x1.0p-60f}, -0x1.000002p0f},
    // The tiny term sits past 2^-149 of the big ones' grid: only an exact sum sees it.
    {"tiny_beside_huge", {0x1.0p100f, 0x1.0p76f, 0x1.0p-149f, -0x1.0p100f}, 0x1.0p76f},
    // 1 + 1 + 3 - 1 units of 2^-149: subnormals are exact multiples of the smallest one.
    {"subnormals_add_up", {0x1.0p-149f, 0x1.0p-149f, 0x1.8p-148f, -0x1.0p-149f}, 0x1.0p-147f},
};

class SumReproducibleRounding
    : public SumTest,
      public ::testing::WithParamInterface<std::tuple<RoundingCase, std::size_t>> {};

TEST_P(SumReproducibleRounding, RoundsOnce) {
  const auto& [c, n] = GetParam();
  const std::size_t places[] = {0, n / 2, n - 1};
  std::vector<std::vector<float>> inputs;
  for (std::size_t at : places) {
    inputs.push_back(placed(n, at, c.values));
    ASSERT_EQ(bits(exact_reference(inputs.back()).rounded), bits(c.want)) << c.name;
  }
  const std::vector<float> got = run_inputs(inputs);
  for (std::size_t k = 0; k < inputs.size(); ++k)
    expect_correctly_rounded(got[k], inputs[k],
                             std::string(c.name) + " from index " + std::to_string(places[k]));
}

std::string rounding_name(
    const ::testing::TestParamInfo<std::tuple<RoundingCase, std::size_t>>& info) {
  return std::string(std::get<0>(info.param).name) + "_" + std::to_string(std::get<1>(info.param));
}

INSTANTIATE_TEST_SUITE_P(Cases, SumReproducibleRounding,
                         ::testing::Combine(::testing::ValuesIn(kRoundingCases),
                                            ::testing::Values<std::size_t>(33, 65537)),
                         rounding_name);

// ---- the edges of the float range, infinities, NaN and signed zeros ------------------------

const RoundingCase kEdgeCases[] = {
    // Partial sums beyond FLT_MAX are no reason for inf when the exact sum is finite.
    {"max_plus_max_minus_max", {FLT_MAX, FLT_MAX, -FLT_MAX}, FLT_MAX},
    {"max_plus_max", {FLT_MAX, FLT_MAX}, INFINITY},
    {"minus_max_twice", {-FLT_MAX, -FLT_MAX}, -INFINITY},
    // FLT_MAX + half its ulp is a tie between FLT_MAX (odd) and 2^128: even means inf.
    {"tie_at_the_top", {FLT_MAX, 0x1.0p103f}, INFINITY},
    {"below_tie_at_the_top", {FLT_MAX, 0x1.0p102f}, FLT_MAX},
    {"inf_wins", {1.0f, INFINITY, -FLT_MAX}, INFINITY},
    {"minus_inf_wins", {1.0f, -INFINITY, FLT_MAX, FLT_MAX}, -INFINITY},
    {"inf_minus_inf", {INFINITY, 1.0f, -INFINITY}, NAN},
    {"nan", {1.0f, NAN, 2.0f}, NAN},
    {"nan_with_inf", {INFINITY, NAN}, NAN},
    // An exact zero is +0 unless every element is -0.
    {"cancel_to_plus_zero", {-3.5f, 3.5f}, 0.0f},
    {"minus_zeros_with_plus_zero", {-0.0f, 0.0f, -0.0f}, 0.0f},
};

class SumReproducibleEdges : public SumTest, public ::testing::WithParamInterface<RoundingCase> {};

TEST_P(SumReproducibleEdges, AsIeeeSays) {
  const RoundingCase& c = GetParam();
  for (std::size_t n : {c.values.size(), std::size_t{1025}, std::size_t{65537}}) {
    const std::size_t places[] = {0, n - 1};
    std::vector<std::vector<float>> inputs;
    for (std::size_t at : places) {
      inputs.push_back(placed(n, at, c.values));
      const float want = exact_reference(inputs.back()).rounded;
      ASSERT_TRUE(bits(want) == bits(c.want) || (std::isnan(want) && std::isnan(c.want))) << c.name;
    }
    const std::vector<float> got = run_inputs(inputs);
    for (std::size_t k = 0; k < inputs.size(); ++k)
      expect_correctly_rounded(got[k], inputs[k],
                               std::string(c.name) + " from index " + std::to_string(places[k]));
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, SumReproducibleEdges, ::testing::ValuesIn(kEdgeCases),
                         [](const ::testing::TestParamInfo<RoundingCase>& info) {
                           return std::string(info.param.name);
                         });

class SumReproducibleNegativeZero : public SumTest,
                                    public ::testing::WithParamInterface<std::size_t> {};

TEST_P(SumReproducibleNegativeZero, AllMinusZeroIsMinusZero) {
  const std::size_t n = GetParam();
  const std::vector<float> host(n, -0.0f);
  const float got = run(host);
  EXPECT_EQ(bits(got), bits(-0.0f)) << "n = " << n << " elements, every one -0.0: the sum is "
                                    << "-0.0 (IEEE: -0 + -0 = -0); got " << describe(got)
                                    << ". Start from -0.0, or track whether every element was -0.";
}

INSTANTIATE_TEST_SUITE_P(Sizes, SumReproducibleNegativeZero,
                         ::testing::Values<std::size_t>(1, 33, 65537),
                         ::testing::PrintToStringParamName());

}  // namespace
}  // namespace reduce::testing
