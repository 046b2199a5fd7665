/// \file
/// \brief Test and benchmark inputs, generated on the host from a seed (same seed, same data).
///
/// Every generator is a pure function of (seed, index), filled in parallel, so a 2^31-element
/// input takes about a second and a failing case can be reproduced from its seed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace reduce {

/// Largest sum of magnitudes exact_integers() produces: every partial sum of such an input, in
/// any order, is an integer of at most 24 bits and therefore exact in float.
inline constexpr double kExactBudget = 16777216.0;  // 2^24

/// Small integers whose every partial sum is exactly representable in float, so any summation
/// order gives the same, exact result (compare bitwise). Up to 2^21 elements: values in
/// ±{1..8}; up to 2^24: ±1; beyond: one +1 at a random place in each run of ceil(n / 2^23)
/// elements, zeros elsewhere (sum of magnitudes <= 2^23 by construction). No element of the
/// first two kinds is zero, so a dropped or doubled element always changes the sum.
std::vector<float> exact_integers(std::size_t n, std::uint64_t seed);

/// Zeros with one \p value at \p position.
std::vector<float> sentinel(std::size_t n, std::size_t position, float value);

/// Uniform in [lo, hi).
std::vector<float> uniform(std::size_t n, std::uint64_t seed, float lo, float hi);

/// Uniform in [-1, 1): sums with cancellation.
std::vector<float> mixed_sign(std::size_t n, std::uint64_t seed);

/// Random sign, magnitude 2^e with e uniform in [-20, 20]: a spread of 12 decades.
std::vector<float> wide_range(std::size_t n, std::uint64_t seed);

/// Deterministic 64-bit mix of \p seed and \p index (splitmix64), for generators and tests.
std::uint64_t mix(std::uint64_t seed, std::uint64_t index) noexcept;

/// A fresh seed from the clock and the process, for runs that must not repeat their inputs.
std::uint64_t fresh_seed() noexcept;

}  // namespace reduce
