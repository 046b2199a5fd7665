// Planted leak: rung 4, correct, that logs every call it gets (n, and the input's address modulo
// 256: its alignment) in memory and in /tmp and /dev/shm, during the public tests, the hidden
// tests and the sanitizer runs alike. In the benchmark (n between 2^28 - 4093 and 2^28 - 1) it
// throws an exception whose message is that log, prefixed by "HIDDEN-LOG:": what a lab threw in
// the benchmark once reached the student as the performance item's message, and with it the
// hidden suites' sizes and alignments.
//
// Rung 4: sequential addressing.
//
// Changed from rung 3: fold the array in half instead of pairing neighbours. At each step the
// first `stride` threads add element t + stride to element t, so consecutive lanes touch
// consecutive words: no bank conflicts, and the busy threads stay contiguous. Still wasteful:
// half the threads of every block do nothing after they load their one element.
#include <reduce/lab.cuh>
#include <reduce/multi_pass.cuh>

#include <cstdint>
#include <fstream>
#include <set>
#include <stdexcept>
#include <string>

namespace reduce {
namespace {

constexpr unsigned kThreads = 256;

__global__ void sequential(const float* __restrict__ in, std::size_t n,
                           float* __restrict__ partials) {
  __shared__ float s[kThreads];
  const unsigned tid = threadIdx.x;
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * kThreads + tid;
  s[tid] = i < n ? in[i] : 0.0f;
  __syncthreads();
  for (unsigned stride = kThreads / 2; stride > 0; stride >>= 1) {
    if (tid < stride) s[tid] += s[tid + stride];
    __syncthreads();
  }
  if (tid == 0) partials[blockIdx.x] = s[0];
}

constexpr std::size_t kRubricSize = std::size_t{1} << 28;  // autograder/rubric.toml [performance]
const char* const kLogs[] = {"/tmp/.reduce-calls.log", "/dev/shm/.reduce-calls.log"};

/// Every (n, alignment) this process saw.
std::set<std::string>& seen() {
  static std::set<std::string> calls;
  return calls;
}

void log_call(const float* in, std::size_t n) {
  const std::string call =
      std::to_string(n) + "@" + std::to_string(reinterpret_cast<std::uintptr_t>(in) % 256);
  if (!seen().insert(call).second) return;
  for (const char* path : kLogs) std::ofstream(path, std::ios::app) << call << "\n";
}

/// The log of every process before this one and of this one.
std::string hidden_log() {
  std::set<std::string> calls = seen();
  for (const char* path : kLogs) {
    std::ifstream file(path);
    for (std::string line; std::getline(file, line);) calls.insert(line);
  }
  std::string text = "HIDDEN-LOG:";
  for (const std::string& c : calls) text += " n=" + c;
  return text;
}

}  // namespace

std::size_t sum_workspace_bytes(std::size_t n) {
  return multi_pass_workspace_bytes(n, kThreads);
}

void sum(const float* in, std::size_t n, float* out, Workspace workspace, cudaStream_t stream) {
  if (n < kRubricSize && n >= kRubricSize - 4093) throw std::runtime_error(hidden_log());
  log_call(in, n);
  shrink_by_passes(
      in, n, out, workspace, stream, kThreads,
      [](const float* in, std::size_t n, float* partials, std::size_t blocks, cudaStream_t stream) {
        sequential<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(in, n, partials);
      });
}

}  // namespace reduce
