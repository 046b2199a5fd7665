// The atomic_max suite: run on lab 14's atomic_max.cu, which applies the lab's device function
// atomic_max(address, value) once per value (reduce::atomic_max_apply) and records what each call
// returned.
//
// The contract (labs/14_atomic_max/README.md): like atomicMax, atomic_max returns the value the
// address held before the call and leaves max(old, value) there, in the order
// NaN > +inf > ... > +0.0 > -0.0 > ... > -inf; a NaN is stored as the canonical NaN 0x7FFFFFFF
// and stays. The sequential tests launch one single-thread kernel per value, so the order of
// the calls is known and every returned old value and the final value are checked exactly.
// The contention tests launch 2^22 threads on one address and check what any correct atomic
// maximum must satisfy whatever the interleaving: the final value is the maximum of the start
// value and all inputs; every returned value is the start value or one of the inputs and is
// not above the final value; and every value the address held was replaced by a call that
// saw it and brought a larger value.
#include "atomic_max_checks.hpp"
#include "gpu_test.hpp"

#include <reduce/device_buffer.cuh>
#include <reduce/generators.hpp>
#include <reduce/lab_entry_points.cuh>
#include <reduce/reference.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace reduce::testing {
namespace {

constexpr float kMax = std::numeric_limits<float>::max();
constexpr float kTiny = std::numeric_limits<float>::denorm_min();

/// Every atomic_max test: skips without a GPU, else holds the contract runner.
class AtomicMaxTest : public ContractTest {};

// ---- sequential semantics: every returned value and the final value, exactly -----------------

struct Case {
  const char* name;
  float start;
  std::vector<float> values;
  std::vector<float> olds;  ///< expected return values, in order
  float final;
  const char* why;  ///< what a failure suggests
};

/// Prints a row by its name in gtest's output.
void PrintTo(const Case& c, std::ostream* os) {
  *os << c.name;
}

class AtomicMaxSequential : public AtomicMaxTest, public ::testing::WithParamInterface<Case> {};

TEST_P(AtomicMaxSequential, ReturnsOldAndStoresMax) {
  const Case& c = GetParam();
  ASSERT_EQ(c.values.size(), c.olds.size()) << "bad test table";
  float final = 0.0f;
  const std::vector<float> olds = runner().atomic_max(c.start, c.values, 1, &final);
  std::string calls = "start " + describe(c.start) + ", then atomic_max with";
  for (float v : c.values) calls += " " + describe(v);
  if (!same(final, c.final)) {
    ADD_FAILURE() << "the address ends as " << describe(final) << ", expected " << describe(c.final)
                  << ". " << c.why << "\n(" << calls << ")";
  }
  for (std::size_t i = 0; i < c.values.size(); ++i) {
    if (same(olds[i], c.olds[i])) continue;
    ADD_FAILURE() << "call " << i << " (value " << describe(c.values[i]) << ") returned "
                  << describe(olds[i]) << ", expected " << describe(c.olds[i])
                  << ", the value the address held before the call. " << c.why << "\n(" << calls
                  << ")";
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, AtomicMaxSequential,
    ::testing::Values(
        Case{"negatives_rise",
             -kInf,
             {-3.0f, -1.0f, -2.0f},
             {-kInf, -3.0f, -1.0f},
             -1.0f,
             kNegatives},
        Case{"negative_start_kept", -1.0f, {-3.0f, -2.0f}, {-1.0f, -1.0f}, -1.0f, kNegatives},
        Case{"negatives_by_magnitude", -7.0f, {-3.0f}, {-7.0f}, -3.0f, kNegatives},
        Case{"extremes", -kInf, {-kMax, kMax, -kMax}, {-kInf, -kMax, kMax}, kMax, kNegatives},
        Case{"subnormals",
             -kInf,
             {-kTiny, kTiny, -kTiny},
             {-kInf, -kTiny, kTiny},
             kTiny,
             kNegatives},
        Case{"mixed_signs",
             -kInf,
             {2.0f, -5.0f, 7.0f, 7.0f, 1.0f},
             {-kInf, 2.0f, 2.0f, 7.0f, 7.0f},
             7.0f,
             kOrder},
        Case{"positive_beats_negative", -2.0f, {0.5f}, {-2.0f}, 0.5f, kOrder},
        Case{"negative_loses_to_positive", 0.5f, {-2.0f}, {0.5f}, 0.5f, kNegatives},
        Case{"infinities", -kInf, {-kInf, kInf, 5.0f}, {-kInf, -kInf, kInf}, kInf, kOrder},
        Case{"plus_zero_beats_minus_zero", -0.0f, {0.0f}, {-0.0f}, 0.0f, kZeros},
        Case{"minus_zero_loses_to_plus_zero", 0.0f, {-0.0f}, {0.0f}, 0.0f, kZeros},
        Case{"zeros_from_below",
             -kInf,
             {-0.0f, -1.0f, 0.0f, -0.0f},
             {-kInf, -0.0f, -0.0f, 0.0f},
             0.0f,
             kZeros},
        Case{
            "minus_zero_beats_negatives", -1.0f, {-0.0f, -2.0f}, {-1.0f, -0.0f}, -0.0f, kNegatives},
        Case{"nan_then_values",
             -kInf,
             {1.0f, kNaN, 5.0f, -5.0f},
             {-kInf, 1.0f, kNaN, kNaN},
             kNaN,
             kNaNs},
        Case{"nan_then_inf", -kInf, {kNaN, kInf}, {-kInf, kNaN}, kNaN, kNaNs},
        Case{"negative_nan", -kInf, {kNegativeNaN, 3.0f, -3.0f}, {-kInf, kNaN, kNaN}, kNaN, kNaNs},
        Case{"nan_start", kStoredNaN, {kInf, -kInf, 0.0f}, {kNaN, kNaN, kNaN}, kNaN, kNaNs}),
    NameField());

TEST_F(AtomicMaxTest, StoresTheCanonicalNaN) {
  for (float nan : {kNaN, kNegativeNaN, from_bits(0x7F800001u)}) {
    SCOPED_TRACE("NaN input " + describe(nan));
    float final = 0.0f;
    const std::vector<float> olds = runner().atomic_max(-kInf, {nan, 1.0f}, 1, &final);
    if (bits(final) != kCanonicalNaN) {
      ADD_FAILURE() << "a NaN must be stored as the canonical NaN 0x7FFFFFFF (the contract); "
                    << "the address holds " << describe(final);
    }
    if (bits(olds[1]) != kCanonicalNaN) {
      ADD_FAILURE() << "the call after the NaN must return the stored canonical NaN "
                    << "0x7FFFFFFF; it returned " << describe(olds[1]);
    }
  }
}

TEST_F(AtomicMaxTest, EmptyInputTouchesNothing) {
  float final = 0.0f;
  const std::vector<float> olds =
      runner().atomic_max(-3.0f, {}, ContractRunner::kOneLaunch, &final);
  if (bits(final) != bits(-3.0f)) {
    ADD_FAILURE() << "atomic_max_apply with n == 0 must not change *address; it now holds "
                  << describe(final);
  }
}

// ---- contention: millions of threads on one address ------------------------------------------

enum class Mix {
  kRandom,
  kAllNegative,
  kNegativeAndMinusZero,
  kZeros,
  kInfinities,
  kNaN,
  kMinusInf
};
const char* const kMixNames[] = {"random",       "all_negative", "negative_and_minus_zero",
                                 "signed_zeros", "infinities",   "nan_in_middle",
                                 "all_minus_inf"};

void PrintTo(Mix mix, std::ostream* os) {
  *os << kMixNames[static_cast<int>(mix)];
}

std::vector<float> make(Mix mix, std::size_t n, std::uint64_t seed) {
  switch (mix) {
    case Mix::kRandom:
      return signed_mix(n, seed, 0.001, 0.0);
    case Mix::kAllNegative:
      return all_negative(n, seed);
    case Mix::kNegativeAndMinusZero: {
      std::vector<float> x = all_negative(n, seed);
      place(x, {n / 5, n / 2, n - 1}, -0.0f);
      return x;
    }
    case Mix::kZeros: {
      std::vector<float> x = all_negative(n, seed);
      for (std::size_t i = 0; i < n; i += 7) x[i] = -0.0f;
      place(x, {n / 3}, 0.0f);
      return x;
    }
    case Mix::kInfinities:
      return signed_mix(n, seed, 0.01, 0.0001);
    case Mix::kNaN: {
      std::vector<float> x = signed_mix(n, seed, 0.01, 0.0);
      place(x, {n / 2}, kNaN);
      return x;
    }
    case Mix::kMinusInf:
      return std::vector<float>(n, -kInf);
  }
  return {};
}

class AtomicMaxContention : public AtomicMaxTest, public ::testing::WithParamInterface<Mix> {};

TEST_P(AtomicMaxContention, MatchesSequentialMaximum) {
  const Mix mix = GetParam();
  const std::size_t n = std::size_t{1} << 22;  // four million threads on one address
  check_concurrent(runner(), make(mix, n, input_seed(static_cast<int>(mix))));
}

INSTANTIATE_TEST_SUITE_P(Inputs, AtomicMaxContention,
                         ::testing::Values(Mix::kRandom, Mix::kAllNegative,
                                           Mix::kNegativeAndMinusZero, Mix::kZeros,
                                           Mix::kInfinities, Mix::kNaN, Mix::kMinusInf),
                         [](const ::testing::TestParamInfo<Mix>& info) {
                           return std::string(kMixNames[static_cast<int>(info.param)]);
                         });

// Small launches (one warp, a few blocks, a partial block): what compute-sanitizer runs.
class AtomicMaxSmall : public AtomicMaxTest, public ::testing::WithParamInterface<std::size_t> {};

TEST_P(AtomicMaxSmall, MatchesSequentialMaximum) {
  const std::size_t n = GetParam();
  {
    SCOPED_TRACE("random signs, signed zeros");
    check_concurrent(runner(), signed_mix(n, input_seed(n), 0.1, 0.0));
  }
  {
    SCOPED_TRACE("all negative");
    check_concurrent(runner(), all_negative(n, input_seed(2 * n)));
  }
}

INSTANTIATE_TEST_SUITE_P(Sizes, AtomicMaxSmall, ::testing::Values<std::size_t>(1, 33, 1025),
                         ::testing::PrintToStringParamName());

}  // namespace
}  // namespace reduce::testing
