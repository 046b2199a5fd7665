/// \file
/// \brief The ceiling probe: the fastest streaming read of a float array this course can write.
///
/// A reduction must read every input byte once, so no reduction can beat a kernel that only
/// reads. Benchmarks and the grader state bandwidth as a fraction of what this probe measures on
/// the same GPU in the same run, which makes one rubric fair on a T4 and on an H200.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <vector>

namespace reduce {

/// One read layout's speed in a probe's measurement.
struct ProbeTiming {
  const char* name;  ///< layout, e.g. "chunked x8 ldg"
  double gbps;       ///< median of a short run
};

/// The probe as measured on this GPU: the layout it kept and what every layout read. Made by
/// measure_ceiling(); a run keeps one (the benchmark's session) and reads through it, so that no
/// state of the probe outlives its owner or is shared between runs.
class CeilingProbe {
 public:
  /// Times each read layout (grid-stride or one contiguous share per block, 4 or 8 loads in
  /// flight, streaming or read-only loads) on a buffer of \p n floats it allocates, keeps the
  /// fastest, and measures its median GB/s over \p repetitions reads, each after an L2 flush.
  /// \p n = 0 picks ceiling_probe_size().
  static CeilingProbe measure(std::size_t n = 0, int repetitions = 30);

  /// Queues a read of in[0..n) with the layout kept, its loads kept alive by folding them into a
  /// value written to \p sink only when it equals an impossible marker. 16-byte loads when \p in
  /// is 16-byte aligned; any \p n. The grid is sized from the SM count and the kernel's occupancy.
  void read(const float* in, std::size_t n, float* sink, cudaStream_t stream) const;

  /// The name of the layout kept, e.g. "chunked x8 ldg".
  const char* kernel() const;
  /// Every layout's rate in the measurement, the kept one among them.
  const std::vector<ProbeTiming>& timings() const { return timings_; }
  /// Floats the measurement read.
  std::size_t elements() const { return elements_; }
  /// The kept layout's median rate, in GB/s.
  double gbps() const { return gbps_; }

 private:
  int layout_ = 0;
  std::vector<ProbeTiming> timings_;
  std::size_t elements_ = 0;
  double gbps_ = 0;
};

/// The size the probe reads by default: 2^30 floats (4 GiB) where three times that is free,
/// else 2^28 (1 GiB); both far beyond any L2.
std::size_t ceiling_probe_size();

}  // namespace reduce
