/// \file
/// \brief What an entry point of the lab contract writes (course.json's `result`), and the rules
/// of each kind in one table: its name in the catalogue, the bytes of one result, whether it
/// writes one result per segment, whether its result is an index, whether it takes a workspace.
///
/// No CUDA: the runner, the checkers and the grader (which validates the catalogue) read the same
/// table. CMake's side of a kind (its lab table, its demangled signature) is
/// cmake/ResultKinds.cmake.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace reduce::runner {

/// What a lab entry point produces.
enum class ResultKind : std::uint32_t {
  kFloat = 0,         ///< one float (sum, maximum, minimum, product, mean)
  kIndex = 1,         ///< one std::int64_t (argmax)
  kApply = 2,         ///< atomic_max_apply: updates *address and writes one old value per input
  kSegments = 3,      ///< one float per segment of the input (segmented_sum)
  kSegmentPairs = 4,  ///< two floats per segment of the input (segmented_softmax)
};

/// The rules of one result kind.
struct ResultKindTraits {
  ResultKind kind;        ///< the kind these rules are of
  std::string_view name;  ///< its `result` in course.json, e.g. "segment_pairs"
  /// Bytes of one result in a capture buffer (per_segment: of one segment's).
  std::size_t result_bytes;
  bool per_segment;                ///< one result per segment of the input (lab 17), else one
  std::size_t floats_per_segment;  ///< per_segment: floats of one segment's result; else 0
  bool is_index;                   ///< the result is one std::int64_t index, else float data
  bool has_workspace;              ///< the entry has a `<entry>_workspace_bytes`
  /// The entry updates the value at its output pointer in place (it reads it first): the runner
  /// never poisons that value and captures no result of it.
  bool in_place;
};

/// Every result kind, in the order of ResultKind's values (kResultKinds[k] is of kind k).
inline constexpr ResultKindTraits kResultKinds[] = {
    // kind, name, result_bytes, per_segment, floats_per_segment, is_index, has_workspace,
    // in_place
    {ResultKind::kFloat, "float", sizeof(float), false, 0, false, true, false},
    {ResultKind::kIndex, "index", sizeof(std::int64_t), false, 0, true, true, false},
    {ResultKind::kApply, "apply", sizeof(float), false, 0, false, false, true},
    {ResultKind::kSegments, "segments", sizeof(float), true, 1, false, true, false},
    {ResultKind::kSegmentPairs, "segment_pairs", 2 * sizeof(float), true, 2, false, true, false},
};

/// Number of result kinds.
inline constexpr std::size_t kResultKindCount = sizeof kResultKinds / sizeof kResultKinds[0];

/// Whether every row of kResultKinds stands at its kind's value, and a per-segment kind's bytes
/// are its floats'.
constexpr bool result_kinds_consistent() {
  for (std::size_t i = 0; i < kResultKindCount; ++i) {
    const ResultKindTraits& t = kResultKinds[i];
    if (static_cast<std::size_t>(t.kind) != i) return false;
    if (t.per_segment != (t.floats_per_segment > 0)) return false;
    if (t.per_segment && t.result_bytes != t.floats_per_segment * sizeof(float)) return false;
  }
  return true;
}
static_assert(result_kinds_consistent(), "kResultKinds: one row per ResultKind, in order");

/// The rules of \p kind.
constexpr const ResultKindTraits& result_kind_traits(ResultKind kind) {
  return kResultKinds[static_cast<std::size_t>(kind)];
}

/// The kind whose course.json name is \p name, or nothing.
constexpr std::optional<ResultKind> parse_result_kind(std::string_view name) {
  for (const ResultKindTraits& t : kResultKinds)
    if (t.name == name) return t.kind;
  return std::nullopt;
}

/// The course.json name of \p kind, e.g. "float".
constexpr std::string_view result_kind_name(ResultKind kind) {
  return result_kind_traits(kind).name;
}

/// Every kind's course.json name, for a message: "float, index, apply, segments or
/// segment_pairs".
inline std::string result_kind_names() {
  std::string names;
  for (std::size_t i = 0; i < kResultKindCount; ++i) {
    if (i > 0) names += i + 1 == kResultKindCount ? " or " : ", ";
    names += kResultKinds[i].name;
  }
  return names;
}

/// Whether \p kind writes one result per segment (a segmented reduction, lab 17).
constexpr bool per_segment(ResultKind kind) {
  return result_kind_traits(kind).per_segment;
}

/// Bytes of one result of \p kind in the capture buffer (per_segment: of one segment's).
constexpr std::size_t result_bytes(ResultKind kind) {
  return result_kind_traits(kind).result_bytes;
}

/// Bytes of one call's whole result: \p segments results when per_segment, else one.
constexpr std::size_t call_result_bytes(ResultKind kind, std::uint64_t segments) {
  return result_bytes(kind) * (per_segment(kind) ? segments : 1);
}

/// Floats one call of \p kind writes per segment: 1 (a sum), 2 (softmax's pair); 0 when it is
/// not per segment.
constexpr std::size_t floats_per_segment(ResultKind kind) {
  return result_kind_traits(kind).floats_per_segment;
}

/// Whether one call's result of \p kind is a std::int64_t index (argmax).
constexpr bool is_index(ResultKind kind) {
  return result_kind_traits(kind).is_index;
}

/// Whether an entry point of \p kind has a `<entry>_workspace_bytes` (all but atomic_max_apply).
constexpr bool has_workspace(ResultKind kind) {
  return result_kind_traits(kind).has_workspace;
}

/// Whether an entry point of \p kind updates its output in place (atomic_max_apply): its output
/// is never poisoned and no result of it is captured.
constexpr bool updates_in_place(ResultKind kind) {
  return result_kind_traits(kind).in_place;
}

}  // namespace reduce::runner
