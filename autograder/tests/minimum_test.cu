// The minimum suite: linked with every lab that implements reduce::minimum (lab 10). The mirror
// image of maximum_test.cu: every check is bitwise against the IEEE 754-2019 minimum (NaN if
// any element is NaN, -0.0 below +0.0, +inf for no elements). All-positive arrays catch a
// reduction that starts from 0 instead of +inf; NaN at the first, middle and last place, signed
// zeros, the smallest element at warp and block boundaries and in the tail, rotating inputs
// and an input longer than 2^31 catch the rest.
#include "gpu_test.hpp"

#include <reduce/device_buffer.cuh>
#include <reduce/generators.hpp>
#include <reduce/lab.cuh>
#include <reduce/reference.hpp>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

namespace reduce::testing {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
const float kNaN = std::numeric_limits<float>::quiet_NaN();

/// A float with its bit pattern, so that -0 and +0 (and NaN payloads) are told apart.
std::string describe(float v) {
  char text[64];
  std::snprintf(text, sizeof text, "%.9g (bits 0x%08X)", static_cast<double>(v), bits(v));
  return text;
}

/// A float built from its bit pattern (e.g. a NaN with the sign bit set).
float from_bits(std::uint32_t b) {
  float v;
  std::memcpy(&v, &b, sizeof v);
  return v;
}

/// -x for every element: turns the maximum suite's inputs into the minimum's.
std::vector<float> negated(std::vector<float> x) {
  for (float& v : x) v = -v;
  return x;
}

/// Strictly positive values (the mirror of all_negative()).
std::vector<float> all_positive(std::size_t n, std::uint64_t seed) {
  return negated(all_negative(n, seed));
}

/// Calls the lab's minimum the way the grader does: on its own stream, output and workspace
/// poisoned with 0xFF bytes (a NaN), and a guard float after the output that must stay intact.
class MinRunner {
 public:
  float operator()(const float* in, std::size_t n) {
    out_.fill_bytes(kPoisonByte, stream_.get());
    DeviceBuffer<unsigned char> workspace(minimum_workspace_bytes(n));
    workspace.fill_bytes(kPoisonByte, stream_.get());
    minimum(in, n, out_.data(), Workspace{workspace.data(), workspace.bytes()}, stream_.get());
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

class MinimumTest : public ::testing::Test {
 protected:
  void SetUp() override {
    REDUCE_REQUIRE_GPU();
    run_ = std::make_unique<MinRunner>();
  }
  std::unique_ptr<MinRunner> run_;
};

/// What a wrong result most likely means, for the message a student sees.
std::string diagnose(float got, float want) {
  if (std::isnan(want) && !std::isnan(got)) {
    return "A NaN anywhere must make the minimum NaN (IEEE 754-2019, numpy, torch). A min "
           "written as `a < b ? a : b` or fminf() drops a NaN whenever it is the second operand.";
  }
  if (!std::isnan(want) && std::isnan(got)) {
    return "NaN with no NaN in the input: the output (poisoned with 0xFF bytes, a NaN) was "
           "never written, or a poisoned workspace value was read.";
  }
  if (got == 0.0f && want > 0.0f) {
    return "Every element is positive: a result of 0 means the reduction started from 0 "
           "instead of +inf (the identity of min): in an accumulator or in the lanes beyond "
           "the block's warps.";
  }
  if (got == want && bits(got) != bits(want)) {
    return "Right value, wrong zero: -0.0 is smaller than +0.0, so the minimum of {+0.0, -0.0} "
           "is -0.0 in any order. A min that keeps the first of two equal values returns "
           "whichever zero it met first.";
  }
  if (got > want) {
    return "Too large: the smallest element was never read (check the index arithmetic, the "
           "tail of the grid-stride loop, and the partials of the second pass).";
  }
  return "Smaller than every element: the result comes from memory outside the input.";
}

/// Bitwise comparison (NaN matches any NaN) with a message that explains the difference.
void expect_min(float got, float want, std::size_t n) {
  if ((std::isnan(want) && std::isnan(got)) || bits(got) == bits(want)) return;
  ADD_FAILURE() << "n = " << n << ": got " << describe(got) << ", expected " << describe(want)
                << ". " << diagnose(got, want);
}

/// Overwrites one element of a device array.
void set_element(float* device, std::size_t i, float v) {
  REDUCE_CUDA_CHECK(cudaMemcpy(device + i, &v, sizeof v, cudaMemcpyHostToDevice));
}

const std::vector<std::size_t> kSizes = {1,     2,     31,    32,    33,          255,
                                         256,   257,   1023,  1024,  1025,        65535,
                                         65536, 65537, (1u << 20) + 7, 1u << 24, 300000000};

// ---- empty input -----------------------------------------------------------------------------

TEST_F(MinimumTest, EmptyInputIsPositiveInfinity) {
  DeviceBuffer<float> in(1);
  in.fill_bytes(0x3F);  // a value that must not be read
  const float got = (*run_)(in.data(), 0);
  if (bits(got) != bits(kInf)) {
    ADD_FAILURE() << "the minimum of no elements is +inf, the identity of min; got "
                  << describe(got)
                  << (got == 0.0f ? ": the output started at 0 instead of +inf" : "");
  }
}

// ---- the semantics table ---------------------------------------------------------------------

struct Case {
  const char* name;
  std::vector<float> values;
  float expected;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

class MinimumSemantics : public MinimumTest, public ::testing::WithParamInterface<Case> {};

TEST_P(MinimumSemantics, MatchesIeeeMinimum) {
  const Case& c = GetParam();
  const float reference = reference_minimum(c.values);
  ASSERT_TRUE(bits(reference) == bits(c.expected) ||
              (std::isnan(c.expected) && std::isnan(reference)))
      << "the test table and the CPU reference disagree";
  expect_min((*run_)(c.values), c.expected, c.values.size());
}

INSTANTIATE_TEST_SUITE_P(
    Cases, MinimumSemantics,
    ::testing::Values(Case{"all_positive", {3.0f, 1.0f, 2.0f}, 1.0f},
                      Case{"single_positive", {7.0f}, 7.0f},
                      Case{"plus_zero_then_minus_zero", {0.0f, -0.0f}, -0.0f},
                      Case{"minus_zero_then_plus_zero", {-0.0f, 0.0f}, -0.0f},
                      Case{"only_plus_zeros", {0.0f, 0.0f, 0.0f}, 0.0f},
                      Case{"positives_and_plus_zero", {1.0f, 0.0f, 2.0f}, 0.0f},
                      Case{"all_plus_inf", {kInf, kInf}, kInf},
                      Case{"minus_inf", {-1.0f, -kInf, kInf}, -kInf},
                      Case{"nan_first", {kNaN, 1.0f, 2.0f}, kNaN},
                      Case{"nan_middle", {1.0f, kNaN, 2.0f}, kNaN},
                      Case{"nan_last", {1.0f, 2.0f, kNaN}, kNaN},
                      Case{"nan_and_minus_inf", {-kInf, kNaN}, kNaN},
                      Case{"negative_nan", {5.0f, from_bits(0xFFC00000u)}, kNaN}),
    [](const ::testing::TestParamInfo<Case>& info) { return std::string(info.param.name); });

// ---- whole arrays over the size list ---------------------------------------------------------

class MinimumAllPositive : public MinimumTest,
                           public ::testing::WithParamInterface<std::size_t> {};

TEST_P(MinimumAllPositive, IsTheSmallestPositive) {
  const std::size_t n = GetParam();
  const std::vector<float> host = all_positive(n, test_seed() + n);
  expect_min((*run_)(host), reference_minimum(host), n);
}

INSTANTIATE_TEST_SUITE_P(Sizes, MinimumAllPositive, ::testing::ValuesIn(kSizes),
                         ::testing::PrintToStringParamName());

class MinimumRandom : public MinimumTest, public ::testing::WithParamInterface<std::size_t> {};

TEST_P(MinimumRandom, MatchesReferenceBitwise) {
  const std::size_t n = GetParam();
  const std::vector<float> host = signed_mix(n, test_seed() ^ n, 0.01, 0.0);
  expect_min((*run_)(host), reference_minimum(host), n);
}

INSTANTIATE_TEST_SUITE_P(Sizes, MinimumRandom, ::testing::ValuesIn(kSizes),
                         ::testing::PrintToStringParamName());

// ---- the smallest element where index bugs live ----------------------------------------------

std::vector<std::size_t> boundary_positions(std::size_t n) {
  return {0,    1,    31,   32,   33,    255,   256,   257,   511,   512,   1023,
          1024, 1025, 2047, 2048, n / 2, n - 33, n - 32, n - 31, n - 2, n - 1};
}

class MinimumSentinel : public MinimumTest, public ::testing::WithParamInterface<std::size_t> {};

TEST_P(MinimumSentinel, FindsTheOnlySmallest) {
  const std::size_t n = GetParam();
  const std::vector<float> host = all_positive(n, test_seed() * 7 + n);
  DeviceBuffer<float> in(host);
  const float base = reference_minimum(host);
  for (std::size_t p : boundary_positions(n)) {
    if (p >= n) continue;
    SCOPED_TRACE("smallest element at index " + std::to_string(p) + " of " + std::to_string(n));
    set_element(in.data(), p, -1.0f);
    expect_min((*run_)(in.data(), n), -1.0f, n);
    set_element(in.data(), p, host[p]);
  }
  expect_min((*run_)(in.data(), n), base, n);
}

INSTANTIATE_TEST_SUITE_P(Sizes, MinimumSentinel,
                         ::testing::Values<std::size_t>(1025, 65537, (1u << 20) + 7),
                         ::testing::PrintToStringParamName());

// ---- NaN at the first, middle and last place (and at the boundaries) -------------------------

class MinimumNaN : public MinimumTest, public ::testing::WithParamInterface<std::size_t> {};

TEST_P(MinimumNaN, PropagatesFromAnyPlace) {
  const std::size_t n = GetParam();
  std::vector<float> host = all_positive(n, test_seed() + 3 * n);
  place(host, {n - 1}, -kInf);  // a NaN must beat -inf too
  DeviceBuffer<float> in(host);
  for (std::size_t p : boundary_positions(n)) {
    if (p >= n) continue;
    for (std::uint32_t nan_bits : {0x7FC00000u, 0xFFC00000u, 0x7F800001u}) {
      SCOPED_TRACE("NaN " + describe(from_bits(nan_bits)) + " at index " + std::to_string(p) +
                   " of " + std::to_string(n));
      set_element(in.data(), p, from_bits(nan_bits));
      expect_min((*run_)(in.data(), n), kNaN, n);
    }
    set_element(in.data(), p, host[p]);
  }
}

INSTANTIATE_TEST_SUITE_P(Sizes, MinimumNaN,
                         ::testing::Values<std::size_t>(1, 2, 33, 257, 1025, 65537,
                                                        (1u << 20) + 7),
                         ::testing::PrintToStringParamName());

TEST_F(MinimumTest, ManyNaNs) {
  const std::size_t n = (1u << 20) + 7;
  std::vector<float> host = all_positive(n, test_seed());
  for (std::size_t i = 0; i < n; i += 1000) host[i] = kNaN;
  expect_min((*run_)(host), kNaN, n);
}

// ---- signed zeros and infinities -------------------------------------------------------------

class MinimumSignedZeros : public MinimumTest,
                           public ::testing::WithParamInterface<std::size_t> {};

TEST_P(MinimumSignedZeros, MinusZeroBeatsPlusZero) {
  const std::size_t n = GetParam();
  {
    SCOPED_TRACE("only +0.0: the minimum is +0.0");
    expect_min((*run_)(std::vector<float>(n, 0.0f)), 0.0f, n);
  }
  {
    SCOPED_TRACE("positive numbers and one +0.0 at the end: the minimum is +0.0");
    std::vector<float> host = all_positive(n, test_seed() + 5);
    host[n - 1] = 0.0f;
    expect_min((*run_)(host), 0.0f, n);
  }
  {
    SCOPED_TRACE("+0.0 and -0.0 at random: the minimum is -0.0");
    const std::vector<float> host = signed_zeros(n, test_seed() + 9);
    expect_min((*run_)(host), reference_minimum(host), n);
  }
  DeviceBuffer<float> in(std::vector<float>(n, 0.0f));
  for (std::size_t p : {std::size_t{0}, n / 2, n - 1}) {
    SCOPED_TRACE("one -0.0 among +0.0 at index " + std::to_string(p));
    set_element(in.data(), p, -0.0f);
    expect_min((*run_)(in.data(), n), -0.0f, n);
    set_element(in.data(), p, 0.0f);
  }
}

INSTANTIATE_TEST_SUITE_P(Sizes, MinimumSignedZeros,
                         ::testing::Values<std::size_t>(2, 33, 1025, (1u << 20) + 7),
                         ::testing::PrintToStringParamName());

TEST_F(MinimumTest, Infinities) {
  const std::size_t n = (1u << 20) + 7;
  {
    SCOPED_TRACE("only +inf");
    expect_min((*run_)(std::vector<float>(n, kInf)), kInf, n);
  }
  {
    SCOPED_TRACE("+inf everywhere but one 1e30 at the end");
    std::vector<float> host(n, kInf);
    host[n - 1] = 1e30f;
    expect_min((*run_)(host), 1e30f, n);
  }
  {
    SCOPED_TRACE("random values with +-inf and +-0.0 mixed in");
    const std::vector<float> host = signed_mix(n, test_seed() + 11, 0.01, 0.001);
    expect_min((*run_)(host), reference_minimum(host), n);
  }
  {
    SCOPED_TRACE("one -inf among positives");
    std::vector<float> host = all_positive(n, test_seed() + 13);
    host[n / 3] = -kInf;
    expect_min((*run_)(host), -kInf, n);
  }
}

// ---- no cached or hard-coded answers, no writes to the input ---------------------------------

TEST_F(MinimumTest, EveryCallComputesAfresh) {
  const std::size_t n = (1u << 20) + 7;
  std::vector<std::vector<float>> hosts;
  std::vector<DeviceBuffer<float>> inputs;
  for (std::uint64_t k = 0; k < 3; ++k) {
    hosts.push_back(k == 1 ? all_positive(n, test_seed() * 31 + k)
                           : signed_mix(n, test_seed() * 31 + k, 0.0, 0.0));
    inputs.emplace_back(hosts.back());
  }
  for (int call : {0, 1, 2, 0, 2, 1, 1}) {
    SCOPED_TRACE("input " + std::to_string(call));
    expect_min((*run_)(inputs[call].data(), n), reference_minimum(hosts[call]), n);
  }
  for (int k = 0; k < 3; ++k) {
    EXPECT_TRUE(inputs[k].to_host() == hosts[k]) << "the lab modified its input " << k;
  }
}

// ---- beyond 2^31 elements --------------------------------------------------------------------

/// x[i] = 1 + (i mod 1000): all positive, the smallest (1) at every multiple of 1000.
__global__ void fill_positive_pattern(float* x, std::size_t n) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    x[i] = 1.0f + static_cast<float>(i % 1000);
  }
}

TEST_F(MinimumTest, AboveInt32Range) {
  const std::size_t n = (std::size_t{1} << 31) + (1u << 20) + 3;
  if (!enough_device_memory(n * sizeof(float) + minimum_workspace_bytes(n))) {
    GTEST_SKIP() << "needs " << (n * sizeof(float) >> 20) << " MiB of free device memory";
  }
  DeviceBuffer<float> in(n);
  fill_positive_pattern<<<4096, 256>>>(in.data(), n);
  REDUCE_CUDA_CHECK_LAUNCH();
  REDUCE_CUDA_CHECK(cudaDeviceSynchronize());
  {
    SCOPED_TRACE("all positive, n = 2^31 + 2^20 + 3");
    expect_min((*run_)(in.data(), n), 1.0f, n);
  }
  {
    SCOPED_TRACE("smallest element at index 2^31 + 7: a 32-bit index never reaches it");
    set_element(in.data(), (std::size_t{1} << 31) + 7, -5.0f);
    expect_min((*run_)(in.data(), n), -5.0f, n);
  }
  {
    SCOPED_TRACE("smaller still at the last index");
    set_element(in.data(), n - 1, -6.0f);
    expect_min((*run_)(in.data(), n), -6.0f, n);
  }
  {
    SCOPED_TRACE("a NaN at index 2^31 + 1000");
    set_element(in.data(), (std::size_t{1} << 31) + 1000, kNaN);
    expect_min((*run_)(in.data(), n), kNaN, n);
  }
}

}  // namespace
}  // namespace reduce::testing
