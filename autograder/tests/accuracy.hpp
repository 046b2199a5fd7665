/// \file
/// \brief What lab 18's suites share: the exact sum of an input, the inputs that separate an
/// accurate sum from a float tree, and the two checks (the compensated bound, correct rounding).
#pragma once

#include "gpu_test.hpp"

#include <reduce/exact_sum.hpp>
#include <reduce/generators.hpp>
#include <reduce/reference.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace reduce::testing {

/// The exact sum of an input rounded once to double and to float, and its sum of magnitudes.
struct ExactReference {
  double exact = 0;    ///< ExactSum::to_double(): within 2^-53 of the exact sum, relatively
  float rounded = 0;   ///< ExactSum::to_float(): what sum_reproducible must return
  double abs_sum = 0;  ///< sum |x| in double (its relative error is at most n 2^-53)
};

/// ExactSum of \p x.
inline ExactReference exact_reference(const std::vector<float>& x) {
  ExactSum s;
  s.add(x.data(), x.size());
  return {s.to_double(), s.to_float(), absolute_sum(x)};
}

/// \p x in an order drawn from \p seed.
inline std::vector<float> shuffled(std::vector<float> x, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::shuffle(x.begin(), x.end(), rng);
  return x;
}

/// Random signs and exponents over almost the whole float range (2^-149 to 2^100), full
/// mantissas: sums whose exact value needs hundreds of bits before it is rounded.
inline std::vector<float> full_range(std::size_t n, std::uint64_t seed) {
  std::vector<float> x(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t r = mix(seed, i);
    const float mantissa = static_cast<float>((r & 0x7FFFFFu) | 0x800000u);
    const int exponent = static_cast<int>((r >> 24) % 250) - 149 - 23;
    const float v = std::ldexp(mantissa, exponent);
    x[i] = (r >> 32) & 1 ? -v : v;
  }
  return x;
}

/// cancelling(n, seed) shuffled: the pairs v, -v meet at random depths of any tree.
inline std::vector<float> cancelling_shuffled(std::size_t n, std::uint64_t seed) {
  return shuffled(cancelling(n, seed), seed ^ 0x5ABull);
}

/// The compensated bound (compensated_error_bound, chains of kCompensatedChain elements and a
/// tree of compensated_depth(n) pair additions) for \p host, checked on \p got, with what the
/// numbers say.
inline void expect_compensated(float got, const std::vector<float>& host, const std::string& what) {
  const ExactReference ref = exact_reference(host);
  const std::size_t n = host.size(), depth = compensated_depth(n);
  const double bound = compensated_error_bound(kCompensatedChain, depth, ref.exact, ref.abs_sum);
  const double error = std::fabs(static_cast<double>(got) - ref.exact);
  const double float_tree = sum_error_bound(tree_depth(n), n, ref.abs_sum);
  EXPECT_LE(error, bound) << what << ", n = " << n << ": got " << describe(got) << ", exact sum "
                          << ref.exact << ", error " << error << " > bound " << bound
                          << " (u|S| + (c(L) + 3d) u^2 sum|x|, chains of L = " << kCompensatedChain
                          << ", c(L) = L(L - 1)/2 - 1, d = " << depth
                          << " pair additions, sum|x| = " << ref.abs_sum
                          << "). A float accumulator may err by up to " << float_tree
                          << " here: carry each running sum as a pair (sum, compensation) with "
                             "TwoSum, start a new chain every "
                          << kCompensatedChain
                          << " elements and add the pairs with the double-float addition, or sum "
                             "in double, and round to float once at the end.";
}

/// The correctly rounded sum of \p host, bit for bit (any NaN matching any NaN), with what the
/// numbers say.
inline void expect_correctly_rounded(float got, const std::vector<float>& host,
                                     const std::string& what) {
  const ExactReference ref = exact_reference(host);
  if (bits(got) == bits(ref.rounded) || (std::isnan(got) && std::isnan(ref.rounded))) return;
  ADD_FAILURE() << what << ", n = " << host.size() << ": got " << describe(got)
                << ", the exact sum rounded once is " << describe(ref.rounded) << " (exact sum "
                << ref.exact << ", REDUCE_SEED=" << test_seed()
                << "). Only the exact sum is the same for every order of additions: accumulate "
                   "it exactly (integers in a fixed point wide enough for every float) and round "
                   "once, to nearest, ties to even.";
}

}  // namespace reduce::testing
