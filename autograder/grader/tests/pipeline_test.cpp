// The host's timing lock: correctness steps share it, a benchmark has it alone and is not
// overtaken by sharers that come after it.
#include <reduce_grade/pipeline.hpp>

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
