// The deterministic mode of a sum: the sum suite (sum_test.cu, which course.json's `suites` runs
// for this operation too), and the same bits on every run for the same input (realistic data,
// where the order of additions changes the rounding).
#include "sum_suite.hpp"

#include <reduce/device_buffer.cuh>
#include <reduce/generators.hpp>

#include <cstddef>
#include <vector>

namespace reduce::testing {
namespace {

class SumDeterministic : public SumTest, public ::testing::WithParamInterface<std::size_t> {};

TEST_P(SumDeterministic, SameBitsTwentyTimes) {
  const std::size_t n = GetParam();
  const std::vector<float> host = mixed_sign(n, input_seed(0xD5));
  const DeviceBuffer<float> in(host);
  const float first = run(in.data(), n);
  for (int repeat = 1; repeat < 20; ++repeat) {
    const float again = run(in.data(), n);
    ASSERT_EQ(bits(again), bits(first))
        << "run " << repeat << " gave " << again << " after " << first
        << ": the result depends on the order in which blocks finish (a float atomic?)";
  }
}

INSTANTIATE_TEST_SUITE_P(Sizes, SumDeterministic,
                         ::testing::Values<std::size_t>(1000, 1u << 12, 1u << 16, (1u << 16) + 1,
                                                        (1u << 20) + 7, 1u << 24, 1u << 26),
                         ::testing::PrintToStringParamName());

}  // namespace
}  // namespace reduce::testing
