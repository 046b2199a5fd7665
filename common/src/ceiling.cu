#include <reduce/ceiling.cuh>
#include <reduce/cuda_check.cuh>
#include <reduce/device_buffer.cuh>
#include <reduce/device_info.cuh>
#include <reduce/event_timer.cuh>
#include <reduce/l2_flush.cuh>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <vector>

namespace reduce {
namespace {

constexpr int kThreads = 256;
constexpr float kNeverEqual = -1.2345e-38f;

/// Loads a float4 either through the read-only path or as an evict-first streaming load.
template <bool kStreaming>
__device__ float4 load(const float4* p) {
  if constexpr (kStreaming)
    return __ldcs(p);
  else
    return __ldg(p);
}

__device__ float fold(float4 v) {
  return (v.x + v.y) + (v.z + v.w);
}

/// The scalar tail (at most 3 floats past the last float4) goes to the first threads.
__device__ float tail_of(const float* tail, std::size_t tail_n) {
  const std::size_t t = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  return t < tail_n ? tail[t] : 0.0f;
}

/// Variant A: grid-stride over float4s, kUnroll independent loads in flight per thread.
template <int kUnroll, bool kStreaming>
__global__ void grid_stride_read(const float4* __restrict__ in, std::size_t n4,
                                 const float* __restrict__ tail, std::size_t tail_n,
                                 std::size_t /*per_block*/, float* __restrict__ sink) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  float acc = tail_of(tail, tail_n);
  for (; i + (kUnroll - 1) * stride < n4; i += kUnroll * stride) {
    float4 v[kUnroll];
#pragma unroll
    for (int k = 0; k < kUnroll; ++k) v[k] = load<kStreaming>(in + i + k * stride);
#pragma unroll
    for (int k = 0; k < kUnroll; ++k) acc += fold(v[k]);
  }
  for (; i < n4; i += stride) acc += fold(load<kStreaming>(in + i));
  if (acc == kNeverEqual) *sink = acc;
}

/// Variant B: each block streams one contiguous share of the input, tile by tile (the layout
/// cub::DeviceReduce uses), kUnroll float4s per thread per tile.
template <int kUnroll, bool kStreaming>
__global__ void chunked_read(const float4* __restrict__ in, std::size_t n4,
                             const float* __restrict__ tail, std::size_t tail_n,
                             std::size_t per_block, float* __restrict__ sink) {
  const std::size_t begin = static_cast<std::size_t>(blockIdx.x) * per_block;
  const std::size_t end = begin + per_block < n4 ? begin + per_block : n4;
  const std::size_t tile = static_cast<std::size_t>(kUnroll) * blockDim.x;
  float acc = tail_of(tail, tail_n);
  std::size_t base = begin;
  for (; base + tile <= end; base += tile) {
    float4 v[kUnroll];
#pragma unroll
    for (int k = 0; k < kUnroll; ++k)
      v[k] = load<kStreaming>(in + base + k * blockDim.x + threadIdx.x);
#pragma unroll
    for (int k = 0; k < kUnroll; ++k) acc += fold(v[k]);
  }
  for (std::size_t i = base + threadIdx.x; i < end; i += blockDim.x)
    acc += fold(load<kStreaming>(in + i));
  if (acc == kNeverEqual) *sink = acc;
}

__global__ void scalar_read(const float* __restrict__ in, std::size_t n, float* __restrict__ sink) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  float acc = 0.0f;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride)
    acc += __ldcs(in + i);
  if (acc == kNeverEqual) *sink = acc;
}

using ReadKernel = void (*)(const float4*, std::size_t, const float*, std::size_t, std::size_t,
                            float*);

struct Variant {
  const char* name;
  ReadKernel kernel;
  int unroll;
  bool chunked;
  unsigned waves = 1;  // grids of this many times the resident blocks
};

const Variant kVariants[] = {
    {"grid-stride x4 ldcs", grid_stride_read<4, true>, 4, false},
    {"grid-stride x4 ldg", grid_stride_read<4, false>, 4, false},
    {"grid-stride x8 ldg", grid_stride_read<8, false>, 8, false},
    {"chunked x4 ldg", chunked_read<4, false>, 4, true},
    {"chunked x8 ldg", chunked_read<8, false>, 8, true},
    {"chunked x8 ldcs", chunked_read<8, true>, 8, true},
    // Two waves: blocks that finish early make room for the rest, which evens out the end of a
    // long read (the capstone's layout from 2^27 floats on).
    {"chunked x4 ldg 2 waves", chunked_read<4, false>, 4, true, 2},
};
/// Blocks that fill every SM \p waves times at full occupancy, but no more than the work needs.
unsigned grid_for(const void* kernel, std::size_t work_items, unsigned waves) {
  int device = 0, sms = 0, per_sm = 0;
  REDUCE_CUDA_CHECK(cudaGetDevice(&device));
  REDUCE_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  REDUCE_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreads, 0));
  const std::size_t needed = (work_items + kThreads - 1) / kThreads;
  return static_cast<unsigned>(
      std::max<std::size_t>(1, std::min<std::size_t>(needed, std::size_t(sms) * per_sm * waves)));
}

void launch_variant(const Variant& v, const float* in, std::size_t n, float* sink,
                    cudaStream_t stream) {
  const std::size_t n4 = n / 4;
  const unsigned grid =
      grid_for(reinterpret_cast<const void*>(v.kernel), n4 / v.unroll + 1, v.waves);
  const std::size_t tile = static_cast<std::size_t>(v.unroll) * kThreads;
  const std::size_t per_block = ((n4 + grid - 1) / grid + tile - 1) / tile * tile;
  v.kernel<<<grid, kThreads, 0, stream>>>(reinterpret_cast<const float4*>(in), n4, in + n4 * 4,
                                          n - n4 * 4, per_block, sink);
  REDUCE_CUDA_CHECK_LAUNCH();
}

float median_ms(const Variant& v, const float* in, std::size_t n, float* sink, int repetitions,
                cudaStream_t stream, L2Flush& l2, EventTimer& timer) {
  launch_variant(v, in, n, sink, stream);  // warm-up
  std::vector<float> ms;
  for (int r = 0; r < repetitions; ++r) {
    l2.flush(stream);
    timer.start(stream);
    launch_variant(v, in, n, sink, stream);
    timer.stop(stream);
    ms.push_back(timer.elapsed_ms());
  }
  std::nth_element(ms.begin(), ms.begin() + ms.size() / 2, ms.end());
  return ms[ms.size() / 2];
}

}  // namespace

void CeilingProbe::read(const float* in, std::size_t n, float* sink, cudaStream_t stream) const {
  if (n == 0) return;
  if (reinterpret_cast<std::uintptr_t>(in) % 16 == 0) {
    launch_variant(kVariants[layout_], in, n, sink, stream);
  } else {
    const unsigned grid = grid_for(reinterpret_cast<const void*>(&scalar_read), n, 1);
    scalar_read<<<grid, kThreads, 0, stream>>>(in, n, sink);
    REDUCE_CUDA_CHECK_LAUNCH();
  }
}

const char* CeilingProbe::kernel() const {
  return kVariants[layout_].name;
}

std::size_t ceiling_probe_size() {
  // The read rate still grows a little past 2^28 floats (the ramp-up and tail of a launch weigh
  // less), so probe 2^30 (4 GiB) when the memory is there.
  const std::size_t large = std::size_t{1} << 30;
  return free_device_memory() > 3 * large * sizeof(float) ? large : large >> 2;
}

CeilingProbe CeilingProbe::measure(std::size_t n, int repetitions) {
  if (n == 0) n = ceiling_probe_size();
  DeviceBuffer<float> data(n);
  data.fill_bytes(0x3C);  // small positive floats; the value does not matter to a read
  DeviceBuffer<float> sink(1);
  Stream stream;
  L2Flush l2;
  EventTimer timer;
  // Time every layout briefly, keep the fastest, then measure it properly.
  CeilingProbe probe;
  probe.elements_ = n;
  float best = 0;
  for (int v = 0; v < static_cast<int>(std::size(kVariants)); ++v) {
    const float ms =
        median_ms(kVariants[v], data.data(), n, sink.data(), 7, stream.get(), l2, timer);
    probe.timings_.push_back(
        {kVariants[v].name, static_cast<double>(n) * sizeof(float) / (ms * 1e-3) / 1e9});
    if (best == 0 || ms < best) {
      best = ms;
      probe.layout_ = v;
    }
  }
  const float ms = median_ms(kVariants[probe.layout_], data.data(), n, sink.data(), repetitions,
                             stream.get(), l2, timer);
  probe.gbps_ = static_cast<double>(n) * sizeof(float) / (ms * 1e-3) / 1e9;
  return probe;
}

}  // namespace reduce
