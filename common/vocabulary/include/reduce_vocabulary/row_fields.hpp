/// \file
/// \brief The fields of a benchmark row that carry its verdict: what reduce_bench writes into
/// its JSON (Google Benchmark counters) and what reduce-grade reads, never a sentence.
///
/// Every row has kFailure. A graded row (a lab timed through its runner) also has kWrongResults,
/// kWarmupWrong and kClocksAgree, whether it passed or failed: a failed row keeps these four
/// counters in the JSON (Google Benchmark drops the others of a row skipped with an error). The
/// row's error message is for people; its verdict is these numbers.
#pragma once

namespace reduce::bench {

/// Why a row failed: the number in its counter kFailure.
enum class RowFailure : int {
  kNone = 0,            ///< measured; every result checked was right and the clocks agree
  kWrongResults = 1,    ///< calls returned wrong results (how many: kWrongResults)
  kClocksDisagree = 2,  ///< the runner's events saw far less time than the benchmark's clock
  kThrew = 3,           ///< the row stopped: the lab threw, its process died or hung, CUDA failed
  kUnavailable = 4,     ///< the row cannot run in this build (cub_fixed without the newest CCCL)
};

/// One more than the largest RowFailure: a kFailure at or above it is no verdict.
inline constexpr int kRowFailureEnd = 5;

/// Counter: the row's RowFailure, as a number.
inline constexpr const char* kFailure = "failure";
/// Counter: calls (graded rows) or timed runs (trusted rows) whose result was wrong.
inline constexpr const char* kWrongResults = "wrong_results";
/// Counter, graded rows: of kWrongResults, those in warm-up calls.
inline constexpr const char* kWarmupWrong = "warmup_wrong";
/// Counter, graded rows: 1 when the runner's CUDA events and the benchmark's clock agree, else 0.
inline constexpr const char* kClocksAgree = "clocks_agree";

/// Counter, graded rows: the samples' noise, relative and robust (the interquartile range of the
/// per-call times over 1.349, over their median: sampling_rule.hpp). Not a verdict: what a
/// fraction can be trusted to, written into the report beside it.
inline constexpr const char* kNoise = "noise";

/// Counter, graded rows: samples taken while the GPU slowed its clocks (a power or thermal limit:
/// NVML's clocks-event reasons), left out of the row's figure. Not a verdict.
inline constexpr const char* kThrottledSamples = "throttled_samples";
/// Counter, graded rows: 1 when too few samples ran at full clocks and the figure is made of
/// every sample, throttled ones included, so that it may be low for want of clocks, not code.
inline constexpr const char* kThrottledFigure = "throttled_figure";

/// Counter, graded rows: the median time of one call on the CUDA events of the process that ran
/// it, in microseconds. A lab's own is a check only (its process could forge it); a course
/// reference's, beside its time on the benchmark's clock, is the request's own cost.
inline constexpr const char* kEventUs = "runner_event_us";

/// reduce_bench's exit status when the machine has no CUDA device: nothing was measured.
inline constexpr int kNoGpuExitCode = 3;

/// The counters a failed row keeps in the JSON.
inline constexpr const char* kVerdictFields[] = {kFailure, kWrongResults, kWarmupWrong,
                                                 kClocksAgree};

}  // namespace reduce::bench
