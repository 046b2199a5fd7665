/// \file
/// \brief What every GPU test suite shares: skipping only for reasons no lab can provoke, the
/// one contract runner that calls a lab honestly, and the helpers every suite needs.
///
/// Every skip message starts with "[checker] " (kSkipPrefix): the grader counts any other skip
/// as a failure, so that a lab cannot make a test skip by printing or by exhausting resources.
#pragma once

#include <reduce/device_buffer.cuh>
#include <reduce/device_info.cuh>
#include <reduce/lab_entry_points.cuh>
#include <reduce_runner/protocol.hpp>
#include <reduce_vocabulary/result_kind.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <limits>
#include <memory>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

/// Skips the current test when no CUDA device is present. The message keeps the words
/// "no CUDA device", which the grader and the stub check look for.
#define REDUCE_REQUIRE_GPU()                                                                \
  do {                                                                                      \
    if (!::reduce::has_gpu())                                                               \
      GTEST_SKIP() << ::reduce::testing::kSkipPrefix << "no CUDA device: GPU test skipped"; \
  } while (0)

/// Skips the current test unless the GPU's total memory (a property of the hardware, not of
/// what anything else holds at the moment) has room for \p bytes and a margin. On a GPU large
/// enough the test runs, and an allocation that then fails is a failure. For the rest of the
/// test it holds one of the grader's large-memory slots (MemoryLease), once per test body.
#define REDUCE_REQUIRE_DEVICE_MEMORY(bytes)                                           \
  do {                                                                                \
    const std::string reduce_shortfall_ = ::reduce::testing::memory_shortfall(bytes); \
    if (!reduce_shortfall_.empty()) GTEST_SKIP() << reduce_shortfall_;                \
  } while (0);                                                                        \
  const ::reduce::testing::MemoryLease reduce_memory_lease_(bytes)

namespace reduce::testing {

/// The start of every skip message a test emits; the grader counts a skip without it as a
/// failure.
inline constexpr char kSkipPrefix[] = "[checker] ";

/// What an entry point writes (the catalogue's `result`), with its rules (result_kind.hpp).
using ResultKind = runner::ResultKind;

/// Byte written over outputs and workspaces before every call: 0xFF makes every float a NaN,
/// so an output the lab never wrote cannot pass for a result.
inline constexpr int kPoisonByte = 0xFF;

/// What an index output holds when the lab never wrote it: the poison pattern read as int64.
inline constexpr std::int64_t kPoisonIndex = -1;

/// Positive infinity.
inline constexpr float kInf = std::numeric_limits<float>::infinity();

/// The usual quiet NaN (bits 0x7FC00000).
inline constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

/// Bit pattern of a float, for bitwise comparisons (NaN == NaN, +0 != -0).
inline std::uint32_t bits(float v) {
  std::uint32_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

/// A float built from its bit pattern (e.g. a NaN with the sign bit set).
inline float from_bits(std::uint32_t b) {
  float v;
  std::memcpy(&v, &b, sizeof v);
  return v;
}

/// A float with its bit pattern, so that -0 and +0 (and NaN payloads) are told apart:
/// "-0 (bits 0x80000000)".
std::string describe(float v);

/// Bitwise comparison, any NaN matching any NaN, for results that are exact by construction:
/// a failure names \p what, both values with their bits (describe()) and the run's seed.
void expect_bits(float got, float want, const std::string& what);

/// The grading secret of this run: REDUCE_SEED if set (the grader's, or one to reproduce a
/// failure), else fixed. Printed once so every log carries it. Only for messages and for
/// reproducing: no input is made from it but through input_seed().
std::uint64_t test_seed();

/// The current GoogleTest test's full name, "Suite.Test" ("Prefix/Suite.Test/param" for a
/// parameterised one); empty outside a test.
std::string current_test_name();

/// input_seed() with its numbers as a list.
std::uint64_t input_seed_of(std::initializer_list<std::uint64_t> numbers);

/// The seed of one input of the current test: reduce::test_input_key() of the grading secret
/// (test_seed()), the lab's and the test's names ("04_sequential:" + current_test_name()) and
/// the call site's \p numbers.
/// A keyed hash (SipHash): the seed recovered from one input, by inverting the generators'
/// mix(), says nothing about the secret or about any other input, of this test or another.
/// Within one test, every input needs its own numbers; the host's expected values and the
/// device's input must use the same seed.
template <typename... Numbers>
std::uint64_t input_seed(Numbers... numbers) {
  return input_seed_of({static_cast<std::uint64_t>(numbers)...});
}

/// Summation order of the lab under test, "serial", "tree" or "tree_atomic" (reference.hpp's
/// depths), from the checker's launch (checker_launch.hpp: --lab-order, or the part of its
/// spec's labs under test); "tree" when not given.
/// \throws std::invalid_argument for any other value.
std::string lab_order();

/// Name of the lab under test (e.g. "04_sequential"), from the checker's launch (--lab-name, or
/// the part under test); "lab" when not given. For messages only.
std::string lab_name();

/// The lab.cuh entry point under test, from the checker's launch (--lab-entry, or the part
/// under test); \p otherwise when not given. A suite that
/// serves several operations (the sum's, for every mode of the sum) calls the lab through it.
std::string lab_entry(const char* otherwise);

/// The FloatLab of the entry point named \p entry (one of course.json's entries whose result is
/// one float), e.g. float_lab("sum") is FloatLab{&sum_workspace_bytes, &sum}.
/// \throws std::invalid_argument for a name that is no such entry point.
FloatLab float_lab(const std::string& entry);

/// Memory every test may use beyond the bytes it asks REDUCE_REQUIRE_DEVICE_MEMORY for: the
/// CUDA contexts of the checker and the lab runner, outputs, and any reasonable workspace.
inline constexpr std::size_t kDeviceMemoryMargin = std::size_t{1} << 30;

/// The GPU memory the tests count on: cudaMemGetInfo's total, or less where the grading says so
/// (its launch spec's gpu_memory_bytes, from the rubric's limits.gpu_memory_gib: a course graded
/// as on a smaller GPU).
std::size_t device_memory_total();

/// Empty when the GPU's total memory (device_memory_total()) holds \p bytes plus
/// kDeviceMemoryMargin; otherwise the skip message, which starts with kSkipPrefix and says "too
/// little memory" (the grader lists such tests as not verified on this GPU): "[checker] too
/// little memory on this GPU, so this test is not verified here: it has 7.6 GiB in total, and the
/// test needs 8.0 GiB and a 1.0 GiB margin". Deliberately blind to free memory and to the lab's
/// workspace size, which a lab controls.
std::string memory_shortfall(std::size_t bytes);

/// The grader's large-memory slots that a test's inputs take, held while it lives:
/// the launch spec's memory_slots N and memory_slots_dir DIR name N lock files in DIR (slot-0 ...
/// slot-N-1) shared by every
/// checker graded on the GPU. Each slot stands for an N-th of the GPU's memory (its total less
/// kDeviceMemoryMargin), and a test takes as many as its inputs need, all at once: so the
/// inputs held at once never exceed the GPU's memory, whether it has 140 GiB (three 8 GiB tests
/// side by side) or 15 GiB (one), while the other checkers' smaller tests run beside them.
/// Without a spec (a student's own run) it holds nothing.
class MemoryLease {
 public:
  /// Waits for the slots that \p bytes of inputs need (printed when it waited).
  explicit MemoryLease(std::size_t bytes);
  ~MemoryLease();
  MemoryLease(const MemoryLease&) = delete;
  MemoryLease& operator=(const MemoryLease&) = delete;

 private:
  std::vector<int> fds_;
};

/// How many of \p slots slots, each an equal share of \p usable bytes, inputs of \p bytes take:
/// at least one, at most all.
int memory_slots_needed(std::size_t bytes, std::size_t usable, int slots);

/// Writes \p v to element \p i of a device array; returns once it has landed.
inline void set_element(float* device, std::size_t i, float v) {
  copy_to_device(device + i, &v, 1);
}

/// A device array of \p n copies of \p value, complete when this returns.
DeviceBuffer<float> constant(std::size_t n, float value);

/// exact_integers(\p n, \p seed) written on the GPU, complete when this returns: its sum is
/// exact_integers_sum(n, seed), so a test of 3 x 10^8 floats neither generates nor copies them
/// on the host (over a second per test, per lab).
DeviceBuffer<float> exact_integers_on_device(std::size_t n, std::uint64_t seed);

/// all_negative(\p n, \p seed) written on the GPU, every element negated if \p negate (the
/// minimum's mirror image), complete when this returns. Its maximum (minimum) is
/// streamed_maximum() (streamed_minimum()) over all_negative_at().
DeviceBuffer<float> all_negative_on_device(std::size_t n, std::uint64_t seed, bool negate = false);

/// signed_mix(\p n, \p seed, \p zero_fraction, \p inf_fraction) written on the GPU, complete
/// when this returns. References: the streamed ones of reference.hpp over signed_mix_at().
DeviceBuffer<float> signed_mix_on_device(std::size_t n, std::uint64_t seed, double zero_fraction,
                                         double inf_fraction);

/// exact_product_factors(\p n, \p seed) written on the GPU, complete when this returns: its
/// product is exact_product_factors_product(n, seed).
DeviceBuffer<float> exact_product_factors_on_device(std::size_t n, std::uint64_t seed);

/// Where the sum, product and mean suites put their one sentinel: warp and block boundaries,
/// the middle and the tail of \p n (positions >= n are for the caller to skip).
std::vector<std::size_t> sentinel_positions(std::size_t n);

/// Where the maximum, minimum and argmax suites put their extreme element: sentinel_positions()
/// and a few more around the warp and block boundaries (positions >= n are for the caller to
/// skip).
std::vector<std::size_t> boundary_positions(std::size_t n);

// ---- windows of one allocation (hidden suites)
// ---------------------------------------------------

/// Lengths of the windows the hidden suites cut from one allocation: around warp, block and
/// tile sizes, and 3 x 2^16 + 1.
inline constexpr std::size_t kWindowLengths[] = {
    1,    2,    3,     5,     31,
    33,   255,  257,   1023,  1025,
    4095, 4097, 65535, 65537, 3 * (std::size_t{1} << 16) + 1};

/// Floats in an allocation that holds the longest window at an offset of up to 3 floats, with
/// floats to spare after it.
inline constexpr std::size_t kWindowSpan = 3 * (std::size_t{1} << 16) + 8;

/// -(n - i) for i < n: strictly rising, all negative, exact for n <= 2^24.
std::vector<float> rising_negatives(std::size_t n);

/// -(i + 1) for i < n: strictly falling, all negative, exact for n <= 2^24.
std::vector<float> falling_negatives(std::size_t n);

/// One window in[offset, offset + n) of an allocation.
struct Window {
  std::size_t offset;       ///< floats from the allocation's start (256-byte aligned)
  std::size_t n;            ///< length
  const float* device;      ///< the window's first float on the device
  std::vector<float> host;  ///< a host copy of the window
};

/// Calls \p check for every window of kWindowLengths at offsets 0..3 of \p host,
/// which \p device holds, under a SCOPED_TRACE that names the window. With \p neighbours, the
/// float just before each window (if any) and the one just after are set to those values first,
/// so that a lab reading outside the window gets them, and restored afterwards.
void for_each_window(const std::vector<float>& host, DeviceBuffer<float>& device,
                     const std::optional<std::pair<float, float>>& neighbours,
                     const std::function<void(const Window&)>& check);

// ---- realistic data (sum, mean) ----------------------------------------------------------------

/// Kinds of realistic input, compared with a double reference within a derived bound.
enum class Data {
  kUniform,      ///< uniform in [0, 1)
  kMixedSign,    ///< uniform in [-1, 1): cancellation
  kWideRange,    ///< random sign, 12 decades of magnitude
  kLargeOffset,  ///< uniform in [1000, 1001): running sums pass 2^24 early
  kCancelling    ///< reduce::cancelling(): pairs v, -v around small integers (ill-conditioned)
};

/// The kind's name as test names use it: "uniform", "mixed_sign", "wide_range", "large_offset",
/// "cancelling".
const char* data_name(Data data);

/// Prints a Data by its name in gtest's output.
void PrintTo(Data data, std::ostream* os);

/// \p n elements of kind \p data from \p seed.
std::vector<float> make_data(Data data, std::size_t n, std::uint64_t seed);

/// Names a (Data, size) test parameter "uniform_1000".
std::string data_and_size_name(const ::testing::TestParamInfo<std::tuple<Data, std::size_t>>& info);

// ---- tables of cases ---------------------------------------------------------------------------

/// One row of a semantics table: a named input and the result the operation must give.
template <typename Result>
struct TableCase {
  const char* name;           ///< the row's name in the test name
  std::vector<float> values;  ///< the input
  Result expected;            ///< the only right result
};

/// Prints a table row by its name in gtest's output.
template <typename Result>
void PrintTo(const TableCase<Result>& c, std::ostream* os) {
  *os << c.name;
}

/// Names a parameterised test after its parameter's `name` field.
struct NameField {
  /// The parameter's name.
  template <typename Param>
  std::string operator()(const ::testing::TestParamInfo<Param>& info) const {
    return info.param.name;
  }
};

// ---- rotating inputs ---------------------------------------------------------------------------

/// The order in which the EveryCallComputesAfresh tests call their three inputs: every input
/// follows every other one, and one follows itself.
inline constexpr int kRotation[] = {0, 1, 2, 0, 2, 1, 1};

/// Inputs with different contents on the device, kept with their host copies, for the tests
/// that rotate inputs so that no call can return a cached answer.
class RotatingInputs {
 public:
  /// Makes \p count inputs; input k holds make(k).
  RotatingInputs(std::size_t count, const std::function<std::vector<float>(std::uint64_t)>& make);

  /// Host copy of input \p k.
  const std::vector<float>& host(std::size_t k) const { return hosts_[k]; }
  /// Device pointer to input \p k.
  const float* device(std::size_t k) const { return devices_[k].data(); }
  /// Number of inputs.
  std::size_t size() const noexcept { return hosts_.size(); }

  /// Fails the test for every input whose device contents no longer match its host copy.
  void expect_unmodified() const;

 private:
  std::vector<std::vector<float>> hosts_;
  std::vector<DeviceBuffer<float>> devices_;
};

// ---- the contract runner -----------------------------------------------------------------------

/// One variant of an input: element \p at holds \p value (ContractRunner::run_variants()).
struct Change {
  std::size_t at;  ///< the element's index
  float value;     ///< its value in the variant
};

/// Variants of an input that one request of the lab's process calls.
inline constexpr std::size_t kVariantsPerRequest = runner::kMaxInputs;

/// Calls a lab the way the grader does, for every suite: the output (and a guard element after
/// it) and a fresh workspace of the size the lab asked for are poisoned first, the lab is called
/// on the runner's own non-blocking stream, the stream is synchronised, and the guard must still
/// hold the poison. Needs a GPU: construct it after REDUCE_REQUIRE_GPU() (ContractTest does).
class ContractRunner {
 public:
  /// Creates the stream and the outputs.
  ContractRunner();

  /// One call of an operation whose result is one float (sum, maximum, minimum, product,
  /// mean) on the device input in[0..n). The output and its guard are filled with
  /// \p output_byte (kPoisonByte, a NaN, unless a NaN is the expected result), the workspace
  /// with kPoisonByte.
  float run(const FloatLab& lab, const float* in, std::size_t n, int output_byte = kPoisonByte);

  /// Copies \p host to a new device buffer and runs \p lab on it.
  float run(const FloatLab& lab, const std::vector<float>& host);

  /// One call of argmax on the device input in[0..n); output and workspace are poisoned with
  /// kPoisonByte, so an index never written reads as kPoisonIndex.
  std::int64_t run(const ArgmaxLab& lab, const float* in, std::size_t n);

  /// Copies \p host to a new device buffer and runs \p lab on it.
  std::int64_t run(const ArgmaxLab& lab, const std::vector<float>& host);

  /// One call of the lab on each of \p inputs (device inputs of \p n floats each), as run()
  /// makes it with the default poison, results in order. The calls reach the lab's process as a
  /// few requests (runner::LabRunner::reduce_each()), not one each.
  std::vector<float> run_each(const FloatLab& lab, const std::vector<const float*>& inputs,
                              std::size_t n);

  /// The same for argmax: an index never written reads as kPoisonIndex.
  std::vector<std::int64_t> run_each(const ArgmaxLab& lab, const std::vector<const float*>& inputs,
                                     std::size_t n);

  /// One call of the lab on each variant of \p base: variant k is \p base with element
  /// changes[k].at set to changes[k].value, and the lab reads its \p n floats from \p offset
  /// on (all of \p base by default). Called as run_inputs() calls. Results in the order of
  /// \p changes.
  template <typename Lab>
  auto run_variants(const Lab& lab, const std::vector<float>& base,
                    const std::vector<Change>& changes, std::size_t offset = 0,
                    std::optional<std::size_t> length = std::nullopt) {
    return run_packed(lab, changes.size(), base.size(), offset,
                      length.value_or(base.size() - offset), [&](std::size_t k, float* to) {
                        std::copy(base.begin(), base.end(), to);
                        to[changes[k].at] = changes[k].value;
                      });
  }

  /// One call of the lab on each of \p inputs (host inputs of one size): copies in one
  /// allocation, each starting at a 256-byte boundary as cudaMalloc's do, made
  /// kVariantsPerRequest at a time and called through run_each(). Results in order.
  /// \throws std::invalid_argument for inputs of different sizes
  template <typename Lab>
  auto run_inputs(const Lab& lab, const std::vector<std::vector<float>>& inputs) {
    const std::size_t size = inputs.empty() ? 0 : inputs.front().size();
    for (const std::vector<float>& input : inputs)
      if (input.size() != size) throw std::invalid_argument("run_inputs: inputs of two sizes");
    return run_packed(lab, inputs.size(), size, 0, size, [&](std::size_t k, float* to) {
      std::copy(inputs[k].begin(), inputs[k].end(), to);
    });
  }

  /// Calls a segmented reduction of \p kind on in[0..n) with the device \p offsets (segments +
  /// 1 values) and returns its \p segments * floats_per_segment(\p kind) result floats. The
  /// output (those floats and a guard float after them) is poisoned with 0xFF bytes first; a
  /// write past it fails the test.
  std::vector<float> run(const SegmentedLab& lab, ResultKind kind, const float* in, std::size_t n,
                         const std::int64_t* offsets, std::size_t segments);

  /// Passed as \p per_launch to atomic_max(): every value in one launch.
  static constexpr std::size_t kOneLaunch = std::numeric_limits<std::size_t>::max();

  /// Applies reduce::atomic_max_apply to the device values[0..n) on an address that holds
  /// \p start first: launches of at most \p per_launch values each, queued in order on the
  /// runner's stream (1: one single-thread launch per value, a known order; kOneLaunch: all
  /// values at once). n == 0 makes one launch of no values. The old values (and a guard after
  /// them) are poisoned first; the guards after them and after the address must stay intact.
  /// \param final receives what the address holds at the end
  /// \returns the old value each call returned, in input order
  std::vector<float> atomic_max(float start, const float* values, std::size_t n,
                                std::size_t per_launch, float* final);

  /// Copies \p values to the device and applies them as atomic_max() does.
  std::vector<float> atomic_max(float start, const std::vector<float>& values,
                                std::size_t per_launch, float* final);

  /// The runner's stream, for tests that queue work of their own around a call.
  const Stream& stream() const noexcept { return stream_; }
  /// The float output: element 0 is the result, element 1 the guard.
  DeviceBuffer<float>& float_output() noexcept { return float_out_; }
  /// The index output: element 0 is the result, element 1 the guard.
  DeviceBuffer<std::int64_t>& index_output() noexcept { return index_out_; }

  /// For tests that call a lab themselves on stream() and float_output(): waits for the stream,
  /// checks that the guard still holds \p output_byte repeated, and returns the result.
  float float_result(int output_byte = kPoisonByte);

  /// The same for index_output(), whose guard must hold kPoisonIndex.
  std::int64_t index_result();

 private:
  /// \p count inputs of \p size floats, input k written by fill(k, its first float), the lab
  /// called on n floats from \p offset of each: kVariantsPerRequest copies at a time in one
  /// allocation, through run_each().
  template <typename Lab, typename Fill>
  auto run_packed(const Lab& lab, std::size_t count, std::size_t size, std::size_t offset,
                  std::size_t n, const Fill& fill) {
    using Result = decltype(run(lab, std::vector<float>()));
    std::vector<Result> results;
    const std::size_t stride = (size + 63) / 64 * 64;
    for (std::size_t first = 0; first < count; first += kVariantsPerRequest) {
      const std::size_t chunk = std::min(kVariantsPerRequest, count - first);
      std::vector<float> host(chunk * stride);
      for (std::size_t k = 0; k < chunk; ++k) fill(first + k, host.data() + k * stride);
      const DeviceBuffer<float> copies(host);
      std::vector<const float*> inputs;
      for (std::size_t k = 0; k < chunk; ++k) inputs.push_back(copies.data() + k * stride + offset);
      const std::vector<Result> got = run_each(lab, inputs, n);
      results.insert(results.end(), got.begin(), got.end());
    }
    return results;
  }

  Stream stream_;
  DeviceBuffer<float> float_out_{2};
  DeviceBuffer<std::int64_t> index_out_{2};
  DeviceBuffer<float> address_{2};
};

/// Base of every suite's fixture: skips without a GPU, else owns the ContractRunner.
class ContractTest : public ::testing::Test {
 protected:
  /// REDUCE_REQUIRE_GPU(), then the runner.
  void SetUp() override;
  /// The runner (valid once SetUp() has not skipped).
  ContractRunner& runner() { return *runner_; }

 private:
  std::unique_ptr<ContractRunner> runner_;
};

/// Fixture of a suite for one lab entry point, FloatLab or ArgmaxLab: run() calls it through the
/// ContractRunner.
template <typename Lab>
class LabTest : public ContractTest {
 protected:
  /// \param lab the entry points under test, e.g. FloatLab{&sum_workspace_bytes, &sum}
  explicit LabTest(const Lab& lab) : lab_(lab) {}

  /// ContractRunner::run() of the lab on the device input in[0..n).
  auto run(const float* in, std::size_t n) { return runner().run(lab_, in, n); }
  /// ContractRunner::run() of the lab on a copy of \p host.
  auto run(const std::vector<float>& host) { return runner().run(lab_, host); }
  /// ContractRunner::run_variants() of the lab: one call per change of \p base.
  auto run_variants(const std::vector<float>& base, const std::vector<Change>& changes,
                    std::size_t offset = 0, std::optional<std::size_t> length = std::nullopt) {
    return runner().run_variants(lab_, base, changes, offset, length);
  }
  /// ContractRunner::run_inputs() of the lab: one call per input, as few requests.
  auto run_inputs(const std::vector<std::vector<float>>& inputs) {
    return runner().run_inputs(lab_, inputs);
  }
  /// The entry points under test.
  const Lab& lab() const noexcept { return lab_; }

 private:
  Lab lab_;
};

/// Fixture of the suites whose operation returns one float.
using FloatLabTest = LabTest<FloatLab>;

/// Fixture of the argmax suites.
using ArgmaxLabTest = LabTest<ArgmaxLab>;

}  // namespace reduce::testing
