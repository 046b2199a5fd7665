/// \file
/// \brief The operations' rows <op>/<implementation>/<n>: the ceiling probe (stream_read), CUB,
/// the labs (trusted ones loaded into this process, graded ones called through their runner)
/// and the CPU loop; and where the labs come from.
#pragma once

#include "operations.cuh"
#include "reporting.hpp"
#include "runner.hpp"

#include <reduce/lab.cuh>
#include <reduce_vocabulary/launch_spec.hpp>

#include <benchmark/benchmark.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace reduce::bench {

class BenchSession;  // session.cuh

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
  std::shared_ptr<Runner> runner;  ///< a graded lab: calls go to its runner
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

/// The libraries of \p labs, each once, in order: what a runner of those labs holds.
std::vector<std::string> library_paths(const std::vector<launch::RunnerLab>& labs);

/// Samples of a trusted device row (CUB, the stream read) in a run that grades labs: there it is
/// a comparison in the report, never the verdict (that is the ceiling probe's), and 0.1 s of
/// samples took a quarter of a second per row at 2^28 floats.
inline constexpr int kTrustedSamplesWhenGrading = 30;

/// How long the trusted device row \p b samples: 0.1 s of samples, or \p when_grading samples
/// where \p session grades labs (BenchSession::graded()).
void set_trusted_sampling(benchmark::internal::Benchmark* b, const BenchSession& session,
                          int when_grading = kTrustedSamplesWhenGrading);

/// The cub::DeviceReduce row of \p op.
Impl cub_impl(const Operation& op);

/// A trusted row (CUB, the probe, a trusted lab): each sample poisons the output and the
/// workspace and flushes L2 outside the timed region, times one call with CUDA events, and
/// checks the result, on kRotation rotating inputs made from \p session's key. It ends the
/// references' process first (BenchSession::end_references()).
void bench_trusted(benchmark::State& state, BenchSession& session, Rows& rows, const RowId& id,
                   const Impl& impl);

/// Registers every operation's rows at every size, in order: per operation with a lab, the
/// probe, CUB, its labs and the CPU loop (the course's references before all of them). The rows
/// reach \p session, which must outlive them. Returns the (operation, implementation) pairs, for
/// print_tables().
std::vector<std::pair<const Operation*, std::string>> register_operation_rows(
    Rows& rows, const std::vector<std::size_t>& sizes, BenchSession& session);

}  // namespace reduce::bench
