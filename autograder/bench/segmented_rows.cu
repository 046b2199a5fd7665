// Lab 17's rows (segmented.cuh): the floor, CUB's two rows, the trusted labs' and the graded
// labs', each timed by the sampling loop of its trust level.
#include "segmented.cuh"

#include "cub_fixed_rows.hpp"
#include "labs.cuh"
#include "measurement.cuh"
#include "session.cuh"
#include "text.hpp"

#include <reduce/cuda_check.cuh>
#include <reduce/event_timer.cuh>
#include <reduce/lab_entry_points.cuh>

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <limits>

namespace reduce::bench {
namespace {

/// Samples of a trusted segmented row (CUB) beside graded labs: a comparison in the report, and
/// a call of CUB's segmented reduction of 2^23 segments of 32 floats takes about 10 ms on the
/// H200 (a block per segment), so 30 samples were 0.3 s a row.
constexpr int kTrustedSegmentedSamplesWhenGrading = 10;

/// What times a segmented reduction in this process.
enum class SegmentedKind {
  kLab,       ///< a trusted lab's library
  kCub,       ///< cub::DeviceSegmentedReduce with offsets (CUDA's own CUB)
  kCubFixed,  ///< its segment_size overload (the newest CUB, cub_fixed_rows.hpp)
};

/// A segmented reduction to time in this process: a lab's, or CUB's.
struct SegmentedImpl {
  const SegmentedOp* op = nullptr;
  std::string name;
  const reduce::SegmentedLab* lab = nullptr;
  SegmentedKind kind = SegmentedKind::kLab;
};

/// A graded lab's segmented reduction, in its runner.
struct GradedSegmented {
  const SegmentedOp* op = nullptr;
  std::string name;
  std::shared_ptr<Runner> runner;  // BenchSession::graded_runner()
  std::size_t library = 0;         // its library there
};

/// The counters every segmented row reports (its time is \p median_us per call, reading
/// \p read_bytes), and its line of the table printed at the end.
void report_segmented(benchmark::State& state, const Rows& rows, Row& row, const Segmentation& seg,
                      double read_bytes, double median_us) {
  row.median_us = median_us;
  row.gbps = read_bytes / (median_us * 1e-6) / 1e9;
  state.SetBytesProcessed(static_cast<std::int64_t>(read_bytes) * state.iterations());
  state.counters["median_us"] = median_us;
  state.counters["median_gbps"] = row.gbps;
  state.counters["segments"] = static_cast<double>(seg.segments);
  state.counters["elements"] = static_cast<double>(seg.elements);  // n rounded down
  state.counters["elements_left_out"] = static_cast<double>(seg.n - seg.elements);
  state.counters["bytes_per_call"] = read_bytes;
  state.counters["lab_process_starts"] = Runner::process_starts();
  if (seg.shape.ragged) {
    state.counters["min_length"] = static_cast<double>(seg.min_length);
    state.counters["max_length"] = static_cast<double>(seg.max_length);
  }
  if (const double floor_rate = floor_gbps(rows, seg.n); floor_rate > 0) {
    state.counters["floor_gbps"] = floor_rate;
    state.counters["of_floor"] = row.gbps / floor_rate;
  }
}

/// One trusted implementation's calls on one row's inputs.
struct SegmentedCall {
  const SegmentedImpl& impl;
  const SegmentedInputs& in;
  int segment_size;  ///< cub_fixed's: the shape's length, within an int

  /// The workspace one call needs.
  std::size_t workspace_bytes(cudaStream_t stream) const {
    const Segmentation& seg = *in.seg;
    std::size_t bytes = 0;
    switch (impl.kind) {
      case SegmentedKind::kLab:
        bytes = impl.lab->workspace_bytes(seg.elements, seg.segments);
        break;
      case SegmentedKind::kCub:
        REDUCE_CUDA_CHECK(impl.op->cub(nullptr, bytes, in.x.data(), seg.offsets.data(),
                                       seg.segments, nullptr, stream));
        break;
      case SegmentedKind::kCubFixed:
        REDUCE_CUDA_CHECK(impl.op->cub_fixed(nullptr, bytes, in.x.data(), nullptr,
                                             static_cast<std::int64_t>(seg.segments), segment_size,
                                             stream));
        break;
    }
    return bytes;
  }

  /// One call, its results at \p out.
  void operator()(unsigned char* workspace, std::size_t bytes, float* out,
                  cudaStream_t stream) const {
    const Segmentation& seg = *in.seg;
    switch (impl.kind) {
      case SegmentedKind::kLab: {
        const LabCallRange range;
        impl.lab->run(in.x.data(), seg.elements, seg.offsets.data(), seg.segments, out,
                      reduce::Workspace{workspace, bytes}, stream);
        break;
      }
      case SegmentedKind::kCub:
        REDUCE_CUDA_CHECK(impl.op->cub(workspace, bytes, in.x.data(), seg.offsets.data(),
                                       seg.segments, out, stream));
        break;
      case SegmentedKind::kCubFixed:
        REDUCE_CUDA_CHECK(impl.op->cub_fixed(workspace, bytes, in.x.data(), out,
                                             static_cast<std::int64_t>(seg.segments), segment_size,
                                             stream));
        break;
    }
  }
};

void bench_segmented(benchmark::State& state, BenchSession& session, Rows& rows, const RowId& id,
                     const SegmentedImpl& impl, const SegmentShape& shape) {
  Row& row = rows.open(id);
  try {
    if (impl.kind == SegmentedKind::kCubFixed && !reduce::cub_fixed::available()) {
      fail_row(state, row, RowFailure::kUnavailable, reduce::cub_fixed::kAbsent);
      return;
    }
    const SegmentedOp& op = *impl.op;
    const SegmentedInputs& in = session.segmented_inputs(op, id.n, shape);
    const Segmentation& seg = *in.seg;
    const SegmentedCall call{
        impl, in,
        static_cast<int>(std::min<std::size_t>(
            shape.length, static_cast<std::size_t>(std::numeric_limits<int>::max())))};
    reduce::Stream stream;
    const std::size_t bytes = call.workspace_bytes(stream.get());
    DeviceBuffer<unsigned char> workspace(std::max<std::size_t>(bytes, 1));
    DeviceBuffer<float> out(seg.segments * op.per_segment());
    DeviceBuffer<unsigned> mismatches(1);
    mismatches.fill_bytes(0, stream.get());
    const std::vector<double> samples = sample_trusted(
        state, stream.get(),
        [&](std::size_t) {
          out.fill_bytes(0xFF, stream.get());
          workspace.fill_bytes(0xFF, stream.get());
        },
        [&](std::size_t) { call(workspace.data(), bytes, out.data(), stream.get()); },
        [&](std::size_t) {
          count_segment_mismatches(op, out.data(), in.expected.data(), seg.segments, seg.max_length,
                                   mismatches.data(), stream.get());
        });
    stream.synchronize();
    const unsigned wrong = mismatches.to_host()[0];
    report_segmented(state, rows, row, seg,
                     segmented_read_bytes(seg, impl.kind != SegmentedKind::kCubFixed),
                     median(samples) * 1e3);
    state.counters[kWrongResults] = wrong;
    if (wrong > 0)
      fail_row(state, row, RowFailure::kWrongResults, "WRONG segment results");
    else
      pass_row(state, row);
  } catch (const std::exception& e) {
    fail_row(state, row, RowFailure::kThrew, e.what());
  }
}

/// A graded segmented row's requests. The lab reads arrays its own process allocated (inputs and
/// offsets), a request's calls read distinct inputs, and the runner's events are a second clock.
/// Before every request, warm-ups included, every input it reads is made anew, whole, from a
/// fresh seed (so every segment's result changes), the runner's offsets are written again (the
/// lab could have written over them), and the expected results are computed from this process's
/// own offsets (expected_segment_results()); all of that outside both clocks. Every call's results
/// are compared on the device, the warm-ups' too. The lab is called with n rounded down to whole
/// segments.
class SegmentedRequests {
 public:
  SegmentedRequests(BenchSession& session, Runner& runner, const SegmentedOp& op,
                    const Segmentation& seg)
      : runner_(runner),
        rng_(session.graded_rng()),
        op_(op),
        seg_(seg),
        results_(seg.segments * op.per_segment()) {
    const TimedArrays arrays = session.timed_arrays(runner, seg.elements, seg.segments);
    inputs_ = arrays.inputs;
    runner_offsets_ = arrays.offsets;
    REDUCE_CUDA_CHECK(
        op.cub(nullptr, bytes_, inputs_[0], seg.offsets.data(), seg.segments, nullptr, nullptr));
    storage_ = DeviceBuffer<unsigned char>(std::max<std::size_t>(bytes_, 1));
    for (int b = 0; b < count(); ++b) expected_.emplace_back(std::max<std::size_t>(results_, 1));
    capture_ = DeviceBuffer<float>(std::max<std::size_t>(results_, 1) * count());
    mismatches_.fill_bytes(0);
  }

  /// The distinct inputs a request may read.
  int count() const { return static_cast<int>(inputs_.size()); }

  /// One request of \p calls calls on inputs [0, calls), everything before it outside the clock
  /// (run_timed() waits for this process's work before it starts its own); the results are
  /// compared on the device.
  TimedRun operator()(int calls) {
    const std::int64_t* offsets = seg_.offsets.data();  // CUB's: out of the lab's reach
    const auto regeneration = std::chrono::steady_clock::now();
    timer_.start(nullptr);
    REDUCE_CUDA_CHECK(cudaMemcpyAsync(runner_offsets_, offsets,
                                      (seg_.segments + 1) * sizeof(std::int64_t),
                                      cudaMemcpyDeviceToDevice, nullptr));
    for (int b = 0; b < calls; ++b) {
      fill_graded_segmented_input(op_, inputs_[b], seg_.elements, rng_());
      expected_segment_results(op_, inputs_[b], seg_, storage_.data(), bytes_, expected_[b].data());
    }
    timer_.stop(nullptr);
    capture_.fill_bytes(0xFF);  // no earlier request's results can stand for this one's
    REDUCE_CUDA_CHECK(cudaDeviceSynchronize());
    cost_.add(regeneration, timer_.elapsed_ms(), calls);
    const TimedRun t =
        runner_.run_timed(op_.name, calls, seg_.elements, calls, capture_.data(), seg_.segments);
    for (int b = 0; b < calls; ++b)
      count_segment_mismatches(op_, capture_.data() + b * results_, expected_[b].data(),
                               seg_.segments, seg_.max_length, mismatches_.data(), nullptr);
    return t;
  }

  /// Segment results that differed from CUB's so far.
  unsigned mismatches() const { return mismatches_.to_host()[0]; }
  /// What making the inputs anew cost so far.
  const RegenerationCost& cost() const { return cost_; }

 private:
  Runner& runner_;
  reduce::KeyedStream& rng_;  // the run's graded stream: every input's seed
  const SegmentedOp& op_;
  const Segmentation& seg_;
  std::size_t results_;  // floats of one call's results
  std::vector<float*> inputs_;
  std::int64_t* runner_offsets_ = nullptr;
  std::size_t bytes_ = 0;  // CUB's storage
  DeviceBuffer<unsigned char> storage_;
  std::vector<DeviceBuffer<float>> expected_;
  DeviceBuffer<float> capture_;
  DeviceBuffer<unsigned> mismatches_{1};
  reduce::EventTimer timer_;
  RegenerationCost cost_;
};

/// A graded lab's segmented reduction, timed as the operations' graded rows are
/// (SegmentedRequests).
void bench_graded_segmented(benchmark::State& state, BenchSession& session, Rows& rows,
                            const RowId& id, const GradedSegmented& impl,
                            const SegmentShape& shape) {
  Row& row = rows.open(id);
  try {
    const auto started = std::chrono::steady_clock::now();
    impl.runner->use_library(impl.library);
    const std::shared_ptr<const Segmentation> seg = session.segmentation(id.n, shape);
    SegmentedRequests request(session, *impl.runner, *impl.op, *seg);
    const double allocated_s = seconds_since(started);
    // Outside both clocks, per request: new inputs and offsets and their expected results.
    const GradedMeasurement m = measure_graded(
        state,
        {[&request](int c) { return request(c); }, request.count(), &request.cost(),
         [&request] { return static_cast<double>(request.mismatches()); }, started, allocated_s},
        session.clocks());
    const unsigned wrong = request.mismatches();
    report_segmented(state, rows, row, *seg, segmented_read_bytes(*seg, /*offsets=*/true),
                     median(m.samples.host_ms) * 1e3);
    judge_graded(state, row, m.samples, wrong, m.warmup_wrong,
                 "WRONG: " + std::to_string(wrong) + " segment results in timed calls (" +
                     fixed(m.warmup_wrong, 0) + " of them in warm-up calls; every " +
                     "input made anew from a fresh seed before every call)");
  } catch (const std::exception& e) {
    impl.runner->stop();
    fail_row(state, row, RowFailure::kThrew, e.what());
  }
}

/// The segmented labs of the launch's graded labs (op segmented_sum or segmented_softmax).
std::vector<GradedSegmented> graded_segmented_labs(BenchSession& session) {
  std::vector<GradedSegmented> labs;
  for (const launch::RunnerLab& entry : session.graded())
    if (const SegmentedOp* op = find_segmented_op(entry.op))
      labs.push_back(
          {op, entry.name, session.graded_runner(), session.graded_library(entry.library)});
  return labs;
}

/// CUB's two rows of \p op: the offsets overload, and the newest CUB's fixed-size one.
void add_cub_segmented(std::vector<SegmentedImpl>& impls, const SegmentedOp& op) {
  impls.push_back({&op, "cub", nullptr, SegmentedKind::kCub});
  impls.push_back({&op, "cub_fixed", nullptr, SegmentedKind::kCubFixed});
}

/// Trusted labs that export a segmented operation, with CUB's two rows first for each operation.
std::vector<SegmentedImpl> trusted_segmented_impls() {
  std::vector<SegmentedImpl> impls;
  for (const SegmentedOp& op : segmented_ops()) {
    bool first = true;
    for (const TrustedLibrary& library : trusted_libraries()) {
      void* getter = dlsym(library.handle, op.getter());
      if (getter == nullptr) continue;
      if (first) add_cub_segmented(impls, op);
      first = false;
      impls.push_back({&op, library.name,
                       reinterpret_cast<const reduce::SegmentedLab* (*)()>(getter)(),
                       SegmentedKind::kLab});
    }
  }
  return impls;
}

/// The shapes of the rows: REDUCE_SEGMENT_LENGTHS, each followed by its ragged family where
/// REDUCE_SEGMENT_RAGGED names its length, then the ragged means of no uniform family.
std::vector<SegmentShape> segment_shapes() {
  const std::vector<std::size_t> lengths =
      size_list("REDUCE_SEGMENT_LENGTHS", "32,1024,32768,1048576");
  const std::vector<std::size_t> ragged_means = size_list("REDUCE_SEGMENT_RAGGED", "");
  std::vector<SegmentShape> shapes;
  for (std::size_t length : lengths) {
    shapes.push_back({length, false});
    if (std::find(ragged_means.begin(), ragged_means.end(), length) != ragged_means.end())
      shapes.push_back({length, true});
  }
  for (std::size_t mean : ragged_means)
    if (std::find(lengths.begin(), lengths.end(), mean) == lengths.end())
      shapes.push_back({mean, true});
  return shapes;
}

/// floor/<n> at every size: CUB's sum timed as the trusted rows are.
void register_floor_rows(Rows& rows, const std::vector<std::size_t>& sizes, BenchSession& session) {
  Impl floor = cub_impl(*find_operation("sum"));
  floor.name = "floor";
  Rows* table = &rows;
  BenchSession* run = &session;
  for (std::size_t n : sizes) {
    const RowId id{"sum", n, "floor", "floor/" + std::to_string(n)};
    benchmark::internal::Benchmark* b = benchmark::RegisterBenchmark(
        id.name.c_str(), [table, run, floor, id](benchmark::State& st) {
          bench_trusted(st, *run, *table, id, floor);
        });
    b->UseManualTime()->Unit(benchmark::kMicrosecond);
    set_trusted_sampling(b, session);
  }
}

/// Adds \p name to \p list unless it is there.
void remember(std::vector<std::string>& list, const std::string& name) {
  if (std::find(list.begin(), list.end(), name) == list.end()) list.push_back(name);
}

}  // namespace

std::pair<std::vector<std::string>, std::vector<std::string>> register_segmented_rows(
    Rows& rows, const std::vector<std::size_t>& sizes, BenchSession& session) {
  std::vector<SegmentedImpl> trusted = trusted_segmented_impls();
  const std::vector<GradedSegmented> graded = graded_segmented_labs(session);
  for (const GradedSegmented& impl : graded) {  // CUB beside every graded operation
    const bool has_cub = std::any_of(trusted.begin(), trusted.end(), [&](const auto& s) {
      return s.op == impl.op && s.kind == SegmentedKind::kCub;
    });
    if (!has_cub) add_cub_segmented(trusted, *impl.op);
  }
  std::vector<std::string> families, names;  // for the table printed at the end
  if (trusted.empty() && graded.empty()) return {families, names};
  register_floor_rows(rows, sizes, session);
  Rows* table = &rows;
  BenchSession* run = &session;  // main()'s, alive until every row has run
  for (const SegmentShape& shape : segment_shapes())
    for (std::size_t n : sizes) {
      if (!shape.fits(n)) continue;
      for (const GradedSegmented& impl : graded) {
        const RowId id = RowId::of(shape.family(*impl.op), impl.name, n);
        remember(families, id.family);
        remember(names, impl.name);
        benchmark::RegisterBenchmark(id.name.c_str(),
                                     [table, run, impl, id, shape](benchmark::State& st) {
                                       bench_graded_segmented(st, *run, *table, id, impl, shape);
                                     })
            ->UseManualTime()
            ->Unit(benchmark::kMicrosecond)
            ->Iterations(1);  // it takes its own samples
      }
      for (const SegmentedImpl& impl : trusted) {
        if (shape.ragged && impl.kind == SegmentedKind::kCubFixed) continue;  // one length only
        const RowId id = RowId::of(shape.family(*impl.op), impl.name, n);
        remember(families, id.family);
        remember(names, impl.name);
        benchmark::internal::Benchmark* b = benchmark::RegisterBenchmark(
            id.name.c_str(), [table, run, impl, id, shape](benchmark::State& st) {
              bench_segmented(st, *run, *table, id, impl, shape);
            });
        b->UseManualTime()->Unit(benchmark::kMicrosecond);
        set_trusted_sampling(b, session, kTrustedSegmentedSamplesWhenGrading);
      }
    }
  return {families, names};
}

}  // namespace reduce::bench
