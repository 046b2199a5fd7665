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

/// Queues a read of in[0..n) that keeps its loads alive by folding them into a value that is
/// written to \p sink only when it equals an impossible marker. 16-byte loads when \p in is
/// 16-byte aligned; any \p n. The grid is sized from the SM count and the kernel's occupancy.
void stream_read(const float* in, std::size_t n, float* sink, cudaStream_t stream);

/// Name of the read kernel stream_read() uses (the fastest of several layouts, once
/// measure_ceiling_gbps() has run).
const char* stream_read_variant();

/// One read layout's speed in the last measure_ceiling_gbps() call.
struct ProbeTiming {
  const char* name;  ///< layout, e.g. "chunked x8 ldg"
  double gbps;       ///< median of a short run
};

/// What the last measure_ceiling_gbps() measured for each layout.
std::vector<ProbeTiming> probe_timings();

/// Measures the probe: times each read layout (grid-stride or one contiguous share per block,
/// 4 or 8 loads in flight, streaming or read-only loads), keeps the fastest, and returns its
/// median GB/s over \p repetitions reads of \p n floats, each after an L2 flush, on a buffer it
/// allocates. \p n = 0 picks ceiling_probe_size().
double measure_ceiling_gbps(std::size_t n = 0, int repetitions = 30);

/// The size the probe reads by default: 2^30 floats (4 GiB) where three times that is free,
/// else 2^28 (1 GiB); both far beyond any L2.
std::size_t ceiling_probe_size();

}  // namespace reduce
