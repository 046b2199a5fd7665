/// \file
/// \brief When a graded row has sampled enough, decided by the samples' own noise (in the manner
/// of nvbench's stopping criteria): CUDA-free, so that the rule is tested on any machine.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

namespace reduce::bench {

/// The bounds of a graded row's sampling.
struct SamplingRule {
  int min_samples = 5;          ///< never fewer (unless the lab is slow: see enough_seconds)
  double min_seconds = 0.25;    ///< with min_samples, enough for any row
  double enough_seconds = 1.0;  ///< a slow lab stops here after 3 samples
  int quiet_samples = 10;       ///< a row whose median is known well enough stops here
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

}  // namespace reduce::bench
