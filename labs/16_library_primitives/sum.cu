// Lab 16: reductions in production.
//
// Rebuild the capstone's steps from library primitives: cub::BlockReduce (or cub::WarpReduce, or
// cooperative groups' cg::reduce) for the block, cuda::atomic_ref for the cross-block step.
// Read labs/16_library_primitives/README.md first. Implement the two functions below (the lab
// contract is in common/include/reduce/lab.cuh), then run this lab's tests and benchmark:
//   cmake --preset student && cmake --build --preset student && ctest --preset student -L lab16
// Until you do, the tests fail with "not implemented: see labs/16_library_primitives/sum.cu".
// This lab alone may include CUB's block- and warp-level headers; cub::DeviceReduce and the
// rest of CUB's device-wide algorithms are refused here as everywhere.
#include <reduce/cuda_check.cuh>
#include <reduce/lab.cuh>
#include <reduce/not_implemented.hpp>

namespace reduce {
namespace {

// TODO: your kernel here: lab 09's grid-stride loads, then
//       cub::BlockReduce<float, kThreads>(scratch).Sum(v) for the block, then a cross-block step
//       (a last-block combine with a cuda::atomic_ref<unsigned> ticket, or a second launch).

}  // namespace

std::size_t sum_workspace_bytes(std::size_t n) {
  (void)n;
  // TODO
  return 0;
}

void sum(const float* in, std::size_t n, float* out, Workspace workspace, cudaStream_t stream) {
  // TODO
  (void)in, (void)n, (void)out, (void)workspace, (void)stream;
  REDUCE_NOT_IMPLEMENTED();
}

}  // namespace reduce
