// The atomic_max suite: linked with lab 14's atomic_max.cu, which applies the lab's device
// function atomic_max(address, value) once per value (reduce::atomic_max_apply) and records
// what each call returned.
//
// The contract (labs/14_atomic_max/README.md): like atomicMax, atomic_max returns the value the
// address held before the call and leaves max(old, value) there, in the order
// NaN > +inf > ... > +0.0 > -0.0 > ... > -inf; a NaN is stored as the canonical NaN 0x7FFFFFFF
// and stays. The sequential tests launch one single-thread kernel per value, so the order of
// the calls is known and every returned old value and the final value are checked exactly.
// The contention tests launch 2^24 threads on one address and check what any correct atomic
// maximum must satisfy whatever the interleaving: the final value is the maximum of the start
// value and all inputs; every returned value is the start value or one of the inputs and is
// not above the final value; and every value the address held was replaced by a call that
// saw it and brought a larger value.
#include "gpu_test.hpp"

#include <reduce/device_buffer.cuh>
#include <reduce/generators.hpp>
#include <reduce/lab.cuh>
#include <reduce/reference.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

namespace reduce::testing {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kMax = std::numeric_limits<float>::max();
constexpr float kTiny = std::numeric_limits<float>::denorm_min();
constexpr std::uint32_t kCanonicalNaN = 0x7FFFFFFFu;

float from_bits(std::uint32_t b) {
  float v;
  std::memcpy(&v, &b, sizeof v);
  return v;
}

const float kNaN = from_bits(0x7FC00000u);          // the usual quiet NaN
const float kNegativeNaN = from_bits(0xFFC00000u);  // sign bit set
const float kStoredNaN = from_bits(kCanonicalNaN);  // what atomic_max stores

/// A float with its bit pattern, so that -0 and +0 (and NaN payloads) are told apart.
std::string describe(float v) {
  char text[64];
  std::snprintf(text, sizeof text, "%.9g (bits 0x%08X)", static_cast<double>(v), bits(v));
  return text;
}

/// Position of \p v in the contract's total order: -inf lowest, -0.0 below +0.0, NaN highest.
std::int64_t order_key(float v) {
  if (std::isnan(v)) return std::int64_t{1} << 40;
  const std::uint32_t b = bits(v);
  // Negative floats: flip the magnitude bits so that a larger magnitude ranks lower.
  const std::int32_t k = static_cast<std::int32_t>((b & 0x80000000u) ? (b ^ 0x7FFFFFFFu) : b);
  return k;
}

/// What the address holds after storing \p v: any NaN becomes the canonical NaN.
float stored(float v) { return std::isnan(v) ? kStoredNaN : v; }

/// Equal as the contract compares stored values: bitwise, any NaN matching any NaN.
bool same(float a, float b) { return (std::isnan(a) && std::isnan(b)) || bits(a) == bits(b); }

/// Runs the lab's atomic_max_apply on a device address, one launch per value or all at once.
class AtomicRunner {
 public:
  /// One single-thread launch per value, in order. Returns the old values; *final receives
  /// what the address holds at the end.
  std::vector<float> sequential(float start, const std::vector<float>& values, float* final) {
    const std::size_t n = values.size();
    const DeviceBuffer<float> in(values);
    DeviceBuffer<float> olds(std::max<std::size_t>(n, 1));
    olds.fill_bytes(kPoisonByte, stream_.get());
    prepare(start);
    for (std::size_t i = 0; i < n; ++i) {
      atomic_max_apply(in.data() + i, 1, address_.data(), olds.data() + i, stream_.get());
    }
    return finish(olds, n, final);
  }

  /// One launch, one thread per value, all on the same address.
  std::vector<float> concurrent(float start, const std::vector<float>& values, float* final) {
    const std::size_t n = values.size();
    const DeviceBuffer<float> in(values);
    DeviceBuffer<float> olds(std::max<std::size_t>(n, 1));
    olds.fill_bytes(kPoisonByte, stream_.get());
    prepare(start);
    atomic_max_apply(in.data(), n, address_.data(), olds.data(), stream_.get());
    return finish(olds, n, final);
  }

 private:
  void prepare(float start) {
    const float init[2] = {start, from_bits(0xFFFFFFFFu)};  // value, then a guard
    REDUCE_CUDA_CHECK(cudaMemcpyAsync(address_.data(), init, sizeof init, cudaMemcpyHostToDevice,
                                      stream_.get()));
  }

  std::vector<float> finish(const DeviceBuffer<float>& olds, std::size_t n, float* final) {
    stream_.synchronize();
    const std::vector<float> address = address_.to_host();
    EXPECT_EQ(bits(address[1]), 0xFFFFFFFFu) << "atomic_max wrote next to its address";
    *final = address[0];
    std::vector<float> host = olds.to_host();
    host.resize(n);
    return host;
  }

  Stream stream_;
  DeviceBuffer<float> address_{2};
};

class AtomicMaxTest : public ::testing::Test {
 protected:
  void SetUp() override {
    REDUCE_REQUIRE_GPU();
    run_ = std::make_unique<AtomicRunner>();
  }
  std::unique_ptr<AtomicRunner> run_;
};

// ---- sequential semantics: every returned value and the final value, exactly -----------------

struct Case {
  const char* name;
  float start;
  std::vector<float> values;
  std::vector<float> olds;  ///< expected return values, in order
  float final;
  const char* why;  ///< what a failure suggests
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

class AtomicMaxSequential : public AtomicMaxTest, public ::testing::WithParamInterface<Case> {};

TEST_P(AtomicMaxSequential, ReturnsOldAndStoresMax) {
  const Case& c = GetParam();
  ASSERT_EQ(c.values.size(), c.olds.size()) << "bad test table";
  float final = 0.0f;
  const std::vector<float> olds = run_->sequential(c.start, c.values, &final);
  std::string calls = "start " + describe(c.start) + ", then atomic_max with";
  for (float v : c.values) calls += " " + describe(v);
  if (!same(final, c.final)) {
    ADD_FAILURE() << "the address ends as " << describe(final) << ", expected "
                  << describe(c.final) << ". " << c.why << "\n(" << calls << ")";
  }
  for (std::size_t i = 0; i < c.values.size(); ++i) {
    if (same(olds[i], c.olds[i])) continue;
    ADD_FAILURE() << "call " << i << " (value " << describe(c.values[i]) << ") returned "
                  << describe(olds[i]) << ", expected " << describe(c.olds[i])
                  << ", the value the address held before the call. " << c.why << "\n("
                  << calls << ")";
  }
}

const char* const kNegatives =
    "Negative floats: as integers their bits order the other way round (a larger magnitude is a "
    "larger integer but a smaller float), so a signed atomicMax on the bits keeps the most "
    "negative value. Use unsigned atomicMin on the bits when the value's sign bit is set.";
const char* const kZeros =
    "+0.0 and -0.0 compare equal as floats, so a compare-and-swap loop that stops on `>=` keeps "
    "whichever zero came first. The contract wants +0.0 > -0.0 in either order.";
const char* const kNaNs =
    "A NaN must win and stay: every comparison with NaN is false, so a compare-and-swap loop "
    "that tests `old >= value` lets the next value overwrite a stored NaN (and a NaN with its "
    "sign bit set looks like a very negative integer).";
const char* const kOrder = "The maximum in float order, returning the previous value.";

INSTANTIATE_TEST_SUITE_P(
    Cases, AtomicMaxSequential,
    ::testing::Values(
        Case{"negatives_rise", -kInf, {-3.0f, -1.0f, -2.0f}, {-kInf, -3.0f, -1.0f}, -1.0f,
             kNegatives},
        Case{"negative_start_kept", -1.0f, {-3.0f, -2.0f}, {-1.0f, -1.0f}, -1.0f, kNegatives},
        Case{"negatives_by_magnitude", -7.0f, {-3.0f}, {-7.0f}, -3.0f, kNegatives},
        Case{"extremes", -kInf, {-kMax, kMax, -kMax}, {-kInf, -kMax, kMax}, kMax, kNegatives},
        Case{"subnormals", -kInf, {-kTiny, kTiny, -kTiny}, {-kInf, -kTiny, kTiny}, kTiny,
             kNegatives},
        Case{"mixed_signs", -kInf, {2.0f, -5.0f, 7.0f, 7.0f, 1.0f},
             {-kInf, 2.0f, 2.0f, 7.0f, 7.0f}, 7.0f, kOrder},
        Case{"positive_beats_negative", -2.0f, {0.5f}, {-2.0f}, 0.5f, kOrder},
        Case{"negative_loses_to_positive", 0.5f, {-2.0f}, {0.5f}, 0.5f, kNegatives},
        Case{"infinities", -kInf, {-kInf, kInf, 5.0f}, {-kInf, -kInf, kInf}, kInf, kOrder},
        Case{"plus_zero_beats_minus_zero", -0.0f, {0.0f}, {-0.0f}, 0.0f, kZeros},
        Case{"minus_zero_loses_to_plus_zero", 0.0f, {-0.0f}, {0.0f}, 0.0f, kZeros},
        Case{"zeros_from_below", -kInf, {-0.0f, -1.0f, 0.0f, -0.0f},
             {-kInf, -0.0f, -0.0f, 0.0f}, 0.0f, kZeros},
        Case{"minus_zero_beats_negatives", -1.0f, {-0.0f, -2.0f}, {-1.0f, -0.0f}, -0.0f,
             kNegatives},
        Case{"nan_then_values", -kInf, {1.0f, kNaN, 5.0f, -5.0f}, {-kInf, 1.0f, kNaN, kNaN},
             kNaN, kNaNs},
        Case{"nan_then_inf", -kInf, {kNaN, kInf}, {-kInf, kNaN}, kNaN, kNaNs},
        Case{"negative_nan", -kInf, {kNegativeNaN, 3.0f, -3.0f}, {-kInf, kNaN, kNaN}, kNaN,
             kNaNs},
        Case{"nan_start", kStoredNaN, {kInf, -kInf, 0.0f}, {kNaN, kNaN, kNaN}, kNaN, kNaNs}),
    [](const ::testing::TestParamInfo<Case>& info) { return std::string(info.param.name); });

TEST_F(AtomicMaxTest, StoresTheCanonicalNaN) {
  for (float nan : {kNaN, kNegativeNaN, from_bits(0x7F800001u)}) {
    SCOPED_TRACE("NaN input " + describe(nan));
    float final = 0.0f;
    const std::vector<float> olds = run_->sequential(-kInf, {nan, 1.0f}, &final);
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
  const std::vector<float> olds = run_->concurrent(-3.0f, {}, &final);
  if (bits(final) != bits(-3.0f)) {
    ADD_FAILURE() << "atomic_max_apply with n == 0 must not change *address; it now holds "
                  << describe(final);
  }
}

// ---- contention: millions of threads on one address ------------------------------------------

enum class Mix { kRandom, kAllNegative, kNegativeAndMinusZero, kZeros, kInfinities, kNaN, kMinusInf };
const char* const kMixNames[] = {"random",       "all_negative", "negative_and_minus_zero",
                                 "signed_zeros", "infinities",   "nan_in_middle",
                                 "all_minus_inf"};

void PrintTo(Mix mix, std::ostream* os) { *os << kMixNames[static_cast<int>(mix)]; }

std::vector<float> make(Mix mix, std::size_t n, std::uint64_t seed) {
  switch (mix) {
    case Mix::kRandom: return signed_mix(n, seed, 0.001, 0.0);
    case Mix::kAllNegative: return all_negative(n, seed);
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
    case Mix::kInfinities: return signed_mix(n, seed, 0.01, 0.0001);
    case Mix::kNaN: {
      std::vector<float> x = signed_mix(n, seed, 0.01, 0.0);
      place(x, {n / 2}, kNaN);
      return x;
    }
    case Mix::kMinusInf: return std::vector<float>(n, -kInf);
  }
  return {};
}

/// Applies every value at once (one thread each) to an address starting at -inf and checks
/// what any correct atomic maximum guarantees, whatever the interleaving.
void check_concurrent(AtomicRunner& run, const std::vector<float>& values) {
  const std::size_t n = values.size();
  const float start = -kInf;
  float final = 0.0f;
  const std::vector<float> olds = run.concurrent(start, values, &final);

  // 1. The final value is the maximum of the start value and every input.
  std::vector<float> all = values;
  all.push_back(start);
  const float want = stored(reference_maximum(all));
  if (!same(final, want)) {
    ADD_FAILURE() << n << " threads on one address starting at -inf: it ends as "
                  << describe(final) << ", expected " << describe(want) << ". "
                  << (std::isnan(want) ? kNaNs
                      : want < 0.0f    ? kNegatives
                      : want == 0.0f   ? kZeros
                                       : kOrder);
    return;
  }

  // 2. Every returned value is the start value or an input (NaN as stored), and not above the
  //    final value; neither is the value the thread brought.
  std::vector<std::uint32_t> seen;
  seen.reserve(n + 1);
  for (float v : all) seen.push_back(bits(stored(v)));
  std::sort(seen.begin(), seen.end());
  const std::int64_t top = order_key(final);
  std::unordered_set<std::uint32_t> distinct_olds;
  std::size_t reported = 0;
  for (std::size_t i = 0; i < n && reported < 5; ++i) {
    const float old = olds[i];
    distinct_olds.insert(bits(old));
    const bool known = std::binary_search(seen.begin(), seen.end(), bits(old));
    if (!known || order_key(old) > top || order_key(values[i]) > top) {
      ++reported;
      ADD_FAILURE() << "thread " << i << " (value " << describe(values[i]) << ") got back "
                    << describe(old) << " with the address ending at " << describe(final)
                    << (known ? ": above the final value" : ": neither the start value nor any input")
                    << ". atomic_max must return exactly what the address held before it.";
    }
  }

  // 3. Every value the address held, except the last, was replaced by a call that saw it and
  //    brought a larger value; the last was brought by a call that saw something smaller.
  std::unordered_set<std::uint32_t> replaced;  // olds o for which some thread brought v > o
  bool final_installed = same(final, start);
  for (std::size_t i = 0; i < n; ++i) {
    if (order_key(values[i]) > order_key(olds[i])) {
      replaced.insert(bits(olds[i]));
      if (same(stored(values[i]), final)) final_installed = true;
    }
  }
  if (!final_installed) {
    ADD_FAILURE() << "no call returned a value below the final value " << describe(final)
                  << " while bringing it: the returned old values do not match the stores.";
  }
  for (std::uint32_t o : distinct_olds) {
    if (o == bits(final) || (std::isnan(from_bits(o)) && std::isnan(final))) continue;
    if (replaced.count(o) == 0) {
      ADD_FAILURE() << describe(from_bits(o)) << " was returned as an old value, but no call "
                    << "that saw it brought a larger value, yet the address ended at "
                    << describe(final)
                    << ": the returned values do not describe one sequence of atomic updates.";
    }
  }
}

class AtomicMaxContention : public AtomicMaxTest, public ::testing::WithParamInterface<Mix> {};

TEST_P(AtomicMaxContention, MatchesSequentialMaximum) {
  const Mix mix = GetParam();
  const std::size_t n = std::size_t{1} << 24;
  check_concurrent(*run_, make(mix, n, test_seed() + static_cast<int>(mix)));
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
    check_concurrent(*run_, signed_mix(n, test_seed() + n, 0.1, 0.0));
  }
  {
    SCOPED_TRACE("all negative");
    check_concurrent(*run_, all_negative(n, test_seed() + 2 * n));
  }
}

INSTANTIATE_TEST_SUITE_P(Sizes, AtomicMaxSmall, ::testing::Values<std::size_t>(1, 33, 1025),
                         ::testing::PrintToStringParamName());

}  // namespace
}  // namespace reduce::testing
