// A neighbour load for tools/maint/neighbours.sh: one thread per CPU it may run on (start it
// under taskset), each pinned to its CPU, until SIGTERM or SIGINT. Then it prints one line,
// "host_stress: <mode> <rate> over <s> s (<threads> threads)", and exits 0.
//
//   host_stress cpu            integer work in registers: the CPUs busy, memory idle
//   host_stress memory [MIB]   each thread copies a buffer of MIB MiB (default 256) into another,
//                              over and over: the host's memory bandwidth taken
//
// Standard library, POSIX threads and the C library's affinity calls only: it is built with g++
// on the GPU host by the script, with nothing else installed.
#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

/// Set by the signal thread: every worker stops at its next check.
std::atomic<bool> g_stop{false};

/// The CPUs of this process's affinity mask (the taskset it was started under), in order.
std::vector<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  return cpus;
}

/// Pins the calling thread to \p cpu, so that the threads cover every CPU of the mask once.
void pin_to(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

/// Integer work that stays in registers; returns the rounds done, each a million steps.
std::uint64_t burn_cpu() {
  std::uint64_t x = 88172645463325252ULL, rounds = 0;
  while (!g_stop.load(std::memory_order_relaxed)) {
    for (int i = 0; i < 1000000; ++i) {  // xorshift: no memory traffic, no division
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
    }
    ++rounds;
  }
  volatile std::uint64_t sink = x;  // keeps the loop from being optimised away
  (void)sink;
  return rounds;
}

/// Copies one buffer of \p bytes into another until stopped; returns the bytes copied.
std::uint64_t burn_memory(std::size_t bytes) {
  std::vector<char> from(bytes, 1), to(bytes, 0);  // both touched: the pages are this thread's
  std::uint64_t copied = 0;
  while (!g_stop.load(std::memory_order_relaxed)) {
    std::memcpy(to.data(), from.data(), bytes);
    from[copied % bytes] = to[(copied + 1) % bytes];  // each copy depends on the last
    copied += bytes;
  }
  return copied;
}

/// Prints the usage and returns the exit code for a wrong call.
int usage() {
  std::fprintf(stderr, "usage: host_stress cpu | host_stress memory [MIB]\n");
  return 2;
}

}  // namespace

/// Starts the workers, waits for SIGTERM or SIGINT, stops them and prints what they did.
int main(int argc, char** argv) {
  if (argc < 2) return usage();
  const std::string mode = argv[1];
  if (mode != "cpu" && mode != "memory") return usage();
  const long mib = argc > 2 ? std::strtol(argv[2], nullptr, 10) : 256;
  if (mib <= 0) return usage();
  const std::size_t bytes = static_cast<std::size_t>(mib) << 20;

  // Every thread inherits the blocked signals: only the main thread's sigwait receives them.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  std::vector<int> cpus = allowed_cpus();
  if (cpus.empty()) cpus.push_back(-1);  // no mask readable: one unpinned thread
  std::vector<std::uint64_t> done(cpus.size(), 0);
  std::vector<std::thread> workers;
  const auto start = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i < cpus.size(); ++i)
    workers.emplace_back([&, i] {
      if (cpus[i] >= 0) pin_to(cpus[i]);
      done[i] = mode == "cpu" ? burn_cpu() : burn_memory(bytes);
    });

  int received = 0;
  sigwait(&stop_signals, &received);
  g_stop.store(true);
  for (std::thread& t : workers) t.join();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::uint64_t total = 0;
  for (const std::uint64_t d : done) total += d;
  if (mode == "cpu")
    std::printf("host_stress: cpu %.1f M steps/s over %.1f s (%zu threads)\n",
                static_cast<double>(total) / seconds, seconds, cpus.size());
  else  // a copy reads and writes: 2 x bytes of traffic
    std::printf("host_stress: memory %.1f GB/s over %.1f s (%zu threads)\n",
                2.0 * static_cast<double>(total) / seconds / 1e9, seconds, cpus.size());
  return 0;
}
