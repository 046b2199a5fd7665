#include <reduce/reference.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <thread>

namespace reduce {

std::size_t chunk_count(std::size_t n) {
  return std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1, n / (1u << 16) + 1);
}

void for_each_chunk(std::size_t n, std::size_t chunks,
                    const std::function<void(std::size_t, std::size_t, std::size_t)>& chunk) {
  std::vector<std::thread> threads;
  for (std::size_t c = 0; c < chunks; ++c)
    threads.emplace_back([&, c] { chunk(c, n * c / chunks, n * (c + 1) / chunks); });
  for (auto& t : threads) t.join();
}

namespace {

/// Sums f(x[i]) in double, one chunk per core, then the chunks in order.
template <typename F>
double parallel_sum(const std::vector<float>& x, F&& f) {
  const std::size_t chunks = chunk_count(x.size());
  std::vector<double> partial(chunks, 0.0);
  for_each_chunk(x.size(), chunks, [&](std::size_t c, std::size_t begin, std::size_t end) {
    double acc = 0.0;
    for (std::size_t i = begin; i < end; ++i) acc += f(x[i]);
    partial[c] = acc;
  });
  double total = 0.0;
  for (double p : partial) total += p;
  return total;
}

std::size_t ceil_log2(std::size_t n) {
  std::size_t depth = 0;
  while ((std::size_t{1} << depth) < n) ++depth;
  return depth;
}

}  // namespace

double reference_sum(const std::vector<float>& x) {
  return parallel_sum(x, [](float v) { return static_cast<double>(v); });
}

double absolute_sum(const std::vector<float>& x) {
  return parallel_sum(x, [](float v) { return std::fabs(static_cast<double>(v)); });
}

float serial_float_sum(const float* x, std::size_t n) {
  float acc = 0.0f;
  for (std::size_t i = 0; i < n; ++i) acc += x[i];
  return acc;
}

double gamma(std::size_t depth) {
  const double du = static_cast<double>(depth) * kFloatUnitRoundoff;
  return du >= 1.0 ? std::numeric_limits<double>::infinity() : du / (1.0 - du);
}

std::size_t serial_depth(std::size_t n) {
  return n == 0 ? 0 : n - 1;
}

std::size_t pairwise_depth(std::size_t n) {
  return ceil_log2(n);
}

std::size_t tree_depth(std::size_t n) {
  return (n + kMinReductionThreads - 1) / kMinReductionThreads + ceil_log2(n);
}

std::size_t tree_atomic_depth(std::size_t n) {
  const std::size_t chain = std::max(std::min(n, kSingleBlockChain),
                                     (n + kMinReductionThreads - 1) / kMinReductionThreads);
  return std::min(serial_depth(n), chain + ceil_log2(n) + std::min(n, kMaxAtomicPartials));
}

std::size_t segment_tree_depth(std::size_t n) {
  const std::size_t chain =
      std::max(kSegmentThreadChain, (n + kMinSegmentLanes - 1) / kMinSegmentLanes);
  return std::min(n, chain + ceil_log2(n));
}

double softmax_sum_error_bound(std::size_t depth, double sum, double weighted) {
  const double per_level = 0x1.0p-21 + 0x1.0p-23;  // an exp, a product and a sum
  return (1 + 0x1.0p-10) *
         (static_cast<double>(depth + 1) * per_level * sum + 0x1.0p-22 * weighted);
}

double sum_error_bound(std::size_t depth, std::size_t n, double abs_sum) {
  const double reference_error = static_cast<double>(n) * 0x1.0p-53 * abs_sum;
  return gamma(depth + 1) * abs_sum + reference_error;
}

float reference_maximum(const std::vector<float>& x) {
  float m = -std::numeric_limits<float>::infinity();
  for (float v : x) {
    m = ieee_maximum(m, v);
    if (std::isnan(m)) break;  // nothing beats a NaN
  }
  return m;
}

float reference_minimum(const std::vector<float>& x) {
  float m = std::numeric_limits<float>::infinity();
  for (float v : x) {
    m = ieee_minimum(m, v);
    if (std::isnan(m)) break;
  }
  return m;
}

std::int64_t reference_argmax(const std::vector<float>& x) {
  if (x.empty()) throw std::invalid_argument("reference_argmax: argmax of no elements");
  std::size_t best = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (std::isnan(x[i])) return static_cast<std::int64_t>(i);  // the first NaN wins
    if (x[i] > x[best]) best = i;                               // strict: ties keep the first
  }
  return static_cast<std::int64_t>(best);
}

namespace {

/// A product kept as sign, flags and mantissa * 2^exponent, mantissa in [0.5, 1).
struct ScaledProduct {
  bool nan = false, zero = false, infinite = false, negative = false;
  double mantissa = 1.0;
  long long exponent = 0;

  void multiply(double v) {
    if (std::isnan(v)) {
      nan = true;
      return;
    }
    negative ^= std::signbit(v);
    if (v == 0.0) {
      zero = true;
    } else if (std::isinf(v)) {
      infinite = true;
    } else {
      int e = 0;
      mantissa *= std::frexp(std::fabs(v), &e);
      exponent += e;
      mantissa = std::frexp(mantissa, &e);  // back to [0.5, 1): exact
      exponent += e;
    }
  }

  void merge(const ScaledProduct& o) {
    nan |= o.nan;
    zero |= o.zero;
    infinite |= o.infinite;
    negative ^= o.negative;
    int e = 0;
    mantissa = std::frexp(mantissa * o.mantissa, &e);
    exponent += o.exponent + e;
  }

  double value() const {
    if (nan || (zero && infinite)) return std::numeric_limits<double>::quiet_NaN();
    const double sign = negative ? -1.0 : 1.0;
    if (zero) return sign * 0.0;
    if (infinite) return sign * std::numeric_limits<double>::infinity();
    const long long e = std::clamp<long long>(exponent, -4000, 4000);  // ldexp saturates
    return sign * std::ldexp(mantissa, static_cast<int>(e));
  }
};

}  // namespace

double reference_product(const std::vector<float>& x) {
  const std::size_t n = x.size();
  const std::size_t workers =
      std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1, n / (1u << 16) + 1);
  std::vector<ScaledProduct> partial(workers);
  std::vector<std::thread> threads;
  for (std::size_t w = 0; w < workers; ++w) {
    threads.emplace_back([&, w] {
      ScaledProduct p;
      for (std::size_t i = n * w / workers, end = n * (w + 1) / workers; i < end; ++i) {
        p.multiply(static_cast<double>(x[i]));
      }
      partial[w] = p;
    });
  }
  for (auto& t : threads) t.join();
  ScaledProduct total;
  for (const ScaledProduct& p : partial) total.merge(p);
  return total.value();
}

double reference_mean(const std::vector<float>& x) {
  if (x.empty()) return std::numeric_limits<double>::quiet_NaN();
  return reference_sum(x) / static_cast<double>(x.size());
}

double product_relative_error_bound(std::size_t n) {
  const std::size_t depth = n == 0 ? 0 : n - 1;
  return gamma(depth) + 2.0 * static_cast<double>(n) * 0x1.0p-53;
}

double mean_error_bound(std::size_t depth, std::size_t n, double abs_sum, double mean) {
  if (n == 0) return 0.0;
  const double u = kFloatUnitRoundoff;
  const double sum_part = sum_error_bound(depth, n, abs_sum) / static_cast<double>(n);
  return (1.0 + 2.0 * u) * (sum_part + 2.0 * u * std::fabs(mean));
}

std::size_t compensated_depth(std::size_t n) {
  const std::size_t per_thread_chains = kMinReductionThreads * kCompensatedChain;
  return (n + per_thread_chains - 1) / per_thread_chains + ceil_log2(n);
}

double compensated_error_bound(std::size_t chain, std::size_t depth, double exact, double abs_sum) {
  const double u = kFloatUnitRoundoff;
  const double length = static_cast<double>(chain);
  const double chain_term =
      chain <= 2 ? 0.0 : (length * (length - 1) / 2 - 1) * std::pow(1 + u, 2 * length);
  const double tree_term = 3 * static_cast<double>(depth) / (1 - 4 * u);
  return (1 + 2 * u) * (u * std::fabs(exact) + (chain_term + tree_term) * u * u * abs_sum);
}

}  // namespace reduce
