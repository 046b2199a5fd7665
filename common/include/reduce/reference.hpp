/// \file
/// \brief CPU references in double and the error bounds that tests compare against.
///
/// Bounds follow Higham, "Accuracy and Stability of Numerical Algorithms", ch. 4: a float sum
/// evaluated by any tree of depth d (the most additions on one path from a leaf to the root)
/// satisfies |computed - exact| <= gamma(d) * sum|x_i|, gamma(d) = d*u / (1 - d*u), u = 2^-24.
/// A serial loop has depth n-1; a pairwise tree ceil(log2 n); a GPU reduction in which each
/// thread first adds a chain of L elements, then the threads' totals meet in a tree, has depth
/// at most L + ceil(log2 n).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <stdexcept>
#include <vector>

namespace reduce {

/// Unit roundoff of float, 2^-24.
inline constexpr double kFloatUnitRoundoff = 1.0 / 16777216.0;

/// Fewest threads the course assumes share a tree-order reduction; bounds each thread's serial
/// chain at ceil(n / kMinReductionThreads) elements. Every lab of order "tree" (the rungs, the
/// exercises, labs 16 and 18) launches at least this many threads once the input is that large.
inline constexpr std::size_t kMinReductionThreads = 16384;

/// Longest chain of one thread that a reduction of order "tree_atomic" (lab 15) may add by
/// itself at any size: one block of 1024 threads doing all of 2^16 elements.
inline constexpr std::size_t kSingleBlockChain = 64;

/// Most block partials a reduction of order "tree_atomic" may add into one address with
/// atomics, in whatever order they arrive: two waves of eight blocks on each SM of a 256-SM GPU
/// (lab 15's fast mode launches 2 x 8 x 132 = 2112 blocks on an H200).
inline constexpr std::size_t kMaxAtomicPartials = 4096;

/// Sum in double (chunked over threads; exact for inputs of exact_integers()).
double reference_sum(const std::vector<float>& x);

/// Sum of magnitudes in double.
double absolute_sum(const std::vector<float>& x);

/// The plain CPU baseline students compare with: one thread, one float accumulator, in order.
float serial_float_sum(const float* x, std::size_t n);

/// gamma(d) = d*u / (1 - d*u), or infinity once d*u >= 1.
double gamma(std::size_t depth);

/// Depth of a serial loop (or of n atomics on one address): n - 1.
std::size_t serial_depth(std::size_t n);

/// Depth of a balanced pairwise tree: ceil(log2 n).
std::size_t pairwise_depth(std::size_t n);

/// Depth of a GPU tree reduction: ceil(n / kMinReductionThreads) + ceil(log2 n).
std::size_t tree_depth(std::size_t n);

/// Depth of order "tree_atomic" (lab 15, both modes): the tree of tree_depth(), but small
/// inputs may go to one block (a chain of up to kSingleBlockChain) and the blocks' partials may
/// meet in a chain of up to kMaxAtomicPartials atomics on one address. The chain of the partials
/// adds to every leaf's path, so min(n - 1, max(min(n, kSingleBlockChain),
/// ceil(n / kMinReductionThreads)) + ceil(log2 n) + min(n, kMaxAtomicPartials)).
std::size_t tree_atomic_depth(std::size_t n);

/// Longest run of a segment's elements one thread may add by itself in a segmented reduction
/// (lab 17): a thread may own a row of up to this many elements.
inline constexpr std::size_t kSegmentThreadChain = 64;

/// Fewest lanes that share a longer segment: a warp.
inline constexpr std::size_t kMinSegmentLanes = 32;

/// Depth of a segment's tree in a segmented reduction, for every strategy lab 17 teaches (a
/// thread per row of up to kSegmentThreadChain elements, a few lanes, a warp, a block or the
/// grid per row): min(n, max(kSegmentThreadChain, ceil(n / kMinSegmentLanes)) + ceil(log2 n)).
std::size_t segment_tree_depth(std::size_t n);

/// Bound on |computed - S| for softmax's sum S = sum of t_i = exp(x_i - m) over a segment
/// reduced to depth \p depth (lab 17), given \p weighted = sum of t_i |x_i - m|. Each
/// evaluation of exp on an argument y <= 0 errs by at most 2^-21 + |y| 2^-22 relatively
/// (__expf's documented error); a term is rescaled at most once per level on its way up, and the
/// rescalings' arguments add up to its own |x_i - m|, so it errs by at most (depth + 1)
/// (2^-21 + 2u) + |x_i - m| 2^-22 relatively, u = 2^-24 for the product and the sum of a level.
/// Scaled by (1 + 2^-10) for the products of these factors; the double reference adds nothing of
/// weight.
double softmax_sum_error_bound(std::size_t depth, double sum, double weighted);

/// Bound on |float result - exact sum| for a summation of depth \p depth over values whose
/// magnitudes add up to \p abs_sum: gamma(depth + 1) * abs_sum, the +1 for rounding the result
/// to float, plus the double reference's own error (n * 2^-53 * abs_sum).
double sum_error_bound(std::size_t depth, std::size_t n, double abs_sum);

/// Most elements one compensated chain of lab 18 adds (Neumaier's: a float sum s with the exact
/// errors of its additions summed apart in a float c) before its pair, renormalised by TwoSum,
/// is combined into the tree of pairs. The chain's error grows with the square of its
/// length, so the chains are short and the tree carries the rest.
inline constexpr std::size_t kCompensatedChain = 16;

/// Most double-float additions with two nonzero operands that lab 18's contract lets lie on the
/// path from a chain to the root: ceil(n / (kMinReductionThreads * kCompensatedChain)) for the
/// chains a thread folds one after the other into its pair (it has at most
/// ceil(n / kMinReductionThreads) elements), plus ceil(log2 n) for the tree that follows.
std::size_t compensated_depth(std::size_t n);

/// Bound on |sum_compensated result - S| (lab 18) for chains of at most \p chain elements whose
/// renormalised pairs meet in a tree of at most \p depth double-float additions with two nonzero
/// operands on any path (an addition of a zero pair is exact), over values whose magnitudes add
/// up to \p abs_sum and whose exact sum is \p exact:
///
///   (1 + 2u) (u |S| + (c(L) + 3 depth / (1 - 4u)) u^2 sum|x|),
///   c(L) = (L (L - 1) / 2 - 1) (1 + u)^(2L)  (0 for L <= 2).
///
/// u |S| rounds the result to float. c(L), a Neumaier chain x_1..x_L: (s_k, e_k) =
/// TwoSum(s_{k-1}, x_k) is exact, s_{k-1} + x_k = s_k + e_k, so s_L + c_L errs only by the
/// roundings of c_k = fl(c_{k-1} + e_k), a recursive float sum of the e_k (Higham, Accuracy and
/// Stability of Numerical Algorithms, 2nd ed., sections 4.2-4.3: it errs by up to (k - 1) u
/// times the e_k's magnitudes, which is why the u^2 term of a compensated sum grows with the
/// chain). With A_k = |x_1| + ... + |x_k|: |s_{k-1}| <= (1 + u)^(k-2) A_k, so |e_k| <= u
/// (1 + u)^(k-2) A_k and |c_{k-1} + e_k| <= u (1 + u)^(2k-5) (k - 1) A_k; c_2 = e_2 is exact, and
/// the roundings of c_3..c_L add up to at most u^2 (1 + u)^(2L) A_L (2 + ... + (L - 1)). Data
/// that steer every rounding of c the same way reach a good part of it, hence the short chains.
/// 3 / (1 - 4u): a double-float addition of two renormalised pairs (Joldes, Muller and Popescu
/// 2017, AccurateDWPlusDW: two TwoSums, two FastTwoSums) errs by at most 3u^2 / (1 - 4u) of its
/// exact result, itself at most the magnitudes below it, so each level of the tree adds at most
/// that times sum|x|. (1 + 2u) covers the root's rounding of the accumulated error and the
/// growth of the partial sums by it. A double addition errs by 2^-53 = u^2 / 32 of its result,
/// so a double chain of all a thread's elements (and its rounding to a pair, u^2 of it) errs by
/// less than the float chains and folds it replaces. Away from underflow; the reference is exact
/// (ExactSum), so it adds nothing.
double compensated_error_bound(std::size_t chain, std::size_t depth, double exact, double abs_sum);

// ---- references for the exercises (labs 10-14) ------------------------------------------------
// The semantics are those of common/include/reduce/lab.cuh: IEEE 754-2019 maximum and minimum
// (a NaN anywhere gives NaN; -0.0 < +0.0), numpy/torch argmax (first index on ties, first NaN).

/// IEEE 754-2019 maximum of two floats: NaN if either is NaN, +0.0f for (+0.0f, -0.0f) in
/// either order, else the larger. Associative and commutative (up to the NaN's payload).
inline float ieee_maximum(float a, float b) {
  if (std::isnan(a)) return a;
  if (std::isnan(b)) return b;
  if (a == b) return std::signbit(a) ? b : a;  // +0.0 beats -0.0; equal non-zeros are the same
  return a > b ? a : b;
}

/// IEEE 754-2019 minimum of two floats: NaN if either is NaN, -0.0f for (+0.0f, -0.0f) in
/// either order, else the smaller.
inline float ieee_minimum(float a, float b) {
  if (std::isnan(a)) return a;
  if (std::isnan(b)) return b;
  if (a == b) return std::signbit(a) ? a : b;  // -0.0 beats +0.0
  return a < b ? a : b;
}

/// Largest element by ieee_maximum(); -inf for no elements (the identity of maximum).
float reference_maximum(const std::vector<float>& x);

/// Smallest element by ieee_minimum(); +inf for no elements (the identity of minimum).
float reference_minimum(const std::vector<float>& x);

/// Index of the first NaN if x holds one; otherwise the first index of the largest element,
/// +0.0 and -0.0 counting as equal. 64-bit, like the lab's output.
/// \throws std::invalid_argument for an empty x (argmax of nothing is undefined).
std::int64_t reference_argmax(const std::vector<float>& x);

// ---- the same references over values computed by index ---------------------------------------
// For inputs generated on the GPU from a per-index function (generators.hpp's *_at): the
// expected value comes from that function, without a host copy of the input. Each gives
// exactly what its reference above gives on the vector of the n values, bit for bit, on any
// number of chunks (threads): \p chunks, or chunk_count(n) where that is 0 or more than n.

/// How many chunks for_each_chunk() splits \p n indices into: one per hardware thread, at most
/// one per 2^16 indices, at least one (the host generators and references use it too).
std::size_t chunk_count(std::size_t n);

/// Calls \p chunk(c, begin, end) for the \p chunks consecutive ranges [begin, end) that split
/// [0, n) in order (c = 0, 1, ...), each on a thread of its own, and returns once all have.
void for_each_chunk(std::size_t n, std::size_t chunks,
                    const std::function<void(std::size_t, std::size_t, std::size_t)>& chunk);

/// ieee_maximum() or ieee_minimum() (\p combine) of value_at(0), ..., value_at(n - 1), from
/// \p identity: what reference_maximum() or reference_minimum() gives on their vector.
template <typename Combine, typename ValueAt>
float streamed_extremum(std::size_t n, const ValueAt& value_at, Combine combine, float identity,
                        std::size_t chunks) {
  // combine is associative and commutative, and each chunk stops at its first NaN, so the
  // chunks' results met in order give the first NaN, as the serial loop does.
  if (chunks == 0 || chunks > n) chunks = chunk_count(n);
  std::vector<float> partial(chunks, identity);
  for_each_chunk(n, chunks, [&](std::size_t c, std::size_t begin, std::size_t end) {
    float m = identity;
    for (std::size_t i = begin; i < end && !std::isnan(m); ++i) m = combine(m, value_at(i));
    partial[c] = m;
  });
  float m = identity;
  for (std::size_t c = 0; c < chunks && !std::isnan(m); ++c) m = combine(m, partial[c]);
  return m;
}

/// reference_maximum() of value_at(0), ..., value_at(n - 1).
template <typename ValueAt>
float streamed_maximum(std::size_t n, const ValueAt& value_at, std::size_t chunks = 0) {
  return streamed_extremum(n, value_at, ieee_maximum, -std::numeric_limits<float>::infinity(),
                           chunks);
}

/// reference_minimum() of value_at(0), ..., value_at(n - 1).
template <typename ValueAt>
float streamed_minimum(std::size_t n, const ValueAt& value_at, std::size_t chunks = 0) {
  return streamed_extremum(n, value_at, ieee_minimum, std::numeric_limits<float>::infinity(),
                           chunks);
}

/// reference_argmax() of value_at(0), ..., value_at(n - 1): the first NaN's index, else the
/// first index of the largest value (+0.0 and -0.0 equal).
/// \throws std::invalid_argument for n == 0.
template <typename ValueAt>
std::int64_t streamed_argmax(std::size_t n, const ValueAt& value_at, std::size_t chunks = 0) {
  if (n == 0) throw std::invalid_argument("streamed_argmax: argmax of no elements");
  struct Best {
    std::size_t index;
    float value;
  };
  if (chunks == 0 || chunks > n) chunks = chunk_count(n);
  std::vector<Best> partial(chunks);
  for_each_chunk(n, chunks, [&](std::size_t c, std::size_t begin, std::size_t end) {
    Best best{begin, value_at(begin)};
    for (std::size_t i = begin; i < end && !std::isnan(best.value); ++i) {
      const float v = value_at(i);
      if (std::isnan(v) || v > best.value) best = Best{i, v};  // strict: ties keep the first
    }
    partial[c] = best;
  });
  // In index order: the first chunk that holds a NaN holds the first NaN; otherwise a strictly
  // larger value of a later chunk replaces the one kept, so ties keep the first index.
  Best best = partial[0];
  for (std::size_t c = 1; c < chunks && !std::isnan(best.value); ++c) {
    if (std::isnan(partial[c].value) || partial[c].value > best.value) best = partial[c];
  }
  return static_cast<std::int64_t>(best.index);
}

/// Product of x in double precision with the exponent kept apart (no overflow or underflow
/// along the way, whatever n): NaN if any element is NaN or if a zero meets an infinity;
/// otherwise a zero or an infinity with the sign of the product, or the finite product
/// (which may still exceed double's range and come back as +-inf or +-0). 1 for no elements.
/// Relative error at most about n * 2^-53.
double reference_product(const std::vector<float>& x);

/// Mean in double: reference_sum(x) / n; NaN for no elements (as numpy).
double reference_mean(const std::vector<float>& x);

/// Bound on |float product - exact| / |exact| for a product of \p n finite factors in float,
/// evaluated in any order without overflow or underflow: gamma(n - 1), plus the double
/// reference's own error (2 n 2^-53). Unlike a sum, every one of the n - 1 roundings scales the
/// whole result, whatever the tree, so a loop and a balanced tree share this worst case. It
/// grows linearly and says nothing past 2^24 factors; a probabilistic bound that assumes
/// independent rounding errors is no way out for factors near 1, whose roundings are biased (a
/// float pairwise product of 2^24 factors in 1 +- 2^-9 errs by about 5e-3, far past the
/// lambda = 8 bound of Higham and Mary, about 2e-3).
double product_relative_error_bound(std::size_t n);

/// Bound on |float mean - exact mean| when the sum was evaluated with depth \p depth and then
/// divided by n with one rounding to float in double precision: the sum's bound
/// (sum_error_bound) divided by n, plus 2u |mean| for the division and the final rounding,
/// everything scaled by (1 + 2u).
double mean_error_bound(std::size_t depth, std::size_t n, double abs_sum, double mean);

}  // namespace reduce
