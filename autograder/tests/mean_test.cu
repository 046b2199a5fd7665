// The mean suite: run on every lab that implements reduce::mean (lab 12).
//
// Exact by construction: small integers whose every partial sum is exact in float give an
// exact sum in any order; the mean is then that sum divided by n and rounded once to float,
// compared bitwise. Long runs of ones: the mean of 2^30 ones (4 GiB, skipped when the GPU lacks
// the memory) must be exactly 1, as the contract says, and other long runs within the bound
// below; a single float accumulator stops growing at 2^24 and gives 2^24 / n (1/64 for 2^30).
// Realistic data is compared with a double reference within mean_error_bound(tree_depth(n), ...)
// (reference.hpp): the tree sum's bound divided by n, plus 2u |mean| for the division and the final
// rounding. n == 0 must write NaN (as numpy). Inputs past 2^31 and 2^32 elements (in mapped
// memory, on any GPU) catch 32-bit indices and counts.
#include "gpu_test.hpp"
#include "mapped_input.hpp"

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

/// Every mean test: skips without a GPU, else calls reduce::mean through the contract runner.
class MeanTest : public FloatLabTest {
 protected:
  MeanTest() : FloatLabTest(FloatLab{&mean_workspace_bytes, &mean}) {}
};

/// Bitwise comparison with a message that tells a student what the difference suggests.
void expect_exact(float got, float want, std::size_t n, const std::string& about) {
  if (bits(got) == bits(want)) return;
  std::string hint;
  if (std::isnan(got)) {
    hint =
        "NaN: the output (poisoned with 0xFF bytes, a NaN) was never written, or a poisoned "
        "workspace value was read.";
  } else if (n > (std::size_t{1} << 24) && got < want) {
    hint =
        "Too small for a long input: elements were missed (a 32-bit index stops at 2^31), "
        "or a float running sum stopped growing at 2^24 (adding 1 to 16,777,216 rounds back "
        "to 16,777,216). Keep float chains short (per thread), add the partials in double, "
        "and divide once, in double.";
  } else {
    hint =
        "The sum of this input is exact in any order, so the mean is that sum divided by n "
        "in double and rounded once to float: elements were dropped, repeated or read out "
        "of range, or the division was rounded twice (in float, or by a float n).";
  }
  ADD_FAILURE() << "n = " << n << " (" << about << "): got " << describe(got) << ", expected "
                << describe(want) << ". " << hint;
}

// ---- empty input -----------------------------------------------------------------------------

TEST_F(MeanTest, EmptyInputIsNaN) {
  DeviceBuffer<float> in(1);
  in.fill_bytes(0x3F);
  // Poison with 0x3F bytes (0.747): the usual 0xFF poison is itself a NaN and would let a lab
  // that writes nothing pass.
  const float got = runner().run(lab(), in.data(), 0, 0x3F);
  EXPECT_TRUE(std::isnan(got)) << "the mean of no elements is NaN (0/0, as numpy); got "
                               << describe(got)
                               << (bits(got) == 0x3F3F3F3Fu ? ": the output was never written"
                                                            : "");
}

// ---- exact by construction, over the size list -----------------------------------------------

class MeanExact : public MeanTest, public ::testing::WithParamInterface<std::size_t> {};

TEST_P(MeanExact, MatchesBitwise) {
  const std::size_t n = GetParam();
  const std::uint64_t seed = input_seed(n);
  const DeviceBuffer<float> in = exact_integers_on_device(n, seed);
  const float want = static_cast<float>(exact_integers_sum(n, seed) / static_cast<double>(n));
  expect_exact(run(in.data(), n), want, n, "exact integers");
}

INSTANTIATE_TEST_SUITE_P(Sizes, MeanExact,
                         ::testing::Values<std::size_t>(1, 2, 31, 32, 33, 255, 256, 257, 1023, 1024,
                                                        1025, 65535, 65536, 65537, (1u << 20) + 7,
                                                        1u << 24, 300000000),
                         ::testing::PrintToStringParamName());

// ---- one non-zero at the places where index bugs live ----------------------------------------

class MeanSentinel : public MeanTest, public ::testing::WithParamInterface<std::size_t> {};

TEST_P(MeanSentinel, FindsTheOnlyNonZero) {
  const std::size_t n = GetParam();
  const float value = static_cast<float>(n);  // exact for these sizes: the mean is exactly 1
  std::vector<Change> sentinels;
  for (std::size_t p : sentinel_positions(n))
    if (p < n) sentinels.push_back({p, value});
  const std::vector<float> got = run_variants(std::vector<float>(n, 0.0f), sentinels);
  for (std::size_t k = 0; k < sentinels.size(); ++k)
    expect_exact(got[k], 1.0f, n,
                 "n at index " + std::to_string(sentinels[k].at) +
                     ", zeros elsewhere (0: never read; 2: read twice)");
}

INSTANTIATE_TEST_SUITE_P(Sizes, MeanSentinel,
                         ::testing::Values<std::size_t>(1025, 65537, (1u << 20) + 7),
                         ::testing::PrintToStringParamName());

// ---- long runs of ones ------------------------------------------------------------------------

class MeanOfOnes : public MeanTest, public ::testing::WithParamInterface<std::size_t> {};

TEST_P(MeanOfOnes, IsOne) {
  const std::size_t n = GetParam();
  REDUCE_REQUIRE_DEVICE_MEMORY(n * sizeof(float));
  const DeviceBuffer<float> in = constant(n, 1.0f);
  const float got = run(in.data(), n);
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
                         ::testing::Values<std::size_t>((1u << 24) + 1, (1u << 25) + 3, 300000000,
                                                        std::size_t{1} << 30),
                         ::testing::PrintToStringParamName());

// ---- realistic data within the derived bound -------------------------------------------------

class MeanRealistic : public MeanTest,
                      public ::testing::WithParamInterface<std::tuple<Data, std::size_t>> {};

TEST_P(MeanRealistic, WithinErrorBound) {
  const auto [kind, n] = GetParam();
  const std::vector<float> host = make_data(kind, n, input_seed(n));
  const double exact = reference_mean(host);
  const double bound = mean_error_bound(tree_depth(n), n, absolute_sum(host), exact);
  const float got = run(host);
  EXPECT_LE(std::fabs(static_cast<double>(got) - exact), bound)
      << "n = " << n << ": got " << describe(got) << ", reference " << exact << ", bound " << bound
      << " ((1 + 2u) (gamma(depth + 1) sum|x| / n + 2u |mean|), depth " << tree_depth(n)
      << "). A float running sum over the whole input, or a division in float, can exceed it.";
}

INSTANTIATE_TEST_SUITE_P(Data, MeanRealistic,
                         ::testing::Combine(::testing::Values(Data::kUniform, Data::kMixedSign,
                                                              Data::kWideRange, Data::kLargeOffset),
                                            ::testing::Values<std::size_t>(1000, (1u << 20) + 7,
                                                                           1u << 24)),
                         data_and_size_name);

// ---- no cached or hard-coded answers, no writes to the input ---------------------------------

TEST_F(MeanTest, EveryCallComputesAfresh) {
  const std::size_t n = (1u << 20) + 7;
  const RotatingInputs inputs(
      3, [n](std::uint64_t k) { return exact_integers(n, input_seed(31, k)); });
  for (int call : kRotation) {
    expect_exact(run(inputs.device(call), n), static_cast<float>(reference_mean(inputs.host(call))),
                 n, "input " + std::to_string(call));
  }
  inputs.expect_unmodified();
}

// ---- beyond 2^31 and 2^32 elements, in a few hundred MiB -------------------------------------

/// The body of AboveInt32Range and AboveUint32Range: \p width's input in mapped memory, the
/// period of exact_integers(n, seed)'s start (a +1 in each run of ceil(n / 2^23) elements) with
/// integers in the hundreds and thousands at index 0, on both sides of 2^31 (and of 2^32 where n
/// passes it), at 2^31 + 9 and at the end, in tiles of their own: the sum is exact in any
/// order, so the mean is compared bitwise, and each sentinel moves it by far more than a float's
/// last place.
void expect_mean_past(ContractRunner& runner, const FloatLab& lab, const IndexWidth& width) {
  REDUCE_REQUIRE_MAPPED_INPUT();
  const std::size_t two31 = kPastInt32.boundary, two32 = kPastUint32.boundary;
  const std::size_t n = width.n, boundary = width.boundary;
  const std::uint64_t seed = input_seed(width.seed_number);
  std::vector<std::pair<std::size_t, float>> sentinels = {
      {0, 500.0f}, {two31 - 1, 1000.0f}, {two31, 2000.0f}, {two31 + 9, 2500.0f}};
  if (width.past_unsigned())
    sentinels.insert(sentinels.end(), {{two32 - 1, 3000.0f}, {two32, 4000.0f}});
  sentinels.emplace_back(n - 1, 5000.0f);
  std::vector<std::size_t> own;
  for (const auto& [at, value] : sentinels) own.push_back(at);
  MappedInput in(n, [n, seed](std::size_t j) { return exact_integer_at(n, seed, j); }, own);
  for (const auto& [at, value] : sentinels) in.set(at, value);
  ASSERT_LE(in.magnitude_sum(0, n), kExactBudget) << "not every partial sum would be exact";
  const auto mean_of = [](double sum, std::size_t count) {
    return static_cast<float>(sum / static_cast<double>(count));
  };
  const float want = mean_of(in.sum(0, n), n);
  // What 32 bits get: an index that wraps at the boundary reads element i mod boundary for i
  // (the sentinels past it become periodic values); a count cut there sums n mod boundary
  // elements and may divide by that.
  const double wrapped = in.wrapped_sum(boundary), counted = in.sum(0, n % boundary);
  ASSERT_NE(bits(mean_of(wrapped, n)), bits(want));
  ASSERT_NE(bits(mean_of(counted, n % boundary)), bits(want));
  ASSERT_NE(bits(mean_of(counted, n)), bits(want));
  expect_exact(runner.run(lab, in.data(), n), want, n,
               "n = " + std::string(width.n_name) + ": " + width.why +
                   "; integers in the hundreds and thousands at 0, 2^31 - 1, 2^31, 2^31 + 9" +
                   (width.past_unsigned() ? ", 2^32 - 1, 2^32" : "") + " and n - 1");
}

TEST_F(MeanTest, AboveInt32Range) {
  expect_mean_past(runner(), lab(), kPastInt32);
}

TEST_F(MeanTest, AboveUint32Range) {
  expect_mean_past(runner(), lab(), kPastUint32);
}

}  // namespace
}  // namespace reduce::testing
