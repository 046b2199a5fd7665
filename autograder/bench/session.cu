// The run's state (session.cuh): its key, the lab processes and the timed inputs they share.
#include "session.cuh"

#include "labs.cuh"

#include <reduce/cuda_check.cuh>

#include <algorithm>
#include <random>
#include <string>
#include <utility>

namespace reduce::bench {
namespace {

/// The launch's key, else a fresh one.
std::uint64_t run_seed(const launch::LaunchSpec& launch) {
  if (launch.seed) return *launch.seed;
  std::random_device device;  // not the clock: a fresh run's key is not to be guessed either
  return std::uint64_t{device()} << 32 ^ device();
}

/// The current device's PCI bus id, as NVML takes it.
std::string pci_bus_id() {
  int device = 0;
  REDUCE_CUDA_CHECK(cudaGetDevice(&device));
  char id[32] = {};
  REDUCE_CUDA_CHECK(cudaDeviceGetPCIBusId(id, sizeof id, device));
  return id;
}

}  // namespace

BenchSession::BenchSession(launch::LaunchSpec launch)
    : launch_(std::move(launch)),
      seed_(run_seed(launch_)),
      graded_rng_(reduce::benchmark_stream(seed_, "graded")),
      clocks_(pci_bus_id()) {}

std::vector<std::size_t> BenchSession::sizes() const {
  if (!launch_.sizes.empty()) return launch_.sizes;
  std::vector<std::size_t> sizes;
  for (int e = 10; e <= 30; e += 2) sizes.push_back(std::size_t{1} << e);
  return sizes;
}

std::size_t BenchSession::graded_library(const std::string& path) const {
  const std::vector<std::string> paths = library_paths(graded());
  return static_cast<std::size_t>(std::find(paths.begin(), paths.end(), path) - paths.begin());
}

std::shared_ptr<Runner> BenchSession::graded_runner() {
  if (!graded_runner_) {
    RunnerOptions options = RunnerOptions::from_launch(launch_.runner);
    options.libraries = library_paths(graded());
    graded_runner_ = std::make_shared<Runner>(std::move(options));
  }
  return graded_runner_;
}

std::shared_ptr<Runner> BenchSession::reference_runner() {
  if (references().empty()) return nullptr;
  if (!reference_runner_) {
    RunnerOptions options = RunnerOptions::from_launch(launch_.runner);
    options.libraries = library_paths(references());
    options.prefix.clear();  // the course's own code: the sandbox is for the labs graded
    reference_runner_ = std::make_shared<Runner>(std::move(options));
  }
  return reference_runner_;
}

void BenchSession::end_references() {
  if (!reference_runner_ || references_ended_) return;
  references_ended_ = true;
  reference_runner_->stop();
}

TimedArrays BenchSession::timed_arrays(Runner& runner, std::size_t n, std::size_t segments) {
  HeldArrays& held = held_;
  const int count = timed_input_count(runner, n);
  const bool reusable = held.runner == &runner && held.starts == runner.starts() &&
                        held.bytes != 0 && runner.timed_input_bytes() == held.bytes &&
                        static_cast<int>(held.arrays.inputs.size()) == count && held.n >= n &&
                        held.segments >= segments;
  if (!reusable) {
    held = HeldArrays{};
    held.arrays.inputs = runner.allocate_timed_inputs(n, count, segments);
    held.arrays.offsets = runner.timed_offsets();
    held.runner = &runner;
    held.starts = runner.starts();
    held.bytes = runner.timed_input_bytes();
    held.n = n;
    held.segments = segments;
  }
  return held.arrays;
}

Inputs& BenchSession::trusted_inputs(const Operation& op, std::size_t n) {
  if (!trusted_inputs_ || trusted_inputs_->n != n || trusted_inputs_->op != &op) {
    trusted_inputs_.reset();  // free the previous inputs first
    trusted_inputs_ = make_inputs(op, n, seed_);
  }
  return *trusted_inputs_;
}

std::shared_ptr<const Segmentation> BenchSession::segmentation(std::size_t n,
                                                               const SegmentShape& shape) {
  if (!segmentation_ || !segmentation_->cuts(n, shape)) {
    segmentation_.reset();
    segmentation_ = make_segmentation(n, shape, seed_);
  }
  return segmentation_;
}

SegmentedInputs& BenchSession::segmented_inputs(const SegmentedOp& op, std::size_t n,
                                                const SegmentShape& shape) {
  if (!segmented_inputs_ || segmented_inputs_->op != op.name ||
      !segmented_inputs_->seg->cuts(n, shape)) {
    segmented_inputs_.reset();
    segmented_inputs_ = make_segmented_inputs(op, segmentation(n, shape), seed_);
  }
  return *segmented_inputs_;
}

}  // namespace reduce::bench
