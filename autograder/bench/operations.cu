// The operations' rows: their trusted inputs (made on the device, results known exactly), their
// result checks and their CPU loops; their cub::DeviceReduce calls are in cub_sums.cu and
// cub_extremes.cu.
#include "operations.cuh"

#include <reduce/cuda_check.cuh>
#include <reduce/exact_sum.hpp>
#include <reduce/generators.hpp>
#include <reduce/keyed_hash.hpp>
#include <reduce/reference.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <set>
#include <string>

namespace reduce::bench {
namespace {

__global__ void fill_exact_integers(float* x, std::size_t n, std::uint64_t seed) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += stride)
    x[i] = reduce::exact_integer_at(n, seed, i);
}

__global__ void fill_uniform(float* x, std::size_t n, std::uint64_t seed, float lo, float hi) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += stride)
    x[i] = reduce::uniform_at(seed, i, lo, hi);
}

__global__ void fill_cancelling(float* x, std::size_t n, std::uint64_t seed) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += stride)
    x[i] = reduce::cancelling_at(n, seed, i);
}

__global__ void fill_value(float* x, std::size_t n, float value) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += stride)
    x[i] = value;
}

// Sum and mean: exact integers (reduce::exact_integers), whose every partial sum is exact.
double make_integers(float* x, std::size_t n, std::uint64_t seed) {
  fill_exact_integers<<<kFillBlocks, kFillThreads>>>(x, n, seed);
  REDUCE_CUDA_CHECK_LAUNCH();
  return reduce::exact_integers_sum(n, seed);
}

// Maximum, minimum and argmax: uniform in [-1, 1) with one clear extreme (+-2) at a place drawn
// from the seed (extreme_place()).
std::size_t extreme_place(std::size_t n, std::uint64_t seed) {
  return reduce::mix(seed, 99) % n;
}

Expected make_with_extreme(float* x, std::size_t n, std::uint64_t seed, float sign) {
  fill_uniform<<<kFillBlocks, kFillThreads>>>(x, n, seed, -1.0f, 1.0f);
  REDUCE_CUDA_CHECK_LAUNCH();
  write_at(x, extreme_place(n, seed), 2.0f * sign);
  return {2.0 * sign};
}

// Product: ones, with a few 2s, halves and -1s: exact in any order (the exponent stays within
// +-60).
Expected make_factors(float* x, std::size_t n, std::uint64_t seed) {
  fill_value<<<kFillBlocks, kFillThreads>>>(x, n, 1.0f);
  REDUCE_CUDA_CHECK_LAUNCH();
  double product = 1.0;
  const float factors[] = {2.0f, 2.0f, 0.5f, -1.0f};
  std::set<std::size_t> placed;
  for (std::size_t k = 0; k < std::min<std::size_t>(n, 60); ++k) {
    const std::size_t at = reduce::mix(seed, k) % n;
    if (!placed.insert(at).second) continue;
    write_at(x, at, factors[k % 4]);
    product *= factors[k % 4];
  }
  return {product};
}

// Lab 18: reduce::cancelling(), pairs v, -v (|v| < 2^12) around up to 1024 small integers, whose
// exact sum is the integers' sum.
Expected make_cancelling(float* x, std::size_t n, std::uint64_t seed) {
  fill_cancelling<<<kFillBlocks, kFillThreads>>>(x, n, seed);
  REDUCE_CUDA_CHECK_LAUNCH();
  return {reduce::cancelling_sum(n, seed)};
}

__global__ void add_magnitudes(const float* x, std::size_t n, double* total) {
  double mine = 0;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += stride)
    mine += fabs(x[i]);
  atomicAdd(total, mine);
}

/// The same input, and the contract's bound (compensated_error_bound) as the tolerance: the
/// bound grows with sum |x| and the depth, so a small exact sum may come back a little off.
Expected make_cancelling_with_bound(float* x, std::size_t n, std::uint64_t seed) {
  Expected e = make_cancelling(x, n, seed);
  DeviceBuffer<double> total(1);
  total.fill_bytes(0);
  add_magnitudes<<<kFillBlocks, kFillThreads>>>(x, n, total.data());
  REDUCE_CUDA_CHECK_LAUNCH();
  const double abs_sum = total.to_host()[0] * 1.01;  // the atomics' own rounding, with room
  e.tolerance = reduce::compensated_error_bound(reduce::kCompensatedChain,
                                                reduce::compensated_depth(n), e.value, abs_sum);
  return e;
}

// Lab 18's reproducible sum: cancelling() with a rounding trap (reduce::timed::make_trap(), half
// an ulp away from zero) in its first two places. The exact sum is S + h + t: S the other small
// integers' sum, h half an ulp of S, and t = +-2^-100, signed so that the correctly rounded sum
// differs from what rounding the tie S + h gives. A double accumulator loses t (it is 2^-100
// beside S) and rounds the tie, or the tie moved to either side by its own rounding errors on
// the cancelling pairs: it misses the exact sum on about every other call, so a double tree at
// the timed size cannot pass for the exact sum over a row's many calls.
Expected make_trapped(float* x, std::size_t n, std::uint64_t seed) {
  Expected e = make_cancelling(x, n, seed);
  if (n < 3) return e;  // no room for a trap
  e.integers = e.value - reduce::cancelling_at(n, seed, 0) - reduce::cancelling_at(n, seed, 1);
  const reduce::timed::Trap trap =
      reduce::timed::make_trap(static_cast<std::int64_t>(e.integers), /*toward_zero=*/false);
  write_at(x, 0, trap.half);
  write_at(x, 1, trap.tiny);
  e.value = trap.expected;
  return e;
}

bool same_float(double got, const Expected& e) {
  return static_cast<float>(got) == static_cast<float>(e.value);
}

/// Within the input's own tolerance (the compensated sum's bound, set when it was made).
bool within_tolerance(double got, const Expected& e) {
  return std::fabs(got - e.value) <= e.tolerance;
}

template <typename Combine>
float fold(const std::vector<float>& x, float acc, Combine combine) {
  for (float v : x) acc = combine(acc, v);
  return acc;
}

/// The CPU loop of every sum: one float accumulator, in order.
double float_loop_sum(const std::vector<float>& x, float identity) {
  return fold(x, identity, [](float a, float v) { return a + v; });
}

// The kind and getter of each row come from the catalogue (Operation::kind(), getter()).
const Operation kOperations[] = {
    {"sum", 0.0f,
     [](float* x, std::size_t n, std::uint64_t seed) {
       return Expected{make_integers(x, n, seed)};
     },
     same_float, float_loop_sum, cub_sum},
    {"maximum", -INFINITY,
     [](float* x, std::size_t n, std::uint64_t seed) {
       return make_with_extreme(x, n, seed, 1.0f);
     },
     same_float,
     [](const std::vector<float>& x, float id) -> double {
       return fold(x, id, [](float a, float v) { return v > a ? v : a; });
     },
     cub_maximum},
    {"minimum", INFINITY,
     [](float* x, std::size_t n, std::uint64_t seed) {
       return make_with_extreme(x, n, seed, -1.0f);
     },
     same_float,
     [](const std::vector<float>& x, float id) -> double {
       return fold(x, id, [](float a, float v) { return v < a ? v : a; });
     },
     cub_minimum},
    {"product", 1.0f, make_factors, same_float,
     [](const std::vector<float>& x, float id) -> double {
       return fold(x, id, [](float a, float v) { return a * v; });
     },
     cub_product},
    {"mean", 0.0f,
     [](float* x, std::size_t n, std::uint64_t seed) {
       return Expected{make_integers(x, n, seed) / static_cast<double>(n)};
     },
     [](double got, const Expected& e) {  // one rounding of the division: allow 2 ulp
       return std::fabs(got - e.value) <=
              2.0 * std::numeric_limits<float>::epsilon() * std::fabs(e.value);
     },
     [](const std::vector<float>& x, float id) -> double {
       return static_cast<float>(float_loop_sum(x, id)) / static_cast<float>(x.size());
     },
     cub_mean},
    {"argmax", -INFINITY,
     [](float* x, std::size_t n, std::uint64_t seed) {
       make_with_extreme(x, n, seed, 1.0f);
       return Expected{static_cast<double>(extreme_place(n, seed))};
     },
     [](double got, const Expected& e) { return got == e.value; },
     [](const std::vector<float>& x, float best) -> double {
       std::size_t at = 0;
       for (std::size_t i = 0; i < x.size(); ++i)
         if (x[i] > best) best = x[i], at = i;
       return static_cast<double>(at);
     },
     cub_argmax},
    // The compensated sum must come within the contract's bound of the exact sum (a float
    // tree errs by far more on this input).
    {"sum_compensated", 0.0f, make_cancelling_with_bound, within_tolerance, float_loop_sum,
     cub_sum_compensated},
    // The reproducible sum is the exact sum rounded once, which the trap tells from a double sum.
    // CCCL 3.0 has no gpu_to_gpu determinism; its counterpart is the plain Sum (run-to-run).
    {"sum_reproducible", 0.0f, make_trapped, same_float, float_loop_sum, cub_sum},
};

}  // namespace

const std::vector<Operation>& operations() {
  static const std::vector<Operation> ops = [] {
    std::vector<Operation> all(std::begin(kOperations), std::end(kOperations));
    for (const Operation& op : all) op.answer();  // throws where kAnswers has no row for it
    return all;
  }();
  return ops;
}

const Operation* find_operation(const std::string& name) {
  for (const Operation& op : operations())
    if (name == op.name) return &op;
  return nullptr;
}

void write_at(float* x, std::size_t i, float v) {
  REDUCE_CUDA_CHECK(cudaMemcpy(x + i, &v, sizeof v, cudaMemcpyHostToDevice));
}

std::unique_ptr<Inputs> make_inputs(const Operation& op, std::size_t n, std::uint64_t seed) {
  auto fresh = std::make_unique<Inputs>();
  fresh->op = &op;
  fresh->n = n;
  for (int k = 0; k < kRotation; ++k) {
    fresh->device.emplace_back(std::max<std::size_t>(n, 1));
    fresh->expected.push_back(
        n > 0 ? op.make(fresh->device.back().data(), n, reduce::derive_key(seed, "trusted", k, n))
              : Expected{});
  }
  REDUCE_CUDA_CHECK(cudaDeviceSynchronize());
  return fresh;
}

}  // namespace reduce::bench
