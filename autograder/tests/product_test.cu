// The product suite: linked with every lab that implements reduce::product (lab 11).
//
// Exact by construction: factors +-1, +-2 and +-0.5 whose partial products all stay within
// 2^+-60 give the same, exact product in any order, so those results are compared bitwise, and
// a dropped or doubled factor changes them. Sentinels (one -2 among ones) find index bugs.
// Realistic factors near 1 are compared with a double reference within a derived bound: every
// one of the n - 1 roundings scales the whole product, whatever the order, so the worst case is
// gamma(n - 1) (reference.hpp, product_relative_error_bound). That bound is useless past 2^24
// factors, and a probabilistic one does not hold here (roundings of factors near 1 are biased:
// an H200 gave 3.3e-3 for 2^24 factors, above the lambda = 8 bound of 2e-3), so realistic
// inputs stop at 2^20; the exact tests cover every size. Overflow to inf and underflow to 0 are checked with inputs that
// overflow (or underflow) in every order, so the tree's own order does not matter.
#include "gpu_test.hpp"

#include <reduce/device_buffer.cuh>
#include <reduce/generators.hpp>
#include <reduce/lab.cuh>
#include <reduce/reference.hpp>

#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <string>
#include <vector>

namespace reduce::testing {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
const float kNaN = std::numeric_limits<float>::quiet_NaN();

/// A float with its bit pattern, so that -0 and +0 are told apart.
std::string describe(float v) {
  char text[64];
  std::snprintf(text, sizeof text, "%.9g (bits 0x%08X)", static_cast<double>(v), bits(v));
  return text;
}

/// Calls the lab's product the way the grader does: on its own stream, output and workspace
/// poisoned with 0xFF bytes (a NaN), and a guard float after the output that must stay intact.
class ProductRunner {
 public:
  float operator()(const float* in, std::size_t n) {
    out_.fill_bytes(kPoisonByte, stream_.get());
    DeviceBuffer<unsigned char> workspace(product_workspace_bytes(n));
    workspace.fill_bytes(kPoisonByte, stream_.get());
    product(in, n, out_.data(), Workspace{workspace.data(), workspace.bytes()}, stream_.get());
    stream_.synchronize();
    const std::vector<float> host = out_.to_host();
    EXPECT_EQ(bits(host[1]), 0xFFFFFFFFu) << "the lab wrote past its one-float output";
    return host[0];
  }

  /// Copies \p host to the device and runs the lab on it.
  float operator()(const std::vector<float>& host) {
    const DeviceBuffer<float> in(host);
    return (*this)(in.data(), host.size());
  }

 private:
  Stream stream_;
  DeviceBuffer<float> out_{2};
};

class ProductTest : public ::testing::Test {
 protected:
  void SetUp() override {
    REDUCE_REQUIRE_GPU();
    run_ = std::make_unique<ProductRunner>();
  }
  std::unique_ptr<ProductRunner> run_;
};

/// Bitwise comparison (NaN matches any NaN) with a message that explains the difference.
void expect_exact(float got, float want, std::size_t n) {
  if ((std::isnan(want) && std::isnan(got)) || bits(got) == bits(want)) return;
  std::string hint;
  if (std::isinf(want) && !std::isinf(got) && !std::isnan(got)) {
    hint = "This product overflows float in every order, so the result is +-inf: a finite "
           "result means factors were dropped.";
  } else if (want == 0.0f && got != 0.0f && !std::isnan(got)) {
    hint = "This product underflows in every order, so the result is +-0.0: anything else "
           "means factors were dropped.";
  } else if (std::isnan(got)) {
    hint = "NaN: the output (poisoned with 0xFF bytes) was never written, a poisoned workspace "
           "value was read, or 0 met inf.";
  } else if (got == 0.0f && want != 0.0f) {
    hint = "0: something multiplied by 0, typically a start value of 0 (the identity of a sum) "
           "instead of 1 (the identity of a product) in an accumulator or in the lanes beyond "
           "the block's warps.";
  } else if (got == want) {
    hint = "Right magnitude, wrong sign of zero: the sign of a product of zeros follows the "
           "signs of the factors.";
  } else if (want != 0.0f && std::fabs(got / want) == 2.0f) {
    hint = "Off by a factor 2: a factor +-2 was used twice, or a factor +-0.5 was dropped.";
  } else if (want != 0.0f && std::fabs(got / want) == 0.5f) {
    hint = "Off by a factor 1/2: a factor +-2 was dropped, or a +-0.5 was used twice.";
  } else if (got == -want) {
    hint = "Wrong sign: a factor -1 was dropped or used twice.";
  } else {
    hint = "Every partial product of this input is exact in float, so any order gives this "
           "result: factors were dropped, repeated or read out of range.";
  }
  ADD_FAILURE() << "n = " << n << ": got " << describe(got) << ", expected " << describe(want)
                << ". " << hint;
}

/// x[i] = value for every i.
__global__ void fill(float* x, std::size_t n, float value) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    x[i] = value;
  }
}

/// A device array of \p n copies of \p value.
DeviceBuffer<float> constant(std::size_t n, float value) {
  DeviceBuffer<float> x(n);
  if (n > 0) {
    fill<<<1024, 256>>>(x.data(), n, value);
    REDUCE_CUDA_CHECK_LAUNCH();
    REDUCE_CUDA_CHECK(cudaDeviceSynchronize());
  }
  return x;
}

// ---- empty input -----------------------------------------------------------------------------

TEST_F(ProductTest, EmptyInputIsOne) {
  DeviceBuffer<float> in(1);
  in.fill_bytes(0x3F);  // a value that must not be read
  const float got = (*run_)(in.data(), 0);
  if (bits(got) != bits(1.0f)) {
    ADD_FAILURE() << "the product of no elements is 1, the identity of *; got " << describe(got);
  }
}

// ---- the semantics table ---------------------------------------------------------------------

struct Case {
  const char* name;
  std::vector<float> values;
  float expected;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

class ProductSemantics : public ProductTest, public ::testing::WithParamInterface<Case> {};

TEST_P(ProductSemantics, MatchesIeeeProduct) {
  const Case& c = GetParam();
  const float reference = static_cast<float>(reference_product(c.values));
  ASSERT_TRUE(bits(reference) == bits(c.expected) ||
              (std::isnan(c.expected) && std::isnan(reference)))
      << "the test table and the CPU reference disagree";
  expect_exact((*run_)(c.values), c.expected, c.values.size());
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ProductSemantics,
    ::testing::Values(Case{"small_integers", {2.0f, 3.0f, 4.0f}, 24.0f},
                      Case{"single", {-7.0f}, -7.0f},
                      Case{"negative_count_odd", {-1.0f, -2.0f, -3.0f}, -6.0f},
                      Case{"plus_zero", {5.0f, 0.0f, 3.0f}, 0.0f},
                      Case{"minus_zero", {-1.0f, 0.0f}, -0.0f},
                      Case{"zero_times_inf", {0.0f, kInf}, kNaN},
                      Case{"minus_inf", {-2.0f, kInf, 3.0f}, -kInf},
                      Case{"nan", {2.0f, kNaN, 0.5f}, kNaN}),
    [](const ::testing::TestParamInfo<Case>& info) { return std::string(info.param.name); });

// ---- exact by construction, over the size list -----------------------------------------------

class ProductExact : public ProductTest, public ::testing::WithParamInterface<std::size_t> {};

TEST_P(ProductExact, MatchesBitwise) {
  const std::size_t n = GetParam();
  const std::vector<float> host = exact_product_factors(n, test_seed() + n);
  expect_exact((*run_)(host), static_cast<float>(reference_product(host)), n);
}

INSTANTIATE_TEST_SUITE_P(Sizes, ProductExact,
                         ::testing::Values<std::size_t>(1, 2, 31, 32, 33, 255, 256, 257, 1023,
                                                        1024, 1025, 65535, 65536, 65537,
                                                        (1u << 20) + 7, 1u << 24, 300000000),
                         ::testing::PrintToStringParamName());

// ---- one factor that is not 1, at the places where index bugs live ---------------------------

class ProductSentinel : public ProductTest, public ::testing::WithParamInterface<std::size_t> {};

TEST_P(ProductSentinel, FindsTheOnlyFactorThatIsNotOne) {
  const std::size_t n = GetParam();
  const std::vector<std::size_t> positions = {0,    1,    31,   32,    33,    255,   256,
                                              511,  512,  1023, 1024,  2047,  2048,  n / 2,
                                              n - 33, n - 32, n - 2, n - 1};
  DeviceBuffer<float> in = constant(n, 1.0f);
  for (std::size_t p : positions) {
    if (p >= n) continue;
    SCOPED_TRACE("-2 at index " + std::to_string(p) + " of " + std::to_string(n) +
                 ", ones elsewhere (1: the -2 was never read; 4: it was read twice)");
    set_element(in.data(), p, -2.0f);
    expect_exact((*run_)(in.data(), n), -2.0f, n);
    set_element(in.data(), p, 1.0f);
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
  const std::vector<float> host = uniform(n, test_seed() ^ n, 1.0f - 0x1p-9f, 1.0f + 0x1p-9f);
  const double exact = reference_product(host);
  const double bound = product_relative_error_bound(n);
  const float got = (*run_)(host);
  const double relative = std::fabs(static_cast<double>(got) - exact) / std::fabs(exact);
  EXPECT_LE(relative, bound)
      << "n = " << n << ": got " << describe(got) << ", reference " << exact
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
    expect_exact((*run_)(std::vector<float>(200, 2.0f)), kInf, 200);
  }
  {
    SCOPED_TRACE("199 factors 2.0 and one -1: -inf");
    std::vector<float> host(200, 2.0f);
    host[77] = -1.0f;
    expect_exact((*run_)(host), -kInf, 200);
  }
  {
    SCOPED_TRACE("2^20 + 7 factors 1.001: overflows in every order");
    const std::size_t n = (1u << 20) + 7;
    DeviceBuffer<float> in = constant(n, 1.001f);
    expect_exact((*run_)(in.data(), n), kInf, n);
  }
}

TEST_F(ProductTest, UnderflowsToZero) {
  {
    SCOPED_TRACE("200 factors 0.5: 2^-200 underflows to +0.0 in every order");
    expect_exact((*run_)(std::vector<float>(200, 0.5f)), 0.0f, 200);
  }
  {
    SCOPED_TRACE("199 factors 0.5 and one -1: -0.0");
    std::vector<float> host(200, 0.5f);
    host[150] = -1.0f;
    expect_exact((*run_)(host), -0.0f, 200);
  }
  {
    // Halving is exact down to the smallest subnormal, 2^-149, and 2^-150 rounds to 0 (ties to
    // even), so every order ends at +0.0. (Factors like 0.999 would not do: the smallest
    // subnormal times 0.999 rounds back to the smallest subnormal, so a serial loop gets stuck
    // at 2^-149 while a tree reaches 0.)
    SCOPED_TRACE("2^20 + 7 factors 0.5: underflows in every order");
    const std::size_t n = (1u << 20) + 7;
    DeviceBuffer<float> in = constant(n, 0.5f);
    expect_exact((*run_)(in.data(), n), 0.0f, n);
  }
}

// ---- no cached or hard-coded answers, no writes to the input ---------------------------------

TEST_F(ProductTest, EveryCallComputesAfresh) {
  const std::size_t n = (1u << 20) + 7;
  std::vector<std::vector<float>> hosts;
  std::vector<DeviceBuffer<float>> inputs;
  for (std::uint64_t k = 0; k < 3; ++k) {
    hosts.push_back(exact_product_factors(n, test_seed() * 31 + k));
    inputs.emplace_back(hosts.back());
  }
  for (int call : {0, 1, 2, 0, 2, 1, 1}) {
    SCOPED_TRACE("input " + std::to_string(call));
    expect_exact((*run_)(inputs[call].data(), n),
                 static_cast<float>(reference_product(hosts[call])), n);
  }
  for (int k = 0; k < 3; ++k) {
    EXPECT_TRUE(inputs[k].to_host() == hosts[k]) << "the lab modified its input " << k;
  }
}

// ---- beyond 2^31 elements --------------------------------------------------------------------

TEST_F(ProductTest, AboveInt32Range) {
  const std::size_t n = (std::size_t{1} << 31) + (1u << 20) + 3;
  if (!enough_device_memory(n * sizeof(float) + product_workspace_bytes(n))) {
    GTEST_SKIP() << "needs " << (n * sizeof(float) >> 20) << " MiB of free device memory";
  }
  DeviceBuffer<float> in = constant(n, 1.0f);
  {
    SCOPED_TRACE("ones only");
    expect_exact((*run_)(in.data(), n), 1.0f, n);
  }
  {
    SCOPED_TRACE("-2 at index 2^31 + 5 and 0.25 at the last index: -0.5");
    set_element(in.data(), (std::size_t{1} << 31) + 5, -2.0f);
    set_element(in.data(), n - 1, 0.25f);
    expect_exact((*run_)(in.data(), n), -0.5f, n);
  }
}

}  // namespace
}  // namespace reduce::testing
