// Lab 06: unrolled last warp.
//
// Stop the __syncthreads() loop at 64 values and let the first warp finish with __syncwarp()
// between steps.
// Read labs/06_unroll_last_warp/README.md first. Implement the two functions below
// (the lab contract is in common/include/reduce/lab.cuh), then run this lab's tests and benchmark:
//   cmake --preset student && cmake --build --preset student && ctest --preset student -L lab06
// Until you do, the tests fail with "not implemented: see labs/06_unroll_last_warp/sum.cu".
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
  // TODO: lab 05's kernel with the last six steps unrolled for the first warp. Order every
  //       step's reads before its writes with __syncwarp(): `volatile` alone is a race.
  (void)in, (void)n, (void)out, (void)workspace, (void)stream;
  REDUCE_NOT_IMPLEMENTED();
}

}  // namespace reduce
