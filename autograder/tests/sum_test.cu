// The sum suite: linked with every lab that implements reduce::sum (labs 01-09 and the capstone).
// Inputs are built so that a wrong kernel cannot pass: exact integers compared bitwise, single
// sentinels at block and warp boundaries, realistic data within a derived error bound, rotating
// inputs, poisoned outputs and workspaces, and one input longer than 2^31 elements.
#include "gpu_test.hpp"

#include <reduce/device_buffer.cuh>
#include <reduce/generators.hpp>
#include <reduce/lab.cuh>
#include <reduce/reference.hpp>

#include <cmath>
#include <memory>
#include <ostream>
#include <string>
#include <tuple>
#include <vector>

namespace reduce::testing {
namespace {

// The suite is reused by other modes of the sum (sum_deterministic_test.cu adds to it).

/// Error depth of the lab under test (set per lab in cmake/CourseLabs.cmake).
std::size_t lab_depth(std::size_t n) {
#if REDUCE_SERIAL_ORDER
  return serial_depth(n);
#else
  return tree_depth(n);
#endif
}

/// Calls the lab's sum the way the grader does: on its own stream, with the output and the
/// workspace poisoned first, and a guard float after the output that must stay untouched.
class SumRunner {
 public:
  float operator()(const float* in, std::size_t n) {
    out_.fill_bytes(kPoisonByte, stream_.get());
    DeviceBuffer<unsigned char> workspace(sum_workspace_bytes(n));
    workspace.fill_bytes(kPoisonByte, stream_.get());
    sum(in, n, out_.data(), Workspace{workspace.data(), workspace.bytes()}, stream_.get());
    stream_.synchronize();
    const std::vector<float> host = out_.to_host();
    EXPECT_EQ(bits(host[1]), 0xFFFFFFFFu) << "the lab wrote past its one-float output";
    return host[0];
  }

 private:
  Stream stream_;
  DeviceBuffer<float> out_{2};
};

class SumTest : public ::testing::Test {
 protected:
  void SetUp() override {
    REDUCE_REQUIRE_GPU();
    run_ = std::make_unique<SumRunner>();
  }
  std::unique_ptr<SumRunner> run_;
};

/// Exact comparison with a message that tells a student what the difference suggests.
void expect_exact(float got, double expected, std::size_t n) {
  const float want = static_cast<float>(expected);
  EXPECT_EQ(bits(got), bits(want))
      << "n = " << n << ": got " << got << ", expected exactly " << want << " (difference "
      << static_cast<double>(got) - expected
      << "). Every partial sum of this input is exact in float, so any correct order gives "
         "this result; a difference means elements were dropped, added twice, or read out of "
         "range (NaN: the output was never written).";
}

// ---- empty input -------------------------------------------------------------------------

TEST_F(SumTest, EmptyInputIsPositiveZero) {
  DeviceBuffer<float> in(1);
  in.fill_bytes(0x3F);  // a non-zero value that must not be read
  const float got = (*run_)(in.data(), 0);
  EXPECT_EQ(bits(got), bits(0.0f)) << "the sum of no elements is +0.0f; got " << got;
}

// ---- exact by construction, over the size list ---------------------------------------------

class SumExact : public SumTest, public ::testing::WithParamInterface<std::size_t> {};

TEST_P(SumExact, MatchesBitwise) {
  const std::size_t n = GetParam();
  const std::vector<float> host = exact_integers(n, test_seed() + n);
  const DeviceBuffer<float> in(host);
  expect_exact((*run_)(in.data(), n), reference_sum(host), n);
}

INSTANTIATE_TEST_SUITE_P(Sizes, SumExact,
                         ::testing::Values<std::size_t>(1, 2, 31, 32, 33, 255, 256, 257, 1023,
                                                        1024, 1025, 4095, 4096, 4097, 16384,
                                                        32768, 65535, 65536, 65537,
                                                        (1u << 20) + 7, 1u << 24, 300000000),
                         ::testing::PrintToStringParamName());

// ---- one sentinel at the places where index bugs live --------------------------------------

class SumSentinel : public SumTest, public ::testing::WithParamInterface<std::size_t> {};

TEST_P(SumSentinel, FindsTheOnlyNonZero) {
  const std::size_t n = GetParam();
  const std::vector<std::size_t> positions = {0,    1,    31,   32,    33,    255,   256,
                                              511,  512,  1023, 1024,  2047,  2048,  n / 2,
                                              n - 33, n - 32, n - 2, n - 1};
  DeviceBuffer<float> in(n);
  in.fill_bytes(0);
  const float one = 1.0f, zero = 0.0f;
  for (std::size_t p : positions) {
    if (p >= n) continue;
    SCOPED_TRACE("sentinel at index " + std::to_string(p) + " of " + std::to_string(n));
    copy_to_device(in.data() + p, &one, 1);
    const float got = (*run_)(in.data(), n);
    EXPECT_EQ(bits(got), bits(1.0f))
        << "got " << got << ": 0 means the element was never read, 2 that it was added twice";
    copy_to_device(in.data() + p, &zero, 1);
  }
}

INSTANTIATE_TEST_SUITE_P(Sizes, SumSentinel,
                         ::testing::Values<std::size_t>(1025, 4096, 32768, 65537, (1u << 20) + 7),
                         ::testing::PrintToStringParamName());

// ---- realistic data within the bound of the lab's summation order --------------------------

enum class Kind { kUniform, kMixedSign, kWideRange };
const char* const kKindNames[] = {"uniform", "mixed_sign", "wide_range"};

void PrintTo(Kind kind, std::ostream* os) { *os << kKindNames[static_cast<int>(kind)]; }

std::vector<float> make(Kind kind, std::size_t n, std::uint64_t seed) {
  switch (kind) {
    case Kind::kUniform: return uniform(n, seed, 0.0f, 1.0f);
    case Kind::kMixedSign: return mixed_sign(n, seed);
    case Kind::kWideRange: return wide_range(n, seed);
  }
  return {};
}

class SumRealistic : public SumTest,
                     public ::testing::WithParamInterface<std::tuple<Kind, std::size_t>> {};

TEST_P(SumRealistic, WithinErrorBound) {
  const auto [kind, n] = GetParam();
  const std::vector<float> host = make(kind, n, test_seed() ^ n);
  const DeviceBuffer<float> in(host);
  const double exact = reference_sum(host);
  const double bound = sum_error_bound(lab_depth(n), n, absolute_sum(host));
  const float got = (*run_)(in.data(), n);
  EXPECT_LE(std::fabs(static_cast<double>(got) - exact), bound)
      << "n = " << n << ": got " << got << ", reference " << exact << ", bound " << bound
      << " (gamma(depth + 1) * sum|x| with depth " << lab_depth(n) << ")";
}

std::string realistic_name(const ::testing::TestParamInfo<std::tuple<Kind, std::size_t>>& info) {
  return std::string(kKindNames[static_cast<int>(std::get<0>(info.param))]) + "_" +
         std::to_string(std::get<1>(info.param));
}

INSTANTIATE_TEST_SUITE_P(Data, SumRealistic,
                         ::testing::Combine(::testing::Values(Kind::kUniform, Kind::kMixedSign,
                                                              Kind::kWideRange),
                                            ::testing::Values<std::size_t>(1000, (1u << 20) + 7,
                                                                           1u << 24)),
                         realistic_name);

// ---- no cached or hard-coded answers, no writes to the input --------------------------------

TEST_F(SumTest, EveryCallComputesAfresh) {
  const std::size_t n = (1u << 20) + 7;
  std::vector<std::vector<float>> hosts;
  std::vector<DeviceBuffer<float>> inputs;
  for (std::uint64_t k = 0; k < 3; ++k) {
    hosts.push_back(exact_integers(n, test_seed() * 31 + k));
    inputs.emplace_back(hosts.back());
  }
  for (int call : {0, 1, 2, 0, 2, 1, 1}) {
    SCOPED_TRACE("input " + std::to_string(call));
    expect_exact((*run_)(inputs[call].data(), n), reference_sum(hosts[call]), n);
  }
  for (int k = 0; k < 3; ++k) {
    EXPECT_TRUE(inputs[k].to_host() == hosts[k]) << "the lab modified its input " << k;
  }
}

// ---- any alignment ----------------------------------------------------------------------------

TEST_F(SumTest, UnalignedStart) {
  const std::size_t n = (1u << 20) + 7;
  const std::vector<float> host = exact_integers(n + 3, test_seed() + 77);
  const DeviceBuffer<float> in(host);
  for (std::size_t offset : {1, 2, 3}) {  // in + offset is 4-byte but not 16-byte aligned
    SCOPED_TRACE("input starts " + std::to_string(offset) + " floats past a 16-byte boundary");
    const std::vector<float> part(host.begin() + offset, host.begin() + offset + n);
    expect_exact((*run_)(in.data() + offset, n), reference_sum(part), n);
    // Short inputs too: 5 floats, and a whole number of 4096-float tiles plus 3 edge floats.
    for (std::size_t m : {std::size_t{5}, std::size_t{4096 + 3}}) {
      const std::vector<float> prefix(part.begin(), part.begin() + m);
      expect_exact((*run_)(in.data() + offset, m), reference_sum(prefix), m);
    }
  }
}

// ---- beyond 2^31 elements --------------------------------------------------------------------

/// x[i] = exact_integer_at(n, seed, i): the host generator's values, written in place on the GPU
/// (generating and copying 8 GiB on the host would cost seconds per test binary).
__global__ void fill_exact_integers(float* x, std::size_t n, std::uint64_t seed) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    x[i] = exact_integer_at(n, seed, i);
  }
}

TEST_F(SumTest, AboveInt32Range) {
  const std::size_t n = (std::size_t{1} << 31) + (1u << 20) + 3;
  if (!enough_device_memory(n * sizeof(float) + sum_workspace_bytes(n))) {
    GTEST_SKIP() << "needs " << (n * sizeof(float) >> 20) << " MiB of free device memory";
  }
  const std::uint64_t seed = test_seed() + 0x31;
  DeviceBuffer<float> in(n);
  fill_exact_integers<<<4096, 256>>>(in.data(), n, seed);
  REDUCE_CUDA_CHECK_LAUNCH();
  REDUCE_CUDA_CHECK(cudaDeviceSynchronize());
  double want = exact_integers_sum(n, seed);
  // Ones on both sides of index 2^31 and at the very end: an int index misses or misplaces them.
  for (std::size_t at : {(std::size_t{1} << 31) - 1, std::size_t{1} << 31, n - 1}) {
    want += 1.0 - exact_integer_at(n, seed, at);
    set_element(in.data(), at, 1.0f);
  }
  expect_exact((*run_)(in.data(), n), want, n);
}

}  // namespace
}  // namespace reduce::testing
