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

/// One block per operation and size: what a student compares rung by rung. \p impls: the
/// operations' rows, in order, as (operation, implementation) pairs.
void print_tables(const Rows& rows, const std::vector<std::size_t>& sizes,
                  const std::vector<std::pair<const Operation*, std::string>>& impls,
                  const reduce::DeviceInfo& gpu, const reduce::CeilingProbe& ceiling);

/// The segmented rows' table: per size and family, each implementation's GB/s and its
/// fraction of the floor (cub::DeviceReduce::Sum over the same n).
void print_segmented_tables(const Rows& rows, const std::vector<std::size_t>& sizes,
                            const std::vector<std::string>& families,
                            const std::vector<std::string>& impls);

}  // namespace reduce::bench
