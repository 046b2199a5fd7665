// The timing locks: correctness steps share their GPU's, a benchmark has it alone and is not
// overtaken by sharers that come after it; one lock per GPU unless the rubric asks for one per
// host. The CPU shares of the GPUs' workers.
#include <reduce_grade/grading/pipeline.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <thread>
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
