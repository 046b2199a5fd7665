// The sum suite: every lab that implements a mode of the sum (labs 01-09, 15, 16 and 18) passes
// it on its own entry point (SumTest, sum_suite.hpp). Inputs are built so that a wrong kernel
// cannot pass: exact integers compared bitwise, single sentinels at block and warp boundaries,
// realistic data within a derived error bound, rotating inputs, poisoned outputs and workspaces,
// one input longer than 2^31 elements and one longer than 2^32, which any GPU can hold (mapped
// memory, mapped_input.hpp). Every input here is exact or within the float tree's
// bound, which a more accurate sum (lab 18) meets too; subnormal input within that bound plus what
// flushing subnormals to zero may lose (lab.cuh, sum()), which a sum that keeps them meets too.
#include "mapped_input.hpp"
#include "sum_suite.hpp"

#include <reduce/device_buffer.cuh>
#include <reduce/generators.hpp>
#include <reduce/lab_entry_points.cuh>
#include <reduce/reference.hpp>

#include <cmath>
#include <cstdint>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace reduce::testing {
namespace {

/// Error depth of the lab under test: its summation order comes from --lab-order.
std::size_t lab_depth(std::size_t n) {
  const std::string order = lab_order();
  if (order == "serial") return serial_depth(n);
  return order == "tree_atomic" ? tree_atomic_depth(n) : tree_depth(n);
}

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
  const float got = run(in.data(), 0);
  EXPECT_EQ(bits(got), bits(0.0f)) << "the sum of no elements is +0.0f; got " << got;
}

// ---- exact by construction, over the size list ---------------------------------------------

class SumExact : public SumTest, public ::testing::WithParamInterface<std::size_t> {};

TEST_P(SumExact, MatchesBitwise) {
  const std::size_t n = GetParam();
  const std::uint64_t seed = input_seed(n);
  const DeviceBuffer<float> in = exact_integers_on_device(n, seed);
  expect_exact(run(in.data(), n), exact_integers_sum(n, seed), n);
}

INSTANTIATE_TEST_SUITE_P(Sizes, SumExact,
                         ::testing::Values<std::size_t>(1, 2, 31, 32, 33, 255, 256, 257, 1023, 1024,
                                                        1025, 4095, 4096, 4097, 16384, 32768, 65535,
                                                        65536, 65537, (1u << 20) + 7, 1u << 24,
                                                        300000000),
                         ::testing::PrintToStringParamName());

// ---- one sentinel at the places where index bugs live --------------------------------------

class SumSentinel : public SumTest, public ::testing::WithParamInterface<std::size_t> {};

TEST_P(SumSentinel, FindsTheOnlyNonZero) {
  const std::size_t n = GetParam();
  std::vector<Change> sentinels;
  for (std::size_t p : sentinel_positions(n))
    if (p < n) sentinels.push_back({p, 1.0f});
  const std::vector<float> got = run_variants(std::vector<float>(n, 0.0f), sentinels);
  for (std::size_t k = 0; k < sentinels.size(); ++k)
    EXPECT_EQ(bits(got[k]), bits(1.0f))
        << "sentinel at index " << sentinels[k].at << " of " << n << ": got " << got[k]
        << ": 0 means the element was never read, 2 that it was added twice";
}

INSTANTIATE_TEST_SUITE_P(Sizes, SumSentinel,
                         ::testing::Values<std::size_t>(1025, 4096, 32768, 65537, (1u << 20) + 7),
                         ::testing::PrintToStringParamName());

// ---- realistic data within the bound of the lab's summation order --------------------------

class SumRealistic : public SumTest,
                     public ::testing::WithParamInterface<std::tuple<Data, std::size_t>> {};

TEST_P(SumRealistic, WithinErrorBound) {
  const auto [kind, n] = GetParam();
  const std::vector<float> host = make_data(kind, n, input_seed(n));
  const DeviceBuffer<float> in(host);
  const double exact = reference_sum(host);
  const double bound = sum_error_bound(lab_depth(n), n, absolute_sum(host));
  const float got = run(in.data(), n);
  EXPECT_LE(std::fabs(static_cast<double>(got) - exact), bound)
      << "n = " << n << ": got " << got << ", reference " << exact << ", bound " << bound
      << " (gamma(depth + 1) * sum|x| with depth " << lab_depth(n) << ")";
}

INSTANTIATE_TEST_SUITE_P(
    Data, SumRealistic,
    ::testing::Combine(::testing::Values(Data::kUniform, Data::kMixedSign, Data::kWideRange),
                       ::testing::Values<std::size_t>(1000, (1u << 20) + 7, 1u << 24)),
    data_and_size_name);

// ---- no cached or hard-coded answers, no writes to the input --------------------------------

TEST_F(SumTest, EveryCallComputesAfresh) {
  const std::size_t n = (1u << 20) + 7;
  const RotatingInputs inputs(
      3, [n](std::uint64_t k) { return exact_integers(n, input_seed(31, k)); });
  for (int call : kRotation) {
    SCOPED_TRACE("input " + std::to_string(call));
    expect_exact(run(inputs.device(call), n), reference_sum(inputs.host(call)), n);
  }
  inputs.expect_unmodified();
}

// ---- any alignment ----------------------------------------------------------------------------

TEST_F(SumTest, UnalignedStart) {
  const std::size_t n = (1u << 20) + 7;
  const std::vector<float> host = exact_integers(n + 3, input_seed(77));
  const DeviceBuffer<float> in(host);
  for (std::size_t offset : {1, 2, 3}) {  // in + offset is 4-byte but not 16-byte aligned
    SCOPED_TRACE("input starts " + std::to_string(offset) + " floats past a 16-byte boundary");
    const std::vector<float> part(host.begin() + offset, host.begin() + offset + n);
    expect_exact(run(in.data() + offset, n), reference_sum(part), n);
    // Short inputs too: 5 floats, and a whole number of 4096-float tiles plus 3 edge floats.
    for (std::size_t m : {std::size_t{5}, std::size_t{4096 + 3}}) {
      const std::vector<float> prefix(part.begin(), part.begin() + m);
      expect_exact(run(in.data() + offset, m), reference_sum(prefix), m);
    }
  }
}

// ---- subnormal input -------------------------------------------------------------------------
// A float atomicAdd to global memory flushes subnormal operands and results to zero on every GPU
// the course builds for, without -ftz (docs/results/atomics/float_atomic_ftz.txt); lab 01 and the
// capstone's fast mode use it. The contract (lab.cuh, sum()) therefore lets a sum flush: the
// result may differ from the exact sum by the bound plus flush_allowance(). These inputs make the
// two kinds of correct kernel differ and leave a wrong sign, NaN or a lost normal value no room.

/// What flushing subnormals to zero may add to the error of a sum of \p n elements evaluated to
/// depth \p depth: each flush loses less than 2^-126; a tree of n elements loses at most n values
/// (by induction, a subtree of k elements loses at most k, and all k only when its value ends as
/// zero, so a flush above it finds nothing of it to lose); the later roundings scale each loss by
/// at most (1 + u)^(depth + 1) <= 1 + gamma(depth + 1).
double flush_allowance(std::size_t depth, std::size_t n) {
  return static_cast<double>(n) * std::ldexp(1.0, -126) * (1.0 + gamma(depth + 1));
}

/// Subnormals m * 2^-149 (m from 1 to 2^23 - 1) of the sign of \p sign; where \p normal_every is
/// not 0, about one element in \p normal_every is instead a normal k * 2^-120 (k from 64 to 255),
/// of the same sign.
std::vector<float> subnormals(std::size_t n, std::uint64_t seed, unsigned normal_every,
                              float sign) {
  std::vector<float> x(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t r = mix(seed, i);
    const bool normal = normal_every != 0 && (r >> 40) % normal_every == 0;
    x[i] = sign * (normal ? std::ldexp(static_cast<float>(64 + (r >> 8) % 192), -120)
                          : from_bits(static_cast<std::uint32_t>(1 + r % 0x7FFFFF)));
  }
  return x;
}

// One normal value in 16: the normal values' sum is some 500 times the flush allowance, and the
// subnormals' sum thousands of units in the last place of the result, so a kernel that keeps
// them and one that flushes them return different floats, both within the promise.
TEST_F(SumTest, SubnormalsBesideNormalsWithinFlushAllowance) {
  for (const std::size_t n : {std::size_t{1000}, (std::size_t{1} << 20) + 7}) {
    for (const float sign : {1.0f, -1.0f}) {
      SCOPED_TRACE("n = " + std::to_string(n) + (sign > 0 ? ", positive" : ", negative"));
      const std::vector<float> host = subnormals(n, input_seed(n, sign > 0), 16, sign);
      const DeviceBuffer<float> in(host);
      const double exact = reference_sum(host);
      const std::size_t depth = lab_depth(n);
      const double bound = sum_error_bound(depth, n, absolute_sum(host));
      const double allowance = flush_allowance(depth, n);
      ASSERT_GT(std::fabs(exact), 4 * (bound + allowance)) << "the input no longer tells signs";
      const float got = run(in.data(), n);
      EXPECT_LE(std::fabs(static_cast<double>(got) - exact), bound + allowance)
          << "got " << got << ", exact " << exact << ": the bound " << bound
          << " plus the flush allowance " << allowance
          << " (n * 2^-126 * (1 + gamma(depth + 1))). A kernel that flushes every subnormal to "
             "zero or keeps them all is within it; NaN, the wrong sign or a lost normal value "
             "is not.";
    }
  }
}

// Subnormals only: flushing may lose all of them, so the promise is their sign, and no more than
// their sum.
TEST_F(SumTest, OnlySubnormalsKeepTheirSign) {
  for (const std::size_t n : {std::size_t{1000}, (std::size_t{1} << 20) + 7}) {
    for (const float sign : {1.0f, -1.0f}) {
      SCOPED_TRACE("n = " + std::to_string(n) + (sign > 0 ? ", positive" : ", negative"));
      const std::vector<float> host = subnormals(n, input_seed(n, sign > 0), 0, sign);
      const DeviceBuffer<float> in(host);
      const double exact = reference_sum(host);
      const double bound = sum_error_bound(lab_depth(n), n, absolute_sum(host));
      const double low = sign > 0 ? 0.0 : exact - bound;
      const double high = sign > 0 ? exact + bound : 0.0;
      const float got = run(in.data(), n);
      EXPECT_TRUE(got >= low && got <= high)
          << "got " << got << ", exact " << exact << ": a sum of subnormals of one sign lies "
          << "between zero (every one flushed) and the exact sum plus the bound " << bound
          << ", so in [" << low << ", " << high << "]";
    }
  }
}

// ---- beyond 2^31 and 2^32 elements, in a few hundred MiB -------------------------------------

/// The body of AboveInt32Range and AboveUint32Range: \p width's input in mapped memory, the
/// period of exact_integers(n, seed)'s start (a +1 in each run of ceil(n / 2^23) elements) with
/// small integers on both sides of 2^31 (and of 2^32 where n passes it) and at the end, in tiles
/// of their own. Every partial sum is exact, so the sum is compared bitwise.
void expect_exact_past(ContractRunner& runner, const FloatLab& lab, const IndexWidth& width) {
  REDUCE_REQUIRE_MAPPED_INPUT();
  const std::size_t two31 = kPastInt32.boundary, two32 = kPastUint32.boundary;
  const std::size_t n = width.n, boundary = width.boundary;
  const std::uint64_t seed = input_seed(width.seed_number);
  std::vector<std::pair<std::size_t, float>> sentinels = {{two31 - 1, 2.0f}, {two31, 3.0f}};
  if (width.past_unsigned()) sentinels.insert(sentinels.end(), {{two32 - 1, 5.0f}, {two32, 7.0f}});
  sentinels.emplace_back(n - 1, 11.0f);
  std::vector<std::size_t> own;
  for (const auto& [at, value] : sentinels) own.push_back(at);
  MappedInput in(n, [n, seed](std::size_t j) { return exact_integer_at(n, seed, j); }, own);
  for (const auto& [at, value] : sentinels) in.set(at, value);
  const double want = in.sum(0, n);
  ASSERT_LE(in.magnitude_sum(0, n), kExactBudget) << "not every partial sum would be exact";
  // What 32 bits get: an index that wraps at the boundary reads element i mod boundary for i
  // (the period repeats, but the sentinels past the boundary are read as periodic values); a
  // count cut there sums n mod boundary elements; an int index that turns negative at 2^31 ends
  // the loop there. None may equal the answer, or the test could not tell them from it.
  const double wrapped = in.wrapped_sum(boundary), counted = in.sum(0, n % boundary);
  const double stopped = in.sum(0, two31);
  ASSERT_NE(wrapped, want);
  ASSERT_NE(counted, want);
  ASSERT_NE(stopped, want);
  SCOPED_TRACE("n = " + std::string(width.n_name) + " (" + std::to_string(n) + "): " + width.why);
  const float got = runner.run(lab, in.data(), n);
  expect_exact(got, want, n);
  if (bits(got) == bits(static_cast<float>(wrapped)))
    ADD_FAILURE() << "got what an index that wraps at " << width.boundary_name << " reads ("
                  << width.index_type << "): use size_t";
  if (bits(got) == bits(static_cast<float>(counted)))
    ADD_FAILURE() << "got the sum of the first n mod " << width.boundary_name
                  << " elements: n was cut to a 32-bit count";
  if (bits(got) == bits(static_cast<float>(stopped)))
    ADD_FAILURE() << "got the sum of the first 2^31 elements: an int index turns negative at "
                     "2^31, and `i < n` then ends the loop: use size_t";
}

TEST_F(SumTest, AboveInt32Range) {
  expect_exact_past(runner(), lab(), kPastInt32);
}

TEST_F(SumTest, AboveUint32Range) {
  expect_exact_past(runner(), lab(), kPastUint32);
}

}  // namespace
}  // namespace reduce::testing
