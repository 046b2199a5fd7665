// Lab 10: maximum and minimum.
//
// Lab 09's warp-shuffle reduction with the IEEE minimum and its identity, +inf.
// Read labs/10_max_min/README.md first. Implement the two functions below
// (the lab contract is in common/include/reduce/lab.cuh), then run this lab's tests and benchmark:
//   cmake --preset student && cmake --build --preset student && ctest --preset student -L lab10
// Until you do, the tests fail with "not implemented: see labs/10_max_min/minimum.cu".
#include <reduce/cuda_check.cuh>
#include <reduce/lab.cuh>
#include <reduce/not_implemented.hpp>

namespace reduce {
namespace {

// TODO: your kernel(s) and device functions here.

}  // namespace

std::size_t minimum_workspace_bytes(std::size_t n) {
  (void)n;
  // TODO: one float per block of the grid you launch (0 if one block does it all).
  return 0;
}

void minimum(const float* in, std::size_t n, float* out, Workspace workspace, cudaStream_t stream) {
  // TODO: as maximum.cu, mirrored: min_ieee(a, b) (NaN wins; -0.0 beats +0.0; else the
  //       smaller) and the identity +inf; n == 0 must write +inf.
  (void)in, (void)n, (void)out, (void)workspace, (void)stream;
  REDUCE_NOT_IMPLEMENTED();
}

}  // namespace reduce
