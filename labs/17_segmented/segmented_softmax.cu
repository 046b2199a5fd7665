// Lab 17, second part: softmax's statistics of every segment.
//
// For each segment, write its maximum m and the sum of exp(x - m) over its elements: the two
// numbers a row-wise softmax divides by. Read the whole segment once: keep a running pair
// (maximum, sum) and rescale the sum whenever the maximum grows (online softmax), in each thread
// and wherever two partial pairs meet. The tiers of segmented_sum.cu serve here too.
// Read labs/17_segmented/README.md first. Implement the two functions below (the lab contract is
// in common/include/reduce/lab.cuh), then run this lab's tests:
//   cmake --preset student && cmake --build --preset student && ctest --preset student -L lab17
// Until you do, the tests fail with "not implemented: see labs/17_segmented/segmented_softmax.cu".
#include <reduce/cuda_check.cuh>
#include <reduce/lab.cuh>
#include <reduce/not_implemented.hpp>

namespace reduce {
namespace {

// TODO: your pair type, its combination (the pair with the smaller maximum is rescaled by
//       exp(smaller - larger); an empty pair is (-inf, 0)), and the kernels of your tiers.

}  // namespace

std::size_t segmented_softmax_workspace_bytes(std::size_t n, std::size_t segments) {
  (void)n, (void)segments;
  // TODO
  return 0;
}

void segmented_softmax(const float* in, std::size_t n, const std::int64_t* offsets,
                       std::size_t segments, float* out, Workspace workspace, cudaStream_t stream) {
  // TODO: out[2 * s] = the maximum of segment s, out[2 * s + 1] = the sum of exp(x - maximum).
  (void)in, (void)n, (void)offsets, (void)segments, (void)out, (void)workspace, (void)stream;
  REDUCE_NOT_IMPLEMENTED();
}

}  // namespace reduce
