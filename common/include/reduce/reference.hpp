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

#include <cstddef>
#include <vector>

namespace reduce {

/// Unit roundoff of float, 2^-24.
inline constexpr double kFloatUnitRoundoff = 1.0 / 16777216.0;

/// Fewest threads the course assumes share a tree-order reduction; bounds each thread's serial
/// chain at ceil(n / kMinReductionThreads) elements. Every tree rung launches at least this many
/// threads once the input is that large.
inline constexpr std::size_t kMinReductionThreads = 16384;

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

/// Bound on |float result - exact sum| for a summation of depth \p depth over values whose
/// magnitudes add up to \p abs_sum: gamma(depth + 1) * abs_sum, the +1 for rounding the result
/// to float, plus the double reference's own error (n * 2^-53 * abs_sum).
double sum_error_bound(std::size_t depth, std::size_t n, double abs_sum);

}  // namespace reduce
