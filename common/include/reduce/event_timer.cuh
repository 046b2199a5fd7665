/// \file
/// \brief Times device work on one stream with a pair of CUDA events.
#pragma once

#include <reduce/cuda_check.cuh>

namespace reduce {

/// Brackets work queued on a stream with two events and reports the device time between them.
/// Only the work queued between start() and stop() is timed, not the host's launch overhead
/// before it.
class EventTimer {
 public:
  EventTimer() {
    REDUCE_CUDA_CHECK(cudaEventCreate(&start_));
    REDUCE_CUDA_CHECK(cudaEventCreate(&stop_));
  }
  EventTimer(const EventTimer&) = delete;
  EventTimer& operator=(const EventTimer&) = delete;
  ~EventTimer() {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }

  /// Records the start event on \p stream.
  void start(cudaStream_t stream) { REDUCE_CUDA_CHECK(cudaEventRecord(start_, stream)); }
  /// Records the stop event on \p stream.
  void stop(cudaStream_t stream) { REDUCE_CUDA_CHECK(cudaEventRecord(stop_, stream)); }

  /// Waits for the stop event and returns the elapsed device time in milliseconds.
  float elapsed_ms() {
    REDUCE_CUDA_CHECK(cudaEventSynchronize(stop_));
    float ms = 0.0f;
    REDUCE_CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
    return ms;
  }

 private:
  cudaEvent_t start_ = nullptr;
  cudaEvent_t stop_ = nullptr;
};

}  // namespace reduce
