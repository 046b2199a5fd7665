// Lab 14: float atomicMax.
//
// Lab 10's block maximum, then one atomic_max per block onto an output that starts at -inf.
// Read labs/14_atomic_max/README.md first. Implement maximum() below (the lab contract is in
// common/include/reduce/lab.cuh), then run this lab's tests and benchmark:
//   cmake --preset student && cmake --build --preset student && ctest --preset student -L lab14
// Until you do, the tests fail with "not implemented: see labs/14_atomic_max/maximum.cu".
#include <reduce/cuda_check.cuh>
#include <reduce/lab.cuh>
#include <reduce/not_implemented.hpp>
#include "atomic_max.cuh"

namespace reduce {
namespace {

// TODO: your kernel(s) and device functions here.

}  // namespace

std::size_t maximum_workspace_bytes(std::size_t n) {
  (void)n;
  return 0;  // the atomics need no scratch memory
}

void maximum(const float* in, std::size_t n, float* out, Workspace workspace, cudaStream_t stream) {
  // TODO: 1. set *out to -inf on `stream` (a one-thread kernel: cudaMemsetAsync repeats one
  //          byte and cannot write -inf; and 0 is the wrong start, see the lesson);
  //       2. launch a full grid: grid-stride loop, IEEE max (lab 10), block maximum;
  //       3. thread 0 of each block: atomic_max(out, block_max).
  (void)in, (void)n, (void)out, (void)workspace, (void)stream;
  REDUCE_NOT_IMPLEMENTED();
}

}  // namespace reduce
