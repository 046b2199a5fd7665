// Lab 09: warp shuffle.
//
// Sum within a warp with __shfl_down_sync, across warps through one float per warp in shared
// memory, across blocks with a second launch.
// Read labs/09_warp_shuffle/README.md first. Implement the two functions below
// (the lab contract is in common/include/reduce/lab.cuh), then run this lab's tests and benchmark:
//   cmake --preset student && cmake --build --preset student && ctest --preset student -L lab09
// Until you do, the tests fail with "not implemented: see labs/09_warp_shuffle/sum.cu".
#include <reduce/cuda_check.cuh>
#include <reduce/lab.cuh>
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
  // TODO: warp_sum() with __shfl_down_sync(0xFFFFFFFF, v, offset), block_sum() built on it,
  //       lab 08's grid-stride loads, then one block over the partials.
  (void)in, (void)n, (void)out, (void)workspace, (void)stream;
  REDUCE_NOT_IMPLEMENTED();
}

}  // namespace reduce
