// Where a lab's launch-bound calls spend their time: the runner's timed loop (poison the output
// and the workspace, call, copy the result) replayed in one process for several sum libraries,
// whole and by parts, at lab 15's launch-bound sizes. Each line: the GPU's time per call over a
// request of 16 calls (CUDA events) and the host's time to queue it.
//
//   nvcc -arch=sm_90 -O2 -o replay tools/maint/runner_loop_replay.cu -ldl
//   ./replay cap build/solutions/lib/lib15_capstone_sum.so cub build/references/lib/libcub_sum.so
//
// docs/results/capstone/runner_loop_replay_h200.txt is its output on an H200.
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>
struct Workspace {
  void* data;
  size_t bytes;
};
struct FloatLab {
  size_t (*ws)(size_t);
  void (*run)(const float*, size_t, float*, Workspace, cudaStream_t);
};
#define CK(x)                                           \
  do {                                                  \
    cudaError_t err_ = (x);                             \
    if (err_ != cudaSuccess) {                          \
      printf("%s: %s\n", #x, cudaGetErrorString(err_)); \
      exit(1);                                          \
    }                                                   \
  } while (0)
static double pct(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[size_t(p * (v.size() - 1))];
}
int main(int argc, char** argv) {
  std::vector<const FloatLab*> labs;
  std::vector<std::string> names;
  for (int i = 1; i < argc; i += 2) {
    void* h = dlopen(argv[i + 1], RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      printf("dlopen %s\n", dlerror());
      return 1;
    }
    auto get = (const FloatLab* (*)())dlsym(h, "reduce_sum_lab");
    labs.push_back(get());
    names.push_back(argv[i]);
  }
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  const int K = 16;
  std::vector<float*> in(K);
  for (auto& p : in) {
    CK(cudaMalloc(&p, 4096 * 4 + 256));
    std::vector<float> h(4096 + 64, 1.0f);
    CK(cudaMemcpy(p, h.data(), h.size() * 4, cudaMemcpyHostToDevice));
  }
  float *out, *capture;
  void* aux;
  CK(cudaMalloc(&out, 256));
  CK(cudaMalloc(&capture, 256 * K));
  CK(cudaMalloc(&aux, 1 << 20));
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  std::vector<cudaEvent_t> ev(2 * K);
  for (auto& x : ev) CK(cudaEventCreate(&x));
  const char* modes[] = {"runner", "no-poison", "kernel-only", "per-call"};
  for (int round = 0; round < 2; ++round)
    for (size_t n : {3160ul, 3457ul, 3500ul, 3834ul, 4053ul})
      for (size_t li = 0; li < labs.size(); ++li) {
        const FloatLab* lab = labs[li];
        const size_t wsb = lab->ws(n);
        for (int mode = 0; mode < 4; ++mode) {
          std::vector<double> gpu, host, kern;
          for (int r = 0; r < 120; ++r) {
            CK(cudaStreamSynchronize(s));
            std::this_thread::sleep_for(std::chrono::microseconds(500));
            auto t0 = std::chrono::steady_clock::now();
            CK(cudaEventRecord(e0, s));
            for (int k = 0; k < K; ++k) {
              if (mode <= 0) {
                CK(cudaMemsetAsync(out, 0xFF, 4, s));
                if (wsb) CK(cudaMemsetAsync(aux, 0xFF, wsb, s));
              }
              if (mode == 3) CK(cudaEventRecord(ev[2 * k], s));
              lab->run(in[k], n, out, Workspace{aux, wsb}, s);
              if (mode == 3) CK(cudaEventRecord(ev[2 * k + 1], s));
              if (mode != 2) CK(cudaMemcpyAsync(capture + k, out, 4, cudaMemcpyDeviceToDevice, s));
            }
            CK(cudaEventRecord(e1, s));
            auto t1 = std::chrono::steady_clock::now();
            CK(cudaStreamSynchronize(s));
            float ms;
            CK(cudaEventElapsedTime(&ms, e0, e1));
            if (r < 10) continue;  // warm-up
            gpu.push_back(ms * 1e3 / K);
            host.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / K);
            if (mode == 3)
              for (int k = 0; k < K; ++k) {
                CK(cudaEventElapsedTime(&ms, ev[2 * k], ev[2 * k + 1]));
                kern.push_back(ms * 1e3);
              }
          }
          printf(
              "r%d n=%zu %-4s ws=%-6zu %-11s gpu/call med %6.2f p90 %6.2f | enqueue/call med %5.2f "
              "p90 %5.2f",
              round, n, names[li].c_str(), wsb, modes[mode], pct(gpu, .5), pct(gpu, .9),
              pct(host, .5), pct(host, .9));
          if (mode == 3)
            printf(" | call alone med %5.2f p90 %5.2f max %6.2f", pct(kern, .5), pct(kern, .9),
                   pct(kern, 1));
          printf("\n");
        }
      }
  return 0;
}
