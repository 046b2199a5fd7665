/// \file
/// \brief Lab 17's segmented reductions: the operations, how a row cuts its n floats into
/// segments, its inputs and CUB's expected results, and the rows (segmented_rows.cu).
///
/// Rows "<op>_<length>/<implementation>/<n>", op segmented_sum or segmented_softmax: n floats cut
/// into n / length segments of `length` elements each, n rounded down to whole segments
/// (REDUCE_SEGMENT_LENGTHS, default 32,1024,32768,1048576: the families the grader times); and
/// "<op>_ragged<mean>/<implementation>/<n>" (REDUCE_SEGMENT_RAGGED="32,1024", default none):
/// lengths drawn uniformly in [mean/2, 3 mean/2] from the run's seed until the next one would pass
/// n, registered right after the uniform family of the same length. Implementations: the labs (in
/// this process, or graded through their runners), "cub" (cub::DeviceSegmentedReduce with offsets,
/// CUDA's own CUB) and "cub_fixed" (its segment_size overload, built against the newest CCCL
/// headers: cub_fixed_rows.hpp; uniform rows only). Before them, "floor/<n>":
/// cub::DeviceReduce::Sum over the same n floats (bench_trusted(): four rotating inputs, L2 flushed
/// before every call), the memory's speed in this run.
///
/// Every timed call's results are compared with CUB's (offsets) on the device: the sums bit for
/// bit (every element is +1 or -1, so every segment's sum is exact in float in any order, length
/// <= 2^24); softmax's maxima bit for bit and its sums within twice the contract's bound at the
/// longest segment's depth (elements in [-3.5, 0] in trusted rows, [-3.5, 3.5] in graded rows, so
/// |x - m| <= 7).
///
/// Bytes read per call: the segments' floats (counter `elements`; `elements_left_out` = n minus
/// them) plus, for the labs and "cub", the segments + 1 offsets (8 bytes each); "cub_fixed" and
/// the floor read the floats only. median_gbps and bytes_per_second count those bytes, and
/// of_floor is median_gbps over the floor's at the same n, where the floor row ran earlier in
/// this process (tools/maint/update_results.py computes it from a results file otherwise).
#pragma once

#include "reporting.hpp"
#include "runner.hpp"

#include <reduce/device_buffer.cuh>

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace reduce::bench {

class BenchSession;  // session.cuh

/// cub::DeviceSegmentedReduce's sum and softmax (SegmentedOp::cub), in cub_segmented.cu.
cudaError_t cub_segmented_sum(void* storage, std::size_t& bytes, const float* in,
                              const std::int64_t* offsets, std::size_t segments, float* out,
                              cudaStream_t stream);
cudaError_t cub_segmented_softmax(void* storage, std::size_t& bytes, const float* in,
                                  const std::int64_t* offsets, std::size_t segments, float* out,
                                  cudaStream_t stream);

/// A segmented operation the benchmark times.
struct SegmentedOp {
  std::string name;  ///< the catalogue's entry point, and the rows' prefix
  /// CUB's counterpart, with cub::DeviceSegmentedReduce's two-phase storage protocol.
  cudaError_t (*cub)(void* storage, std::size_t& bytes, const float* in,
                     const std::int64_t* offsets, std::size_t segments, float* out,
                     cudaStream_t stream);
  /// The newest CUB's counterpart for segments of one length (cub_fixed_rows.hpp).
  cudaError_t (*cub_fixed)(void* storage, std::size_t& bytes, const float* in, float* out,
                           std::int64_t segments, int segment_size, cudaStream_t stream);

  /// What a call writes per segment (the catalogue's): one float, or softmax's pair.
  ResultKind kind() const { return catalogue_entry(name).kind; }
  /// Floats of result per segment.
  std::size_t per_segment() const { return floats_per_segment(kind()); }
  /// The C function a lab library exports it by (the catalogue's).
  const char* getter() const { return catalogue_entry(name).getter; }
};

/// Every segmented operation, in the order of their rows.
const std::vector<SegmentedOp>& segmented_ops();

/// The segmented operation \p name, or nullptr.
const SegmentedOp* find_segmented_op(const std::string& name);

/// How a row cuts its n floats: segments of `length` elements each, or (ragged) of lengths drawn
/// uniformly in [length / 2, 3 length / 2], `length` their mean.
struct SegmentShape {
  std::size_t length = 0;  ///< each segment's length, or (ragged) their mean
  bool ragged = false;     ///< lengths drawn at random

  /// The rows' family: segmented_sum_32, segmented_sum_ragged32...
  std::string family(const SegmentedOp& op) const {
    return op.name + (ragged ? "_ragged" : "_") + std::to_string(length);
  }
  /// The shortest length a segment may have.
  std::size_t shortest() const { return ragged ? std::max<std::size_t>(length / 2, 1) : length; }
  /// The longest length a segment may have.
  std::size_t longest() const { return ragged ? length + length / 2 : length; }
  /// Whether n floats hold a segment of this shape.
  bool fits(std::size_t n) const { return length > 0 && n >= longest(); }
};

/// The segments of one shape within n floats (n rounded down to whole segments), and their
/// segments + 1 offsets on the device.
struct Segmentation {
  std::size_t n = 0;                   ///< the row's n
  std::size_t segments = 0;            ///< how many
  std::size_t elements = 0;            ///< the floats they hold (n rounded down)
  std::size_t min_length = 0;          ///< the shortest one's length
  std::size_t max_length = 0;          ///< the longest one's length
  SegmentShape shape;                  ///< how they were cut
  DeviceBuffer<std::int64_t> offsets;  ///< segments + 1, on the device

  /// Whether these are the segments of a row of \p rows floats cut as \p cut.
  bool cuts(std::size_t rows, const SegmentShape& cut) const {
    return n == rows && shape.length == cut.length && shape.ragged == cut.ragged;
  }
};

/// A new segmentation of (n, shape) (BenchSession::segmentation() keeps it while rows reuse
/// it). Ragged lengths come from the keyed
/// stream of derive_key(\p seed, "segmentation", mean) (reduce/keyed_hash.hpp): every
/// implementation, both operations and every size see the same sequence (a smaller n holds a
/// prefix of it), and no run of lengths tells the key.
std::shared_ptr<const Segmentation> make_segmentation(std::size_t n, const SegmentShape& shape,
                                                      std::uint64_t seed);

/// Bytes one call reads: the segments' floats, and their offsets where \p offsets.
double segmented_read_bytes(const Segmentation& seg, bool offsets);

/// A graded row's input, made whole from \p seed (a fresh one before every call): signs for the
/// sum, halves in [-3.5, 3.5] for softmax.
void fill_graded_segmented_input(const SegmentedOp& op, float* x, std::size_t n,
                                 std::uint64_t seed);

/// Writes \p op's expected results of input \p x, cut as \p seg, at \p out (asynchronous, on the
/// default stream). Segments of one length of at most 32 floats: a warp each, in tree order (the
/// sums exact, softmax's pairs combined as CUB combines them, to a depth within the contract's
/// bound). CUB gives each segment a block of its own, which at 8 million segments took far longer
/// than the lab's call. Other shapes: CUB with this process's offsets, in \p storage of \p bytes.
void expected_segment_results(const SegmentedOp& op, const float* x, const Segmentation& seg,
                              void* storage, std::size_t bytes, float* out);

/// Counts \p segments results of \p op at \p got that differ from \p want (asynchronous);
/// \p longest: the longest segment's length.
void count_segment_mismatches(const SegmentedOp& op, const float* got, const float* want,
                              std::size_t segments, std::size_t longest, unsigned* mismatches,
                              cudaStream_t stream);

/// The input, segmentation and CUB's results for one (op, n, shape), kept while rows reuse them.
struct SegmentedInputs {
  std::string op;                           ///< whose
  std::shared_ptr<const Segmentation> seg;  ///< the segments
  DeviceBuffer<float> x{1};                 ///< the input
  DeviceBuffer<float> expected{1};          ///< CUB's results on it
};

/// New inputs of the trusted rows of \p op, cut as \p seg, made from \p seed
/// (BenchSession::segmented_inputs() keeps them while rows reuse them).
std::unique_ptr<SegmentedInputs> make_segmented_inputs(const SegmentedOp& op,
                                                       std::shared_ptr<const Segmentation> seg,
                                                       std::uint64_t seed);

/// Registers lab 17's rows (see above) at every size where a segmented lab is timed: floor/<n>
/// first, then per shape and size the graded labs, CUB's two rows and the trusted labs. Returns
/// the families and implementations that were registered, in order, for print_segmented_tables().
/// The rows reach \p session, which must outlive them.
std::pair<std::vector<std::string>, std::vector<std::string>> register_segmented_rows(
    Rows& rows, const std::vector<std::size_t>& sizes, BenchSession& session);

}  // namespace reduce::bench
