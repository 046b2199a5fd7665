// The benchmark of every operation, and the ladder table.
//
// Times each operation of the labs it is given (sum, maximum, minimum, product, mean, argmax,
// and lab 18's sum_compensated and sum_reproducible, whose rows also report their error)
// beside its cub::DeviceReduce counterpart, the ceiling probe (a pure streaming read) and a
// single-thread CPU loop, on the same buffers. Rows are named <op>/<implementation>/<n>; lab 17's
// <op>_<length>/<implementation>/<n>, beside floor/<n> (segmented.cuh).
//   REDUCE_LAUNCH_SPEC=<file>        the grader's launch spec (reduce_vocabulary/launch_spec.hpp):
//                                    the labs being graded, each in a lab runner process, the
//                                    course's references of those judged against them (timed
//                                    first, as graded labs are), the sizes, the run's key (the
//                                    grader's reduce::benchmark_key()) and the runner's sandbox;
//                                    read once, into the run's BenchSession (launch.hpp)
//   A person's run, without a spec:
//   REDUCE_LABS_FILE=<build>/<tree>/labs.txt  trusted labs loaded into this process (the ladder:
//                                    lines "04_sequential=/path/lib04_sequential_sum.so")
//   REDUCE_LABS="name=path,..."      the same, inline
//   --graded=name=op:path, --reference=name=op:path, --runner-prefix=word, --call-timeout-s=s
//                                    labs timed as the grader times them (launch.hpp; each flag
//                                    repeatable): tools/maint/lab15_rows.sh, neighbours.sh
//   REDUCE_BENCH_SIZES="2^26,2^28"  sizes (default 2^10, 2^12, ..., 2^30)
//   REDUCE_SEED=n                    the run's key (default: fresh each run): every input is
//                                    derived from it by SipHash
//   Either way:
//   REDUCE_BENCH_KEEP_WRONG=1        trusted rows with wrong results keep their numbers
//   REDUCE_SEGMENT_LENGTHS="16,2^20" lab 17's segment lengths (default 32,1024,32768,1048576)
//   REDUCE_SEGMENT_RAGGED="32,1024"  lab 17's ragged rows: mean lengths (default none)
//   --benchmark_filter=^sum/         Google Benchmark flags select rows and write JSON
//
// Method: four inputs with different contents, made on the GPU from keys derived from the run's key
// (reduce::derive_key()), rotate; the operations differ only in the rows of kOperations. Trusted
// rows: each sample poisons the output and the workspace and flushes L2 outside the timed region,
// times one call with CUDA events, and checks the result. Graded rows: each sample is one request
// to the lab's runner, up to 16 calls (one per distinct input, each result captured in stream
// order), timed by this process's clock from the request to the results being readable; the
// runner's own CUDA events are a second clock that must agree. Before every request, warm-ups
// included, every input it reads is made anew, whole, on the GPU from a fresh seed drawn from the
// keyed stream of the run's key (SipHash in counter mode, which no output inverts; the runner never
// sees the key), and its expected result computed in this process (timed_inputs.hpp); that happens
// outside both clocks, and every call's result is checked, the warm-ups' too. So no answer can be
// known, predicted or cached before the call reads its input. Rows report medians.
// Each row's verdict is a counter of its JSON (failure, wrong_results, warmup_wrong,
// clocks_agree: reduce_vocabulary/row_fields.hpp), kept where the row failed; its message is for
// people.
//
// Files: launch.cpp (the spec or the command line, read once), operations.cu (kOperations: each
// operation's CUB call, trusted inputs and checks), session.cu (the run's state: its key, the lab
// processes, the timed inputs they share, the ceiling probe's results), measurement.cu (the
// sampling loop of each trust level), labs.cu (the operations' rows), segmented.cuh (lab 17's
// rows), reporting.cpp (verdicts in the JSON), tables.cu, text.cpp.
#include "labs.cuh"
#include "launch.hpp"
#include "measurement.cuh"
#include "reporting.hpp"
#include "segmented.cuh"
#include "session.cuh"
#include "tables.cuh"
#include "text.hpp"

#include "cub_fixed_rows.hpp"

#include <reduce/ceiling.cuh>
#include <reduce/device_info.cuh>

#include <benchmark/benchmark.h>
#include <cub/version.cuh>

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using namespace reduce::bench;

/// The run's context in the JSON: the GPU, the ceiling probe, the seed and the CUBs.
void add_context(const reduce::DeviceInfo& gpu, const BenchSession& session) {
  const reduce::CeilingProbe& ceiling = session.ceiling();
  benchmark::AddCustomContext("gpu", gpu.name);
  benchmark::AddCustomContext("sm_count", std::to_string(gpu.sm_count));
  benchmark::AddCustomContext("theoretical_gbps", fixed(gpu.theoretical_bandwidth_gbps(), 1));
  benchmark::AddCustomContext("ceiling_gbps", fixed(ceiling.gbps(), 1));
  benchmark::AddCustomContext("ceiling_elements", std::to_string(ceiling.elements()));
  benchmark::AddCustomContext("ceiling_kernel", ceiling.kernel());
  benchmark::AddCustomContext("seed", std::to_string(session.seed()));
  // Where the graded rows' slowed-clock samples are seen from ("nvml"), or why they are not.
  benchmark::AddCustomContext("clock_watch", session.clocks().source());
  // Lab 17's CUB rows: "cub" with CUDA's own CUB, "cub_fixed" with the newest (if built).
  benchmark::AddCustomContext("cub_version", std::to_string(CUB_MAJOR_VERSION) + "." +
                                                 std::to_string(CUB_MINOR_VERSION) + "." +
                                                 std::to_string(CUB_SUBMINOR_VERSION));
  benchmark::AddCustomContext("cub_fixed_version", reduce::cub_fixed::available()
                                                       ? reduce::cub_fixed::cub_version()
                                                       : reduce::cub_fixed::kAbsent);
  for (const reduce::ProbeTiming& t : ceiling.timings())
    benchmark::AddCustomContext(std::string("probe ") + t.name, fixed(t.gbps, 1));
}

}  // namespace

int main(int argc, char** argv) {
  Rows rows;  // every row that ran: the tables' lines and the failed rows' verdicts
  const std::unique_ptr<benchmark::BenchmarkReporter> file_reporter =
      verdict_file_reporter(argc, argv, rows);
  HandFlags hand;
  try {
    hand = take_hand_flags(argc, argv);
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "reduce_bench: %s\n", e.what());
    return 2;
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  if (!reduce::has_gpu()) {
    std::printf("no CUDA device: the benchmark needs a GPU\n");
    return kNoGpuExitCode;  // as reduce-grade: nothing measured for want of a GPU
  }
  const reduce::DeviceInfo gpu = reduce::query_device();
  // The run's state, which every row reaches, from its launch read here once: after the GPU
  // check, so that a run without a GPU reads no spec and no REDUCE_SEED.
  std::optional<BenchSession> made;
  try {
    made.emplace(bench_launch(hand));
  } catch (const std::exception& e) {  // a spec or a variable that does not read
    std::fprintf(stderr, "reduce_bench: %s\n", e.what());
    return 2;
  }
  BenchSession& session = *made;
  session.measure_ceiling();
  add_context(gpu, session);

  const std::vector<std::size_t> sizes = session.sizes();
  const auto impls = register_operation_rows(rows, sizes, session);
  // Lab 17's rows (segmented reductions), after the floor of each size: segmented.cuh.
  const auto [families, segmented_names] = register_segmented_rows(rows, sizes, session);
  benchmark::RunSpecifiedBenchmarks(nullptr, file_reporter.get());
  print_tables(rows, sizes, impls, gpu, session.ceiling());
  print_segmented_tables(rows, sizes, families, segmented_names);
  benchmark::Shutdown();
  return 0;
}
