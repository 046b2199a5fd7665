/// \file
/// \brief What each GPU of a grading has to itself: its timing lock, its share of the host's
/// CPUs and its large-memory slots.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <filesystem>
#include <mutex>
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

}  // namespace reduce::grade
