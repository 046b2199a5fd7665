/// \file
/// \brief The lab contract: the entry points a lab implements, and the scratch memory it gets.
///
/// Every lab implements one or more of the functions declared here in a file named after the
/// operation (labs/04_sequential/sum.cu defines reduce::sum), compiled into a lab library. Tests
/// and benchmarks are written once per operation against these declarations and never load a
/// lab themselves: a lab runner process (autograder/runner/) loads the library and calls it for
/// them, on guarded copies of their buffers and a stream of its own.
///
/// Rules every implementation follows:
/// - input and output pointers are device pointers; the input is never modified;
/// - lengths are std::size_t and any n from 0 to beyond 2^31 is valid;
/// - all work is queued on \p stream and the function returns without synchronising;
/// - the workspace holds at least the bytes the matching *_workspace_bytes(n) asked for, and
///   its contents on entry are garbage (the runner fills it with 0xFF): initialise what you use;
/// - errors are reported by throwing (REDUCE_CUDA_CHECK), never by printing or exiting.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace reduce {

/// Device scratch memory handed to a lab for one call.
struct Workspace {
  void* data = nullptr;   ///< device pointer, 256-byte aligned (cudaMalloc)
  std::size_t bytes = 0;  ///< usable size

  /// The workspace viewed as an array of \p T.
  template <typename T>
  T* as() const noexcept {
    return static_cast<T*>(data);
  }
};

/// Bytes of workspace that sum() needs for \p n elements (0 if none).
std::size_t sum_workspace_bytes(std::size_t n);

/// Writes the sum of in[0], ..., in[n-1] to *out. The sum of no elements is +0.0f.
///
/// Accuracy: |*out - S| <= sum_error_bound(d, n, sum |in[i]|) (reference.hpp), S the exact sum
/// and d the depth of the lab's summation order (serial_depth(n) for lab 01's atomics,
/// tree_depth(n) for every tree). Subnormal values (magnitudes below 2^-126, FLT_MIN) may be
/// flushed to zero, as a float atomicAdd to global memory does on every GPU the course builds
/// for, without -ftz (docs/results/atomics/float_atomic_ftz.txt): a flush loses less than
/// 2^-126, a sum of n elements loses at most n values, and later roundings scale each loss by at
/// most 1 + gamma(d + 1), so the result may stray a further n * 2^-126 * (1 + gamma(d + 1)). A
/// sum of values of one sign keeps that sign or is zero.
/// \param in device input of \p n floats
/// \param n number of elements
/// \param out device pointer to one float
/// \param workspace scratch memory of sum_workspace_bytes(n) bytes
/// \param stream the stream all work is queued on
void sum(const float* in, std::size_t n, float* out, Workspace workspace, cudaStream_t stream);

// ---- exercises (labs 10-14) ---------------------------------------------------------------
// Semantics follow IEEE 754-2019 maximum/minimum and numpy/torch where those are silent:
// a NaN anywhere makes the result NaN; -0.0 < +0.0 for maximum and minimum.

/// Bytes of workspace that maximum() needs for \p n elements.
std::size_t maximum_workspace_bytes(std::size_t n);
/// Writes the largest of in[0..n) to *out. NaN if any element is NaN; +0.0 is larger than -0.0;
/// the maximum of no elements is -inf (the identity of max).
void maximum(const float* in, std::size_t n, float* out, Workspace workspace, cudaStream_t stream);

/// Bytes of workspace that minimum() needs for \p n elements.
std::size_t minimum_workspace_bytes(std::size_t n);
/// Writes the smallest of in[0..n) to *out. NaN if any element is NaN; -0.0 is smaller than +0.0;
/// the minimum of no elements is +inf.
void minimum(const float* in, std::size_t n, float* out, Workspace workspace, cudaStream_t stream);

/// Bytes of workspace that product() needs for \p n elements.
std::size_t product_workspace_bytes(std::size_t n);
/// Writes the product of in[0..n) to *out, in float; the product of no elements is 1. Overflow
/// to inf and underflow to 0 happen as IEEE arithmetic dictates for the order of the lab's tree.
void product(const float* in, std::size_t n, float* out, Workspace workspace, cudaStream_t stream);

/// Bytes of workspace that mean() needs for \p n elements.
std::size_t mean_workspace_bytes(std::size_t n);
/// Writes the arithmetic mean of in[0..n) to *out; NaN for n == 0 (as numpy). Must stay accurate
/// for long inputs: the mean of 2^30 ones is exactly 1.
void mean(const float* in, std::size_t n, float* out, Workspace workspace, cudaStream_t stream);

/// Bytes of workspace that argmax() needs for \p n elements.
std::size_t argmax_workspace_bytes(std::size_t n);
/// Writes to *out the index of the largest element: the first such index on ties (+0.0 and
/// -0.0 tie), the index of the first NaN when any element is NaN (numpy/torch semantics).
/// \throws std::invalid_argument for n == 0, before anything is queued.
void argmax(const float* in, std::size_t n, std::int64_t* out, Workspace workspace,
            cudaStream_t stream);

/// Lab 14: one thread per value calls the lab's float atomic_max(address, values[i]) and stores
/// what it returned in old_values[i]. *address must hold the start value before the call.
void atomic_max_apply(const float* values, std::size_t n, float* address, float* old_values,
                      cudaStream_t stream);

// ---- segmented reductions (lab 17) --------------------------------------------------------
// Segments as cub::DeviceSegmentedReduce takes them: segment s is in[offsets[s], offsets[s + 1]),
// for s < segments; offsets is a device array of segments + 1 int64 values, non-decreasing, from
// offsets[0] >= 0 to offsets[segments] <= n. Segments may be empty; elements outside every
// segment (any value, NaN included) never reach a result, though a lab may load those within
// in[0, n) and discard them. A thread may add a segment of up to 64 elements by itself, and a
// longer one may be shared by as few as a warp: the depth allowed is d = segment_tree_depth(L)
// (reference.hpp), min(L, max(64, ceil(L / 32)) + ceil(log2 L)).

/// Bytes of workspace that segmented_sum() needs for \p segments segments over \p n elements.
std::size_t segmented_sum_workspace_bytes(std::size_t n, std::size_t segments);
/// Writes to out[s] the sum of segment s, for every s < segments (+0.0f for an empty one), to
/// within the bound of a tree of depth segment_tree_depth(length) over that segment.
void segmented_sum(const float* in, std::size_t n, const std::int64_t* offsets,
                   std::size_t segments, float* out, Workspace workspace, cudaStream_t stream);

/// Bytes of workspace that segmented_softmax() needs for \p segments segments over \p n
/// elements.
std::size_t segmented_softmax_workspace_bytes(std::size_t n, std::size_t segments);
/// Softmax's statistics of every segment, for finite inputs: out[2s] = m, the segment's
/// maximum, exactly (either zero when -0 and +0 tie), and out[2s + 1] = the sum of exp(x - m) over
/// the segment, to within softmax_sum_error_bound() (reference.hpp) of depth
/// segment_tree_depth(length). An empty segment gives (-inf, +0.0f). \p out holds 2 * segments
/// floats.
void segmented_softmax(const float* in, std::size_t n, const std::int64_t* offsets,
                       std::size_t segments, float* out, Workspace workspace, cudaStream_t stream);

// ---- accuracy (lab 18) ----------------------------------------------------------------------
// S is the exact sum of in[0..n) (reduce::ExactSum computes it), u = 2^-24 the unit roundoff of
// float, L = kCompensatedChain = 16 and d = compensated_depth(n) = ceil(n / (16384 L)) +
// ceil(log2 n) (reference.hpp).

/// Bytes of workspace that sum_compensated() needs for \p n elements.
std::size_t sum_compensated_workspace_bytes(std::size_t n);
/// Writes to *out the sum of in[0..n) to within compensated_error_bound(L, d, S, sum |in[i]|),
/// about u |S| + (L (L - 1) / 2 - 1 + 3 d) u^2 sum |in[i]|: what a sum whose additions are carried
/// in twice float's precision achieves when it follows these rules. Each thread adds its elements
/// in compensated chains (Neumaier's: TwoSum per element, the errors summed apart) of at most L
/// elements; each chain's pair (s, c), renormalised by TwoSum, is folded into the thread's pair,
/// or meets other pairs, with the double-float addition (two TwoSums, two FastTwoSums); on the
/// path from a chain to the root lie at most d such additions whose operands are both nonzero (a
/// thread of ceil(n / 16384) elements folds ceil(n / (16384 L)) chains, the tree adds ceil(log2
/// n) levels); only the root is rounded to float. A chain's error grows with the square of its
/// length, a tree's with its depth. A double accumulator, for all of a thread's elements or in
/// the tree, meets the bound too. Unlike sum(), its error does not scale with sum |in[i]| / |S|,
/// the cancellation in the input. For finite inputs whose partial sums stay finite; the sum of no
/// elements is +0.0f.
void sum_compensated(const float* in, std::size_t n, float* out, Workspace workspace,
                     cudaStream_t stream);

/// Bytes of workspace that sum_reproducible() needs for \p n elements.
std::size_t sum_reproducible_workspace_bytes(std::size_t n);
/// Writes to *out the exact sum S rounded once to the nearest float, ties to even: the same bits
/// for any order of the elements, any block count and any GPU. Beyond the float range the result
/// is +-inf; a NaN, or +inf and -inf together, give NaN, otherwise an infinity wins; an exact
/// zero is +0.0f unless every element is -0.0f. The sum of no elements is +0.0f.
void sum_reproducible(const float* in, std::size_t n, float* out, Workspace workspace,
                      cudaStream_t stream);

}  // namespace reduce
