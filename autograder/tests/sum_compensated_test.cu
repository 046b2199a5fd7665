// The compensated sum (lab 18): the sum suite (sum_test.cu, run on reduce::sum_compensated:
// course.json's `suites`), and the compensated bound (compensated_error_bound in reference.hpp)
// on ill-conditioned inputs, where sum |x| exceeds |S| by a factor of a million or more and a
// float tree's error exceeds the sum itself. The reference is exact (reduce::ExactSum).
#include "accuracy.hpp"
#include "sum_suite.hpp"

#include <reduce/generators.hpp>

#include <cstddef>
#include <tuple>
#include <vector>

namespace reduce::testing {
namespace {

class SumCompensatedIllConditioned
    : public SumTest,
      public ::testing::WithParamInterface<std::tuple<Data, std::size_t>> {};

TEST_P(SumCompensatedIllConditioned, WithinCompensatedBound) {
  const auto [kind, n] = GetParam();
  const std::vector<float> host = make_data(kind, n, input_seed(n * 3));
  expect_compensated(run(host), host, data_name(kind));
}

INSTANTIATE_TEST_SUITE_P(
    Data, SumCompensatedIllConditioned,
    ::testing::Combine(::testing::Values(Data::kCancelling, Data::kMixedSign, Data::kWideRange),
                       ::testing::Values<std::size_t>(1000, 4097, (1u << 20) + 7, 1u << 24)),
    data_and_size_name);

// Shuffled: the pairs v, -v meet anywhere in the tree, in a thread's chain as well as between
// blocks, and a Kahan chain (compensation lost when an element outweighs the running sum) is
// put to the test beside the tree.
class SumCompensatedShuffled : public SumTest, public ::testing::WithParamInterface<std::size_t> {};

TEST_P(SumCompensatedShuffled, WithinCompensatedBound) {
  const std::size_t n = GetParam();
  const std::vector<float> host = cancelling_shuffled(n, input_seed(n));
  expect_compensated(run(host), host, "cancelling pairs in random order");
}

INSTANTIATE_TEST_SUITE_P(Sizes, SumCompensatedShuffled,
                         ::testing::Values<std::size_t>(1025, 65537, (1u << 20) + 7, 1u << 23),
                         ::testing::PrintToStringParamName());

// A huge value and its negation around small ones at every place a block or warp boundary
// falls: a float sum loses the small ones next to 2^40; a compensated sum keeps them exactly.
class SumCompensatedBigAndSmall : public SumTest,
                                  public ::testing::WithParamInterface<std::size_t> {};

TEST_P(SumCompensatedBigAndSmall, KeepsTheSmallValues) {
  const std::size_t n = GetParam();
  std::vector<float> host = exact_integers(n, input_seed(0xB16));
  const float big = 0x1.0p40f;
  for (std::size_t p : sentinel_positions(n)) {
    if (p + 1 >= n || 2 * p + 1 == n) continue;  // p and its mirror n - 1 - p form a pair
    host[p] = big;
    host[n - 1 - p] = -big;
  }
  expect_compensated(run(host), host, "+-2^40 at block and warp boundaries among small integers");
}

INSTANTIATE_TEST_SUITE_P(Sizes, SumCompensatedBigAndSmall,
                         ::testing::Values<std::size_t>(4097, 65537, (1u << 20) + 7),
                         ::testing::PrintToStringParamName());

}  // namespace
}  // namespace reduce::testing
