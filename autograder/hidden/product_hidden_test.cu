// Hidden tests of the product contract: run by the grader (course_graded_test) on every lab that
// implements reduce::product (lab 11), never shipped in the student release. They check what the
// public suite (autograder/tests/product_test.cu) leaves to chance: prime and 3 x 2^k +- 1 sizes
// with a factor that matters in the tail, odd factors (3, 5, 7) whose product is exact but not a
// power of two (a product taken as exp(sum of logs) is not), the exact edges of float's range
// (2^127 and FLT_MAX stay finite, one factor 2 more overflows; 2^-149 stays, one factor 1/2 more is
// zero), 0 meeting inf across the whole input, windows of one allocation with 0 and inf next to
// them, and factors that move and change while the buffer's ends stay the same.
//
// Every expected value is exact in any order of multiplication: every partial product of every
// input below is representable (or the result is +-inf, +-0 or NaN in every order), and the
// expected value is checked against reference_product() first.
#include "gpu_test.hpp"

#include <reduce/device_buffer.cuh>
#include <reduce/generators.hpp>
#include <reduce/lab_entry_points.cuh>
#include <reduce/reference.hpp>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace reduce::testing {
namespace {

/// Every hidden test: a GPU, and reduce::product through the contract runner.
class HiddenProduct : public FloatLabTest {
 protected:
  HiddenProduct() : FloatLabTest(FloatLab{&product_workspace_bytes, &product}) {}

  /// Runs the lab on \p host and compares with \p want, which the CPU reference must confirm.
  void expect_product(const std::vector<float>& host, float want, const std::string& what) {
    expect_bits(static_cast<float>(reference_product(host)), want, "the test's own table");
    expect_bits(run(host), want, what + ", n = " + std::to_string(host.size()));
  }
};

/// \p n ones with \p count copies of \p factor spread evenly, the last at index n - 1.
std::vector<float> spread(std::size_t n, std::size_t count, float factor) {
  std::vector<float> x(n, 1.0f);
  for (std::size_t k = 0; k < count; ++k) x[n - 1 - k * ((n - 1) / count)] = factor;
  return x;
}

// ---- prime and 3 x 2^k +- 1 sizes
// ----------------------------------------------------------------

class HiddenProductSizes : public HiddenProduct,
                           public ::testing::WithParamInterface<std::size_t> {};

TEST_P(HiddenProductSizes, ExactWithATailFactor) {
  const std::size_t n = GetParam();
  std::vector<float> host = exact_product_factors(n, input_seed(n + 0x9D));
  host[n - 1] = -2.0f;  // a dropped tail changes the magnitude, not only (perhaps) the sign
  expect_product(host, static_cast<float>(reference_product(host)),
                 "exact factors ending in -2 (|result| halved: the tail was dropped)");
}

INSTANTIATE_TEST_SUITE_P(Sizes, HiddenProductSizes,
                         ::testing::Values<std::size_t>(3, 127, 3071, 3073, 65521, 196607, 196609,
                                                        999983, 3145727, 3145729, 16777213),
                         ::testing::PrintToStringParamName());

// ---- odd factors: exact, but not powers of two -----------------------------------------------

TEST_F(HiddenProduct, OddFactorsAtSeededPlaces) {
  // 3^6 * 5^3 * 7^2 = 4465125 < 2^24, times powers of two: every partial product has an odd part
  // below 2^24 and a modest exponent, so it is exact in float in any order. log2f(3) is not
  // exact: a product computed as exp2(sum of log2|x|) misses by a few ulps.
  const std::vector<float> factors = {3, 3, 3, 3, 3, 3, -5, -5, -5, 7, 7, 2, 2, 2, 0.25f, -1};
  for (std::size_t n : {std::size_t{1000}, std::size_t{999983}}) {
    std::vector<float> host(n, 1.0f);
    for (std::size_t k = 0; k < factors.size(); ++k) {
      host[k == 0 ? n - 1 : mix(input_seed(0x0DD), k) % (n - 1)] *= factors[k];
    }
    expect_product(host, 4465125.0f * 2.0f, "3^6 (-5)^3 7^2 2^3 4^-1 (-1) at seeded places");
  }
}

// ---- the edges of float's range, exactly -------------------------------------------------------

TEST_F(HiddenProduct, EdgesOfTheFloatRange) {
  const std::size_t n = 3 * (std::size_t{1} << 16) + 1;
  const float max = std::numeric_limits<float>::max();
  const float smallest = std::numeric_limits<float>::denorm_min();
  {
    std::vector<float> host = spread(n, 127, 2.0f);
    expect_product(host, 0x1p127f, "127 factors 2: 2^127, finite");
    host[n / 2] = 2.0f - 0x1p-23f;
    expect_product(host, max, "127 factors 2 and one 2 - 2^-23: exactly FLT_MAX");
    host[n / 3] = 2.0f;
    expect_product(host, kInf, "the same and one more 2: overflows in every order");
  }
  expect_product(spread(n, 129, -2.0f), -kInf, "129 factors -2: -inf (an odd count)");
  expect_product(spread(n, 149, 0.5f), smallest, "149 factors 1/2: 2^-149, the smallest subnormal");
  expect_product(spread(n, 150, 0.5f), 0.0f, "150 factors 1/2: 2^-150 rounds to +0 in any order");
  expect_product(spread(n, 151, -0.5f), -0.0f, "151 factors -1/2: -0 (an odd count)");
}

// ---- 0 meets inf across the input ------------------------------------------------------------

TEST_F(HiddenProduct, ZeroMeetsInfinity) {
  const std::size_t n = 3 * (std::size_t{1} << 20) + 1;
  std::vector<float> host(n, 1.0f);
  host[3] = kInf;
  expect_product(host, kInf, "+inf at index 3, ones elsewhere");
  host[n - 1] = -0.0f;
  expect_product(host, kNaN, "+inf at index 3 and -0 at the last index: inf * 0 is NaN");
  host[3] = 1.0f;
  expect_product(host, -0.0f, "-0 at the last index, ones elsewhere");
}

// ---- windows of one allocation, with 0 before and inf after ----------------------------------

TEST_F(HiddenProduct, WindowsOfOneAllocation) {
  // Reading the float before a window multiplies by 0, the float after by inf: the result
  // becomes 0, inf or NaN.
  const std::vector<float> host = exact_product_factors(kWindowSpan, input_seed(0x3D0));
  DeviceBuffer<float> in(host);
  for_each_window(host, in, std::pair{0.0f, kInf}, [&](const Window& w) {
    expect_bits(run(w.device, w.n), static_cast<float>(reference_product(w.host)),
                "exact factors (0, inf or NaN: a float outside the window was read)");
  });
}

// ---- factors that move and change while the ends stay the same ------------------------------

TEST_F(HiddenProduct, MovingFactorsWithNewValues) {
  const std::size_t n = 3 * (std::size_t{1} << 20) + 1;
  DeviceBuffer<float> in = constant(n, 1.0f);
  std::size_t previous = 0;
  for (int k = 0; k < 16; ++k) {
    // +-2^e with e in -5..5 in a scrambled order: neither the last answer nor a running product
    // of all calls is right.
    const float value = std::ldexp(k % 2 == 1 ? -1.0f : 1.0f, (5 * k) % 11 - 5);
    const std::size_t p = 64 + mix(input_seed(0x3D1), k) % (n - 128);
    if (k > 0) set_element(in.data(), previous, 1.0f);
    set_element(in.data(), p, value);
    expect_bits(run(in.data(), n), value,
                "round " + std::to_string(k) + ": " + describe(value) + " at index " +
                    std::to_string(p) +
                    ", ones elsewhere, the same pointer, n and ends as every "
                    "other round");
    previous = p;
  }
}

}  // namespace
}  // namespace reduce::testing
