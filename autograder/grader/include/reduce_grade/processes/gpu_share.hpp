/// \file
/// \brief What each GPU of a grading has to itself: its timing lock, its share of the host's
/// CPUs, its large-memory slots and how many checkers its memory holds at once.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace reduce::grade {

/// A timing lock: the correctness steps of the submissions graded on one GPU share it, and a
/// benchmark holds it alone. A waiting benchmark goes before correctness steps that ask after
/// it, so that benchmarks are not starved by a stream of submissions. Meets the SharedMutex
/// requirements (std::shared_lock, std::unique_lock).
class TimingLock {
 public:
  void lock();           ///< alone: waits for every holder, ahead of later shared requests
  void unlock();         ///< ends lock()
  void lock_shared();    ///< with other sharers; waits while a benchmark runs or waits
  void unlock_shared();  ///< ends lock_shared()

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  int sharing_ = 0;        // holders of lock_shared()
  int waiting_alone_ = 0;  // lock() callers not yet in
  bool alone_ = false;     // lock() is held
};

/// The TimingLock of GPU \p cuda_device (CUDA_VISIBLE_DEVICES; empty: the default GPU), one per
/// GPU for the whole process; with \p host_wide (limits.timing_lock = "host") one for every GPU.
/// Per GPU by default: what once stretched a benchmark's host clock was another GPU's tests
/// loading the CPUs (two H100s of one host, "clocks disagree"); each GPU's workers now run on
/// CPUs of their own (cpu_share()), so another GPU's work no longer shares the benchmark's CPUs.
TimingLock& timing_lock(const std::string& cuda_device, bool host_wide);

/// The share of \p allowed (the CPUs this process may use, ascending) for the workers of the
/// \p part-th of \p parts GPUs: contiguous, as even as the count allows, never empty (with more
/// parts than CPUs, parts share CPUs round robin).
std::vector<int> cpu_share(const std::vector<int>& allowed, std::size_t part, std::size_t parts);

/// "0-7,12": CPU numbers as ranges, for reports.
std::string cpu_list_text(const std::vector<int>& cpus);

/// The folder of the large-memory slots of GPU \p cuda_device (CUDA_VISIBLE_DEVICES; empty: the
/// default GPU), one per GPU for the whole process: every submission graded on that GPU at once
/// draws from the same slots, so that several of them on one GPU (`--gpus 0,0`) hold no more
/// inputs of several GiB at once than one does. Made on first use, removed when the process
/// ends; the lab's sandbox does not show it.
std::filesystem::path gpu_memory_slots(const std::string& cuda_device);

/// The correctness phase's processes at once (limits.parallel_checks) and the sanitizer's share
/// of them (limits.sanitizer_checkers).
struct CheckerCounts {
  int parallel_checks = 0;     ///< test and sanitizer checkers at once
  int sanitizer_checkers = 0;  ///< of them, the sanitizer's
};

/// GPU memory per checker: each checker is a CUDA context of its own with its test inputs.
inline constexpr std::uint64_t kGpuBytesPerChecker = std::uint64_t{2} << 30;

/// The checkers a GPU of \p total_bytes of memory runs at once, of the rubric's \p asked: one
/// per kGpuBytesPerChecker of its memory (to the nearest GiB: an "8 GB" GPU that reports 8188
/// MiB counts as 8 GiB) and at least 2, never more than asked (a 15 GiB T4
/// runs 7, an 8 GiB GPU 4, an 80 or 141 GiB one the rubric's 8). The sanitizer's share shrinks
/// in proportion, rounded down, and stays at least 1. Without \p total_bytes (unread): \p asked.
CheckerCounts checkers_for_memory(std::optional<std::uint64_t> total_bytes,
                                  const CheckerCounts& asked);

/// The GPU memory a grading may use: \p total_bytes, or at most \p limit_gib GiB where that is
/// above 0 (the rubric's limits.gpu_memory_gib; also where the total cannot be read).
std::optional<std::uint64_t> usable_gpu_memory(std::optional<std::uint64_t> total_bytes,
                                               double limit_gib);

/// For the terminal: "7 processes at once, 1 of them the sanitizer's (15.0 GiB of GPU memory:
/// one per 2 GiB, at most the rubric's 8)", or "(the rubric's: the GPU's memory could not be
/// read)" without \p total_bytes.
std::string checkers_text(std::optional<std::uint64_t> total_bytes, const CheckerCounts& asked,
                          const CheckerCounts& used);

/// The total memory of GPU \p cuda_device (CUDA_VISIBLE_DEVICES; empty: the grader's own
/// CUDA_VISIBLE_DEVICES, or every GPU of the host), from `nvidia-smi --query-gpu=memory.total`;
/// where it names several GPUs, the smallest. nullopt when it cannot be read: no nvidia-smi, a
/// failed run, or a value that is not a number of MiB ("[N/A]"). Never throws.
std::optional<std::uint64_t> gpu_total_memory(const std::string& cuda_device);

}  // namespace reduce::grade
