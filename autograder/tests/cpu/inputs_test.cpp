// The input generators of common/ (reduce/generators.hpp): exact-by-construction integers and
// the seeded distributions the tests and the benchmark draw from.
// These need no GPU: they run everywhere, CI included.
#include <reduce/generators.hpp>
#include <reduce/reference.hpp>

#include "float_trees.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <utility>
#include <vector>

namespace reduce {
namespace {

std::uint32_t float_bits(float v) {
  std::uint32_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

// ---- exact-by-construction inputs ------------------------------------------------------------

class ExactIntegers : public ::testing::TestWithParam<std::size_t> {};

TEST_P(ExactIntegers, AreIntegersWithinTheBudget) {
  const std::size_t n = GetParam();
  const std::vector<float> x = exact_integers(n, 7);
  ASSERT_EQ(x.size(), n);
  for (float v : x) ASSERT_EQ(v, std::trunc(v));
  EXPECT_LE(absolute_sum(x), kExactBudget);
  if (static_cast<double>(n) <= kExactBudget) {
    EXPECT_EQ(std::count(x.begin(), x.end(), 0.0f), 0) << "dense kinds must hold no zero";
  } else {
    EXPECT_GT(absolute_sum(x), 0.0);
  }
}

TEST_P(ExactIntegers, AnyOrderGivesTheSameFloatSum) {
  const std::size_t n = GetParam();
  std::vector<float> x = exact_integers(n, 11);
  const float expected = static_cast<float>(reference_sum(x));
  EXPECT_EQ(serial_float_sum(x.data(), n), expected);
  std::reverse(x.begin(), x.end());
  EXPECT_EQ(serial_float_sum(x.data(), n), expected);
  std::shuffle(x.begin(), x.end(), std::mt19937_64(3));
  EXPECT_EQ(serial_float_sum(x.data(), n), expected);
  // Pairwise order as a GPU tree would add.
  const float tree = pairwise_float_sum(x);
  EXPECT_EQ(tree, expected);
}

TEST_P(ExactIntegers, DroppingAnElementChangesTheSum) {
  const std::size_t n = GetParam();
  std::vector<float> x = exact_integers(n, 13);
  const double full = reference_sum(x);
  const auto nonzero = std::find_if(x.rbegin(), x.rend(), [](float v) { return v != 0.0f; });
  ASSERT_NE(nonzero, x.rend());
  *nonzero = 0.0f;
  EXPECT_NE(static_cast<float>(reference_sum(x)), static_cast<float>(full));
}

TEST_P(ExactIntegers, SumWithoutMaterializingMatchesTheElements) {
  const std::size_t n = GetParam();
  const std::vector<float> x = exact_integers(n, 21);
  EXPECT_EQ(exact_integers_sum(n, 21), reference_sum(x));
  for (std::size_t i : {std::size_t{0}, n / 2, n - 1}) EXPECT_EQ(exact_integer_at(n, 21, i), x[i]);
}

INSTANTIATE_TEST_SUITE_P(Sizes, ExactIntegers,
                         ::testing::Values<std::size_t>(1, 33, 1025, (1u << 21), (1u << 21) + 1,
                                                        (1u << 24), (1u << 24) + 1, (1u << 25) + 3),
                         ::testing::PrintToStringParamName());

TEST(Generators, SameSeedSameDataOtherSeedOtherData) {
  EXPECT_EQ(exact_integers(5000, 1), exact_integers(5000, 1));
  EXPECT_NE(exact_integers(5000, 1), exact_integers(5000, 2));
  EXPECT_EQ(wide_range(5000, 9), wide_range(5000, 9));
  EXPECT_NE(mix(1, 2), mix(2, 1));
}

TEST(Generators, SentinelHasOneNonZero) {
  const std::vector<float> x = sentinel(1000, 999, 5.0f);
  EXPECT_EQ(std::count(x.begin(), x.end(), 0.0f), 999);
  EXPECT_EQ(x[999], 5.0f);
}

TEST(Generators, UniformStaysInItsInterval) {
  const std::vector<float> x = uniform(100000, 5, -2.0f, 3.0f);
  EXPECT_GE(*std::min_element(x.begin(), x.end()), -2.0f);
  EXPECT_LT(*std::max_element(x.begin(), x.end()), 3.0f);
  const double mean = reference_sum(x) / x.size();
  EXPECT_NEAR(mean, 0.5, 0.02);
}

TEST(Generators, FloatBelowIsTheNextFloatTowardsMinusInfinity) {
  for (float x : {1.0f, -1.0f, 0.0f, -0.0f, 3.0f, 1e-40f, -1e30f, 0x1p-149f})
    EXPECT_EQ(float_below(x), std::nextafter(x, -INFINITY)) << x;
}

TEST(Generators, UniformAtIsElementIOfUniform) {
  const std::vector<float> x = uniform(4096, 17, -1.0f, 1.0f);
  for (std::size_t i = 0; i < x.size(); ++i) ASSERT_EQ(uniform_at(17, i, -1.0f, 1.0f), x[i]) << i;
}

// ---- per-index forms, which the GPU fills share with the host vectors ------------------------

class PerIndex : public ::testing::TestWithParam<std::size_t> {};

TEST_P(PerIndex, AllNegativeAtIsElementIOfAllNegative) {
  const std::size_t n = GetParam();
  const std::vector<float> x = all_negative(n, 41);
  for (std::size_t i = 0; i < n; ++i)
    ASSERT_EQ(float_bits(all_negative_at(41, i)), float_bits(x[i])) << i;
}

TEST_P(PerIndex, SignedMixAtIsElementIOfSignedMix) {
  const std::size_t n = GetParam();
  for (const auto& [zeros, infinities] :
       {std::pair{0.01, 0.0}, std::pair{0.001, 0.0}, std::pair{0.1, 0.01}, std::pair{0.0, 0.0}}) {
    const std::vector<float> x = signed_mix(n, 43, zeros, infinities);
    for (std::size_t i = 0; i < n; ++i) {
      ASSERT_EQ(float_bits(signed_mix_at(43, i, zeros, infinities)), float_bits(x[i])) << i;
      // The value written with std::ldexp and HUGE_VALF: the same bits as the one built from
      // its bits.
      const std::uint64_t kind = mix(43 ^ 0x5BD1E995ull, i), r = mix(43, i);
      const bool negative = (kind & 1) != 0;
      const double u = static_cast<double>(kind >> 11) * 0x1.0p-53;
      float direct = 0.0f;
      if (u < infinities) {
        direct = negative ? -HUGE_VALF : HUGE_VALF;
      } else if (u < infinities + zeros) {
        direct = negative ? -0.0f : 0.0f;
      } else {
        const int exponent = static_cast<int>((r >> 8) % 41) - 20;
        const float v =
            std::ldexp(1.0f + static_cast<float>((r >> 16) & 0xFFFF) / 65536.0f, exponent);
        direct = negative ? -v : v;
      }
      ASSERT_EQ(float_bits(x[i]), float_bits(direct)) << i;
    }
  }
}

TEST_P(PerIndex, ExactProductSignsAndScalesMakeExactProductFactors) {
  const std::size_t n = GetParam();
  for (std::uint64_t seed : {5u, 6u, 7u}) {
    const std::vector<float> x = exact_product_factors(n, seed);
    std::vector<float> rebuilt(n);
    for (std::size_t i = 0; i < n; ++i) rebuilt[i] = exact_product_sign_at(seed, i);
    const std::vector<PlacedFactor> scales = exact_product_scales(n, seed);
    EXPECT_LE(scales.size(), 2 * kProductExponentBudget);
    for (const PlacedFactor& f : scales) {
      ASSERT_LT(f.index, n);
      ASSERT_TRUE(std::fabs(f.value) == 2.0f || std::fabs(f.value) == 0.5f) << f.value;
      rebuilt[f.index] = f.value;
    }
    ASSERT_EQ(rebuilt, x);
    EXPECT_EQ(float_bits(exact_product_factors_product(n, seed)),
              float_bits(static_cast<float>(reference_product(x))))
        << "seed " << seed;
  }
}

INSTANTIATE_TEST_SUITE_P(Sizes, PerIndex,
                         ::testing::Values<std::size_t>(1, 2, 3, 33, 1025, 65537, (1u << 18) + 3),
                         ::testing::PrintToStringParamName());

TEST(Generators, ExactProductFactorsProductWithoutMaterializingAtLargeSizes) {
  for (std::size_t n : {(std::size_t{1} << 22) + 1, std::size_t{3} << 21}) {
    for (std::uint64_t seed : {11u, 12u}) {
      const std::vector<float> x = exact_product_factors(n, seed);
      EXPECT_EQ(float_bits(exact_product_factors_product(n, seed)),
                float_bits(static_cast<float>(reference_product(x))))
          << "n " << n << ", seed " << seed;
    }
  }
}

TEST(Generators, WideRangeSpansFortyBinades) {
  const std::vector<float> x = wide_range(100000, 5);
  int lo = 100, hi = -100, negative = 0;
  for (float v : x) {
    int e;
    std::frexp(v, &e);
    lo = std::min(lo, e - 1);
    hi = std::max(hi, e - 1);
    negative += v < 0;
  }
  EXPECT_EQ(lo, -20);
  EXPECT_EQ(hi, 20);
  EXPECT_NEAR(negative, 50000, 1000);
}

}  // namespace
}  // namespace reduce
