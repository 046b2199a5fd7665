/// \file
/// \brief What one run of the benchmark keeps from row to row (BenchSession): made once in
/// main() and reached by every row through the lambdas that register it, so that no function
/// keeps run-wide state of its own.
#pragma once

#include "clock_watch.hpp"
#include "measurement.cuh"
#include "runner.hpp"
#include "segmented.cuh"

#include <reduce/ceiling.cuh>
#include <reduce/keyed_hash.hpp>
#include <reduce_vocabulary/launch_spec.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace reduce::bench {

/// One run's state: its launch (what to time, launch.hpp), its key and the graded rows' keyed
/// stream, the ceiling probe's results, the lab processes (the graded labs' and the
/// references'), and the timed inputs the graded rows of one size share. main() makes one and
/// keeps it until every row has run.
class BenchSession {
 public:
  /// The run of \p launch (bench_launch(): the grader's spec, else a hand run's), read once by
  /// main(). Its key is the spec's seed (the grader gives reduce::benchmark_key() of its secret,
  /// so that a run is repeatable and independent of every test's inputs), else a fresh one from
  /// std::random_device. No runner sees it.
  explicit BenchSession(launch::LaunchSpec launch);
  BenchSession(const BenchSession&) = delete;
  BenchSession& operator=(const BenchSession&) = delete;

  /// The run's key.
  std::uint64_t seed() const { return seed_; }

  /// The sizes of the rows: the launch's, else 2^10, 2^12, ..., 2^30.
  std::vector<std::size_t> sizes() const;

  /// The labs being graded (the launch's `graded`), each timed in graded_runner().
  const std::vector<launch::RunnerLab>& graded() const { return launch_.graded; }

  /// The course's references of the labs judged against them (the launch's `references`): the
  /// reference solutions, or CUB as a lab library, in rows named <op>/reference-<lab row>/<n>.
  /// Timed as a graded lab is (bench_graded), in the same run, so that the ratio of the two is
  /// that lab's speed on this GPU relative to its measure; in reference_runner().
  const std::vector<launch::RunnerLab>& references() const { return launch_.references; }

  /// The index of the library \p path among graded_runner()'s.
  std::size_t graded_library(const std::string& path) const;

  /// The stream of every graded row's input seeds and random choices: reduce::benchmark_stream()
  /// of the run's key, "graded" (SipHash in counter mode, reduce/keyed_hash.hpp), so that no
  /// input, however much of it a lab reads, tells the key or another input. One for the whole
  /// run: no two rows, of one lab or of two, read the same inputs, and a run with the same key
  /// makes the same ones.
  reduce::KeyedStream& graded_rng() { return graded_rng_; }

  /// Measures the ceiling probe (reduce::CeilingProbe::measure()), once, before any row (main()).
  void measure_ceiling() { ceiling_ = reduce::CeilingProbe::measure(); }
  /// The GPU's clocks-event reasons (NVML), which every graded row reads around its samples.
  const ClockWatch& clocks() const { return clocks_; }

  /// The ceiling probe as measured: its rate, the layout it kept (which the stream_read rows
  /// read with) and every layout's rate, printed alike in the JSON's context and the tables.
  const reduce::CeilingProbe& ceiling() const { return ceiling_; }

  /// The one lab process of every graded row: it holds every library of graded(), each
  /// loaded when its first row calls it, and starts anew only after a row whose lab crashed it,
  /// hung or poisoned its context (the row's exception stops it). So no other lab process is
  /// alive while a row is timed, and a submission's benchmark makes one lab process, not one per
  /// row. Made on the first call; its process starts with the first graded row, after the probe
  /// and the first CUB rows.
  std::shared_ptr<Runner> graded_runner();

  /// The references' lab process: outside the sandbox (the course's own code), holding every
  /// library of references() (null without any). Its rows run first, before any graded
  /// lab's process starts, and end_references() ends it.
  std::shared_ptr<Runner> reference_runner();

  /// Stops the references' process for good, where it was made: the first row that is not a
  /// reference's calls this, so that it holds no GPU memory and runs nothing beside a lab.
  void end_references();

  /// The runner's timed inputs for a row of \p n floats (and \p segments segments): the ones it
  /// holds where they are as many as timed_input_count() allows now and large enough, else new
  /// ones. So the rows of one size share one allocation: allocating and mapping up to 16 GiB took
  /// longer than a row's samples. Each request still makes every input it reads anew, whole.
  TimedArrays timed_arrays(Runner& runner, std::size_t n, std::size_t segments = 0);

  /// The trusted rows' rotating inputs of (\p op, \p n), made from the run's key
  /// (make_inputs()): kept while rows of that operation and size follow one another, the
  /// previous ones freed before new ones are made (at 2^30 floats each holds 16 GiB).
  Inputs& trusted_inputs(const Operation& op, std::size_t n);

  /// The segmentation of (\p n, \p shape) (make_segmentation()), kept likewise.
  std::shared_ptr<const Segmentation> segmentation(std::size_t n, const SegmentShape& shape);

  /// The trusted segmented rows' input and CUB's results of (\p op, \p n, \p shape)
  /// (make_segmented_inputs()), kept likewise.
  SegmentedInputs& segmented_inputs(const SegmentedOp& op, std::size_t n,
                                    const SegmentShape& shape);

 private:
  /// The timed inputs last allocated, and what they were allocated for.
  struct HeldArrays {
    const Runner* runner = nullptr;
    int starts = 0;         // the runner's start that allocated them
    std::size_t bytes = 0;  // its timed_input_bytes() then: 0 once it stopped
    std::size_t n = 0, segments = 0;
    TimedArrays arrays;
  };

  launch::LaunchSpec launch_;
  std::uint64_t seed_;
  reduce::KeyedStream graded_rng_;
  ClockWatch clocks_;
  reduce::CeilingProbe ceiling_;
  std::shared_ptr<Runner> graded_runner_;
  std::shared_ptr<Runner> reference_runner_;
  bool references_ended_ = false;  // reference_runner_ stopped for good
  HeldArrays held_;
  std::unique_ptr<Inputs> trusted_inputs_;
  std::shared_ptr<const Segmentation> segmentation_;
  std::unique_ptr<SegmentedInputs> segmented_inputs_;
};

}  // namespace reduce::bench
