#include <reduce/generators.hpp>

#include <unistd.h>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>

namespace reduce {
namespace {

/// Fills out[i] = f(i) for all i, split over the machine's cores.
template <typename F>
void parallel_fill(std::vector<float>& out, F&& f) {
  const std::size_t n = out.size();
  const std::size_t workers =
      std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1, n / (1u << 16) + 1);
  std::vector<std::thread> threads;
  for (std::size_t w = 0; w < workers; ++w) {
    threads.emplace_back([&, w] {
      const std::size_t begin = n * w / workers;
      const std::size_t end = n * (w + 1) / workers;
      for (std::size_t i = begin; i < end; ++i) out[i] = f(i);
    });
  }
  for (auto& t : threads) t.join();
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
  parallel_fill(x, [seed](std::size_t i) {
    return -(1.0f + static_cast<float>(1023.0 * unit(mix(seed, i))));
  });
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
  parallel_fill(x, [=](std::size_t i) {
    const std::uint64_t kind = mix(seed ^ 0x5BD1E995ull, i);
    const std::uint64_t r = mix(seed, i);
    const bool negative = (kind & 1) != 0;
    const double u = unit(kind);
    if (u < inf_fraction) return negative ? -HUGE_VALF : HUGE_VALF;
    if (u < inf_fraction + zero_fraction) return negative ? -0.0f : 0.0f;
    const int exponent = static_cast<int>((r >> 8) % 41) - 20;
    const float mantissa = 1.0f + static_cast<float>((r >> 16) & 0xFFFF) / 65536.0f;
    const float v = std::ldexp(mantissa, exponent);
    return negative ? -v : v;
  });
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
  parallel_fill(x, [seed](std::size_t i) { return (mix(seed, i) & 1) ? -1.0f : 1.0f; });
  if (n == 0) return x;
  // Up to kProductExponentBudget places each for +-2 and +-0.5 (a place drawn twice counts
  // once; a 2 overwritten by a 0.5 only lowers the count of 2s).
  const std::size_t each = std::min(kProductExponentBudget, n / 3);
  for (std::size_t k = 0; k < 2 * each; ++k) {
    const std::uint64_t r = mix(seed ^ 0xC2B2AE3D27D4EB4Full, k);
    const float magnitude = k < each ? 2.0f : 0.5f;
    x[r % n] = (r >> 63) ? -magnitude : magnitude;
  }
  return x;
}

}  // namespace reduce
