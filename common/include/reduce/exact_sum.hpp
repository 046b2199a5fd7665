/// \file
/// \brief The exact sum of floats, and that sum rounded once: the reference for accuracy tests.
///
/// Every finite float is an integer multiple of 2^-149 below 2^128, so any sum of floats is a
/// fixed-point number with 149 fractional bits. ExactSum keeps it exactly, in 32-bit limbs held
/// in 64-bit signed integers (a float touches at most two limbs, and a limb absorbs 2^30
/// additions before its carries must be passed on), for up to 2^40 terms. Rounding that integer
/// once gives the correctly rounded sum: the float (or double) nearest the exact value, ties to
/// even. It is the same whatever the order of the terms, so it is also what a reproducible
/// summation can be asked to return bit for bit.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace reduce {

/// An exact running sum of floats.
class ExactSum {
 public:
  /// Adds \p x exactly. Infinities and NaNs are remembered and decide the result (IEEE 754: a
  /// NaN, or +inf and -inf together, give NaN; otherwise an infinity wins).
  void add(float x);

  /// Adds every element of \p x.
  void add(const float* x, std::size_t n);

  /// Adds another exact sum (the order of additions never matters).
  void add(const ExactSum& other);

  /// The exact sum rounded to the nearest float, ties to even; +-inf beyond the float range.
  /// An exact zero is +0.0f, unless every term added was -0.0f (and at least one was added).
  float to_float() const;

  /// The exact sum rounded to the nearest double, ties to even (never infinite for finite terms).
  double to_double() const;

  /// The sign of the exact sum: -1, 0 or 1 (0 also for a NaN result).
  int sign() const;

 private:
  static constexpr int kLimbBits = 32;
  static constexpr int kLimbs = 10;  // 320 bits: 277 for any float, the rest for carries
  static constexpr int kBias = 149;  // bit 0 of the fixed point is 2^-149
  static constexpr std::int64_t kMaxPending = std::int64_t{1} << 30;

  /// Passes every limb's carry to the next one, leaving limbs 0..kLimbs-2 in [0, 2^32).
  void normalize();
  /// The value rounded to \p mantissa_bits significant bits (ties to even) as a double, with
  /// results below 2^(min_exponent) rounded to that grid (the subnormals of the target).
  double round_to(int mantissa_bits, int min_exponent) const;

  std::array<std::int64_t, kLimbs> limbs_{};
  std::int64_t pending_ = 0;  // additions since the last normalize()
  std::size_t count_ = 0;
  bool all_negative_zero_ = true;
  bool nan_ = false, plus_inf_ = false, minus_inf_ = false;
};

/// The correctly rounded float sum of \p x (ExactSum::to_float()).
float correctly_rounded_sum(const std::vector<float>& x);

}  // namespace reduce
