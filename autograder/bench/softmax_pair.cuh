// Softmax's statistics of a row as CUB's counterparts reduce them (the offsets rows of
// reduce_bench.cu and the segment_size rows of cub_fixed_rows.cu): the pair, an element's pair and
// the online-softmax combination. In an unnamed namespace on purpose: the two files are built
// against different CUBs, and each instantiates CUB's and libcu++'s templates on types of its own
// (see cub_fixed_rows.cu).
#pragma once

#include <cmath>

namespace {

/// Softmax's statistics of a row: the maximum and the sum of exp(x - max).
struct SoftmaxPair {
  float max, sum;
};
static_assert(sizeof(SoftmaxPair) == 2 * sizeof(float));

/// An element enters as (x, 1).
struct ToSoftmaxPair {
  __device__ SoftmaxPair operator()(float x) const { return {x, 1.0f}; }
};

/// Online softmax's combination: the pair with the smaller maximum is rescaled.
struct CombineSoftmax {
  __device__ SoftmaxPair operator()(SoftmaxPair a, SoftmaxPair b) const {
    if (a.max < b.max) {
      const SoftmaxPair t = a;
      a = b;
      b = t;
    }
    if (b.max == -INFINITY) return a;
    return {a.max, a.sum + b.sum * __expf(b.max - a.max)};
  }
};

}  // namespace
