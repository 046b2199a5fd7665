// The benchmark of every operation, and the ladder table.
//
// Times each operation of the labs it is given (sum, maximum, minimum, product, mean, argmax,
// and lab 18's sum_compensated and sum_reproducible, whose rows also report their error)
// beside its cub::DeviceReduce counterpart, the ceiling probe (a pure streaming read) and a
// single-thread CPU loop, on the same buffers. Rows are named <op>/<implementation>/<n>; lab 17's
// <op>_<length>/<implementation>/<n>, beside floor/<n> (see "segmented reductions" below).
//   REDUCE_LABS_FILE=<build>/<tree>/labs.txt  trusted labs loaded into this process (the ladder:
//                                    lines "04_sequential=/path/lib04_sequential_sum.so")
//   REDUCE_LABS="name=path,..."      the same, inline
//   REDUCE_RUNNER_LABS="name=op:path,..."  labs being graded: each runs in a lab runner process
//   REDUCE_BENCH_SIZES="2^26,2^28"  sizes (default 2^10, 2^12, ..., 2^30)
//   REDUCE_SEED=n                    inputs from this seed (default: fresh each run)
//   REDUCE_BENCH_KEEP_WRONG=1        trusted rows with wrong results keep their numbers
//   REDUCE_SEGMENT_LENGTHS="16,2^20" lab 17's segment lengths (default 32,1024,32768,1048576)
//   REDUCE_SEGMENT_RAGGED="32,1024"  lab 17's ragged rows: mean lengths (default none)
//   --benchmark_filter=^sum/         Google Benchmark flags select rows and write JSON
//
// Method: four inputs with different contents, made on the GPU from the run's seed, rotate; the
// operations differ only in the rows of kOperations. Trusted rows: each sample poisons the output
// and the workspace and flushes L2 outside the timed region, times one call with CUDA events, and
// checks the result. Graded rows: each sample is one request to the lab's runner, up to 16 calls
// (one per distinct input, each result captured in stream order), timed by this process's clock
// from the request to the results being readable; the runner's own CUDA events are a second clock
// that must agree. Before every request, warm-ups included, every input it reads is made anew,
// whole, on the GPU from a fresh seed drawn from a generator seeded from the run's seed (which the
// runner never sees), and its expected result computed in this process (timed_inputs.hpp); that
// happens outside both clocks, and every call's result is checked, the warm-ups' too. So no
// answer can be known, predicted or cached before the call reads its input. Rows report medians.
#include <reduce/ceiling.cuh>
#include <reduce/cuda_check.cuh>
#include <reduce/device_buffer.cuh>
#include <reduce/device_info.cuh>
#include <reduce/event_timer.cuh>
#include <reduce/exact_sum.hpp>
#include <reduce/generators.hpp>
#include <reduce/l2_flush.cuh>
#include <reduce/lab_entry_points.cuh>
#include <reduce/reference.hpp>

#include <reduce_runner/lab_runner.hpp>

#include "cub_fixed_rows.hpp"
#include "softmax_pair.cuh"
#include "timed_inputs.hpp"

#include <benchmark/benchmark.h>
#include <dlfcn.h>
#include <thrust/iterator/transform_iterator.h>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_segmented_reduce.cuh>
#include <cuda/std/functional>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

using reduce::DeviceBuffer;
using reduce::Workspace;
/// What a correct call returns for one input (value, and the compensated sum's tolerance).
using reduce::timed::Expected;

// ---- operations --------------------------------------------------------------------------

/// A cub::DeviceReduce call: with null storage it only sets the bytes it needs. \p extra is
/// scratch the row keeps for itself in front of CUB's storage (ArgMax's maximum goes there).
using CubCall = cudaError_t (*)(void* storage, std::size_t& bytes, void* extra, const float* in,
                                std::size_t n, void* out, cudaStream_t stream);

/// One operation of the course: all the benchmark knows about it. Adding an operation adds a
/// row to kOperations below, and nothing else in this file.
struct Operation {
  const char* name;   ///< row family; a lab exports it as reduce_<name>_lab
  bool index_result;  ///< argmax: an int64 index; the others: a float
  float identity;     ///< where the CPU loop starts (argmax: the best value so far)
  /// Fills x[0, n) on the device, from \p seed, with an input whose result is known exactly
  /// (the trusted rows' rotating inputs).
  Expected (*make)(float* x, std::size_t n, std::uint64_t seed);
  /// What the graded rows' inputs, made anew before every call, hold (timed_inputs.hpp).
  reduce::timed::Answer answer;
  /// Whether a result (a float's value, or an index) is the expected one.
  bool (*check)(double got, const Expected& expected);
  /// The single-thread CPU loop a student would write first, in float.
  double (*cpu_loop)(const std::vector<float>& x, float identity);
  CubCall cub;  ///< the cub::DeviceReduce counterpart
};

__global__ void divide_by(float* value, double n) {
  *value = static_cast<float>(*value / n);
}

// Input makers run on the device: a 1 GiB input takes milliseconds, not a second of host time.
constexpr unsigned kFillBlocks = 1024, kFillThreads = 256;

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

/// CUB's transformation for a sum in double.
struct ToDouble {
  __device__ double operator()(float v) const { return v; }
};

/// Converts CUB's double sum (in the row's extra scratch) to the float result.
__global__ void round_to_float(const double* sum, float* out) {
  *out = static_cast<float>(*sum);
}

__global__ void fill_value(float* x, std::size_t n, float value) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += stride)
    x[i] = value;
}

void write_at(float* x, std::size_t i, float v) {
  REDUCE_CUDA_CHECK(cudaMemcpy(x + i, &v, sizeof v, cudaMemcpyHostToDevice));
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

using I = std::int64_t;
using Answer = reduce::timed::Answer;

const Operation kOperations[] = {
    {"sum", false, 0.0f,
     [](float* x, std::size_t n, std::uint64_t seed) {
       return Expected{make_integers(x, n, seed)};
     },
     Answer::kSum, same_float, float_loop_sum,
     [](void* t, std::size_t& b, void*, const float* in, std::size_t n, void* out, cudaStream_t s) {
       return cub::DeviceReduce::Sum(t, b, in, static_cast<float*>(out), static_cast<I>(n), s);
     }},
    {"maximum", false, -INFINITY,
     [](float* x, std::size_t n, std::uint64_t seed) {
       return make_with_extreme(x, n, seed, 1.0f);
     },
     Answer::kMaximum, same_float,
     [](const std::vector<float>& x, float id) -> double {
       return fold(x, id, [](float a, float v) { return v > a ? v : a; });
     },
     [](void* t, std::size_t& b, void*, const float* in, std::size_t n, void* out, cudaStream_t s) {
       return cub::DeviceReduce::Max(t, b, in, static_cast<float*>(out), static_cast<I>(n), s);
     }},
    {"minimum", false, INFINITY,
     [](float* x, std::size_t n, std::uint64_t seed) {
       return make_with_extreme(x, n, seed, -1.0f);
     },
     Answer::kMinimum, same_float,
     [](const std::vector<float>& x, float id) -> double {
       return fold(x, id, [](float a, float v) { return v < a ? v : a; });
     },
     [](void* t, std::size_t& b, void*, const float* in, std::size_t n, void* out, cudaStream_t s) {
       return cub::DeviceReduce::Min(t, b, in, static_cast<float*>(out), static_cast<I>(n), s);
     }},
    {"product", false, 1.0f, make_factors, Answer::kProduct, same_float,
     [](const std::vector<float>& x, float id) -> double {
       return fold(x, id, [](float a, float v) { return a * v; });
     },
     [](void* t, std::size_t& b, void*, const float* in, std::size_t n, void* out, cudaStream_t s) {
       return cub::DeviceReduce::Reduce(t, b, in, static_cast<float*>(out), static_cast<I>(n),
                                        cuda::std::multiplies<float>{}, 1.0f, s);
     }},
    {"mean", false, 0.0f,
     [](float* x, std::size_t n, std::uint64_t seed) {
       return Expected{make_integers(x, n, seed) / static_cast<double>(n)};
     },
     Answer::kMean,
     [](double got, const Expected& e) {  // one rounding of the division: allow 2 ulp
       return std::fabs(got - e.value) <=
              2.0 * std::numeric_limits<float>::epsilon() * std::fabs(e.value);
     },
     [](const std::vector<float>& x, float id) -> double {
       return static_cast<float>(float_loop_sum(x, id)) / static_cast<float>(x.size());
     },
     [](void* t, std::size_t& b, void*, const float* in, std::size_t n, void* out, cudaStream_t s) {
       cudaError_t status =
           cub::DeviceReduce::Sum(t, b, in, static_cast<float*>(out), static_cast<I>(n), s);
       if (t == nullptr || status != cudaSuccess) return status;
       divide_by<<<1, 1, 0, s>>>(static_cast<float*>(out), static_cast<double>(n));
       return cudaGetLastError();
     }},
    {"argmax", true, -INFINITY,
     [](float* x, std::size_t n, std::uint64_t seed) {
       make_with_extreme(x, n, seed, 1.0f);
       return Expected{static_cast<double>(extreme_place(n, seed))};
     },
     Answer::kArgmax, [](double got, const Expected& e) { return got == e.value; },
     [](const std::vector<float>& x, float best) -> double {
       std::size_t at = 0;
       for (std::size_t i = 0; i < x.size(); ++i)
         if (x[i] > best) best = x[i], at = i;
       return static_cast<double>(at);
     },
     // CUB writes the maximum too: it goes into the row's extra scratch.
     [](void* t, std::size_t& b, void* extra, const float* in, std::size_t n, void* out,
        cudaStream_t s) {
       return cub::DeviceReduce::ArgMax(t, b, in, static_cast<float*>(extra), static_cast<I*>(out),
                                        static_cast<I>(n), s);
     }},
    // The compensated sum must come within the contract's bound of the exact sum (a float
    // tree errs by far more on this input).
    {"sum_compensated", false, 0.0f, make_cancelling_with_bound, Answer::kCompensatedSum,
     within_tolerance, float_loop_sum,
     // CUB accumulates in double (TransformReduce with a conversion), then rounds once.
     [](void* t, std::size_t& b, void* extra, const float* in, std::size_t n, void* out,
        cudaStream_t s) {
       cudaError_t status = cub::DeviceReduce::TransformReduce(
           t, b, in, static_cast<double*>(extra), static_cast<I>(n), cuda::std::plus<double>{},
           ToDouble{}, 0.0, s);
       if (t == nullptr || status != cudaSuccess) return status;
       round_to_float<<<1, 1, 0, s>>>(static_cast<const double*>(extra), static_cast<float*>(out));
       return cudaGetLastError();
     }},
    // The reproducible sum is the exact sum rounded once, which the trap tells from a double sum.
    // CCCL 3.0 has no gpu_to_gpu determinism; its counterpart is the plain Sum (run-to-run).
    {"sum_reproducible", false, 0.0f, make_trapped, Answer::kReproducibleSum, same_float,
     float_loop_sum,
     [](void* t, std::size_t& b, void*, const float* in, std::size_t n, void* out, cudaStream_t s) {
       return cub::DeviceReduce::Sum(t, b, in, static_cast<float*>(out), static_cast<I>(n), s);
     }},
};

const Operation* find_operation(const std::string& name) {
  for (const Operation& op : kOperations)
    if (name == op.name) return &op;
  return nullptr;
}

/// A result as the process reads it back (a float's bits, or an index) as a number.
double decode(const Operation& op, std::int64_t bits) {
  if (op.index_result) return static_cast<double>(bits);
  float f;
  const auto word = static_cast<std::uint32_t>(bits);
  std::memcpy(&f, &word, sizeof f);
  return f;
}

/// Type-erased call of one implementation: the output is a float or an int64 index.
using RunFn = std::function<void(const float*, std::size_t, void*, Workspace, cudaStream_t)>;

/// One row: something that computes an operation on the device (or, for "cpu", the host).
struct Impl {
  const Operation* op;
  std::string name;
  std::function<std::size_t(std::size_t)> workspace_bytes;
  RunFn run;
  bool checks_result = true;  // false for the probe, whose output is no result
  bool on_host = false;
  std::shared_ptr<reduce::runner::LabRunner> remote;  // a graded lab: calls go to its runner
  std::size_t library = 0;  // a graded lab: its library among the runner's (graded_library())
};

/// Rotating inputs for one (operation, size) with their expected results.
constexpr int kRotation = 4;  // inputs per (operation, size)
struct Inputs {
  const Operation* op = nullptr;
  std::size_t n = 0;
  std::vector<DeviceBuffer<float>> device;
  std::vector<Expected> expected;
};

std::uint64_t run_seed() {
  static const std::uint64_t seed = [] {
    const char* env = std::getenv("REDUCE_SEED");  // the grader sets it to make a run repeatable
    return env != nullptr ? std::stoull(env, nullptr, 0) : reduce::fresh_seed();
  }();
  return seed;
}

/// The generator of every graded row's input seeds and random choices, seeded from the run's
/// seed (which no runner sees). One for the whole run: no two rows, of one lab or of two, read
/// the same inputs, and a run with the same seed makes the same ones.
std::mt19937_64& graded_rng() {
  static std::mt19937_64 rng(run_seed() ^ 0x6A09E667F3BCC909ull);
  return rng;
}

/// What making a graded row's inputs anew cost, outside both clocks.
struct RegenerationCost {
  std::vector<double> wall_ms;           ///< per request: everything, until the device is idle
  std::vector<double> gpu_ms_per_input;  ///< per request: the passes' GPU time, per input
  long inputs = 0;                       ///< inputs made in all

  /// Times one regeneration: \p gpu_ms of passes over \p count inputs since \p started.
  void add(std::chrono::steady_clock::time_point started, double gpu_ms, int count) {
    wall_ms.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started)
            .count());
    gpu_ms_per_input.push_back(gpu_ms / std::max(count, 1));
    inputs += count;
  }
};

/// A graded row's inputs (the runner's arrays, mapped into this process). regenerate() makes the
/// first `count` of them anew, whole, each from a fresh seed (reduce::timed::regenerate(), one
/// pass on the GPU), and their expected results with them, from the passes' tallies: nothing of
/// an input or of its answer is left from before, and the runner never sees a seed.
class RegeneratedInputs {
 public:
  RegeneratedInputs(const Operation& op, std::size_t n, std::vector<float*> arrays)
      : op_(op),
        n_(n),
        arrays_(std::move(arrays)),
        recipes_(arrays_.size()),
        expected_(arrays_.size()),
        tallies_(std::max<std::size_t>(arrays_.size(), 1)) {}

  /// Makes inputs [0, count) anew and sets their expected results. Returns with the device idle,
  /// so that nothing of it runs while a call is timed.
  void regenerate(int count) {
    const auto started = std::chrono::steady_clock::now();
    tallies_.fill_bytes(0);
    timer_.start(nullptr);
    for (int b = 0; b < count; ++b) {
      recipes_[b] = reduce::timed::draw_recipe(op_.answer, n_, graded_rng());
      reduce::timed::regenerate(arrays_[b], recipes_[b], tallies_.data() + b, nullptr);
    }
    timer_.stop(nullptr);
    const std::vector<reduce::timed::Tally> tallies = tallies_.to_host();
    for (int b = 0; b < count; ++b) {
      // Lab 18's rounding trap depends on the integers' sum: written once it is known.
      for (const reduce::timed::Write& w :
           reduce::timed::finishing_writes(op_.answer, recipes_[b], tallies[b]))
        write_at(arrays_[b], w.at, w.value);
      expected_[b] = reduce::timed::expected_result(op_.answer, recipes_[b], tallies[b]);
    }
    REDUCE_CUDA_CHECK(cudaDeviceSynchronize());
    cost_.add(started, timer_.elapsed_ms(), count);
  }

  const Expected& expected(int b) const { return expected_[b]; }
  const RegenerationCost& cost() const { return cost_; }

 private:
  const Operation& op_;
  std::size_t n_;
  std::vector<float*> arrays_;
  std::vector<reduce::timed::Recipe> recipes_;
  std::vector<Expected> expected_;
  DeviceBuffer<reduce::timed::Tally> tallies_;
  reduce::EventTimer timer_;
  RegenerationCost cost_;
};

Inputs& inputs_for(const Operation& op, std::size_t n) {
  static std::unique_ptr<Inputs> current;
  if (!current || current->n != n || current->op != &op) {
    current.reset();  // free the previous inputs first
    auto fresh = std::make_unique<Inputs>();
    fresh->op = &op;
    fresh->n = n;
    for (int k = 0; k < kRotation; ++k) {
      fresh->device.emplace_back(std::max<std::size_t>(n, 1));
      fresh->expected.push_back(
          n > 0 ? op.make(fresh->device.back().data(), n, run_seed() + 1000 * k + n) : Expected{});
    }
    REDUCE_CUDA_CHECK(cudaDeviceSynchronize());
    current = std::move(fresh);
  }
  return *current;
}

// ---- measuring ---------------------------------------------------------------------------

std::string fixed(double v, int digits);

/// What one benchmark measured, for the tables printed at the end.
struct Row {
  double median_us = 0, gbps = 0, result = NAN, error = NAN;
  std::string status = "ok";
};
std::map<std::tuple<std::string, std::size_t, std::string>, Row> g_rows;  // op, n, row
double g_ceiling_gbps = 0;
std::size_t g_ceiling_n = 0;

double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

/// Bytes of one result as a call writes it.
std::size_t result_bytes(const Operation& op) {
  return op.index_result ? sizeof(std::int64_t) : sizeof(float);
}

/// Checks one call's result (\p bits as read back) and keeps it for the table: the first
/// wrong one, else the latest. Returns whether it was right.
bool check_result(const Operation& op, std::int64_t bits, const Expected& e, Row& row, int& wrong) {
  const double expected = e.value;
  const double got = decode(op, bits);
  const bool ok = op.check(got, e);
  if (!ok) ++wrong;
  if (!ok || wrong == 0) {
    row.result = got;
    row.error = std::fabs(got - expected);
  }
  return ok;
}

void bench_device(benchmark::State& state, const Impl& impl, std::size_t n) {
  Row& row = g_rows[{impl.op->name, n, impl.name}];
  try {
    Inputs& in = inputs_for(*impl.op, n);
    reduce::Stream stream;
    reduce::L2Flush l2;
    reduce::EventTimer timer;
    DeviceBuffer<unsigned char> workspace(impl.workspace_bytes(n));
    DeviceBuffer<std::int64_t> out(1);
    const Workspace ws{workspace.data(), workspace.bytes()};
    impl.run(in.device[0].data(), n, out.data(), ws, stream.get());  // warm-up
    stream.synchronize();

    std::vector<double> samples;
    int wrong = 0;
    std::size_t k = 0;
    for (auto _ : state) {
      const int b = static_cast<int>(k++ % kRotation);
      out.fill_bytes(0xFF, stream.get());
      workspace.fill_bytes(0xFF, stream.get());
      l2.flush(stream.get());
      timer.start(stream.get());
      impl.run(in.device[b].data(), n, out.data(), ws, stream.get());
      timer.stop(stream.get());
      const double ms = timer.elapsed_ms();
      state.SetIterationTime(ms * 1e-3);
      samples.push_back(ms);
      if (!impl.checks_result) continue;
      std::int64_t got = 0;
      REDUCE_CUDA_CHECK(
          cudaMemcpy(&got, out.data(), result_bytes(*impl.op), cudaMemcpyDeviceToHost));
      check_result(*impl.op, got, in.expected[b], row, wrong);
    }
    const double bytes = static_cast<double>(n) * sizeof(float);
    row.median_us = median(samples) * 1e3;
    row.gbps = bytes / (row.median_us * 1e-6) / 1e9;
    state.SetBytesProcessed(static_cast<std::int64_t>(bytes) * state.iterations());
    state.counters["median_us"] = row.median_us;
    state.counters["median_gbps"] = row.gbps;
    state.counters["wrong_results"] = wrong;
    if (impl.checks_result) state.counters["abs_error"] = row.error;  // |result - exact|
    if (wrong > 0) {
      row.status = "WRONG in " + std::to_string(wrong) + " timed runs";
      // A lesson's comparison may time an implementation that is known not to meet the contract
      // (lab 18's float accumulator, CUB's plain Sum beside the reproducible sum): with
      // REDUCE_BENCH_KEEP_WRONG=1 such a row keeps its time and error instead of failing.
      static const bool keep_wrong = std::getenv("REDUCE_BENCH_KEEP_WRONG") != nullptr;
      if (!keep_wrong) state.SkipWithError(row.status.c_str());
    }
  } catch (const std::exception& e) {
    row.status = e.what();
    state.SkipWithError(e.what());
  }
}

/// How many distinct n-float inputs \p remote's runner may hold for timing: up to kMaxInputs,
/// within half the device memory free now (its current inputs, which the next allocation frees,
/// counted as free).
int timed_input_count(const reduce::runner::LabRunner& remote, std::size_t n) {
  std::size_t free = 0, total = 0;
  REDUCE_CUDA_CHECK(cudaMemGetInfo(&free, &total));
  free += remote.timed_input_bytes();
  const std::size_t bytes = std::max<std::size_t>(n, 1) * sizeof(float);
  return static_cast<int>(std::clamp<std::size_t>(free / 2 / bytes, 1, reduce::runner::kMaxInputs));
}

/// Sampling of a graded lab: a request's calls fill about kRequestMs (its own cost, a socket
/// round trip and a copy back, is then a few percent of it); samples stop after kMinSamples and
/// kMinSeconds, or at kMaxSamples, or once a slow lab has had kEnoughSeconds and 3 samples.
constexpr double kRequestMs = 10.0;
constexpr int kMinSamples = 5, kMaxSamples = 20;
constexpr double kMinSeconds = 0.25, kEnoughSeconds = 1.0;

/// A graded lab: each sample is one request to its runner, one call per distinct input, timed
/// by this process's clock; every call's result is the copy captured in stream order right
/// after it. Before every request, warm-ups included, the inputs it reads are made anew, whole,
/// from fresh seeds (RegeneratedInputs, outside both clocks), and every call's result is
/// checked: a wrong warm-up is a wrong call like any other. One benchmark iteration holds all
/// samples; the runner (graded_runner()) serves every graded row.
void bench_remote(benchmark::State& state, const Impl& impl, std::size_t n) {
  Row& row = g_rows[{impl.op->name, n, impl.name}];
  const Operation& op = *impl.op;
  const auto started = std::chrono::steady_clock::now();
  const auto seconds_since = [](std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
  };
  try {
    impl.remote->use_library(impl.library);
    // The lab reads arrays its own process allocated; this process makes their contents.
    const std::vector<float*> arrays =
        impl.remote->allocate_timed_inputs(n, timed_input_count(*impl.remote, n));
    const int count = static_cast<int>(arrays.size());
    RegeneratedInputs inputs(op, n, arrays);
    const double allocated_s = seconds_since(started);
    DeviceBuffer<std::int64_t> capture(count);
    const std::string entry = op.name;
    const std::size_t rb = result_bytes(op);
    int wrong = 0;
    // One request of `calls` calls on inputs [0, calls): the inputs made anew and the capture
    // poisoned first (outside the clock: run_timed() waits for this process's work before it
    // starts its own), then every result checked.
    const auto request = [&](int calls) {
      capture.fill_bytes(0xFF);  // no earlier request's result can stand for this one's
      inputs.regenerate(calls);
      const reduce::runner::TimedRun t =
          impl.remote->run_timed(entry, calls, n, calls, capture.data());
      std::vector<unsigned char> got(rb * calls);
      REDUCE_CUDA_CHECK(cudaMemcpy(got.data(), capture.data(), got.size(), cudaMemcpyDeviceToHost));
      for (int b = 0; b < calls; ++b) {
        std::int64_t bits = 0;
        std::memcpy(&bits, got.data() + b * rb, rb);
        check_result(op, bits, inputs.expected(b), row, wrong);
      }
      return t;
    };
    // Warm-up: one call tells how many fit in a request; a fast lab then reads every input once.
    const double one_ms = request(1).host_ms;
    const double filled_s = allocated_s + inputs.cost().wall_ms.front() * 1e-3;
    const int calls = static_cast<int>(std::clamp(std::ceil(kRequestMs / std::max(one_ms, 1e-3)),
                                                  1.0, static_cast<double>(count)));
    if (calls > 1) request(calls);
    const int warmup_wrong = wrong;

    std::vector<double> samples, events;
    double seconds = 0;
    const double warmed_s = seconds_since(started);
    const auto sampling = std::chrono::steady_clock::now();
    for (auto _ : state) {
      while (samples.size() < static_cast<std::size_t>(kMaxSamples)) {
        const reduce::runner::TimedRun t = request(calls);
        seconds += t.host_ms * 1e-3;
        samples.push_back(t.host_ms / calls);
        events.push_back(t.event_ms / calls);
        const std::size_t k = samples.size();
        if ((k >= kMinSamples && seconds >= kMinSeconds) || (k >= 3 && seconds >= kEnoughSeconds))
          break;
      }
      state.SetIterationTime(median(samples) * 1e-3);
    }
    const double sampling_s = seconds_since(sampling);
    // Where a row's wall time goes: the runner's start (first graded row only), allocation,
    // warm-up (fill_s: the first regeneration); samples (the regenerations before them included).
    state.counters["setup_s"] = warmed_s;
    state.counters["allocate_s"] = allocated_s;  // runner ready, inputs allocated and mapped
    state.counters["fill_s"] = filled_s - allocated_s;
    state.counters["warmup_s"] = warmed_s - filled_s;
    state.counters["sampling_s"] = sampling_s;
    // What making the inputs anew before every request cost, outside both clocks: per request
    // (all its inputs, until the device is idle), and the GPU time of one input's pass.
    const RegenerationCost& cost = inputs.cost();
    state.counters["regenerate_ms"] = median(cost.wall_ms);
    state.counters["regenerate_gpu_ms_per_input"] = median(cost.gpu_ms_per_input);
    state.counters["inputs_regenerated"] = static_cast<double>(cost.inputs);
    const double bytes = static_cast<double>(n) * sizeof(float);
    row.median_us = median(samples) * 1e3;
    row.gbps = bytes / (row.median_us * 1e-6) / 1e9;
    const double event_us = median(events) * 1e3;
    state.SetBytesProcessed(static_cast<std::int64_t>(bytes) * state.iterations());
    state.counters["median_us"] = row.median_us;
    state.counters["median_gbps"] = row.gbps;
    state.counters["runner_event_us"] = event_us;
    state.counters["calls_per_sample"] = calls;
    state.counters["samples"] = static_cast<double>(samples.size());
    state.counters["wrong_results"] = wrong;  // the warm-ups' included
    state.counters["warmup_wrong"] = warmup_wrong;
    state.counters["runner_starts"] = impl.remote->starts();
    state.counters["lab_process_starts"] = reduce::runner::LabRunner::process_starts();
    if (wrong > 0) {
      row.status = "WRONG in " + std::to_string(wrong) + " timed calls (" +
                   std::to_string(warmup_wrong) + " of them warm-up calls; results captured in " +
                   "stream order; every input made anew from a fresh seed before every call)";
      state.SkipWithError(row.status.c_str());
    } else if (event_us < 0.8 * row.median_us - 20.0) {
      // The runner's events say the calls took far less than this process saw: they were
      // rewritten, or the work ran outside the stream they time.
      row.status = "clocks disagree: the lab's process reports " + fixed(event_us, 1) +
                   " us per call, the grader's clock " + fixed(row.median_us, 1) + " us";
      state.counters["clocks_disagree"] = 1;
      state.SkipWithError(row.status.c_str());
    }
  } catch (const std::exception& e) {
    impl.remote->stop();
    row.status = e.what();
    state.SkipWithError(e.what());
  }
}

void bench_host(benchmark::State& state, const Operation& op, std::size_t n) {
  Row& row = g_rows[{op.name, n, "cpu"}];
  Inputs& in = inputs_for(op, n);
  const std::vector<float> host = in.device[0].to_host();  // outside the clock
  std::vector<double> samples;
  double got = 0;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    got = op.cpu_loop(host, op.identity);
    benchmark::DoNotOptimize(got);
    const std::chrono::duration<double> seconds = std::chrono::steady_clock::now() - start;
    state.SetIterationTime(seconds.count());
    samples.push_back(seconds.count() * 1e3);
  }
  row.median_us = median(samples) * 1e3;
  row.gbps = n * sizeof(float) / (row.median_us * 1e-6) / 1e9;
  row.result = got;
  row.error = std::fabs(got - in.expected[0].value);  // a float loop may be inexact
  state.counters["median_us"] = row.median_us;
  state.counters["median_gbps"] = row.gbps;
}

// ---- implementations ----------------------------------------------------------------------

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  std::stringstream stream(s);
  for (std::string part; std::getline(stream, part, sep);)
    if (!part.empty()) parts.push_back(part);
  return parts;
}

/// "67108864" or "2^26".
std::size_t parse_size(const std::string& text) {
  const auto caret = text.find('^');
  if (caret == std::string::npos) return std::stoull(text);
  return static_cast<std::size_t>(
      std::llround(std::pow(std::stod(text.substr(0, caret)), std::stod(text.substr(caret + 1)))));
}

/// Trusted labs (the ladder): every operation each lab library exports, found by its C name
/// and called in this process. From REDUCE_LABS ("name=path,...") or REDUCE_LABS_FILE (one
/// "name=path" per line: <build>/<tree>/labs.txt).
std::vector<Impl> load_labs() {
  std::vector<std::string> entries;
  if (const char* env = std::getenv("REDUCE_LABS")) entries = split(env, ',');
  if (const char* file = std::getenv("REDUCE_LABS_FILE")) {
    std::ifstream list(file);
    if (!list) std::fprintf(stderr, "cannot read REDUCE_LABS_FILE %s\n", file);
    for (std::string line; std::getline(list, line);)
      if (!line.empty()) entries.push_back(line);
  }
  std::vector<Impl> labs;
  for (const std::string& entry : entries) {
    const auto eq = entry.find('=');
    const std::string name = entry.substr(0, eq);
    const std::string path = eq == std::string::npos ? entry : entry.substr(eq + 1);
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      std::fprintf(stderr, "cannot load lab %s: %s\n", name.c_str(), dlerror());
      continue;
    }
    for (const Operation& op : kOperations) {
      const std::string symbol = std::string("reduce_") + op.name + "_lab";
      void* getter = dlsym(handle, symbol.c_str());
      if (getter == nullptr) continue;
      if (op.index_result) {
        const auto* lab = reinterpret_cast<const reduce::ArgmaxLab* (*)()>(getter)();
        labs.push_back({&op, name, lab->workspace_bytes,
                        [run = lab->run](const float* in, std::size_t n, void* out, Workspace ws,
                                         cudaStream_t s) {
                          run(in, n, static_cast<std::int64_t*>(out), ws, s);
                        }});
      } else {
        const auto* lab = reinterpret_cast<const reduce::FloatLab* (*)()>(getter)();
        labs.push_back(
            {&op, name, lab->workspace_bytes,
             [run = lab->run](const float* in, std::size_t n, void* out, Workspace ws,
                              cudaStream_t s) { run(in, n, static_cast<float*>(out), ws, s); }});
      }
    }
  }
  return labs;
}

struct SegmentedOp;
const SegmentedOp* find_segmented_op(const std::string& name);

/// The libraries of REDUCE_RUNNER_LABS ("name=op:path,..."), each once, in order.
std::vector<std::string> graded_libraries() {
  std::vector<std::string> paths;
  if (const char* env = std::getenv("REDUCE_RUNNER_LABS"))
    for (const std::string& entry : split(env, ',')) {
      const auto colon = entry.find(':', entry.find('='));
      if (colon == std::string::npos) continue;
      const std::string path = entry.substr(colon + 1);
      if (std::find(paths.begin(), paths.end(), path) == paths.end()) paths.push_back(path);
    }
  return paths;
}

/// The one lab process of every graded row: it holds every library of REDUCE_RUNNER_LABS, each
/// loaded when its first row calls it, and starts anew only after a row whose lab crashed it,
/// hung or poisoned its context (the row's exception stops it). So no other lab process is
/// alive while a row is timed, and a submission's benchmark makes one lab process, not one per
/// row. It starts with the first graded row, after the probe and the first CUB rows.
std::shared_ptr<reduce::runner::LabRunner> graded_runner() {
  static const std::shared_ptr<reduce::runner::LabRunner> runner = [] {
    reduce::runner::RunnerOptions options = reduce::runner::RunnerOptions::from_environment();
    options.libraries = graded_libraries();
    return std::make_shared<reduce::runner::LabRunner>(std::move(options));
  }();
  return runner;
}

/// The index of the library \p path among graded_runner()'s.
std::size_t graded_library(const std::string& path) {
  const std::vector<std::string> paths = graded_libraries();
  return static_cast<std::size_t>(std::find(paths.begin(), paths.end(), path) - paths.begin());
}

/// Labs being graded (REDUCE_RUNNER_LABS="name=op:path,..."): never loaded here; their calls go
/// to graded_runner().
std::vector<Impl> remote_labs() {
  std::vector<Impl> labs;
  const char* env = std::getenv("REDUCE_RUNNER_LABS");
  if (env == nullptr) return labs;
  for (const std::string& entry : split(env, ',')) {
    const auto eq = entry.find('=');
    const auto colon = entry.find(':', eq);
    if (eq == std::string::npos || colon == std::string::npos) {
      std::fprintf(stderr, "REDUCE_RUNNER_LABS: expected name=op:path, got %s\n", entry.c_str());
      continue;
    }
    if (find_segmented_op(entry.substr(eq + 1, colon - eq - 1)) != nullptr) continue;  // own rows
    const Operation* op = find_operation(entry.substr(eq + 1, colon - eq - 1));
    if (op == nullptr) {
      std::fprintf(stderr, "REDUCE_RUNNER_LABS: no operation in %s\n", entry.c_str());
      continue;
    }
    Impl impl{op, entry.substr(0, eq), nullptr, nullptr};
    impl.remote = graded_runner();
    impl.library = graded_library(entry.substr(colon + 1));
    labs.push_back(impl);
  }
  return labs;
}

constexpr std::size_t kExtraBytes = 256;  // keeps CUB's storage 256-byte aligned

/// The cub::DeviceReduce row of \p op.
Impl cub_impl(const Operation& op) {
  const CubCall call = op.cub;
  return {&op, "cub",
          [call](std::size_t n) {
            std::size_t bytes = 0;
            REDUCE_CUDA_CHECK(call(nullptr, bytes, nullptr, nullptr, n, nullptr, nullptr));
            return bytes + kExtraBytes;
          },
          [call](const float* in, std::size_t n, void* out, Workspace ws, cudaStream_t s) {
            std::size_t bytes = ws.bytes - kExtraBytes;
            REDUCE_CUDA_CHECK(call(ws.as<char>() + kExtraBytes, bytes, ws.data, in, n, out, s));
          }};
}

Impl probe_impl(const Operation& op) {
  return {&op, "stream_read", [](std::size_t) { return std::size_t{0}; },
          [](const float* in, std::size_t n, void* out, Workspace, cudaStream_t stream) {
            reduce::stream_read(in, n, static_cast<float*>(out), stream);
          },
          /*checks_result=*/false};
}

// ---- segmented reductions (lab 17) --------------------------------------------------------
// Rows "<op>_<length>/<implementation>/<n>", op segmented_sum or segmented_softmax: n floats cut
// into n / length segments of `length` elements each, n rounded down to whole segments
// (REDUCE_SEGMENT_LENGTHS, default 32,1024,32768,1048576: the families the grader times); and
// "<op>_ragged<mean>/<implementation>/<n>" (REDUCE_SEGMENT_RAGGED="32,1024", default none):
// lengths drawn uniformly in [mean/2, 3 mean/2] from the run's seed until the next one would pass
// n, registered right after the uniform family of the same length. Implementations: the labs (in
// this process, or graded through their runners), "cub" (cub::DeviceSegmentedReduce with offsets,
// CUDA's own CUB) and "cub_fixed" (its segment_size overload, built against the newest CCCL
// headers: cub_fixed_rows.hpp; uniform rows only). Before them, "floor/<n>": cub::DeviceReduce::Sum
// over the same n floats (bench_device(): four rotating inputs, L2 flushed before every call), the
// memory's speed in this run.
// Every timed call's results are compared with CUB's (offsets) on the device: the sums bit for bit
// (every element is +1 or -1, so every segment's sum is exact in float in any order, length <=
// 2^24); softmax's maxima bit for bit and its sums within twice the contract's bound at the
// longest segment's depth (elements in [-3.5, 0] in trusted rows, [-3.5, 3.5] in graded rows, so
// |x - m| <= 7).
// Bytes read per call: the segments' floats (counter `elements`; `elements_left_out` = n minus
// them) plus, for the labs and "cub", the segments + 1 offsets (8 bytes each); "cub_fixed" and
// the floor read the floats only. median_gbps and bytes_per_second count those bytes, and of_floor
// is median_gbps over the floor's at the same n, where the floor row ran earlier in this process
// (tools/maint/update_results.py computes it from a results file otherwise).

/// A segmented operation the benchmark times.
struct SegmentedOp {
  std::string name;         ///< the contract's, and the rows' prefix
  const char* getter;       ///< the C function a lab library exports it by
  std::size_t per_segment;  ///< floats of result per segment
  /// CUB's counterpart, with cub::DeviceSegmentedReduce's two-phase storage protocol.
  cudaError_t (*cub)(void* storage, std::size_t& bytes, const float* in,
                     const std::int64_t* offsets, std::size_t segments, float* out,
                     cudaStream_t stream);
  /// The newest CUB's counterpart for segments of one length (cub_fixed_rows.hpp).
  cudaError_t (*cub_fixed)(void* storage, std::size_t& bytes, const float* in, float* out,
                           std::int64_t segments, int segment_size, cudaStream_t stream);
};

cudaError_t cub_segmented_sum(void* storage, std::size_t& bytes, const float* in,
                              const std::int64_t* offsets, std::size_t segments, float* out,
                              cudaStream_t stream) {
  return cub::DeviceSegmentedReduce::Sum(
      storage, bytes, in, out, static_cast<std::int64_t>(segments), offsets, offsets + 1, stream);
}

cudaError_t cub_segmented_softmax(void* storage, std::size_t& bytes, const float* in,
                                  const std::int64_t* offsets, std::size_t segments, float* out,
                                  cudaStream_t stream) {
  return cub::DeviceSegmentedReduce::Reduce(
      storage, bytes, thrust::make_transform_iterator(in, ToSoftmaxPair{}),
      reinterpret_cast<SoftmaxPair*>(out), static_cast<std::int64_t>(segments), offsets,
      offsets + 1, CombineSoftmax{}, SoftmaxPair{-INFINITY, 0.0f}, stream);
}

const std::vector<SegmentedOp>& segmented_ops() {
  static const std::vector<SegmentedOp> ops = {
      {"segmented_sum", "reduce_segmented_sum_lab", 1, &cub_segmented_sum,
       &reduce::cub_fixed::segmented_sum},
      {"segmented_softmax", "reduce_segmented_softmax_lab", 2, &cub_segmented_softmax,
       &reduce::cub_fixed::segmented_softmax}};
  return ops;
}

const SegmentedOp* find_segmented_op(const std::string& name) {
  for (const SegmentedOp& op : segmented_ops())
    if (op.name == name) return &op;
  return nullptr;
}

/// What times a segmented reduction in this process.
enum class SegmentedKind {
  kLab,       ///< a trusted lab's library
  kCub,       ///< cub::DeviceSegmentedReduce with offsets (CUDA's own CUB)
  kCubFixed,  ///< its segment_size overload (the newest CUB, cub_fixed_rows.hpp)
};

/// A segmented reduction to time in this process: a lab's, or CUB's.
struct SegmentedImpl {
  const SegmentedOp* op = nullptr;
  std::string name;
  const reduce::SegmentedLab* lab = nullptr;
  SegmentedKind kind = SegmentedKind::kLab;
};

/// How a row cuts its n floats: segments of `length` elements each, or (ragged) of lengths drawn
/// uniformly in [length / 2, 3 length / 2], `length` their mean.
struct SegmentShape {
  std::size_t length = 0;
  bool ragged = false;

  /// The rows' family: segmented_sum_32, segmented_sum_ragged32...
  std::string family(const SegmentedOp& op) const {
    return op.name + (ragged ? "_ragged" : "_") + std::to_string(length);
  }
  std::size_t shortest() const { return ragged ? std::max<std::size_t>(length / 2, 1) : length; }
  std::size_t longest() const { return ragged ? length + length / 2 : length; }
  /// Whether n floats hold a segment of this shape.
  bool fits(std::size_t n) const { return length > 0 && n >= longest(); }
};

/// The segments of one shape within n floats (n rounded down to whole segments), and their
/// segments + 1 offsets on the device.
struct Segmentation {
  std::size_t n = 0, segments = 0, elements = 0, min_length = 0, max_length = 0;
  SegmentShape shape;
  DeviceBuffer<std::int64_t> offsets;
};

__global__ void fill_uniform_offsets(std::int64_t* offsets, std::size_t segments,
                                     std::size_t length) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t s = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
       s <= segments; s += stride)
    offsets[s] = static_cast<std::int64_t>(s * length);
}

/// The segmentation of (n, shape), kept while rows reuse it. Ragged lengths come from a generator
/// seeded from the run's seed and the mean: every implementation, both operations and every size
/// see the same sequence (a smaller n holds a prefix of it).
std::shared_ptr<const Segmentation> segmentation_for(std::size_t n, const SegmentShape& shape) {
  static std::shared_ptr<const Segmentation> current;
  if (current && current->n == n && current->shape.length == shape.length &&
      current->shape.ragged == shape.ragged)
    return current;
  current.reset();
  auto fresh = std::make_shared<Segmentation>();
  fresh->n = n;
  fresh->shape = shape;
  if (!shape.ragged) {
    fresh->segments = n / shape.length;
    fresh->elements = fresh->segments * shape.length;
    fresh->min_length = fresh->max_length = shape.length;
    fresh->offsets = DeviceBuffer<std::int64_t>(fresh->segments + 1);
    fill_uniform_offsets<<<kFillBlocks, kFillThreads>>>(fresh->offsets.data(), fresh->segments,
                                                        shape.length);
    REDUCE_CUDA_CHECK_LAUNCH();
    REDUCE_CUDA_CHECK(cudaDeviceSynchronize());
  } else {
    std::mt19937_64 rng(reduce::mix(run_seed() ^ 0x9E3779B97F4A7C15ull, shape.length));
    std::uniform_int_distribution<std::size_t> draw(shape.shortest(), shape.longest());
    std::vector<std::int64_t> offsets;
    offsets.reserve(n / shape.length + 2);
    offsets.push_back(0);
    std::size_t used = 0;
    fresh->min_length = shape.longest();
    for (;;) {
      const std::size_t length = draw(rng);
      if (used + length > n) break;
      used += length;
      offsets.push_back(static_cast<std::int64_t>(used));
      fresh->min_length = std::min(fresh->min_length, length);
      fresh->max_length = std::max(fresh->max_length, length);
    }
    fresh->segments = offsets.size() - 1;
    fresh->elements = used;
    fresh->offsets = DeviceBuffer<std::int64_t>(offsets);
  }
  current = std::move(fresh);
  return current;
}

/// Bytes one call reads: the segments' floats, and their offsets where \p offsets.
double segmented_read_bytes(const Segmentation& seg, bool offsets) {
  return static_cast<double>(seg.elements) * sizeof(float) +
         (offsets ? static_cast<double>(seg.segments + 1) * sizeof(std::int64_t) : 0.0);
}

/// The floor of each size (floor/<n>) as measured earlier in this process, GB/s; 0 if not.
double floor_gbps(std::size_t n) {
  const auto it = g_rows.find({"sum", n, "floor"});
  return it == g_rows.end() || it->second.status != "ok" ? 0.0 : it->second.gbps;
}

/// The counters every segmented row reports (its time is \p median_us per call, reading
/// \p read_bytes), and its line of the table printed at the end.
void report_segmented(benchmark::State& state, Row& row, const Segmentation& seg, double read_bytes,
                      double median_us) {
  row.median_us = median_us;
  row.gbps = read_bytes / (median_us * 1e-6) / 1e9;
  state.SetBytesProcessed(static_cast<std::int64_t>(read_bytes) * state.iterations());
  state.counters["median_us"] = median_us;
  state.counters["median_gbps"] = row.gbps;
  state.counters["segments"] = static_cast<double>(seg.segments);
  state.counters["elements"] = static_cast<double>(seg.elements);  // n rounded down
  state.counters["elements_left_out"] = static_cast<double>(seg.n - seg.elements);
  state.counters["bytes_per_call"] = read_bytes;
  state.counters["lab_process_starts"] = reduce::runner::LabRunner::process_starts();
  if (seg.shape.ragged) {
    state.counters["min_length"] = static_cast<double>(seg.min_length);
    state.counters["max_length"] = static_cast<double>(seg.max_length);
  }
  if (const double floor_rate = floor_gbps(seg.n); floor_rate > 0) {
    state.counters["floor_gbps"] = floor_rate;
    state.counters["of_floor"] = row.gbps / floor_rate;
  }
}

/// The sum's input: +1 or -1.
__global__ void fill_signs(float* x, std::size_t n, std::uint64_t seed) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += stride)
    x[i] = (reduce::mix(seed, i) & 1) != 0 ? 1.0f : -1.0f;
}

/// Softmax's input: -3.5 to 0 in steps of 0.5 (the maximum anywhere in a segment).
__global__ void fill_halves(float* x, std::size_t n, std::uint64_t seed) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += stride)
    x[i] = -0.5f * static_cast<float>(reduce::mix(seed, i) & 7);
}

void fill_segmented_input(const SegmentedOp& op, float* x, std::size_t n, std::uint64_t seed) {
  if (op.per_segment == 1)
    fill_signs<<<kFillBlocks, kFillThreads>>>(x, n, seed);
  else
    fill_halves<<<kFillBlocks, kFillThreads>>>(x, n, seed);
  REDUCE_CUDA_CHECK_LAUNCH();
}

/// The graded rows' softmax input: -3.5 to 3.5 in steps of 0.5, so |x - m| <= 7 as before.
__global__ void fill_signed_halves(float* x, std::size_t n, std::uint64_t seed) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += stride)
    x[i] = 0.5f *
           static_cast<float>(
               static_cast<int>(static_cast<std::uint32_t>(reduce::mix(seed, i) >> 32) % 15u) - 7);
}

/// A graded row's input, made whole from \p seed (a fresh one before every call): signs for the
/// sum, halves in [-3.5, 3.5] for softmax.
void fill_graded_segmented_input(const SegmentedOp& op, float* x, std::size_t n,
                                 std::uint64_t seed) {
  if (op.per_segment == 1)
    fill_signs<<<kFillBlocks, kFillThreads>>>(x, n, seed);
  else
    fill_signed_halves<<<kFillBlocks, kFillThreads>>>(x, n, seed);
  REDUCE_CUDA_CHECK_LAUNCH();
}

/// Counts the results that differ from the expected ones: a sum bit for bit; of softmax's pair
/// the maximum by value (the maximum of -0 and +0 may be either) and the sum to within
/// \p relative of the expected one.
__global__ void count_mismatches(const float* got, const float* want, std::size_t count,
                                 std::size_t per_segment, float relative, unsigned* mismatches) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
       i += stride) {
    const bool ok = per_segment == 1 ? __float_as_uint(got[i]) == __float_as_uint(want[i])
                    : i % 2 == 0     ? got[i] == want[i]
                                     : fabsf(got[i] - want[i]) <= relative * want[i];
    if (!ok) atomicAdd(mismatches, 1u);
  }
}

/// Counts \p segments results of \p op at \p got that differ from \p want (asynchronous);
/// \p longest: the longest segment's length.
void count_segment_mismatches(const SegmentedOp& op, const float* got, const float* want,
                              std::size_t segments, std::size_t longest, unsigned* mismatches,
                              cudaStream_t stream) {
  // Twice the contract's bound (reference.hpp) for the lab and for CUB, with |x - m| <= 7.
  const std::size_t depth = reduce::segment_tree_depth(longest);
  const auto relative = static_cast<float>(2 * reduce::softmax_sum_error_bound(depth, 1.0, 7.0));
  count_mismatches<<<kFillBlocks, kFillThreads, 0, stream>>>(got, want, segments * op.per_segment,
                                                             op.per_segment, relative, mismatches);
}

/// The input, segmentation and CUB's results for one (op, n, shape), kept while rows reuse them.
struct SegmentedInputs {
  std::string op;
  std::shared_ptr<const Segmentation> seg;
  DeviceBuffer<float> x{1}, expected{1};
};

SegmentedInputs& segmented_inputs(const SegmentedOp& op, std::size_t n, const SegmentShape& shape) {
  static std::unique_ptr<SegmentedInputs> current;
  if (current && current->op == op.name && current->seg->n == n &&
      current->seg->shape.length == shape.length && current->seg->shape.ragged == shape.ragged)
    return *current;
  current.reset();
  auto fresh = std::make_unique<SegmentedInputs>();
  fresh->op = op.name;
  fresh->seg = segmentation_for(n, shape);
  const Segmentation& seg = *fresh->seg;
  fresh->x = DeviceBuffer<float>(std::max<std::size_t>(seg.elements, 1));
  fresh->expected = DeviceBuffer<float>(seg.segments * op.per_segment);
  fill_segmented_input(op, fresh->x.data(), seg.elements,
                       run_seed() + shape.length + (shape.ragged ? 0x5A5A5A5Aull : 0));
  std::size_t bytes = 0;
  REDUCE_CUDA_CHECK(op.cub(nullptr, bytes, fresh->x.data(), seg.offsets.data(), seg.segments,
                           fresh->expected.data(), nullptr));
  DeviceBuffer<unsigned char> storage(std::max<std::size_t>(bytes, 1));
  REDUCE_CUDA_CHECK(op.cub(storage.data(), bytes, fresh->x.data(), seg.offsets.data(), seg.segments,
                           fresh->expected.data(), nullptr));
  REDUCE_CUDA_CHECK(cudaDeviceSynchronize());
  current = std::move(fresh);
  return *current;
}

void bench_segmented(benchmark::State& state, const SegmentedImpl& impl, std::size_t n,
                     const SegmentShape& shape) {
  Row& row = g_rows[{shape.family(*impl.op), n, impl.name}];
  try {
    if (impl.kind == SegmentedKind::kCubFixed && !reduce::cub_fixed::available()) {
      row.status = reduce::cub_fixed::kAbsent;
      state.SkipWithError(reduce::cub_fixed::kAbsent);
      return;
    }
    const SegmentedOp& op = *impl.op;
    SegmentedInputs& in = segmented_inputs(op, n, shape);
    const Segmentation& seg = *in.seg;
    const std::size_t segments = seg.segments;
    const int segment_size = static_cast<int>(std::min<std::size_t>(
        shape.length, static_cast<std::size_t>(std::numeric_limits<int>::max())));
    reduce::Stream stream;
    reduce::L2Flush l2;
    reduce::EventTimer timer;
    std::size_t bytes = 0;
    switch (impl.kind) {
      case SegmentedKind::kLab:
        bytes = impl.lab->workspace_bytes(seg.elements, segments);
        break;
      case SegmentedKind::kCub:
        REDUCE_CUDA_CHECK(op.cub(nullptr, bytes, in.x.data(), seg.offsets.data(), segments, nullptr,
                                 stream.get()));
        break;
      case SegmentedKind::kCubFixed:
        REDUCE_CUDA_CHECK(op.cub_fixed(nullptr, bytes, in.x.data(), nullptr,
                                       static_cast<std::int64_t>(segments), segment_size,
                                       stream.get()));
        break;
    }
    DeviceBuffer<unsigned char> workspace(std::max<std::size_t>(bytes, 1));
    DeviceBuffer<float> out(segments * op.per_segment);
    DeviceBuffer<unsigned> mismatches(1);
    const auto call = [&] {
      std::size_t b = bytes;
      switch (impl.kind) {
        case SegmentedKind::kLab:
          impl.lab->run(in.x.data(), seg.elements, seg.offsets.data(), segments, out.data(),
                        Workspace{workspace.data(), bytes}, stream.get());
          break;
        case SegmentedKind::kCub:
          REDUCE_CUDA_CHECK(op.cub(workspace.data(), b, in.x.data(), seg.offsets.data(), segments,
                                   out.data(), stream.get()));
          break;
        case SegmentedKind::kCubFixed:
          REDUCE_CUDA_CHECK(op.cub_fixed(workspace.data(), b, in.x.data(), out.data(),
                                         static_cast<std::int64_t>(segments), segment_size,
                                         stream.get()));
          break;
      }
    };
    call();  // warm-up
    stream.synchronize();
    std::vector<double> samples;
    mismatches.fill_bytes(0, stream.get());
    for (auto _ : state) {
      out.fill_bytes(0xFF, stream.get());
      workspace.fill_bytes(0xFF, stream.get());
      l2.flush(stream.get());
      timer.start(stream.get());
      call();
      timer.stop(stream.get());
      const double ms = timer.elapsed_ms();
      state.SetIterationTime(ms * 1e-3);
      samples.push_back(ms);
      count_segment_mismatches(op, out.data(), in.expected.data(), segments, seg.max_length,
                               mismatches.data(), stream.get());
    }
    stream.synchronize();
    const unsigned wrong = mismatches.to_host()[0];
    report_segmented(state, row, seg,
                     segmented_read_bytes(seg, impl.kind != SegmentedKind::kCubFixed),
                     median(samples) * 1e3);
    state.counters["wrong_results"] = wrong;
    if (wrong > 0) {
      row.status = "WRONG segment results";
      state.SkipWithError(row.status.c_str());
    }
  } catch (const std::exception& e) {
    row.status = e.what();
    state.SkipWithError(e.what());
  }
}

/// A graded lab's segmented reduction, in its runner.
struct RemoteSegmented {
  const SegmentedOp* op = nullptr;
  std::string name;
  std::shared_ptr<reduce::runner::LabRunner> remote;  // graded_runner()
  std::size_t library = 0;                            // its library there
};

/// The segmented entries of REDUCE_RUNNER_LABS ("name=segmented_sum:path").
std::vector<RemoteSegmented> remote_segmented_labs() {
  std::vector<RemoteSegmented> labs;
  const char* env = std::getenv("REDUCE_RUNNER_LABS");
  if (env == nullptr) return labs;
  for (const std::string& entry : split(env, ',')) {
    const auto eq = entry.find('=');
    const auto colon = entry.find(':', eq);
    if (eq == std::string::npos || colon == std::string::npos) continue;
    const SegmentedOp* op = find_segmented_op(entry.substr(eq + 1, colon - eq - 1));
    if (op == nullptr) continue;
    labs.push_back(
        {op, entry.substr(0, eq), graded_runner(), graded_library(entry.substr(colon + 1))});
  }
  return labs;
}

/// A graded lab's segmented reduction, timed as bench_remote() times the other operations: the
/// lab reads arrays its own process allocated (inputs and offsets), a request's calls read
/// distinct inputs, and the runner's events are a second clock. Before every request, warm-ups
/// included, every input it reads is made anew, whole, from a fresh seed (so every segment's
/// result changes), the runner's offsets are written again (the lab could have written over
/// them), and CUB computes the expected results from offsets of this process's own; all of that
/// outside both clocks. Every call's results are compared, the warm-ups' too. The lab is called
/// with n rounded down to whole segments (the segments' elements).
void bench_remote_segmented(benchmark::State& state, const RemoteSegmented& impl, std::size_t n,
                            const SegmentShape& shape) {
  Row& row = g_rows[{shape.family(*impl.op), n, impl.name}];
  try {
    impl.remote->use_library(impl.library);
    const SegmentedOp& op = *impl.op;
    const std::shared_ptr<const Segmentation> seg = segmentation_for(n, shape);
    const std::size_t segments = seg->segments, elements = seg->elements;
    const std::size_t results = segments * op.per_segment;
    const std::vector<float*> inputs = impl.remote->allocate_timed_inputs(
        elements, timed_input_count(*impl.remote, elements), segments);
    const int count = static_cast<int>(inputs.size());
    std::int64_t* runner_offsets = impl.remote->timed_offsets();
    const std::int64_t* offsets = seg->offsets.data();  // CUB's: out of the lab's reach
    const std::size_t offset_bytes = (segments + 1) * sizeof(std::int64_t);
    std::size_t bytes = 0;
    REDUCE_CUDA_CHECK(op.cub(nullptr, bytes, inputs[0], offsets, segments, nullptr, nullptr));
    DeviceBuffer<unsigned char> storage(std::max<std::size_t>(bytes, 1));
    std::vector<DeviceBuffer<float>> expected;
    for (int b = 0; b < count; ++b) expected.emplace_back(std::max<std::size_t>(results, 1));
    DeviceBuffer<float> capture(std::max<std::size_t>(results, 1) * count);
    DeviceBuffer<unsigned> mismatches(1);
    mismatches.fill_bytes(0);
    reduce::EventTimer timer;
    RegenerationCost cost;
    // One request of `calls` calls on inputs [0, calls), everything before it outside the clock
    // (run_timed() waits for this process's work before it starts its own); the results are
    // compared on the device.
    const auto request = [&](int calls) {
      const auto regeneration = std::chrono::steady_clock::now();
      timer.start(nullptr);
      REDUCE_CUDA_CHECK(cudaMemcpyAsync(runner_offsets, offsets, offset_bytes,
                                        cudaMemcpyDeviceToDevice, nullptr));
      for (int b = 0; b < calls; ++b) {
        fill_graded_segmented_input(op, inputs[b], elements, graded_rng()());
        std::size_t b_bytes = bytes;
        REDUCE_CUDA_CHECK(op.cub(storage.data(), b_bytes, inputs[b], offsets, segments,
                                 expected[b].data(), nullptr));
      }
      timer.stop(nullptr);
      capture.fill_bytes(0xFF);  // no earlier request's results can stand for this one's
      REDUCE_CUDA_CHECK(cudaDeviceSynchronize());
      cost.add(regeneration, timer.elapsed_ms(), calls);
      const reduce::runner::TimedRun t =
          impl.remote->run_timed(op.name, calls, elements, calls, capture.data(), segments);
      for (int b = 0; b < calls; ++b)
        count_segment_mismatches(op, capture.data() + b * results, expected[b].data(), segments,
                                 seg->max_length, mismatches.data(), nullptr);
      return t;
    };
    // The first request maps the buffers into the runner: time the second.
    request(1);
    const double one_ms = request(1).host_ms;
    const int calls = static_cast<int>(std::clamp(std::ceil(kRequestMs / std::max(one_ms, 1e-3)),
                                                  1.0, static_cast<double>(count)));
    if (calls > 1) request(calls);
    const unsigned warmup_wrong = mismatches.to_host()[0];
    std::vector<double> samples, events;
    double seconds = 0;
    for (auto _ : state) {
      while (samples.size() < static_cast<std::size_t>(kMaxSamples)) {
        const reduce::runner::TimedRun t = request(calls);
        seconds += t.host_ms * 1e-3;
        samples.push_back(t.host_ms / calls);
        events.push_back(t.event_ms / calls);
        const std::size_t k = samples.size();
        if ((k >= kMinSamples && seconds >= kMinSeconds) || (k >= 3 && seconds >= kEnoughSeconds))
          break;
      }
      state.SetIterationTime(median(samples) * 1e-3);
    }
    const unsigned wrong = mismatches.to_host()[0];
    const double median_us = median(samples) * 1e3, event_us = median(events) * 1e3;
    report_segmented(state, row, *seg, segmented_read_bytes(*seg, /*offsets=*/true), median_us);
    state.counters["runner_event_us"] = event_us;
    state.counters["calls_per_sample"] = calls;
    state.counters["samples"] = static_cast<double>(samples.size());
    state.counters["wrong_results"] = wrong;  // the warm-ups' included
    state.counters["warmup_wrong"] = warmup_wrong;
    // Outside both clocks, per request: new inputs and offsets and CUB's expected results.
    state.counters["regenerate_ms"] = median(cost.wall_ms);
    state.counters["regenerate_gpu_ms_per_input"] = median(cost.gpu_ms_per_input);
    state.counters["inputs_regenerated"] = static_cast<double>(cost.inputs);
    if (wrong > 0) {
      row.status = "WRONG: " + std::to_string(wrong) + " segment results in timed calls (" +
                   std::to_string(warmup_wrong) + " of them in warm-up calls; every " +
                   "input made anew from a fresh seed before every call)";
      state.SkipWithError(row.status.c_str());
    } else if (event_us < 0.8 * median_us - 20.0) {
      state.counters["clocks_disagree"] = 1;
      row.status = "clocks disagree: the lab's process reports " + fixed(event_us, 1) +
                   " us per call, the grader's clock " + fixed(median_us, 1) + " us";
      state.SkipWithError(row.status.c_str());
    }
  } catch (const std::exception& e) {
    impl.remote->stop();
    row.status = e.what();
    state.SkipWithError(e.what());
  }
}

/// CUB's two rows of \p op: the offsets overload, and the newest CUB's fixed-size one.
void add_cub_segmented(std::vector<SegmentedImpl>& impls, const SegmentedOp& op) {
  impls.push_back({&op, "cub", nullptr, SegmentedKind::kCub});
  impls.push_back({&op, "cub_fixed", nullptr, SegmentedKind::kCubFixed});
}

/// Trusted labs that export a segmented operation, with CUB's two rows first for each operation.
std::vector<SegmentedImpl> segmented_impls() {
  std::vector<SegmentedImpl> impls;
  std::vector<std::string> entries;
  if (const char* env = std::getenv("REDUCE_LABS")) entries = split(env, ',');
  if (const char* file = std::getenv("REDUCE_LABS_FILE")) {
    std::ifstream list(file);
    for (std::string line; std::getline(list, line);)
      if (!line.empty()) entries.push_back(line);
  }
  for (const SegmentedOp& op : segmented_ops()) {
    bool first = true;
    for (const std::string& entry : entries) {
      const auto eq = entry.find('=');
      const std::string path = eq == std::string::npos ? entry : entry.substr(eq + 1);
      void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (handle == nullptr) continue;
      void* getter = dlsym(handle, op.getter);
      if (getter == nullptr) continue;
      if (first) add_cub_segmented(impls, op);
      first = false;
      impls.push_back({&op, entry.substr(0, eq),
                       reinterpret_cast<const reduce::SegmentedLab* (*)()>(getter)(),
                       SegmentedKind::kLab});
    }
  }
  return impls;
}

/// The segmented rows' table: per size and family, each implementation's GB/s and its fraction
/// of the floor (cub::DeviceReduce::Sum over the same n).
void print_segmented_tables(const std::vector<std::size_t>& sizes,
                            const std::vector<std::string>& families,
                            const std::vector<std::string>& impls) {
  for (std::size_t n : sizes) {
    std::vector<std::string> columns;  // the implementations that ran at this size
    for (const std::string& impl : impls)
      if (std::any_of(families.begin(), families.end(),
                      [&](const std::string& f) { return g_rows.count({f, n, impl}) > 0; }))
        columns.push_back(impl);
    if (columns.empty()) continue;
    const double floor_rate = floor_gbps(n);
    std::printf("\nsegmented rows, n = %zu floats: GB/s (fraction of the floor, %s GB/s)\n", n,
                floor_rate > 0 ? fixed(floor_rate, 1).c_str() : "not measured");
    std::printf("%-28s", "family");
    for (const std::string& impl : columns) std::printf(" %22s", impl.c_str());
    std::printf("\n");
    for (const std::string& family : families) {
      bool any = false;
      for (const std::string& impl : columns) any |= g_rows.count({family, n, impl}) > 0;
      if (!any) continue;
      std::printf("%-28s", family.c_str());
      for (const std::string& impl : columns) {
        const auto it = g_rows.find({family, n, impl});
        std::string cell = "-";
        if (it != g_rows.end() && it->second.median_us > 0 && it->second.status == "ok")
          cell = fixed(it->second.gbps, 1) +
                 (floor_rate > 0 ? " (" + fixed(it->second.gbps / floor_rate, 3) + ")" : "");
        else if (it != g_rows.end())
          cell = it->second.status == reduce::cub_fixed::kAbsent ? "no newest CCCL"
                                                                 : it->second.status.substr(0, 22);
        std::printf(" %22s", cell.c_str());
      }
      std::printf("\n");
    }
  }
}

// ---- the tables --------------------------------------------------------------------------

std::string fixed(double v, int digits) {
  if (!std::isfinite(v)) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

/// One block per operation and size: what a student compares rung by rung.
void print_tables(const std::vector<std::size_t>& sizes, const std::vector<Impl>& impls,
                  const reduce::DeviceInfo& gpu) {
  std::printf(
      "\n%s, %d SMs, theoretical %.0f GB/s; ceiling probe (stream read of %zu floats, "
      "%s) %.0f GB/s\n",
      gpu.name.c_str(), gpu.sm_count, gpu.theoretical_bandwidth_gbps(), g_ceiling_n,
      reduce::stream_read_variant(), g_ceiling_gbps);
  std::printf("probe layouts:");
  for (const reduce::ProbeTiming& t : reduce::probe_timings())
    std::printf(" [%s] %.0f", t.name, t.gbps);
  std::printf(" GB/s\n");
  for (const Operation& operation : kOperations) {
    const Operation* op = &operation;
    for (std::size_t n : sizes) {
      const auto find = [&](const std::string& name) -> const Row* {
        const auto it = g_rows.find({op->name, n, name});
        return it == g_rows.end() || it->second.median_us <= 0 ? nullptr : &it->second;
      };
      bool any = false;
      for (const Impl& impl : impls) any |= impl.op == op && g_rows.count({op->name, n, impl.name});
      if (!any) continue;
      const Row* cpu = find("cpu");
      const Row* cub = find("cub");
      const Row* first = nullptr;  // rung 1, the naive atomic, when it is in this run
      for (const Impl& impl : impls)
        if (impl.op == op && impl.name.rfind("01_", 0) == 0) first = find(impl.name);
      std::printf("\n%s, n = %zu floats (%.1f MB)\n", op->name, n, n * 4 / 1e6);
      std::printf("%-26s %11s %9s %8s %9s %9s %7s %14s %10s  %s\n", "rung", "time_us", "GB/s",
                  "ceil%", "x_cpu", "x_rung1", "t/CUB", "result", "|error|", "status");
      for (const Impl& impl : impls) {
        if (impl.op != op) continue;
        const auto it = g_rows.find({op->name, n, impl.name});
        if (it == g_rows.end()) continue;
        const Row* r = find(impl.name);
        if (r == nullptr) {
          std::printf("%-26s %11s  %s\n", impl.name.c_str(), "-", it->second.status.c_str());
          continue;
        }
        std::printf("%-26s %11s %9s %8s %9s %9s %7s %14s %10s  %s\n", impl.name.c_str(),
                    fixed(r->median_us, 1).c_str(), fixed(r->gbps, 1).c_str(),
                    fixed(100 * r->gbps / g_ceiling_gbps, 1).c_str(),
                    cpu ? fixed(cpu->median_us / r->median_us, 1).c_str() : "-",
                    first ? fixed(first->median_us / r->median_us, 1).c_str() : "-",
                    cub ? fixed(r->median_us / cub->median_us, 3).c_str() : "-",
                    fixed(r->result, 1).c_str(), fixed(r->error, 1).c_str(), r->status.c_str());
      }
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  if (!reduce::has_gpu()) {
    std::printf("no CUDA device: the benchmark needs a GPU\n");
    return 3;  // as reduce-grade: nothing measured for want of a GPU
  }
  const reduce::DeviceInfo gpu = reduce::query_device();
  g_ceiling_n = reduce::ceiling_probe_size();
  g_ceiling_gbps = reduce::measure_ceiling_gbps(g_ceiling_n);
  benchmark::AddCustomContext("gpu", gpu.name);
  benchmark::AddCustomContext("sm_count", std::to_string(gpu.sm_count));
  benchmark::AddCustomContext("theoretical_gbps", fixed(gpu.theoretical_bandwidth_gbps(), 1));
  benchmark::AddCustomContext("ceiling_gbps", fixed(g_ceiling_gbps, 1));
  benchmark::AddCustomContext("ceiling_elements", std::to_string(g_ceiling_n));
  benchmark::AddCustomContext("ceiling_kernel", reduce::stream_read_variant());
  benchmark::AddCustomContext("seed", std::to_string(run_seed()));
  // Lab 17's CUB rows: "cub" with CUDA's own CUB, "cub_fixed" with the newest (if built).
  benchmark::AddCustomContext("cub_version", std::to_string(CUB_MAJOR_VERSION) + "." +
                                                 std::to_string(CUB_MINOR_VERSION) + "." +
                                                 std::to_string(CUB_SUBMINOR_VERSION));
  benchmark::AddCustomContext("cub_fixed_version", reduce::cub_fixed::available()
                                                       ? reduce::cub_fixed::cub_version()
                                                       : reduce::cub_fixed::kAbsent);
  for (const reduce::ProbeTiming& t : reduce::probe_timings())
    benchmark::AddCustomContext(std::string("probe ") + t.name, fixed(t.gbps, 1));

  std::vector<std::size_t> sizes;
  if (const char* env = std::getenv("REDUCE_BENCH_SIZES")) {
    for (const std::string& s : split(env, ',')) sizes.push_back(parse_size(s));
  } else {
    for (int e = 10; e <= 30; e += 2) sizes.push_back(std::size_t{1} << e);
  }

  std::vector<Impl> labs = load_labs();
  for (Impl& remote : remote_labs()) labs.push_back(remote);
  std::vector<Impl> impls;
  for (const Operation& op : kOperations) {
    const bool present =
        std::any_of(labs.begin(), labs.end(), [&op](const Impl& i) { return i.op == &op; });
    if (!present) continue;
    impls.push_back(probe_impl(op));
    impls.push_back(cub_impl(op));
    for (const Impl& lab : labs)
      if (lab.op == &op) impls.push_back(lab);
    impls.push_back({&op, "cpu", nullptr, nullptr, true, /*on_host=*/true});
  }
  for (const Operation& op : kOperations) {
    for (std::size_t n : sizes) {
      for (const Impl& impl : impls) {
        if (impl.op != &op) continue;
        const std::string name = std::string(op.name) + "/" + impl.name + "/" + std::to_string(n);
        auto* b = impl.on_host
                      ? benchmark::RegisterBenchmark(
                            name.c_str(), [&op, n](benchmark::State& s) { bench_host(s, op, n); })
                      : benchmark::RegisterBenchmark(name.c_str(), [impl, n](benchmark::State& s) {
                          if (impl.remote)
                            bench_remote(s, impl, n);
                          else
                            bench_device(s, impl, n);
                        });
        b->UseManualTime()->Unit(benchmark::kMicrosecond);
        if (impl.remote)
          b->Iterations(1);  // bench_remote takes its own samples
        else
          b->MinTime(impl.on_host ? 0.2 : 0.1);
      }
    }
  }
  // Lab 17's rows (segmented reductions), after the floor of each size: see "segmented
  // reductions" above.
  const auto size_list = [](const char* variable, const char* fallback) {
    std::vector<std::size_t> values;
    const char* env = std::getenv(variable);
    for (const std::string& v : split(env != nullptr ? env : fallback, ','))
      values.push_back(parse_size(v));
    return values;
  };
  const std::vector<std::size_t> lengths =
      size_list("REDUCE_SEGMENT_LENGTHS", "32,1024,32768,1048576");
  const std::vector<std::size_t> ragged_means = size_list("REDUCE_SEGMENT_RAGGED", "");
  std::vector<SegmentShape> shapes;  // a ragged family right after its uniform counterpart
  for (std::size_t length : lengths) {
    shapes.push_back({length, false});
    if (std::find(ragged_means.begin(), ragged_means.end(), length) != ragged_means.end())
      shapes.push_back({length, true});
  }
  for (std::size_t mean : ragged_means)
    if (std::find(lengths.begin(), lengths.end(), mean) == lengths.end())
      shapes.push_back({mean, true});
  std::vector<SegmentedImpl> segmented = segmented_impls();
  const std::vector<RemoteSegmented> remote_segmented = remote_segmented_labs();
  for (const RemoteSegmented& impl : remote_segmented) {  // CUB beside every graded operation
    const bool has_cub = std::any_of(segmented.begin(), segmented.end(), [&](const auto& s) {
      return s.op == impl.op && s.kind == SegmentedKind::kCub;
    });
    if (!has_cub) add_cub_segmented(segmented, *impl.op);
  }
  std::vector<std::string> families, segmented_names;  // for the table printed at the end
  const auto remember = [](std::vector<std::string>& list, const std::string& name) {
    if (std::find(list.begin(), list.end(), name) == list.end()) list.push_back(name);
  };
  if (!segmented.empty() || !remote_segmented.empty()) {
    const Impl floor = [] {
      Impl impl = cub_impl(*find_operation("sum"));
      impl.name = "floor";
      return impl;
    }();
    for (std::size_t n : sizes)
      benchmark::RegisterBenchmark(("floor/" + std::to_string(n)).c_str(),
                                   [floor, n](benchmark::State& st) { bench_device(st, floor, n); })
          ->UseManualTime()
          ->Unit(benchmark::kMicrosecond)
          ->MinTime(0.1);
  }
  const auto row_name = [](const SegmentedOp& op, const SegmentShape& shape,
                           const std::string& impl, std::size_t n) {
    return shape.family(op) + "/" + impl + "/" + std::to_string(n);
  };
  for (const SegmentShape& shape : shapes) {
    for (std::size_t n : sizes) {
      if (!shape.fits(n)) continue;
      for (const RemoteSegmented& impl : remote_segmented) {
        remember(families, shape.family(*impl.op));
        remember(segmented_names, impl.name);
        benchmark::RegisterBenchmark(
            row_name(*impl.op, shape, impl.name, n).c_str(),
            [impl, n, shape](benchmark::State& st) { bench_remote_segmented(st, impl, n, shape); })
            ->UseManualTime()
            ->Unit(benchmark::kMicrosecond)
            ->Iterations(1);  // it takes its own samples
      }
      for (const SegmentedImpl& impl : segmented) {
        if (shape.ragged && impl.kind == SegmentedKind::kCubFixed) continue;  // one length only
        remember(families, shape.family(*impl.op));
        remember(segmented_names, impl.name);
        benchmark::RegisterBenchmark(
            row_name(*impl.op, shape, impl.name, n).c_str(),
            [impl, n, shape](benchmark::State& st) { bench_segmented(st, impl, n, shape); })
            ->UseManualTime()
            ->Unit(benchmark::kMicrosecond)
            ->MinTime(0.1);
      }
    }
  }
  benchmark::RunSpecifiedBenchmarks();
  print_tables(sizes, impls, gpu);
  print_segmented_tables(sizes, families, segmented_names);
  benchmark::Shutdown();
  return 0;
}
