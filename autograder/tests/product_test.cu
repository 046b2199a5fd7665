// The product suite: run on every lab that implements reduce::product (lab 11).
//
// Exact by construction: factors +-1, +-2 and +-0.5 whose partial products all stay within
// 2^+-60 give the same, exact product in any order, so those results are compared bitwise, and
// a dropped or doubled factor changes them. Sentinels (one -2 among ones) find index bugs.
// Realistic factors near 1 are compared with a double reference within a derived bound: every
// one of the n - 1 roundings scales the whole product, whatever the order, so the worst case is
// gamma(n - 1) (reference.hpp, product_relative_error_bound). That bound is useless past 2^24
// factors, and a probabilistic one does not hold here (roundings of factors near 1 are biased:
// an H200 gave 3.3e-3 for 2^24 factors, above the lambda = 8 bound of 2e-3), so realistic
// inputs stop at 2^20; the exact tests cover every size. Overflow to inf and underflow to 0 are
// checked with inputs that overflow (or underflow) in every order, so the tree's own order does not
// matter. Inputs past 2^31 and 2^32 elements (in mapped memory, on any GPU) catch 32-bit indices
// and counts.
#include "gpu_test.hpp"
#include "mapped_input.hpp"

#include <reduce/device_buffer.cuh>
#include <reduce/generators.hpp>
#include <reduce/lab_entry_points.cuh>
#include <reduce/reference.hpp>

#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace reduce::testing {
namespace {

/// Every product test: skips without a GPU, else calls reduce::product through the contract
/// runner.
class ProductTest : public FloatLabTest {
 protected:
  ProductTest() : FloatLabTest(FloatLab{&product_workspace_bytes, &product}) {}
};

/// Bitwise comparison (NaN matches any NaN) with a message that explains the difference.
void expect_exact(float got, float want, std::size_t n) {
  if ((std::isnan(want) && std::isnan(got)) || bits(got) == bits(want)) return;
  std::string hint;
  if (std::isinf(want) && !std::isinf(got) && !std::isnan(got)) {
    hint =
        "This product overflows float in every order, so the result is +-inf: a finite "
        "result means factors were dropped.";
  } else if (want == 0.0f && got != 0.0f && !std::isnan(got)) {
    hint =
        "This product underflows in every order, so the result is +-0.0: anything else "
        "means factors were dropped.";
  } else if (std::isnan(got)) {
    hint =
        "NaN: the output (poisoned with 0xFF bytes) was never written, a poisoned workspace "
        "value was read, or 0 met inf.";
  } else if (got == 0.0f && want != 0.0f) {
    hint =
        "0: something multiplied by 0, typically a start value of 0 (the identity of a sum) "
        "instead of 1 (the identity of a product) in an accumulator or in the lanes beyond "
        "the block's warps.";
  } else if (got == want) {
    hint =
        "Right magnitude, wrong sign of zero: the sign of a product of zeros follows the "
        "signs of the factors.";
  } else if (want != 0.0f && std::fabs(got / want) == 2.0f) {
    hint = "Off by a factor 2: a factor +-2 was used twice, or a factor +-0.5 was dropped.";
  } else if (want != 0.0f && std::fabs(got / want) == 0.5f) {
    hint = "Off by a factor 1/2: a factor +-2 was dropped, or a +-0.5 was used twice.";
  } else if (got == -want) {
    hint = "Wrong sign: a factor -1 was dropped or used twice.";
  } else {
    hint =
        "Every partial product of this input is exact in float, so any order gives this "
        "result: factors were dropped, repeated or read out of range.";
  }
  ADD_FAILURE() << "n = " << n << ": got " << describe(got) << ", expected " << describe(want)
                << ". " << hint;
}

// ---- empty input -----------------------------------------------------------------------------

TEST_F(ProductTest, EmptyInputIsOne) {
  DeviceBuffer<float> in(1);
  in.fill_bytes(0x3F);  // a value that must not be read
  const float got = run(in.data(), 0);
  if (bits(got) != bits(1.0f)) {
    ADD_FAILURE() << "the product of no elements is 1, the identity of *; got " << describe(got);
  }
}

// ---- the semantics table ---------------------------------------------------------------------

/// One row of the semantics table.
using Case = TableCase<float>;

class ProductSemantics : public ProductTest, public ::testing::WithParamInterface<Case> {};

TEST_P(ProductSemantics, MatchesIeeeProduct) {
  const Case& c = GetParam();
  const float reference = static_cast<float>(reference_product(c.values));
  ASSERT_TRUE(bits(reference) == bits(c.expected) ||
              (std::isnan(c.expected) && std::isnan(reference)))
      << "the test table and the CPU reference disagree";
  expect_exact(run(c.values), c.expected, c.values.size());
}

INSTANTIATE_TEST_SUITE_P(Cases, ProductSemantics,
                         ::testing::Values(Case{"small_integers", {2.0f, 3.0f, 4.0f}, 24.0f},
                                           Case{"single", {-7.0f}, -7.0f},
                                           Case{"negative_count_odd", {-1.0f, -2.0f, -3.0f}, -6.0f},
                                           Case{"plus_zero", {5.0f, 0.0f, 3.0f}, 0.0f},
                                           Case{"minus_zero", {-1.0f, 0.0f}, -0.0f},
                                           Case{"zero_times_inf", {0.0f, kInf}, kNaN},
                                           Case{"minus_inf", {-2.0f, kInf, 3.0f}, -kInf},
                                           Case{"nan", {2.0f, kNaN, 0.5f}, kNaN}),
                         NameField());

// ---- exact by construction, over the size list -----------------------------------------------

class ProductExact : public ProductTest, public ::testing::WithParamInterface<std::size_t> {};

TEST_P(ProductExact, MatchesBitwise) {
  const std::size_t n = GetParam();
  // exact_product_factors(n, seed), written on the GPU: no host copy of 3 x 10^8 floats.
  const std::uint64_t seed = input_seed(n);
  const DeviceBuffer<float> in = exact_product_factors_on_device(n, seed);
  expect_exact(run(in.data(), n), exact_product_factors_product(n, seed), n);
}

INSTANTIATE_TEST_SUITE_P(Sizes, ProductExact,
                         ::testing::Values<std::size_t>(1, 2, 31, 32, 33, 255, 256, 257, 1023, 1024,
                                                        1025, 65535, 65536, 65537, (1u << 20) + 7,
                                                        1u << 24, 300000000),
                         ::testing::PrintToStringParamName());

// ---- one factor that is not 1, at the places where index bugs live ---------------------------

class ProductSentinel : public ProductTest, public ::testing::WithParamInterface<std::size_t> {};

TEST_P(ProductSentinel, FindsTheOnlyFactorThatIsNotOne) {
  const std::size_t n = GetParam();
  std::vector<Change> sentinels;
  for (std::size_t p : sentinel_positions(n))
    if (p < n) sentinels.push_back({p, -2.0f});
  const std::vector<float> got = run_variants(std::vector<float>(n, 1.0f), sentinels);
  for (std::size_t k = 0; k < sentinels.size(); ++k) {
    SCOPED_TRACE("-2 at index " + std::to_string(sentinels[k].at) + " of " + std::to_string(n) +
                 ", ones elsewhere (1: the -2 was never read; 4: it was read twice)");
    expect_exact(got[k], -2.0f, n);
  }
}

INSTANTIATE_TEST_SUITE_P(Sizes, ProductSentinel,
                         ::testing::Values<std::size_t>(1025, 65537, (1u << 20) + 7),
                         ::testing::PrintToStringParamName());

// ---- realistic factors near 1, within the derived bound --------------------------------------

class ProductRealistic : public ProductTest, public ::testing::WithParamInterface<std::size_t> {};

TEST_P(ProductRealistic, WithinErrorBound) {
  const std::size_t n = GetParam();
  // 1 +- 2^-9: the product of 2^24 such factors stays within e^+-30, far inside float range.
  const std::vector<float> host = uniform(n, input_seed(n), 1.0f - 0x1p-9f, 1.0f + 0x1p-9f);
  const double exact = reference_product(host);
  const double bound = product_relative_error_bound(n);
  const float got = run(host);
  const double relative = std::fabs(static_cast<double>(got) - exact) / std::fabs(exact);
  EXPECT_LE(relative, bound) << "n = " << n << ": got " << describe(got) << ", reference " << exact
                             << ", relative error " << relative << " above the bound " << bound
                             << " (gamma(n - 1) + the reference's error).";
}

INSTANTIATE_TEST_SUITE_P(Sizes, ProductRealistic,
                         ::testing::Values<std::size_t>(1000, 65537, (1u << 20) + 7),
                         ::testing::PrintToStringParamName());

// ---- overflow and underflow ------------------------------------------------------------------

TEST_F(ProductTest, OverflowsToInfinity) {
  {
    SCOPED_TRACE("200 factors 2.0: 2^200 overflows in every order");
    expect_exact(run(std::vector<float>(200, 2.0f)), kInf, 200);
  }
  {
    SCOPED_TRACE("199 factors 2.0 and one -1: -inf");
    std::vector<float> host(200, 2.0f);
    host[77] = -1.0f;
    expect_exact(run(host), -kInf, 200);
  }
  {
    SCOPED_TRACE("2^20 + 7 factors 1.001: overflows in every order");
    const std::size_t n = (1u << 20) + 7;
    DeviceBuffer<float> in = constant(n, 1.001f);
    expect_exact(run(in.data(), n), kInf, n);
  }
}

TEST_F(ProductTest, UnderflowsToZero) {
  {
    SCOPED_TRACE("200 factors 0.5: 2^-200 underflows to +0.0 in every order");
    expect_exact(run(std::vector<float>(200, 0.5f)), 0.0f, 200);
  }
  {
    SCOPED_TRACE("199 factors 0.5 and one -1: -0.0");
    std::vector<float> host(200, 0.5f);
    host[150] = -1.0f;
    expect_exact(run(host), -0.0f, 200);
  }
  {
    // Halving is exact down to the smallest subnormal, 2^-149, and 2^-150 rounds to 0 (ties to
    // even), so every order ends at +0.0. (Factors like 0.999 would not do: the smallest
    // subnormal times 0.999 rounds back to the smallest subnormal, so a serial loop gets stuck
    // at 2^-149 while a tree reaches 0.)
    SCOPED_TRACE("2^20 + 7 factors 0.5: underflows in every order");
    const std::size_t n = (1u << 20) + 7;
    DeviceBuffer<float> in = constant(n, 0.5f);
    expect_exact(run(in.data(), n), 0.0f, n);
  }
}

// ---- no cached or hard-coded answers, no writes to the input ---------------------------------

TEST_F(ProductTest, EveryCallComputesAfresh) {
  const std::size_t n = (1u << 20) + 7;
  const RotatingInputs inputs(
      3, [n](std::uint64_t k) { return exact_product_factors(n, input_seed(31, k)); });
  for (int call : kRotation) {
    SCOPED_TRACE("input " + std::to_string(call));
    expect_exact(run(inputs.device(call), n),
                 static_cast<float>(reference_product(inputs.host(call))), n);
  }
  inputs.expect_unmodified();
}

// ---- beyond 2^31 and 2^32 elements, in a few hundred MiB -------------------------------------

/// The body of AboveInt32Range and AboveUint32Range: \p width's input in mapped memory, ones
/// (the product 1), then powers of two around 2^31 (0.5 at 2^31 - 1, 2 at 2^31, -2 at 2^31 + 5),
/// 2 and -2 on both sides of 2^32 where n passes it, and 0.25 at the end, in tiles of their own:
/// the product is exact in any order, and compared bitwise.
void expect_product_past(ContractRunner& runner, const FloatLab& lab, const IndexWidth& width) {
  REDUCE_REQUIRE_MAPPED_INPUT();
  const std::size_t two31 = kPastInt32.boundary, two32 = kPastUint32.boundary;
  const std::size_t n = width.n, boundary = width.boundary;
  std::vector<std::pair<std::size_t, float>> factors = {
      {two31 - 1, 0.5f}, {two31, 2.0f}, {two31 + 5, -2.0f}};
  if (width.past_unsigned()) factors.insert(factors.end(), {{two32 - 1, 2.0f}, {two32, -2.0f}});
  factors.emplace_back(n - 1, 0.25f);
  std::vector<std::size_t> own;
  for (const auto& [at, value] : factors) own.push_back(at);
  MappedInput in(n, [](std::size_t) { return 1.0f; }, own);
  const std::string about = "n = " + std::string(width.n_name) + ": " + width.why;
  {
    SCOPED_TRACE("ones only, " + about);
    expect_exact(runner.run(lab, in.data(), n), 1.0f, n);
  }
  for (const auto& [at, value] : factors) in.set(at, value);
  // The product of the factors below \p end: of elements [0, end), all others being ones.
  const auto product_below = [&factors](std::size_t end) {
    double product = 1.0;
    for (const auto& [at, value] : factors) product *= at < end ? value : 1.0;
    return static_cast<float>(product);
  };
  const float want = product_below(n);
  // What 32 bits get (n < 2 boundary): an index that wraps at the boundary reads element
  // i mod boundary for i, ones where the factors past it are; a count cut there multiplies the
  // first n mod boundary elements. Neither may equal the answer.
  const float wrapped = product_below(boundary) * product_below(n % boundary);
  const float counted = product_below(n % boundary);
  ASSERT_NE(bits(wrapped), bits(want));
  ASSERT_NE(bits(counted), bits(want));
  SCOPED_TRACE("ones with powers of two around 2^31" +
               std::string(width.past_unsigned() ? " and 2^32" : "") + " and 0.25 at n - 1, " +
               about + ". " + describe(wrapped) + " means an index that wraps at " +
               width.boundary_name + " (" + width.index_type + "), " + describe(counted) +
               " a count cut to 32 bits");
  expect_exact(runner.run(lab, in.data(), n), want, n);
}

TEST_F(ProductTest, AboveInt32Range) {
  expect_product_past(runner(), lab(), kPastInt32);
}

TEST_F(ProductTest, AboveUint32Range) {
  expect_product_past(runner(), lab(), kPastUint32);
}

}  // namespace
}  // namespace reduce::testing
