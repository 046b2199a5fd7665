/// \file
/// \brief The lab runner as the benchmark names it: the one file of the benchmark that names the
/// runner's library (its process, its protocol and the catalogue's table of entry points).
#pragma once

#include <reduce_runner/lab_runner.hpp>
#include <reduce_runner/protocol.hpp>

#include <stdexcept>
#include <string_view>

namespace reduce::bench {

/// A graded lab's process: the benchmark never loads a graded lab, it calls it through this.
using Runner = runner::LabRunner;
/// How a Runner starts (the environment's limits, the libraries it holds).
using RunnerOptions = runner::RunnerOptions;
/// What one timed request took: the benchmark's clock and the runner's CUDA events.
using TimedRun = runner::TimedRun;
/// What an entry point writes: float, index, apply, segments, segment pairs.
using ResultKind = runner::ResultKind;
/// One entry point of the catalogue (name, getter, result kind).
using CatalogueEntry = runner::Operation;

/// Whether a kind writes one result per segment (result_kind.hpp's traits).
using runner::per_segment;
/// Bytes of one result of a kind in a capture buffer (result_kind.hpp's traits).
using runner::result_bytes;
/// Floats of result per segment of a per-segment kind (result_kind.hpp's traits).
using runner::floats_per_segment;
/// Whether a kind's result is an int64 index, else float data (result_kind.hpp's traits).
using runner::is_index;

/// Most distinct inputs one request of a runner reads.
inline constexpr int kMaxRunnerInputs = runner::kMaxInputs;

/// The catalogue's entry point \p name (course.json, through the runner's protocol table), or
/// nullptr.
constexpr const CatalogueEntry* find_catalogue_entry(std::string_view name) {
  const int at = runner::find_operation(name);
  return at >= 0 ? &runner::kOperations[at] : nullptr;
}

/// The catalogue's entry point \p name; throws std::logic_error when it has none.
constexpr const CatalogueEntry& catalogue_entry(std::string_view name) {
  const CatalogueEntry* entry = find_catalogue_entry(name);
  return entry != nullptr ? *entry
                          : throw std::logic_error("the catalogue has no entry point of that name");
}

}  // namespace reduce::bench
