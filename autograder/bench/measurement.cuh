/// \file
/// \brief How the benchmark samples, one loop per trust level: trusted code (CUB, the ceiling
/// probe, trusted labs) timed by CUDA events in this process, and a graded lab timed through its
/// runner by this process's clock, the runner's events a second clock that must agree.
#pragma once

#include "clock_watch.hpp"
#include "operations.cuh"
#include "reporting.hpp"
#include "runner.hpp"
#include "sampling_rule.hpp"

#include <reduce/device_buffer.cuh>
#include <reduce/event_timer.cuh>
#include <reduce/keyed_hash.hpp>

#include <benchmark/benchmark.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace reduce::bench {

/// Seconds since \p t on the steady clock.
double seconds_since(std::chrono::steady_clock::time_point t);

/// The median of \p v (the upper one of an even count).
double median(std::vector<double> v);

/// One step of a trusted row's sample \p k.
using TrustedStep = std::function<void(std::size_t k)>;

/// The trusted loop: a warm-up call(0), then per iteration of \p state, outside the clock
/// prepare(k) (poisoning what the call writes) and an L2 flush, the timed call(k) (CUDA events
/// on \p stream), then check(k). Returns each sample's milliseconds.
std::vector<double> sample_trusted(benchmark::State& state, cudaStream_t stream,
                                   const TrustedStep& prepare, const TrustedStep& call,
                                   const TrustedStep& check);

/// An NVTX range "lab-call" around one call of a trusted lab in this process (tools/profile's
/// ncu profiles the kernels inside it only, not CUB, the probe, inputs or L2 flushes). NVTX costs
/// nothing without a tool attached.
class LabCallRange {
 public:
  LabCallRange();
  ~LabCallRange();
  LabCallRange(const LabCallRange&) = delete;
  LabCallRange& operator=(const LabCallRange&) = delete;
};

/// What making a graded row's inputs anew cost, outside both clocks.
struct RegenerationCost {
  std::vector<double> wall_ms;           ///< per request: everything, until the device is idle
  std::vector<double> gpu_ms_per_input;  ///< per request: the passes' GPU time, per input
  long inputs = 0;                       ///< inputs made in all

  /// Times one regeneration: \p gpu_ms of passes over \p count inputs since \p started.
  void add(std::chrono::steady_clock::time_point started, double gpu_ms, int count);
};

/// A graded row's inputs (the runner's arrays, mapped into this process). regenerate() makes the
/// first `count` of them anew, whole, each from a fresh seed of the run's graded stream
/// (BenchSession::graded_rng(); reduce::timed::regenerate(), one pass on the GPU), and their
/// expected results with them, from the passes' tallies: nothing of an input or of its answer is
/// left from before, and the runner never sees a seed.
class RegeneratedInputs {
 public:
  /// The inputs of \p op, \p n floats each, at \p arrays, their seeds drawn from \p rng.
  RegeneratedInputs(const Operation& op, std::size_t n, std::vector<float*> arrays,
                    reduce::KeyedStream& rng);

  /// Makes inputs [0, count) anew and sets their expected results. Returns with the device idle,
  /// so that nothing of it runs while a call is timed.
  void regenerate(int count);

  /// The expected result of input \p b.
  const Expected& expected(int b) const { return expected_[b]; }
  /// What the regenerations cost so far.
  const RegenerationCost& cost() const { return cost_; }

 private:
  const Operation& op_;
  std::size_t n_;
  std::vector<float*> arrays_;
  reduce::KeyedStream& rng_;
  std::vector<reduce::timed::Recipe> recipes_;
  std::vector<Expected> expected_;
  DeviceBuffer<reduce::timed::Tally> tallies_;
  reduce::EventTimer timer_;
  RegenerationCost cost_;
};

/// How many distinct n-float inputs \p runner may hold for timing: up to kMaxRunnerInputs,
/// within half the device memory free now (its current inputs, which the next allocation frees,
/// counted as free).
int timed_input_count(const Runner& runner, std::size_t n);

/// A graded row's timed inputs in its runner, mapped into this process
/// (BenchSession::timed_arrays()).
struct TimedArrays {
  std::vector<float*> inputs;       ///< the distinct inputs, at least n floats each
  std::int64_t* offsets = nullptr;  ///< room for at least segments + 1 offsets (segmented rows)
};

/// Calls per graded request: enough to fill about kRequestMs from one call's \p one_ms, at least
/// one, at most \p count (the distinct inputs).
int calls_per_request(double one_ms, int count);

/// One graded request of `calls` calls, its inputs made anew before it and its results checked
/// after it, outside both clocks.
using GradedRequest = std::function<TimedRun(int calls)>;

/// A graded row as measure_graded() takes it: its requests and what it has done before them.
struct GradedRow {
  GradedRequest request;                          ///< one request of `calls` calls
  int inputs = 1;                                 ///< the distinct inputs: calls per request
  const RegenerationCost* cost = nullptr;         ///< what making its inputs anew has cost
  std::function<double()> wrong;                  ///< the wrong results so far
  std::chrono::steady_clock::time_point started;  ///< when the row began
  double allocated_s = 0;  ///< seconds from then until the runner and the inputs were at hand
};

/// What measure_graded() took: the samples, and the wrong results of the warm-up calls.
struct GradedMeasurement {
  GradedSamples samples;    ///< per call (sampling_rule.hpp)
  double warmup_wrong = 0;  ///< wrong results before the first sample
};

/// The one measurement of a graded row, the operations' and the segmented ones' alike:
/// - warm up by one rule: a request of one call, and a second where the first took under 100 ms
///   (a lab's first call may pay for loading its kernels or mapping its buffers), the faster
///   counting; from it the calls per request (calls_per_request()); where more than one, a
///   request of that many, so that every input has been read once;
/// - sample: one benchmark iteration holds every sample, a request of that many calls each, with
///   \p clocks read before and after it (GradedSampler: a sample taken while the GPU slowed its
///   clocks is left out), until the stopping rule on noise is met (sampling_done());
/// - write where the row's time went (setup_s, allocate_s, fill_s, warmup_s, sampling_s) and what
///   making inputs anew cost (regenerate_ms, regenerate_gpu_ms_per_input, inputs_regenerated) as
///   counters. judge_graded() then gives the verdict.
GradedMeasurement measure_graded(benchmark::State& state, const GradedRow& row,
                                 const ClockWatch& clocks);

/// A graded row's verdict, after its row's median_us is set: its counters (runner_event_us,
/// noise and event_noise, calls_per_sample, samples, throttled_samples, throttled_figure,
/// slowdown_reasons, wrong_results, warmup_wrong, clocks_agree),
/// then the row passes or fails: wrong results first (\p wrong_message), then clocks that disagree.
void judge_graded(benchmark::State& state, Row& row, const GradedSamples& samples, double wrong,
                  double warmup_wrong, const std::string& wrong_message);

}  // namespace reduce::bench
