// The exact sum of common/ (reduce/exact_sum.hpp): cancellation, rounding once to nearest
// (ties to even), special values, order, and carries over many terms.
// These need no GPU: they run everywhere, CI included.
#include <reduce/exact_sum.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <random>
#include <vector>

namespace reduce {
namespace {

float bits_to_float(std::uint32_t bits) {
  float f = 0;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

float exact_float(std::initializer_list<float> x) {
  return correctly_rounded_sum(std::vector<float>(x));
}

TEST(ExactSum, CancellationLosesNothing) {
  EXPECT_EQ(exact_float({1e30f, 1.0f, -1e30f}), 1.0f);
  EXPECT_EQ(exact_float({3.0e38f, 3.0e38f, -3.0e38f, -3.0e38f, 0x1p-149f}), 0x1p-149f);
  // A float running sum of these gives 0 (1 is lost against 2^24 twice over).
  EXPECT_EQ(exact_float({0x1p24f, 1.0f, 1.0f, -0x1p24f}), 2.0f);
  ExactSum s;
  s.add(0x1p100f);
  s.add(0x1p-149f);
  EXPECT_EQ(s.to_double(), 0x1p100);  // 2^-249 below the leading bit: gone in a double too
  EXPECT_EQ(s.sign(), 1);
}

TEST(ExactSum, RoundsOnceToNearestTiesToEven) {
  EXPECT_EQ(exact_float({0x1p24f, 1.0f}), 0x1p24f);                          // tie: down to even
  EXPECT_EQ(exact_float({0x1p24f + 2.0f, 1.0f}), 0x1p24f + 4.0f);            // tie: up to even
  EXPECT_EQ(exact_float({0x1p24f, 1.0f, 0x1p-20f}), 0x1p24f + 2.0f);         // above the tie: up
  EXPECT_EQ(exact_float({0x1p24f, 1.0f, -0x1p-20f}), 0x1p24f);               // below the tie: down
  EXPECT_EQ(exact_float({0x1p-149f, 0x1p-149f, 0x1p-149f}), 3 * 0x1p-149f);  // subnormals
  // The largest float plus half its last step rounds to infinity (2^128), below it does not.
  const float max = std::numeric_limits<float>::max();
  EXPECT_EQ(exact_float({max, 0x1p103f}), std::numeric_limits<float>::infinity());
  EXPECT_EQ(exact_float({max, 0x1p102f}), max);
  EXPECT_EQ(exact_float({-max, -max}), -std::numeric_limits<float>::infinity());
  ExactSum big;
  big.add(max);
  big.add(max);
  EXPECT_EQ(big.to_double(), 2.0 * static_cast<double>(max));  // exact in a double
}

TEST(ExactSum, ZerosInfinitiesAndNaN) {
  EXPECT_TRUE(std::signbit(exact_float({-0.0f, -0.0f})));
  EXPECT_FALSE(std::signbit(exact_float({-0.0f, 0.0f})));
  EXPECT_FALSE(std::signbit(exact_float({1.0f, -1.0f})));
  EXPECT_FALSE(std::signbit(correctly_rounded_sum({})));
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(exact_float({1.0f, inf, -5.0f}), inf);
  EXPECT_EQ(exact_float({-inf, 3.0f}), -inf);
  EXPECT_TRUE(std::isnan(exact_float({inf, -inf})));
  EXPECT_TRUE(std::isnan(exact_float({1.0f, bits_to_float(0x7FC00001u)})));
}

TEST(ExactSum, OrderAndGroupingDoNotMatter) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> mantissa(-1.0f, 1.0f);
  std::uniform_int_distribution<int> exponent(-140, 120);
  std::vector<float> x(5000);
  for (float& v : x) v = std::ldexp(mantissa(rng), exponent(rng));
  const float forward = correctly_rounded_sum(x);
  std::shuffle(x.begin(), x.end(), rng);
  ExactSum halves, second;
  halves.add(x.data(), x.size() / 2);
  second.add(x.data() + x.size() / 2, x.size() - x.size() / 2);
  halves.add(second);
  EXPECT_EQ(halves.to_float(), forward);
  EXPECT_EQ(correctly_rounded_sum(x), forward);
}

TEST(ExactSum, MatchesQuadPrecisionWhereThatIsExact) {
  // Terms with exponents in [-30, 30]: every partial sum of 10^5 of them fits in 113 bits, so
  // __float128 adds them exactly and its conversion to float rounds once, as ExactSum must.
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> mantissa(-1.0f, 1.0f);
  std::uniform_int_distribution<int> exponent(-30, 30);
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<float> x(100000);
    __float128 quad = 0;
    ExactSum sum;
    for (float& v : x) {
      v = std::ldexp(mantissa(rng), exponent(rng));
      quad += v;
      sum.add(v);
    }
    EXPECT_EQ(sum.to_float(), static_cast<float>(quad)) << "trial " << trial;
    EXPECT_EQ(sum.to_double(), static_cast<double>(quad)) << "trial " << trial;
  }
}

TEST(ExactSum, ManyTermsCarryCorrectly) {
  // 2^30 + 5 additions pass the point where the limbs must pass their carries on, each adding
  // 0xFFFFFF00 to the same limb (mantissa 2^24 - 1 at bit 8 of it).
  const float x = std::ldexp(static_cast<float>(0xFFFFFF), -141);
  const std::size_t n = (std::size_t{1} << 30) + 5;
  ExactSum sum;
  for (std::size_t i = 0; i < n; ++i) sum.add(x);
  const __float128 exact = static_cast<__float128>(n) * x;  // 55 significant bits: exact
  EXPECT_EQ(sum.to_double(), static_cast<double>(exact));
  EXPECT_EQ(sum.to_float(), static_cast<float>(exact));
  ExactSum negative;
  for (int i = 0; i < 3; ++i) negative.add(-std::numeric_limits<float>::max());
  negative.add(sum);
  EXPECT_EQ(negative.sign(), -1);
  EXPECT_EQ(negative.to_float(), -std::numeric_limits<float>::infinity());
}

}  // namespace
}  // namespace reduce
