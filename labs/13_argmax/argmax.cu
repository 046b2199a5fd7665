// Lab 13: argmax.
//
// Reduce (value, index) pairs: the first index of the largest element, the first NaN's if any.
// Read labs/13_argmax/README.md first. Implement the two functions below
// (the lab contract is in common/include/reduce/lab.cuh), then run this lab's tests and benchmark:
//   cmake --preset student && cmake --build --preset student && ctest --preset student -L lab13
// Until you do, the tests fail with "not implemented: see labs/13_argmax/argmax.cu".
#include <cstdint>
#include <reduce/cuda_check.cuh>
#include <reduce/lab.cuh>
#include <reduce/not_implemented.hpp>
#include <stdexcept>

namespace reduce {
namespace {

// TODO: your kernel(s) and device functions here.

}  // namespace

std::size_t argmax_workspace_bytes(std::size_t n) {
  (void)n;
  // TODO: one (value, 64-bit index) pair per block of the grid you launch.
  return 0;
}

void argmax(const float* in, std::size_t n, std::int64_t* out, Workspace workspace,
            cudaStream_t stream) {
  // TODO: 1. n == 0: throw std::invalid_argument before launching anything;
  //       2. per thread: grid-stride (value, index) accumulators, index as std::int64_t;
  //       3. warp: shuffle value and index, keep the better pair (NaN first, larger value,
  //          smaller index on ties, +0.0 == -0.0); block through shared memory;
  //       4. one pair per block to the workspace, then one block over the pairs -> *out.
  (void)in, (void)n, (void)out, (void)workspace, (void)stream;
  REDUCE_NOT_IMPLEMENTED();
}

}  // namespace reduce
