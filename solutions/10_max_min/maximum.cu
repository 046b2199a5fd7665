// Lab 10 (maximum): rung 9's reduction with another operator and its identity.
//
// What changed from rung 9: the operator and the value a thread starts from. A reduction needs
// an associative operator and its identity, the value that changes nothing: 0 for +, -inf for
// max. Starting from 0 (as a sum does) is wrong as soon as every element is negative. The
// operator is the IEEE 754-2019 maximum, not `a > b ? a : b`: a NaN anywhere makes the result
// NaN, and +0.0 is larger than -0.0. Plain comparisons drop a NaN whenever it is the second
// operand (every comparison with NaN is false) and keep whichever zero came first, so their
// result would depend on the order of the tree.
//
// Only the operator and the identity are here: the kernel, the grid and the two launches are
// rung 9's, written once for both operations in extremum.cuh (with why they are as fast).
#include "extremum.cuh"

namespace reduce {
namespace {

/// The operator extremum.cuh reduces with: the IEEE 754-2019 maximum.
struct Max {
  /// The identity of maximum: max(-inf, x) == x for every x, NaN included.
  __device__ static __forceinline__ float identity() { return -INFINITY; }

  /// IEEE 754-2019 maximum: NaN if either operand is NaN; +0.0 for +0.0 against -0.0 in either
  /// order; otherwise the larger. Associative and commutative, so any tree gives the same value.
  __device__ static __forceinline__ float combine(float a, float b) {
    // Written as selects, without early returns, so that the compiler emits no branches and
    // the four loads of the grid-stride loop stay in one basic block.
    const float larger = a > b ? a : b;
    const float tied = signbit(a) ? b : a;  // a == b: the same number, or +0.0 and -0.0
    const float m = a == b ? tied : larger;
    return isnan(a) | isnan(b) ? a + b : m;  // a + b is NaN when either is
  }
};

}  // namespace

std::size_t maximum_workspace_bytes(std::size_t n) {
  return extremum::workspace_bytes<Max>(n);
}

void maximum(const float* in, std::size_t n, float* out, Workspace workspace, cudaStream_t stream) {
  extremum::run<Max>(in, n, out, workspace, stream);  // n == 0 writes the identity, -inf
}

}  // namespace reduce
