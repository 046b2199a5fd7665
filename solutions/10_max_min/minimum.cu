// Lab 10 (minimum): the mirror image of maximum.cu.
//
// Same structure as maximum.cu (rung 9's loads, warp shuffles, two launches, all in
// extremum.cuh); only the operator and the identity change. The identity of minimum is +inf.
// The operator is the IEEE 754-2019 minimum: a NaN anywhere makes the result NaN, and -0.0 is
// smaller than +0.0, so the minimum of {+0.0, -0.0} is -0.0 in any order.
#include "extremum.cuh"

namespace reduce {
namespace {

/// The operator extremum.cuh reduces with: the IEEE 754-2019 minimum.
struct Min {
  /// The identity of minimum: min(+inf, x) == x for every x, NaN included.
  __device__ static __forceinline__ float identity() { return INFINITY; }

  /// IEEE 754-2019 minimum: NaN if either operand is NaN; -0.0 for +0.0 against -0.0 in either
  /// order; otherwise the smaller. Associative and commutative, so any tree gives the same value.
  __device__ static __forceinline__ float combine(float a, float b) {
    // Selects, no early returns: no branches in the hot loop (see maximum.cu).
    const float smaller = a < b ? a : b;
    const float tied = signbit(a) ? a : b;  // a == b: the same number, or +0.0 and -0.0
    const float m = a == b ? tied : smaller;
    return isnan(a) | isnan(b) ? a + b : m;  // a + b is NaN when either is
  }
};

}  // namespace

std::size_t minimum_workspace_bytes(std::size_t n) {
  return extremum::workspace_bytes<Min>(n);
}

void minimum(const float* in, std::size_t n, float* out, Workspace workspace, cudaStream_t stream) {
  extremum::run<Min>(in, n, out, workspace, stream);  // n == 0 writes the identity, +inf
}

}  // namespace reduce
