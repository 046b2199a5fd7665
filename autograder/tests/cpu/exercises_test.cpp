// The exercises (labs 10-14): their references (IEEE 754-2019 maximum and minimum, argmax's
// first index, the product and the mean), bounds and adversarial inputs.
// These need no GPU: they run everywhere, CI included.
#include <reduce/generators.hpp>
#include <reduce/reference.hpp>

#include "float_trees.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace reduce {
namespace {

// ---- exercises (labs 10-14): references, bounds and adversarial inputs -------------------------

std::uint32_t float_bits(float v) {
  std::uint32_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

constexpr float kInf = std::numeric_limits<float>::infinity();
const float kNaN = std::numeric_limits<float>::quiet_NaN();

TEST(ExerciseReference, MaximumFollowsIeee2019) {
  EXPECT_EQ(reference_maximum({-3.0f, -1.0f, -2.0f}), -1.0f) << "not 0: the identity is -inf";
  EXPECT_EQ(float_bits(reference_maximum({-0.0f, 0.0f})), float_bits(0.0f));
  EXPECT_EQ(float_bits(reference_maximum({0.0f, -0.0f})), float_bits(0.0f));
  EXPECT_EQ(float_bits(reference_maximum({-0.0f, -0.0f})), float_bits(-0.0f));
  EXPECT_EQ(float_bits(reference_maximum({-1.0f, -0.0f, -2.0f})), float_bits(-0.0f));
  EXPECT_EQ(reference_maximum({}), -kInf);
  EXPECT_EQ(reference_maximum({-kInf, -kInf}), -kInf);
  EXPECT_EQ(reference_maximum({1.0f, kInf, 2.0f}), kInf);
  EXPECT_TRUE(std::isnan(reference_maximum({kNaN, 1.0f})));
  EXPECT_TRUE(std::isnan(reference_maximum({1.0f, kNaN})));
  EXPECT_TRUE(std::isnan(reference_maximum({kInf, 2.0f, -kNaN})));
}

TEST(ExerciseReference, MinimumFollowsIeee2019) {
  EXPECT_EQ(reference_minimum({3.0f, 1.0f, 2.0f}), 1.0f) << "not 0: the identity is +inf";
  EXPECT_EQ(float_bits(reference_minimum({0.0f, -0.0f})), float_bits(-0.0f));
  EXPECT_EQ(float_bits(reference_minimum({-0.0f, 0.0f})), float_bits(-0.0f));
  EXPECT_EQ(float_bits(reference_minimum({0.0f, 0.0f})), float_bits(0.0f));
  EXPECT_EQ(reference_minimum({}), kInf);
  EXPECT_EQ(reference_minimum({1.0f, -kInf}), -kInf);
  EXPECT_TRUE(std::isnan(reference_minimum({-kInf, kNaN})));
  EXPECT_TRUE(std::isnan(reference_minimum({kNaN, -kInf})));
}

// The GPU reduces in an order of its own: the operators must give the same bits in any order.
TEST(ExerciseReference, MaxAndMinAreAssociativeAndCommutativeOnSpecialValues) {
  const std::vector<float> specials = {-kInf, -2.0f, -0.0f, 0.0f, 1e-45f, 3.0f, kInf, kNaN};
  auto same = [](float a, float b) {
    return (std::isnan(a) && std::isnan(b)) || float_bits(a) == float_bits(b);
  };
  for (float a : specials) {
    for (float b : specials) {
      EXPECT_TRUE(same(ieee_maximum(a, b), ieee_maximum(b, a))) << a << " " << b;
      EXPECT_TRUE(same(ieee_minimum(a, b), ieee_minimum(b, a))) << a << " " << b;
      for (float c : specials) {
        EXPECT_TRUE(same(ieee_maximum(a, ieee_maximum(b, c)), ieee_maximum(ieee_maximum(a, b), c)));
        EXPECT_TRUE(same(ieee_minimum(a, ieee_minimum(b, c)), ieee_minimum(ieee_minimum(a, b), c)));
      }
    }
  }
}

TEST(ExerciseReference, MinimumMirrorsMaximum) {
  std::vector<float> x = signed_mix(100000, 3, 0.05, 0.001);
  std::vector<float> negated = x;
  for (float& v : negated) v = -v;
  EXPECT_EQ(float_bits(reference_minimum(x)), float_bits(-reference_maximum(negated)));
  std::vector<float> zeros = signed_zeros(1000, 4);
  EXPECT_EQ(float_bits(reference_maximum(zeros)), float_bits(0.0f));
  EXPECT_EQ(float_bits(reference_minimum(zeros)), float_bits(-0.0f));
}

TEST(ExerciseReference, ArgmaxFirstIndexFirstNaN) {
  EXPECT_EQ(reference_argmax({-3.0f, -1.0f, -2.0f}), 1);
  EXPECT_EQ(reference_argmax({1.0f, 5.0f, 5.0f, 2.0f}), 1) << "ties: the first index";
  EXPECT_EQ(reference_argmax({-1.0f, -0.0f, 0.0f}), 1) << "+0.0 and -0.0 tie";
  EXPECT_EQ(reference_argmax({0.0f, -0.0f}), 0);
  EXPECT_EQ(reference_argmax({-kInf, -kInf}), 0);
  EXPECT_EQ(reference_argmax({kInf, 2.0f, kNaN, kNaN}), 2) << "the first NaN wins";
  EXPECT_EQ(reference_argmax({kNaN}), 0);
  EXPECT_THROW(reference_argmax({}), std::invalid_argument);
  const std::vector<float> x = ties(100000, 8, 3.0f, {99999, 5000, 70000});
  EXPECT_EQ(reference_argmax(x), 5000);
}

TEST(ExerciseReference, ProductInDoubleWithSpecialValues) {
  EXPECT_EQ(reference_product({}), 1.0);
  EXPECT_EQ(reference_product({2.0f, 3.0f, 4.0f}), 24.0);
  EXPECT_EQ(reference_product({-1.0f, -2.0f, -3.0f}), -6.0);
  EXPECT_TRUE(std::signbit(reference_product({-1.0f, 0.0f})));
  EXPECT_EQ(reference_product({-1.0f, 0.0f}), 0.0);
  EXPECT_TRUE(std::isnan(reference_product({0.0f, kInf})));
  EXPECT_TRUE(std::isnan(reference_product({2.0f, kNaN})));
  EXPECT_EQ(reference_product({-2.0f, kInf}), -std::numeric_limits<double>::infinity());
  // 2^200 is finite in double and overflows float; 2^-300 underflows float but not double.
  EXPECT_EQ(reference_product(std::vector<float>(200, 2.0f)), std::ldexp(1.0, 200));
  EXPECT_EQ(static_cast<float>(reference_product(std::vector<float>(200, 2.0f))), kInf);
  EXPECT_EQ(reference_product(std::vector<float>(300, 0.5f)), std::ldexp(1.0, -300));
  // Far beyond double's range: the exponent is kept apart, so only the final value saturates.
  EXPECT_EQ(reference_product(std::vector<float>(2000, 2.0f)),
            std::numeric_limits<double>::infinity());
  std::vector<float> up_and_down(4000, 2.0f);
  std::fill(up_and_down.begin() + 2000, up_and_down.end(), 0.5f);
  EXPECT_EQ(reference_product(up_and_down), 1.0) << "2^2000 * 2^-2000 computed without overflow";
}

/// A float product in a given order: serial left to right.
float serial_float_product(const std::vector<float>& x) {
  float p = 1.0f;
  for (float v : x) p *= v;
  return p;
}

// Lesson 11's table: one exact product (1), four orders, four different float results.
TEST(ExerciseReference, ProductOrderDecidesOverflowAndUnderflow) {
  const float big = std::ldexp(1.0f, 100), small = std::ldexp(1.0f, -100);
  const std::vector<float> x = {big, big, small, small};
  EXPECT_EQ(reference_product(x), 1.0);
  EXPECT_EQ(serial_float_product(x), kInf) << "left to right: 2^200 overflows first";
  EXPECT_EQ(serial_float_product({small, small, big, big}), 0.0f)
      << "right to left: 2^-200 underflows first";
  EXPECT_TRUE(std::isnan(pairwise_float_product(x))) << "neighbours: inf * 0";
  EXPECT_EQ((big * small) * (big * small), 1.0f)
      << "strided pairs, as a GPU tree pairs i and i+n/2";
}

TEST(ExerciseGenerators, ExactProductFactorsGiveOneProductInAnyOrder) {
  for (std::size_t n : {1u, 3u, 1000u, 1000003u}) {
    std::vector<float> x = exact_product_factors(n, n);
    std::size_t twos = 0, halves = 0;
    for (float v : x) {
      const float m = std::fabs(v);
      ASSERT_TRUE(m == 1.0f || m == 2.0f || m == 0.5f) << v;
      twos += m == 2.0f;
      halves += m == 0.5f;
    }
    EXPECT_LE(twos, kProductExponentBudget);
    EXPECT_LE(halves, kProductExponentBudget);
    if (n >= 1000) {
      EXPECT_GT(twos + halves, 0u) << "the input must hold factors that are not +-1";
    }
    const float expected = static_cast<float>(reference_product(x));
    EXPECT_EQ(float_bits(serial_float_product(x)), float_bits(expected));
    EXPECT_EQ(float_bits(pairwise_float_product(x)), float_bits(expected));
    std::reverse(x.begin(), x.end());
    EXPECT_EQ(float_bits(serial_float_product(x)), float_bits(expected));
    std::shuffle(x.begin(), x.end(), std::mt19937_64(n));
    EXPECT_EQ(float_bits(serial_float_product(x)), float_bits(expected));
  }
}

TEST(ExerciseGenerators, DroppingAFactorChangesTheExactProduct) {
  std::vector<float> x = exact_product_factors(100000, 21);
  const double full = reference_product(x);
  const auto not_one = std::find_if(x.begin(), x.end(), [](float v) { return v != 1.0f; });
  ASSERT_NE(not_one, x.end());
  *not_one = 1.0f;
  EXPECT_NE(static_cast<float>(reference_product(x)), static_cast<float>(full));
}

TEST(ExerciseReference, MeanInDouble) {
  EXPECT_TRUE(std::isnan(reference_mean({})));
  EXPECT_EQ(reference_mean({1.0f, 2.0f, 3.0f, 4.0f}), 2.5);
  // A float running sum stops at 2^24: the naive mean of 2^25 ones is 0.5, the reference 1.
  const std::vector<float> ones(std::size_t{1} << 25, 1.0f);
  EXPECT_EQ(reference_mean(ones), 1.0);
  EXPECT_EQ(serial_float_sum(ones.data(), ones.size()) / static_cast<float>(ones.size()), 0.5f);
}

TEST(ExerciseBounds, ProductBoundHoldsAndIsTightEnough) {
  for (std::size_t n : {1000u, 100000u, 1000000u}) {
    const std::vector<float> x = uniform(n, n + 1, 1.0f - 0x1p-9f, 1.0f + 0x1p-9f);
    const double exact = reference_product(x);
    const double bound = product_relative_error_bound(n);
    EXPECT_LE(std::fabs(serial_float_product(x) - exact) / std::fabs(exact), bound) << n;
    EXPECT_LE(std::fabs(pairwise_float_product(x) - exact) / std::fabs(exact), bound) << n;
    if (n <= 1000) {
      // Dropping one factor changes the product by up to 2^-9 relative; the worst-case bound
      // sees that in short inputs only (gamma(n - 1) passes 2^-9 near 30000 factors).
      std::vector<float> dropped = x;
      const auto far = std::max_element(dropped.begin(), dropped.end(), [](float a, float b) {
        return std::fabs(a - 1.0f) < std::fabs(b - 1.0f);
      });
      *far = 1.0f;
      EXPECT_GT(std::fabs(serial_float_product(dropped) - exact) / std::fabs(exact), bound) << n;
    }
  }
  EXPECT_TRUE(std::isinf(gamma((std::size_t{1} << 24) - 1)) ||
              gamma((std::size_t{1} << 24) - 1) > 1.0);
}

// Why the product bound is the worst case and not a probabilistic one: the roundings of a
// product of factors near 1 are biased, so their errors add up far faster than sqrt(n) u.
TEST(ExerciseBounds, ProductRoundingsOfFactorsNearOneAreBiased) {
  const std::size_t n = std::size_t{1} << 22;
  const std::vector<float> x = uniform(n, 5, 1.0f - 0x1p-9f, 1.0f + 0x1p-9f);
  const double exact = reference_product(x);
  const double error = std::fabs(pairwise_float_product(x) - exact) / std::fabs(exact);
  const double independent_estimate = 8.0 * std::sqrt(static_cast<double>(n)) * kFloatUnitRoundoff;
  EXPECT_GT(error, independent_estimate)
      << "8 sqrt(n) u would be a safe bound if roundings were independent";
  EXPECT_LE(error, product_relative_error_bound(n));
}

TEST(ExerciseBounds, MeanBoundHoldsAndSeesADroppedElement) {
  for (std::size_t n : {1000u, 100000u, 1000000u}) {
    std::vector<float> x = uniform(n, n + 2, 0.0f, 1.0f);
    const double exact = reference_mean(x);
    const double bound = mean_error_bound(tree_depth(n), n, absolute_sum(x), exact);
    const float tree = pairwise_float_sum(x);
    const float tree_mean = static_cast<float>(static_cast<double>(tree) / n);
    EXPECT_LE(std::fabs(tree_mean - exact), bound) << n;
    if (n <= 100000) {
      const float dropped = static_cast<float>((static_cast<double>(tree) - 0.5) / n);
      EXPECT_GT(std::fabs(dropped - exact), bound) << "a dropped element of 0.5 must break it";
    }
  }
}

TEST(ExerciseGenerators, AdversarialInputsAreWhatTheySay) {
  const std::vector<float> negative = all_negative(100000, 1);
  EXPECT_LT(*std::max_element(negative.begin(), negative.end()), 0.0f);
  EXPECT_GE(*std::min_element(negative.begin(), negative.end()), -1024.0f);

  const std::vector<float> zeros = signed_zeros(1000, 2);
  std::size_t minus = 0;
  for (float v : zeros) {
    ASSERT_EQ(v, 0.0f);
    minus += std::signbit(v);
  }
  EXPECT_GT(minus, 400u);
  EXPECT_LT(minus, 600u);

  const std::vector<float> mix = signed_mix(200000, 3, 0.1, 0.01);
  std::size_t z = 0, inf = 0, negative_count = 0;
  for (float v : mix) {
    z += v == 0.0f;
    inf += std::isinf(v);
    negative_count += std::signbit(v);
  }
  EXPECT_NEAR(static_cast<double>(z), 20000.0, 1000.0);
  EXPECT_NEAR(static_cast<double>(inf), 2000.0, 300.0);
  EXPECT_NEAR(static_cast<double>(negative_count), 100000.0, 1500.0);

  const std::vector<float> tied = ties(5000, 4, -0.5f, {4999, 17, 2500, 9999});
  EXPECT_EQ(std::count(tied.begin(), tied.end(), -0.5f), 3);
  for (std::size_t i = 0; i < tied.size(); ++i) {
    if (i != 17 && i != 2500 && i != 4999) ASSERT_LT(tied[i], -0.5f) << i;
  }

  std::vector<float> x(10, 1.0f);
  place(x, {0, 9, 10, 1000}, kNaN);
  EXPECT_TRUE(std::isnan(x[0]) && std::isnan(x[9]));
  EXPECT_EQ(std::count_if(x.begin(), x.end(), [](float v) { return std::isnan(v); }), 2);
}

// ---- the references over values computed by index --------------------------------------------

/// Bitwise equality: a NaN must come out with the first NaN's own bits.
void expect_same_bits(float streamed, float reference, const char* what) {
  EXPECT_EQ(float_bits(streamed), float_bits(reference)) << what;
}

/// Compares the streamed maximum, minimum and argmax of \p x, on several counts of chunks
/// (threads), with the references on the vector.
void expect_streamed_match(const std::vector<float>& x) {
  const std::size_t n = x.size();
  const auto value_at = [&x](std::size_t i) { return x[i]; };
  // 0: chunk_count(n); up to 64 threads, one element each where n <= 64.
  for (std::size_t chunks : {std::size_t{0}, std::size_t{1}, std::size_t{2}, std::size_t{3},
                             std::size_t{7}, std::size_t{64}, std::min<std::size_t>(n, 64)}) {
    SCOPED_TRACE("n = " + std::to_string(n) + ", chunks " + std::to_string(chunks));
    expect_same_bits(streamed_maximum(n, value_at, chunks), reference_maximum(x), "maximum");
    expect_same_bits(streamed_minimum(n, value_at, chunks), reference_minimum(x), "minimum");
    if (n > 0) EXPECT_EQ(streamed_argmax(n, value_at, chunks), reference_argmax(x)) << "argmax";
  }
}

class StreamedReference : public ::testing::TestWithParam<std::size_t> {};

TEST_P(StreamedReference, MatchesTheVectorReferenceWithoutNaN) {
  const std::size_t n = GetParam();
  expect_streamed_match(all_negative(n, 51));
  expect_streamed_match(signed_mix(n, 52, 0.01, 0.0));   // signed zeros
  expect_streamed_match(signed_mix(n, 53, 0.3, 0.05));   // many zeros and infinities
  expect_streamed_match(signed_mix(n, 54, 0.999, 0.0));  // almost only zeros: ties
  expect_streamed_match(signed_zeros(n, 55));
  expect_streamed_match(std::vector<float>(n, -kInf));
  expect_streamed_match(ties(n, 56, 3.0f, {n / 2, n - 1, n / 3, 1}));  // ties across chunks
}

TEST_P(StreamedReference, MatchesTheVectorReferenceWithNaN) {
  const std::size_t n = GetParam();
  for (const std::vector<std::size_t>& places :
       {std::vector<std::size_t>{0}, {n - 1}, {n / 2}, {n - 1, n / 3}, {n / 7, n / 2, n - 2}}) {
    std::vector<float> x = signed_mix(n, 57, 0.01, 0.01);
    // NaNs of different bits, so that the first one's payload must come out.
    for (std::size_t k = 0; k < places.size(); ++k)
      if (places[k] < n) x[places[k]] = k % 2 ? -kNaN : std::numeric_limits<float>::signaling_NaN();
    expect_streamed_match(x);
  }
}

INSTANTIATE_TEST_SUITE_P(Sizes, StreamedReference,
                         ::testing::Values<std::size_t>(1, 2, 3, 64, 65, 1025, 65537,
                                                        (1u << 17) + 3),
                         ::testing::PrintToStringParamName());

TEST(StreamedReference, EmptyInput) {
  const auto never = [](std::size_t) -> float { throw std::logic_error("read"); };
  EXPECT_EQ(float_bits(streamed_maximum(0, never)), float_bits(-kInf));
  EXPECT_EQ(float_bits(streamed_minimum(0, never)), float_bits(kInf));
  EXPECT_THROW(streamed_argmax(0, never), std::invalid_argument);
}

}  // namespace
}  // namespace reduce
