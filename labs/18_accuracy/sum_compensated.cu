// Lab 18: accuracy.
//
// Part 1: a compensated sum. Carry every running sum as a pair (sum, compensation): Neumaier's
// TwoSum chains per thread, double-float pairs in the tree, one rounding to float at the end.
// Read labs/18_accuracy/README.md first. Implement the two functions below
// (the lab contract is in common/include/reduce/lab.cuh), then run this lab's tests and benchmark:
//   cmake --preset student && cmake --build --preset student && ctest --preset student -L lab18
// Until you do, the tests fail with "not implemented: see labs/18_accuracy/sum_compensated.cu".
#include <reduce/cuda_check.cuh>
#include <reduce/lab.cuh>
#include <reduce/not_implemented.hpp>

namespace reduce {
namespace {

// TODO: your kernels here: rung 9's loads and tree, with each float running sum replaced by a
//       pair hi + lo (TwoSum per element, the accurate pair addition in the tree). A chain adds
//       at most kCompensatedChain (16) elements before its renormalised pair is folded into the
//       thread's pair (reduce/reference.hpp; the contract's bound assumes it).

}  // namespace

std::size_t sum_compensated_workspace_bytes(std::size_t n) {
  (void)n;
  // TODO
  return 0;
}

void sum_compensated(const float* in, std::size_t n, float* out, Workspace workspace,
                     cudaStream_t stream) {
  // TODO
  (void)in, (void)n, (void)out, (void)workspace, (void)stream;
  REDUCE_NOT_IMPLEMENTED();
}

}  // namespace reduce
