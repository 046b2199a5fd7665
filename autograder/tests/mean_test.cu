// The mean suite: linked with every lab that implements reduce::mean (lab 12).
//
// Exact by construction: small integers whose every partial sum is exact in float give an
// exact sum in any order; the mean is then that sum divided by n and rounded once to float,
// compared bitwise. Long runs of ones: the mean of 2^30 ones (4 GiB, skipped when the GPU lacks
// the memory) must be exactly 1, as the contract says, and other long runs within the bound
// below; a single float accumulator stops growing at 2^24 and gives 2^24 / n (1/64 for 2^30). Realistic data is compared with a double reference within
// mean_error_bound(tree_depth(n), ...) (reference.hpp): the tree sum's bound divided by n, plus
// 2u |mean| for the division and the final rounding. n == 0 must write NaN (as numpy).
#include "gpu_test.hpp"

#include <reduce/device_buffer.cuh>
#include <reduce/generators.hpp>
#include <reduce/lab.cuh>
#include <reduce/reference.hpp>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <ostream>
#include <string>
#include <tuple>
#include <vector>

namespace reduce::testing {
namespace {

/// A float with its bit pattern.
std::string describe(float v) {
  char text[64];
  std::snprintf(text, sizeof text, "%.9g (bits 0x%08X)", static_cast<double>(v), bits(v));
  return text;
}

/// Calls the lab's mean the way the grader does: on its own stream, output and workspace
/// poisoned (0xFF bytes, a NaN, unless \p poison says otherwise), and a guard float after the
/// output that must stay intact.
class MeanRunner {
 public:
  float operator()(const float* in, std::size_t n, int poison = kPoisonByte) {
    out_.fill_bytes(poison, stream_.get());
    DeviceBuffer<unsigned char> workspace(mean_workspace_bytes(n));
    workspace.fill_bytes(kPoisonByte, stream_.get());
    mean(in, n, out_.data(), Workspace{workspace.data(), workspace.bytes()}, stream_.get());
    stream_.synchronize();
    const std::vector<float> host = out_.to_host();
    std::uint32_t guard = 0;
    std::memset(&guard, poison, sizeof guard);
    EXPECT_EQ(bits(host[1]), guard) << "the lab wrote past its one-float output";
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

class MeanTest : public ::testing::Test {
 protected:
  void SetUp() override {
    REDUCE_REQUIRE_GPU();
    run_ = std::make_unique<MeanRunner>();
  }
  std::unique_ptr<MeanRunner> run_;
};

/// Bitwise comparison with a message that tells a student what the difference suggests.
void expect_exact(float got, float want, std::size_t n, const std::string& about) {
  if (bits(got) == bits(want)) return;
  std::string hint;
  if (std::isnan(got)) {
    hint = "NaN: the output (poisoned with 0xFF bytes, a NaN) was never written, or a poisoned "
           "workspace value was read.";
  } else if (n > (std::size_t{1} << 24) && got < want) {
    hint = "Too small for a long input: elements were missed (a 32-bit index stops at 2^31), "
           "or a float running sum stopped growing at 2^24 (adding 1 to 16,777,216 rounds back "
           "to 16,777,216). Keep float chains short (per thread), add the partials in double, "
           "and divide once, in double.";
  } else {
    hint = "The sum of this input is exact in any order, so the mean is that sum divided by n "
           "in double and rounded once to float: elements were dropped, repeated or read out "
           "of range, or the division was rounded twice (in float, or by a float n).";
  }
  ADD_FAILURE() << "n = " << n << " (" << about << "): got " << describe(got) << ", expected "
                << describe(want) << ". " << hint;
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

TEST_F(MeanTest, EmptyInputIsNaN) {
  DeviceBuffer<float> in(1);
  in.fill_bytes(0x3F);
  // Poison with 0x3F bytes (0.747): the usual 0xFF poison is itself a NaN and would let a lab
  // that writes nothing pass.
  const float got = (*run_)(in.data(), 0, 0x3F);
  EXPECT_TRUE(std::isnan(got)) << "the mean of no elements is NaN (0/0, as numpy); got "
                               << describe(got)
                               << (bits(got) == 0x3F3F3F3Fu ? ": the output was never written"
                                                            : "");
}

// ---- exact by construction, over the size list -----------------------------------------------

class MeanExact : public MeanTest, public ::testing::WithParamInterface<std::size_t> {};

TEST_P(MeanExact, MatchesBitwise) {
  const std::size_t n = GetParam();
  const std::vector<float> host = exact_integers(n, test_seed() + n);
  const float want = static_cast<float>(reference_mean(host));
  expect_exact((*run_)(host), want, n, "exact integers");
}

INSTANTIATE_TEST_SUITE_P(Sizes, MeanExact,
                         ::testing::Values<std::size_t>(1, 2, 31, 32, 33, 255, 256, 257, 1023,
                                                        1024, 1025, 65535, 65536, 65537,
                                                        (1u << 20) + 7, 1u << 24, 300000000),
                         ::testing::PrintToStringParamName());

// ---- one non-zero at the places where index bugs live ----------------------------------------

class MeanSentinel : public MeanTest, public ::testing::WithParamInterface<std::size_t> {};

TEST_P(MeanSentinel, FindsTheOnlyNonZero) {
  const std::size_t n = GetParam();
  const std::vector<std::size_t> positions = {0,    1,    31,   32,    33,    255,   256,
                                              511,  512,  1023, 1024,  2047,  2048,  n / 2,
                                              n - 33, n - 32, n - 2, n - 1};
  DeviceBuffer<float> in(n);
  in.fill_bytes(0);
  const float value = static_cast<float>(n);  // exact for these sizes: the mean is exactly 1
  for (std::size_t p : positions) {
    if (p >= n) continue;
    set_element(in.data(), p, value);
    expect_exact((*run_)(in.data(), n), 1.0f, n,
                 "n at index " + std::to_string(p) +
                     ", zeros elsewhere (0: never read; 2: read twice)");
    set_element(in.data(), p, 0.0f);
  }
}

INSTANTIATE_TEST_SUITE_P(Sizes, MeanSentinel,
                         ::testing::Values<std::size_t>(1025, 65537, (1u << 20) + 7),
                         ::testing::PrintToStringParamName());

// ---- long runs of ones ------------------------------------------------------------------------

class MeanOfOnes : public MeanTest, public ::testing::WithParamInterface<std::size_t> {};

TEST_P(MeanOfOnes, IsOne) {
  const std::size_t n = GetParam();
  if (!enough_device_memory(n * sizeof(float) + mean_workspace_bytes(n))) {
    GTEST_SKIP() << "needs " << (n * sizeof(float) >> 20) << " MiB of free device memory";
  }
  const DeviceBuffer<float> in = constant(n, 1.0f);
  const float got = (*run_)(in.data(), n);
  if (n == (std::size_t{1} << 30)) {
    // The contract's own example: a tree of float partial sums of ones whose chunks are powers
    // of two is exact, and so is a double sum; either way the mean is exactly 1.
    expect_exact(got, 1.0f, n, "2^30 ones, the contract's example");
    return;
  }
  // Other lengths: a float tree may round its larger partial sums (2^24 + 1 is not a float),
  // so the derived bound applies; a single float running sum (stuck at 2^24) is far outside.
  const double bound = mean_error_bound(tree_depth(n), n, static_cast<double>(n), 1.0);
  EXPECT_LE(std::fabs(static_cast<double>(got) - 1.0), bound)
      << "n = " << n << " ones: got " << describe(got) << ", expected 1 within " << bound
      << ". A float running sum stops growing at 2^24 (adding 1 to 16,777,216 rounds back to "
         "16,777,216), which gives 2^24 / n. Keep float chains short (per thread) and add the "
         "partials in double; divide once, in double.";
}

INSTANTIATE_TEST_SUITE_P(Sizes, MeanOfOnes,
                         ::testing::Values<std::size_t>((1u << 24) + 1, (1u << 25) + 3,
                                                        300000000, std::size_t{1} << 30),
                         ::testing::PrintToStringParamName());

// ---- realistic data within the derived bound -------------------------------------------------

enum class Kind { kUniform, kMixedSign, kWideRange, kLargeOffset };
const char* const kKindNames[] = {"uniform", "mixed_sign", "wide_range", "large_offset"};

void PrintTo(Kind kind, std::ostream* os) { *os << kKindNames[static_cast<int>(kind)]; }

std::vector<float> make(Kind kind, std::size_t n, std::uint64_t seed) {
  switch (kind) {
    case Kind::kUniform: return uniform(n, seed, 0.0f, 1.0f);
    case Kind::kMixedSign: return mixed_sign(n, seed);
    case Kind::kWideRange: return wide_range(n, seed);
    case Kind::kLargeOffset: return uniform(n, seed, 1000.0f, 1001.0f);  // sums pass 2^24 early
  }
  return {};
}

class MeanRealistic : public MeanTest,
                      public ::testing::WithParamInterface<std::tuple<Kind, std::size_t>> {};

TEST_P(MeanRealistic, WithinErrorBound) {
  const auto [kind, n] = GetParam();
  const std::vector<float> host = make(kind, n, test_seed() ^ n);
  const double exact = reference_mean(host);
  const double bound = mean_error_bound(tree_depth(n), n, absolute_sum(host), exact);
  const float got = (*run_)(host);
  EXPECT_LE(std::fabs(static_cast<double>(got) - exact), bound)
      << "n = " << n << ": got " << describe(got) << ", reference " << exact << ", bound "
      << bound << " ((1 + 2u) (gamma(depth + 1) sum|x| / n + 2u |mean|), depth " << tree_depth(n)
      << "). A float running sum over the whole input, or a division in float, can exceed it.";
}

std::string realistic_name(const ::testing::TestParamInfo<std::tuple<Kind, std::size_t>>& info) {
  return std::string(kKindNames[static_cast<int>(std::get<0>(info.param))]) + "_" +
         std::to_string(std::get<1>(info.param));
}

INSTANTIATE_TEST_SUITE_P(Data, MeanRealistic,
                         ::testing::Combine(::testing::Values(Kind::kUniform, Kind::kMixedSign,
                                                              Kind::kWideRange,
                                                              Kind::kLargeOffset),
                                            ::testing::Values<std::size_t>(1000, (1u << 20) + 7,
                                                                           1u << 24)),
                         realistic_name);

// ---- no cached or hard-coded answers, no writes to the input ---------------------------------

TEST_F(MeanTest, EveryCallComputesAfresh) {
  const std::size_t n = (1u << 20) + 7;
  std::vector<std::vector<float>> hosts;
  std::vector<DeviceBuffer<float>> inputs;
  for (std::uint64_t k = 0; k < 3; ++k) {
    hosts.push_back(exact_integers(n, test_seed() * 31 + k));
    inputs.emplace_back(hosts.back());
  }
  for (int call : {0, 1, 2, 0, 2, 1, 1}) {
    expect_exact((*run_)(inputs[call].data(), n), static_cast<float>(reference_mean(hosts[call])),
                 n, "input " + std::to_string(call));
  }
  for (int k = 0; k < 3; ++k) {
    EXPECT_TRUE(inputs[k].to_host() == hosts[k]) << "the lab modified its input " << k;
  }
}

// ---- beyond 2^31 elements --------------------------------------------------------------------

TEST_F(MeanTest, AboveInt32Range) {
  const std::size_t n = (std::size_t{1} << 31) + (1u << 20) + 3;
  if (!enough_device_memory(n * sizeof(float) + mean_workspace_bytes(n))) {
    GTEST_SKIP() << "needs " << (n * sizeof(float) >> 20) << " MiB of free device memory";
  }
  // Zeros with a few small integers on both sides of index 2^31 and at the end: the sum (16)
  // is exact in any order, so the mean, 16 / n rounded once, is compared bitwise. A 32-bit
  // index misses or misplaces the elements beyond 2^31.
  DeviceBuffer<float> in(n);
  in.fill_bytes(0);
  const std::size_t two31 = std::size_t{1} << 31;
  set_element(in.data(), 0, 1.0f);
  set_element(in.data(), two31 - 1, 3.0f);
  set_element(in.data(), two31 + 9, 5.0f);
  set_element(in.data(), n - 1, 7.0f);
  const float want = static_cast<float>(16.0 / static_cast<double>(n));
  expect_exact((*run_)(in.data(), n), want, n,
               "zeros, with 1, 3, 5, 7 at indices 0, 2^31 - 1, 2^31 + 9 and n - 1");
}

}  // namespace
}  // namespace reduce::testing
