/// \file
/// \brief The maximum and minimum suites, written once: maximum_test.cu and minimum_test.cu each
/// define REDUCE_EXTREMUM_MAXIMUM or REDUCE_EXTREMUM_MINIMUM and include this file.
///
/// The minimum is the maximum's mirror image: negation maps one onto the other exactly, bit for
/// bit (min(x) == -max(-x), signed zeros and infinities included). So every input and expected
/// value below is written for the maximum and passed through mirror(), which negates it for the
/// minimum and leaves it alone for the maximum. A NaN is kept as it is (a NaN result matches any
/// NaN, and negative_nan must stay a NaN with its sign bit set). Random inputs of either sign are
/// symmetric already and go to both operations unchanged.
#pragma once

#include "gpu_test.hpp"

#include <reduce/device_buffer.cuh>
#include <reduce/generators.hpp>
#include <reduce/lab.cuh>
#include <reduce/reference.hpp>

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#if defined(REDUCE_EXTREMUM_MAXIMUM) == defined(REDUCE_EXTREMUM_MINIMUM)
#error "define one of REDUCE_EXTREMUM_MAXIMUM and REDUCE_EXTREMUM_MINIMUM before the include"
#endif

/// The maximum's or the minimum's spelling of a name. Test names are identifiers, which only the
/// preprocessor can choose, and each operation keeps the names its planted cases and rubric use.
#ifdef REDUCE_EXTREMUM_MAXIMUM
#define REDUCE_EXTREMUM_PICK(maximum_name, minimum_name) maximum_name
#else
#define REDUCE_EXTREMUM_PICK(maximum_name, minimum_name) minimum_name
#endif

/// INSTANTIATE_TEST_SUITE_P pastes its suite name with ##, which would leave a
/// REDUCE_EXTREMUM_PICK(...) unexpanded: this extra level expands it first.
#define REDUCE_EXTREMUM_INSTANTIATE(prefix, suite, ...) \
  INSTANTIATE_TEST_SUITE_P(prefix, suite, __VA_ARGS__)

namespace reduce::testing {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
const float kNaN = std::numeric_limits<float>::quiet_NaN();

/// What the suite needs to know about the maximum: the lab's entry point and workspace size,
/// the CPU reference, the identity, and the words its messages use.
struct MaximumTraits {
  static constexpr bool kMirrored = false;  ///< the inputs below are the maximum's as written
  static constexpr float kIdentity = -kInf;
  // Words of the messages: "the maximum of", "the identity of max", "the largest element",
  // "larger than", "Too small" (the largest element missed), "Every element is negative".
  static constexpr const char* kName = "maximum";
  static constexpr const char* kOp = "max";
  static constexpr const char* kLargest = "largest";
  static constexpr const char* kLarger = "larger";
  static constexpr const char* kSmall = "small";
  static constexpr const char* kNegative = "negative";
  /// The comparisons that drop a NaN.
  static constexpr const char* kNanDroppers = "`a > b ? a : b` or fmaxf()";
  /// Where a reduction can start from 0 (lab 14's maximum also memsets its output for atomics).
  static constexpr const char* kZeroStarts =
      "in an accumulator, in the lanes beyond the block's warps, or in an output memset to 0 "
      "before atomics";

  /// Bytes of workspace the lab asks for.
  static std::size_t workspace_bytes(std::size_t n) { return maximum_workspace_bytes(n); }
  /// The lab's entry point.
  static void run(const float* in, std::size_t n, float* out, Workspace w, cudaStream_t s) {
    maximum(in, n, out, w, s);
  }
  /// The CPU reference.
  static float reference(const std::vector<float>& x) { return reference_maximum(x); }
};

/// The same for the minimum: every word is the mirror image of the maximum's.
struct MinimumTraits {
  static constexpr bool kMirrored = true;  ///< the inputs below are negated for the minimum
  static constexpr float kIdentity = kInf;
  static constexpr const char* kName = "minimum";
  static constexpr const char* kOp = "min";
  static constexpr const char* kLargest = "smallest";
  static constexpr const char* kLarger = "smaller";
  static constexpr const char* kSmall = "large";
  static constexpr const char* kNegative = "positive";
  static constexpr const char* kNanDroppers = "`a < b ? a : b` or fminf()";
  /// No atomics: no lab computes the minimum with them.
  static constexpr const char* kZeroStarts =
      "in an accumulator or in the lanes beyond the block's warps";

  static std::size_t workspace_bytes(std::size_t n) { return minimum_workspace_bytes(n); }
  static void run(const float* in, std::size_t n, float* out, Workspace w, cudaStream_t s) {
    minimum(in, n, out, w, s);
  }
  static float reference(const std::vector<float>& x) { return reference_minimum(x); }
};

/// The operation this binary tests.
using Traits = REDUCE_EXTREMUM_PICK(MaximumTraits, MinimumTraits);

/// \p v as this operation's suite uses it: -v for the minimum (exact, signed zeros and
/// infinities included), \p v itself for the maximum; a NaN unchanged for both.
float mirror(float v) {
  return Traits::kMirrored && !std::isnan(v) ? -v : v;
}

/// mirror() of every element.
std::vector<float> mirror(std::vector<float> x) {
  for (float& v : x) v = mirror(v);
  return x;
}

/// A float with its bit pattern, so that -0 and +0 (and NaN payloads) are told apart.
std::string describe(float v) {
  char text[64];
  std::snprintf(text, sizeof text, "%.9g (bits 0x%08X)", static_cast<double>(v), bits(v));
  return text;
}

/// A value as the messages write it, with the sign that mirror() gave it: "+0.0", "-inf", ...
std::string spell(float v) {
  if (v == 0.0f) return std::signbit(v) ? "-0.0" : "+0.0";
  if (std::isinf(v)) return v < 0.0f ? "-inf" : "+inf";
  char text[32];
  std::snprintf(text, sizeof text, "%g", static_cast<double>(v));
  return text;
}

/// A float built from its bit pattern (e.g. a NaN with the sign bit set).
float from_bits(std::uint32_t b) {
  float v;
  std::memcpy(&v, &b, sizeof v);
  return v;
}

/// Calls the lab's maximum or minimum the way the grader does: on its own stream, output and
/// workspace poisoned with 0xFF bytes (a NaN), and a guard float after the output that must
/// stay intact.
class Runner {
 public:
  float operator()(const float* in, std::size_t n) {
    out_.fill_bytes(kPoisonByte, stream_.get());
    DeviceBuffer<unsigned char> workspace(Traits::workspace_bytes(n));
    workspace.fill_bytes(kPoisonByte, stream_.get());
    Traits::run(in, n, out_.data(), Workspace{workspace.data(), workspace.bytes()}, stream_.get());
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

/// Every test's fixture: skips without a GPU, else holds the runner.
class REDUCE_EXTREMUM_PICK(MaximumTest, MinimumTest) : public ::testing::Test {
 protected:
  void SetUp() override {
    REDUCE_REQUIRE_GPU();
    run_ = std::make_unique<Runner>();
  }
  std::unique_ptr<Runner> run_;
};

/// The fixture under one name, for the parameterised suites to derive from.
using ExtremumTest = REDUCE_EXTREMUM_PICK(MaximumTest, MinimumTest);

/// What a wrong result most likely means, for the message a student sees.
std::string diagnose(float got, float want) {
  const std::string name = Traits::kName, op = Traits::kOp;
  if (std::isnan(want) && !std::isnan(got)) {
    return "A NaN anywhere must make the " + name + " NaN (IEEE 754-2019, numpy, torch). A " + op +
           " written as " + Traits::kNanDroppers +
           " drops a NaN whenever it is the second operand.";
  }
  if (!std::isnan(want) && std::isnan(got)) {
    return "NaN with no NaN in the input: the output (poisoned with 0xFF bytes, a NaN) was "
           "never written, or a poisoned workspace value was read.";
  }
  if (got == 0.0f && mirror(want) < 0.0f) {
    return "Every element is " + std::string(Traits::kNegative) +
           ": a result of 0 means the reduction started from 0 instead of " +
           spell(Traits::kIdentity) + " (the identity of " + op + "): " + Traits::kZeroStarts + ".";
  }
  if (got == want && bits(got) != bits(want)) {
    const std::string winner = spell(mirror(0.0f)), loser = spell(mirror(-0.0f));
    return "Right value, wrong zero: " + winner + " is " + Traits::kLarger + " than " + loser +
           ", so the " + name + " of {" + loser + ", " + winner + "} is " + winner +
           " in any order. A " + op +
           " that keeps the first of two equal values returns whichever zero it met first.";
  }
  if (mirror(got) < mirror(want)) {
    return "Too " + std::string(Traits::kSmall) + ": the " + Traits::kLargest +
           " element was never read (check the index arithmetic, the tail of the grid-stride "
           "loop, and the partials of the second pass).";
  }
  std::string beyond = Traits::kLarger;  // starts the sentence: "Larger" or "Smaller"
  beyond[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(beyond[0])));
  return beyond + " than every element: the result comes from memory outside the input.";
}

/// Bitwise comparison (NaN matches any NaN) with a message that explains the difference.
void expect_result(float got, float want, std::size_t n) {
  if ((std::isnan(want) && std::isnan(got)) || bits(got) == bits(want)) return;
  ADD_FAILURE() << "n = " << n << ": got " << describe(got) << ", expected " << describe(want)
                << ". " << diagnose(got, want);
}

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
  const float got = (*run_)(in.data(), 0);
  if (bits(got) != bits(Traits::kIdentity)) {
    const std::string identity = spell(Traits::kIdentity);
    ADD_FAILURE() << "the " << Traits::kName << " of no elements is " << identity
                  << ", the identity of " << Traits::kOp << "; got " << describe(got)
                  << (got == 0.0f ? ": the output started at 0 instead of " + identity : "");
  }
}

// ---- the semantics table ---------------------------------------------------------------------

/// One row of the table, written for the maximum (the minimum's is its mirror()).
struct Case {
  const char* name;
  std::vector<float> values;
  float expected;
};

/// Names a row by its name in gtest's output.
void PrintTo(const Case& c, std::ostream* os) {
  *os << c.name;
}

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
  expect_result((*run_)(values), expected, values.size());
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
    [](const ::testing::TestParamInfo<Case>& info) { return std::string(info.param.name); });

// ---- whole arrays over the size list ---------------------------------------------------------

class REDUCE_EXTREMUM_PICK(MaximumAllNegative, MinimumAllPositive)
    : public ExtremumTest, public ::testing::WithParamInterface<std::size_t> {};

TEST_P(REDUCE_EXTREMUM_PICK(MaximumAllNegative, MinimumAllPositive),
       REDUCE_EXTREMUM_PICK(IsTheLeastNegative, IsTheSmallestPositive)) {
  const std::size_t n = GetParam();
  const std::vector<float> host = mirror(all_negative(n, test_seed() + n));
  expect_result((*run_)(host), Traits::reference(host), n);
}

REDUCE_EXTREMUM_INSTANTIATE(Sizes, REDUCE_EXTREMUM_PICK(MaximumAllNegative, MinimumAllPositive),
                            ::testing::ValuesIn(kSizes), ::testing::PrintToStringParamName());

class REDUCE_EXTREMUM_PICK(MaximumRandom, MinimumRandom)
    : public ExtremumTest, public ::testing::WithParamInterface<std::size_t> {};

TEST_P(REDUCE_EXTREMUM_PICK(MaximumRandom, MinimumRandom), MatchesReferenceBitwise) {
  const std::size_t n = GetParam();
  // Random signs, 12 decades of magnitude, 1 % signed zeros (symmetric: not mirrored).
  const std::vector<float> host = signed_mix(n, test_seed() ^ n, 0.01, 0.0);
  expect_result((*run_)(host), Traits::reference(host), n);
}

REDUCE_EXTREMUM_INSTANTIATE(Sizes, REDUCE_EXTREMUM_PICK(MaximumRandom, MinimumRandom),
                            ::testing::ValuesIn(kSizes), ::testing::PrintToStringParamName());

// ---- the largest (smallest) element where index bugs live ------------------------------------

/// Where index bugs show: warp and block boundaries, the middle and the tail of \p n.
std::vector<std::size_t> boundary_positions(std::size_t n) {
  return {0,    1,    31,   32,   33,    255,    256,    257,    511,   512,  1023,
          1024, 1025, 2047, 2048, n / 2, n - 33, n - 32, n - 31, n - 2, n - 1};
}

class REDUCE_EXTREMUM_PICK(MaximumSentinel, MinimumSentinel)
    : public ExtremumTest, public ::testing::WithParamInterface<std::size_t> {};

TEST_P(REDUCE_EXTREMUM_PICK(MaximumSentinel, MinimumSentinel),
       REDUCE_EXTREMUM_PICK(FindsTheOnlyLargest, FindsTheOnlySmallest)) {
  const std::size_t n = GetParam();
  const std::vector<float> host = mirror(all_negative(n, test_seed() * 7 + n));
  DeviceBuffer<float> in(host);
  const float base = Traits::reference(host);
  for (std::size_t p : boundary_positions(n)) {
    if (p >= n) continue;
    SCOPED_TRACE(std::string(Traits::kLargest) + " element at index " + std::to_string(p) + " of " +
                 std::to_string(n));
    set_element(in.data(), p, mirror(1.0f));
    expect_result((*run_)(in.data(), n), mirror(1.0f), n);
    set_element(in.data(), p, host[p]);
  }
  expect_result((*run_)(in.data(), n), base, n);
}

REDUCE_EXTREMUM_INSTANTIATE(Sizes, REDUCE_EXTREMUM_PICK(MaximumSentinel, MinimumSentinel),
                            ::testing::Values<std::size_t>(1025, 65537, (1u << 20) + 7),
                            ::testing::PrintToStringParamName());

// ---- NaN at the first, middle and last place (and at the boundaries) -------------------------

class REDUCE_EXTREMUM_PICK(MaximumNaN, MinimumNaN)
    : public ExtremumTest, public ::testing::WithParamInterface<std::size_t> {};

TEST_P(REDUCE_EXTREMUM_PICK(MaximumNaN, MinimumNaN), PropagatesFromAnyPlace) {
  const std::size_t n = GetParam();
  std::vector<float> host = mirror(all_negative(n, test_seed() + 3 * n));
  place(host, {n - 1}, mirror(kInf));  // a NaN must beat the infinity that wins otherwise too
  DeviceBuffer<float> in(host);
  for (std::size_t p : boundary_positions(n)) {
    if (p >= n) continue;
    for (std::uint32_t nan_bits : {0x7FC00000u, 0xFFC00000u, 0x7F800001u}) {
      SCOPED_TRACE("NaN " + describe(from_bits(nan_bits)) + " at index " + std::to_string(p) +
                   " of " + std::to_string(n));
      set_element(in.data(), p, from_bits(nan_bits));
      expect_result((*run_)(in.data(), n), kNaN, n);
    }
    set_element(in.data(), p, host[p]);
  }
}

REDUCE_EXTREMUM_INSTANTIATE(Sizes, REDUCE_EXTREMUM_PICK(MaximumNaN, MinimumNaN),
                            ::testing::Values<std::size_t>(1, 2, 33, 257, 1025, 65537,
                                                           (1u << 20) + 7),
                            ::testing::PrintToStringParamName());

TEST_F(REDUCE_EXTREMUM_PICK(MaximumTest, MinimumTest), ManyNaNs) {
  const std::size_t n = (1u << 20) + 7;
  std::vector<float> host = mirror(all_negative(n, test_seed()));
  for (std::size_t i = 0; i < n; i += 1000) host[i] = kNaN;
  expect_result((*run_)(host), kNaN, n);
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
    expect_result((*run_)(std::vector<float>(n, loser)), loser, n);
  }
  {
    SCOPED_TRACE(std::string(Traits::kNegative) + " numbers and one " + spell(loser) +
                 " at the end" + is + spell(loser));
    std::vector<float> host = mirror(all_negative(n, test_seed() + 5));
    host[n - 1] = loser;
    expect_result((*run_)(host), loser, n);
  }
  {
    SCOPED_TRACE("+0.0 and -0.0 at random" + is + spell(winner));
    const std::vector<float> host = signed_zeros(n, test_seed() + 9);  // symmetric: not mirrored
    expect_result((*run_)(host), Traits::reference(host), n);
  }
  DeviceBuffer<float> in(std::vector<float>(n, loser));
  for (std::size_t p : {std::size_t{0}, n / 2, n - 1}) {
    SCOPED_TRACE("one " + spell(winner) + " among " + spell(loser) + " at index " +
                 std::to_string(p));
    set_element(in.data(), p, winner);
    expect_result((*run_)(in.data(), n), winner, n);
    set_element(in.data(), p, loser);
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
    expect_result((*run_)(std::vector<float>(n, losing_inf)), losing_inf, n);
  }
  {
    SCOPED_TRACE(spell(losing_inf) + " everywhere but one " + spell(mirror(-1e30f)) +
                 " at the end");
    std::vector<float> host(n, losing_inf);
    host[n - 1] = mirror(-1e30f);
    expect_result((*run_)(host), mirror(-1e30f), n);
  }
  {
    SCOPED_TRACE("random values with +-inf and +-0.0 mixed in");
    const std::vector<float> host = signed_mix(n, test_seed() + 11, 0.01, 0.001);
    expect_result((*run_)(host), Traits::reference(host), n);
  }
  {
    SCOPED_TRACE("one " + spell(winning_inf) + " among " + Traits::kNegative + "s");
    std::vector<float> host = mirror(all_negative(n, test_seed() + 13));
    host[n / 3] = winning_inf;
    expect_result((*run_)(host), winning_inf, n);
  }
}

// ---- no cached or hard-coded answers, no writes to the input ---------------------------------

TEST_F(REDUCE_EXTREMUM_PICK(MaximumTest, MinimumTest), EveryCallComputesAfresh) {
  const std::size_t n = (1u << 20) + 7;
  std::vector<std::vector<float>> hosts;
  std::vector<DeviceBuffer<float>> inputs;
  for (std::uint64_t k = 0; k < 3; ++k) {
    hosts.push_back(k == 1 ? mirror(all_negative(n, test_seed() * 31 + k))
                           : signed_mix(n, test_seed() * 31 + k, 0.0, 0.0));
    inputs.emplace_back(hosts.back());
  }
  for (int call : {0, 1, 2, 0, 2, 1, 1}) {
    SCOPED_TRACE("input " + std::to_string(call));
    expect_result((*run_)(inputs[call].data(), n), Traits::reference(hosts[call]), n);
  }
  for (int k = 0; k < 3; ++k) {
    EXPECT_TRUE(inputs[k].to_host() == hosts[k]) << "the lab modified its input " << k;
  }
}

// ---- beyond 2^31 elements --------------------------------------------------------------------

/// x[i] = sign * (1 + (i mod 1000)). For the maximum sign is -1: all negative, the largest (-1)
/// at every multiple of 1000; the minimum's mirror image has sign +1.
__global__ void fill_pattern(float* x, std::size_t n, float sign) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    x[i] = sign * (1.0f + static_cast<float>(i % 1000));
  }
}

TEST_F(REDUCE_EXTREMUM_PICK(MaximumTest, MinimumTest), AboveInt32Range) {
  const std::size_t n = (std::size_t{1} << 31) + (1u << 20) + 3;
  if (!enough_device_memory(n * sizeof(float) + Traits::workspace_bytes(n))) {
    GTEST_SKIP() << "needs " << (n * sizeof(float) >> 20) << " MiB of free device memory";
  }
  DeviceBuffer<float> in(n);
  fill_pattern<<<4096, 256>>>(in.data(), n, mirror(-1.0f));
  REDUCE_CUDA_CHECK_LAUNCH();
  REDUCE_CUDA_CHECK(cudaDeviceSynchronize());
  {
    SCOPED_TRACE("all " + std::string(Traits::kNegative) + ", n = 2^31 + 2^20 + 3");
    expect_result((*run_)(in.data(), n), mirror(-1.0f), n);
  }
  const std::size_t high = (std::size_t{1} << 31) + 7;
  {
    SCOPED_TRACE(std::string(Traits::kLargest) +
                 " element at index 2^31 + 7: a 32-bit index never reaches it");
    set_element(in.data(), high, mirror(5.0f));
    expect_result((*run_)(in.data(), n), mirror(5.0f), n);
  }
  {
    SCOPED_TRACE(std::string(Traits::kLarger) + " still at the last index");
    set_element(in.data(), n - 1, mirror(6.0f));
    expect_result((*run_)(in.data(), n), mirror(6.0f), n);
  }
  {
    SCOPED_TRACE("a NaN at index 2^31 + 1000");
    set_element(in.data(), (std::size_t{1} << 31) + 1000, kNaN);
    expect_result((*run_)(in.data(), n), kNaN, n);
  }
}

}  // namespace
}  // namespace reduce::testing
