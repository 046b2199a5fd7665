#include <reduce/ceiling.cuh>
#include <reduce/cuda_check.cuh>
#include <reduce/device_buffer.cuh>
#include <reduce/event_timer.cuh>
#include <reduce/l2_flush.cuh>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace reduce {
namespace {

constexpr int kThreads = 256;
constexpr int kUnroll = 4;  // independent 16-byte loads in flight per thread
constexpr float kNeverEqual = -1.2345e-38f;

__global__ void stream_read_vec4(const float4* __restrict__ in, std::size_t n4,
                                 const float* __restrict__ tail, std::size_t tail_n,
                                 float* __restrict__ sink) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  float acc = 0.0f;
  for (; i + (kUnroll - 1) * stride < n4; i += kUnroll * stride) {
    float4 v[kUnroll];
#pragma unroll
    for (int k = 0; k < kUnroll; ++k) v[k] = __ldcs(in + i + k * stride);
#pragma unroll
    for (int k = 0; k < kUnroll; ++k) acc += (v[k].x + v[k].y) + (v[k].z + v[k].w);
  }
  for (; i < n4; i += stride) {
    const float4 v = __ldcs(in + i);
    acc += (v.x + v.y) + (v.z + v.w);
  }
  const std::size_t t = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t < tail_n) acc += tail[t];
  if (acc == kNeverEqual) *sink = acc;
}

__global__ void stream_read_scalar(const float* __restrict__ in, std::size_t n,
                                   float* __restrict__ sink) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  float acc = 0.0f;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride)
    acc += __ldcs(in + i);
  if (acc == kNeverEqual) *sink = acc;
}

/// Blocks that fill every SM once at full occupancy, but no more than the work needs.
unsigned grid_for(const void* kernel, std::size_t work_items) {
  int device = 0, sms = 0, per_sm = 0;
  REDUCE_CUDA_CHECK(cudaGetDevice(&device));
  REDUCE_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  REDUCE_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreads, 0));
  const std::size_t needed = (work_items + kThreads - 1) / kThreads;
  return static_cast<unsigned>(
      std::max<std::size_t>(1, std::min<std::size_t>(needed, std::size_t(sms) * per_sm)));
}

}  // namespace

void stream_read(const float* in, std::size_t n, float* sink, cudaStream_t stream) {
  if (n == 0) return;
  if (reinterpret_cast<std::uintptr_t>(in) % 16 == 0) {
    const std::size_t n4 = n / 4;
    const std::size_t tail_n = n - n4 * 4;  // at most 3, read by the first threads
    const unsigned grid = grid_for(reinterpret_cast<const void*>(&stream_read_vec4), n4);
    stream_read_vec4<<<grid, kThreads, 0, stream>>>(reinterpret_cast<const float4*>(in), n4,
                                                     in + n4 * 4, tail_n, sink);
  } else {
    const unsigned grid = grid_for(reinterpret_cast<const void*>(&stream_read_scalar), n);
    stream_read_scalar<<<grid, kThreads, 0, stream>>>(in, n, sink);
  }
  REDUCE_CUDA_CHECK_LAUNCH();
}

double measure_ceiling_gbps(std::size_t n, int repetitions) {
  DeviceBuffer<float> data(n);
  data.fill_bytes(0x3C);  // small positive floats; the value does not matter to a read
  DeviceBuffer<float> sink(1);
  Stream stream;
  L2Flush l2;
  EventTimer timer;
  stream_read(data.data(), n, sink.data(), stream.get());  // warm-up
  std::vector<float> ms;
  for (int r = 0; r < repetitions; ++r) {
    l2.flush(stream.get());
    timer.start(stream.get());
    stream_read(data.data(), n, sink.data(), stream.get());
    timer.stop(stream.get());
    ms.push_back(timer.elapsed_ms());
  }
  std::nth_element(ms.begin(), ms.begin() + ms.size() / 2, ms.end());
  return static_cast<double>(n) * sizeof(float) / (ms[ms.size() / 2] * 1e-3) / 1e9;
}

}  // namespace reduce
