/// \file
/// \brief The ceiling probe: the fastest streaming read of a float array this course can write.
///
/// A reduction must read every input byte once, so no reduction can beat a kernel that only
/// reads. Benchmarks and the grader state bandwidth as a fraction of what this probe measures on
/// the same GPU in the same run, which makes one rubric fair on a T4 and on an H200.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

namespace reduce {

/// Queues a read of in[0..n) that keeps its loads alive by folding them into a value that is
/// written to \p sink only when it equals an impossible marker. 16-byte loads when \p in is
/// 16-byte aligned; any \p n. The grid is sized from the SM count and the kernel's occupancy.
void stream_read(const float* in, std::size_t n, float* sink, cudaStream_t stream);

/// Measures the probe: median GB/s of \p repetitions reads of \p n floats, each after an L2
/// flush, on a buffer it allocates (n = 2^28 is 1 GiB, well beyond any L2).
double measure_ceiling_gbps(std::size_t n = std::size_t{1} << 28, int repetitions = 30);

}  // namespace reduce
