// Lab 17: segmented (row-wise) reductions.
//
// Sum every segment of the input (a row of a matrix, as cub::DeviceSegmentedReduce takes them:
// segment s is in[offsets[s], offsets[s + 1])), choosing the strategy by the segments' lengths:
// a thread or a few lanes per short row, a warp per medium one, split rows for long ones.
// Read labs/17_segmented/README.md first. Implement the two functions below (the lab contract is
// in common/include/reduce/lab.cuh), then run this lab's tests:
//   cmake --preset student && cmake --build --preset student && ctest --preset student -L lab17
// Until you do, the tests fail with "not implemented: see labs/17_segmented/segmented_sum.cu".
#include <reduce/cuda_check.cuh>
#include <reduce/lab.cuh>
#include <reduce/not_implemented.hpp>

namespace reduce {
namespace {

// TODO: your kernels here: start with a warp per segment (correct for any length), then one
//       that gives short rows a thread or a few lanes each with their loads in flight (and lists
//       the rows too long for it), and one that splits each long row into chunks and adds its
//       partials in a fixed order.

}  // namespace

std::size_t segmented_sum_workspace_bytes(std::size_t n, std::size_t segments) {
  (void)n, (void)segments;
  // TODO
  return 0;
}

void segmented_sum(const float* in, std::size_t n, const std::int64_t* offsets,
                   std::size_t segments, float* out, Workspace workspace, cudaStream_t stream) {
  // TODO
  (void)in, (void)n, (void)offsets, (void)segments, (void)out, (void)workspace, (void)stream;
  REDUCE_NOT_IMPLEMENTED();
}

}  // namespace reduce
