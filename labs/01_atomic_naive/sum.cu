// Lab 01: naive atomic sum.
//
// Every thread adds its one element to *out with atomicAdd.
// Read labs/01_atomic_naive/README.md first. Implement the two functions below
// (the lab contract is in common/include/reduce/lab.cuh), then run this lab's tests and benchmark:
//   cmake --preset student && cmake --build --preset student && ctest --preset student -L lab01
// Until you do, the tests fail with "not implemented: see labs/01_atomic_naive/sum.cu".
#include <reduce/lab.cuh>
#include <reduce/multi_pass.cuh>
#include <reduce/not_implemented.hpp>

namespace reduce {
namespace {

// TODO: your kernel(s) here.

}  // namespace

std::size_t sum_workspace_bytes(std::size_t n) {
  (void)n;
  return 0;  // this rung needs no scratch memory
}

void sum(const float* in, std::size_t n, float* out, Workspace workspace, cudaStream_t stream) {
  // TODO: 1. set *out to 0 on `stream` (cudaMemsetAsync): the output accumulates.
  //       2. launch one thread per element (blocks_for(n, threads) blocks) running a kernel
  //          that does atomicAdd(out, in[i]) when i < n. Index with std::size_t.
  //       3. REDUCE_CUDA_CHECK_LAUNCH();
  (void)in, (void)n, (void)out, (void)workspace, (void)stream;
  REDUCE_NOT_IMPLEMENTED();
}

}  // namespace reduce
