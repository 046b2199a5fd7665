#include <reduce/generators.hpp>
#include <reduce/reference.hpp>

#include <unistd.h>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>

namespace reduce {
namespace {

/// Fills out[i] = f(i) for all i, split over the machine's cores.
template <typename F>
void parallel_fill(std::vector<float>& out, F&& f) {
  for_each_chunk(out.size(), chunk_count(out.size()),
                 [&](std::size_t, std::size_t begin, std::size_t end) {
                   for (std::size_t i = begin; i < end; ++i) out[i] = f(i);
                 });
}

/// Uniform double in [0, 1) from 53 random bits.
double unit(std::uint64_t bits) {
  return static_cast<double>(bits >> 11) * 0x1.0p-53;
}

}  // namespace

std::uint64_t fresh_seed() noexcept {
  const auto now = std::chrono::high_resolution_clock::now().time_since_epoch().count();
  return mix(static_cast<std::uint64_t>(now), static_cast<std::uint64_t>(getpid()));
}

std::vector<float> exact_integers(std::size_t n, std::uint64_t seed) {
  std::vector<float> x(n);
  parallel_fill(x, [n, seed](std::size_t i) { return exact_integer_at(n, seed, i); });
  return x;
}

double exact_integers_sum(std::size_t n, std::uint64_t seed) {
  if (static_cast<double>(n) <= kExactBudget) {
    double sum = 0;
    for (std::size_t i = 0; i < n; ++i) sum += exact_integer_at(n, seed, i);
    return sum;
  }
  // Sparse form: each run holds one +1 unless its chosen place lies past the end.
  const std::size_t run = (n + (std::size_t{1} << 23) - 1) >> 23;
  double ones = 0;
  for (std::size_t start = 0; start < n; start += run)
    ones += start + mix(seed, start / run) % run < n ? 1.0 : 0.0;
  return ones;
}

std::vector<float> cancelling(std::size_t n, std::uint64_t seed) {
  std::vector<float> x(n);
  for (std::size_t i = 0; i < n; ++i) x[i] = cancelling_at(n, seed, i);
  return x;
}

double cancelling_sum(std::size_t n, std::uint64_t seed) {
  double sum = 0;
  for (std::size_t i = 0; i < std::min(n, kCancellingSmall); ++i) sum += cancelling_at(n, seed, i);
  return sum;
}

std::vector<float> sentinel(std::size_t n, std::size_t position, float value) {
  std::vector<float> x(n, 0.0f);
  if (position < n) x[position] = value;
  return x;
}

std::vector<float> uniform(std::size_t n, std::uint64_t seed, float lo, float hi) {
  std::vector<float> x(n);
  parallel_fill(x, [=](std::size_t i) { return uniform_at(seed, i, lo, hi); });
  return x;
}

std::vector<float> mixed_sign(std::size_t n, std::uint64_t seed) {
  return uniform(n, seed, -1.0f, 1.0f);
}

std::vector<float> wide_range(std::size_t n, std::uint64_t seed) {
  std::vector<float> x(n);
  parallel_fill(x, [seed](std::size_t i) {
    const std::uint64_t r = mix(seed, i);
    const int exponent = static_cast<int>((r >> 8) % 41) - 20;
    const float mantissa = 1.0f + static_cast<float>((r >> 16) & 0xFFFF) / 65536.0f;
    const float v = std::ldexp(mantissa, exponent);
    return (r & 1) ? -v : v;
  });
  return x;
}

std::vector<float> all_negative(std::size_t n, std::uint64_t seed) {
  std::vector<float> x(n);
  parallel_fill(x, [seed](std::size_t i) { return all_negative_at(seed, i); });
  return x;
}

std::vector<float> signed_zeros(std::size_t n, std::uint64_t seed) {
  std::vector<float> x(n);
  parallel_fill(x, [seed](std::size_t i) { return (mix(seed, i) & 1) ? -0.0f : 0.0f; });
  return x;
}

std::vector<float> signed_mix(std::size_t n, std::uint64_t seed, double zero_fraction,
                              double inf_fraction) {
  std::vector<float> x(n);
  parallel_fill(x,
                [=](std::size_t i) { return signed_mix_at(seed, i, zero_fraction, inf_fraction); });
  return x;
}

std::vector<float> ties(std::size_t n, std::uint64_t seed, float top,
                        const std::vector<std::size_t>& positions) {
  std::vector<float> x(n);
  const float scale = std::max(1.0f, std::fabs(top));
  parallel_fill(x, [=](std::size_t i) {
    // top - d with d >= max(1, |top|) lies below top by at least |top| or 1: no rounding
    // can bring it back up to top.
    return top - scale * (1.0f + static_cast<float>(unit(mix(seed, i))));
  });
  place(x, positions, top);
  return x;
}

void place(std::vector<float>& x, const std::vector<std::size_t>& positions, float value) {
  for (std::size_t p : positions) {
    if (p < x.size()) x[p] = value;
  }
}

std::vector<float> exact_product_factors(std::size_t n, std::uint64_t seed) {
  std::vector<float> x(n);
  parallel_fill(x, [seed](std::size_t i) { return exact_product_sign_at(seed, i); });
  for (const PlacedFactor& f : exact_product_scales(n, seed)) x[f.index] = f.value;
  return x;
}

std::vector<PlacedFactor> exact_product_scales(std::size_t n, std::uint64_t seed) {
  std::vector<PlacedFactor> scales;
  if (n == 0) return scales;
  // Up to kProductExponentBudget places each for +-2 and +-0.5 (a place drawn twice counts
  // once; a 2 overwritten by a 0.5 only lowers the count of 2s).
  const std::size_t each = std::min(kProductExponentBudget, n / 3);
  for (std::size_t k = 0; k < 2 * each; ++k) {
    const std::uint64_t r = mix(seed ^ 0xC2B2AE3D27D4EB4Full, k);
    const float magnitude = k < each ? 2.0f : 0.5f;
    scales.push_back(
        PlacedFactor{static_cast<std::size_t>(r % n), (r >> 63) ? -magnitude : magnitude});
  }
  return scales;
}

float exact_product_factors_product(std::size_t n, std::uint64_t seed) {
  // The last value written at each place of exact_product_scales(): its sign and exponent
  // replace those of the sign beneath it.
  std::map<std::size_t, float> scaled;
  for (const PlacedFactor& f : exact_product_scales(n, seed)) scaled[f.index] = f.value;
  const std::size_t chunks = chunk_count(n);
  std::vector<std::size_t> negatives(chunks, 0);
  for_each_chunk(n, chunks, [&](std::size_t c, std::size_t begin, std::size_t end) {
    std::size_t count = 0;
    for (std::size_t i = begin; i < end; ++i) count += exact_product_sign_at(seed, i) < 0.0f;
    negatives[c] = count;
  });
  bool negative = false;
  for (std::size_t count : negatives) negative ^= (count & 1) != 0;
  int exponent = 0;
  for (const auto& [index, value] : scaled) {
    negative ^= exact_product_sign_at(seed, index) < 0.0f;  // the sign it replaced
    negative ^= value < 0.0f;
    exponent += std::fabs(value) == 2.0f ? 1 : -1;
  }
  const float magnitude = std::ldexp(1.0f, exponent);
  return negative ? -magnitude : magnitude;
}

}  // namespace reduce
