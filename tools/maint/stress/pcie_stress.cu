// A neighbour load for tools/maint/neighbours.sh: host-to-device and device-to-host copies of
// pinned buffers (256 MiB by default), both directions at once on two streams, on the current
// CUDA device, until SIGTERM or SIGINT. Then it prints one line, "pcie_stress: copies <GB/s>
// (<GB/s> each way) over <s> s", and exits 0. "pcie_stress idle" only holds a context on the device
// (its share of the GPU without any traffic), for telling the two apart.
//
//   pcie_stress [MIB]   copies of MIB MiB each way (default 256)
//   pcie_stress idle    a context and nothing else
//
// No kernels: the copy engines and the link are the load, as another submission's tests copying
// their inputs would be (an upper bound: these copies never stop).
#include <cuda_runtime.h>
#include <pthread.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace {

/// Set by the signal thread: the copy loop stops after its current pair of copies.
std::atomic<bool> g_stop{false};

/// Exits with the CUDA error's text when \p e is not cudaSuccess.
void check(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return;
  std::fprintf(stderr, "pcie_stress: %s: %s\n", what, cudaGetErrorString(e));
  std::exit(1);
}

/// Waits for SIGTERM or SIGINT (blocked in every thread), then asks the loop to stop.
void wait_for_stop(sigset_t signals) {
  int received = 0;
  sigwait(&signals, &received);
  g_stop.store(true);
}

/// Copies \p bytes each way until stopped; prints the rates.
void copy_loop(std::size_t bytes) {
  void *host_from = nullptr, *host_to = nullptr, *device_to = nullptr, *device_from = nullptr;
  check(cudaMallocHost(&host_from, bytes), "cudaMallocHost");
  check(cudaMallocHost(&host_to, bytes), "cudaMallocHost");
  check(cudaMalloc(&device_to, bytes), "cudaMalloc");
  check(cudaMalloc(&device_from, bytes), "cudaMalloc");
  std::memset(host_from, 1, bytes);
  check(cudaMemset(device_from, 2, bytes), "cudaMemset");
  cudaStream_t up = nullptr, down = nullptr;
  check(cudaStreamCreateWithFlags(&up, cudaStreamNonBlocking), "cudaStreamCreate");
  check(cudaStreamCreateWithFlags(&down, cudaStreamNonBlocking), "cudaStreamCreate");
  double copies = 0;
  const auto start = std::chrono::steady_clock::now();
  while (!g_stop.load()) {
    check(cudaMemcpyAsync(device_to, host_from, bytes, cudaMemcpyHostToDevice, up), "h2d");
    check(cudaMemcpyAsync(host_to, device_from, bytes, cudaMemcpyDeviceToHost, down), "d2h");
    check(cudaStreamSynchronize(up), "h2d");
    check(cudaStreamSynchronize(down), "d2h");
    copies += 1;
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double each_way = copies * static_cast<double>(bytes) / seconds / 1e9;
  std::printf("pcie_stress: copies %.1f GB/s (%.1f each way) over %.1f s\n", 2 * each_way, each_way,
              seconds);
}

}  // namespace

/// Sets up the signal thread, then copies (or idles) until stopped.
int main(int argc, char** argv) {
  const bool idle = argc > 1 && std::strcmp(argv[1], "idle") == 0;
  const long mib = argc > 1 && !idle ? std::strtol(argv[1], nullptr, 10) : 256;
  if (mib <= 0) {
    std::fprintf(stderr, "usage: pcie_stress [MIB] | pcie_stress idle\n");
    return 2;
  }
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);  // the CUDA runtime's threads inherit it
  check(cudaFree(nullptr), "creating a context");
  std::thread stopper(wait_for_stop, signals);
  if (idle) {
    while (!g_stop.load()) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    std::printf("pcie_stress: idle context\n");
  } else {
    copy_loop(static_cast<std::size_t>(mib) << 20);
  }
  stopper.join();
  return 0;
}
