// The compensated sum (lab 18): everything the sum suite checks on reduce::sum_compensated, and
// the compensated bound (compensated_error_bound in reference.hpp) on ill-conditioned inputs,
// where sum |x| exceeds |S| by a factor of a million or more and a float tree's error exceeds
// the sum itself. The reference is exact (reduce::ExactSum).
#define REDUCE_SUM_SUITE_ENTRY sum_compensated
#include "sum_test.cu"

#include "accuracy.hpp"

namespace reduce::testing {
namespace {

class CompensatedIllConditioned
    : public SumTest,
      public ::testing::WithParamInterface<std::tuple<Data, std::size_t>> {};

TEST_P(CompensatedIllConditioned, WithinCompensatedBound) {
  const auto [kind, n] = GetParam();
  const std::vector<float> host = make_data(kind, n, test_seed() ^ (n * 3));
  expect_compensated(run(host), host, data_name(kind));
}

INSTANTIATE_TEST_SUITE_P(
    Data, CompensatedIllConditioned,
    ::testing::Combine(::testing::Values(Data::kCancelling, Data::kMixedSign, Data::kWideRange),
                       ::testing::Values<std::size_t>(1000, 4097, (1u << 20) + 7, 1u << 24)),
    data_and_size_name);

// Shuffled: the pairs v, -v meet anywhere in the tree, in a thread's chain as well as between
// blocks, and a Kahan chain (compensation lost when an element outweighs the running sum) is
// put to the test beside the tree.
class CompensatedShuffled : public SumTest, public ::testing::WithParamInterface<std::size_t> {};

TEST_P(CompensatedShuffled, WithinCompensatedBound) {
  const std::size_t n = GetParam();
  const std::vector<float> host = cancelling_shuffled(n, test_seed() + n);
  expect_compensated(run(host), host, "cancelling pairs in random order");
}

INSTANTIATE_TEST_SUITE_P(Sizes, CompensatedShuffled,
                         ::testing::Values<std::size_t>(1025, 65537, (1u << 20) + 7, 1u << 23),
                         ::testing::PrintToStringParamName());

// A huge value and its negation around small ones at every place a block or warp boundary
// falls: a float sum loses the small ones next to 2^40; a compensated sum keeps them exactly.
class CompensatedBigAndSmall : public SumTest, public ::testing::WithParamInterface<std::size_t> {};

TEST_P(CompensatedBigAndSmall, KeepsTheSmallValues) {
  const std::size_t n = GetParam();
  std::vector<float> host = exact_integers(n, test_seed() ^ 0xB16);
  const float big = 0x1.0p40f;
  for (std::size_t p : sentinel_positions(n)) {
    if (p + 1 >= n || 2 * p + 1 == n) continue;  // p and its mirror n - 1 - p form a pair
    host[p] = big;
    host[n - 1 - p] = -big;
  }
  expect_compensated(run(host), host, "+-2^40 at block and warp boundaries among small integers");
}

INSTANTIATE_TEST_SUITE_P(Sizes, CompensatedBigAndSmall,
                         ::testing::Values<std::size_t>(4097, 65537, (1u << 20) + 7),
                         ::testing::PrintToStringParamName());

}  // namespace
}  // namespace reduce::testing
