// Lab 18, part 1: a compensated sum.
//
// Rung 9's structure (grid-stride loads with four independent accumulators, warp shuffles, one
// partial per block, then one block) with every running sum carried as a pair hi + lo, where lo
// holds what the rounding of hi lost. Each accumulator keeps chains with Neumaier's variant of
// Kahan's summation: TwoSum gives the exact error of every addition, and the errors are summed
// apart. A chain's error grows with the square of its length, so after kChain = 16 elements its
// pair, renormalised by TwoSum, is folded into the accumulator's pair and a new chain starts (the
// contract's rule, lab.cuh). Pairs meet in the tree with the accurate double-float addition (two
// TwoSums and two renormalisations), whose error is at most 3u^2 of the result. Only the root is
// rounded to float. The extra arithmetic (seven additions per element and a pair addition per
// chain, instead of one addition) hides behind the memory reads, so the sum costs no bandwidth.
//
// For the lesson's comparison, REDUCE_LAB18_ACCUMULATOR picks the per-thread accumulator:
// neumaier (the default), kahan, float or double; the chains of 16 and the tree are the same in
// every case.
#include <reduce/cuda_check.cuh>
#include <reduce/lab.cuh>

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace reduce {
namespace {

constexpr unsigned kThreads = 256;
constexpr unsigned kWarp = 32;
constexpr unsigned kFullMask = 0xFFFFFFFFu;
constexpr unsigned kChain = 16;  // the contract's longest compensated chain (lab.cuh)

/// An unevaluated sum hi + lo of two floats.
struct Pair {
  float hi, lo;  // no initialisers: a __shared__ array of pairs needs a trivial type
};

/// TwoSum (Knuth): s = fl(a + b) and the exact error e, a + b = s + e, for any finite a and b.
/// The _rn intrinsics keep the compiler from reassociating or fusing the six operations.
__device__ __forceinline__ Pair two_sum(float a, float b) {
  const float s = __fadd_rn(a, b);
  const float b_virtual = __fsub_rn(s, a);
  const float a_virtual = __fsub_rn(s, b_virtual);
  return {s, __fadd_rn(__fsub_rn(a, a_virtual), __fsub_rn(b, b_virtual))};
}

/// FastTwoSum (Dekker): the same when |a| >= |b|, in three operations.
__device__ __forceinline__ Pair fast_two_sum(float a, float b) {
  const float s = __fadd_rn(a, b);
  return {s, __fsub_rn(b, __fsub_rn(s, a))};
}

/// The accurate double-float addition (Joldes, Muller, Popescu 2017, algorithm 6).
__device__ __forceinline__ Pair add(Pair a, Pair b) {
  Pair s = two_sum(a.hi, b.hi);
  const Pair t = two_sum(a.lo, b.lo);
  s = fast_two_sum(s.hi, __fadd_rn(s.lo, t.hi));
  return fast_two_sum(s.hi, __fadd_rn(s.lo, t.lo));
}

// The per-thread accumulators the lesson compares: add(x), then pair() for the tree.
struct Neumaier {
  Pair p{};
  __device__ void add(float x) {
    const Pair t = two_sum(p.hi, x);
    p.hi = t.hi;
    p.lo = __fadd_rn(p.lo, t.lo);
  }
  __device__ Pair pair() const { return p; }
};

struct Kahan {  // loses its compensation when an element outweighs the running sum
  float sum = 0.0f, c = 0.0f;
  __device__ void add(float x) {
    const float y = __fsub_rn(x, c);
    const float t = __fadd_rn(sum, y);
    c = __fsub_rn(__fsub_rn(t, sum), y);
    sum = t;
  }
  __device__ Pair pair() const { return {sum, -c}; }
};

struct Plain {  // float chains, as in rung 9
  float sum = 0.0f;
  __device__ void add(float x) { sum = __fadd_rn(sum, x); }
  __device__ Pair pair() const { return {sum, 0.0f}; }
};

struct Double {  // 53 bits: fast on data-centre GPUs, 1/64 of float's rate on many others
  double sum = 0.0;
  __device__ void add(float x) { sum += x; }
  __device__ Pair pair() const {
    const float hi = static_cast<float>(sum);
    return {hi, static_cast<float>(sum - hi)};
  }
};

/// Chains of at most kChain elements of \p Chain, each pair renormalised by TwoSum
/// (exact) and folded into a running pair with the double-float addition.
template <typename Chain>
struct Folded {
  Chain chain;
  Pair total{};
  unsigned count = 0;
  __device__ void add(float x) {
    chain.add(x);
    if (++count < kChain) return;
    total = fold();
    chain = Chain{};
    count = 0;
  }
  __device__ Pair fold() const {
    const Pair p = chain.pair();
    return reduce::add(total, two_sum(p.hi, p.lo));
  }
  __device__ Pair pair() const { return count == 0 ? total : fold(); }
};

__device__ Pair shfl_down(Pair v, unsigned offset) {
  return {__shfl_down_sync(kFullMask, v.hi, offset), __shfl_down_sync(kFullMask, v.lo, offset)};
}

/// Sum of \p v over the block, thread 0 holds it.
__device__ Pair block_sum(Pair v) {
  __shared__ Pair warp_totals[kThreads / kWarp];
  const unsigned lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  for (unsigned offset = kWarp / 2; offset > 0; offset >>= 1) v = add(v, shfl_down(v, offset));
  if (lane == 0) warp_totals[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < kThreads / kWarp ? warp_totals[lane] : Pair{};
    for (unsigned offset = kWarp / 2; offset > 0; offset >>= 1) v = add(v, shfl_down(v, offset));
  }
  return v;
}

/// One partial pair per block, or (grid of one, \p out set) the rounded sum itself.
template <typename Accumulator>
__global__ void compensated_partials(const float* __restrict__ in, std::size_t n,
                                     Pair* __restrict__ partials, float* __restrict__ out) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * kThreads;
  std::size_t i = static_cast<std::size_t>(blockIdx.x) * kThreads + threadIdx.x;
  Folded<Accumulator> a0, a1, a2, a3;
  for (; i + 3 * stride < n; i += 4 * stride) {
    const float x0 = in[i], x1 = in[i + stride], x2 = in[i + 2 * stride], x3 = in[i + 3 * stride];
    a0.add(x0);
    a1.add(x1);
    a2.add(x2);
    a3.add(x3);
  }
  for (; i < n; i += stride) a0.add(in[i]);
  const Pair total = block_sum(add(add(a0.pair(), a1.pair()), add(a2.pair(), a3.pair())));
  if (threadIdx.x != 0) return;
  if (out != nullptr)
    *out = __fadd_rn(total.hi, total.lo);
  else
    partials[blockIdx.x] = total;
}

/// The block partials' sum, rounded once to float.
__global__ void compensated_final(const Pair* __restrict__ partials, unsigned count,
                                  float* __restrict__ out) {
  Pair v{};
  for (unsigned b = threadIdx.x; b < count; b += kThreads) v = add(v, partials[b]);
  v = block_sum(v);
  if (threadIdx.x == 0) *out = __fadd_rn(v.hi, v.lo);
}

enum class Accumulator { kNeumaier, kKahan, kPlain, kDouble };

Accumulator chosen_accumulator() {
  static const Accumulator chosen = [] {
    const char* env = std::getenv("REDUCE_LAB18_ACCUMULATOR");
    if (env == nullptr || std::strcmp(env, "neumaier") == 0) return Accumulator::kNeumaier;
    if (std::strcmp(env, "kahan") == 0) return Accumulator::kKahan;
    if (std::strcmp(env, "float") == 0) return Accumulator::kPlain;
    if (std::strcmp(env, "double") == 0) return Accumulator::kDouble;
    return Accumulator::kNeumaier;
  }();
  return chosen;
}

unsigned full_grid() {
  static const unsigned blocks = [] {
    int device = 0, sms = 0, per_sm = 0;
    REDUCE_CUDA_CHECK(cudaGetDevice(&device));
    REDUCE_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    REDUCE_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &per_sm, compensated_partials<Neumaier>, kThreads, 0));
    return static_cast<unsigned>(sms * per_sm);
  }();
  return blocks;
}

unsigned grid_for(std::size_t n) {
  return static_cast<unsigned>(
      std::clamp<std::size_t>((n + kThreads - 1) / kThreads, 1, full_grid()));
}

template <typename A>
void launch(const float* in, std::size_t n, float* out, Pair* partials, cudaStream_t stream) {
  const unsigned grid = grid_for(n);
  compensated_partials<A>
      <<<grid, kThreads, 0, stream>>>(in, n, partials, grid == 1 ? out : nullptr);
  REDUCE_CUDA_CHECK_LAUNCH();
  if (grid == 1) return;
  compensated_final<<<1, kThreads, 0, stream>>>(partials, grid, out);
  REDUCE_CUDA_CHECK_LAUNCH();
}

}  // namespace

std::size_t sum_compensated_workspace_bytes(std::size_t n) {
  return grid_for(n) * sizeof(Pair);
}

void sum_compensated(const float* in, std::size_t n, float* out, Workspace workspace,
                     cudaStream_t stream) {
  Pair* partials = workspace.as<Pair>();
  switch (chosen_accumulator()) {
    case Accumulator::kNeumaier:
      return launch<Neumaier>(in, n, out, partials, stream);
    case Accumulator::kKahan:
      return launch<Kahan>(in, n, out, partials, stream);
    case Accumulator::kPlain:
      return launch<Plain>(in, n, out, partials, stream);
    case Accumulator::kDouble:
      return launch<Double>(in, n, out, partials, stream);
  }
}

}  // namespace reduce
