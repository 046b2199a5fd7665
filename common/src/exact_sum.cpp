#include <reduce/exact_sum.hpp>

#include <cmath>
#include <cstring>
#include <limits>

namespace reduce {
namespace {

/// Passes each limb's carry to the next: limbs 0..n-2 end in [0, 2^32), the top one keeps the
/// sign of the whole.
template <std::size_t N>
void propagate(std::array<std::int64_t, N>& limbs) {
  for (std::size_t i = 0; i + 1 < N; ++i) {
    // Floor division by 2^32 (an arithmetic shift rounds toward minus infinity).
    const std::int64_t carry = limbs[i] >> 32;
    limbs[i] -= carry * (std::int64_t{1} << 32);
    limbs[i + 1] += carry;
  }
}

}  // namespace

void ExactSum::add(float x) {
  ++count_;
  if (!(x == 0.0f && std::signbit(x))) all_negative_zero_ = false;
  if (std::isnan(x)) {
    nan_ = true;
    return;
  }
  if (std::isinf(x)) {
    (x > 0 ? plus_inf_ : minus_inf_) = true;
    return;
  }
  if (x == 0.0f) return;
  std::uint32_t bits = 0;
  std::memcpy(&bits, &x, sizeof bits);
  const std::uint32_t field = (bits >> 23) & 0xFFu;
  const std::uint64_t mantissa = field == 0 ? (bits & 0x7FFFFFu) : ((bits & 0x7FFFFFu) | 0x800000u);
  // x = mantissa * 2^(position - kBias): subnormals sit at position 0, normals at field - 1.
  const int position = field == 0 ? 0 : static_cast<int>(field) - 1;
  const int limb = position / kLimbBits;
  const std::uint64_t shifted = mantissa << (position % kLimbBits);  // below 2^56
  const std::int64_t sign = bits >> 31 ? -1 : 1;
  limbs_[limb] += sign * static_cast<std::int64_t>(shifted & 0xFFFFFFFFu);
  limbs_[limb + 1] += sign * static_cast<std::int64_t>(shifted >> 32);
  if (++pending_ >= kMaxPending) normalize();
}

void ExactSum::add(const float* x, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) add(x[i]);
}

void ExactSum::add(const ExactSum& other) {
  ExactSum o = other;
  o.normalize();
  normalize();
  for (int i = 0; i < kLimbs; ++i) limbs_[i] += o.limbs_[i];
  pending_ = 1;  // every limb moved by less than 2^32 since normalize()
  if (other.count_ > 0) all_negative_zero_ = all_negative_zero_ && other.all_negative_zero_;
  count_ += other.count_;
  nan_ = nan_ || other.nan_;
  plus_inf_ = plus_inf_ || other.plus_inf_;
  minus_inf_ = minus_inf_ || other.minus_inf_;
}

void ExactSum::normalize() {
  propagate(limbs_);
  pending_ = 0;
}

int ExactSum::sign() const {
  if (nan_ || (plus_inf_ && minus_inf_)) return 0;
  if (plus_inf_) return 1;
  if (minus_inf_) return -1;
  ExactSum copy = *this;
  copy.normalize();
  if (copy.limbs_[kLimbs - 1] < 0) return -1;
  for (std::int64_t limb : copy.limbs_)
    if (limb != 0) return 1;
  return 0;
}

double ExactSum::round_to(int mantissa_bits, int min_exponent) const {
  ExactSum copy = *this;
  copy.normalize();
  const bool negative = copy.limbs_[kLimbs - 1] < 0;
  std::array<std::int64_t, kLimbs> magnitude = copy.limbs_;
  if (negative) {
    for (std::int64_t& limb : magnitude) limb = -limb;
    propagate(magnitude);
  }
  const auto bit = [&](int k) {
    return (static_cast<std::uint64_t>(magnitude[k / kLimbBits]) >> (k % kLimbBits)) & 1u;
  };
  int msb = kLimbs * kLimbBits - 1;
  while (msb >= 0 && bit(msb) == 0) --msb;
  if (msb < 0) return 0.0;
  // Keep mantissa_bits bits from the leading one, but none below the target's smallest step.
  int low = msb - (mantissa_bits - 1);
  if (low < min_exponent + kBias) low = min_exponent + kBias;
  if (low < 0) low = 0;  // every bit of a sum of floats is at 2^-149 or above
  std::uint64_t kept = 0;
  for (int k = msb; k >= low; --k) kept = (kept << 1) | bit(k);
  if (low > 0) {
    const bool half = bit(low - 1) != 0;
    bool below = false;
    for (int k = low - 2; k >= 0 && !below; --k) below = bit(k) != 0;
    if (half && (below || (kept & 1u) != 0)) ++kept;  // to nearest, ties to even
  }
  const double value = std::ldexp(static_cast<double>(kept), low - kBias);
  return negative ? -value : value;
}

float ExactSum::to_float() const {
  if (nan_ || (plus_inf_ && minus_inf_)) return std::numeric_limits<float>::quiet_NaN();
  if (plus_inf_) return std::numeric_limits<float>::infinity();
  if (minus_inf_) return -std::numeric_limits<float>::infinity();
  const double rounded = round_to(24, -149);  // 24 significant bits: exact as a float...
  if (rounded == 0.0) return count_ > 0 && all_negative_zero_ ? -0.0f : 0.0f;
  if (std::fabs(rounded) >= 0x1p128)  // ...unless it rounded past the largest float
    return rounded > 0 ? std::numeric_limits<float>::infinity()
                       : -std::numeric_limits<float>::infinity();
  return static_cast<float>(rounded);
}

double ExactSum::to_double() const {
  if (nan_ || (plus_inf_ && minus_inf_)) return std::numeric_limits<double>::quiet_NaN();
  if (plus_inf_) return std::numeric_limits<double>::infinity();
  if (minus_inf_) return -std::numeric_limits<double>::infinity();
  const double rounded = round_to(53, -1074);
  if (rounded == 0.0) return count_ > 0 && all_negative_zero_ ? -0.0 : 0.0;
  return rounded;
}

float correctly_rounded_sum(const std::vector<float>& x) {
  ExactSum sum;
  sum.add(x.data(), x.size());
  return sum.to_float();
}

}  // namespace reduce
