// The operations' rows: where their labs come from, and how each kind of row is timed (trusted
// rows by CUDA events here, graded rows through their runner, the CPU loop by the host's clock).
#include "labs.cuh"

#include "measurement.cuh"
#include "session.cuh"
#include "text.hpp"

#include <reduce/ceiling.cuh>
#include <reduce/cuda_check.cuh>
#include <reduce/lab_entry_points.cuh>

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>

namespace reduce::bench {
namespace {

using reduce::Workspace;

constexpr std::size_t kExtraBytes = 256;  // keeps CUB's storage 256-byte aligned

/// A result of \p kind as read back into an int64 (an index, or a float's bits in its low
/// bytes), as a number.
double decode_result(ResultKind kind, std::int64_t bits) {
  if (is_index(kind)) return static_cast<double>(bits);
  float f;
  const auto word = static_cast<std::uint32_t>(bits);
  std::memcpy(&f, &word, sizeof f);
  return f;
}

/// Checks one call's result (\p bits as read back) and keeps it for the table: the first
/// wrong one, else the latest. Returns whether it was right.
bool check_result(const Operation& op, std::int64_t bits, const Expected& e, Row& row, int& wrong) {
  const double got = decode_result(op.kind(), bits);
  const bool ok = op.check(got, e);
  if (!ok) ++wrong;
  if (!ok || wrong == 0) {
    row.result = got;
    row.error = std::fabs(got - e.value);
  }
  return ok;
}

/// A row's time and rate: \p samples_ms per call over n floats read.
void report_rate(benchmark::State& state, Row& row, const std::vector<double>& samples_ms,
                 std::size_t n) {
  const double bytes = static_cast<double>(n) * sizeof(float);
  row.median_us = median(samples_ms) * 1e3;
  row.gbps = bytes / (row.median_us * 1e-6) / 1e9;
  state.SetBytesProcessed(static_cast<std::int64_t>(bytes) * state.iterations());
  state.counters["median_us"] = row.median_us;
  state.counters["median_gbps"] = row.gbps;
}

void bench_host(benchmark::State& state, BenchSession& session, Rows& rows, const Operation& op,
                std::size_t n) {
  Row& row = rows.open(RowId::of(op.name, "cpu", n));
  Inputs& in = session.trusted_inputs(op, n);
  const std::vector<float> host = in.device[0].to_host();  // outside the clock
  std::vector<double> samples;
  double got = 0;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    got = op.cpu_loop(host, op.identity);
    benchmark::DoNotOptimize(got);
    const std::chrono::duration<double> seconds = std::chrono::steady_clock::now() - start;
    state.SetIterationTime(seconds.count());
    samples.push_back(seconds.count() * 1e3);
  }
  row.median_us = median(samples) * 1e3;
  row.gbps = n * sizeof(float) / (row.median_us * 1e-6) / 1e9;
  row.result = got;
  row.error = std::fabs(got - in.expected[0].value);  // a float loop may be inexact
  state.counters["median_us"] = row.median_us;
  state.counters["median_gbps"] = row.gbps;
  pass_row(state, row);
}

/// A graded lab: each sample is one request to its runner, one call per distinct input, timed
/// by this process's clock; every call's result is the copy captured in stream order right
/// after it. Before every request, warm-ups included, the inputs it reads are made anew, whole,
/// from fresh seeds (RegeneratedInputs, outside both clocks), and every call's result is
/// checked: a wrong warm-up is a wrong call like any other. One benchmark iteration holds all
/// samples; the runner (BenchSession::graded_runner()) serves every graded row.
void bench_graded(benchmark::State& state, BenchSession& session, Rows& rows, const RowId& id,
                  const Impl& impl) {
  if (impl.runner != session.reference_runner()) session.end_references();
  Row& row = rows.open(id);
  const Operation& op = *impl.op;
  const std::size_t n = id.n;
  const auto started = std::chrono::steady_clock::now();
  try {
    Runner& runner = *impl.runner;
    runner.use_library(impl.library);
    // The lab reads arrays its own process allocated; this process makes their contents.
    const std::vector<float*> arrays = session.timed_arrays(runner, n).inputs;
    const int count = static_cast<int>(arrays.size());
    RegeneratedInputs inputs(op, n, arrays, session.graded_rng());
    const double allocated_s = seconds_since(started);
    DeviceBuffer<std::int64_t> capture(count);
    const std::size_t rb = result_bytes(op.kind());
    int wrong = 0;
    // One request of `calls` calls on inputs [0, calls): the inputs made anew and the capture
    // poisoned first (outside the clock: run_timed() waits for this process's work before it
    // starts its own), then every result checked.
    const GradedRequest request = [&](int calls) {
      capture.fill_bytes(0xFF);  // no earlier request's result can stand for this one's
      inputs.regenerate(calls);
      const TimedRun t = runner.run_timed(op.name, calls, n, calls, capture.data());
      std::vector<unsigned char> got(rb * calls);
      REDUCE_CUDA_CHECK(cudaMemcpy(got.data(), capture.data(), got.size(), cudaMemcpyDeviceToHost));
      for (int b = 0; b < calls; ++b) {
        std::int64_t bits = 0;
        std::memcpy(&bits, got.data() + b * rb, rb);
        check_result(op, bits, inputs.expected(b), row, wrong);
      }
      return t;
    };
    const GradedMeasurement m = measure_graded(
        state, {request, count, &inputs.cost(), [&wrong] { return wrong; }, started, allocated_s},
        session.clocks());
    report_rate(state, row, m.samples.host_ms, n);
    state.counters["runner_starts"] = runner.starts();
    state.counters["lab_process_starts"] = Runner::process_starts();
    judge_graded(state, row, m.samples, wrong, m.warmup_wrong,
                 "WRONG in " + std::to_string(wrong) + " timed calls (" + fixed(m.warmup_wrong, 0) +
                     " of them warm-up calls; results captured " +
                     "in stream order; every input made anew from a fresh seed before every " +
                     "call)");
  } catch (const std::exception& e) {
    impl.runner->stop();
    fail_row(state, row, RowFailure::kThrew, e.what());
  }
}

/// The trusted labs' rows: every operation each library exports, found by its getter and called
/// in this process.
std::vector<Impl> trusted_labs() {
  std::vector<Impl> labs;
  for (const TrustedLibrary& library : trusted_libraries())
    for (const Operation& op : operations()) {
      void* getter = dlsym(library.handle, op.getter());
      if (getter == nullptr) continue;
      switch (op.kind()) {
        case ResultKind::kIndex: {
          const auto* lab = reinterpret_cast<const reduce::ArgmaxLab* (*)()>(getter)();
          labs.push_back({&op, library.name, lab->workspace_bytes,
                          [run = lab->run](const float* in, std::size_t n, void* out, Workspace ws,
                                           cudaStream_t s) {
                            const LabCallRange range;
                            run(in, n, static_cast<std::int64_t*>(out), ws, s);
                          }});
          break;
        }
        case ResultKind::kFloat: {
          const auto* lab = reinterpret_cast<const reduce::FloatLab* (*)()>(getter)();
          labs.push_back({&op, library.name, lab->workspace_bytes,
                          [run = lab->run](const float* in, std::size_t n, void* out, Workspace ws,
                                           cudaStream_t s) {
                            const LabCallRange range;
                            run(in, n, static_cast<float*>(out), ws, s);
                          }});
          break;
        }
        case ResultKind::kApply:
        case ResultKind::kSegments:
        case ResultKind::kSegmentPairs:
          throw std::logic_error(std::string(op.name) + ": no row of kOperations writes a " +
                                 std::string(result_kind_name(op.kind())) + " result");
      }
    }
  return labs;
}

/// Rows of \p entries (the launch's \p what: "graded" or "references") on an operation of
/// kOperations: never loaded here; their calls go to \p runner. (Segmented operations have rows
/// of their own.)
std::vector<Impl> runner_labs(const std::vector<launch::RunnerLab>& entries, const char* what,
                              const std::shared_ptr<Runner>& runner) {
  const std::vector<std::string> paths = library_paths(entries);
  std::vector<Impl> labs;
  for (const launch::RunnerLab& entry : entries) {
    const CatalogueEntry* known = find_catalogue_entry(entry.op);
    if (known != nullptr && per_segment(known->kind)) continue;  // rows of their own
    const Operation* op = find_operation(entry.op);
    if (op == nullptr) {
      std::fprintf(stderr, "%s: no operation in %s=%s:%s\n", what, entry.name.c_str(),
                   entry.op.c_str(), entry.library.c_str());
      continue;
    }
    Impl impl{op, entry.name, nullptr, nullptr};
    impl.runner = runner;
    impl.library = static_cast<std::size_t>(std::find(paths.begin(), paths.end(), entry.library) -
                                            paths.begin());
    labs.push_back(impl);
  }
  return labs;
}

/// Labs being graded: their calls go to \p session's graded runner.
std::vector<Impl> graded_labs(BenchSession& session) {
  return runner_labs(session.graded(), "graded", session.graded_runner());
}

/// The probe's row of \p op: \p probe's read (the session's, alive until every row has run).
Impl probe_impl(const Operation& op, const reduce::CeilingProbe& probe) {
  return {&op, "stream_read", [](std::size_t) { return std::size_t{0}; },
          [&probe](const float* in, std::size_t n, void* out, Workspace, cudaStream_t stream) {
            probe.read(in, n, static_cast<float*>(out), stream);
          },
          /*checks_result=*/false};
}

/// Registers the row of \p impl at \p n.
void register_row(Rows& rows, BenchSession& session, const Impl& impl, std::size_t n) {
  const RowId id = RowId::of(impl.op->name, impl.name, n);
  Rows* table = &rows;
  BenchSession* run = &session;  // main()'s, alive until every row has run
  benchmark::internal::Benchmark* b =
      impl.on_host
          ? benchmark::RegisterBenchmark(id.name.c_str(),
                                         [table, run, op = impl.op, n](benchmark::State& s) {
                                           bench_host(s, *run, *table, *op, n);
                                         })
          : benchmark::RegisterBenchmark(id.name.c_str(),
                                         [table, run, impl, id](benchmark::State& s) {
                                           if (impl.runner)
                                             bench_graded(s, *run, *table, id, impl);
                                           else
                                             bench_trusted(s, *run, *table, id, impl);
                                         });
  b->UseManualTime()->Unit(benchmark::kMicrosecond);
  if (impl.runner)
    b->Iterations(1);  // bench_graded takes its own samples
  else if (impl.on_host)
    b->MinTime(0.2);
  else
    set_trusted_sampling(b, session);
}

}  // namespace

const std::vector<TrustedLibrary>& trusted_libraries() {
  static const std::vector<TrustedLibrary> libraries = [] {
    std::vector<std::string> entries;
    if (const char* env = std::getenv("REDUCE_LABS")) entries = split(env, ",");
    if (const char* file = std::getenv("REDUCE_LABS_FILE")) {
      std::ifstream list(file);
      if (!list) std::fprintf(stderr, "cannot read REDUCE_LABS_FILE %s\n", file);
      for (std::string line; std::getline(list, line);)
        if (!line.empty()) entries.push_back(line);
    }
    std::vector<TrustedLibrary> loaded;
    for (const std::string& entry : entries) {
      const auto eq = entry.find('=');
      const std::string name = entry.substr(0, eq);
      const std::string path = eq == std::string::npos ? entry : entry.substr(eq + 1);
      void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (handle == nullptr)
        std::fprintf(stderr, "cannot load lab %s: %s\n", name.c_str(), dlerror());
      else
        loaded.push_back({name, handle});
    }
    return loaded;
  }();
  return libraries;
}

std::vector<std::string> library_paths(const std::vector<launch::RunnerLab>& labs) {
  std::vector<std::string> paths;
  for (const launch::RunnerLab& lab : labs)
    if (std::find(paths.begin(), paths.end(), lab.library) == paths.end())
      paths.push_back(lab.library);
  return paths;
}

void set_trusted_sampling(benchmark::internal::Benchmark* b, const BenchSession& session,
                          int when_grading) {
  if (session.graded().empty())
    b->MinTime(0.1);
  else
    b->Iterations(when_grading);
}

Impl cub_impl(const Operation& op) {
  const CubCall call = op.cub;
  return {&op, "cub",
          [call](std::size_t n) {
            std::size_t bytes = 0;
            REDUCE_CUDA_CHECK(call(nullptr, bytes, nullptr, nullptr, n, nullptr, nullptr));
            return bytes + kExtraBytes;
          },
          [call](const float* in, std::size_t n, void* out, Workspace ws, cudaStream_t s) {
            std::size_t bytes = ws.bytes - kExtraBytes;
            REDUCE_CUDA_CHECK(call(ws.as<char>() + kExtraBytes, bytes, ws.data, in, n, out, s));
          }};
}

void bench_trusted(benchmark::State& state, BenchSession& session, Rows& rows, const RowId& id,
                   const Impl& impl) {
  session.end_references();
  Row& row = rows.open(id);
  const Operation& op = *impl.op;
  const std::size_t n = id.n;
  try {
    Inputs& in = session.trusted_inputs(op, n);
    reduce::Stream stream;
    DeviceBuffer<unsigned char> workspace(impl.workspace_bytes(n));
    DeviceBuffer<std::int64_t> out(1);
    const Workspace ws{workspace.data(), workspace.bytes()};
    int wrong = 0;
    const std::vector<double> samples = sample_trusted(
        state, stream.get(),
        [&](std::size_t) {
          out.fill_bytes(0xFF, stream.get());
          workspace.fill_bytes(0xFF, stream.get());
        },
        [&](std::size_t k) {
          impl.run(in.device[k % kRotation].data(), n, out.data(), ws, stream.get());
        },
        [&](std::size_t k) {
          if (!impl.checks_result) return;
          std::int64_t got = 0;
          REDUCE_CUDA_CHECK(
              cudaMemcpy(&got, out.data(), result_bytes(op.kind()), cudaMemcpyDeviceToHost));
          check_result(op, got, in.expected[k % kRotation], row, wrong);
        });
    report_rate(state, row, samples, n);
    state.counters[kWrongResults] = wrong;
    if (impl.checks_result) state.counters["abs_error"] = row.error;  // |result - exact|
    // A lesson's comparison may time an implementation that is known not to meet the contract
    // (lab 18's float accumulator, CUB's plain Sum beside the reproducible sum): with
    // REDUCE_BENCH_KEEP_WRONG=1 such a row keeps its time and error instead of failing.
    static const bool keep_wrong = std::getenv("REDUCE_BENCH_KEEP_WRONG") != nullptr;
    if (wrong > 0)
      fail_row(state, row, RowFailure::kWrongResults,
               "WRONG in " + std::to_string(wrong) + " timed runs", !keep_wrong);
    else
      pass_row(state, row);
  } catch (const std::exception& e) {
    fail_row(state, row, RowFailure::kThrew, e.what());
  }
}

std::vector<std::pair<const Operation*, std::string>> register_operation_rows(
    Rows& rows, const std::vector<std::size_t>& sizes, BenchSession& session) {
  std::vector<Impl> labs = trusted_labs();
  for (Impl& graded : graded_labs(session)) labs.push_back(graded);
  std::vector<Impl> impls;
  for (const Operation& op : operations()) {
    const bool present =
        std::any_of(labs.begin(), labs.end(), [&op](const Impl& i) { return i.op == &op; });
    if (!present) continue;
    impls.push_back(probe_impl(op, session.ceiling()));
    impls.push_back(cub_impl(op));
    for (const Impl& lab : labs)
      if (lab.op == &op) impls.push_back(lab);
    impls.push_back({&op, "cpu", nullptr, nullptr, true, /*on_host=*/true});
  }
  // The course's references first, all of them, in a process of their own that ends before any
  // graded lab's code starts: nothing of a lab can run beside them.
  std::vector<Impl> references =
      runner_labs(session.references(), "references", session.reference_runner());
  for (const Impl& reference : references)
    for (const std::size_t n : sizes) register_row(rows, session, reference, n);
  for (const Operation& op : operations())
    for (std::size_t n : sizes)
      for (const Impl& impl : impls)
        if (impl.op == &op) register_row(rows, session, impl, n);
  std::vector<std::pair<const Operation*, std::string>> names;
  for (const Impl& impl : impls) names.emplace_back(impl.op, impl.name);
  for (const Impl& impl : references) names.emplace_back(impl.op, impl.name);
  return names;
}

}  // namespace reduce::bench
