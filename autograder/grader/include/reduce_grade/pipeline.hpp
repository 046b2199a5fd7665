/// \file
/// \brief Grading many submissions: builds on the CPU side by side, GPU work one submission per
/// GPU.
#pragma once

#include <reduce_grade/course.hpp>
#include <reduce_grade/grader.hpp>
#include <reduce_grade/rubric.hpp>
#include <reduce_grade/shared_course.hpp>
#include <reduce_grade/util.hpp>

#include <condition_variable>
#include <cstddef>
#include <filesystem>
#include <functional>
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

/// The message of a submission, or a step of one, whose grading stopped on an exception inside
/// the grader (a bug, not the submission's doing): "could not grade: internal error: <what>".
std::string internal_error_message(const std::string& what);

/// True when \p message is one that internal_error_message() wrote.
bool is_internal_error(const std::string& message);

/// The message of the exception being handled (call it inside a catch block only): that of a
/// ConfigError or a SubmissionVoid as it is, any other as internal_error_message().
std::string handled_exception_message();

/// A test-only fault: when the environment variable REDUCE_GRADE_TEST_THROW names this
/// submission (its label, else its folder's name), throws std::runtime_error; with ":other"
/// after the name, a value that is not a std::exception. The grader's own tests use it to show
/// that an exception costs one submission only. The lab's process cannot set the grader's
/// environment.
void inject_test_fault(const GradeOptions& options);

/// What the pipeline asks of its caller; every callback runs under one lock, never two at once.
struct PipelineCallbacks {
  std::function<GradeOptions(std::size_t item)> options;             ///< how to grade item i
  std::function<void(std::size_t item, const GradeReport&)> report;  ///< item i was graded
  /// Item i was not graded; \p withheld: because the submission changed the course while it
  /// ran (SubmissionVoid), not because grading failed.
  std::function<void(std::size_t item, const std::string& why, bool withheld)> error;
};

/// Grades items 0..count-1. Up to \p build_ahead items beyond those on a GPU are built ahead on
/// the CPU. One worker per entry of \p gpus finishes items (tests, sanitizer, benchmark) on its
/// GPU alone (CUDA_VISIBLE_DEVICES); with \p gpus empty, one worker on the default GPU. With
/// several distinct GPUs, the workers of each GPU and every process they start run on that GPU's
/// cpu_share() of the host (sched_setaffinity; the report's `cpus` says which), and builds on
/// all of them. Items
/// start in order; with several workers they may finish out of order. After each item the
/// shared course build is checked (SharedCourse::restore()); with several workers a change
/// stops the run instead of a rebuild under the others' feet. An exception while preparing or
/// finishing an item costs that item only: it gets PipelineCallbacks::error, with
/// internal_error_message() unless it was a ConfigError or a SubmissionVoid.
void grade_pipeline(std::size_t count, int build_ahead, const std::vector<std::string>& gpus,
                    const Course& course, const Rubric& rubric, const GpuProbe& gpu,
                    Progress& progress, SharedCourse& shared, const PipelineCallbacks& callbacks);

}  // namespace reduce::grade
