// Lab 12: mean.
//
// A sum that stays accurate for 2^30 elements, then one division by n.
// Read labs/12_mean/README.md first. Implement the two functions below
// (the lab contract is in common/include/reduce/lab.cuh), then run this lab's tests and benchmark:
//   cmake --preset student && cmake --build --preset student && ctest --preset student -L lab12
// Until you do, the tests fail with "not implemented: see labs/12_mean/mean.cu".
#include <reduce/cuda_check.cuh>
#include <reduce/lab.cuh>
#include <reduce/not_implemented.hpp>

namespace reduce {
namespace {

// TODO: your kernel(s) and device functions here.

}  // namespace

std::size_t mean_workspace_bytes(std::size_t n) {
  (void)n;
  // TODO: room for one partial per block (in the type you add partials in).
  return 0;
}

void mean(const float* in, std::size_t n, float* out, Workspace workspace, cudaStream_t stream) {
  // TODO: 1. per thread: a grid-stride loop with several float accumulators (short chains);
  //       2. from the thread's total on: add in double (warp, block, grid);
  //       3. divide the double total by (double)n once and round to float;
  //       n == 0 must write NaN (0.0 / 0.0 does), and must not crash.
  (void)in, (void)n, (void)out, (void)workspace, (void)stream;
  REDUCE_NOT_IMPLEMENTED();
}

}  // namespace reduce
