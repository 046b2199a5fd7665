// Lab 18: accuracy.
//
// Part 2: a reproducible sum. Return the exact sum rounded once to float (ties to even): add
// every element exactly as an integer multiple of 2^-149 in 32-bit digits held in 64-bit
// accumulators, pass the carries, and round once.
// Read labs/18_accuracy/README.md first. Implement the two functions below
// (the lab contract is in common/include/reduce/lab.cuh), then run this lab's tests and benchmark:
//   cmake --preset student && cmake --build --preset student && ctest --preset student -L lab18
// Until you do, the tests fail with "not implemented: see labs/18_accuracy/sum_reproducible.cu".
#include <reduce/cuda_check.cuh>
#include <reduce/lab.cuh>
#include <reduce/not_implemented.hpp>

namespace reduce {
namespace {

// TODO: your kernels here: per-thread exact accumulation of the 32-bit digits, a block sum per
//       digit, one pass of the carries per block, then a last step that adds the blocks' digits
//       and rounds to nearest, ties to even (flags for NaN, infinities and -0.0).

}  // namespace

std::size_t sum_reproducible_workspace_bytes(std::size_t n) {
  (void)n;
  // TODO
  return 0;
}

void sum_reproducible(const float* in, std::size_t n, float* out, Workspace workspace,
                      cudaStream_t stream) {
  // TODO
  (void)in, (void)n, (void)out, (void)workspace, (void)stream;
  REDUCE_NOT_IMPLEMENTED();
}

}  // namespace reduce
