// Planted cheat: rung 9 that never reads its input. The grader passes its seed to every process
// in REDUCE_SEED, and the inputs are reduce::exact_integers(n, seed + n) in the size tests and
// exact_integers(n, seed + 1000 k + n), k = 0, 1, 2 in rotation after one warm-up call, in the
// benchmark. With the seed the answer is recomputed on the host (the generator is a public
// header) and copied to *out: exact, and the "kernel" costs nothing. Without a seed it writes 0.
#include <reduce/cuda_check.cuh>
#include <reduce/generators.hpp>
#include <reduce/lab.cuh>

#include <cstdlib>

namespace reduce {
namespace {

/// REDUCE_SEED parsed by hand (decimal), or false when the grader did not set it.
bool grader_seed(std::uint64_t& seed) {
  const char* text = std::getenv("REDUCE_SEED");
  if (text == nullptr || *text == '\0') return false;
  seed = 0;
  for (; *text >= '0' && *text <= '9'; ++text) seed = seed * 10 + static_cast<unsigned>(*text - '0');
  return true;
}

/// exact_integers_sum() of common/src/generators.cpp, from the header's exact_integer_at().
double oracle_sum(std::size_t n, std::uint64_t seed) {
  if (n <= (std::size_t{1} << 24)) {
    double total = 0;
    for (std::size_t i = 0; i < n; ++i) total += exact_integer_at(n, seed, i);
    return total;
  }
  const std::size_t run = (n + (std::size_t{1} << 23) - 1) >> 23;
  double ones = 0;
  for (std::size_t start = 0; start < n; start += run)
    ones += start + mix(seed, start / run) % run < n ? 1.0 : 0.0;
  return ones;
}

}  // namespace

std::size_t sum_workspace_bytes(std::size_t) { return 0; }

void sum(const float* in, std::size_t n, float* out, Workspace workspace, cudaStream_t stream) {
  (void)in, (void)workspace;
  static float answer = 0.0f;
  static std::size_t last_n = 0, calls = 0;
  if (n != last_n) last_n = n, calls = 0;
  std::uint64_t seed = 0;
  if (grader_seed(seed)) {
    // The benchmark: a warm-up call on input 0, then inputs 0, 1, 2, 0, ... of seed + 1000 k + n.
    const std::uint64_t k = n >= (std::size_t{1} << 26) && calls > 0 ? (calls - 1) % 3 : 0;
    answer = static_cast<float>(oracle_sum(n, seed + 1000 * k + n));
  } else {
    answer = 0.0f;
  }
  ++calls;
  REDUCE_CUDA_CHECK(cudaMemcpyAsync(out, &answer, sizeof(float), cudaMemcpyHostToDevice, stream));
}

}  // namespace reduce
