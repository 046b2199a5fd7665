/// \file
/// \brief When a graded row has sampled enough, decided by the samples' own noise (in the manner
/// of nvbench's stopping criteria), and which samples its figure is made of (none taken while the
/// GPU slowed its clocks): CUDA-free, so that the rules are tested on any machine.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace reduce::bench {

/// The bounds of a graded row's sampling.
struct SamplingRule {
  int min_samples = 5;          ///< never fewer (unless the lab is slow: see enough_seconds)
  double min_seconds = 0.1;     ///< with min_samples, enough for any row
  double enough_seconds = 1.0;  ///< a slow lab stops here after 3 samples
  /// A row whose median is known well enough stops here: at 2^28 floats a sample's noise was
  /// 0.02-1.8 % on the H200, mostly under 0.5 %, so six samples put the median's error near
  /// 0.1 %; a noisier row samples on (target_error).
  int quiet_samples = 6;
  /// The median is known well enough once its relative standard error, the samples' noise over
  /// the square root of their count, is at most this.
  double target_error = 0.005;
  int max_samples = 100;        ///< a noisy row samples on up to here...
  double noisy_seconds = 0.03;  ///< ...or until its samples have taken this long
};

/// The samples' noise, robust to a few outliers: their interquartile range over 1.349 (the
/// standard deviation of normal samples), relative to their median; 0 for fewer than 4 samples
/// or a median of 0.
inline double relative_noise(std::vector<double> v) {
  if (v.size() < 4) return 0.0;
  std::sort(v.begin(), v.end());
  const auto at = [&v](double q) {  // linear interpolation between the closest ranks
    const double pos = q * static_cast<double>(v.size() - 1);
    const auto lo = static_cast<std::size_t>(pos);
    const std::size_t hi = std::min(lo + 1, v.size() - 1);
    return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
  };
  const double median = at(0.5);
  return median > 0 ? (at(0.75) - at(0.25)) / 1.349 / median : 0.0;
}

/// The relative standard error of the samples' median: relative_noise() over the square root of
/// their count (the median's error is about 1.25 times that of the mean; the rule's target allows
/// for it).
inline double median_error(const std::vector<double>& v) {
  return v.empty() ? 0.0 : relative_noise(v) / std::sqrt(static_cast<double>(v.size()));
}

/// Whether a graded row with per-call \p samples, taken in \p seconds, stops sampling: a slow lab
/// after enough_seconds and 3 samples; any row after min_samples and min_seconds; after
/// quiet_samples once its median's error is within target_error; a noisy row at max_samples or
/// noisy_seconds, whichever comes first once it has quiet_samples.
inline bool sampling_done(const std::vector<double>& samples, double seconds,
                          const SamplingRule& rule = {}) {
  const auto k = static_cast<int>(samples.size());
  if (k >= 3 && seconds >= rule.enough_seconds) return true;
  if (k >= rule.min_samples && seconds >= rule.min_seconds) return true;
  if (k < rule.quiet_samples) return false;
  if (median_error(samples) <= rule.target_error) return true;
  return k >= rule.max_samples || seconds >= rule.noisy_seconds;
}

/// NVML's clocks-event reasons that hold a running kernel below the clocks it would run at
/// (nvml.h's nvmlClocksEventReason*): the software power cap (0x4), a hardware slowdown (0x8),
/// software and hardware thermal slowdown (0x20, 0x40) and the power brake (0x80). An idle GPU,
/// application clocks, sync boost and display clocks slow no kernel of the row.
inline constexpr std::uint64_t kSlowdownReasons = 0x4 | 0x8 | 0x20 | 0x40 | 0x80;

/// A graded row's samples, per call.
struct GradedSamples {
  int calls = 1;                 ///< calls per request
  std::vector<double> host_ms;   ///< the figure's samples: this process's clock over the calls
  std::vector<double> event_ms;  ///< the same samples on the runner's CUDA events
  int throttled = 0;             ///< samples taken while the GPU slowed its clocks
  std::uint64_t slowdown = 0;    ///< the kSlowdownReasons seen during them, or-ed
  /// Too few samples ran at full clocks: the figure is made of every sample, throttled included.
  bool throttled_figure = false;
};

/// Takes a graded row's samples one request at a time: a sample during which the GPU slowed its
/// clocks (a power or thermal limit, not the lab) is left out of the figure and counted, so that
/// a hot GPU does not make a lab slower than it is. Sampling stops by sampling_done() on the
/// samples at full clocks, over the time of every sample. Where the clocks stay slowed it stops
/// with fewer than 3 samples at full clocks once max_samples were throttled or enough_seconds have
/// passed (a row costs at most about that much more), its figure then made of every sample and
/// said to be so (GradedSamples::throttled_figure).
class GradedSampler {
 public:
  /// Requests of \p calls calls, stopped by \p rule.
  explicit GradedSampler(int calls, const SamplingRule& rule = {}) : rule_(rule) {
    samples_.calls = calls;
  }

  /// Adds one request: its milliseconds over all its calls on both clocks, and the clocks-event
  /// reasons read before and after it, or-ed (0 where they cannot be read). Returns whether
  /// sampling is done.
  bool add(double host_ms, double event_ms, std::uint64_t reasons) {
    seconds_ += host_ms * 1e-3;
    const int calls = samples_.calls;
    if ((reasons & kSlowdownReasons) != 0) {
      ++samples_.throttled;
      samples_.slowdown |= reasons & kSlowdownReasons;
      throttled_host_.push_back(host_ms / calls);
      throttled_event_.push_back(event_ms / calls);
    } else {
      samples_.host_ms.push_back(host_ms / calls);
      samples_.event_ms.push_back(event_ms / calls);
    }
    if (sampling_done(samples_.host_ms, seconds_, rule_)) return true;
    const bool out_of_time =
        samples_.throttled >= rule_.max_samples || seconds_ >= rule_.enough_seconds;
    if (samples_.host_ms.size() >= 3 || !out_of_time) return false;
    samples_.host_ms.insert(samples_.host_ms.end(), throttled_host_.begin(), throttled_host_.end());
    samples_.event_ms.insert(samples_.event_ms.end(), throttled_event_.begin(),
                             throttled_event_.end());
    samples_.throttled_figure = true;
    return true;
  }

  /// The samples taken so far.
  const GradedSamples& samples() const { return samples_; }

 private:
  SamplingRule rule_;
  GradedSamples samples_;
  std::vector<double> throttled_host_, throttled_event_;
  double seconds_ = 0;
};

}  // namespace reduce::bench
