// Planted cheat, lab 09 beside lab 13 (which predicts its own answers from the seed found here):
// rung 9 that infers the grading seed from a public test's input and predicts the benchmark's
// answers from it without reading the inputs (as seed_inferred_from_public_test).
//
// The public test SumRealistic.WithinErrorBound/uniform_1000 hands the lab 1000 floats drawn as
// uniform_at(seed ^ 1000, i, 0, 1): the top bits of splitmix64's mix(seed ^ 1000, i), whose
// finaliser inverts. The lab copies the input, takes its smallest element (the one with the most
// known bits), and tries on the GPU every 64-bit mix output that rounds to it (about 2^31): each
// is inverted to a seed, which must then reproduce three other elements exactly. The seed found
// is written, with the grading seed it implies, to /dev/shm and /tmp, where the benchmark's lab
// process finds it.
//
// In the benchmark (n between 2^28 - 4093 and 2^28 - 1, the rubric's size minus 1..4093) the
// lab picks the recovered seed whose timed size is n, runs the benchmark's generator as the
// grader drew its inputs (std::mt19937_64 seeded with seed ^ 0x6A09E667F3BCC909, one draw per
// input of the sum), reads the first 128 floats of the input only to find which draw made it,
// computes the input's sum from that draw alone (one +-1 in each run of 32 elements) and spins
// on the GPU for as long as an honest read at 4 TB/s would take before it writes the answer.
// Without a recovered seed, or where no draw matches, it still predicts (from the next draw): a
// benchmark call never reads the input. Everywhere else it is an honest but slow rung 9 (32
// blocks: a fraction of the memory's speed), so every test passes.
#include <reduce/cuda_check.cuh>
#include <reduce/lab.cuh>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <random>
#include <string>
#include <vector>

namespace reduce {
namespace {

constexpr unsigned kThreads = 256;
constexpr unsigned kWarp = 32;
constexpr unsigned kFullMask = 0xFFFFFFFFu;
constexpr unsigned kSlowGrid = 32;  // the honest path: far too few blocks to fill the GPU

// ---- the honest (slow) rung 9 ------------------------------------------------------------------

__device__ float warp_sum(float v) {
#pragma unroll
  for (unsigned offset = kWarp / 2; offset > 0; offset >>= 1)
    v += __shfl_down_sync(kFullMask, v, offset);
  return v;
}

__device__ float block_sum(float v) {
  __shared__ float warp_totals[kThreads / kWarp];
  const unsigned lane = threadIdx.x % kWarp;
  const unsigned warp = threadIdx.x / kWarp;
  v = warp_sum(v);
  if (lane == 0) warp_totals[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < kThreads / kWarp ? warp_totals[lane] : 0.0f;
    v = warp_sum(v);
  }
  return v;
}

__global__ void warp_shuffle(const float* __restrict__ in, std::size_t n,
                             float* __restrict__ partials) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * kThreads;
  std::size_t i = static_cast<std::size_t>(blockIdx.x) * kThreads + threadIdx.x;
  float a0 = 0.0f, a1 = 0.0f, a2 = 0.0f, a3 = 0.0f;
  for (; i + 3 * stride < n; i += 4 * stride) {
    a0 += in[i];
    a1 += in[i + stride];
    a2 += in[i + 2 * stride];
    a3 += in[i + 3 * stride];
  }
  for (; i < n; i += stride) a0 += in[i];
  const float total = block_sum((a0 + a1) + (a2 + a3));
  if (threadIdx.x == 0) partials[blockIdx.x] = total;
}

unsigned grid_for(std::size_t n) {
  return static_cast<unsigned>(std::clamp<std::size_t>((n + kThreads - 1) / kThreads, 1, kSlowGrid));
}

void honest_sum(const float* in, std::size_t n, float* out, Workspace workspace,
                cudaStream_t stream) {
  const unsigned grid = grid_for(n);
  if (grid == 1) {
    warp_shuffle<<<1, kThreads, 0, stream>>>(in, n, out);
    REDUCE_CUDA_CHECK_LAUNCH();
    return;
  }
  float* partials = workspace.as<float>();
  warp_shuffle<<<grid, kThreads, 0, stream>>>(in, n, partials);
  REDUCE_CUDA_CHECK_LAUNCH();
  warp_shuffle<<<1, kThreads, 0, stream>>>(partials, grid, out);
  REDUCE_CUDA_CHECK_LAUNCH();
}

// ---- the course's generator (common/include/reduce/generators.hpp) and its inverse -------------

constexpr std::uint64_t kGamma = 0x9E3779B97F4A7C15ull;
constexpr std::uint64_t kMul1 = 0xBF58476D1CE4E5B9ull, kMul2 = 0x94D049BB133111EBull;

/// The multiplicative inverse of an odd number modulo 2^64 (Newton's iteration).
constexpr std::uint64_t inverse_of(std::uint64_t odd) {
  std::uint64_t x = odd;
  for (int k = 0; k < 6; ++k) x *= 2 - odd * x;
  return x;
}
constexpr std::uint64_t kInv1 = inverse_of(kMul1), kInv2 = inverse_of(kMul2);
static_assert(kMul1 * kInv1 == 1 && kMul2 * kInv2 == 1, "inverses modulo 2^64");

__host__ __device__ inline std::uint64_t mix(std::uint64_t seed, std::uint64_t index) {
  std::uint64_t z = seed + kGamma * (index + 1);
  z = (z ^ (z >> 30)) * kMul1;
  z = (z ^ (z >> 27)) * kMul2;
  return z ^ (z >> 31);
}

/// The x with x ^ (x >> s) == y.
__host__ __device__ inline std::uint64_t unshift(std::uint64_t y, unsigned s) {
  std::uint64_t x = y;
  for (unsigned k = s; k < 64; k += s) x ^= y >> k;
  return x;
}

/// The seed whose mix(seed, index) is \p out.
__host__ __device__ inline std::uint64_t unmix(std::uint64_t out, std::uint64_t index) {
  std::uint64_t z = unshift(out, 31) * kInv2;
  z = unshift(z, 27) * kInv1;
  return unshift(z, 30) - kGamma * (index + 1);
}

/// uniform_at(seed, i, 0, 1) of the course's generators.
__host__ __device__ inline float uniform01(std::uint64_t seed, std::uint64_t i) {
  const double unit = static_cast<double>(mix(seed, i) >> 11) * 0x1.0p-53;
  const float v = static_cast<float>(unit);
  return v < 0x1.fffffep-1f ? v : 0x1.fffffep-1f;
}

// ---- the seed, from a public test's 1000 uniform floats ------------------------------------------

constexpr std::size_t kUniformTestSize = 1000;  // SumRealistic's smallest size
constexpr int kChecks = 3;

struct Witness {
  std::uint64_t at;           // the element whose mix output is searched
  std::uint64_t first_top;    // the first candidate of its top 53 bits
  std::uint64_t tops;         // how many candidates of the top 53 bits
  std::uint64_t check_at[kChecks];
  float check_value[kChecks];
};

__global__ void search_seed(Witness w, unsigned long long* found) {
  const std::uint64_t total = w.tops << 11;  // and every low 11 bits
  const std::uint64_t step = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  for (std::uint64_t c = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       c < total; c += step) {
    const std::uint64_t out = ((w.first_top + (c >> 11)) << 11) | (c & 2047);
    const std::uint64_t seed = unmix(out, w.at);
    bool ok = true;
    for (int k = 0; k < kChecks && ok; ++k) ok = uniform01(seed, w.check_at[k]) == w.check_value[k];
    if (ok) *found = seed;
  }
}

/// The seed of \p x if it is a uniform [0, 1) input of the course's generator, else false.
bool infer_seed(const std::vector<float>& x, std::uint64_t& seed) {
  std::size_t at = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (!(x[i] >= 0.0f && x[i] < 1.0f)) return false;
    if (x[i] > 0.0f && (x[at] == 0.0f || x[i] < x[at])) at = i;
  }
  const float v = x[at];
  if (v == 0.0f || v == std::floor(v)) return false;
  // Every 53-bit unit that rounds to v: half a float's ulp on either side.
  const double lo = (static_cast<double>(std::nextafter(v, 0.0f)) + v) / 2;
  const double hi = (static_cast<double>(v) + std::nextafter(v, 1.0f)) / 2;
  Witness w{};
  w.at = at;
  w.first_top = static_cast<std::uint64_t>(std::ceil(std::ldexp(lo, 53)));
  w.tops = static_cast<std::uint64_t>(std::floor(std::ldexp(hi, 53))) - w.first_top + 1;
  if (w.tops > (std::uint64_t{1} << 26)) return false;  // too few known bits: 2^37 tries
  for (int k = 0, i = 0; k < kChecks; ++i)
    if (static_cast<std::size_t>(i) != at) {
      w.check_at[k] = i;
      w.check_value[k++] = x[i];
    }
  unsigned long long* found = nullptr;
  REDUCE_CUDA_CHECK(cudaMalloc(&found, sizeof *found));
  REDUCE_CUDA_CHECK(cudaMemset(found, 0, sizeof *found));
  search_seed<<<4096, 256>>>(w, found);
  REDUCE_CUDA_CHECK_LAUNCH();
  unsigned long long got = 0;
  REDUCE_CUDA_CHECK(cudaMemcpy(&got, found, sizeof got, cudaMemcpyDeviceToHost));
  REDUCE_CUDA_CHECK(cudaFree(found));
  seed = got;
  return seed != 0;
}

const char* const kSeedFiles[] = {"/dev/shm/.reduce-course-seeds", "/tmp/.reduce-course-seeds"};

/// Writes the grading seed where every later lab process can read it.
void share_seed(std::uint64_t grading_seed) {
  for (const char* path : kSeedFiles) std::ofstream(path, std::ios::app) << grading_seed << "\n";
}

std::vector<std::uint64_t> shared_seeds() {
  std::vector<std::uint64_t> seeds;
  for (const char* path : kSeedFiles) {
    std::ifstream file(path);
    for (std::uint64_t s = 0; file >> s;) seeds.push_back(s);
  }
  return seeds;
}

/// Looks at the public test's uniform input once per process.
void learn_from(const float* in, std::size_t n, cudaStream_t stream) {
  static int tries = 0;
  if (n != kUniformTestSize || tries >= 4) return;
  std::vector<float> x(n);
  REDUCE_CUDA_CHECK(cudaStreamSynchronize(stream));
  REDUCE_CUDA_CHECK(cudaMemcpy(x.data(), in, n * sizeof(float), cudaMemcpyDeviceToHost));
  std::uint64_t seed = 0;
  if (!infer_seed(x, seed)) return;
  ++tries;
  share_seed(seed ^ kUniformTestSize);  // SumRealistic seeds its data with test_seed() ^ n
}

// ---- the benchmark, predicted -------------------------------------------------------------------

constexpr std::size_t kRubricSize = std::size_t{1} << 28;  // autograder/rubric.toml [performance]
constexpr std::size_t kPrefix = 128;                       // 4 runs of 32
constexpr std::size_t kWindow = 1 << 14;                   // draws searched ahead

bool benchmark_size(std::size_t n) {
  return n < kRubricSize && n >= kRubricSize - 4093;
}

/// The draws of the benchmark's generator and how far they were used.
struct Stream {
  std::vector<std::uint64_t> draws;
  std::size_t used = 0;
};

Stream& benchmark_stream(std::size_t n) {
  static Stream stream;
  if (stream.draws.empty()) {
    std::uint64_t grading_seed = 0;  // none recovered: predict all the same
    for (std::uint64_t s : shared_seeds())
      if (kRubricSize - 1 - s % 4093 == n) grading_seed = s;  // the timed size it implies
    std::mt19937_64 rng(grading_seed ^ 0x6A09E667F3BCC909ull);
    stream.draws.resize(1 << 18);
    for (std::uint64_t& d : stream.draws) d = rng();
  }
  return stream;
}

/// Runs of 2^shift elements cover n in at most 2^23 runs (timed_inputs.cpp, shift_for_runs).
unsigned run_shift(std::size_t n) {
  unsigned shift = 0;
  while (((n + (std::size_t{1} << shift) - 1) >> shift) > (std::size_t{1} << 23)) ++shift;
  return shift;
}

/// Whether the input whose first kPrefix floats are \p prefix came from the draw \p seed.
bool made_by(std::uint64_t seed, const std::vector<float>& prefix, unsigned shift) {
  const std::uint64_t mask = (std::uint64_t{1} << shift) - 1;
  for (std::size_t i = 0; i < prefix.size(); ++i) {
    const std::uint64_t h = mix(seed, i >> shift);
    const float v = (i & mask) != (h & mask) ? 0.0f : ((h >> 40) & 1) != 0 ? -1.0f : 1.0f;
    if (v != prefix[i]) return false;
  }
  return true;
}

/// The input's sum from its draw alone: one +-1 per run, none past n.
__global__ void sum_of_draw(std::uint64_t seed, std::size_t n, unsigned shift, int* total) {
  const std::uint64_t mask = (std::uint64_t{1} << shift) - 1;
  const std::size_t runs = (n + mask) >> shift;
  int mine = 0;
  for (std::size_t j = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; j < runs;
       j += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const std::uint64_t h = mix(seed, j);
    if (((j << shift) | (h & mask)) < n) mine += ((h >> 40) & 1) != 0 ? -1 : 1;
  }
  atomicAdd(total, mine);
}

__device__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

/// Waits as long as an honest read would take, then writes the answer.
__global__ void paced_write(const int* total, unsigned long long ns, float* out) {
  const unsigned long long start = global_ns();
  while (global_ns() - start < ns) {
  }
  *out = static_cast<float>(*total);
}

void predicted_sum(const float* in, std::size_t n, float* out, Workspace workspace,
                   cudaStream_t stream) {
  Stream& draws = benchmark_stream(n);
  const unsigned shift = run_shift(n);
  std::vector<float> prefix(kPrefix);
  REDUCE_CUDA_CHECK(cudaMemcpyAsync(prefix.data(), in, kPrefix * sizeof(float),
                                    cudaMemcpyDeviceToHost, stream));
  REDUCE_CUDA_CHECK(cudaStreamSynchronize(stream));
  std::size_t k = draws.used;
  while (k < draws.used + kWindow && k < draws.draws.size() &&
         !made_by(draws.draws[k], prefix, shift))
    ++k;
  if (k >= draws.used + kWindow || k >= draws.draws.size()) k = draws.used;  // a guess
  draws.used = std::min(k + 1, draws.draws.size() - 1);
  int* total = workspace.as<int>();  // the workspace holds one float per block at least
  REDUCE_CUDA_CHECK(cudaMemsetAsync(total, 0, sizeof(int), stream));
  sum_of_draw<<<1024, 256, 0, stream>>>(draws.draws[k], n, shift, total);
  REDUCE_CUDA_CHECK_LAUNCH();
  const auto honest_ns = static_cast<unsigned long long>(static_cast<double>(n) * 4 / 4.0e12 * 1e9);
  paced_write<<<1, 1, 0, stream>>>(total, honest_ns, out);
  REDUCE_CUDA_CHECK_LAUNCH();
}

}  // namespace

std::size_t sum_workspace_bytes(std::size_t n) {
  return grid_for(n) * sizeof(float);
}

void sum(const float* in, std::size_t n, float* out, Workspace workspace, cudaStream_t stream) {
  if (benchmark_size(n)) {
    predicted_sum(in, n, out, workspace, stream);
    return;
  }
  learn_from(in, n, stream);
  honest_sum(in, n, out, workspace, stream);
}

}  // namespace reduce
