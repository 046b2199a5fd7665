#include <reduce/reference.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <thread>

namespace reduce {
namespace {

/// Sums f(x[i]) in double, one chunk per core, then the chunks in order.
template <typename F>
double parallel_sum(const std::vector<float>& x, F&& f) {
  const std::size_t n = x.size();
  const std::size_t workers =
      std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1, n / (1u << 16) + 1);
  std::vector<double> partial(workers, 0.0);
  std::vector<std::thread> threads;
  for (std::size_t w = 0; w < workers; ++w) {
    threads.emplace_back([&, w] {
      double acc = 0.0;
      for (std::size_t i = n * w / workers, end = n * (w + 1) / workers; i < end; ++i) acc += f(x[i]);
      partial[w] = acc;
    });
  }
  for (auto& t : threads) t.join();
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

std::size_t serial_depth(std::size_t n) { return n == 0 ? 0 : n - 1; }

std::size_t pairwise_depth(std::size_t n) { return ceil_log2(n); }

std::size_t tree_depth(std::size_t n) {
  return (n + kMinReductionThreads - 1) / kMinReductionThreads + ceil_log2(n);
}

double sum_error_bound(std::size_t depth, std::size_t n, double abs_sum) {
  const double reference_error = static_cast<double>(n) * 0x1.0p-53 * abs_sum;
  return gamma(depth + 1) * abs_sum + reference_error;
}

}  // namespace reduce
