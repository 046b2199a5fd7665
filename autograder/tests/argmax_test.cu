// The argmax suite: linked with every lab that implements reduce::argmax (lab 13). The answer
// is an index, so every check is exact. Semantics as numpy/torch: the first index of the
// largest element; +0.0 and -0.0 tie; the first NaN's index if any element is NaN; n == 0 has
// no answer and must throw std::invalid_argument before anything is queued. Ties placed across
// warps and blocks catch a tie-break that depends on which block finishes first; the largest
// element at warp and block boundaries and in the tail catches index bugs; an input longer than
// 2^31 with its maximum above index 2^31 catches a 32-bit index.
#include "gpu_test.hpp"

#include <reduce/device_buffer.cuh>
#include <reduce/generators.hpp>
#include <reduce/lab.cuh>
#include <reduce/reference.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace reduce::testing {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
const float kNaN = std::numeric_limits<float>::quiet_NaN();

/// What argmax writes when it never writes: the poison pattern 0xFF... read as int64.
constexpr std::int64_t kPoisonIndex = -1;

/// A float built from its bit pattern (e.g. a NaN with the sign bit set).
float from_bits(std::uint32_t b) {
  float v;
  std::memcpy(&v, &b, sizeof v);
  return v;
}

/// Calls the lab's argmax the way the grader does: on its own stream, output and workspace
/// poisoned with 0xFF bytes, and a guard index after the output that must stay intact.
class ArgmaxRunner {
 public:
  std::int64_t operator()(const float* in, std::size_t n) {
    out_.fill_bytes(kPoisonByte, stream_.get());
    DeviceBuffer<unsigned char> workspace(argmax_workspace_bytes(n));
    workspace.fill_bytes(kPoisonByte, stream_.get());
    argmax(in, n, out_.data(), Workspace{workspace.data(), workspace.bytes()}, stream_.get());
    stream_.synchronize();
    const std::vector<std::int64_t> host = out_.to_host();
    EXPECT_EQ(host[1], kPoisonIndex) << "the lab wrote past its one-index output";
    return host[0];
  }

  /// Copies \p host to the device and runs the lab on it.
  std::int64_t operator()(const std::vector<float>& host) {
    const DeviceBuffer<float> in(host);
    return (*this)(in.data(), host.size());
  }

  /// The output buffer, for the test that checks nothing is written.
  DeviceBuffer<std::int64_t>& out() { return out_; }
  /// The runner's stream.
  cudaStream_t stream() const { return stream_.get(); }

 private:
  Stream stream_;
  DeviceBuffer<std::int64_t> out_{2};
};

class ArgmaxTest : public ::testing::Test {
 protected:
  void SetUp() override {
    REDUCE_REQUIRE_GPU();
    run_ = std::make_unique<ArgmaxRunner>();
  }
  std::unique_ptr<ArgmaxRunner> run_;
};

/// Exact comparison with a message that says what the wrong index suggests; \p value_at reads
/// the input at an index (from the host copy or from device memory).
void expect_index(std::int64_t got, std::int64_t want,
                  const std::function<float(std::size_t)>& value_at, std::size_t n) {
  if (got == want) return;
  const bool in_range = got >= 0 && static_cast<std::size_t>(got) < n;
  const float got_value = in_range ? value_at(static_cast<std::size_t>(got)) : 0.0f;
  const float want_value = value_at(static_cast<std::size_t>(want));
  std::string hint;
  if (got == kPoisonIndex) {
    hint = "-1 is the poison pattern: the output was never written.";
  } else if (!in_range) {
    hint = "The index is outside [0, n): above 2^31 elements a 32-bit (int) index wraps to a "
           "negative number; otherwise a poisoned workspace index was read.";
  } else if (std::isnan(want_value) && !std::isnan(got_value)) {
    hint = "The input holds a NaN: argmax must return the first NaN's index (numpy/torch). A "
           "comparison `v > best` is false for NaN, so a NaN never wins unless handled.";
  } else if (std::isnan(got_value)) {
    hint = "That is a NaN, but not the first one: among NaNs the smallest index wins.";
  } else if (got_value == want_value) {
    hint = got > want ? "Same value, later index: on ties argmax returns the first index "
                        "(+0.0 and -0.0 tie too). Break ties by the smaller index wherever "
                        "two pairs meet (lanes, warps, blocks), and never replace the kept "
                        "pair with an equal value found later."
                      : "Same value, but an index before the first occurrence cannot hold "
                        "it: the index was computed wrongly.";
  } else {
    hint = "Not the largest element: it was never read, or its index was lost on the way "
           "(check the tail, the shuffles of the index, the second pass).";
  }
  ADD_FAILURE() << "n = " << n << ": got index " << got << ", expected " << want << " (value "
                << (in_range ? std::to_string(got_value) : std::string("out of range"))
                << " there, expected " << want_value << "). " << hint;
}

/// expect_index() reading values from a host copy of the input.
void expect_index(std::int64_t got, std::int64_t want, const std::vector<float>* host,
                  std::size_t n) {
  expect_index(got, want, [host](std::size_t i) { return (*host)[i]; }, n);
}

/// expect_index() reading values from the device input.
void expect_index(std::int64_t got, std::int64_t want, const float* device, std::size_t n) {
  expect_index(got, want,
               [device](std::size_t i) {
                 float v = 0.0f;
                 REDUCE_CUDA_CHECK(cudaMemcpy(&v, device + i, sizeof v, cudaMemcpyDeviceToHost));
                 return v;
               },
               n);
}

const std::vector<std::size_t> kSizes = {1,     2,     31,    32,    33,          255,
                                         256,   257,   1023,  1024,  1025,        65535,
                                         65536, 65537, (1u << 20) + 7, 1u << 24, 300000000};

// ---- empty input -----------------------------------------------------------------------------

TEST_F(ArgmaxTest, EmptyInputThrowsInvalidArgument) {
  DeviceBuffer<float> in(1);
  in.fill_bytes(0x3F);
  DeviceBuffer<unsigned char> workspace(argmax_workspace_bytes(0));
  run_->out().fill_bytes(kPoisonByte, run_->stream());
  REDUCE_CUDA_CHECK(cudaStreamSynchronize(run_->stream()));
  EXPECT_THROW(argmax(in.data(), 0, run_->out().data(),
                      Workspace{workspace.data(), workspace.bytes()}, run_->stream()),
               std::invalid_argument)
      << "the argmax of no elements is undefined: throw std::invalid_argument for n == 0";
  REDUCE_CUDA_CHECK(cudaStreamSynchronize(run_->stream()));
  EXPECT_EQ(run_->out().to_host()[0], kPoisonIndex)
      << "argmax(n == 0) must throw before queuing anything, but the output was written";
}

// ---- the semantics table ---------------------------------------------------------------------

struct Case {
  const char* name;
  std::vector<float> values;
  std::int64_t expected;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

class ArgmaxSemantics : public ArgmaxTest, public ::testing::WithParamInterface<Case> {};

TEST_P(ArgmaxSemantics, MatchesNumpy) {
  const Case& c = GetParam();
  ASSERT_EQ(reference_argmax(c.values), c.expected) << "the test table and the CPU reference disagree";
  expect_index((*run_)(c.values), c.expected, &c.values, c.values.size());
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ArgmaxSemantics,
    ::testing::Values(Case{"all_negative", {-3.0f, -1.0f, -2.0f}, 1},
                      Case{"single", {-7.0f}, 0},
                      Case{"tie_first_wins", {1.0f, 5.0f, 5.0f, 2.0f}, 1},
                      Case{"all_equal", {4.0f, 4.0f, 4.0f, 4.0f}, 0},
                      Case{"minus_zero_ties_plus_zero", {-1.0f, -0.0f, 0.0f}, 1},
                      Case{"plus_zero_ties_minus_zero", {0.0f, -0.0f}, 0},
                      Case{"all_minus_inf", {-kInf, -kInf, -kInf}, 0},
                      Case{"plus_inf_ties", {1.0f, kInf, kInf}, 1},
                      Case{"nan_first", {kNaN, kInf, 2.0f}, 0},
                      Case{"nan_beats_inf", {kInf, 2.0f, kNaN}, 2},
                      Case{"first_of_two_nans", {1.0f, kNaN, 5.0f, kNaN}, 1},
                      Case{"negative_nan", {-5.0f, from_bits(0xFFC00000u), 3.0f}, 1}),
    [](const ::testing::TestParamInfo<Case>& info) { return std::string(info.param.name); });

// ---- whole arrays over the size list ---------------------------------------------------------

class ArgmaxRandom : public ArgmaxTest, public ::testing::WithParamInterface<std::size_t> {};

TEST_P(ArgmaxRandom, MatchesReference) {
  const std::size_t n = GetParam();
  {
    SCOPED_TRACE("random signs and magnitudes");
    const std::vector<float> host = signed_mix(n, test_seed() ^ n, 0.001, 0.0);
    expect_index((*run_)(host), reference_argmax(host), &host, n);
  }
  {
    SCOPED_TRACE("all negative (a start value of 0 would never be beaten)");
    const std::vector<float> host = all_negative(n, test_seed() + n);
    expect_index((*run_)(host), reference_argmax(host), &host, n);
  }
}

INSTANTIATE_TEST_SUITE_P(Sizes, ArgmaxRandom, ::testing::ValuesIn(kSizes),
                         ::testing::PrintToStringParamName());

// ---- the largest element where index bugs live -----------------------------------------------

std::vector<std::size_t> boundary_positions(std::size_t n) {
  return {0,    1,    31,   32,   33,    255,   256,   257,   511,   512,   1023,
          1024, 1025, 2047, 2048, n / 2, n - 33, n - 32, n - 31, n - 2, n - 1};
}

class ArgmaxSentinel : public ArgmaxTest, public ::testing::WithParamInterface<std::size_t> {};

TEST_P(ArgmaxSentinel, FindsTheOnlyLargest) {
  const std::size_t n = GetParam();
  std::vector<float> host = all_negative(n, test_seed() * 7 + n);
  DeviceBuffer<float> in(host);
  for (std::size_t p : boundary_positions(n)) {
    if (p >= n) continue;
    SCOPED_TRACE("largest element at index " + std::to_string(p) + " of " + std::to_string(n));
    const float saved = host[p];
    host[p] = 1.0f;
    set_element(in.data(), p, 1.0f);
    expect_index((*run_)(in.data(), n), static_cast<std::int64_t>(p), &host, n);
    host[p] = saved;
    set_element(in.data(), p, saved);
  }
}

INSTANTIATE_TEST_SUITE_P(Sizes, ArgmaxSentinel,
                         ::testing::Values<std::size_t>(1025, 65537, (1u << 20) + 7),
                         ::testing::PrintToStringParamName());

// ---- ties ------------------------------------------------------------------------------------

class ArgmaxTies : public ArgmaxTest, public ::testing::WithParamInterface<std::size_t> {};

TEST_P(ArgmaxTies, FirstIndexWins) {
  const std::size_t n = GetParam();
  // Sets of tied places, listed in no particular order: in the same warp, across warps, across
  // blocks, first and last, and ones whose first member sits in a later block than others'.
  const std::vector<std::vector<std::size_t>> sets = {
      {5, 6},          {31, 32},           {33, 300},       {n - 1, 1000, 257},
      {n - 1, n / 2},  {n - 2, n - 1},     {0, n - 1},      {n / 2 + 1, n / 2, n - 1},
      {2048, 70000, 1u << 20}};
  for (const auto& positions : sets) {
    std::vector<std::size_t> in_range;
    for (std::size_t p : positions) {
      if (p < n) in_range.push_back(p);
    }
    if (in_range.size() < 2) continue;
    const std::int64_t first =
        static_cast<std::int64_t>(*std::min_element(in_range.begin(), in_range.end()));
    std::string where;
    for (std::size_t p : in_range) where += std::to_string(p) + " ";
    SCOPED_TRACE("the largest value at indices " + where + "of " + std::to_string(n));
    const std::vector<float> host = ties(n, test_seed() + in_range[0], 10.0f, in_range);
    ASSERT_EQ(reference_argmax(host), first);
    expect_index((*run_)(host), first, &host, n);
  }
  {
    SCOPED_TRACE("every element equal");
    const std::vector<float> host(n, -2.5f);
    expect_index((*run_)(host), 0, &host, n);
  }
  {
    SCOPED_TRACE("every element -inf");
    const std::vector<float> host(n, -kInf);
    expect_index((*run_)(host), 0, &host, n);
  }
  {
    SCOPED_TRACE("every element +inf");
    const std::vector<float> host(n, kInf);
    expect_index((*run_)(host), 0, &host, n);
  }
}

INSTANTIATE_TEST_SUITE_P(Sizes, ArgmaxTies,
                         ::testing::Values<std::size_t>(1000, 65537, (1u << 20) + 7, 1u << 24),
                         ::testing::PrintToStringParamName());

class ArgmaxSignedZeros : public ArgmaxTest, public ::testing::WithParamInterface<std::size_t> {};

TEST_P(ArgmaxSignedZeros, TieAndFirstWins) {
  const std::size_t n = GetParam();
  for (const auto& [early, late] : {std::pair{-0.0f, 0.0f}, std::pair{0.0f, -0.0f}}) {
    for (const auto& [p, q] : {std::pair<std::size_t, std::size_t>{3, n - 1},
                               std::pair<std::size_t, std::size_t>{n / 2, n / 2 + 1},
                               std::pair<std::size_t, std::size_t>{40, 1500}}) {
      if (q >= n || p >= q) continue;
      SCOPED_TRACE(std::string(std::signbit(early) ? "-0.0" : "+0.0") + " at " +
                   std::to_string(p) + ", " + (std::signbit(late) ? "-0.0" : "+0.0") + " at " +
                   std::to_string(q) + ", negatives elsewhere: +0.0 and -0.0 tie");
      std::vector<float> host = all_negative(n, test_seed() + p);
      host[p] = early;
      host[q] = late;
      expect_index((*run_)(host), static_cast<std::int64_t>(p), &host, n);
    }
  }
  {
    SCOPED_TRACE("+0.0 and -0.0 at random: the first element is a maximum");
    const std::vector<float> host = signed_zeros(n, test_seed() + 17);
    expect_index((*run_)(host), 0, &host, n);
  }
}

INSTANTIATE_TEST_SUITE_P(Sizes, ArgmaxSignedZeros,
                         ::testing::Values<std::size_t>(33, 2049, (1u << 20) + 7),
                         ::testing::PrintToStringParamName());

// ---- NaN -------------------------------------------------------------------------------------

class ArgmaxNaN : public ArgmaxTest, public ::testing::WithParamInterface<std::size_t> {};

TEST_P(ArgmaxNaN, FirstNaNWins) {
  const std::size_t n = GetParam();
  std::vector<float> base = all_negative(n, test_seed() + 5 * n);
  place(base, {n / 3}, kInf);  // a NaN must beat +inf
  for (const std::vector<std::size_t>& nans :
       std::vector<std::vector<std::size_t>>{{0}, {n / 2}, {n - 1}, {n - 1, n / 2, 37},
                                             {n - 1, 1024, 1023}, {n - 2, n - 1}}) {
    std::vector<float> host = base;
    std::vector<std::size_t> in_range;
    for (std::size_t p : nans) {
      if (p < n) in_range.push_back(p);
    }
    if (in_range.empty()) continue;
    place(host, in_range, kNaN);
    const std::int64_t first =
        static_cast<std::int64_t>(*std::min_element(in_range.begin(), in_range.end()));
    std::string where;
    for (std::size_t p : in_range) where += std::to_string(p) + " ";
    SCOPED_TRACE("NaN at indices " + where + "of " + std::to_string(n));
    ASSERT_EQ(reference_argmax(host), first);
    expect_index((*run_)(host), first, &host, n);
  }
}

INSTANTIATE_TEST_SUITE_P(Sizes, ArgmaxNaN,
                         ::testing::Values<std::size_t>(1, 2, 33, 1025, 65537, (1u << 20) + 7),
                         ::testing::PrintToStringParamName());

// ---- no cached or hard-coded answers, no writes to the input ---------------------------------

TEST_F(ArgmaxTest, EveryCallComputesAfresh) {
  const std::size_t n = (1u << 20) + 7;
  std::vector<std::vector<float>> hosts;
  std::vector<DeviceBuffer<float>> inputs;
  for (std::uint64_t k = 0; k < 3; ++k) {
    hosts.push_back(signed_mix(n, test_seed() * 31 + k, 0.0, 0.0));
    inputs.emplace_back(hosts.back());
  }
  for (int call : {0, 1, 2, 0, 2, 1, 1}) {
    SCOPED_TRACE("input " + std::to_string(call));
    expect_index((*run_)(inputs[call].data(), n), reference_argmax(hosts[call]), &hosts[call], n);
  }
  for (int k = 0; k < 3; ++k) {
    EXPECT_TRUE(inputs[k].to_host() == hosts[k]) << "the lab modified its input " << k;
  }
}

// ---- beyond 2^31 elements --------------------------------------------------------------------

/// x[i] = -1 - (i mod 1000): all negative, the largest (-1) at every multiple of 1000.
__global__ void fill_negative_pattern(float* x, std::size_t n) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    x[i] = -1.0f - static_cast<float>(i % 1000);
  }
}

TEST_F(ArgmaxTest, AboveInt32Range) {
  const std::size_t n = (std::size_t{1} << 31) + (1u << 20) + 3;
  if (!enough_device_memory(n * sizeof(float) + argmax_workspace_bytes(n))) {
    GTEST_SKIP() << "needs " << (n * sizeof(float) >> 20) << " MiB of free device memory";
  }
  DeviceBuffer<float> in(n);
  fill_negative_pattern<<<4096, 256>>>(in.data(), n);
  REDUCE_CUDA_CHECK_LAUNCH();
  REDUCE_CUDA_CHECK(cudaDeviceSynchronize());
  const std::size_t two31 = std::size_t{1} << 31;
  {
    SCOPED_TRACE("-1 at every multiple of 1000: the first is index 0");
    expect_index((*run_)(in.data(), n), 0, in.data(), n);
  }
  {
    SCOPED_TRACE("the largest element at index 2^31 + 7: a 32-bit index wraps there");
    set_element(in.data(), two31 + 7, 5.0f);
    expect_index((*run_)(in.data(), n), static_cast<std::int64_t>(two31 + 7), in.data(), n);
  }
  {
    SCOPED_TRACE("a tie at the last index: still 2^31 + 7");
    set_element(in.data(), n - 1, 5.0f);
    expect_index((*run_)(in.data(), n), static_cast<std::int64_t>(two31 + 7), in.data(), n);
  }
  {
    SCOPED_TRACE("a NaN at the last index, then one at 2^31 + 3");
    set_element(in.data(), n - 1, kNaN);
    expect_index((*run_)(in.data(), n), static_cast<std::int64_t>(n - 1), in.data(), n);
    set_element(in.data(), two31 + 3, kNaN);
    expect_index((*run_)(in.data(), n), static_cast<std::int64_t>(two31 + 3), in.data(), n);
  }
}

}  // namespace
}  // namespace reduce::testing
