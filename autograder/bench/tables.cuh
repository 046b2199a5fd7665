/// \file
/// \brief The tables printed at the end of a run, from the rows that ran (reporting.hpp).
#pragma once

#include "operations.cuh"
#include "reporting.hpp"

#include <reduce/ceiling.cuh>
#include <reduce/device_info.cuh>

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace reduce::bench {

/// The ceiling probe's measurement of this run: a pure streaming read of n floats. Kept whole
/// once measured (BenchSession::ceiling()), so that the JSON's context and the tables print the
/// same layout and timings.
struct Ceiling {
  std::size_t n = 0;                         ///< floats read
  double gbps = 0;                           ///< its rate
  std::string kernel;                        ///< the layout it kept (stream_read_variant())
  std::vector<reduce::ProbeTiming> timings;  ///< every layout's rate (probe_timings())
};

/// One block per operation and size: what a student compares rung by rung. \p impls: the
/// operations' rows, in order, as (operation, implementation) pairs.
void print_tables(const Rows& rows, const std::vector<std::size_t>& sizes,
                  const std::vector<std::pair<const Operation*, std::string>>& impls,
                  const reduce::DeviceInfo& gpu, const Ceiling& ceiling);

/// The segmented rows' table: per size and family, each implementation's GB/s and its
/// fraction of the floor (cub::DeviceReduce::Sum over the same n).
void print_segmented_tables(const Rows& rows, const std::vector<std::size_t>& sizes,
                            const std::vector<std::string>& families,
                            const std::vector<std::string>& impls);

}  // namespace reduce::bench
