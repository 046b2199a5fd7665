/// \file
/// \brief The operations the benchmark times: one row of kOperations each, with its
/// cub::DeviceReduce counterpart, its trusted inputs (whose results are known exactly), its
/// result check and the CPU loop a student would write first.
#pragma once

#include "runner.hpp"
#include "timed_inputs.hpp"

#include <reduce/device_buffer.cuh>

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace reduce::bench {

/// What a correct call returns for one input (value, and the compensated sum's tolerance).
using Expected = reduce::timed::Expected;

/// Input makers run on the device: a 1 GiB input takes milliseconds, not a second of host time.
inline constexpr unsigned kFillBlocks = 1024, kFillThreads = 256;

/// A cub::DeviceReduce call: with null storage it only sets the bytes it needs. \p extra is
/// scratch the row keeps for itself in front of CUB's storage (ArgMax's maximum goes there).
using CubCall = cudaError_t (*)(void* storage, std::size_t& bytes, void* extra, const float* in,
                                std::size_t n, void* out, cudaStream_t stream);

/// The cub::DeviceReduce counterparts (CubCall) of the operations' rows, in cub_sums.cu (sum,
/// mean: the sum divided by n, the compensated sum: in double, rounded once) and cub_extremes.cu.
cudaError_t cub_sum(void*, std::size_t&, void*, const float*, std::size_t, void*, cudaStream_t);
cudaError_t cub_mean(void*, std::size_t&, void*, const float*, std::size_t, void*, cudaStream_t);
cudaError_t cub_sum_compensated(void*, std::size_t&, void*, const float*, std::size_t, void*,
                                cudaStream_t);
cudaError_t cub_maximum(void*, std::size_t&, void*, const float*, std::size_t, void*, cudaStream_t);
cudaError_t cub_minimum(void*, std::size_t&, void*, const float*, std::size_t, void*, cudaStream_t);
cudaError_t cub_product(void*, std::size_t&, void*, const float*, std::size_t, void*, cudaStream_t);
/// ArgMax: CUB writes the maximum too, into the row's extra scratch.
cudaError_t cub_argmax(void*, std::size_t&, void*, const float*, std::size_t, void*, cudaStream_t);

/// One operation of the course: all the benchmark knows about it beside its graded inputs, which
/// its answer (its row of kAnswers, timed_inputs.hpp, found by the operation's name) describes.
struct Operation {
  const char* name;  ///< row family, and the catalogue's entry point
  float identity;    ///< where the CPU loop starts (argmax: the best value so far)
  /// Fills x[0, n) on the device, from \p seed, with an input whose result is known exactly
  /// (the trusted rows' rotating inputs).
  Expected (*make)(float* x, std::size_t n, std::uint64_t seed);
  /// Whether a result (a float's value, or an index) is the expected one.
  bool (*check)(double got, const Expected& expected);
  /// The single-thread CPU loop a student would write first, in float.
  double (*cpu_loop)(const std::vector<float>& x, float identity);
  CubCall cub;  ///< the cub::DeviceReduce counterpart

  /// What a call writes (the catalogue's): an int64 index (argmax) or one float.
  ResultKind kind() const { return catalogue_entry(name).kind; }
  /// What the graded rows' inputs, made anew before every call, hold (kAnswers' row of this name).
  reduce::timed::Answer answer() const { return reduce::timed::answer_named(name); }
  /// The C function a lab library exports the operation by (the catalogue's).
  const char* getter() const { return catalogue_entry(name).getter; }
};

/// Every operation, in the order the benchmark registers their rows.
const std::vector<Operation>& operations();

/// The operation named \p name, or nullptr.
const Operation* find_operation(const std::string& name);

/// Writes one float at x[i] on the device (synchronous).
void write_at(float* x, std::size_t i, float v);

/// Trusted rows' inputs per (operation, size): kRotation of them, with their expected results.
inline constexpr int kRotation = 4;

/// Rotating inputs for one (operation, size) with their expected results.
struct Inputs {
  const Operation* op = nullptr;            ///< whose
  std::size_t n = 0;                        ///< floats each
  std::vector<DeviceBuffer<float>> device;  ///< the inputs
  std::vector<Expected> expected;           ///< their results
};

/// New rotating inputs of (\p op, \p n), made from \p seed (BenchSession::trusted_inputs()
/// keeps them while rows reuse them).
std::unique_ptr<Inputs> make_inputs(const Operation& op, std::size_t n, std::uint64_t seed);

}  // namespace reduce::bench
