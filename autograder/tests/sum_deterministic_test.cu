// The deterministic mode of a sum: the sum suite (sum_test.cu, which course.json's `suites` runs
// for this operation too), and the same bits on every run for the same input (realistic data,
// where the order of additions changes the rounding).
//
// On an idle GPU the blocks of a launch often finish in the same order run after run, so a mode
// that adds its blocks' partials with float atomics could look deterministic. Before each call
// the test therefore changes which blocks finish first: it reads a different slice of the input
// into L2 (shared by every process on the GPU, so the lab's process sees it), and every other
// call reads the input from a second copy at the same alignment. A deterministic mode gives the
// same bits whatever the timing; an order that follows the blocks' finishing times does not.
#include "sum_suite.hpp"

#include <reduce/cuda_check.cuh>
#include <reduce/device_buffer.cuh>
#include <reduce/generators.hpp>

#include <algorithm>
#include <cstddef>
#include <vector>

namespace reduce::testing {
namespace {

/// Reads in[begin, end) so that it sits in L2 when the lab's kernels start; the sum goes to
/// \p sink only so that the reads are not optimised away.
__global__ void warm_slice(const float* in, std::size_t begin, std::size_t end, float* sink) {
  float v = 0.0f;
  for (std::size_t i = begin + blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < end;
       i += std::size_t{gridDim.x} * blockDim.x) {
    v += in[i];
  }
  if (v == 1.0f) *sink = v;  // practically never: the store only keeps the loads alive
}

/// The slice of an \p n-float input that call \p repeat warms: an eighth of it (at most 4 Mi
/// floats, well inside L2), starting at a different place each call.
void warm_for_call(const float* in, std::size_t n, int repeat, float* sink) {
  const std::size_t length = std::min<std::size_t>(n / 8 + 1, std::size_t{1} << 22);
  const std::size_t begin = (static_cast<std::size_t>(repeat) * 5 % 8) * (n / 8);
  const std::size_t end = std::min(n, begin + length);
  warm_slice<<<64, 256>>>(in, begin, end, sink);
  REDUCE_CUDA_CHECK(cudaGetLastError());
  REDUCE_CUDA_CHECK(cudaDeviceSynchronize());
}

class SumDeterministic : public SumTest, public ::testing::WithParamInterface<std::size_t> {};

TEST_P(SumDeterministic, SameBitsTwentyTimes) {
  const std::size_t n = GetParam();
  const std::vector<float> host = mixed_sign(n, input_seed(0xD5));
  const DeviceBuffer<float> in(host), copy(host);  // both 256-byte aligned: the same split
  DeviceBuffer<float> sink(1);
  const float first = run(in.data(), n);
  for (int repeat = 1; repeat < 20; ++repeat) {
    const float* input = repeat % 2 == 0 ? in.data() : copy.data();
    warm_for_call(input, n, repeat, sink.data());
    const float again = run(input, n);
    ASSERT_EQ(bits(again), bits(first))
        << "run " << repeat << " gave " << again << " after " << first
        << ": the result depends on the order in which blocks finish (a float atomic?). Before "
           "this run the test warmed another part of the input into L2, so that other blocks "
           "finished first; a deterministic sum gives the same bits whatever the timing.";
  }
}

INSTANTIATE_TEST_SUITE_P(Sizes, SumDeterministic,
                         ::testing::Values<std::size_t>(1000, 1u << 12, 1u << 16, (1u << 16) + 1,
                                                        (1u << 20) + 7, 1u << 24, 1u << 26),
                         ::testing::PrintToStringParamName());

}  // namespace
}  // namespace reduce::testing
