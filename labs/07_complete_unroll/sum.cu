// Lab 07: complete unrolling.
//
// Make the block size a template parameter and write every step of the tree out with if constexpr.
// Read labs/07_complete_unroll/README.md first. Implement the two functions below
// (the lab contract is in common/include/reduce/lab.cuh), then run this lab's tests and benchmark:
//   cmake --preset student && cmake --build --preset student && ctest --preset student -L lab07
// Until you do, the tests fail with "not implemented: see labs/07_complete_unroll/sum.cu".
#include <reduce/lab.cuh>
#include <reduce/multi_pass.cuh>
#include <reduce/not_implemented.hpp>

namespace reduce {
namespace {

// TODO: your kernel(s) here.

}  // namespace

std::size_t sum_workspace_bytes(std::size_t n) {
  (void)n;
  // TODO
  return 0;
}

void sum(const float* in, std::size_t n, float* out, Workspace workspace, cudaStream_t stream) {
  // TODO: template <unsigned kBlock> kernel, a switch on the block size that launches the
  //       right instantiation, driven by shrink_by_passes().
  (void)in, (void)n, (void)out, (void)workspace, (void)stream;
  REDUCE_NOT_IMPLEMENTED();
}

}  // namespace reduce
