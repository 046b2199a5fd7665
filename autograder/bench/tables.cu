// The tables printed at the end: the ladder's, per operation and size, and the segmented rows'.
#include "tables.cuh"

#include "cub_fixed_rows.hpp"
#include "text.hpp"

#include <reduce/ceiling.cuh>
#include <reduce/device_info.cuh>

#include <algorithm>
#include <cstdio>

namespace reduce::bench {
namespace {

/// One line of an operation's table.
void print_line(const std::string& name, const Row& r, const Row* cpu, const Row* first,
                const Row* cub, const reduce::CeilingProbe& ceiling) {
  std::printf("%-26s %11s %9s %8s %9s %9s %7s %14s %10s  %s\n", name.c_str(),
              fixed(r.median_us, 1).c_str(), fixed(r.gbps, 1).c_str(),
              fixed(100 * r.gbps / ceiling.gbps(), 1).c_str(),
              cpu ? fixed(cpu->median_us / r.median_us, 1).c_str() : "-",
              first ? fixed(first->median_us / r.median_us, 1).c_str() : "-",
              cub ? fixed(r.median_us / cub->median_us, 3).c_str() : "-",
              fixed(r.result, 1).c_str(), fixed(r.error, 1).c_str(), r.status.c_str());
}

/// The table of \p op at \p n, when any of its rows ran.
void print_table(const Rows& rows, const Operation& op, std::size_t n,
                 const std::vector<std::pair<const Operation*, std::string>>& impls,
                 const reduce::CeilingProbe& ceiling) {
  const auto find = [&](const std::string& name) -> const Row* {
    const Row* row = rows.find(op.name, n, name);
    return row == nullptr || row->median_us <= 0 ? nullptr : row;
  };
  bool any = false;
  for (const auto& [impl_op, name] : impls)
    any |= impl_op == &op && rows.find(op.name, n, name) != nullptr;
  if (!any) return;
  const Row* cpu = find("cpu");
  const Row* cub = find("cub");
  const Row* first = nullptr;  // rung 1, the naive atomic, when it is in this run
  for (const auto& [impl_op, name] : impls)
    if (impl_op == &op && name.rfind("01_", 0) == 0) first = find(name);
  std::printf("\n%s, n = %zu floats (%.1f MB)\n", op.name, n, n * 4 / 1e6);
  std::printf("%-26s %11s %9s %8s %9s %9s %7s %14s %10s  %s\n", "rung", "time_us", "GB/s", "ceil%",
              "x_cpu", "x_rung1", "t/CUB", "result", "|error|", "status");
  for (const auto& [impl_op, name] : impls) {
    if (impl_op != &op) continue;
    const Row* ran = rows.find(op.name, n, name);
    if (ran == nullptr) continue;
    if (const Row* r = find(name))
      print_line(name, *r, cpu, first, cub, ceiling);
    else
      std::printf("%-26s %11s  %s\n", name.c_str(), "-", ran->status.c_str());
  }
}

/// A segmented table's cell: GB/s and the fraction of the floor, or why the row has none.
std::string segmented_cell(const Row* row, double floor_rate) {
  if (row == nullptr) return "-";
  if (row->median_us > 0 && row->status == "ok")
    return fixed(row->gbps, 1) +
           (floor_rate > 0 ? " (" + fixed(row->gbps / floor_rate, 3) + ")" : "");
  return row->status == reduce::cub_fixed::kAbsent ? "no newest CCCL" : row->status.substr(0, 22);
}

}  // namespace

void print_tables(const Rows& rows, const std::vector<std::size_t>& sizes,
                  const std::vector<std::pair<const Operation*, std::string>>& impls,
                  const reduce::DeviceInfo& gpu, const reduce::CeilingProbe& ceiling) {
  std::printf(
      "\n%s, %d SMs, theoretical %.0f GB/s; ceiling probe (stream read of %zu floats, "
      "%s) %.0f GB/s\n",
      gpu.name.c_str(), gpu.sm_count, gpu.theoretical_bandwidth_gbps(), ceiling.elements(),
      ceiling.kernel(), ceiling.gbps());
  std::printf("probe layouts:");
  for (const reduce::ProbeTiming& t : ceiling.timings()) std::printf(" [%s] %.0f", t.name, t.gbps);
  std::printf(" GB/s\n");
  for (const Operation& operation : operations())
    for (std::size_t n : sizes) print_table(rows, operation, n, impls, ceiling);
}

void print_segmented_tables(const Rows& rows, const std::vector<std::size_t>& sizes,
                            const std::vector<std::string>& families,
                            const std::vector<std::string>& impls) {
  for (std::size_t n : sizes) {
    std::vector<std::string> columns;  // the implementations that ran at this size
    for (const std::string& impl : impls)
      if (std::any_of(families.begin(), families.end(),
                      [&](const std::string& f) { return rows.find(f, n, impl) != nullptr; }))
        columns.push_back(impl);
    if (columns.empty()) continue;
    const double floor_rate = floor_gbps(rows, n);
    std::printf("\nsegmented rows, n = %zu floats: GB/s (fraction of the floor, %s GB/s)\n", n,
                floor_rate > 0 ? fixed(floor_rate, 1).c_str() : "not measured");
    std::printf("%-28s", "family");
    for (const std::string& impl : columns) std::printf(" %22s", impl.c_str());
    std::printf("\n");
    for (const std::string& family : families) {
      bool any = false;
      for (const std::string& impl : columns) any |= rows.find(family, n, impl) != nullptr;
      if (!any) continue;
      std::printf("%-28s", family.c_str());
      for (const std::string& impl : columns)
        std::printf(" %22s", segmented_cell(rows.find(family, n, impl), floor_rate).c_str());
      std::printf("\n");
    }
  }
}

}  // namespace reduce::bench
