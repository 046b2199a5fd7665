// The two sampling loops (trusted code, a graded lab) and what the graded one needs: inputs made
// anew before every request, the calls per request, and the verdict of its two clocks.
#include "measurement.cuh"

#include "text.hpp"

#include <reduce/cuda_check.cuh>
#include <reduce/generators.hpp>
#include <reduce/l2_flush.cuh>

#include <nvtx3/nvToolsExt.h>

#include <algorithm>
#include <cmath>

namespace reduce::bench {
namespace {

// Sampling of a graded lab: a request's calls fill about kRequestMs (its own cost, a socket
// round trip and a copy back, is then a few percent of it); samples stop by sampling_done() (a
// fast lab's request is up to 16 calls on distinct inputs, so 6 samples are 96 calls; each
// sample costs about as much again in inputs made anew). A short row (a launch-bound size: six
// samples of 16 calls at 2^12 floats are 2 ms of timing, where one stray interrupt moves the
// median by 10 %) samples on while its median's error is above the rule's target.
constexpr double kRequestMs = 10.0;

/// One call's milliseconds for calls_per_request(), from \p one_call (a request of one call,
/// returning its host milliseconds): a lab's first call may pay for loading its kernels or
/// mapping its buffers, and three calls per request instead of thirteen would add the request's
/// own cost to every call, so a first call under 100 ms is timed again and the faster counts.
template <class OneCall>
double one_call_ms(OneCall&& one_call) {
  const double first = one_call();
  return first < 100.0 ? std::min(first, one_call()) : first;
}

/// The graded loop: one benchmark iteration holds every sample, one request of \p calls calls
/// each, \p clocks read around it, until \p GradedSampler says the samples are enough.
GradedSamples sample_graded(benchmark::State& state, const GradedRequest& request, int calls,
                            const ClockWatch& clocks) {
  GradedSampler sampler(calls);
  for (auto _ : state) {
    for (;;) {
      const std::uint64_t before = clocks.reasons();
      const TimedRun t = request(calls);
      if (sampler.add(t.host_ms, t.event_ms, before | clocks.reasons())) break;
    }
    state.SetIterationTime(median(sampler.samples().host_ms) * 1e-3);
  }
  return sampler.samples();
}

}  // namespace

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

LabCallRange::LabCallRange() {
  nvtxRangePushA("lab-call");
}

LabCallRange::~LabCallRange() {
  nvtxRangePop();
}

std::vector<double> sample_trusted(benchmark::State& state, cudaStream_t stream,
                                   const TrustedStep& prepare, const TrustedStep& call,
                                   const TrustedStep& check) {
  reduce::L2Flush l2;
  reduce::EventTimer timer;
  call(0);  // warm-up
  REDUCE_CUDA_CHECK(cudaStreamSynchronize(stream));
  std::vector<double> samples;
  std::size_t k = 0;
  for (auto _ : state) {
    prepare(k);
    l2.flush(stream);
    timer.start(stream);
    call(k);
    timer.stop(stream);
    const double ms = timer.elapsed_ms();
    state.SetIterationTime(ms * 1e-3);
    samples.push_back(ms);
    check(k++);
  }
  return samples;
}

void RegenerationCost::add(std::chrono::steady_clock::time_point started, double gpu_ms,
                           int count) {
  wall_ms.push_back(
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started)
          .count());
  gpu_ms_per_input.push_back(gpu_ms / std::max(count, 1));
  inputs += count;
}

RegeneratedInputs::RegeneratedInputs(const Operation& op, std::size_t n, std::vector<float*> arrays,
                                     reduce::KeyedStream& rng)
    : op_(op),
      n_(n),
      arrays_(std::move(arrays)),
      rng_(rng),
      recipes_(arrays_.size()),
      expected_(arrays_.size()),
      tallies_(std::max<std::size_t>(arrays_.size(), 1)) {}

void RegeneratedInputs::regenerate(int count) {
  const auto started = std::chrono::steady_clock::now();
  tallies_.fill_bytes(0);
  timer_.start(nullptr);
  for (int b = 0; b < count; ++b) {
    recipes_[b] = reduce::timed::draw_recipe(op_.answer(), n_, rng_);
    reduce::timed::regenerate(arrays_[b], recipes_[b], tallies_.data() + b, nullptr);
  }
  timer_.stop(nullptr);
  const std::vector<reduce::timed::Tally> tallies = tallies_.to_host();
  for (int b = 0; b < count; ++b) {
    // Lab 18's rounding trap depends on the integers' sum: written once it is known.
    for (const reduce::timed::Write& w :
         reduce::timed::finishing_writes(op_.answer(), recipes_[b], tallies[b]))
      write_at(arrays_[b], w.at, w.value);
    expected_[b] = reduce::timed::expected_result(op_.answer(), recipes_[b], tallies[b]);
  }
  REDUCE_CUDA_CHECK(cudaDeviceSynchronize());
  cost_.add(started, timer_.elapsed_ms(), count);
}

int timed_input_count(const Runner& runner, std::size_t n) {
  std::size_t free = 0, total = 0;
  REDUCE_CUDA_CHECK(cudaMemGetInfo(&free, &total));
  free += runner.timed_input_bytes();
  const std::size_t bytes = std::max<std::size_t>(n, 1) * sizeof(float);
  return static_cast<int>(std::clamp<std::size_t>(free / 2 / bytes, 1, kMaxRunnerInputs));
}

int calls_per_request(double one_ms, int count) {
  return static_cast<int>(
      std::clamp(std::ceil(kRequestMs / std::max(one_ms, 1e-3)), 1.0, static_cast<double>(count)));
}

GradedMeasurement measure_graded(benchmark::State& state, const GradedRow& row,
                                 const ClockWatch& clocks) {
  const double one_ms = one_call_ms([&] { return row.request(1).host_ms; });
  const double filled_s = row.allocated_s + row.cost->wall_ms.front() * 1e-3;
  const int calls = calls_per_request(one_ms, row.inputs);
  if (calls > 1) row.request(calls);
  GradedMeasurement m;
  m.warmup_wrong = row.wrong();
  const double warmed_s = seconds_since(row.started);
  const auto sampling = std::chrono::steady_clock::now();
  m.samples = sample_graded(state, row.request, calls, clocks);
  state.counters["setup_s"] = warmed_s;
  state.counters["allocate_s"] = row.allocated_s;  // runner ready, inputs allocated and mapped
  state.counters["fill_s"] = filled_s - row.allocated_s;
  state.counters["warmup_s"] = warmed_s - filled_s;
  state.counters["sampling_s"] = seconds_since(sampling);
  const RegenerationCost& cost = *row.cost;
  state.counters["regenerate_ms"] = median(cost.wall_ms);
  state.counters["regenerate_gpu_ms_per_input"] = median(cost.gpu_ms_per_input);
  state.counters["inputs_regenerated"] = static_cast<double>(cost.inputs);
  return m;
}

void judge_graded(benchmark::State& state, Row& row, const GradedSamples& samples, double wrong,
                  double warmup_wrong, const std::string& wrong_message) {
  const double event_us = median(samples.event_ms) * 1e3;
  // The runner's events say the calls took far less than this process saw: they were
  // rewritten, or the work ran outside the stream they time.
  const bool clocks_agree = !(event_us < 0.8 * row.median_us - 20.0);
  state.counters[kEventUs] = event_us;
  // The samples' own noise (relative, robust: sampling_rule.hpp), on both clocks.
  state.counters[kNoise] = relative_noise(samples.host_ms);
  state.counters["event_noise"] = relative_noise(samples.event_ms);
  state.counters["calls_per_sample"] = samples.calls;
  state.counters["samples"] = static_cast<double>(samples.host_ms.size());
  // Samples the GPU's own clocks slowed (a power or thermal limit): left out of the figure,
  // unless too few ran at full clocks; the grader says so beside the fraction.
  state.counters[kThrottledSamples] = samples.throttled;
  state.counters[kThrottledFigure] = samples.throttled_figure ? 1 : 0;
  state.counters["slowdown_reasons"] = static_cast<double>(samples.slowdown);
  state.counters[kWrongResults] = wrong;  // the warm-ups' included
  state.counters[kWarmupWrong] = warmup_wrong;
  state.counters[kClocksAgree] = clocks_agree ? 1 : 0;
  if (wrong > 0)
    fail_row(state, row, RowFailure::kWrongResults, wrong_message);
  else if (!clocks_agree)
    fail_row(state, row, RowFailure::kClocksDisagree,
             "clocks disagree: the lab's process reports " + fixed(event_us, 1) +
                 " us per call, the grader's clock " + fixed(row.median_us, 1) + " us");
  else
    pass_row(state, row);
}

}  // namespace reduce::bench
