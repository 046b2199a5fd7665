// The sum benchmark and the ladder table.
//
// Loads lab libraries (default: every lab of the tree this binary was built for; override with
// REDUCE_LABS="04_sequential=/path/lib04_sequential_sum.so,...") and times each one's sum beside
// cub::DeviceReduce::Sum, the ceiling probe (a pure streaming read) and the single-thread CPU
// loop, on the same buffers, in one process. Sizes: REDUCE_BENCH_SIZES="2^26,2^28" (default
// 2^10, 2^12, ..., 2^30). Select rows with --benchmark_filter; write JSON with
// --benchmark_out=FILE --benchmark_out_format=json.
//
// Method (DESIGN §5): each sample flushes L2 and poisons the output outside the timed region,
// times one call with CUDA events, and checks the result; three inputs with different contents
// rotate so a cached answer fails. Rows report the median over samples.
#include <reduce/ceiling.cuh>
#include <reduce/cuda_check.cuh>
#include <reduce/device_buffer.cuh>
#include <reduce/device_info.cuh>
#include <reduce/event_timer.cuh>
#include <reduce/generators.hpp>
#include <reduce/l2_flush.cuh>
#include <reduce/lab.cuh>
#include <reduce/reference.hpp>

#include <benchmark/benchmark.h>
#include <cub/device/device_reduce.cuh>
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#ifndef REDUCE_DEFAULT_LABS
#define REDUCE_DEFAULT_LABS ""
#endif

namespace {

using reduce::DeviceBuffer;
using reduce::Workspace;

/// One row of the ladder: something that sums floats on the device (or, for "cpu", the host).
struct Impl {
  std::string name;
  std::function<std::size_t(std::size_t)> workspace_bytes;
  std::function<void(const float*, std::size_t, float*, Workspace, cudaStream_t)> run;
  bool computes_sum = true;  // false for the probe, whose output is not a sum
  bool on_host = false;
};

/// What one benchmark measured, for the table printed at the end.
struct Row {
  double median_us = 0, gbps = 0, result = NAN, error = NAN;
  std::string status = "ok";
};
std::map<std::pair<std::size_t, std::string>, Row> g_rows;
double g_ceiling_gbps = 0;
std::size_t g_ceiling_n = 0;

constexpr int kRotation = 3;

/// Rotating inputs for one size with their exact sums; one size is alive at a time.
struct Inputs {
  std::size_t n = 0;
  std::vector<DeviceBuffer<float>> device;
  std::vector<float> expected;
  std::vector<float> host0;  // the CPU baseline reads this copy of input 0
};

Inputs& inputs_for(std::size_t n) {
  static std::unique_ptr<Inputs> current;
  if (!current || current->n != n) {
    current.reset();  // free the previous size first
    auto fresh = std::make_unique<Inputs>();
    fresh->n = n;
    const char* env = std::getenv("REDUCE_SEED");  // set by the grader to make a run repeatable
    const std::uint64_t seed = env != nullptr ? std::stoull(env, nullptr, 0) : reduce::fresh_seed();
    for (int k = 0; k < kRotation; ++k) {
      std::vector<float> host = reduce::exact_integers(n, seed + k);
      fresh->expected.push_back(static_cast<float>(reduce::reference_sum(host)));
      fresh->device.emplace_back(host);
      if (k == 0) fresh->host0 = std::move(host);
    }
    current = std::move(fresh);
  }
  return *current;
}

double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

void bench_device(benchmark::State& state, const Impl& impl, std::size_t n) {
  Row& row = g_rows[{n, impl.name}];
  try {
    Inputs& in = inputs_for(n);
    reduce::Stream stream;
    reduce::L2Flush l2;
    reduce::EventTimer timer;
    DeviceBuffer<unsigned char> workspace(impl.workspace_bytes(n));
    DeviceBuffer<float> out(1);
    const Workspace ws{workspace.data(), workspace.bytes()};
    impl.run(in.device[0].data(), n, out.data(), ws, stream.get());  // warm-up
    stream.synchronize();

    std::vector<double> samples;
    int wrong = 0;
    float got = 0;
    std::size_t k = 0;
    for (auto _ : state) {
      const int b = static_cast<int>(k++ % kRotation);
      out.fill_bytes(0xFF, stream.get());
      workspace.fill_bytes(0xFF, stream.get());
      l2.flush(stream.get());
      timer.start(stream.get());
      impl.run(in.device[b].data(), n, out.data(), ws, stream.get());
      timer.stop(stream.get());
      const double ms = timer.elapsed_ms();
      state.SetIterationTime(ms * 1e-3);
      samples.push_back(ms);
      if (impl.computes_sum) {
        REDUCE_CUDA_CHECK(cudaMemcpy(&got, out.data(), sizeof got, cudaMemcpyDeviceToHost));
        if (std::memcmp(&got, &in.expected[b], sizeof got) != 0) {
          ++wrong;
          row.result = got;
          row.error = std::fabs(static_cast<double>(got) - in.expected[b]);
        } else if (wrong == 0) {
          row.result = got;
          row.error = 0;
        }
      }
    }
    const double bytes = static_cast<double>(n) * sizeof(float);
    row.median_us = median(samples) * 1e3;
    row.gbps = bytes / (row.median_us * 1e-6) / 1e9;
    state.SetBytesProcessed(static_cast<std::int64_t>(bytes) * state.iterations());
    state.counters["median_us"] = row.median_us;
    state.counters["median_gbps"] = row.gbps;
    state.counters["wrong_results"] = wrong;
    if (wrong > 0) {
      row.status = "WRONG in " + std::to_string(wrong) + " timed runs";
      state.SkipWithError(row.status.c_str());
    }
  } catch (const std::exception& e) {
    row.status = e.what();
    state.SkipWithError(e.what());
  }
}

void bench_host(benchmark::State& state, std::size_t n) {
  Row& row = g_rows[{n, "cpu"}];
  Inputs& in = inputs_for(n);
  std::vector<double> samples;
  float got = 0;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    got = reduce::serial_float_sum(in.host0.data(), n);
    benchmark::DoNotOptimize(got);
    const std::chrono::duration<double> seconds = std::chrono::steady_clock::now() - start;
    state.SetIterationTime(seconds.count());
    samples.push_back(seconds.count() * 1e3);
  }
  row.median_us = median(samples) * 1e3;
  row.gbps = n * sizeof(float) / (row.median_us * 1e-6) / 1e9;
  row.result = got;
  row.error = std::fabs(static_cast<double>(got) - in.expected[0]);  // float loop: may be inexact
  state.counters["median_us"] = row.median_us;
  state.counters["median_gbps"] = row.gbps;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  std::stringstream stream(s);
  for (std::string part; std::getline(stream, part, sep);)
    if (!part.empty()) parts.push_back(part);
  return parts;
}

/// "67108864" or "2^26".
std::size_t parse_size(const std::string& text) {
  const auto caret = text.find('^');
  if (caret == std::string::npos) return std::stoull(text);
  return static_cast<std::size_t>(std::llround(
      std::pow(std::stod(text.substr(0, caret)), std::stod(text.substr(caret + 1)))));
}

std::vector<Impl> load_labs() {
  const char* env = std::getenv("REDUCE_LABS");
  std::vector<Impl> labs;
  for (const std::string& entry : split(env != nullptr ? env : REDUCE_DEFAULT_LABS, ',')) {
    const auto eq = entry.find('=');
    const std::string name = entry.substr(0, eq);
    const std::string path = eq == std::string::npos ? entry : entry.substr(eq + 1);
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      std::fprintf(stderr, "cannot load lab %s: %s\n", name.c_str(), dlerror());
      continue;
    }
    using Getter = const reduce::SumLab* (*)();
    auto getter = reinterpret_cast<Getter>(dlsym(handle, "reduce_sum_lab"));
    if (getter == nullptr) {
      std::fprintf(stderr, "lab %s exports no reduce_sum_lab\n", name.c_str());
      continue;
    }
    const reduce::SumLab* lab = getter();
    labs.push_back({name, lab->workspace_bytes, lab->run});
  }
  return labs;
}

Impl cub_impl() {
  return {"cub",
          [](std::size_t n) {
            std::size_t bytes = 0;
            REDUCE_CUDA_CHECK(cub::DeviceReduce::Sum(nullptr, bytes, static_cast<const float*>(nullptr),
                                                     static_cast<float*>(nullptr),
                                                     static_cast<std::int64_t>(n)));
            return bytes;
          },
          [](const float* in, std::size_t n, float* out, Workspace ws, cudaStream_t stream) {
            std::size_t bytes = ws.bytes;
            REDUCE_CUDA_CHECK(cub::DeviceReduce::Sum(ws.data, bytes, in, out,
                                                     static_cast<std::int64_t>(n), stream));
          }};
}

Impl probe_impl() {
  return {"stream_read", [](std::size_t) { return std::size_t{0}; },
          [](const float* in, std::size_t n, float* out, Workspace, cudaStream_t stream) {
            reduce::stream_read(in, n, out, stream);
          },
          /*computes_sum=*/false};
}

std::string fixed(double v, int digits) {
  if (!std::isfinite(v)) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

/// The ladder table, one block per size: what a student compares rung by rung.
void print_table(const std::vector<std::size_t>& sizes, const std::vector<Impl>& impls,
                 const reduce::DeviceInfo& gpu) {
  std::printf("\n%s, %d SMs, theoretical %.0f GB/s; ceiling probe (stream read of %zu floats, "
              "%s) %.0f GB/s\n",
              gpu.name.c_str(), gpu.sm_count, gpu.theoretical_bandwidth_gbps(), g_ceiling_n,
              reduce::stream_read_variant(), g_ceiling_gbps);
  std::printf("probe layouts:");
  for (const reduce::ProbeTiming& t : reduce::probe_timings()) std::printf(" [%s] %.0f", t.name, t.gbps);
  std::printf(" GB/s\n");
  for (std::size_t n : sizes) {
    const auto find = [&](const std::string& name) -> const Row* {
      const auto it = g_rows.find({n, name});
      return it == g_rows.end() || it->second.median_us <= 0 ? nullptr : &it->second;
    };
    const Row* cpu = find("cpu");
    const Row* cub = find("cub");
    const Row* first = nullptr;  // rung 1, the naive atomic, when it is in this run
    for (const Impl& impl : impls)
      if (impl.name.rfind("01_", 0) == 0) first = find(impl.name);
    std::printf("\nn = %zu floats (%.1f MB)\n", n, n * 4 / 1e6);
    std::printf("%-26s %11s %9s %8s %9s %9s %7s %14s %10s  %s\n", "rung", "time_us", "GB/s",
                "ceil%", "x_cpu", "x_rung1", "t/CUB", "result", "|error|", "status");
    for (const Impl& impl : impls) {
      const Row* r = find(impl.name);
      const auto it = g_rows.find({n, impl.name});
      if (r == nullptr) {
        if (it != g_rows.end())
          std::printf("%-26s %11s  %s\n", impl.name.c_str(), "-", it->second.status.c_str());
        continue;
      }
      std::printf("%-26s %11s %9s %8s %9s %9s %7s %14s %10s  %s\n", impl.name.c_str(),
                  fixed(r->median_us, 1).c_str(), fixed(r->gbps, 1).c_str(),
                  fixed(100 * r->gbps / g_ceiling_gbps, 1).c_str(),
                  cpu ? fixed(cpu->median_us / r->median_us, 1).c_str() : "-",
                  first ? fixed(first->median_us / r->median_us, 1).c_str() : "-",
                  cub ? fixed(r->median_us / cub->median_us, 3).c_str() : "-",
                  fixed(r->result, 1).c_str(), fixed(r->error, 1).c_str(), r->status.c_str());
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  if (!reduce::has_gpu()) {
    std::printf("no CUDA device: the benchmark needs a GPU\n");
    return 0;
  }
  const reduce::DeviceInfo gpu = reduce::query_device();
  g_ceiling_n = reduce::ceiling_probe_size();
  g_ceiling_gbps = reduce::measure_ceiling_gbps(g_ceiling_n);
  benchmark::AddCustomContext("gpu", gpu.name);
  benchmark::AddCustomContext("sm_count", std::to_string(gpu.sm_count));
  benchmark::AddCustomContext("theoretical_gbps", fixed(gpu.theoretical_bandwidth_gbps(), 1));
  benchmark::AddCustomContext("ceiling_gbps", fixed(g_ceiling_gbps, 1));
  benchmark::AddCustomContext("ceiling_kernel", reduce::stream_read_variant());
  for (const reduce::ProbeTiming& t : reduce::probe_timings()) {
    benchmark::AddCustomContext(std::string("probe ") + t.name, fixed(t.gbps, 1));
  }

  std::vector<std::size_t> sizes;
  if (const char* env = std::getenv("REDUCE_BENCH_SIZES")) {
    for (const std::string& s : split(env, ',')) sizes.push_back(parse_size(s));
  } else {
    for (int e = 10; e <= 30; e += 2) sizes.push_back(std::size_t{1} << e);
  }

  std::vector<Impl> impls = {probe_impl(), cub_impl()};
  for (Impl& lab : load_labs()) impls.push_back(std::move(lab));
  impls.push_back({"cpu", nullptr, nullptr, true, /*on_host=*/true});

  for (std::size_t n : sizes) {
    for (const Impl& impl : impls) {
      const std::string name = "sum/" + impl.name + "/" + std::to_string(n);
      auto* b = impl.on_host
                    ? benchmark::RegisterBenchmark(name.c_str(), [n](benchmark::State& s) { bench_host(s, n); })
                    : benchmark::RegisterBenchmark(name.c_str(), [impl, n](benchmark::State& s) {
                        bench_device(s, impl, n);
                      });
      b->UseManualTime()->Unit(benchmark::kMicrosecond)->MinTime(impl.on_host ? 0.2 : 0.1);
    }
  }
  benchmark::RunSpecifiedBenchmarks();
  print_table(sizes, impls, gpu);
  benchmark::Shutdown();
  return 0;
}
