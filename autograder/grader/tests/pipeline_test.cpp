// The timing locks: correctness steps share their GPU's, a benchmark has it alone and is not
// overtaken by sharers that come after it; one lock per GPU unless the rubric asks for one per
// host. The CPU shares of the GPUs' workers. The checkers a GPU's memory holds at once.
#include <reduce_grade/base/util.hpp>
#include <reduce_grade/grading/pipeline.hpp>
#include <reduce_grade/processes/gpu_share.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace reduce::grade {
namespace {

using namespace std::chrono_literals;

// One lock per GPU for the whole process; with the host-wide setting, one for every GPU.
TEST(TimingLock, OnePerGpuUnlessHostWide) {
  EXPECT_EQ(&timing_lock("0", false), &timing_lock("0", false));
  EXPECT_NE(&timing_lock("0", false), &timing_lock("1", false));
  EXPECT_NE(&timing_lock("", false), &timing_lock("0", false));
  EXPECT_EQ(&timing_lock("0", true), &timing_lock("1", true));
  EXPECT_NE(&timing_lock("0", true), &timing_lock("0", false));
}

// A benchmark on GPU 0 keeps the correctness steps of GPU 0 waiting, not those of GPU 1; with
// the host-wide lock it keeps both waiting.
TEST(TimingLock, ABenchmarkHoldsItsGpuOnly) {
  for (const bool host_wide : {false, true}) {
    SCOPED_TRACE(host_wide ? "host-wide" : "per GPU");
    std::unique_lock<TimingLock> benchmark(timing_lock("7", host_wide));
    std::atomic<bool> same_gpu_in{false}, other_gpu_in{false};
    std::thread same([&] {
      const std::shared_lock<TimingLock> held(timing_lock("7", host_wide));
      same_gpu_in = true;
    });
    std::thread other([&] {
      const std::shared_lock<TimingLock> held(timing_lock("8", host_wide));
      other_gpu_in = true;
    });
    std::this_thread::sleep_for(100ms);
    EXPECT_FALSE(same_gpu_in);
    EXPECT_EQ(other_gpu_in.load(), !host_wide);
    benchmark.unlock();
    same.join();
    other.join();
    EXPECT_TRUE(same_gpu_in && other_gpu_in);
  }
}

TEST(CpuShare, ContiguousEvenAndNeverEmpty) {
  std::vector<int> sixteen(16);
  for (int c = 0; c < 16; ++c) sixteen[static_cast<std::size_t>(c)] = c;
  EXPECT_EQ(cpu_list_text(cpu_share(sixteen, 0, 2)), "0-7");
  EXPECT_EQ(cpu_list_text(cpu_share(sixteen, 1, 2)), "8-15");
  EXPECT_EQ(cpu_list_text(cpu_share(sixteen, 0, 3)), "0-4");
  EXPECT_EQ(cpu_list_text(cpu_share(sixteen, 1, 3)), "5-9");
  EXPECT_EQ(cpu_list_text(cpu_share(sixteen, 2, 3)), "10-15");
  EXPECT_EQ(cpu_share(sixteen, 0, 1), sixteen);
  // The CPUs the process may use, with gaps: shares of those, not of the numbers.
  const std::vector<int> gaps = {0, 2, 4, 6, 9};
  EXPECT_EQ(cpu_list_text(cpu_share(gaps, 0, 2)), "0,2");
  EXPECT_EQ(cpu_list_text(cpu_share(gaps, 1, 2)), "4,6,9");
  // More GPUs than CPUs: one CPU each, round robin.
  EXPECT_EQ(cpu_share({3, 5}, 2, 3), std::vector<int>{3});
  EXPECT_EQ(cpu_list_text({0, 1, 2, 5, 7, 8}), "0-2,5,7-8");
  EXPECT_EQ(cpu_list_text({}), "");
}

// Submissions on one GPU draw from the same slots, whichever of them asks; another GPU has its own.
TEST(GpuMemorySlots, OneFolderPerGpuForTheWholeProcess) {
  const std::filesystem::path first = gpu_memory_slots("0");
  EXPECT_TRUE(std::filesystem::is_directory(first));
  EXPECT_EQ(gpu_memory_slots("0"), first);
  EXPECT_NE(gpu_memory_slots("1"), first);
  EXPECT_NE(gpu_memory_slots(""), first);
  EXPECT_EQ(gpu_memory_slots("1").parent_path(), first.parent_path());
}

constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;
constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;

/// checkers_for_memory() of the rubric's \p checks and \p sanitizer, as (checks, sanitizer).
std::pair<int, int> fitted(std::optional<std::uint64_t> total, int checks = 8, int sanitizer = 2) {
  const CheckerCounts used = checkers_for_memory(total, {checks, sanitizer});
  return {used.parallel_checks, used.sanitizer_checkers};
}

// One checker per 2 GiB, at least 2, at most the rubric's; the sanitizer's share in proportion.
TEST(CheckersForMemory, OnePerTwoGibAtMostTheRubrics) {
  EXPECT_EQ(fitted(8 * kGiB), std::make_pair(4, 1));
  EXPECT_EQ(fitted(15 * kGiB), std::make_pair(7, 1));  // a T4: 15360 MiB
  EXPECT_EQ(fitted(16 * kGiB), std::make_pair(8, 2));
  EXPECT_EQ(fitted(80 * kGiB), std::make_pair(8, 2));
  EXPECT_EQ(fitted(141 * kGiB), std::make_pair(8, 2));
  EXPECT_EQ(fitted(std::nullopt), std::make_pair(8, 2));  // unread: the rubric's
  EXPECT_EQ(fitted(std::nullopt, 5, 3), std::make_pair(5, 3));
}

// The rubric's limits.gpu_memory_gib caps what the GPU has; 0 leaves it; it stands alone where
// the GPU's memory cannot be read. A 141 GiB GPU held to 15 GiB runs a T4's 7 checkers.
TEST(CheckersForMemory, TheRubricsMemoryLimitCapsTheGpus) {
  EXPECT_EQ(usable_gpu_memory(141 * kGiB, 0), 141 * kGiB);
  EXPECT_EQ(usable_gpu_memory(std::nullopt, 0), std::nullopt);
  EXPECT_EQ(usable_gpu_memory(141 * kGiB, 15), 15 * kGiB);
  EXPECT_EQ(usable_gpu_memory(8 * kGiB, 15), 8 * kGiB);
  EXPECT_EQ(usable_gpu_memory(std::nullopt, 15), 15 * kGiB);
  EXPECT_EQ(usable_gpu_memory(141 * kGiB, 0.5), kGiB / 2);
  EXPECT_EQ(fitted(usable_gpu_memory(141 * kGiB, 15)), std::make_pair(7, 1));
}

TEST(CheckersForMemory, WholeGibsAndItsBounds) {
  EXPECT_EQ(fitted(8188 * kMiB), std::make_pair(4, 1));  // an "8 GB" laptop GPU
  EXPECT_EQ(fitted(7 * kGiB + 400 * kMiB), std::make_pair(3, 1));
  EXPECT_EQ(fitted(7 * kGiB + 600 * kMiB), std::make_pair(4, 1));
  EXPECT_EQ(fitted(143771 * kMiB), std::make_pair(8, 2));  // the H200 as nvidia-smi reads it
  EXPECT_EQ(fitted(3 * kGiB), std::make_pair(2, 1));       // never fewer than 2
  EXPECT_EQ(fitted(0), std::make_pair(2, 1));
  EXPECT_EQ(fitted(16 * kGiB, 16, 4), std::make_pair(8, 2));
  EXPECT_EQ(fitted(24 * kGiB, 16, 4), std::make_pair(12, 3));
  EXPECT_EQ(fitted(141 * kGiB, 4, 2), std::make_pair(4, 2));
  EXPECT_EQ(fitted(8 * kGiB, 3, 1), std::make_pair(3, 1));
}

TEST(CheckersForMemory, SaysWhy) {
  EXPECT_EQ(checkers_text(15360 * kMiB, {8, 2}, {7, 1}),
            "7 processes at once, 1 of them the sanitizer's (15.0 GiB of GPU memory: one per 2 "
            "GiB, at most the rubric's 8)");
  EXPECT_EQ(checkers_text(std::nullopt, {8, 2}, {8, 2}),
            "8 processes at once, 2 of them the sanitizer's (the rubric's: the GPU's memory "
            "could not be read)");
}

/// Sets an environment variable (or unsets it: nullopt) while it lives.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value)
      ::setenv(name, value->c_str(), 1);
    else
      ::unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_)
      ::setenv(name_, old_->c_str(), 1);
    else
      ::unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

/// A folder with a stand-in nvidia-smi that records its arguments and prints what it is told.
class FakeNvidiaSmi : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = make_temp_dir("reduce-grade-smi-"); }
  void TearDown() override { remove_all_quietly(dir_); }

  /// nvidia-smi prints \p output and exits with \p status.
  void answer(const std::string& output, int status = 0) {
    const std::filesystem::path smi = dir_ / "nvidia-smi";
    std::ofstream(smi) << "#!/bin/sh\necho \"$@\" > '" << (dir_ / "args").string() << "'\nprintf '"
                       << output << "'\nexit " << status << "\n";
    std::filesystem::permissions(smi, std::filesystem::perms::owner_all);
  }
  /// Its arguments in the last run.
  std::string args() const { return trim(read_file(dir_ / "args")); }
  /// PATH with the stand-in first.
  std::string path() const {
    const char* old = std::getenv("PATH");
    return dir_.string() + ":" + (old != nullptr ? old : "/usr/bin:/bin");
  }

  std::filesystem::path dir_;
};

TEST_F(FakeNvidiaSmi, ReadsTheGradingsGpu) {
  answer("15360\n");
  const ScopedEnv on_path("PATH", path());
  const ScopedEnv visible("CUDA_VISIBLE_DEVICES", "5");
  EXPECT_EQ(gpu_total_memory("3"), 15360 * kMiB);
  EXPECT_EQ(args(), "--query-gpu=memory.total --format=csv,noheader,nounits --id=3");
  const CheckerCounts used = checkers_for_memory(gpu_total_memory("3"), {8, 2});
  EXPECT_EQ(used.parallel_checks, 7);
  EXPECT_EQ(used.sanitizer_checkers, 1);
}

TEST_F(FakeNvidiaSmi, WithoutAGpuNamedTheGradersOwnOrTheSmallestOfAll) {
  answer("143771\n15360\n");
  const ScopedEnv on_path("PATH", path());
  {
    const ScopedEnv visible("CUDA_VISIBLE_DEVICES", " 1 ");
    EXPECT_EQ(gpu_total_memory(""), 15360 * kMiB);
    EXPECT_EQ(args(), "--query-gpu=memory.total --format=csv,noheader,nounits --id=1");
  }
  const ScopedEnv visible("CUDA_VISIBLE_DEVICES", std::nullopt);
  EXPECT_EQ(gpu_total_memory(""), 15360 * kMiB);
  EXPECT_EQ(args(), "--query-gpu=memory.total --format=csv,noheader,nounits");
}

TEST_F(FakeNvidiaSmi, UnreadableMemoryIsNone) {
  const ScopedEnv on_path("PATH", path());
  answer("[N/A]\n");
  EXPECT_EQ(gpu_total_memory("0"), std::nullopt);
  answer("15360 MiB\n");
  EXPECT_EQ(gpu_total_memory("0"), std::nullopt);
  answer("");
  EXPECT_EQ(gpu_total_memory("0"), std::nullopt);
  answer("No devices were found\n", 6);
  EXPECT_EQ(gpu_total_memory("0"), std::nullopt);
  answer("15360\n", 6);
  EXPECT_EQ(gpu_total_memory("0"), std::nullopt);
  answer("15360\n");  // the stand-in itself reads
  EXPECT_EQ(gpu_total_memory("0"), 15360 * kMiB);
}

TEST_F(FakeNvidiaSmi, NoNvidiaSmiIsNone) {
  const ScopedEnv on_path("PATH", dir_.string());  // an empty folder
  EXPECT_EQ(gpu_total_memory("0"), std::nullopt);
  EXPECT_EQ(fitted(gpu_total_memory("0")), std::make_pair(8, 2));
}

TEST(TimingLock, SharersHoldItTogether) {
  TimingLock lock;
  std::atomic<int> inside{0}, most{0};
  auto share = [&] {
    const std::shared_lock<TimingLock> held(lock);
    most = std::max(most.load(), ++inside);
    std::this_thread::sleep_for(100ms);
    --inside;
  };
  std::thread a(share), b(share);
  a.join();
  b.join();
  EXPECT_EQ(most.load(), 2);
}

TEST(TimingLock, ABenchmarkWaitsForSharersAndGoesBeforeLaterOnes) {
  TimingLock lock;
  std::mutex order_mutex;
  std::vector<std::string> order;
  auto record = [&](const std::string& what) {
    const std::lock_guard<std::mutex> guard(order_mutex);
    order.push_back(what);
  };
  std::thread first([&] {
    const std::shared_lock<TimingLock> held(lock);
    record("tests of A start");
    std::this_thread::sleep_for(300ms);
    record("tests of A end");
  });
  std::this_thread::sleep_for(50ms);
  std::thread benchmark([&] {
    const std::unique_lock<TimingLock> held(lock);
    record("benchmark of B");
    std::this_thread::sleep_for(100ms);
  });
  std::this_thread::sleep_for(50ms);
  std::thread later([&] {
    const std::shared_lock<TimingLock> held(lock);
    record("tests of C");
  });
  first.join();
  benchmark.join();
  later.join();
  EXPECT_EQ(order, (std::vector<std::string>{"tests of A start", "tests of A end", "benchmark of B",
                                             "tests of C"}));
}

}  // namespace
}  // namespace reduce::grade
