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

/// The host's timing lock: the correctness steps of several submissions share it, and a
/// benchmark holds it alone. A benchmark's clock is the host's as well as the GPU's: another
/// submission's tests and sanitizer runs, on any GPU of the host, load the CPUs and stretch
/// it (measured on two H100s of one host: 0 performance points for "clocks disagree", and
/// fractions up to 10 % apart). A waiting benchmark goes before correctness steps that ask
/// after it, so that benchmarks are not starved by a stream of submissions. Meets the
/// SharedMutex requirements (std::shared_lock, std::unique_lock).
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

/// The one TimingLock of this process (every worker of a batch, whatever its GPU).
TimingLock& host_timing_lock();

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
/// GPU alone (CUDA_VISIBLE_DEVICES); with \p gpus empty, one worker on the default GPU. Items
/// start in order; with several workers they may finish out of order. After each item the
/// shared course build is checked (SharedCourse::restore()); with several workers a change
/// stops the run instead of a rebuild under the others' feet. An exception while preparing or
/// finishing an item costs that item only: it gets PipelineCallbacks::error, with
/// internal_error_message() unless it was a ConfigError or a SubmissionVoid.
void grade_pipeline(std::size_t count, int build_ahead, const std::vector<std::string>& gpus,
                    const Course& course, const Rubric& rubric, const GpuProbe& gpu,
                    Progress& progress, SharedCourse& shared, const PipelineCallbacks& callbacks);

}  // namespace reduce::grade
