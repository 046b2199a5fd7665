// Lab 05: first add during load.
//
// Each thread loads two elements one block apart and adds them before the tree.
// Read labs/05_first_add_load/README.md first. Implement the two functions below
// (the lab contract is in common/include/reduce/lab.cuh), then run this lab's tests and benchmark:
//   cmake --preset student && cmake --build --preset student && ctest --preset student -L lab05
// Until you do, the tests fail with "not implemented: see labs/05_first_add_load/sum.cu".
#include <reduce/lab.cuh>
#include <reduce/multi_pass.cuh>
#include <reduce/not_implemented.hpp>

namespace reduce {
namespace {

// TODO: your kernel(s) here.

}  // namespace

std::size_t sum_workspace_bytes(std::size_t n) {
  (void)n;
  // TODO: a block now covers 2 * threads elements.
  return 0;
}

void sum(const float* in, std::size_t n, float* out, Workspace workspace, cudaStream_t stream) {
  // TODO: lab 04's kernel with the first add during the load, driven by shrink_by_passes().
  (void)in, (void)n, (void)out, (void)workspace, (void)stream;
  REDUCE_NOT_IMPLEMENTED();
}

}  // namespace reduce
