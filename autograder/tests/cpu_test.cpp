// What needs no GPU: input generators, CPU references, error bounds and the stub message.
// These run everywhere, CI included.
#include <reduce/generators.hpp>
#include <reduce/not_implemented.hpp>
#include <reduce/reference.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

namespace reduce {
namespace {

// ---- stub message ----------------------------------------------------------------------------

TEST(NotImplemented, NamesTheLabFile) {
  EXPECT_EQ(lab_relative_path("/home/s/course/labs/04_sequential/sum.cu"), "labs/04_sequential/sum.cu");
  EXPECT_EQ(lab_relative_path("/tmp/submission/10_product/product.cu"), "labs/10_product/product.cu");
  EXPECT_EQ(lab_relative_path("sum.cu"), "labs/sum.cu");
  const NotImplemented e("/x/labs/01_atomic_naive/sum.cu");
  EXPECT_STREQ(e.what(), "not implemented: see labs/01_atomic_naive/sum.cu");
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
  std::vector<float> level = x;
  while (level.size() > 1) {
    std::vector<float> next((level.size() + 1) / 2);
    for (std::size_t i = 0; i < next.size(); ++i)
      next[i] = level[2 * i] + (2 * i + 1 < level.size() ? level[2 * i + 1] : 0.0f);
    level.swap(next);
  }
  EXPECT_EQ(level[0], expected);
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

// ---- references and error bounds -------------------------------------------------------------

TEST(Reference, SumsInDouble) {
  const std::vector<float> x = {1e8f, 1.0f, -1e8f, 0.5f};
  EXPECT_EQ(reference_sum(x), 1.5);  // a float accumulator would lose the 1.0
  EXPECT_EQ(absolute_sum(x), 2e8 + 1.5);
  EXPECT_EQ(reference_sum({}), 0.0);
}

TEST(Reference, SerialFloatSumStopsGrowingAtTwoToThe24) {
  const std::vector<float> ones((1u << 24) + 100, 1.0f);
  EXPECT_EQ(serial_float_sum(ones.data(), ones.size()), 16777216.0f);
  EXPECT_EQ(reference_sum(ones), 16777316.0);
}

TEST(Bounds, DepthsAndGamma) {
  EXPECT_EQ(serial_depth(0), 0u);
  EXPECT_EQ(serial_depth(10), 9u);
  EXPECT_EQ(pairwise_depth(1), 0u);
  EXPECT_EQ(pairwise_depth(1024), 10u);
  EXPECT_EQ(pairwise_depth(1025), 11u);
  EXPECT_EQ(tree_depth(1024), 1u + 10u);
  EXPECT_EQ(tree_depth(std::size_t{1} << 24), 1024u + 24u);
  EXPECT_DOUBLE_EQ(gamma(0), 0.0);
  EXPECT_DOUBLE_EQ(gamma(1), kFloatUnitRoundoff / (1 - kFloatUnitRoundoff));
  EXPECT_TRUE(std::isinf(gamma(std::size_t{1} << 24)));
}

// The bounds must hold for real float summations in the orders they describe, and be tight
// enough to notice an error the size of one element.
TEST(Bounds, HoldForSerialAndPairwiseFloatSums) {
  for (std::size_t n : {1000u, 100000u, 1000000u}) {
    const std::vector<float> x = uniform(n, n, 0.0f, 1.0f);
    const double exact = reference_sum(x), abs = absolute_sum(x);
    const double serial_error = std::fabs(serial_float_sum(x.data(), n) - exact);
    EXPECT_LE(serial_error, sum_error_bound(serial_depth(n), n, abs));
    std::vector<float> level = x;
    while (level.size() > 1) {
      std::vector<float> next((level.size() + 1) / 2);
      for (std::size_t i = 0; i < next.size(); ++i)
        next[i] = level[2 * i] + (2 * i + 1 < level.size() ? level[2 * i + 1] : 0.0f);
      level.swap(next);
    }
    const double pairwise_error = std::fabs(level[0] - exact);
    const double pairwise_bound = sum_error_bound(pairwise_depth(n), n, abs);
    EXPECT_LE(pairwise_error, pairwise_bound);
    if (n <= 100000) {
      EXPECT_LT(pairwise_bound, 0.5) << "a dropped element of about 0.5 must break the bound";
    }
  }
}

}  // namespace
}  // namespace reduce
