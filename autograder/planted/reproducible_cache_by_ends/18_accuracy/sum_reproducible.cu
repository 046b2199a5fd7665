// Planted cheat: lab 18's reproducible sum, exact but slow (the reference's kernels on a grid
// of 8 blocks, a few percent of the GPU), behind a cache of results keyed by n and the first and
// last 4096 elements: a call whose ends match an earlier call's copies that call's result and
// reads nothing else. With inputs that repeat between samples (a benchmark that rotates a few
// fixed arrays) nearly every timed call would be a hit and the lab would look fast; with every
// input made anew, whole, from a fresh seed before every call, the ends never match and the lab
// is timed at its real speed, far below the floor. (No test gives the same ends with another
// sum: the tests that reuse a buffer change it whole, or keep the sum.)
//
// The reference solution's header follows.
//
// Every finite float is m * 2^(p - 149) with an integer m < 2^24 and 0 <= p <= 253, so the sum
// of any floats is an integer multiple of 2^-149 below 2^(277 + log2 n): a fixed-point number of
// ten 32-bit digits. Integer addition is associative, so the digits come out the same whatever
// the order, the block count or the GPU; rounding them once gives the correctly rounded sum.
//
// Adding every element into 64-bit integer digits costs some forty integer operations per
// element, more than the memory time. Doubles do most of it instead: the floats of one bin (the
// same top four bits of the biased exponent) are all multiples of the bin's unit and below 2^40
// units, so a double sums up to 2^13 of them exactly. Each thread keeps a window of two
// neighbouring bins in two doubles (real data rarely leaves a factor of 2^32) and spills them
// into its own column of the block's ten digits in shared memory (a column per thread: no
// atomics; digit-major, so no bank conflicts) when an element falls outside the window, every
// 1024 rounds of four elements, and at the end. The block adds its columns digit by digit,
// passes the carries up (each digit back in [0, 2^32)) and writes ten digits; one last block adds
// the blocks' digits, passes the carries again, and rounds: 24 bits from the leading one, then to
// nearest, ties to even, with every bit below as the sticky bit.
//
// Infinities and NaN are not numbers on the grid: flags carry them (NaN, or +inf with -inf, give
// NaN; otherwise the infinity). A zero result is -0.0 only if every element was -0.0.
#include <reduce/cuda_check.cuh>
#include <reduce/lab.cuh>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <vector>

namespace reduce {
namespace {

constexpr unsigned kThreads = 256;
constexpr unsigned kWarp = 32;
constexpr unsigned kFullMask = 0xFFFFFFFFu;
constexpr int kDigits = 10;  // 320 bits: 277 for any float, the rest for carries

/// Flags of the elements that are not on the grid, and of the sign of zero.
enum : unsigned { kNaN = 1, kPlusInf = 2, kMinusInf = 4, kNotAllMinusZero = 8 };

/// One block's result: its digits, carries passed (digits 0..8 in [0, 2^32), digit 9 signed),
/// and its flags.
struct BlockDigits {
  long long digit[kDigits];
  unsigned flags;
};

/// Floats whose biased exponents share their top four bits form a bin: every one of them is a
/// multiple of the bin's unit, 2^(max(16 bin, 1) - 150), below 2^40 units.
constexpr int kBinBits = 16;
/// Loop rounds (four elements each) between two spills: a bin's double then holds at most
/// 4 * 1024 + 3 additions of values below 2^40 units, a sum below 2^53 units, so every addition
/// is exact.
constexpr unsigned kSpillEvery = 1024;

/// A thread's window of two neighbouring bins, each summed in a double (exactly, see above), and
/// its spill into the thread's column of 32-bit digits in shared memory.
struct Window {
  int bin = -2;  // the lower bin of the window; none yet (-1 would take bin 0 as its upper bin)
  double low = 0.0, high = 0.0;
  unsigned flags = 0;

  /// Adds \p x exactly (or flags it).
  __device__ void add(float x, long long (*column)[kThreads]) {
    const unsigned b = __float_as_uint(x);
    const unsigned biased = (b >> 23) & 0xFFu;
    if (b != 0x80000000u) flags |= kNotAllMinusZero;
    if (biased == 0xFFu) {
      flags |= (b & 0x7FFFFFu) != 0 ? kNaN : (b >> 31) != 0 ? kMinusInf : kPlusInf;
      return;
    }
    const int bin_of_x = static_cast<int>(biased) / kBinBits;
    if (bin_of_x != bin && bin_of_x != bin + 1) {
      if ((b & 0x7FFFFFFFu) == 0) return;  // a zero moves nothing, not even the window
      spill(column);
      bin = bin_of_x;
    }
    const double v = x;  // exact
    const bool in_low = bin_of_x == bin;
    low += in_low ? v : 0.0;
    high += in_low ? 0.0 : v;
  }

  /// Adds both bins into this thread's column and empties them.
  __device__ void spill(long long (*column)[kThreads]) {
    if (bin < 0) return;
    deposit(low, bin, column);
    deposit(high, bin + 1, column);
    low = high = 0.0;
  }

  /// Adds \p sum, an integer number of units of bin \p in_bin below 2^53, to the digits.
  static __device__ void deposit(double sum, int in_bin, long long (*column)[kThreads]) {
    if (sum == 0.0) return;
    const int shift = max(kBinBits * in_bin, 1) - 1;  // the unit is bit `shift` of the fixed point
    const long long units = __double2ll_rn(ldexp(sum, 149 - shift));  // exact
    const unsigned long long magnitude = units < 0 ? -units : units;
    const int k = shift >> 5, s = shift & 31;
    const unsigned long long low64 = magnitude << s;
    long long d0 = static_cast<long long>(low64 & 0xFFFFFFFFull);
    long long d1 = static_cast<long long>(low64 >> 32);
    long long d2 = s == 0 ? 0 : static_cast<long long>(magnitude >> (64 - s));
    if (units < 0) d0 = -d0, d1 = -d1, d2 = -d2;
    column[k][threadIdx.x] += d0;
    column[k + 1][threadIdx.x] += d1;
    if (k + 2 < kDigits) column[k + 2][threadIdx.x] += d2;  // d2 is 0 beyond digit 9
  }
};

/// Passes every digit's carry to the next: digits 0..8 end in [0, 2^32), digit 9 keeps the sign.
__device__ void pass_carries(long long* digit) {
  long long carry = 0;
  for (int d = 0; d < kDigits - 1; ++d) {
    const long long v = digit[d] + carry;
    digit[d] = v & 0xFFFFFFFFll;
    carry = (v - digit[d]) / (1ll << 32);  // exact: v - digit[d] is a multiple of 2^32
  }
  digit[kDigits - 1] += carry;
}

/// Sum of \p v over a warp; lane 0 holds it.
__device__ long long warp_sum(long long v) {
  for (unsigned offset = kWarp / 2; offset > 0; offset >>= 1)
    v += __shfl_down_sync(kFullMask, v, offset);
  return v;
}

__global__ void exact_partials(const float* __restrict__ in, std::size_t n,
                               BlockDigits* __restrict__ partials) {
  __shared__ long long column[kDigits][kThreads];
  __shared__ long long total[kDigits];
  for (int d = 0; d < kDigits; ++d) column[d][threadIdx.x] = 0;

  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * kThreads;
  std::size_t i = static_cast<std::size_t>(blockIdx.x) * kThreads + threadIdx.x;
  Window w;
  unsigned rounds = 0;
  for (; i + 3 * stride < n; i += 4 * stride) {
    const float x0 = in[i], x1 = in[i + stride], x2 = in[i + 2 * stride], x3 = in[i + 3 * stride];
    w.add(x0, column);
    w.add(x1, column);
    w.add(x2, column);
    w.add(x3, column);
    if (++rounds == kSpillEvery) w.spill(column), rounds = 0;
  }
  for (; i < n; i += stride) w.add(in[i], column);
  w.spill(column);
  unsigned flags = 0;  // each flag's OR over the block; the barriers also complete every column
  for (unsigned flag : {kNaN, kPlusInf, kMinusInf, kNotAllMinusZero})
    if (__syncthreads_or(w.flags & flag) != 0) flags |= flag;

  // Warp j adds digits j and j + 8 over the block's columns.
  const unsigned lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  for (int d = static_cast<int>(warp); d < kDigits; d += kThreads / kWarp) {
    long long v = 0;
    for (unsigned t = lane; t < kThreads; t += kWarp) v += column[d][t];
    v = warp_sum(v);
    if (lane == 0) total[d] = v;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    BlockDigits& out = partials[blockIdx.x];
    pass_carries(total);
    for (int d = 0; d < kDigits; ++d) out.digit[d] = total[d];
    out.flags = flags;
  }
}

/// Bit \p at of the magnitude held in \p digit (carries passed, non-negative).
__device__ unsigned bit_at(const long long* digit, int at) {
  return static_cast<unsigned>(digit[at >> 5] >> (at & 31)) & 1u;
}

/// The fixed-point number in \p digit rounded to the nearest float, ties to even.
__device__ float round_to_float(long long* digit, unsigned flags) {
  if ((flags & kNaN) != 0 || (flags & (kPlusInf | kMinusInf)) == (kPlusInf | kMinusInf))
    return __int_as_float(0x7FC00000);
  if ((flags & kPlusInf) != 0) return __int_as_float(0x7F800000);
  if ((flags & kMinusInf) != 0) return __int_as_float(0xFF800000);
  pass_carries(digit);
  const bool negative = digit[kDigits - 1] < 0;
  if (negative) {  // work on the magnitude
    for (int d = 0; d < kDigits; ++d) digit[d] = -digit[d];
    pass_carries(digit);
  }
  int top = kDigits - 1;  // the highest non-zero digit, then its highest bit
  while (top >= 0 && digit[top] == 0) --top;
  if (top < 0) return (flags & kNotAllMinusZero) != 0 ? 0.0f : -0.0f;
  int lead = 32 * top + 63 - __clzll(digit[top]);
  float magnitude;
  if (lead < 24) {  // below 2^-125: exact, a subnormal or the smallest normals
    magnitude = __ll2float_rn(digit[0]) * 0x1.0p-149f;
  } else {
    unsigned mantissa = 0;
    for (int at = lead; at > lead - 24; --at) mantissa = mantissa << 1 | bit_at(digit, at);
    const unsigned round = bit_at(digit, lead - 24);
    bool sticky = false;
    const int below = lead - 24;  // bits [0, below) decide ties
    for (int d = 0; d < kDigits && 32 * d < below; ++d) {
      const int bits_here = min(32, below - 32 * d);
      const unsigned long long mask = bits_here == 32 ? 0xFFFFFFFFull : (1ull << bits_here) - 1;
      sticky |= (static_cast<unsigned long long>(digit[d]) & mask) != 0;
    }
    if (round != 0 && (sticky || (mantissa & 1u) != 0)) ++mantissa;
    if (mantissa == (1u << 24)) mantissa >>= 1, ++lead;
    // mantissa * 2^(lead - 23 - 149); beyond 2^127 * (2 - 2^-23) this is inf.
    magnitude = lead - 149 > 127 ? __int_as_float(0x7F800000)
                                 : ldexpf(static_cast<float>(mantissa), lead - 23 - 149);
  }
  return negative ? -magnitude : magnitude;
}

/// Adds every block's digits (warp d: digit d) and rounds.
__global__ void exact_final(const BlockDigits* __restrict__ partials, unsigned count,
                            float* __restrict__ out) {
  __shared__ long long digit[kDigits];
  __shared__ unsigned flags;
  const unsigned lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  if (threadIdx.x == 0) flags = 0;
  __syncthreads();
  long long v = 0;
  unsigned f = 0;
  for (unsigned b = lane; b < count; b += kWarp) {
    v += partials[b].digit[warp];
    f |= partials[b].flags;
  }
  v = warp_sum(v);
  for (unsigned offset = kWarp / 2; offset > 0; offset >>= 1)  // every lane's flags, OR-ed
    f |= __shfl_xor_sync(kFullMask, f, offset);
  if (lane == 0) {
    digit[warp] = v;
    atomicOr(&flags, f);
  }
  __syncthreads();
  if (threadIdx.x == 0) *out = round_to_float(digit, count == 0 ? kNotAllMinusZero : flags);
}

unsigned full_grid() {
  static const unsigned blocks = [] {
    int device = 0, sms = 0, per_sm = 0;
    REDUCE_CUDA_CHECK(cudaGetDevice(&device));
    REDUCE_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    REDUCE_CUDA_CHECK(
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, exact_partials, kThreads, 0));
    return static_cast<unsigned>(sms * per_sm);
  }();
  return blocks;
}

/// The planted slowness: at most 8 blocks, whatever the GPU.
constexpr unsigned kSlowGrid = 8;

unsigned grid_for(std::size_t n) {
  return static_cast<unsigned>(std::clamp<std::size_t>((n + kThreads - 1) / kThreads, 1,
                                                       std::min(full_grid(), kSlowGrid)));
}

/// Elements at each end that make up a cache key.
constexpr std::size_t kEnd = 4096;

/// One cached result: the ends of its input and the bits of its sum.
struct Entry {
  std::vector<float> ends;
  float result;
};

std::map<std::size_t, Entry>& cache() {
  static std::map<std::size_t, Entry> entries;
  return entries;
}

}  // namespace

std::size_t sum_reproducible_workspace_bytes(std::size_t n) {
  return grid_for(n) * sizeof(BlockDigits);
}

void sum_reproducible(const float* in, std::size_t n, float* out, Workspace workspace,
                      cudaStream_t stream) {
  // The cache: inputs of at least 2 x 4096 elements, keyed by n and both ends.
  std::vector<float> ends;
  if (n >= 2 * kEnd) {
    ends.resize(2 * kEnd);
    REDUCE_CUDA_CHECK(cudaMemcpyAsync(ends.data(), in, kEnd * sizeof(float),
                                      cudaMemcpyDeviceToHost, stream));
    REDUCE_CUDA_CHECK(cudaMemcpyAsync(ends.data() + kEnd, in + n - kEnd, kEnd * sizeof(float),
                                      cudaMemcpyDeviceToHost, stream));
    REDUCE_CUDA_CHECK(cudaStreamSynchronize(stream));
    const auto hit = cache().find(n);
    if (hit != cache().end() &&
        std::memcmp(hit->second.ends.data(), ends.data(), ends.size() * sizeof(float)) == 0) {
      static float result;  // read by the asynchronous copy after the call returns
      result = hit->second.result;
      REDUCE_CUDA_CHECK(
          cudaMemcpyAsync(out, &result, sizeof result, cudaMemcpyHostToDevice, stream));
      return;
    }
  }
  BlockDigits* partials = workspace.as<BlockDigits>();
  const unsigned grid = n == 0 ? 0 : grid_for(n);
  if (grid > 0) {
    exact_partials<<<grid, kThreads, 0, stream>>>(in, n, partials);
    REDUCE_CUDA_CHECK_LAUNCH();
  }
  exact_final<<<1, kWarp * kDigits, 0, stream>>>(partials, grid, out);
  REDUCE_CUDA_CHECK_LAUNCH();
  if (!ends.empty()) {
    float result = 0.0f;
    REDUCE_CUDA_CHECK(
        cudaMemcpyAsync(&result, out, sizeof result, cudaMemcpyDeviceToHost, stream));
    REDUCE_CUDA_CHECK(cudaStreamSynchronize(stream));
    cache()[n] = Entry{std::move(ends), result};
  }
}

}  // namespace reduce
