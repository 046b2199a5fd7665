/// \file
/// \brief The benchmark step: one reduce_bench process times every benchmarked operation of the
/// labs graded, and each lab's fraction comes from its rows.
#pragma once

#include <reduce_grade/base/course.hpp>
#include <reduce_grade/base/manifest.hpp>
#include <reduce_grade/base/rubric.hpp>
#include <reduce_grade/observations/facts.hpp>
#include <reduce_grade/processes/isolation.hpp>

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace reduce::grade {

/// One built lab and the operations its benchmark times.
struct BenchTarget {
  std::string lab;            ///< lab folder
  std::vector<OpPlan> plans;  ///< its operations (those without a bench_op are not timed)
  /// Set by run_benchmarks(): the course build has the lab's measure for each of its rows, and
  /// the rubric judges the lab against it (LabRubric::timed_measure()).
  bool references = false;
  /// Set by run_benchmarks(): the sizes the lab is timed at (the rubric's size, then its
  /// launch-bound size where it has one), each minus 1..4093 (at most a quarter of it) drawn
  /// from the run's key.
  std::vector<std::size_t> sizes;
};

/// Runs the benchmark of \p course (build_course()) once for several labs of \p labs (a
/// submission's build, whose manifest names each library's rows): every benchmarked operation of
/// every lab at the rubric's size, beside the ceiling probe and CUB, in one process (one probe,
/// one set of inputs). A lab's fraction is that of its slowest operation. A lab whose rows are
/// missing (the process died in another lab's code, say) gets a problem and PerfFacts::
/// unattributed; the caller may rerun it alone, with another key. \p key is the run's key
/// (reduce::benchmark_key() of the grading secret): every timed input and the timed size come
/// from it alone, so no test's input tells anything about them.
/// \p cuda_device pins it to one GPU (CUDA_VISIBLE_DEVICES; empty: the default). \p counts, when
/// given, gets the benchmark process and the lab processes it started added.
std::map<std::string, PerfFacts> run_benchmarks(
    const BuildManifest& course, const BuildManifest& labs, const std::vector<BenchTarget>& targets,
    const Rubric& rubric, std::uint64_t key, const std::filesystem::path& log_dir,
    const Isolation& isolation = {}, const std::string& cuda_device = {},
    ProcessCounts* counts = nullptr);

/// run_benchmarks() for one lab (calibrate times the labs one at a time).
PerfFacts run_benchmark(const BuildManifest& course, const BuildManifest& labs,
                        const std::string& lab, const std::vector<OpPlan>& plans,
                        const Rubric& rubric, std::uint64_t key,
                        const std::filesystem::path& log_dir, const Isolation& isolation = {},
                        const std::string& cuda_device = {}, ProcessCounts* counts = nullptr);

}  // namespace reduce::grade
