/// \file
/// \brief Test and benchmark inputs, generated on the host from a seed (same seed, same data).
///
/// Every generator is a pure function of (seed, index), filled in parallel, so a 2^31-element
/// input takes about a second and a failing case can be reproduced from its seed.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

/// Marks the few generator functions that device code may call too (inputs filled on the GPU).
#if defined(__CUDACC__)
#define REDUCE_HOST_DEVICE __host__ __device__
#else
#define REDUCE_HOST_DEVICE
#endif

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

/// Deterministic 64-bit mix of \p seed and \p index (splitmix64), for generators and tests.
REDUCE_HOST_DEVICE constexpr std::uint64_t mix(std::uint64_t seed, std::uint64_t index) noexcept {
  std::uint64_t z = seed + 0x9E3779B97F4A7C15ull * (index + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/// Element \p i of exact_integers(n, seed), computed alone: lets a GPU kernel fill a
/// multi-gigabyte input in place with the very values the host generator would produce.
REDUCE_HOST_DEVICE constexpr float exact_integer_at(std::size_t n, std::uint64_t seed,
                                                    std::size_t i) noexcept {
  constexpr std::size_t kBudget = std::size_t{1} << 24;  // kExactBudget
  if (n * 8 <= kBudget) {
    const std::uint64_t r = mix(seed, i);
    const float magnitude = static_cast<float>(1 + (r & 7));
    return (r & 8) ? -magnitude : magnitude;
  }
  if (n <= kBudget) return (mix(seed, i) & 1) ? -1.0f : 1.0f;
  // One +1 per run of `run` elements keeps the sum of magnitudes at most n / run <= 2^23.
  const std::size_t run = (n + (std::size_t{1} << 23) - 1) >> 23;
  return (i % run == mix(seed, i / run) % run) ? 1.0f : 0.0f;
}

/// The exact sum of exact_integers(n, seed), found without materializing a large input.
double exact_integers_sum(std::size_t n, std::uint64_t seed);

/// Zeros with one \p value at \p position.
std::vector<float> sentinel(std::size_t n, std::size_t position, float value);

/// The largest float below \p x (x finite): std::nextafter(x, -inf), callable on the device.
REDUCE_HOST_DEVICE inline float float_below(float x) noexcept {
  std::uint32_t bits = 0;
  std::memcpy(&bits, &x, sizeof bits);
  if (x > 0.0f)
    --bits;
  else if (x < 0.0f)
    ++bits;
  else
    bits = 0x80000001u;  // -0 and +0: the negative denormal closest to zero
  float below = 0;
  std::memcpy(&below, &bits, sizeof below);
  return below;
}

/// Element \p i of uniform(n, seed, lo, hi), computed alone (GPU fills use it too).
REDUCE_HOST_DEVICE inline float uniform_at(std::uint64_t seed, std::size_t i, float lo,
                                           float hi) noexcept {
  const double unit = static_cast<double>(mix(seed, i) >> 11) * 0x1.0p-53;  // [0, 1)
  const float v = static_cast<float>(lo + (hi - lo) * unit);
  const float below = float_below(hi);  // keeps hi excluded after rounding
  return below < v ? below : v;
}

/// Uniform in [lo, hi).
std::vector<float> uniform(std::size_t n, std::uint64_t seed, float lo, float hi);

/// Uniform in [-1, 1): sums with cancellation.
std::vector<float> mixed_sign(std::size_t n, std::uint64_t seed);

/// Random sign, magnitude 2^e with e uniform in [-20, 20]: a spread of 12 decades.
std::vector<float> wide_range(std::size_t n, std::uint64_t seed);

// ---- ill-conditioned sums (lab 18) -------------------------------------------------------------

/// Leading small integers of cancelling(): their sum is the input's exact sum.
inline constexpr std::size_t kCancellingSmall = 1024;

/// Element \p i of cancelling(n, seed), computed alone (GPU fills use it too).
REDUCE_HOST_DEVICE inline float cancelling_at(std::size_t n, std::uint64_t seed,
                                              std::size_t i) noexcept {
  const std::size_t small = n < kCancellingSmall ? n : kCancellingSmall;
  if (i < small) {
    const std::uint64_t r = mix(seed, i);
    const float magnitude = static_cast<float>(1 + (r & 7));
    return (r & 8) ? -magnitude : magnitude;
  }
  // The rest: a value with a full 24-bit mantissa in [2^-12, 2^12), and its exact negation at
  // the mirrored place, so that every pair cancels only when the two halves meet.
  const std::size_t pairs = (n - small) / 2, j = i - small;
  const bool first_half = j < pairs;
  if (!first_half && j < n - small - pairs) return 0.0f;  // the middle of an odd count
  const std::size_t k = first_half ? j : n - small - 1 - j;
  const std::uint64_t r = mix(seed ^ 0xCA4CE11ull, k);
  const float mantissa = static_cast<float>((r & 0x7FFFFFu) | 0x800000u);  // [2^23, 2^24)
  const int exponent = static_cast<int>((r >> 23) % 24) - 12 - 23;
  const float v = ldexpf(mantissa, exponent);
  return first_half ? v : -v;
}

/// An ill-conditioned input: up to kCancellingSmall leading integers in +-{1..8}, then values of
/// magnitude 2^-12 to 2^12 whose second half negates the first in mirrored order. The exact sum
/// is that of the integers (cancelling_sum()), while sum |x| is some 300 n: a float tree errs
/// by far more than the sum itself, a compensated one by a few units in its last place.
std::vector<float> cancelling(std::size_t n, std::uint64_t seed);

/// The exact sum of cancelling(n, seed): an integer.
double cancelling_sum(std::size_t n, std::uint64_t seed);

/// A fresh seed from the clock and the process, for runs that must not repeat their inputs.
std::uint64_t fresh_seed() noexcept;

// ---- adversarial inputs for maximum, minimum, argmax, product and atomic max (labs 10-14) -----

/// The float whose bit pattern is \p bits, callable on the device.
REDUCE_HOST_DEVICE inline float float_from_bits(std::uint32_t bits) noexcept {
  float v = 0;
  std::memcpy(&v, &bits, sizeof v);
  return v;
}

/// Element \p i of all_negative(n, seed), computed alone (GPU fills use it too). Every step is
/// one correctly rounded IEEE operation, so host and device give the same bits.
REDUCE_HOST_DEVICE inline float all_negative_at(std::uint64_t seed, std::size_t i) noexcept {
  const double unit = static_cast<double>(mix(seed, i) >> 11) * 0x1.0p-53;  // [0, 1), exact
  return -(1.0f + static_cast<float>(1023.0 * unit));
}

/// Strictly negative values -(1 + 1023 u), u uniform in [0, 1): the maximum is negative, so a
/// reduction that starts from 0 instead of -inf (or memsets its output to 0) returns 0.
std::vector<float> all_negative(std::size_t n, std::uint64_t seed);

/// +0.0f and -0.0f at random, each with probability 1/2. The IEEE maximum of such an input is
/// +0.0f as soon as one +0.0f is present, the minimum -0.0f as soon as one -0.0f is.
std::vector<float> signed_zeros(std::size_t n, std::uint64_t seed);

/// Element \p i of signed_mix(n, seed, zero_fraction, inf_fraction), computed alone (GPU fills
/// use it too). The value is built from its bits, so host and device give the same ones.
REDUCE_HOST_DEVICE inline float signed_mix_at(std::uint64_t seed, std::size_t i,
                                              double zero_fraction, double inf_fraction) noexcept {
  const std::uint64_t kind = mix(seed ^ 0x5BD1E995ull, i);
  const std::uint64_t r = mix(seed, i);
  const std::uint32_t sign = (kind & 1) ? 0x80000000u : 0u;
  const double u = static_cast<double>(kind >> 11) * 0x1.0p-53;  // [0, 1), exact
  if (u < inf_fraction) return float_from_bits(sign | 0x7F800000u);
  if (u < inf_fraction + zero_fraction) return float_from_bits(sign);
  // (1 + m / 2^16) 2^e: 16 random bits of mantissa, e uniform in [-20, 20].
  const auto exponent = static_cast<std::uint32_t>((r >> 8) % 41) + 127 - 20;
  const auto mantissa = static_cast<std::uint32_t>((r >> 16) & 0xFFFF) << 7;
  return float_from_bits(sign | exponent << 23 | mantissa);
}

/// Random sign; magnitudes as wide_range() (2^-20 to 2^21); about \p zero_fraction of the
/// elements are +0.0f or -0.0f and about \p inf_fraction are +inf or -inf, signs at random.
std::vector<float> signed_mix(std::size_t n, std::uint64_t seed, double zero_fraction,
                              double inf_fraction);

/// Values strictly below \p top, with \p top itself at each of \p positions that is < n: the
/// maximum is reached at several places (argmax must return the first). \p top must be finite.
std::vector<float> ties(std::size_t n, std::uint64_t seed, float top,
                        const std::vector<std::size_t>& positions);

/// Writes \p value at each of \p positions that is < x.size(), e.g. NaN at the first, a middle
/// and the last place. Positions out of range are ignored, so one list serves every size.
void place(std::vector<float>& x, const std::vector<std::size_t>& positions, float value);

/// Most exponent steps exact_product_factors() puts in one direction: at most this many factors
/// of magnitude 2 and as many of magnitude 1/2.
inline constexpr std::size_t kProductExponentBudget = 60;

/// Factors whose product is exact in float in any order: +1 or -1 (random sign) everywhere,
/// except at up to kProductExponentBudget places +-2 and up to as many +-0.5. Every partial
/// product of any subset is +-2^k with |k| <= 60, far inside float's range, so every
/// multiplication order gives the same, exact result (compare bitwise). Dropping or doubling
/// a +-2, +-0.5 or -1 changes the product.
std::vector<float> exact_product_factors(std::size_t n, std::uint64_t seed);

/// Element \p i of exact_product_factors(n, seed) before exact_product_scales() is written over
/// it: +1 or -1 (GPU fills use it too).
REDUCE_HOST_DEVICE constexpr float exact_product_sign_at(std::uint64_t seed,
                                                         std::size_t i) noexcept {
  return (mix(seed, i) & 1) ? -1.0f : 1.0f;
}

/// One element of exact_product_factors() that is not +-1: its place and its value.
struct PlacedFactor {
  std::size_t index;  ///< the place, < n
  float value;        ///< +-2 or +-0.5
};

/// The +-2 and +-0.5 of exact_product_factors(n, seed), in the order they are written over the
/// signs of exact_product_sign_at() (a place drawn twice keeps the later one).
std::vector<PlacedFactor> exact_product_scales(std::size_t n, std::uint64_t seed);

/// The exact product of exact_product_factors(n, seed), +-2^k, found without materializing a
/// large input: static_cast<float>(reference_product()) of it.
float exact_product_factors_product(std::size_t n, std::uint64_t seed);

}  // namespace reduce
