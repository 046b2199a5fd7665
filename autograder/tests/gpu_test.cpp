#include "gpu_test.hpp"

#include "checker_launch.hpp"

#include <reduce/cuda_check.cuh>
#include <reduce/generators.hpp>
#include <reduce/keyed_hash.hpp>
#include <reduce/lab_entry_points.cuh>
#include <reduce_runner/lab_runner.hpp>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace reduce::testing {

std::string describe(float v) {
  char text[64];
  std::snprintf(text, sizeof text, "%.9g (bits 0x%08X)", static_cast<double>(v), bits(v));
  return text;
}

void expect_bits(float got, float want, const std::string& what) {
  if ((std::isnan(got) && std::isnan(want)) || bits(got) == bits(want)) return;
  ADD_FAILURE() << what << ": got " << describe(got) << ", expected exactly " << describe(want)
                << " (REDUCE_SEED=" << test_seed() << ")";
}

CheckerLaunch& checker_launch() {
  static CheckerLaunch launch;
  return launch;
}

std::uint64_t test_seed() {
  static const std::uint64_t seed = [] {
    const std::uint64_t value = checker_launch().seed;
    std::printf("[ seed     ] REDUCE_SEED=%llu\n", static_cast<unsigned long long>(value));
    return value;
  }();
  return seed;
}

std::string current_test_name() {
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  if (info == nullptr) return {};
  return std::string(info->test_suite_name()) + "." + info->name();
}

std::uint64_t input_seed_of(std::initializer_list<std::uint64_t> numbers) {
  // The lab's name too: labs that share a checker (and a lab process) get inputs of their own,
  // so that no lab can hand another the answer it computed for the same input.
  return test_input_key(test_seed(), lab_name() + ":" + current_test_name(), numbers);
}

std::string lab_order() {
  const std::string& order = checker_launch().order;
  if (order != "serial" && order != "tree" && order != "tree_atomic") {
    throw std::invalid_argument(
        "the lab's order (--lab-order) must be \"serial\", \"tree\" or \"tree_atomic\", not \"" +
        order + "\"");
  }
  return order;
}

std::string lab_name() {
  return checker_launch().lab;
}

std::string lab_entry(const char* otherwise) {
  const std::string& entry = checker_launch().entry;
  return entry.empty() ? otherwise : entry;
}

namespace {

/// An entry point of the catalogue whose result is one float or one index: its name, its
/// forwarding definition (lab_forwarding.cpp: a checker's labs are those) and, for a float
/// result, its FloatLab.
struct EntryRow {
  const char* entry;
  const void* run;
  std::optional<FloatLab> float_lab;
};

/// Every FloatLab and ArgmaxLab entry point of the catalogue (course_entries.inc), once.
const std::vector<EntryRow>& one_result_entries() {
#define REDUCE_ENTRY_ROW_FloatLab(e)                        \
  EntryRow{#e, reinterpret_cast<const void*>(&::reduce::e), \
           FloatLab{&::reduce::e##_workspace_bytes, &::reduce::e}},
#define REDUCE_ENTRY_ROW_ArgmaxLab(e) \
  EntryRow{#e, reinterpret_cast<const void*>(&::reduce::e), std::nullopt},
#define REDUCE_ENTRY_ROW_AtomicMaxLab(e)
#define REDUCE_ENTRY_ROW_SegmentedLab(e)
#define REDUCE_ENTRY(e, getter, kind, table) REDUCE_ENTRY_ROW_##table(e)
  static const std::vector<EntryRow> rows = {
#include <reduce/course_entries.inc>
  };
#undef REDUCE_ENTRY
#undef REDUCE_ENTRY_ROW_FloatLab
#undef REDUCE_ENTRY_ROW_ArgmaxLab
#undef REDUCE_ENTRY_ROW_AtomicMaxLab
#undef REDUCE_ENTRY_ROW_SegmentedLab
  return rows;
}

}  // namespace

FloatLab float_lab(const std::string& entry) {
  for (const EntryRow& row : one_result_entries())
    if (row.float_lab && entry == row.entry) return *row.float_lab;
  throw std::invalid_argument("\"" + entry +
                              "\" is no entry point of the course whose result is one float "
                              "(--lab-entry)");
}

std::size_t device_memory_total() {
  std::size_t free_bytes = 0, total_bytes = 0;
  REDUCE_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  const std::uint64_t limit = checker_launch().spec.gpu_memory_bytes;
  if (limit > 0 && limit < total_bytes) return static_cast<std::size_t>(limit);
  return total_bytes;
}

std::string memory_shortfall(std::size_t bytes) {
  const std::size_t total_bytes = device_memory_total();
  if (total_bytes >= kDeviceMemoryMargin && bytes <= total_bytes - kDeviceMemoryMargin) return {};
  const auto gib = [](std::size_t b) { return static_cast<double>(b) / (1u << 30); };
  char text[256];
  std::snprintf(text, sizeof text,
                "%stoo little memory on this GPU, so this test is not verified here: it has %.1f "
                "GiB in total, and the test needs %.1f GiB and a %.1f GiB margin",
                kSkipPrefix, gib(total_bytes), gib(bytes), gib(kDeviceMemoryMargin));
  return text;
}

int memory_slots_needed(std::size_t bytes, std::size_t usable, int slots) {
  if (slots < 1) return 0;
  if (usable == 0) return slots;
  // ceil(bytes / (usable / slots)), in doubles: bytes * slots may pass 2^64.
  const double share = static_cast<double>(usable) / slots;
  const double needed = std::ceil(static_cast<double>(bytes) / share);
  return static_cast<int>(std::clamp(needed, 1.0, static_cast<double>(slots)));
}

MemoryLease::MemoryLease(std::size_t bytes) {
  const launch::LaunchSpec& spec = checker_launch().spec;
  const int slots = spec.memory_slots;
  if (slots < 1 || spec.memory_slots_dir.empty()) return;
  const std::string& dir = spec.memory_slots_dir;
  const std::size_t total_bytes = device_memory_total();
  const std::size_t usable =
      total_bytes > kDeviceMemoryMargin ? total_bytes - kDeviceMemoryMargin : total_bytes;
  const int needed = memory_slots_needed(bytes, usable, slots);
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    // All the slots it needs or none: a test never holds some while it waits for others.
    for (int k = 0; k < slots && static_cast<int>(fds_.size()) < needed; ++k) {
      const std::string path = dir + "/slot-" + std::to_string(k);
      const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
      if (fd < 0) {  // no slots to be had: run without them rather than not at all
        for (const int held : fds_) ::close(held);
        fds_.clear();
        return;
      }
      if (::flock(fd, LOCK_EX | LOCK_NB) == 0)
        fds_.push_back(fd);
      else
        ::close(fd);
    }
    if (static_cast<int>(fds_.size()) == needed) break;
    for (const int held : fds_) ::close(held);  // closing a file releases its lock
    fds_.clear();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  const double waited =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (waited > 0.1)
    std::fprintf(stderr, "[ memory   ] waited %.2f s for %d of %d large-memory slots (%.1f GiB)\n",
                 waited, needed, slots, static_cast<double>(bytes) / (1u << 30));
}

MemoryLease::~MemoryLease() {
  for (const int fd : fds_) ::close(fd);  // closing a file releases its lock
}

DeviceBuffer<float> constant(std::size_t n, float value) {
  DeviceBuffer<float> x(n);
  if (n == 0) return x;
  set_element(x.data(), 0, value);
  // Doubling copies on the device: log2(n) copies, each of what is already filled.
  for (std::size_t filled = 1; filled < n; filled *= 2) {
    const std::size_t count = std::min(filled, n - filled);
    REDUCE_CUDA_CHECK(
        cudaMemcpy(x.data() + filled, x.data(), count * sizeof(float), cudaMemcpyDeviceToDevice));
  }
  // Device-to-device copies may return early, and a lab's non-blocking stream does not wait
  // for the legacy stream they ran on.
  REDUCE_CUDA_CHECK(cudaDeviceSynchronize());
  return x;
}

std::vector<std::size_t> sentinel_positions(std::size_t n) {
  return {0,    1,    31,   32,   33,    255,    256,    511,   512,
          1023, 1024, 2047, 2048, n / 2, n - 33, n - 32, n - 2, n - 1};
}

std::vector<std::size_t> boundary_positions(std::size_t n) {
  return {0,    1,    31,   32,   33,    255,    256,    257,    511,   512,  1023,
          1024, 1025, 2047, 2048, n / 2, n - 33, n - 32, n - 31, n - 2, n - 1};
}

// ---- windows of one allocation
// -------------------------------------------------------------------

std::vector<float> rising_negatives(std::size_t n) {
  std::vector<float> x(n);
  for (std::size_t i = 0; i < n; ++i) x[i] = -static_cast<float>(n - i);
  return x;
}

std::vector<float> falling_negatives(std::size_t n) {
  std::vector<float> x(n);
  for (std::size_t i = 0; i < n; ++i) x[i] = -static_cast<float>(i + 1);
  return x;
}

void for_each_window(const std::vector<float>& host, DeviceBuffer<float>& device,
                     const std::optional<std::pair<float, float>>& neighbours,
                     const std::function<void(const Window&)>& check) {
  for (std::size_t offset = 0; offset < 4; ++offset) {
    for (std::size_t n : kWindowLengths) {
      if (offset + n >= host.size()) continue;  // no float after the window
      std::string name = "window [" + std::to_string(offset) + ", " + std::to_string(offset + n) +
                         ") of an allocation of " + std::to_string(host.size()) + " floats";
      if (neighbours) {
        if (offset > 0) set_element(device.data(), offset - 1, neighbours->first);
        set_element(device.data(), offset + n, neighbours->second);
        name += ", " + describe(neighbours->first) + " just before it and " +
                describe(neighbours->second) + " just after it";
      }
      SCOPED_TRACE(name);
      check(Window{offset, n, device.data() + offset,
                   std::vector<float>(host.begin() + offset, host.begin() + offset + n)});
      if (neighbours) {
        if (offset > 0) set_element(device.data(), offset - 1, host[offset - 1]);
        set_element(device.data(), offset + n, host[offset + n]);
      }
    }
  }
}

// ---- realistic data ----------------------------------------------------------------------------

namespace {
const char* const kDataNames[] = {"uniform", "mixed_sign", "wide_range", "large_offset",
                                  "cancelling"};
}  // namespace

const char* data_name(Data data) {
  return kDataNames[static_cast<int>(data)];
}

void PrintTo(Data data, std::ostream* os) {
  *os << data_name(data);
}

std::vector<float> make_data(Data data, std::size_t n, std::uint64_t seed) {
  switch (data) {
    case Data::kUniform:
      return uniform(n, seed, 0.0f, 1.0f);
    case Data::kMixedSign:
      return mixed_sign(n, seed);
    case Data::kWideRange:
      return wide_range(n, seed);
    case Data::kLargeOffset:
      return uniform(n, seed, 1000.0f, 1001.0f);
    case Data::kCancelling:
      return cancelling(n, seed);
  }
  return {};
}

std::string data_and_size_name(
    const ::testing::TestParamInfo<std::tuple<Data, std::size_t>>& info) {
  return std::string(data_name(std::get<0>(info.param))) + "_" +
         std::to_string(std::get<1>(info.param));
}

// ---- rotating inputs ---------------------------------------------------------------------------

RotatingInputs::RotatingInputs(std::size_t count,
                               const std::function<std::vector<float>(std::uint64_t)>& make) {
  for (std::uint64_t k = 0; k < count; ++k) {
    hosts_.push_back(make(k));
    devices_.emplace_back(hosts_.back());
  }
}

void RotatingInputs::expect_unmodified() const {
  for (std::size_t k = 0; k < size(); ++k) {
    EXPECT_TRUE(devices_[k].to_host() == hosts_[k]) << "the lab modified its input " << k;
  }
}

// ---- the contract runner -----------------------------------------------------------------------

namespace {

/// \p byte repeated over the four bytes of a float.
std::uint32_t repeated(int byte) {
  std::uint32_t pattern = 0;
  std::memset(&pattern, byte, sizeof pattern);
  return pattern;
}

}  // namespace

ContractRunner::ContractRunner() = default;

float ContractRunner::run(const FloatLab& lab, const float* in, std::size_t n, int output_byte) {
  float_out_.fill_bytes(output_byte, stream_.get());
  DeviceBuffer<unsigned char> workspace(lab.workspace_bytes(n));
  workspace.fill_bytes(kPoisonByte, stream_.get());
  lab.run(in, n, float_out_.data(), Workspace{workspace.data(), workspace.bytes()}, stream_.get());
  return float_result(output_byte);
}

float ContractRunner::run(const FloatLab& lab, const std::vector<float>& host) {
  const DeviceBuffer<float> in(host);
  return run(lab, in.data(), host.size());
}

std::int64_t ContractRunner::run(const ArgmaxLab& lab, const float* in, std::size_t n) {
  index_out_.fill_bytes(kPoisonByte, stream_.get());
  DeviceBuffer<unsigned char> workspace(lab.workspace_bytes(n));
  workspace.fill_bytes(kPoisonByte, stream_.get());
  lab.run(in, n, index_out_.data(), Workspace{workspace.data(), workspace.bytes()}, stream_.get());
  return index_result();
}

std::int64_t ContractRunner::run(const ArgmaxLab& lab, const std::vector<float>& host) {
  const DeviceBuffer<float> in(host);
  return run(lab, in.data(), host.size());
}

std::vector<float> ContractRunner::run(const SegmentedLab& lab, ResultKind kind, const float* in,
                                       std::size_t n, const std::int64_t* offsets,
                                       std::size_t segments) {
  const std::size_t results = segments * runner::floats_per_segment(kind);
  DeviceBuffer<float> out(results + 1);
  out.fill_bytes(kPoisonByte, stream_.get());
  DeviceBuffer<unsigned char> workspace(lab.workspace_bytes(n, segments));
  workspace.fill_bytes(kPoisonByte, stream_.get());
  lab.run(in, n, offsets, segments, out.data(), Workspace{workspace.data(), workspace.bytes()},
          stream_.get());
  stream_.synchronize();
  std::vector<float> host = out.to_host();
  EXPECT_EQ(bits(host[results]), repeated(kPoisonByte))
      << "the lab wrote past its output of " << results << " floats";
  host.pop_back();
  return host;
}

float ContractRunner::float_result(int output_byte) {
  stream_.synchronize();
  const std::vector<float> host = float_out_.to_host();
  EXPECT_EQ(bits(host[1]), repeated(output_byte)) << "the lab wrote past its one-float output";
  return host[0];
}

std::int64_t ContractRunner::index_result() {
  stream_.synchronize();
  const std::vector<std::int64_t> host = index_out_.to_host();
  EXPECT_EQ(host[1], kPoisonIndex) << "the lab wrote past its one-index output";
  return host[0];
}

namespace {

/// ContractRunner::run_each() for a lab whose result is one \p Out: the catalogue's name of
/// \p lab's entry point, whose forwarding definition sends the calls to the lab's process.
template <typename Out, typename Lab>
std::vector<Out> run_each_of(const Lab& lab, const std::vector<const float*>& inputs, std::size_t n,
                             const Stream& stream) {
  const void* run = reinterpret_cast<const void*>(lab.run);
  const auto& rows = one_result_entries();
  const auto row =
      std::find_if(rows.begin(), rows.end(), [run](const EntryRow& r) { return r.run == run; });
  if (row == rows.end())
    throw std::logic_error("run_each: the lab is no entry point of the course's catalogue");
  DeviceBuffer<Out> device(inputs.size());
  runner::LabRunner::of_process().reduce_each(row->entry, inputs, n, device.data(), stream.get());
  stream.synchronize();
  return device.to_host();
}

}  // namespace

std::vector<float> ContractRunner::run_each(const FloatLab& lab,
                                            const std::vector<const float*>& inputs,
                                            std::size_t n) {
  return run_each_of<float>(lab, inputs, n, stream_);
}

std::vector<std::int64_t> ContractRunner::run_each(const ArgmaxLab& lab,
                                                   const std::vector<const float*>& inputs,
                                                   std::size_t n) {
  return run_each_of<std::int64_t>(lab, inputs, n, stream_);
}

std::vector<float> ContractRunner::atomic_max(float start, const float* values, std::size_t n,
                                              std::size_t per_launch, float* final) {
  DeviceBuffer<float> olds(n + 1);  // one old value per input, then a guard
  olds.fill_bytes(kPoisonByte, stream_.get());
  const float init[2] = {start, from_bits(0xFFFFFFFFu)};  // the address, then a guard
  REDUCE_CUDA_CHECK(
      cudaMemcpyAsync(address_.data(), init, sizeof init, cudaMemcpyHostToDevice, stream_.get()));
  std::size_t done = 0;
  do {  // n == 0: one launch of no values
    const std::size_t count = std::min(std::max<std::size_t>(per_launch, 1), n - done);
    atomic_max_apply(values + done, count, address_.data(), olds.data() + done, stream_.get());
    done += count;
  } while (done < n);
  stream_.synchronize();
  const std::vector<float> address = address_.to_host();
  EXPECT_EQ(bits(address[1]), 0xFFFFFFFFu) << "atomic_max wrote next to its address";
  *final = address[0];
  std::vector<float> host = olds.to_host();
  EXPECT_EQ(bits(host[n]), 0xFFFFFFFFu)
      << "atomic_max_apply wrote old_values[n]: a thread beyond the n values ran";
  host.resize(n);
  return host;
}

std::vector<float> ContractRunner::atomic_max(float start, const std::vector<float>& values,
                                              std::size_t per_launch, float* final) {
  const DeviceBuffer<float> in(values);
  return atomic_max(start, in.data(), values.size(), per_launch, final);
}

void ContractTest::SetUp() {
  REDUCE_REQUIRE_GPU();
  runner_ = std::make_unique<ContractRunner>();
}

}  // namespace reduce::testing
