/// \file
/// \brief How the benchmark samples, one loop per trust level: trusted code (CUB, the ceiling
/// probe, trusted labs) timed by CUDA events in this process, and a graded lab timed through its
/// runner by this process's clock, the runner's events a second clock that must agree.
#pragma once

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

/// One call's milliseconds for calls_per_request(), from \p one_call (a request of one call,
/// returning its host milliseconds): a lab's first call may pay for loading its kernels, and
/// three calls per request instead of thirteen would add the request's own cost to every call, so
/// a first call under 100 ms is timed again and the faster of the two counts.
template <class OneCall>
double one_call_ms(OneCall&& one_call) {
  const double first = one_call();
  return first < 100.0 ? std::min(first, one_call()) : first;
}

/// One graded request of `calls` calls, its inputs made anew before it and its results checked
/// after it, outside both clocks.
using GradedRequest = std::function<TimedRun(int calls)>;

/// A graded row's samples, per call: this process's clock and the runner's events.
struct GradedSamples {
  int calls = 1;                 ///< calls per request
  std::vector<double> host_ms;   ///< per sample, this process's clock over the calls
  std::vector<double> event_ms;  ///< per sample, the runner's CUDA events over the calls
};

/// The graded loop: one benchmark iteration holds every sample, one request of \p calls calls
/// each, until sampling_done() says the samples (this process's clock) are enough.
GradedSamples sample_graded(benchmark::State& state, const GradedRequest& request, int calls);

/// Where a graded row's wall time goes, as counters: setup_s (until the warm-ups are done),
/// allocate_s (the runner ready and the inputs at hand, \p allocated_s), fill_s (the first
/// regeneration, ending at \p filled_s), warmup_s (until \p warmed_s) and sampling_s.
void report_phases(benchmark::State& state, double allocated_s, double filled_s, double warmed_s,
                   double sampling_s);

/// The regeneration's cost as counters: per request (all its inputs, until the device is idle),
/// the GPU time of one input's pass, and the inputs made in all.
void report_regeneration(benchmark::State& state, const RegenerationCost& cost);

/// A graded row's verdict, after its row's median_us is set: its counters (runner_event_us,
/// noise and event_noise, calls_per_sample, samples, wrong_results, warmup_wrong, clocks_agree),
/// then the row passes or fails: wrong results first (\p wrong_message), then clocks that disagree.
void judge_graded(benchmark::State& state, Row& row, const GradedSamples& samples, double wrong,
                  double warmup_wrong, const std::string& wrong_message);

}  // namespace reduce::bench
