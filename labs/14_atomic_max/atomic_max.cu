// Lab 14: float atomicMax.
//
// Harness for atomic_max (atomic_max.cuh): one thread per value, each calls it once.
// Read labs/14_atomic_max/README.md first. Implement the function below (the lab contract is in
// common/include/reduce/lab.cuh), then run this lab's tests and benchmark:
//   cmake --preset student && cmake --build --preset student && ctest --preset student -L lab14
// Until you do, the tests fail with "not implemented: see labs/14_atomic_max/atomic_max.cu".
#include <reduce/cuda_check.cuh>
#include <reduce/lab.cuh>
#include <reduce/not_implemented.hpp>
#include "atomic_max.cuh"

namespace reduce {
namespace {

// TODO: your kernel(s) and device functions here.

}  // namespace

void atomic_max_apply(const float* values, std::size_t n, float* address, float* old_values,
                      cudaStream_t stream) {
  // TODO: launch one thread per value (n may exceed 2^31: std::size_t index, enough blocks);
  //       thread i does old_values[i] = atomic_max(address, values[i]). n == 0: launch nothing.
  (void)values, (void)n, (void)address, (void)old_values, (void)stream;
  REDUCE_NOT_IMPLEMENTED();
}

}  // namespace reduce
