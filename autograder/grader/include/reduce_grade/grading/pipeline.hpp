/// \file
/// \brief Grading many submissions: builds on the CPU side by side, GPU work one submission per
/// GPU.
#pragma once

#include <reduce_grade/base/course.hpp>
#include <reduce_grade/base/rubric.hpp>
#include <reduce_grade/base/util.hpp>
#include <reduce_grade/grading/grader.hpp>
#include <reduce_grade/grading/shared_course.hpp>
#include <reduce_grade/processes/gpu_share.hpp>
#include <reduce_grade/submission/errors.hpp>

#include <condition_variable>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

namespace reduce::grade {

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
