/// \file
/// \brief Evicts the input from L2 between timed runs, so small inputs are timed from DRAM.
#pragma once

#include <reduce/device_buffer.cuh>

namespace reduce {

/// Owns a buffer the size of the L2 cache; writing it evicts whatever the cache held.
/// Call flush() outside the timed region, before each sample (nvbench does the same).
class L2Flush {
 public:
  /// Sizes the buffer from the L2 size of the current device.
  L2Flush();
  /// Overwrites the whole buffer on \p stream.
  void flush(cudaStream_t stream);

 private:
  DeviceBuffer<unsigned char> buffer_;
  int value_ = 0;
};

}  // namespace reduce
