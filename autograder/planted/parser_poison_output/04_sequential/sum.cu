// Planted case: a correct rung 4 that prints, on every call, to its standard output and its
// standard error, lines made to break a naive parser of what checkers and sanitizers print:
// sanitizer summaries and GoogleTest counts beyond 64 bits, negative counts, GoogleTest lines
// with NUL bytes inside, a line of 100 KB, and a truncated Google Benchmark file whose first
// time is 1e999. It prints the long line while its process has printed less than 1 MiB and the
// short ones while it has printed less than 3 MiB, so that it stays under the lab's output cap
// (4 MiB a process): its output may cost it no more than an output flood would, and must never
// stop the grader. Nothing the lab's process prints is parsed for a verdict, so it keeps its
// points.
// Rung 4: sequential addressing.
//
// Changed from rung 3: fold the array in half instead of pairing neighbours. At each step the
// first `stride` threads add element t + stride to element t, so consecutive lanes touch
// consecutive words: no bank conflicts, and the busy threads stay contiguous. Still wasteful:
// half the threads of every block do nothing after they load their one element.
#include <reduce/lab.cuh>
#include <reduce/multi_pass.cuh>

#include <unistd.h>

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

/// Bytes printed so far by this process, on both streams.
std::size_t printed = 0;

void say(const std::string& text) {
  for (int fd : {1, 2}) {
    std::size_t done = 0;
    while (done < text.size()) {
      const ssize_t put = write(fd, text.data() + done, text.size() - done);
      if (put <= 0) break;
      done += static_cast<std::size_t>(put);
    }
    printed += done;
  }
}

/// Lines a parser that trusts what it reads would choke on.
void print_poison() {
  using namespace std::string_literals;
  static const std::string kShort =
      "========= ERROR SUMMARY: 99999999999999999999999 errors\n"
      "========= RACECHECK SUMMARY: 99999999999999999999 hazards displayed (1 errors, "
      "99999999999999999999 warnings)\n"
      "========= RACECHECK SUMMARY: -7 hazards displayed (-3 errors, -4 warnings)\n"
      "========= ERROR SUMMARY: 1e999 errors\n"
      "[==========] 99999999999999999999 tests from 1 test suite ran. (-1 ms total)\n"
      "[  PASSED  ] -5 tests.\n"
      "[  FAILED  ] 99999999999999999999 tests, listed below:\n"
      "[  FAILED  ] SumTest.\0Matches\0Bitwise (18446744073709551616 ms)\n"s
      "[ RUN      ] Sum\0Exact/MatchesBitwise/\0\n"s
      "[       OK ] \0\0\0 (99999999999999999999 ms)\n"s
      "[  SKIPPED ] \n[ RUN      ]\n[       OK ]\n[  FAILED  ]\n"
      "{\"benchmarks\": [{\"real_time\": 1e999";
  static const std::string kLong = "\n[ RUN      ] " + std::string(100 * 1024, 'A') + "\n";
  if (printed < (std::size_t{1} << 20)) say(kLong);
  if (printed < (std::size_t{3} << 20)) say(kShort + "\n");
}

}  // namespace

std::size_t sum_workspace_bytes(std::size_t n) { return multi_pass_workspace_bytes(n, kThreads); }

void sum(const float* in, std::size_t n, float* out, Workspace workspace, cudaStream_t stream) {
  print_poison();
  shrink_by_passes(in, n, out, workspace, stream, kThreads,
                   [](const float* in, std::size_t n, float* partials, std::size_t blocks,
                      cudaStream_t stream) {
                     sequential<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(in, n,
                                                                                         partials);
                   });
}

}  // namespace reduce
