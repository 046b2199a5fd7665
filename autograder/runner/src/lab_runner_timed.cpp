// LabRunner's timed calls: inputs the runner allocates itself (memory mapped from another
// process reads slower on some GPUs), and one request of many calls timed by the checker's
// clock, from the request sent to the results readable here.
#include "lab_runner_parts.hpp"

#include <random>

namespace reduce::runner {
namespace {

/// Request::awake_us of a timed request: longer than a benchmark's requests are apart (one
/// request's calls fill about 10 ms, and making the next one's inputs takes as long).
constexpr std::uint32_t kTimedAwakeUs = 50'000;

}  // namespace

std::vector<float*> LabRunner::allocate_timed_inputs(std::size_t n, int count) {
  return allocate_timed_inputs(n, count, 0);
}

std::vector<float*> LabRunner::allocate_timed_inputs(std::size_t n, int count,
                                                     std::size_t segments) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (count < 1 || count > kMaxInputs) throw RunnerError("checker: bad number of timed inputs");
  // The runner frees its earlier inputs before it allocates these: unmapped here first, or this
  // process's mappings would keep them alive (a runner that serves many rows would run out of
  // memory, and slow down before it did).
  for (void* p : timed_inputs_) cudaIpcCloseMemHandle(p);
  timed_inputs_.clear();
  if (timed_offsets_ != nullptr) cudaIpcCloseMemHandle(timed_offsets_);
  timed_offsets_ = nullptr;
  timed_bytes_ = 0;
  Request rq;
  rq.command = Command::kAllocateInputs;
  rq.n = n;
  rq.segments = segments;
  rq.input_count = static_cast<std::uint32_t>(count);
  const Reply reply = request(rq);
  rethrow(reply);
  if (segments > 0) {
    void* p = nullptr;
    cuda(cudaIpcOpenMemHandle(&p, reply.offsets, cudaIpcMemLazyEnablePeerAccess),
         "mapping the runner's timed offsets");
    timed_offsets_ = static_cast<std::int64_t*>(p);
  }
  std::vector<float*> mapped;
  for (int i = 0; i < count; ++i) {
    void* p = nullptr;
    cuda(cudaIpcOpenMemHandle(&p, reply.inputs[i], cudaIpcMemLazyEnablePeerAccess),
         "mapping the runner's timed inputs");
    timed_inputs_.push_back(p);
    mapped.push_back(static_cast<float*>(p));
  }
  timed_bytes_ = static_cast<std::size_t>(count) * std::max<std::size_t>(n, 1) * sizeof(float) +
                 (segments > 0 ? (segments + 1) * sizeof(std::int64_t) : 0);
  return mapped;
}

TimedRun LabRunner::run_timed(const std::string& op, int count, std::size_t n, int calls,
                              void* capture) {
  return run_timed(op, count, n, calls, capture, 0);
}

TimedRun LabRunner::run_timed(const std::string& op, int count, std::size_t n, int calls,
                              void* capture, std::size_t segments) {
  const int index = op_index(op);
  if (count < 1 || count > kMaxInputs || calls < 1 || !child_)
    throw RunnerError("checker: bad timed request (inputs allocated?)");
  const std::size_t ws = workspace_bytes(op, n, segments);
  std::lock_guard<std::mutex> lock(mutex_);
  const std::size_t rb = call_result_bytes(kOperations[index].kind, segments);
  Request rq =
      armed_run(index, n, static_cast<std::size_t>(calls), static_cast<std::size_t>(count), rb, ws);
  rq.own_inputs = 1;
  rq.segments = segments;
  rq.capture = ref(capture, rb * static_cast<std::size_t>(calls), true);
  rq.awake_us = kTimedAwakeUs;
  // The caller's capture stays mapped in the runner from request to request. A new one (the
  // next benchmark row's, maybe where the last one was freed) first has the runner forget the
  // mappings it holds: a stale one would be written, or refuse the new one (AlreadyMapped).
  const std::string capture_key(reinterpret_cast<const char*>(&rq.capture.handle),
                                sizeof rq.capture.handle);
  if (capture_key != capture_key_) rq.forget_buffers = 1;
  capture_key_ = capture_key;
  // A call's result is read whole when it is small. A segmented call's results can be tens of
  // megabytes: reading them all would put the copy on the clock, so a window of kWindow bytes
  // at a place the lab cannot know is read from each call (the caller checks every result
  // afterwards).
  constexpr std::size_t kWindow = 4096;
  const std::size_t window = std::min(rb, kWindow);
  static std::mt19937_64 places(std::random_device{}());
  std::vector<std::size_t> at(static_cast<std::size_t>(calls));
  for (std::size_t c = 0; c < at.size(); ++c) {
    const std::size_t floats_before =
        rb > window ? places() % ((rb - window) / sizeof(float) + 1) : 0;
    at[c] = c * rb + floats_before * sizeof(float);
  }
  // Whole results: one copy, as the scalar operations always had. Windows: pinned, so that their
  // copies are queued together and waited for once.
  std::vector<unsigned char> whole(window == rb ? rb * at.size() : 0);
  unsigned char* windows = nullptr;
  if (window < rb)
    cuda(cudaMallocHost(&windows, window * at.size()), "allocating the results' host buffer");
  const std::unique_ptr<unsigned char, cudaError_t (*)(void*)> release(windows, cudaFreeHost);
  cuda(cudaDeviceSynchronize(), "finishing the checker's own work before the timed calls");
  const double t0 = now_ms();
  const Reply reply = request(rq);
  // The clock stops once the results are readable here: a reply sent before the work finished
  // gains nothing, because the capture would still hold poison.
  if (window == rb) {
    cuda(cudaMemcpy(whole.data(), capture, whole.size(), cudaMemcpyDeviceToHost),
         "reading the results");
  } else {
    for (std::size_t c = 0; c < at.size(); ++c)
      cuda(cudaMemcpyAsync(windows + c * window, static_cast<char*>(capture) + at[c], window,
                           cudaMemcpyDeviceToHost, nullptr),
           "reading the results");
    cuda(cudaStreamSynchronize(nullptr), "reading the results");
  }
  const double t1 = now_ms();
  rethrow(reply);
  check_guards(op, n);
  return TimedRun{t1 - t0, reply.event_ms};
}

}  // namespace reduce::runner
