// Lab 02: interleaved addressing, divergent branch.
//
// Each block sums 256 elements in shared memory with strides 1, 2, 4, ... and the test
// tid % (2 * stride) == 0.
// Read labs/02_interleaved_divergent/README.md first. Implement the two functions below
// (the lab contract is in common/include/reduce/lab.cuh), then run this lab's tests and benchmark:
//   cmake --preset student && cmake --build --preset student && ctest --preset student -L lab02
// Until you do, the tests fail with "not implemented: see labs/02_interleaved_divergent/sum.cu".
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
  // TODO: write the kernel (one partial sum per block), then call
  //   shrink_by_passes(in, n, out, workspace, stream, per_block, launch_one_pass);
  // with a lambda that launches your kernel with the number of blocks it is given.
  (void)in, (void)n, (void)out, (void)workspace, (void)stream;
  REDUCE_NOT_IMPLEMENTED();
}

}  // namespace reduce
