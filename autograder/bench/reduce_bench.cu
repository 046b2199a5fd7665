// The benchmark of every operation, and the ladder table.
//
// Times each operation of the labs it is given (sum, maximum, minimum, product, mean, argmax)
// beside its cub::DeviceReduce counterpart, the ceiling probe (a pure streaming read) and a
// single-thread CPU loop, on the same buffers. Rows are named <op>/<implementation>/<n>.
//   REDUCE_LABS_FILE=<build>/<tree>/labs.txt  trusted labs loaded into this process (the ladder:
//                                    lines "04_sequential=/path/lib04_sequential_sum.so")
//   REDUCE_LABS="name=path,..."      the same, inline
//   REDUCE_REMOTE_LABS="name=op:path,..."  labs being graded: each runs in a lab runner process
//   REDUCE_BENCH_SIZES="2^26,2^28"  sizes (default 2^10, 2^12, ..., 2^30)
//   REDUCE_SEED=n                    inputs from this seed (default: fresh each run)
//   --benchmark_filter=^sum/         Google Benchmark flags select rows and write JSON
//
// Method: four inputs with different contents rotate, and before every sample random positions
// of each input change (the expected results follow), so no call can return a cached answer.
// Trusted rows: each sample poisons the output and the workspace and flushes L2 outside the
// timed region, times one call with CUDA events, and checks the result. Graded rows: each
// sample is one request to the lab's runner, up to 16 calls (one per distinct input, each
// result captured in stream order), timed by this process's clock from the request to the
// results being readable; the runner's own CUDA events are a second clock that must agree.
// Rows report medians.
#include <reduce/ceiling.cuh>
#include <reduce/cuda_check.cuh>
#include <reduce/device_buffer.cuh>
#include <reduce/device_info.cuh>
#include <reduce/event_timer.cuh>
#include <reduce/generators.hpp>
#include <reduce/l2_flush.cuh>
#include <reduce/lab_entry_points.cuh>
#include <reduce/reference.hpp>

#include <reduce_remote/remote_lab.hpp>

#include <benchmark/benchmark.h>
#include <dlfcn.h>
#include <cub/device/device_reduce.cuh>
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
#include <sstream>
#include <string>
#include <vector>

namespace {

using reduce::DeviceBuffer;
using reduce::Workspace;

// ---- operations --------------------------------------------------------------------------

enum class Op { kSum, kMaximum, kMinimum, kProduct, kMean, kArgmax };
const Op kOps[] = {Op::kSum, Op::kMaximum, Op::kMinimum, Op::kProduct, Op::kMean, Op::kArgmax};

const char* op_name(Op op) {
  switch (op) {
    case Op::kSum:
      return "sum";
    case Op::kMaximum:
      return "maximum";
    case Op::kMinimum:
      return "minimum";
    case Op::kProduct:
      return "product";
    case Op::kMean:
      return "mean";
    case Op::kArgmax:
      return "argmax";
  }
  return "?";
}

/// A result as the benchmark compares it: a float's bits, or an index.
using Result = std::int64_t;

/// Type-erased call of one implementation: the output is a float or an int64 index.
using RunFn = std::function<void(const float*, std::size_t, void*, Workspace, cudaStream_t)>;

/// One row: something that computes an operation on the device (or, for "cpu", the host).
struct Impl {
  Op op;
  std::string name;
  std::function<std::size_t(std::size_t)> workspace_bytes;
  RunFn run;
  bool checks_result = true;  // false for the probe, whose output is no result
  bool on_host = false;
  std::shared_ptr<reduce::remote::RemoteLab> remote;  // a graded lab: calls go to its runner
};

/// Rotating inputs for one (operation, size) with their expected results.
constexpr int kRotation = 4;  // host-made inputs per (operation, size)
struct Inputs {
  Op op;
  std::size_t n = 0;
  std::vector<DeviceBuffer<float>> device;
  std::vector<double> expected;         // value (float ops) or index (argmax)
  std::vector<std::size_t> extreme_at;  // maximum, minimum, argmax: where the extreme is
  std::vector<float> host0;             // the CPU baseline reads this copy of input 0
};

std::uint64_t run_seed() {
  static const std::uint64_t seed = [] {
    const char* env = std::getenv("REDUCE_SEED");  // the grader sets it to make a run repeatable
    return env != nullptr ? std::stoull(env, nullptr, 0) : reduce::fresh_seed();
  }();
  return seed;
}

/// Inputs whose exact result is known, so that every timed run can be checked.
std::vector<float> make_input(Op op, std::size_t n, std::uint64_t seed, double& expected) {
  switch (op) {
    case Op::kSum:
    case Op::kMean: {
      std::vector<float> x = reduce::exact_integers(n, seed);
      const double sum = reduce::reference_sum(x);
      expected = op == Op::kSum ? sum : sum / static_cast<double>(n);
      return x;
    }
    case Op::kMaximum:
    case Op::kMinimum:
    case Op::kArgmax: {
      std::vector<float> x = reduce::mixed_sign(n, seed);
      const std::size_t at = reduce::mix(seed, 99) % n;  // one clear extreme at a random place
      x[at] = op == Op::kMinimum ? -2.0f : 2.0f;
      expected = op == Op::kArgmax ? static_cast<double>(at) : x[at];
      return x;
    }
    case Op::kProduct: {
      // Ones, with a few 2s, halves and -1s: exact in any order (the exponent stays within +-60).
      std::vector<float> x(n, 1.0f);
      double product = 1.0;
      const float factors[] = {2.0f, 2.0f, 0.5f, -1.0f};
      for (std::size_t k = 0; k < std::min<std::size_t>(n, 60); ++k) {
        const std::size_t at = reduce::mix(seed, k) % n;
        if (x[at] != 1.0f) continue;
        x[at] = factors[k % 4];
        product *= x[at];
      }
      expected = product;
      return x;
    }
  }
  return {};
}

/// Changes a few random elements of every input before a sample, and the expected results with
/// them, so that no result can be remembered from an earlier call. Sums stay exact (a changed
/// element never grows in magnitude beyond max(|old|, 1)); the extreme of maximum, minimum and
/// argmax moves to a new place with a new value; the product gains or loses a factor.
void mutate(Op op, std::size_t n, const std::vector<float*>& xs, std::vector<double>& expected_all,
            std::vector<std::size_t>& extreme_at, std::mt19937_64& rng) {
  if (n == 0) return;
  auto read = [](const float* p) {
    float v = 0;
    REDUCE_CUDA_CHECK(cudaMemcpy(&v, p, sizeof v, cudaMemcpyDeviceToHost));
    return v;
  };
  auto write = [](float* p, float v) {
    REDUCE_CUDA_CHECK(cudaMemcpy(p, &v, sizeof v, cudaMemcpyHostToDevice));
  };
  static std::uint64_t generation = 0;
  ++generation;
  for (std::size_t b = 0; b < xs.size(); ++b) {
    float* x = xs[b];
    double& expected = expected_all[b];
    switch (op) {
      case Op::kSum:
      case Op::kMean: {
        double sum = op == Op::kSum ? expected : expected * static_cast<double>(n);
        for (int k = 0; k < 8; ++k) {
          const std::size_t at = rng() % n;
          const float old = read(x + at);
          const int m = std::max(1, static_cast<int>(std::fabs(old)));
          float v = old;
          while (v == old) v = static_cast<float>(static_cast<int>(rng() % (2 * m + 1)) - m);
          write(x + at, v);
          sum += static_cast<double>(v) - old;
        }
        expected = op == Op::kSum ? sum : sum / static_cast<double>(n);
        break;
      }
      case Op::kMaximum:
      case Op::kMinimum:
      case Op::kArgmax: {
        const float sign = op == Op::kMinimum ? -1.0f : 1.0f;
        const std::size_t old_at = extreme_at[b];
        write(x + old_at, 0.25f * sign);
        const std::size_t at = rng() % n;
        const float value = sign * (2.0f + static_cast<float>(generation % 1024) / 1024.0f);
        write(x + at, value);
        extreme_at[b] = at;
        expected = op == Op::kArgmax ? static_cast<double>(at) : value;
        break;
      }
      case Op::kProduct: {
        const std::size_t at = rng() % n;
        const float old = read(x + at);
        float v = 1.0f;
        if (old == 1.0f) {  // gain a factor, steering the exponent back towards zero
          const int exponent = std::ilogb(expected);
          v = rng() % 3 == 0 ? -1.0f : exponent > 0 ? 0.5f : 2.0f;
        }
        write(x + at, v);
        expected = expected / old * v;
        break;
      }
    }
  }
  REDUCE_CUDA_CHECK(cudaDeviceSynchronize());  // the changes have landed before any call
}

Inputs& inputs_for(Op op, std::size_t n) {
  static std::unique_ptr<Inputs> current;
  if (!current || current->n != n || current->op != op) {
    current.reset();  // free the previous inputs first
    auto fresh = std::make_unique<Inputs>();
    fresh->op = op;
    fresh->n = n;
    for (int k = 0; k < kRotation; ++k) {
      double expected = 0;
      std::vector<float> host = make_input(op, n, run_seed() + 1000 * k + n, expected);
      fresh->expected.push_back(expected);
      fresh->extreme_at.push_back(n > 0 ? reduce::mix(run_seed() + 1000 * k + n, 99) % n : 0);
      fresh->device.emplace_back(host);
      if (k == 0) fresh->host0 = std::move(host);
    }
    current = std::move(fresh);
  }
  return *current;
}

/// Whether \p got (float bits or index) is the expected result of \p op.
bool correct(Op op, std::int64_t got_bits, double expected, double& got_value) {
  if (op == Op::kArgmax) {
    got_value = static_cast<double>(got_bits);
    return got_bits == static_cast<std::int64_t>(expected);
  }
  float f;
  const auto bits = static_cast<std::uint32_t>(got_bits);
  std::memcpy(&f, &bits, sizeof f);
  got_value = f;
  if (op == Op::kMean) {  // one rounding of the division: allow 2 ulp
    return std::fabs(f - expected) <=
           2.0 * std::numeric_limits<float>::epsilon() * std::fabs(expected);
  }
  return f == static_cast<float>(expected);
}

// ---- measuring ---------------------------------------------------------------------------

std::string fixed(double v, int digits);

/// What one benchmark measured, for the tables printed at the end.
struct Row {
  double median_us = 0, gbps = 0, result = NAN, error = NAN;
  std::string status = "ok";
};
std::map<std::tuple<Op, std::size_t, std::string>, Row> g_rows;
double g_ceiling_gbps = 0;
std::size_t g_ceiling_n = 0;

double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

void bench_device(benchmark::State& state, const Impl& impl, std::size_t n) {
  Row& row = g_rows[{impl.op, n, impl.name}];
  try {
    Inputs& in = inputs_for(impl.op, n);
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
      const std::size_t bytes = impl.op == Op::kArgmax ? sizeof(std::int64_t) : sizeof(float);
      REDUCE_CUDA_CHECK(cudaMemcpy(&got, out.data(), bytes, cudaMemcpyDeviceToHost));
      double value = 0;
      const bool ok = correct(impl.op, got, in.expected[b], value);
      if (!ok) ++wrong;
      if (!ok || wrong == 0) {
        row.result = value;
        row.error = std::fabs(value - in.expected[b]);
      }
    }
    const double bytes = static_cast<double>(n) * sizeof(float);
    row.median_us = median(samples) * 1e3;
    row.gbps = bytes / (row.median_us * 1e-6) / 1e9;
    state.SetBytesProcessed(static_cast<std::int64_t>(bytes) * state.iterations());
    state.counters["median_us"] = row.median_us;
    state.counters["median_gbps"] = row.gbps;
    state.counters["wrong_results"] = wrong;
    if (wrong > 0) {
      row.status = "WRONG in " + std::to_string(wrong) + " timed runs";
      state.SkipWithError(row.status.c_str());
    }
  } catch (const std::exception& e) {
    row.status = e.what();
    state.SkipWithError(e.what());
  }
}

/// How many distinct n-float inputs a graded lab's runner may hold for timing: up to
/// kMaxInputs, within half the device memory free now.
int timed_input_count(std::size_t n) {
  std::size_t free = 0, total = 0;
  REDUCE_CUDA_CHECK(cudaMemGetInfo(&free, &total));
  const std::size_t bytes = std::max<std::size_t>(n, 1) * sizeof(float);
  return static_cast<int>(std::clamp<std::size_t>(free / 2 / bytes, 1, reduce::remote::kMaxInputs));
}

/// Sampling of a graded lab: a request's calls fill about kRequestMs (its own cost, a socket
/// round trip and a copy back, is then a few percent of it); samples stop after kMinSamples and
/// kMinSeconds, or at kMaxSamples, or once a slow lab has had kEnoughSeconds and 3 samples.
constexpr double kRequestMs = 10.0;
constexpr int kMinSamples = 5, kMaxSamples = 30;
constexpr double kMinSeconds = 0.25, kEnoughSeconds = 1.5;

/// A graded lab: each sample is one request to its runner, one call per distinct input, timed
/// by this process's clock; every call's result is the copy captured in stream order right
/// after it. One benchmark iteration holds all samples, so the runner starts once per row.
void bench_remote(benchmark::State& state, const Impl& impl, std::size_t n) {
  Row& row = g_rows[{impl.op, n, impl.name}];
  try {
    Inputs& in = inputs_for(impl.op, n);
    // The lab reads arrays its own process allocated; this process fills and changes them.
    // Arrays beyond the host-made ones start as copies and differ after the first mutate().
    const int count = timed_input_count(n);
    const std::vector<float*> inputs = impl.remote->allocate_timed_inputs(n, count);
    std::vector<double> expected;
    std::vector<std::size_t> extreme_at;
    for (int b = 0; b < count; ++b) {
      REDUCE_CUDA_CHECK(cudaMemcpy(inputs[b], in.device[b % kRotation].data(), n * sizeof(float),
                                   cudaMemcpyDeviceToDevice));
      expected.push_back(in.expected[b % kRotation]);
      extreme_at.push_back(in.extreme_at[b % kRotation]);
    }
    std::mt19937_64 rng(run_seed() ^ 0x6A09E667F3BCC909ull ^ n);
    mutate(impl.op, n, inputs, expected, extreme_at, rng);
    DeviceBuffer<std::int64_t> capture(count);
    const std::string entry = op_name(impl.op);
    // Warm-up: one call tells how many fit in a request; a fast lab then reads every input once.
    const double one_ms = impl.remote->run_timed(entry, 1, n, 1, capture.data()).host_ms;
    const int calls = static_cast<int>(std::clamp(std::ceil(kRequestMs / std::max(one_ms, 1e-3)),
                                                  1.0, static_cast<double>(count)));
    if (calls > 1) impl.remote->run_timed(entry, calls, n, calls, capture.data());
    const std::vector<float*> used(inputs.begin(), inputs.begin() + calls);

    std::vector<double> samples, events;
    int wrong = 0;
    const std::size_t rb = impl.op == Op::kArgmax ? sizeof(std::int64_t) : sizeof(float);
    double seconds = 0;
    for (auto _ : state) {
      while (samples.size() < static_cast<std::size_t>(kMaxSamples)) {
        mutate(impl.op, n, used, expected, extreme_at, rng);  // outside the clock
        const reduce::remote::TimedRun t =
            impl.remote->run_timed(entry, calls, n, calls, capture.data());
        seconds += t.host_ms * 1e-3;
        samples.push_back(t.host_ms / calls);
        events.push_back(t.event_ms / calls);
        std::vector<unsigned char> got(rb * calls);
        REDUCE_CUDA_CHECK(
            cudaMemcpy(got.data(), capture.data(), got.size(), cudaMemcpyDeviceToHost));
        for (int b = 0; b < calls; ++b) {
          std::int64_t bits = 0;
          std::memcpy(&bits, got.data() + b * rb, rb);
          double value = 0;
          const bool ok = correct(impl.op, bits, expected[b], value);
          if (!ok) ++wrong;
          if (!ok || wrong == 0) {
            row.result = value;
            row.error = std::fabs(value - expected[b]);
          }
        }
        const std::size_t k = samples.size();
        if ((k >= kMinSamples && seconds >= kMinSeconds) || (k >= 3 && seconds >= kEnoughSeconds))
          break;
      }
      state.SetIterationTime(median(samples) * 1e-3);
    }
    impl.remote->stop();  // frees the runner's inputs
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
    state.counters["wrong_results"] = wrong;
    state.counters["runner_starts"] = impl.remote->starts();
    if (wrong > 0) {
      row.status = "WRONG in " + std::to_string(wrong) + " timed calls (results captured in " +
                   "stream order; inputs changed before every sample)";
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
    if (impl.remote) impl.remote->stop();
    row.status = e.what();
    state.SkipWithError(e.what());
  }
}

/// The single-thread CPU loop a student would write first, in float.
double cpu_loop(Op op, const std::vector<float>& x) {
  switch (op) {
    case Op::kSum:
      return reduce::serial_float_sum(x.data(), x.size());
    case Op::kMean:
      return reduce::serial_float_sum(x.data(), x.size()) / static_cast<float>(x.size());
    case Op::kMaximum: {
      float m = -INFINITY;
      for (float v : x) m = v > m ? v : m;
      return m;
    }
    case Op::kMinimum: {
      float m = INFINITY;
      for (float v : x) m = v < m ? v : m;
      return m;
    }
    case Op::kProduct: {
      float p = 1.0f;
      for (float v : x) p *= v;
      return p;
    }
    case Op::kArgmax: {
      std::size_t at = 0;
      for (std::size_t i = 1; i < x.size(); ++i)
        if (x[i] > x[at]) at = i;
      return static_cast<double>(at);
    }
  }
  return 0;
}

void bench_host(benchmark::State& state, Op op, std::size_t n) {
  Row& row = g_rows[{op, n, "cpu"}];
  Inputs& in = inputs_for(op, n);
  std::vector<double> samples;
  double got = 0;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    got = cpu_loop(op, in.host0);
    benchmark::DoNotOptimize(got);
    const std::chrono::duration<double> seconds = std::chrono::steady_clock::now() - start;
    state.SetIterationTime(seconds.count());
    samples.push_back(seconds.count() * 1e3);
  }
  row.median_us = median(samples) * 1e3;
  row.gbps = n * sizeof(float) / (row.median_us * 1e-6) / 1e9;
  row.result = got;
  row.error = std::fabs(got - in.expected[0]);  // a float loop may be inexact
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
    for (Op op : kOps) {
      const std::string symbol = std::string("reduce_") + op_name(op) + "_lab";
      void* getter = dlsym(handle, symbol.c_str());
      if (getter == nullptr) continue;
      if (op == Op::kArgmax) {
        const auto* lab = reinterpret_cast<const reduce::ArgmaxLab* (*)()>(getter)();
        labs.push_back({op, name, lab->workspace_bytes,
                        [run = lab->run](const float* in, std::size_t n, void* out, Workspace ws,
                                         cudaStream_t s) {
                          run(in, n, static_cast<std::int64_t*>(out), ws, s);
                        }});
      } else {
        const auto* lab = reinterpret_cast<const reduce::FloatLab* (*)()>(getter)();
        labs.push_back(
            {op, name, lab->workspace_bytes,
             [run = lab->run](const float* in, std::size_t n, void* out, Workspace ws,
                              cudaStream_t s) { run(in, n, static_cast<float*>(out), ws, s); }});
      }
    }
  }
  return labs;
}

/// Labs being graded (REDUCE_REMOTE_LABS="name=op:path,..."): never loaded here; each runs in a
/// lab runner process of its own.
std::vector<Impl> remote_labs() {
  std::vector<Impl> labs;
  const char* env = std::getenv("REDUCE_REMOTE_LABS");
  if (env == nullptr) return labs;
  for (const std::string& entry : split(env, ',')) {
    const auto eq = entry.find('=');
    const auto colon = entry.find(':', eq);
    if (eq == std::string::npos || colon == std::string::npos) {
      std::fprintf(stderr, "REDUCE_REMOTE_LABS: expected name=op:path, got %s\n", entry.c_str());
      continue;
    }
    const std::string op = entry.substr(eq + 1, colon - eq - 1);
    reduce::remote::RunnerOptions options = reduce::remote::RunnerOptions::from_environment();
    options.library = entry.substr(colon + 1);
    for (Op candidate : kOps) {
      if (op != op_name(candidate)) continue;
      Impl impl{candidate, entry.substr(0, eq), nullptr, nullptr};
      impl.remote = std::make_shared<reduce::remote::RemoteLab>(options);
      labs.push_back(impl);
    }
  }
  return labs;
}

__global__ void divide_by(float* value, double n) {
  *value = static_cast<float>(*value / n);
}

/// A cub::DeviceReduce call: with null storage it only sets the bytes it needs. \p extra is
/// scratch the row keeps for itself in front of CUB's storage (ArgMax's maximum goes there).
using CubCall = cudaError_t (*)(void* storage, std::size_t& bytes, void* extra, const float* in,
                                std::size_t n, void* out, cudaStream_t stream);

constexpr std::size_t kExtraBytes = 256;  // keeps CUB's storage 256-byte aligned

Impl cub_row(Op op, CubCall call) {
  return {op, "cub",
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

Impl cub_impl(Op op) {
  using I = std::int64_t;
  switch (op) {
    case Op::kSum:
      return cub_row(op, [](void* t, std::size_t& b, void* extra, const float* in, std::size_t n,
                            void* out, cudaStream_t s) {
        return cub::DeviceReduce::Sum(t, b, in, static_cast<float*>(out), static_cast<I>(n), s);
      });
    case Op::kMean: {
      Impl impl = cub_row(op, [](void* t, std::size_t& b, void* extra, const float* in,
                                 std::size_t n, void* out, cudaStream_t s) {
        return cub::DeviceReduce::Sum(t, b, in, static_cast<float*>(out), static_cast<I>(n), s);
      });
      impl.run = [sum = impl.run](const float* in, std::size_t n, void* out, Workspace ws,
                                  cudaStream_t s) {
        sum(in, n, out, ws, s);
        divide_by<<<1, 1, 0, s>>>(static_cast<float*>(out), static_cast<double>(n));
        REDUCE_CUDA_CHECK_LAUNCH();
      };
      return impl;
    }
    case Op::kMaximum:
      return cub_row(op, [](void* t, std::size_t& b, void* extra, const float* in, std::size_t n,
                            void* out, cudaStream_t s) {
        return cub::DeviceReduce::Max(t, b, in, static_cast<float*>(out), static_cast<I>(n), s);
      });
    case Op::kMinimum:
      return cub_row(op, [](void* t, std::size_t& b, void* extra, const float* in, std::size_t n,
                            void* out, cudaStream_t s) {
        return cub::DeviceReduce::Min(t, b, in, static_cast<float*>(out), static_cast<I>(n), s);
      });
    case Op::kProduct:
      return cub_row(op, [](void* t, std::size_t& b, void* extra, const float* in, std::size_t n,
                            void* out, cudaStream_t s) {
        return cub::DeviceReduce::Reduce(t, b, in, static_cast<float*>(out), static_cast<I>(n),
                                         cuda::std::multiplies<float>{}, 1.0f, s);
      });
    case Op::kArgmax:  // CUB writes the maximum too: it goes into the row's extra scratch
      return cub_row(op, [](void* t, std::size_t& b, void* extra, const float* in, std::size_t n,
                            void* out, cudaStream_t s) {
        return cub::DeviceReduce::ArgMax(t, b, in, static_cast<float*>(extra), static_cast<I*>(out),
                                         static_cast<I>(n), s);
      });
  }
  return {};
}

Impl probe_impl(Op op) {
  return {op, "stream_read", [](std::size_t) { return std::size_t{0}; },
          [](const float* in, std::size_t n, void* out, Workspace, cudaStream_t stream) {
            reduce::stream_read(in, n, static_cast<float*>(out), stream);
          },
          /*checks_result=*/false};
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
  for (Op op : kOps) {
    for (std::size_t n : sizes) {
      const auto find = [&](const std::string& name) -> const Row* {
        const auto it = g_rows.find({op, n, name});
        return it == g_rows.end() || it->second.median_us <= 0 ? nullptr : &it->second;
      };
      bool any = false;
      for (const Impl& impl : impls) any |= impl.op == op && g_rows.count({op, n, impl.name});
      if (!any) continue;
      const Row* cpu = find("cpu");
      const Row* cub = find("cub");
      const Row* first = nullptr;  // rung 1, the naive atomic, when it is in this run
      for (const Impl& impl : impls)
        if (impl.op == op && impl.name.rfind("01_", 0) == 0) first = find(impl.name);
      std::printf("\n%s, n = %zu floats (%.1f MB)\n", op_name(op), n, n * 4 / 1e6);
      std::printf("%-26s %11s %9s %8s %9s %9s %7s %14s %10s  %s\n", "rung", "time_us", "GB/s",
                  "ceil%", "x_cpu", "x_rung1", "t/CUB", "result", "|error|", "status");
      for (const Impl& impl : impls) {
        if (impl.op != op) continue;
        const auto it = g_rows.find({op, n, impl.name});
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
  for (Op op : kOps) {
    const bool present =
        std::any_of(labs.begin(), labs.end(), [op](const Impl& i) { return i.op == op; });
    if (!present) continue;
    impls.push_back(probe_impl(op));
    impls.push_back(cub_impl(op));
    for (const Impl& lab : labs)
      if (lab.op == op) impls.push_back(lab);
    impls.push_back({op, "cpu", nullptr, nullptr, true, /*on_host=*/true});
  }

  for (Op op : kOps) {
    for (std::size_t n : sizes) {
      for (const Impl& impl : impls) {
        if (impl.op != op) continue;
        const std::string name =
            std::string(op_name(op)) + "/" + impl.name + "/" + std::to_string(n);
        auto* b = impl.on_host
                      ? benchmark::RegisterBenchmark(
                            name.c_str(), [op, n](benchmark::State& s) { bench_host(s, op, n); })
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
  benchmark::RunSpecifiedBenchmarks();
  print_tables(sizes, impls, gpu);
  benchmark::Shutdown();
  return 0;
}
