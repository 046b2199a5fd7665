// Lab 08: many elements per thread.
//
// Size the grid from the SM count and occupancy; each thread adds many elements in a grid-stride
// loop.
// Read labs/08_many_per_thread/README.md first. Implement the two functions below
// (the lab contract is in common/include/reduce/lab.cuh), then run this lab's tests and benchmark:
//   cmake --preset student && cmake --build --preset student && ctest --preset student -L lab08
// Until you do, the tests fail with "not implemented: see labs/08_many_per_thread/sum.cu".
#include <reduce/cuda_check.cuh>
#include <reduce/lab.cuh>
#include <reduce/not_implemented.hpp>

namespace reduce {
namespace {

// TODO: your kernel(s) here.

}  // namespace

std::size_t sum_workspace_bytes(std::size_t n) {
  (void)n;
  // TODO: one float per block of the grid you launch.
  return 0;
}

void sum(const float* in, std::size_t n, float* out, Workspace workspace, cudaStream_t stream) {
  // TODO: 1. grid = SMs x resident blocks per SM (cudaDeviceGetAttribute,
  //          cudaOccupancyMaxActiveBlocksPerMultiprocessor), fewer when n is small;
  //       2. a grid-stride loop with several independent accumulators, then lab 07's tree;
  //       3. a second launch of one block reduces the per-block partials into *out.
  (void)in, (void)n, (void)out, (void)workspace, (void)stream;
  REDUCE_NOT_IMPLEMENTED();
}

}  // namespace reduce
