// Hidden tests of lab 14's atomic_max (reduce::atomic_max_apply): run by the grader
// (course_graded_test), never shipped in the student release. They check what the public suite
// (autograder/tests/atomic_max_test.cu) leaves to chance: threads beyond the n values (the floats
// after them are +inf and NaN, so a launch without its bounds check changes the result and writes
// old_values[n]), values that start 1-3 floats into an allocation, long sequential walks from start
// values the public table does not use, and the order of the updates under contention: every call
// that raised the address must have seen the value the previous raise left, so a read-compare-store
// that is not one atomic operation (two threads raise the same old value) fails even when the final
// value happens to be right.
#include "atomic_max_checks.hpp"
#include "gpu_test.hpp"

#include <reduce/device_buffer.cuh>
#include <reduce/generators.hpp>
#include <reduce/lab_entry_points.cuh>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace reduce::testing {
namespace {

/// Every hidden test: a GPU and the contract runner.
class HiddenAtomicMax : public ContractTest {};

/// Checks that the calls that raised the address (brought a value above the old one they got
/// back) form one chain: sorted by the value they brought, each got back the value the previous
/// one brought, the first got back \p start and the last brought \p final.
void expect_one_chain_of_raises(float start, const std::vector<float>& values,
                                const std::vector<float>& olds, float final) {
  std::vector<std::pair<std::int64_t, std::size_t>> raises;  // (order of the value, thread)
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (order_key(values[i]) > order_key(olds[i])) raises.emplace_back(order_key(values[i]), i);
  }
  std::sort(raises.begin(), raises.end());
  float held = start;  // what the address held before the next raise
  for (const auto& [key, i] : raises) {
    if (!same(olds[i], held)) {
      ADD_FAILURE() << "thread " << i << " raised the address to " << describe(values[i])
                    << " but got back " << describe(olds[i]) << ", while the raise just below it "
                    << "left " << describe(held) << ": an update was lost. atomic_max must read, "
                    << "compare and store in one atomic operation (an integer atomic, or a "
                    << "compare-and-swap loop), never as a load followed by a store.";
      return;
    }
    held = stored(values[i]);
  }
  if (!same(held, final)) {
    ADD_FAILURE() << "the last raise left " << describe(held) << ", but the address ends as "
                  << describe(final);
  }
}

// ---- nothing beyond the n values, from any offset --------------------------------------------

class HiddenAtomicMaxBounds : public HiddenAtomicMax,
                              public ::testing::WithParamInterface<std::size_t> {};

TEST_P(HiddenAtomicMaxBounds, NothingBeyondTheValues) {
  const std::size_t n = GetParam();
  const std::vector<float> values = all_negative(n, input_seed(n + 0xB0));
  for (std::size_t offset = 0; offset < 4; ++offset) {
    // +inf before and after the values, and a NaN after that.
    std::vector<float> buffer(offset + n + 8, kInf);
    std::copy(values.begin(), values.end(), buffer.begin() + offset);
    buffer[offset + n + 1] = kNaN;
    const DeviceBuffer<float> in(buffer);
    SCOPED_TRACE(std::to_string(n) + " negative values starting " + std::to_string(offset) +
                 " floats into their allocation, +inf just before and after them: a result of "
                 "+inf or NaN means a thread read outside values[0..n)");
    float final = 0.0f;
    const std::vector<float> olds =
        runner().atomic_max(-kInf, in.data() + offset, n, ContractRunner::kOneLaunch, &final);
    check_history(-kInf, values, olds, final);
  }
}

INSTANTIATE_TEST_SUITE_P(Sizes, HiddenAtomicMaxBounds,
                         ::testing::Values<std::size_t>(1, 31, 33, 255, 257, 1000, 196609),
                         ::testing::PrintToStringParamName());

// ---- long sequential walks from other start values --------------------------------------------

TEST_F(HiddenAtomicMax, SequentialWalks) {
  const float max = std::numeric_limits<float>::max();
  const float tiny = std::numeric_limits<float>::denorm_min();
  const float normal = std::numeric_limits<float>::min();
  const std::vector<float> pool = {-kInf, -max,   -2.0f, -1.0f, -normal, -tiny, -0.0f, 0.0f,
                                   tiny,  normal, 1.0f,  1.5f,  max,     kInf,  -1.5f, -3.0f};
  const float starts[] = {-0.0f, 0.0f, -max, tiny, -normal};
  for (std::size_t w = 0; w < std::size(starts); ++w) {
    // 48 values drawn from the pool; the last walk ends with NaNs of several kinds.
    std::vector<float> values;
    for (std::uint64_t k = 0; k < 48; ++k) {
      values.push_back(pool[mix(input_seed(0xB100, w), k) % pool.size()]);
    }
    if (w + 1 == std::size(starts)) {
      values[36] = kNegativeNaN;
      values[40] = from_bits(0x7F800001u);
    }
    // The contract's sequential semantics: each call returns what the address held and leaves
    // the larger of the two in the total order, a NaN as the canonical NaN.
    std::vector<float> want_olds;
    float held = starts[w];
    for (float v : values) {
      want_olds.push_back(held);
      if (order_key(v) > order_key(held)) held = stored(v);
    }
    const float want_final = held;
    float final = 0.0f;
    const std::vector<float> olds = runner().atomic_max(starts[w], values, 1, &final);
    SCOPED_TRACE("walk " + std::to_string(w) + " from " + describe(starts[w]) +
                 ", one single-thread launch per value, values drawn from REDUCE_SEED=" +
                 std::to_string(test_seed()));
    for (std::size_t i = 0; i < values.size(); ++i) {
      if (same(olds[i], want_olds[i])) continue;
      ADD_FAILURE() << "call " << i << " (value " << describe(values[i]) << ") returned "
                    << describe(olds[i]) << ", expected " << describe(want_olds[i])
                    << ", which the calls before it left. " << why_wrong(want_olds[i]);
      break;
    }
    EXPECT_TRUE(same(final, want_final))
        << "the address ends as " << describe(final) << ", expected " << describe(want_final);
  }
}

// ---- contention: one chain of raises -----------------------------------------------------------

TEST_F(HiddenAtomicMax, OneChainOfRaisesUnderContention) {
  const std::size_t n = 3 * (std::size_t{1} << 20) + 1;
  std::vector<float> rising(n), falling(n);
  for (std::size_t i = 0; i < n; ++i) {
    rising[i] = -static_cast<float>(n - i);  // almost every thread raises the address
    falling[i] = -static_cast<float>(i + 1);
  }
  std::vector<float> zeros(n, -0.0f);
  zeros[n - 1] = 0.0f;
  // Launches in sequence: 64 of them (each is one request to the lab's process).
  const std::size_t chained = 64 * 4097 + 1;
  std::vector<float> rising_chained(chained);
  for (std::size_t i = 0; i < chained; ++i) rising_chained[i] = -static_cast<float>(chained - i);
  const struct {
    const char* name;
    const std::vector<float>* values;
    std::size_t per_launch;
  } cases[] = {{"rising values, one launch", &rising, ContractRunner::kOneLaunch},
               {"rising values, launches of 4097", &rising_chained, 4097},
               {"falling values, one launch", &falling, ContractRunner::kOneLaunch},
               {"-0.0 everywhere, +0.0 last", &zeros, ContractRunner::kOneLaunch}};
  for (const auto& c : cases) {
    SCOPED_TRACE(std::string(c.name) + ", n = " + std::to_string(c.values->size()));
    float final = 0.0f;
    const std::vector<float> olds = runner().atomic_max(-kInf, *c.values, c.per_launch, &final);
    check_history(-kInf, *c.values, olds, final);
    expect_one_chain_of_raises(-kInf, *c.values, olds, final);
  }
  const std::vector<float> mixed = signed_mix(n, input_seed(0xB2), 0.05, 0.001);
  SCOPED_TRACE("random signs with signed zeros and infinities");
  float final = 0.0f;
  const std::vector<float> olds =
      runner().atomic_max(-kInf, mixed, ContractRunner::kOneLaunch, &final);
  check_history(-kInf, mixed, olds, final);
  expect_one_chain_of_raises(-kInf, mixed, olds, final);
}

}  // namespace
}  // namespace reduce::testing
