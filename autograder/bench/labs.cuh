/// \file
/// \brief The operations' rows <op>/<implementation>/<n>: the ceiling probe (stream_read), CUB,
/// the labs (trusted ones loaded into this process, graded ones called through their runner)
/// and the CPU loop; and where the labs come from.
#pragma once

#include "operations.cuh"
#include "reporting.hpp"
#include "runner.hpp"

#include <reduce/lab.cuh>

#include <benchmark/benchmark.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace reduce::bench {

/// Type-erased call of one implementation: the output is a float or an int64 index.
using RunFn =
    std::function<void(const float*, std::size_t, void*, reduce::Workspace, cudaStream_t)>;

/// One row's implementation: something that computes an operation on the device (or, for
/// "cpu", the host).
struct Impl {
  const Operation* op = nullptr;                            ///< what it computes
  std::string name;                                         ///< the row's middle part
  std::function<std::size_t(std::size_t)> workspace_bytes;  ///< its workspace for n floats
  RunFn run;                                                ///< one call (trusted rows)
  bool checks_result = true;       ///< false for the probe, whose output is no result
  bool on_host = false;            ///< the CPU loop
  std::shared_ptr<Runner> runner;  ///< a graded lab: calls go to its runner (graded_runner())
  std::size_t library = 0;         ///< a graded lab: its library among the runner's
};

/// A trusted lab library (the ladder), loaded into this process.
struct TrustedLibrary {
  std::string name;        ///< the lab's name, the rows' middle part
  void* handle = nullptr;  ///< dlopen()'s
};

/// The trusted labs of REDUCE_LABS ("name=path,...") and REDUCE_LABS_FILE (one "name=path" per
/// line: <build>/<tree>/labs.txt), each loaded once; one that does not load is reported on
/// stderr and left out.
const std::vector<TrustedLibrary>& trusted_libraries();

/// A lab being graded: an entry "name=op:path" of REDUCE_RUNNER_LABS.
struct GradedEntry {
  std::string name;  ///< the rows' middle part
  std::string op;    ///< the operation (or segmented operation) it is timed on
  std::string path;  ///< its library
};

/// Every well-formed entry of REDUCE_RUNNER_LABS, in order (a malformed one is reported on
/// stderr once and left out).
const std::vector<GradedEntry>& graded_entries();

/// The course's references (REDUCE_REFERENCE_LABS, "name=op:path,..."): the reference solutions
/// of the labs judged against them, in rows named <op>/reference-<lab row>/<n>. Timed as a graded
/// lab is (bench_graded), in the same run, so that the ratio of the two is that lab's speed on
/// this GPU relative to the course's; in a runner of their own (reference_runner()).
const std::vector<GradedEntry>& reference_entries();

/// The references' lab process: outside the sandbox (the course's own code), holding every
/// library of REDUCE_REFERENCE_LABS (null without any). Its rows run first, before any graded
/// lab's process starts, and end_references() ends it.
std::shared_ptr<Runner> reference_runner();

/// Stops the references' process for good, where it was started: the first row that is not a
/// reference's calls this, so that it holds no GPU memory and runs nothing beside a lab.
void end_references();

/// The one lab process of every graded row: it holds every library of REDUCE_RUNNER_LABS, each
/// loaded when its first row calls it, and starts anew only after a row whose lab crashed it,
/// hung or poisoned its context (the row's exception stops it). So no other lab process is
/// alive while a row is timed, and a submission's benchmark makes one lab process, not one per
/// row. It starts with the first graded row, after the probe and the first CUB rows.
std::shared_ptr<Runner> graded_runner();

/// The index of the library \p path among graded_runner()'s.
std::size_t graded_library(const std::string& path);

/// Samples of a trusted device row (CUB, the stream read) in a run that grades labs: there it is
/// a comparison in the report, never the verdict (that is the ceiling probe's), and 0.1 s of
/// samples took a quarter of a second per row at 2^28 floats.
inline constexpr int kTrustedSamplesWhenGrading = 30;

/// How long the trusted device row \p b samples: 0.1 s of samples, or
/// kTrustedSamplesWhenGrading samples where REDUCE_REMOTE_LABS names labs being graded.
void set_trusted_sampling(benchmark::internal::Benchmark* b);

/// The cub::DeviceReduce row of \p op.
Impl cub_impl(const Operation& op);

/// A trusted row (CUB, the probe, a trusted lab): each sample poisons the output and the
/// workspace and flushes L2 outside the timed region, times one call with CUDA events, and
/// checks the result, on kRotation rotating inputs.
void bench_trusted(benchmark::State& state, Rows& rows, const RowId& id, const Impl& impl);

/// Registers every operation's rows at every size, in order: per operation with a lab, the
/// probe, CUB, its labs and the CPU loop. Returns the (operation, implementation) pairs, for
/// print_tables().
std::vector<std::pair<const Operation*, std::string>> register_operation_rows(
    Rows& rows, const std::vector<std::size_t>& sizes);

}  // namespace reduce::bench
