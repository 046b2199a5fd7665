// Lab 04: sequential addressing.
//
// Fold the block's values in half at each step: thread t adds element t + stride to element t.
// Read labs/04_sequential/README.md first. Implement the two functions below
// (the lab contract is in common/include/reduce/lab.cuh), then run this lab's tests and benchmark:
//   cmake --preset student && cmake --build --preset student && ctest --preset student -L lab04
// Until you do, the tests fail with "not implemented: see labs/04_sequential/sum.cu".
#include <reduce/lab.cuh>
#include <reduce/multi_pass.cuh>
#include <reduce/not_implemented.hpp>

namespace reduce {
namespace {

// TODO: your kernel(s) here.

}  // namespace

std::size_t sum_workspace_bytes(std::size_t n) {
  (void)n;
  // TODO: return multi_pass_workspace_bytes(n, elements per block);
  return 0;
}

void sum(const float* in, std::size_t n, float* out, Workspace workspace, cudaStream_t stream) {
  // TODO: the kernel with sequential addressing, driven by shrink_by_passes().
  (void)in, (void)n, (void)out, (void)workspace, (void)stream;
  REDUCE_NOT_IMPLEMENTED();
}

}  // namespace reduce
