// Planted: lab 17's first stage alone, a warp per row for every length (the stub's suggested
// start). Lane l adds the row's float4s l, l + 32, ..., four of them in flight, the floats before
// the first 16-byte boundary and after the last one singly, then five shuffles. Correct for any
// row; a row of 32 floats gives eight or nine of its lanes a load, and 256 rows of 2^20 floats are
// 256 warps, a couple per SM.
#pragma once

#include <reduce/cuda_check.cuh>

#include <cmath>
#include <cstddef>
#include <cstdint>

namespace reduce::warp_per_row {

constexpr unsigned kFullMask = 0xFFFFFFFFu;
constexpr unsigned kThreads = 256;  // eight warps, eight rows, per block
constexpr int kInFlight = 4;        // float4 loads a lane issues before it adds any

/// Adds a row's floats: its running value is one float.
struct Sum {
  using Value = float;
  __device__ static Value identity() { return 0.0f; }
  /// Up to kInFlight float4s, \p valid of them the row's (the others are never read).
  __device__ static Value fold(Value acc, const float4 (&v)[kInFlight], int valid) {
#pragma unroll
    for (int k = 0; k < kInFlight; ++k)
      if (k < valid) acc += (v[k].x + v[k].y) + (v[k].z + v[k].w);
    return acc;
  }
  __device__ static Value element(Value acc, float x) { return acc + x; }
  __device__ static Value warp(Value v) {
    for (unsigned offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(kFullMask, v, offset);
    return v;
  }
  __device__ static void store(float* out, std::size_t s, Value v) { out[s] = v; }
};

/// Softmax's statistics: the running maximum and the sum of exp(x - maximum).
struct Softmax {
  struct Value {
    float max, sum;
  };
  __device__ static Value identity() { return {-INFINITY, 0.0f}; }
  /// \p acc with \p max as its maximum (max >= acc.max, finite).
  __device__ static float rescaled(Value acc, float max) {
    return acc.max == -INFINITY ? 0.0f : acc.sum * __expf(acc.max - max);
  }
  __device__ static Value fold(Value acc, const float4 (&v)[kInFlight], int valid) {
    float max = acc.max;
#pragma unroll
    for (int k = 0; k < kInFlight; ++k)
      if (k < valid) max = fmaxf(max, fmaxf(fmaxf(v[k].x, v[k].y), fmaxf(v[k].z, v[k].w)));
    float sum = rescaled(acc, max);
#pragma unroll
    for (int k = 0; k < kInFlight; ++k)
      if (k < valid)
        sum += (__expf(v[k].x - max) + __expf(v[k].y - max)) +
               (__expf(v[k].z - max) + __expf(v[k].w - max));
    return {max, sum};
  }
  __device__ static Value element(Value acc, float x) {
    const float max = fmaxf(acc.max, x);
    return {max, rescaled(acc, max) + __expf(x - max)};
  }
  __device__ static Value warp(Value v) {
    float max = v.max;
    for (unsigned offset = 16; offset > 0; offset >>= 1)
      max = fmaxf(max, __shfl_xor_sync(kFullMask, max, offset));
    float sum = max == -INFINITY ? 0.0f : rescaled(v, max);
    for (unsigned offset = 16; offset > 0; offset >>= 1)
      sum += __shfl_xor_sync(kFullMask, sum, offset);
    return {max, sum};
  }
  __device__ static void store(float* out, std::size_t s, Value v) {
    out[2 * s] = v.max;
    out[2 * s + 1] = v.sum;
  }
};

/// One warp per row: row s = global warp index.
template <class Op>
__global__ void rows(const float* in, const std::int64_t* offsets, std::size_t segments,
                     float* out) {
  const std::size_t s = (static_cast<std::size_t>(blockIdx.x) * kThreads + threadIdx.x) / 32;
  if (s >= segments) return;  // the whole warp: segments are per warp
  const unsigned lane = threadIdx.x % 32;
  const std::int64_t begin = offsets[s], end = offsets[s + 1];
  const std::int64_t length = end - begin;
  // Floats before the first 16-byte boundary of the row (in is at least 4-byte aligned).
  const auto address = reinterpret_cast<std::uintptr_t>(in + begin);
  const std::int64_t head =
      length < 4 ? length : static_cast<std::int64_t>((16 - address % 16) % 16 / 4);
  const std::int64_t quads = (length - head) / 4;
  const float4* body = reinterpret_cast<const float4*>(in + begin + head);
  typename Op::Value acc = Op::identity();
  if (lane < head) acc = Op::element(acc, in[begin + lane]);
  for (std::int64_t q = lane; q < quads; q += 32 * kInFlight) {
    float4 v[kInFlight];
    int valid = 0;
#pragma unroll
    for (int k = 0; k < kInFlight; ++k)
      if (q + 32 * k < quads) v[k] = __ldg(body + q + 32 * k), valid = k + 1;
    acc = Op::fold(acc, v, valid);
  }
  const std::int64_t tail = begin + head + 4 * quads;
  if (tail + lane < end) acc = Op::element(acc, in[tail + lane]);
  acc = Op::warp(acc);
  if (lane == 0) Op::store(out, s, acc);
}

/// Launches a warp per row of \p segments on \p stream.
template <class Op>
void launch(const float* in, const std::int64_t* offsets, std::size_t segments, float* out,
            cudaStream_t stream) {
  if (segments == 0) return;
  const std::size_t blocks = (segments + kThreads / 32 - 1) / (kThreads / 32);
  rows<Op><<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(in, offsets, segments, out);
  REDUCE_CUDA_CHECK_LAUNCH();
}

}  // namespace reduce::warp_per_row
