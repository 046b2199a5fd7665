// Hidden tests of lab 18's compensated sum: the hidden sum suite (sum_hidden_test.cu, run on
// reduce::sum_compensated: course.json's `suites`), and the compensated bound on ill-conditioned
// inputs of sizes and orders drawn from the run's seed.
#include "accuracy.hpp"
#include "sum_hidden_suite.hpp"

#include <reduce/generators.hpp>

#include <cstddef>
#include <string>
#include <vector>

namespace reduce::testing {
namespace {

class HiddenSumCompensatedDrawn : public HiddenSum, public ::testing::WithParamInterface<int> {};

TEST_P(HiddenSumCompensatedDrawn, WithinCompensatedBound) {
  const std::size_t n = drawn_size(100 + GetParam()) + 2;
  const std::vector<float> host = GetParam() % 2 == 0 ? cancelling_shuffled(n, input_seed(0xC0 + n))
                                                      : cancelling(n, input_seed(0xC1 + n));
  expect_compensated(run(host), host,
                     std::string("cancelling pairs") +
                         (GetParam() % 2 == 0 ? " in random order" : "") +
                         " (REDUCE_SEED=" + std::to_string(test_seed()) + ")");
}

INSTANTIATE_TEST_SUITE_P(Draws, HiddenSumCompensatedDrawn, ::testing::Range(0, 6));

}  // namespace
}  // namespace reduce::testing
