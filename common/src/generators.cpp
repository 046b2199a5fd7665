#include <reduce/generators.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>
#include <unistd.h>

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
double unit(std::uint64_t bits) { return static_cast<double>(bits >> 11) * 0x1.0p-53; }

}  // namespace

std::uint64_t mix(std::uint64_t seed, std::uint64_t index) noexcept {
  std::uint64_t z = seed + 0x9E3779B97F4A7C15ull * (index + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

std::uint64_t fresh_seed() noexcept {
  const auto now = std::chrono::high_resolution_clock::now().time_since_epoch().count();
  return mix(static_cast<std::uint64_t>(now), static_cast<std::uint64_t>(getpid()));
}

std::vector<float> exact_integers(std::size_t n, std::uint64_t seed) {
  std::vector<float> x(n);
  const double budget = kExactBudget;
  if (static_cast<double>(n) * 8.0 <= budget) {
    parallel_fill(x, [seed](std::size_t i) {
      const std::uint64_t r = mix(seed, i);
      const float magnitude = static_cast<float>(1 + (r & 7));
      return (r & 8) ? -magnitude : magnitude;
    });
  } else if (static_cast<double>(n) <= budget) {
    parallel_fill(x, [seed](std::size_t i) { return (mix(seed, i) & 1) ? -1.0f : 1.0f; });
  } else {
    // One +1 per run of `run` elements keeps the sum of magnitudes at most n / run <= 2^23.
    const std::size_t run = (n + (1u << 23) - 1) >> 23;
    parallel_fill(x, [seed, run](std::size_t i) {
      const std::size_t chosen = mix(seed, i / run) % run;
      return (i % run == chosen) ? 1.0f : 0.0f;
    });
  }
  return x;
}

std::vector<float> sentinel(std::size_t n, std::size_t position, float value) {
  std::vector<float> x(n, 0.0f);
  if (position < n) x[position] = value;
  return x;
}

std::vector<float> uniform(std::size_t n, std::uint64_t seed, float lo, float hi) {
  std::vector<float> x(n);
  parallel_fill(x, [=](std::size_t i) {
    const float v = static_cast<float>(lo + (hi - lo) * unit(mix(seed, i)));
    return std::min(v, std::nextafter(hi, lo));  // keep hi excluded after rounding
  });
  return x;
}

std::vector<float> mixed_sign(std::size_t n, std::uint64_t seed) { return uniform(n, seed, -1.0f, 1.0f); }

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

}  // namespace reduce
