// Lab 10: maximum and minimum.
//
// Lab 09's warp-shuffle reduction with the IEEE maximum and its identity, -inf.
// Read labs/10_max_min/README.md first. Implement the two functions below
// (the lab contract is in common/include/reduce/lab.cuh), then run this lab's tests and benchmark:
//   cmake --preset student && cmake --build --preset student && ctest --preset student -L lab10
// Until you do, the tests fail with "not implemented: see labs/10_max_min/maximum.cu".
#include <reduce/cuda_check.cuh>
#include <reduce/lab.cuh>
#include <reduce/not_implemented.hpp>

namespace reduce {
namespace {

// TODO: your kernel(s) and device functions here.

}  // namespace

std::size_t maximum_workspace_bytes(std::size_t n) {
  (void)n;
  // TODO: one float per block of the grid you launch (0 if one block does it all).
  return 0;
}

void maximum(const float* in, std::size_t n, float* out, Workspace workspace, cudaStream_t stream) {
  // TODO: 1. a device function max_ieee(a, b): NaN if either is NaN; for equal values prefer
  //          +0.0 over -0.0 (signbit); else the larger;
  //       2. lab 09's kernel with max_ieee instead of +, and -inf (not 0) wherever a sum
  //          starts from 0: the accumulators and the lanes beyond the block's warps;
  //       3. the same grid (SMs x occupancy) and two launches; n == 0 must write -inf.
  (void)in, (void)n, (void)out, (void)workspace, (void)stream;
  REDUCE_NOT_IMPLEMENTED();
}

}  // namespace reduce
